"""Trees of filings that are not 10-Ks: a 20-F and earnings releases, built by the layout
rules with any outline ignored. Statements are leaves (or hold only their own parts), and
what follows a statement (reconciliations, outlook, contacts) is never inside it."""

from __future__ import annotations

import re

import pytest

from pageindex.tree import Node, Tree, build_tree
from tests.tree.conftest import filings_dir

# words that name a document section, never a part of a financial statement
_SECTION_WORDS = re.compile(
    r"reconciliation|non-gaap|outlook|guidance|forward[-‑ ]looking|cautionary|contact|about "
    r"|conference call|webcast",
    re.IGNORECASE,
)
_STATEMENT_TITLE = re.compile(
    r"statements? of (?:income|earnings|operations|cash flows|financial position|comprehensive income"
    r"|profit or loss|changes in equity)|balance sheets?|income statements?|cash flows statements?",
    re.IGNORECASE,
)


def statements(tree: Tree) -> list[Node]:
    return [n for n in tree.walk() if n.kind == "statement" or _STATEMENT_TITLE.search(n.title)]


def assert_statements_hold_only_their_parts(tree: Tree) -> None:
    found = statements(tree)
    assert found, f"{tree.doc_id}: no statement found"
    for s in found:
        for d in list(s.walk())[1:]:
            assert not _SECTION_WORDS.search(d.title), f"{tree.doc_id}: {d.title!r} inside {s.node_id}"
            assert not (d.kind == "statement" and d.title != s.title), f"{d.node_id} inside {s.node_id}"
            assert s.start_page <= d.start_page <= d.end_page <= s.end_page


def outside_statements(tree: Tree, pattern: str) -> list[Node]:
    """Nodes whose title matches ``pattern`` and that sit in no statement."""
    inside = {d.node_id for s in statements(tree) for d in list(s.walk())[1:]}
    rx = re.compile(pattern, re.IGNORECASE)
    return [n for n in tree.walk() if rx.search(n.title) and n.node_id not in inside]


def test_tsmc_20f_statements_do_not_swallow_each_other(filing_tree):
    tree = filing_tree("TSMC_2023_20-F")
    by_key = {n.node_id.split("/")[-1]: n for n in tree.walk() if n.kind == "statement"}
    assert {"balance_sheet", "income", "cash_flows"} <= set(by_key)
    balance = by_key["balance_sheet"]
    income = by_key["income"]
    # the statement of financial position ends where the statement of profit or loss begins
    assert (balance.start_page, balance.end_page) == (90, 91)
    assert income.start_page == 92 and "PROFIT OR LOSS" in income.title
    assert by_key["cash_flows"].start_page == 96
    assert all(s.is_leaf for s in by_key.values())
    assert_statements_hold_only_their_parts(tree)
    # notes follow the statements as their own sections
    note_1 = next(n for n in tree.walk() if n.node_id.endswith("note_1"))
    assert note_1.start_page == 99 and "GENERAL" in note_1.title


def test_tsmc_20f_items_with_late_letters_are_items(filing_tree):
    """Trial 12: Items 16D-16K were nested under 16C, and 12D, 16E, 16F and 16I were missing: an Item's
    letter ran to "C" only (a 10-K's 1C, 9C); a 20-F's run to 16K."""
    tree = filing_tree("TSMC_2023_20-F")
    part_2 = next(n for n in tree.nodes if n.node_id == "part_2")
    keys = [c.node_id for c in part_2.children]
    for letter in "abcdefghik":
        assert f"item_16{letter}" in keys, keys
    assert all(c.is_leaf for c in part_2.children if c.node_id.startswith("item_16"))
    assert "item_12d" in [n.node_id for n in tree.walk()]


@pytest.mark.parametrize(
    "text,key",
    [("ITEM 16K. CYBERSECURITY", "item_16k"), ("Item 1C. Cybersecurity", "item_1c"),
     ("ITEM 4A.", "item_4a"), ("Item 9.01 Financial Statements", "item_9_01"), ("Item 7 and 7A", "item_7"),
     ("Item 5 Effects", "item_5")],
)  # fmt: skip
def test_item_letters(text, key):
    from pageindex.tree.headings import _ITEM, item_key

    assert item_key(_ITEM.match(text)) == key


