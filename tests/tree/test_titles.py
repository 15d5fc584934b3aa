"""Display titles: renderer-split words re-joined only where it is safe."""

from __future__ import annotations

import pytest

from pageindex.tree.titles import repair_title, word_counts

PAGES = [
    "Our business and the properties we lease. Cash flows from operating activities.",
    "The business grew. Total cash flows. Equity and the consolidated statements.",
    "Scheduled payments are listed in Schedule D. We went to the top of the list.",
    "We moved into new markets, and into others.",
]


def repaired(title: str, pages: list[str] = PAGES) -> str:
    return repair_title(title, word_counts([title], pages))


@pytest.mark.parametrize(
    ("title", "want"),
    [
        ("Item 1. Busines s.", "Item 1. Business."),  # joined word printed unsplit elsewhere
        ("Item 2. Propertie s.", "Item 2. Properties."),
        ("Consolidated Statement of Cash Flow s", "Consolidated Statement of Cash Flows"),
        ("CONSOLID ATED BALANCE SHEETS", "CONSOLIDATED BALANCE SHEETS"),  # filing word, long pieces
        ("FINANCIAL CONDITION AND LIQUIDI TY", "FINANCIAL CONDITION AND LIQUIDITY"),
        ("PART II I", "PART III"),
        ("PART I V", "PART IV"),
        ("Part II", "Part II"),
        ("SCHEDULE D", "SCHEDULE D"),  # a label after a word of its own, though "scheduled" is common
        ("Exhibit A", "Exhibit A"),
        ("Article I. General", "Article I. General"),
        ("Plans to grow in to new markets", "Plans to grow in to new markets"),  # two words stay apart
        ("Other Informatio n.", "Other Information."),  # filing vocabulary needs no evidence
        ("Zyx q", "Zyx q"),  # unknown joined word
    ],
)
def test_repair_title(title, want):
    assert repaired(title) == want


def test_title_cut_at_the_limit_keeps_its_cut_last_word():
    title = ("Fluctuations in the market generally may cause the market price " * 3)[:118].rstrip() + " to p"
    assert repaired(title) == title


def test_repair_only_changes_whitespace():
    for title in ["Item 1. Busines s.", "PART II I", "CONSOLID ATED", "Equit y and Incom e"]:
        assert "".join(repaired(title).split()) == "".join(title.split())


def test_3m_titles_and_ids_repaired(built):
    tree = built("3M_2018_10K")
    assert tree.get("item_1").title == "Item 1. Business."
    assert tree.get("part_3").title == "PART III"
    assert tree.get("item_8/income").title == "Consolidated Statement of Income"
    assert tree.get("item_8/cash_flows").title == "Consolidated Statement of Cash Flows"
    assert tree.get("item_8/balance_sheet").title == "Consolidated Balance Sheet"
    # ids made from titles use the repaired words too (stable for one builder version)
    assert tree.get("item_7/overview").title == "OVERVIEW"
    assert "item_7/overvi_ew" not in tree
    assert not [n.node_id for n in tree.walk() if "overvi_ew" in n.node_id or "operati_ons" in n.node_id]
    for node in tree.walk():
        if node.kind in ("item", "statement", "part"):
            squashed = "".join(node.title.split()).lower()
            assert squashed in "".join(tree.page_text(node.start_page).split()).lower(), node.node_id


def test_3m_2018_part_iv_printed_with_split_letters(built):
    """3M prints "PART I V": Items 15-16 sit under PART IV, not under PART III."""
    tree = built("3M_2018_10K")
    part_4 = tree.get("part_4")
    assert part_4.title == "PART IV"
    assert tree.get("part_3").end_page < part_4.start_page
    assert {"item_15", "item_16"} <= {c.node_id for c in part_4.children}


def test_a_unit_caption_set_apart_at_a_headings_right_end_is_not_in_its_title():
    """Nintendo's "(1) Consolidated sales information" carried "million yen", the unit of the table
    below, set at the far right of the heading's line: a cell of its own is a caption of the figures.
    A unit run into the heading's own words (one cell) is left alone: it may be part of the title."""
    from pageindex.tree.pdf import Line
    from pageindex.tree.split import heading_text

    def line(text: str, cells: int) -> Line:
        return Line(1, text, True, False, False, 69, 526, 100, 110, 10.0, wide_gaps=cells - 1)

    assert heading_text(line("(1) Consolidated sales information million yen", 2)) == (
        "(1) Consolidated sales information"
    )
    assert heading_text(line("Segment Results (in thousands)", 2)) == "Segment Results"
    assert heading_text(line("Net Sales US$ millions", 2)) == "Net Sales"
    assert heading_text(line("Balance of assets in foreign currencies million U.S. dollars/Euros", 2)) == (
        "Balance of assets in foreign currencies"
    )
    assert heading_text(line("Sales of 5 million units", 1)) == "Sales of 5 million units"
    assert heading_text(line("Revenue Growth Beyond a Billion", 2)) == "Revenue Growth Beyond a Billion"
