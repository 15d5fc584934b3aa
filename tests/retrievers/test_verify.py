"""Page anchoring of quotes against real page text."""

from __future__ import annotations

import pytest

from pageindex.retrievers.result import Finding, Source
from pageindex.retrievers.verify import quote_on_page, verify_findings, verify_quote, verify_sources


@pytest.mark.parametrize(
    "quote", ["1,577", "1577", "(1,577)", "$1,577", "1577.00", "-1,577", "$ 1,577 million"]
)
def test_number_formats_match_the_printed_value(tree_3m, quote):
    assert verify_quote(tree_3m, 60, quote) is True


@pytest.mark.parametrize("quote", ["1,578", "15,77", "(1,999)", "157"])
def test_other_numbers_do_not_match(tree_3m, quote):
    assert verify_quote(tree_3m, 60, quote) is False


def test_phrases_match_ignoring_whitespace_and_case(tree_3m):
    # the PDF text splits the word: "Cash Flow s"
    assert verify_quote(tree_3m, 60, "Consolidated Statement of Cash Flows") is True
    assert verify_quote(tree_3m, 60, "Purchases of property, plant and equipment (PP&E) (1,577)") is True
    assert verify_quote(tree_3m, 60, "purchases of property plant and equipment 1577") is True
    assert verify_quote(tree_3m, 60, "Purchases of property, plant and equipment (PP&E) (1,999)") is False
    assert verify_quote(tree_3m, 60, "Capital expenditures were reduced sharply") is False


def test_wrong_page_and_missing_quote(tree_3m):
    assert verify_quote(tree_3m, 58, "(1,577)") is False  # the value is on page 60, not the balance sheet
    assert verify_quote(tree_3m, 500, "(1,577)") is False
    assert verify_quote(tree_3m, 60, None) is None
    assert quote_on_page("", "x") is False


def test_sources_and_findings_get_flags(tree_3m):
    sources = verify_sources(
        tree_3m,
        [
            Source(node_id="item_8/cash_flows", page=60, quote="(1,577)"),
            Source(node_id="item_8/cash_flows", page=60, quote="(1,234,567)"),
            Source(node_id="item_8/cash_flows", page=60),
        ],
    )
    assert [s.verified for s in sources] == [True, False, None]
    findings = verify_findings(
        tree_3m,
        [Finding(label="capex", value="1577", page=60), Finding(label="capex", value="1577", page=57)],
    )
    assert [f.verified for f in findings] == [True, False]


def test_a_citation_goes_under_the_section_that_holds_its_page(tree_3m):
    """A reply pairing one section's id with another section's page (trial 12: an exhibit's p. 7
    section cited with page 1) is named by its page, which is what is checked."""
    wrong = tree_3m.leaf_for_page(5)
    assert wrong is not None and not wrong.start_page <= 60 <= wrong.end_page
    [source] = verify_sources(
        tree_3m, [Source(node_id=wrong.node_id, title=wrong.title, page=60, quote="(1,577)")]
    )
    holder = tree_3m.get(source.node_id)
    assert source.verified is True and holder.start_page <= 60 <= holder.end_page
    assert source.title == holder.title and source.node_id != wrong.node_id
    # a section that holds the page is kept as cited, a parent included
    parent = next(n for n in tree_3m.nodes if n.start_page <= 60 <= n.end_page and n.children)
    [kept] = verify_sources(tree_3m, [Source(node_id=parent.node_id, page=60, quote="(1,577)")])
    assert kept.node_id == parent.node_id
    [finding] = verify_findings(
        tree_3m, [Finding(label="capex", value="1577", page=60, section=wrong.node_id)]
    )
    assert tree_3m.get(finding.section).start_page <= 60 <= tree_3m.get(finding.section).end_page
    [unplaced] = verify_findings(tree_3m, [Finding(label="capex", value="1577", page=60)])  # as a source is
    assert unplaced.section == finding.section
