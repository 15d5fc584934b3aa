"""Rules from the review of the non-10-K filings (20-F exhibits, legal clauses, generated outlines), on
small PDFs made in the test."""

from __future__ import annotations

import pymupdf

from pageindex.tree import build_tree
from tests.tree.pdf_factory import save_pdf

_BODY = "The information required by this item is set out in the pages of this annual report that follow."
_PROSE = (
    "The holders of the shares may exercise the rights described in this exhibit, subject to the law",
    "of the place of incorporation and to the articles of the company as amended from time to time.",
)


def _items_and_exhibits(path, exhibit_pages: list[list[tuple[float, float, str, bool]]]):
    """Two pages of bold Items, then one page per exhibit: ``(x, y, text, bold)`` lines."""
    doc = pymupdf.open()
    for number in (1, 2):
        page = doc.new_page()
        page.insert_text((72, 72), f"Item {number}. Matters of Item {number}", fontname="hebo", fontsize=10)
        for k in range(20):
            page.insert_text((72, 90 + 14 * k), _BODY, fontname="helv", fontsize=10)
    for lines in exhibit_pages:
        page = doc.new_page()
        for x, y, text, bold in lines:
            page.insert_text((x, y), text, fontname="hebo" if bold else "helv", fontsize=10)
    return save_pdf(doc, path)


def _exhibit_page(label: str, table: bool = False) -> list[tuple[float, float, str, bool]]:
    lines = [(480.0, 50.0, label, True), (200.0, 72.0, "DESCRIPTION OF THE SECURITIES", True)]
    y = 96.0
    for _ in range(4):
        for text in _PROSE:
            lines.append((72.0, y, text, False))
            y += 14
    if table:  # a table whose right-hand cells are long words, as a second text column would be
        for k in range(6):
            lines.append((72.0, y, f"Guaranteed Notes due 20{30 + k}", False))
            lines.append((330.0, y, "Singapore Exchange Securities Trading Limited", False))
            y += 16
    return lines


def test_exhibit_numbers_with_letters(tmp_path):
    """Form 20-F numbers exhibits "2(a)", filers print "Exhibit 2a.1" or "Exhibit 4(b)": each starts an
    exhibit section, also when a table on its page makes it look set in two columns (the label at the top
    right was read after the right-hand column, not among the page's first lines)."""
    pdf = _items_and_exhibits(
        tmp_path / "exhibits.pdf",
        [
            _exhibit_page("Exhibit 1.1"),
            _exhibit_page("Exhibit 2a.1", table=True),
            _exhibit_page("Exhibit 4(b)"),
        ],
    )
    tree = build_tree(pdf, use_cache=False)
    exhibits = {n.node_id: (n.start_page, n.end_page) for n in tree.walk() if n.node_id.startswith("exhibit")}
    assert exhibits == {"exhibit_1_1": (3, 3), "exhibit_2a_1": (4, 4), "exhibit_4_b": (5, 5)}


_GREY = (0.35, 0.35, 0.35)
_ITEM_TEXT = "Our business is described in this section of the annual report, as the rules of the form say."
_CLAUSE = (
    "(x) to evidence the succession of another Person to the Issuer or the Guarantor, and the assumption by"
)


def _clause_pdf(path, clause: tuple[float, str]):
    """A 10-K whose Item 1 runs eight pages of grey text, split by bold sub-headings; on page 4 a list
    item of an agreement printed in black, its first line indented and its second line (``clause``: left
    edge, text) back at the left edge."""
    doc = pymupdf.open()
    for number in range(1, 10):
        page = doc.new_page()
        y = 72.0
        if number == 1:
            page.insert_text((72, y), "Item 1. Business", fontname="hebo", fontsize=10)
            y += 18
        if number in (2, 6):
            page.insert_text((72, y), f"Operations in Region {number}", fontname="hebo", fontsize=10)
            y += 18
        if number == 9:
            page.insert_text((72, y), "Item 2. Properties", fontname="hebo", fontsize=10)
            y += 18
        for _ in range(12):
            page.insert_text((72, y), _ITEM_TEXT, fontname="helv", fontsize=10, color=_GREY)
            y += 14
        if number == 4:
            page.insert_text((100, y), _CLAUSE, fontname="helv", fontsize=10)
            page.insert_text((clause[0], y + 14), clause[1], fontname="helv", fontsize=10)
            y += 42
            for _ in range(6):
                page.insert_text((72, y), _ITEM_TEXT, fontname="helv", fontsize=10, color=_GREY)
                y += 14
    return save_pdf(doc, path)


def test_second_line_of_an_indented_list_item_is_no_heading(tmp_path):
    """A list item set with its first line indented goes on at the left edge: that line ends the item,
    even when printed in a colour of its own (an exhibit in black inside a grey filing), and is no
    sub-heading. A line in that colour that stands after a finished sentence still is one."""
    pdf = _clause_pdf(tmp_path / "clause.pdf", (72.0, "Issuer or the Guarantor, respectively;"))
    tree = build_tree(pdf, use_cache=False)
    titles = [n.title for n in tree.walk()]
    assert "Operations in Region 2" in titles
    assert not any("respectively" in t for t in titles)
