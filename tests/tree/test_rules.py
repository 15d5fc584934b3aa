"""Heading rules on small PDFs made in the test: contents pages, short Items, display titles."""

from __future__ import annotations

from pageindex.tree import build_tree
from tests.tree.pdf_factory import make_pdf

_BODY = "The information required by this item is incorporated by reference to our proxy statement."
_PART_III_IV = [
    "Item 9. Changes in and Disagreements With Accountants",
    "Item 9A. Controls and Procedures",
    "Item 9B. Other Information",
    "Item 10. Directors, Executive Officers and Corporate Governance",
    "Item 11. Executive Compensation",
    "Item 12. Security Ownership of Certain Beneficial Owners",
    "Item 13. Certain Relationships and Related Transactions",
    "Item 14. Principal Accountant Fees and Services",
    "Item 15. Exhibits and Financial Statement Schedules",
]


def _filler(n: int) -> list[list[str]]:
    line = "Body text about the business of the company."
    return [[line] * 20 for _ in range(n)]


def test_page_of_short_items_with_body_text_is_not_a_contents_page(tmp_path):
    """Nine Items on one page, each followed by its (short) text: real headings."""
    content = [line for item in _PART_III_IV for line in (item, _BODY)]
    contents = list(_PART_III_IV)  # the same Items back to back, no page numbers: a contents page
    pdf = make_pdf(tmp_path / "short_items.pdf", [contents, *_filler(2), content])
    tree = build_tree(pdf, use_cache=False)
    items = {n.node_id: n.start_page for n in tree.walk() if n.kind == "item"}
    assert items == {
        "item_9": 4,
        "item_9a": 4,
        "item_9b": 4,
        "item_10": 4,
        "item_11": 4,
        "item_12": 4,
        "item_13": 4,
        "item_14": 4,
        "item_15": 4,
    }
    assert tree.get("cover").end_page == 3  # the contents page is not where Item 9 starts


_LONG = "The Company is named as a defendant in a number of lawsuits that arise in its ordinary course"


def _section_pdf(path, headings: dict[int, str], underline: set[int], pages: int = 12):
    """An Item running over ``pages`` pages of plain body text; page n (1-based) opens with the
    body-type heading ``headings[n]`` (underlined when n is in ``underline``)."""
    import pymupdf

    doc = pymupdf.open()
    for n in range(1, pages + 1):
        page = doc.new_page()
        y = 72.0
        if n == 1:
            page.insert_text((72, y), "Item 1. Business", fontname="hebo", fontsize=10)
            y += 14
        page.insert_text((72, y), "the end of a paragraph.", fontname="helv", fontsize=10)
        y += 14
        if n in headings:
            page.insert_text((72, y), headings[n], fontname="helv", fontsize=10)
            if n in underline:
                width = pymupdf.get_text_length(headings[n], fontname="helv", fontsize=10)
                page.draw_line((72, y + 1.5), (72 + width, y + 1.5), width=0.6)
            y += 14
        for _ in range(30):
            page.insert_text((72, y), _LONG, fontname="helv", fontsize=10)
            y += 14
        page.insert_text((72, y), "and it ends here.", fontname="helv", fontsize=10)
    doc.save(path)
    doc.close()
    return path


def test_long_section_split_at_body_type_headings(tmp_path):
    """No bold sub-headings: short title-case lines standing alone, and an underlined line that
    is not title case, still name the parts of a long section before page windows do."""
    pdf = _section_pdf(
        tmp_path / "plain.pdf",
        {
            4: "Usual and Customary Pricing Litigation",
            7: "PBM Litigation and Investigations",
            10: "Other matters",
        },
        underline={10},
    )
    tree = build_tree(pdf, use_cache=False)
    children = [(c.node_id, c.kind, c.start_page, c.end_page) for c in tree.get("item_1").children]
    # each heading has "the end of a paragraph." of the page before above it: the part before runs onto
    # its page (session 26: a sentence carried over is no running header)
    assert children == [
        ("item_1/intro", "heading", 1, 4),
        ("item_1/usual_and_customary_pricing_litigation", "heading", 4, 7),
        ("item_1/pbm_litigation_and_investigations", "heading", 7, 10),
        ("item_1/other_matters", "heading", 10, 12),
    ]


def test_lower_case_line_without_underline_is_no_heading(tmp_path):
    headings = {4: "Other matters", 7: "the Company v. Smith"}
    pdf = _section_pdf(tmp_path / "windows.pdf", headings, underline=set())
    tree = build_tree(pdf, use_cache=False)
    assert {c.kind for c in tree.get("item_1").children} == {"window"}
