"""A financial statement is one section, wherever the builder finds it: its table's row labels stay in it,
and an outline that stops before the statements does not swallow them. Made PDFs only."""

from __future__ import annotations

from pathlib import Path

import pymupdf

from pageindex.tree import build_tree
from pageindex.tree.pdf import Line
from pageindex.tree.split import SubheadingRules
from tests.tree.pdf_factory import save_pdf
from tests.tree.test_layout import _body


def _table(page: pymupdf.Page, y: float, groups: dict[str, list[str]], label_x: float = 60.0) -> float:
    """Bold group labels at ``label_x``, plain rows indented under them with two columns of figures."""
    for label, rows in groups.items():
        page.insert_text((label_x, y), label, fontname="hebo", fontsize=10)
        y += 14
        for i, row in enumerate(rows):
            page.insert_text((label_x + 12, y), row, fontname="helv", fontsize=10)
            page.insert_text((330, y), f"{1_200 + 37 * i:,}", fontname="helv", fontsize=10)
            page.insert_text((430, y), f"{1_310 + 41 * i:,}", fontname="helv", fontsize=10)
            y += 14
    return y


BALANCE = {
    "Current assets": ["Cash and deposits", "Trade receivables", "Inventories"],
    "Non-current assets": ["Property, plant and equipment", "Intangible assets"],
    "Current liabilities": ["Trade payables", "Income taxes payable"],
}


def _opening(doc: pymupdf.Document) -> pymupdf.Document:
    """``doc`` with a release's two opening pages of numbered prose sections."""
    for title in ("1. Operating Results", "2. Financial Forecast"):
        page = doc.new_page()
        page.insert_text((60, 80), title, fontname="hebo", fontsize=14)
        _body(page, 110.0, 30)
    return doc


def _release(path: Path) -> Path:
    """A results release with numbered sections (no Items, no outline); its balance sheet's table
    has bold group labels; the next page's centred title heads a table of its own."""
    doc = _opening(pymupdf.open())
    page = doc.new_page()
    page.insert_text((60, 80), "3. Consolidated Balance Sheets", fontname="hebo", fontsize=14)
    _table(page, 120.0, BALANCE)
    page = doc.new_page()
    page.insert_text((220, 80), "Segment Information", fontname="hebo", fontsize=14)
    _table(page, 120.0, {"Revenue by region": ["Americas", "Europe"]}, label_x=220.0)
    _body(page, 260.0, 20)
    page = doc.new_page()
    page.insert_text((60, 80), "4. Outlook", fontname="hebo", fontsize=14)
    _body(page, 110.0, 30)
    return save_pdf(doc, path)


def test_a_statements_row_labels_stay_in_the_statement(tmp_path):
    tree = build_tree(_release(tmp_path / "release.pdf"), use_cache=False)
    by_title = {n.title: n for n in tree.walk()}
    assert not set(BALANCE) & set(by_title), list(by_title)
    sheet = by_title["3. Consolidated Balance Sheets"]
    assert (sheet.start_page, sheet.end_page, sheet.children) == (3, 3, [])
    # a centred title heading a table on the next page is no row label: it stays a section
    assert by_title["Segment Information"].start_page == 4
    assert "4. Outlook" in by_title and "1. Operating Results" in by_title


def _report_with_short_outline(path: Path, financials_entry: bool = False) -> Path:
    """A business report whose bookmarks cover its first four pages; its statements (pp. 5-6) and
    the auditor's report (p. 7) follow, unlisted unless ``financials_entry`` adds one for them."""
    doc = pymupdf.open()
    toc = []
    chapters = (
        "1. Status of the Group",
        "2. Matters regarding Shares",
        "3. Principal Offices",
        "4. Directors",
    )
    for number, title in enumerate(chapters, 1):
        page = doc.new_page()
        page.insert_text((60, 80), title, fontname="hebo", fontsize=12)
        y = _body(page, 110.0, 20)
        toc.append([1, title, number])
        if number % 2 == 0:
            sub = f"({number // 2}) {'Share Register' if number == 2 else 'Compensation Policy'}"
            page.insert_text((60, y + 20), sub, fontname="hebo", fontsize=10)
            _body(page, y + 40, 15)
            toc.append([2, sub, number])
    for title in ("Consolidated Balance Sheet", "Consolidated Statement of Income"):
        page = doc.new_page()
        page.insert_text((170, 70), title, fontname="hebo", fontsize=13)
        _table(page, 110.0, BALANCE)
    page = doc.new_page()
    page.insert_text((60, 80), "Independent Auditor's Report", fontname="hebo", fontsize=12)
    _body(page, 110.0, 40)
    if financials_entry:
        toc.append([1, "5. Financial Statements", 5])
    return save_pdf(doc, path, toc)