def test_tsmc_20f_table_headers_are_not_sections(filing_tree):
    tree = filing_tree("TSMC_2023_20-F")
    titles = [n.title for n in tree.walk()]
    bad_starts = (
        "For the year ended",
        "NT$ US$",
        "As of",
        "As of December 31,",
        "Name Position with our company",
    )
    for bad in bad_starts:
        assert not [t for t in titles if t.startswith(bad)], bad
    # bold column labels read as one line ("Percentage of Percentage of Percentage of") or wrapped
    # ("Percentage of — Outstanding — Number of Common Common"): review 6
    for bad in ("Percentage of Percentage of", "Percentage of —", "Platform Net Revenue Percentage Net"):
        assert not [t for t in titles if t.startswith(bad)], bad
    # column labels set right of the page's middle ("Years", "Outstanding") are no sub-headings, so
    # the section they stood in for has its own title back
    assert not {"Years", "Outstanding", "Fees Earned or Stock All Other"} & set(titles)
    assert "Executive Officers" in titles and "Foreign currency risk" in titles


RELEASES_FB = [
    "AMCOR_2023Q4_EARNINGS",
    "ULTABEAUTY_2023Q4_EARNINGS",
    "JOHNSON_JOHNSON_2022Q4_EARNINGS",
    "JOHNSON_JOHNSON_2023Q2_EARNINGS",
]


@pytest.mark.parametrize("doc", RELEASES_FB)
def test_financebench_release_statements_are_leaves(doc, fb_pdf, tree_cache_dir):
    tree = build_tree(fb_pdf(doc), cache_dir=tree_cache_dir, use_outline=False)
    assert tree.strategy == "layout"
    assert_statements_hold_only_their_parts(tree)


def test_amcor_release_sections(fb_pdf, tree_cache_dir):
    tree = build_tree(fb_pdf("AMCOR_2023Q4_EARNINGS"), cache_dir=tree_cache_dir, use_outline=False)
    recon = outside_statements(tree, r"^Reconciliation of Non-GAAP Measures$")
    assert [n.start_page for n in recon] == [11]
    assert [n.start_page for n in outside_statements(tree, r"^Fiscal 2024 Guidance$")] == [5]
    assert [n.start_page for n in outside_statements(tree, r"^Segment Information$")] == [2]
    cash = tree.get("cash_flows")
    assert cash.is_leaf and cash.end_page == 9  # not the reconciliations after it
    # the balance sheet printed below the cash flows on the same page is a statement of its own
    balance = tree.get("balance_sheet")
    assert balance.is_leaf and (balance.start_page, balance.end_page) == (9, 9)
    assert [n.node_id for n in tree.nodes].index("balance_sheet") == [n.node_id for n in tree.nodes].index(
        "cash_flows"
    ) + 1


def test_jnj_release_sections(fb_pdf, tree_cache_dir):
    tree = build_tree(fb_pdf("JOHNSON_JOHNSON_2022Q4_EARNINGS"), cache_dir=tree_cache_dir, use_outline=False)
    assert tree.get("income").is_leaf
    assert tree.get("income").end_page < tree.get("reconciliation_of_non_gaap_financial").start_page
    assert outside_statements(tree, r"^FULL-YEAR 2023 GUIDANCE")
    assert outside_statements(tree, r"^SEGMENT SALES RESULTS$")
    # the headline page is the document's opening, not an SEC cover
    assert tree.nodes[0].node_id == "opening" and tree.nodes[0].kind != "cover"


def test_ulta_release_outlook_and_statements(fb_pdf, tree_cache_dir):
    tree = build_tree(fb_pdf("ULTABEAUTY_2023Q4_EARNINGS"), cache_dir=tree_cache_dir, use_outline=False)
    assert [n.start_page for n in outside_statements(tree, r"^Fiscal 2023 Outlook$")] == [3]
    assert tree.get("cash_flows").start_page == 8
    assert tree.get("income").is_leaf and tree.get("income").start_page == 6
    assert "forward_looking_statements/income" not in tree


def test_kroger_release_guidance_is_its_own_section(filing_tree):
    tree = filing_tree("KROGER_2023Q2_EARNINGS-RELEASE-EXCERPT")
    guidance = outside_statements(tree, r"^Full-Year 2023 Guidance")
    assert [n.start_page for n in guidance] == [3]
    assert guidance[0].is_leaf
    assert not [n for n in tree.walk() if "in millions" in n.title]  # a table header
    # the rest of a row label wrapped under its figures ("Earnings (Loss) Per ($0.25) $1.00" then
    # "Share**") and the table's rows of words glued together are no sections (review 6)
    titles = [n.title for n in tree.walk()]
    assert not [t for t in titles if t.startswith(("Share", "Profit (Table 7)", "OG&A Rate", "FIFO Gross"))]
    assert "Second Quarter Financial Results" in titles


