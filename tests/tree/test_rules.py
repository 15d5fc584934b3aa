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