def test_an_outline_that_stops_before_the_statements_does_not_swallow_them(tmp_path):
    tree = build_tree(_report_with_short_outline(tmp_path / "report.pdf"), use_cache=False)
    assert tree.strategy == "outline"
    top = [(n.title, n.start_page, n.end_page) for n in tree.nodes]
    assert ("4. Directors", 4, 4) in top, top
    assert ("Consolidated Balance Sheet", 5, 5) in top and ("Consolidated Statement of Income", 6, 6) in top
    assert ("Independent Auditor's Report", 7, 7) in top, top
    titles = [n.title for n in tree.walk()]
    assert not set(BALANCE) & set(titles), titles


def test_an_outline_with_an_entry_for_the_statements_keeps_them_under_it(tmp_path):
    path = _report_with_short_outline(tmp_path / "report.pdf", financials_entry=True)
    tree = build_tree(path, use_cache=False)
    top = [(n.title, n.start_page, n.end_page) for n in tree.nodes]
    assert top[-1] == ("5. Financial Statements", 5, 7), top


def _bold(text: str) -> Line:
    return Line(1, text, True, False, False, 72, 400, 100, 110, 10.0)


def test_a_heading_numbered_in_brackets_is_a_sub_heading():
    rules = SubheadingRules(frozenset(), 0, 10.0)
    assert rules.accepts(_bold("(6) Decision Policy regarding the Content of Individual Compensations"))
    assert rules.accepts(_bold("(12) Litigation and Other Matters"))
    # lettered clauses of a plan filed as an exhibit, and a bracket that is no numbering, stay out
    assert not rules.accepts(_bold("(c) Lump Sum Distributions"))
    assert not rules.accepts(_bold("(in millions of dollars)"))


def test_ids_keep_accented_letters_and_outline_titles_lose_stray_escapes(tmp_path):
    """Trial 12: Mandarine's French titles gave ids such as ``d_cembre``; the JPMorgan prospectus's
    bookmarks print a producer's escape ("Funds \\- Global Core Equity Fund")."""
    from pageindex.tree.headings import slug
    from pageindex.tree.outline import real_outline

    assert slug("Appréciations au 31 décembre") == "appreciations_au_31_decembre"
    assert slug("Auditor’s Report") == "auditor_s_report"  # other marks still separate words, as before
    toc = [[1, f"Funds \\- Fund {n} \\(A\\)", n] for n in range(1, 8)]
    assert [title for _, title, _ in real_outline(toc, 8)][:2] == ["Funds - Fund 1 (A)", "Funds - Fund 2 (A)"]


def _leaves_cover_every_page(tree) -> None:
    covered = {p for leaf in tree.leaves() for p in range(leaf.start_page, leaf.end_page + 1)}
    assert covered == set(range(1, tree.page_count + 1)), sorted(set(range(1, tree.page_count + 1)) - covered)


def test_a_statement_longer_than_a_leaf_keeps_its_labels(tmp_path):
    """Review 12: absorbing the labels of an 8-page balance sheet made one 8-page leaf; a leaf never
    runs past --max-leaf-pages, so a long statement stays split at its group labels."""
    doc = _opening(pymupdf.open())
    for k in range(8):
        page = doc.new_page()
        if k == 0:
            page.insert_text((60, 80), "3. Consolidated Balance Sheets", fontname="hebo", fontsize=14)
        _table(page, 120.0, {f"Group {k} assets": ["Cash and deposits", "Trade receivables"] * 6})
    page = doc.new_page()
    page.insert_text((60, 80), "4. Outlook", fontname="hebo", fontsize=14)
    _body(page, 110.0, 30)
    tree = build_tree(save_pdf(doc, tmp_path / "long.pdf"), use_cache=False)
    assert max(leaf.page_count for leaf in tree.leaves()) <= 5
    _leaves_cover_every_page(tree)