def test_microsoft_8k_release_sections(filing_tree):
    tree = filing_tree("MICROSOFT_FY2025Q4_8-K-EARNINGS")
    assert outside_statements(tree, r"^Business Outlook$")
    assert outside_statements(tree, r"^SEGMENT REVENUE AND OPERATING INCOME$")
    assert outside_statements(tree, r"Constant Currency Reconciliation")
    titles = [n.title for n in tree.walk()]
    assert not [t for t in titles if t.startswith(("Productivity and", "Business More Personal"))]  # labels
    # the bold group labels of the balance sheet's and the cash flows' tables stay in them (trial 12)
    assert not {"Investing", "Liabilities and stockholders' equity"} & set(titles), titles
    assert_statements_hold_only_their_parts(tree)


def test_nintendo_highlights_statements(filing_tree):
    tree = filing_tree("NINTENDO_FY2023H1_EARNINGS-FINANCIAL-HIGHLIGHTS")
    assert_statements_hold_only_their_parts(tree)
    # "(4)" on p. 9, set a little smaller than "(1)"-"(3)" on p. 8, is their sibling (review 6: it was
    # nested under "(3)", which got a copy of itself as an "intro" child)
    others = next(n for n in tree.nodes if n.title == "7. Others")
    assert [c.title[:3] for c in others.children] == ["(1)", "(2)", "(3)", "(4)"]
    assert all(c.is_leaf for c in others.children)
    assert outside_statements(tree, r"Consolidated Financial Forecast")
    sheet = next(n for n in tree.walk() if n.title == "3. Consolidated Balance Sheets")
    assert sheet.is_leaf, [c.title for c in sheet.children]  # "(Assets) Current assets" ... were its children


def test_daiichi_statements_after_its_outline_are_top_sections(tree_cache_dir):
    """Trial 11/12: the business report's bookmarks stop at p. 30 (compensation policy); its statements
    and auditor's reports (pp. 37-49) were nested under that last bookmark, row labels and all."""
    path = filings_dir() / "DAIICHI-SANKYO_FY2023_BUSINESS-REPORT.pdf"
    tree = build_tree(path, cache_dir=tree_cache_dir)
    assert tree.strategy == "outline"
    top = {n.title: n for n in tree.nodes}
    sheet = top["Consolidated Statement of Financial Position (IFRS)"]
    assert (sheet.start_page, sheet.end_page, sheet.is_leaf) == (37, 38, True)
    assert top["Consolidated Statement of Profit or Loss (IFRS)"].start_page == 39
    assert [n.start_page for n in tree.nodes if n.title == "Independent Auditor’s Report"] == [43, 46]
    last_bookmark = next(n for n in tree.walk() if n.title.startswith("(5) Matters concerning the Decision"))
    assert last_bookmark.end_page == 36
    titles = [n.title for n in tree.walk()]
    assert not {"Non-current assets", "Current liabilities", "Profit attributable to:"} & set(titles)
    # the wrapped "(6) Decision Policy ..." sub-heading is found whole, not as its last line "Board Members"
    assert "Board Members" not in titles
    assert any(t.startswith("(6) Decision Policy regarding the Content") for t in titles)


def test_a_nested_outline_with_as_many_items_leads_a_10q(tree_cache_dir):
    """Trial 11: Alphabet's 10-Q has a 60-entry outline that nests MD&A's sections; the SEC rules
    found as many Items, so the outline was only used to split long leaves, and "Executive Overview"
    (sharing page 36 with "Provision for Income Taxes") and "Financial Condition" went missing, their
    text filed under the sections before them. A nested outline with as many Items now leads."""
    from tests.tree.conftest import filings_dir

    tree = build_tree(filings_dir() / "ALPHABET_2023Q2_10-Q.pdf", cache_dir=tree_cache_dir)
    assert tree.strategy == "outline"
    spans = {n.title: (n.start_page, n.end_page) for n in tree.walk()}
    assert spans["Executive Overview"] == (36, 37)
    assert spans["Financial Condition"] == (45, 47)
    assert spans["Segment Profitability"] == (43, 44)
    assert tree.get("part_1/item_2/financial_results/revenues").start_page == 38
    assert tree.get("part_1/item_1/cash_flows").start_page == 10


def test_a_two_level_outline_of_parts_and_items_leaves_the_sec_rules_in_charge(tree_cache_dir):
    """The demo 10-K's outline lists Parts and Items (statements beside the Items, no notes): the
    detections nest the statements and notes in Item 8, so they lead."""
    from pathlib import Path

    pdf = Path(__file__).resolve().parents[2] / "datasets" / "demo" / "pdfs" / "NORTHWIND_2023_10K.pdf"
    tree = build_tree(pdf, cache_dir=tree_cache_dir)
    assert tree.strategy == "sec" and tree.get("item_8/income").start_page == 9
