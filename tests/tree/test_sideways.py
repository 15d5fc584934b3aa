"""A page whose text is printed turned a quarter (a wide statement of changes in equity set sideways on an
upright page, as in TSMC's 20-F) is read as the page turned upright: its title is a heading like any other.
Before, its lines were merged by their position on the upright page, a column of letters at a time, and
the statement had no section. Made PDFs only."""

from __future__ import annotations

import pymupdf
import pytest

from pageindex.tree import build_tree
from pageindex.tree.pdf import read_pdf
from tests.tree.pdf_factory import save_pdf

ROWS = ["Balance at January 1", "Net income", "Cash dividends", "Share-based payments",
        "Balance at December 31"]  # fmt: skip


def _statement(page: pymupdf.Page, title: str, y: float = 72.0) -> None:
    page.insert_text((60, y), "Example Industries Inc. and Subsidiaries", fontname="hebo", fontsize=11)
    page.insert_text((60, y + 16), title, fontname="hebo", fontsize=10)
    for i, row in enumerate(ROWS):
        page.insert_text((60, y + 48 + 14 * i), row, fontname="helv", fontsize=10)
        page.insert_text((330, y + 48 + 14 * i), f"{1_200 + 37 * i:,}", fontname="helv", fontsize=10)


def _sideways(page: pymupdf.Page, title: str, rotate: int) -> None:
    """The statement's lines turned: ``rotate`` 90 runs them up the page, 270 down it."""
    w, h = page.rect.width, page.rect.height
    lines = [("Example Industries Inc. and Subsidiaries", "hebo", 60), (title, "hebo", 60)]
    lines += [(row, "helv", 60) for row in ROWS]
    for i, (text, font, x) in enumerate(lines):
        depth = 72 + 16 * i
        point = (depth, h - x) if rotate == 90 else (w - depth, x)
        page.insert_text(point, text, fontname=font, fontsize=10, rotate=rotate)
        figure = (depth, h - 330) if rotate == 90 else (w - depth, 330)
        if i >= 2:
            page.insert_text(figure, f"{2_100 + 11 * i:,}", fontname="helv", fontsize=10, rotate=rotate)


@pytest.mark.parametrize("rotate", [90, 270])
def test_a_statement_printed_sideways_is_a_section(tmp_path, rotate):
    doc = pymupdf.open()
    page = doc.new_page()
    item = "ITEM 8. FINANCIAL STATEMENTS AND SUPPLEMENTARY DATA"
    page.insert_text((60, 60), item, fontname="hebo", fontsize=10)
    _statement(page, "CONSOLIDATED BALANCE SHEETS", 100)
    _sideways(doc.new_page(), "CONSOLIDATED STATEMENTS OF CHANGES IN EQUITY", rotate)
    _statement(doc.new_page(), "CONSOLIDATED STATEMENTS OF CASH FLOWS")
    path = save_pdf(doc, tmp_path / "sideways.pdf")
    lines = read_pdf(path).pages[1].lines
    assert [line.text for line in lines[:3]] == [
        "Example Industries Inc. and Subsidiaries",
        "CONSOLIDATED STATEMENTS OF CHANGES IN EQUITY",
        "Balance at January 1 2,122",
    ]  # fmt: skip
    assert lines[1].bold
    tree = build_tree(path, use_cache=False, use_outline=False)
    starts = {n.title: n.start_page for n in tree.walk() if n.kind == "statement"}
    assert starts.get("CONSOLIDATED STATEMENTS OF CHANGES IN EQUITY") == 2, starts
    assert starts.get("CONSOLIDATED STATEMENTS OF CASH FLOWS") == 3, starts