def test_a_heading_at_the_top_of_the_next_page_ends_the_statement(tmp_path):
    """Review 12: "Segment Information", set as the rows are but at the top of the next page over a
    table of its own, was taken into the balance sheet before it."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((60, 80), "1. Operating Results", fontname="hebo", fontsize=14)
    _body(page, 110.0, 30)
    page = doc.new_page()
    page.insert_text((60, 80), "2. Consolidated Balance Sheets", fontname="hebo", fontsize=14)
    _table(page, 120.0, BALANCE)
    page = doc.new_page()
    _table(page, 60.0, {"Segment Information": ["Americas", "Europe"]})
    _body(page, 160.0, 20)
    page = doc.new_page()
    page.insert_text((60, 80), "3. Outlook", fontname="hebo", fontsize=14)
    _body(page, 110.0, 30)
    tree = build_tree(save_pdf(doc, tmp_path / "seg.pdf"), use_cache=False)
    sheet = next(n for n in tree.walk() if n.title == "2. Consolidated Balance Sheets")
    assert sheet.end_page == 2, (sheet.start_page, sheet.end_page)
    assert any(n.title.startswith("Segment Information") and n.start_page == 3 for n in tree.walk())
    _leaves_cover_every_page(tree)


def test_a_statement_title_over_prose_after_an_outline_is_no_top_section(tmp_path):
    """Review 12: a statement's name over running text (no table) after an outline's last entry
    crashed the build (nothing left to place); it stays inside the last entry, as before."""
    doc = pymupdf.open()
    toc = []
    for n in range(1, 7):
        page = doc.new_page()
        page.insert_text((60, 80), f"{n}. Chapter {n}", fontname="hebo", fontsize=12)
        _body(page, 110.0, 30)
        toc.append([1, f"{n}. Chapter {n}", n])
    page = doc.new_page()
    page.insert_text((170, 70), "Consolidated Balance Sheet", fontname="hebo", fontsize=13)
    _body(page, 110.0, 30)
    tree = build_tree(save_pdf(doc, tmp_path / "prose.pdf", toc), use_cache=False)
    assert [(n.title, n.start_page, n.end_page) for n in tree.nodes][-1] == ("6. Chapter 6", 6, 7)


def test_a_heading_that_discusses_a_statement_is_no_statement():
    """A statement's name followed by a word saying the heading discusses it ("... Analysis", "... data")
    is no statement; a short tail that only qualifies the statement (a date, "(unaudited)", a company
    whose name holds such a word) keeps it one. Headings are compact: lower case, no spaces."""
    from pageindex.tree.headings import statement_key

    assert statement_key("consolidatedbalancesheetsandcashflowsanalysis") is None
    assert statement_key("balancesheetdata(inmillions)") is None
    assert statement_key("statementsofoperationsoverview") is None
    assert statement_key("consolidatedbalancesheets(unaudited)") == "balance_sheet"
    assert statement_key("consolidatedbalancesheetsasofdecember31,2023") == "balance_sheet"
    assert statement_key("consolidatedbalancesheetsofdatadog,inc.") == "balance_sheet"
    assert statement_key("consolidatedstatementsofcashflows") == "cash_flows"
    # review 14: a unit line on the heading's line is no word about the statement
    assert statement_key("consolidatedstatementsofincome(inmillions,exceptpersharedata)") == "income"
    assert statement_key("consolidatedbalancesheets(inmillions,exceptsharedata)") == "balance_sheet"


def test_an_md_and_a_heading_on_the_statements_is_no_statement_section(tmp_path):
    """JPMorgan's 10-Qs (MD&A first, the Items after it): MD&A's "CONSOLIDATED BALANCE SHEETS AND CASH
    FLOWS ANALYSIS" was read as the balance sheet: a top-level section of its own (67 pages in JPMorgan's
    case) whose key then hid the real balance sheet under Item 1."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((200, 80), "FORM 10-Q", fontname="hebo", fontsize=16)
    _body(page, 120.0, 10)
    for title in ("EXECUTIVE OVERVIEW", "CONSOLIDATED BALANCE SHEETS AND CASH FLOWS ANALYSIS", "OUTLOOK"):
        page = doc.new_page()
        page.insert_text((60, 80), title, fontname="hebo", fontsize=12)
        _body(page, 110.0, 30)
    for title in ("Item 1. Financial Statements", "Consolidated Balance Sheets", "Item 2. Controls"):
        page = doc.new_page()
        page.insert_text((60, 80), title, fontname="hebo", fontsize=12)
        _table(page, 120.0, BALANCE) if "Balance" in title else _body(page, 110.0, 20)
    tree = build_tree(save_pdf(doc, tmp_path / "mdna.pdf"), use_cache=False)
    sections = [(n.node_id, n.start_page, n.end_page) for n in tree.walk()]
    assert ("item_1/balance_sheet", 6, 6) in sections, sections
    assert not any(node_id == "balance_sheet" for node_id, *_ in sections), sections


