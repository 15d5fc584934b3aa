"""``page_tables``: the tables on one page of a real filing, and ``/tables`` printing them."""

from __future__ import annotations

import re

import pdfplumber
import pytest
from rich.console import Console

from pageindex.analyst.render import PageRef, print_tables, resolve_page
from pageindex.tree.combine import combine_trees
from pageindex.tree.errors import NotAPDFError, PDFMissingError
from pageindex.tree.tables import PageTable, clean_cell, clean_rows, is_fragmented, page_tables

PPE = "Purchases of property, plant and equipment (PP&E)"


@pytest.fixture(scope="module")
def tables_of(fb_pdf):
    seen: dict[tuple[str, int], list[PageTable]] = {}

    def _tables(doc: str, page: int) -> list[PageTable]:
        if (doc, page) not in seen:
            seen[doc, page] = page_tables(fb_pdf(doc), page)
        return seen[doc, page]

    return _tables


def test_3m_cash_flow_statement_falls_back_to_pymupdf(fb_pdf, tables_of):
    # pdfplumber reads this shaded statement as one table per shaded row
    with pdfplumber.open(fb_pdf("3M_2018_10K"), pages=[60]) as pdf:
        plumber = pdf.pages[0].extract_tables()
    assert len(plumber) >= 10 and is_fragmented(plumber)
    labels = {row[0] for t in plumber for row in t}
    assert PPE in labels and "Depreciation and amortization" not in labels  # unshaded rows are lost

    tables = tables_of("3M_2018_10K", 60)
    assert len(tables) == 1
    t = tables[0]
    assert (t.page, t.index, t.method) == (60, 0, "pymupdf")
    assert t.rows[0] == ["(Millions)", "2018", "2017", "2016"]
    assert t.row(PPE) == [PPE, "(1,577)", "(1,373)", "(1,420)"]
    # words are not glued, thousands separators stay in place, "$" joins its number
    assert t.row("Depreciation and amortization")[1:] == ["1,488", "1,544", "1,474"]
    assert t.row("Net income including noncontrolling interest")[1:] == ["$5,363", "$4,869", "$5,058"]
    assert t.row("Cash and cash equivalents at end of period")[1:] == ["$2,853", "$3,053", "$2,398"]
    assert all(len(r) == 4 for r in t.rows)
    x0, top, x1, bottom = t.bbox
    assert 0 <= x0 < x1 <= 612 and 0 <= top < bottom <= 792


def test_costco_cash_flow_statement_is_read_by_pdfplumber(tables_of):
    tables = tables_of("COSTCO_2021_10K", 40)
    assert [t.method for t in tables] == ["pdfplumber"]
    t = tables[0]
    assert t.row("Additions to property and equipment") == [
        "Additions to property and equipment",
        "(3,588)",
        "(2,810)",
        "(2,998)",
    ]
    # "$" in its own grid cell, the number spanning two cells on other rows: one column per year
    assert t.row("Net income including noncontrolling interests")[1:] == ["$5,079", "$4,059", "$3,704"]
    assert t.row("Depreciation and amortization")[1:] == ["1,781", "1,645", "1,492"]
    assert t.row("Acquisitions")[1:] == ["—", "(1,163)", "—"]
    assert {len(r) for r in t.rows} == {4}


def test_coca_cola_split_negatives_are_joined(fb_pdf, tables_of):
    with pdfplumber.open(fb_pdf("COCACOLA_2017_10K"), pages=[84]) as pdf:
        plumber = pdf.pages[0].extract_tables()
    assert is_fragmented(plumber)  # three one-row tables, the unshaded rows missing
    tables = tables_of("COCACOLA_2017_10K", 84)
    assert [t.method for t in tables] == ["pymupdf"]
    t = tables[0]
    assert t.rows == [
        ["Year Ended December 31,", "2017", "2016", "2015"],
        ["Balance at beginning of year", "$466", "$352", "$331"],
        ["Net charges to costs and expenses1", "32", "126", "45"],
        ["Write-offs", "(10)", "(10)", "(10)"],
        ["Other2", "(11)", "(2)", "(14)"],
        ["Balance at end of year", "$477", "$466", "$352"],
    ]


def test_page_without_tables(tables_of):
    assert tables_of("3M_2018_10K", 5) == []


@pytest.mark.parametrize("page", [0, 161, -1])
def test_page_out_of_range(fb_pdf, page):
    with pytest.raises(ValueError, match=rf"3M_2018_10K\.pdf: page {page} is outside 1\.\.160"):
        page_tables(fb_pdf("3M_2018_10K"), page)


def test_bad_files(tmp_path):
    with pytest.raises(PDFMissingError, match="nothing.pdf: file not found"):
        page_tables(tmp_path / "nothing.pdf", 1)
    text = tmp_path / "notes.pdf"
    text.write_text("not a pdf at all")
    with pytest.raises(NotAPDFError, match="notes.pdf: not a PDF file"):
        page_tables(text, 1)


def test_cell_cleaning():
    assert clean_cell(" ( 1 ,577 )\n") == "(1,577)"
    assert clean_cell("Adjustments to reconcile\nnet income") == "Adjustments to reconcile net income"
    assert clean_cell(None) == ""
    assert clean_cell("Trade receivables, net ........... . ..") == "Trade receivables, net"  # dot leaders
    assert clean_cell("U.S. ...") == "U.S."
    rows = clean_rows(
        [
            ["Write-offs", "", "(10", ")", "", "(10", ")", None],
            ["Margin", "", "12.5", "%", "", "11.0", "%", None],
            ["Balance", "$", "466", "", "$", "352", "", None],
            ["", "", "", "", "", "", "", None],
        ]
    )
    assert rows == [["Write-offs", "(10)", "(10)"], ["Margin", "12.5%", "11.0%"], ["Balance", "$466", "$352"]]
    assert not is_fragmented([[["a", "1"], ["b", "2"]], [["c", "3"]]])
    assert is_fragmented([[["a", "1"]], [["b", "2"]], [["c", "3"], ["d", "4"]]])


def test_tables_command_with_several_documents(analyst_tree):
    combined = combine_trees([analyst_tree("AMCOR_2023Q4_EARNINGS"), analyst_tree("3M_2018_10K")])
    ref = resolve_page(combined, "3M_2018_10K:60", "/tables")
    assert isinstance(ref, PageRef)
    assert (ref.local, ref.page) == (60, combined.parts[1].first_page + 59)
    assert ref.source.endswith("3M_2018_10K.pdf")
    missing = resolve_page(combined, "3M_2018_10K:161", "/tables")
    assert missing == "no such page: page 161 is outside 1..160 of 3M_2018_10K"
    assert resolve_page(combined, "sixty", "/tables") == "usage: /tables N (a PDF page number), got 'sixty'"
    unknown = resolve_page(combined, "K:1", "/page")  # trial 12: a KeyError's quotes and no list
    assert (
        unknown
        == "no such page: no document 'K' is open; the documents are AMCOR_2023Q4_EARNINGS, 3M_2018_10K"
    )

    console = Console(record=True, width=140, force_terminal=False)
    print_tables(console, combined, "3M_2018_10K:60")
    out = console.export_text()
    assert "3M_2018_10K page 60 (printed 60) · table 1 of 1 · pymupdf" in out
    assert re.search(re.escape(PPE) + r"\s+\(1,577\)\s+\(1,373\)\s+\(1,420\)", out)