def _segment_release(path: Path) -> Path:
    """A release whose segment table (under a title that names no statement) has two bold groups, the
    second right under the first group's last row; a larger heading stands right under that table over
    a table of its own, and an ordinary heading follows over prose."""
    doc = _opening(pymupdf.open())
    page = doc.new_page()
    page.insert_text((60, 80), "3. Segment Results", fontname="hebo", fontsize=14)
    groups = {"Revenue": ["Cloud", "Devices", "Total"], "Operating Income": ["Cloud", "Devices"]}
    y = _table(page, 120.0, groups)
    page.insert_text((60, y + 4), "4. Regional Results", fontname="hebo", fontsize=14)
    _table(page, y + 24, {"Americas": ["Net sales", "Total"]})
    page = doc.new_page()
    page.insert_text((60, 80), "5. Outlook", fontname="hebo", fontsize=14)
    _body(page, 110.0, 30)
    return save_pdf(doc, path)


def test_a_group_label_inside_a_table_is_no_section(tmp_path):
    """Microsoft's 8-K: "Operating Income", set as the rows are right under the revenue rows of the
    segment table, was a section running to the end of the filing; the title over the table names no
    statement, so the statement rule (above) did not apply. A label close under a table row and over
    another, set as the rows are, is a row of that table; a heading set larger is a heading even there."""
    tree = build_tree(_segment_release(tmp_path / "segments.pdf"), use_cache=False)
    titles = [n.title for n in tree.walk()]
    assert "Operating Income" not in titles, titles
    assert "4. Regional Results" in titles and "5. Outlook" in titles, titles


def test_a_row_label_is_told_from_a_heading_by_the_rows_around_it():
    from pageindex.tree.split import labels_rows

    def line(text: str, y: float, x0: float = 60.0, size: float = 9.0, cells: int = 1, bold: bool = False):
        x1 = x0 + 5 * len(text)
        return Line(1, text, bold, False, False, x0, x1, y, y + size, size, wide_gaps=cells - 1)

    row = lambda y: line("Intelligent Cloud      12,140     9,835", y, x0=60.0, cells=3)  # noqa: E731
    label = line("Operating Income", 131.0, bold=True)
    assert labels_rows([row(120.0), label, row(142.0)], 1)
    # far under the row above (a new block), larger than the rows, centred, or over prose: a heading
    assert not labels_rows([row(100.0), label, row(142.0)], 1)
    assert not labels_rows([row(120.0), line("Operating Income", 131.0, size=12.0), row(146.0)], 1)
    centred = Line(1, "Operating Income", True, False, True, 60.0, 140.0, 131.0, 140.0, 9.0)
    assert not labels_rows([row(120.0), centred, row(142.0)], 1)
    prose = line("The segment results below are reported on the basis management uses.", 142.0)
    assert not labels_rows([row(120.0), label, prose, prose], 1)
    # set far right of the rows' labels: a column heading, not a label of the rows
    assert not labels_rows([row(120.0), line("Operating Income", 131.0, x0=300.0), row(142.0)], 1)
