"""Headings from the page layout: made PDFs with no SEC structure, and the outline switch."""

from __future__ import annotations

import json
from pathlib import Path

import pymupdf
import pytest
from typer.testing import CliRunner

from pageindex.cli import app
from pageindex.tree import build_tree
from pageindex.tree.pdf import Line, Page
from pageindex.tree.split import SubheadingRules, is_table_header, years_as_one_figure
from tests.tree.pdf_factory import save_pdf

BODY = (
    "The committee reviewed the programme during the year and reported its findings to the board "
    "in the usual way, with figures for each region."
)
CHAPTERS = {
    "Market Overview": ["Regional Demand", "Pricing Environment"],
    "Operations Review": ["Manufacturing Sites", "Supply Chain Resilience", "Workforce"],
    "Governance and Risk": ["Board Oversight", "Principal Risks"],
}


def _body(page: pymupdf.Page, y: float, lines: int) -> float:
    for _ in range(lines):
        page.insert_text((72, y), BODY[:95], fontname="helv", fontsize=10)
        y += 13
    return y


def report_pdf(path: Path, outline: bool = False) -> Path:
    """A report: chapter titles 16 pt bold, section titles 12 pt bold, body 10 pt; every
    section on its own page; no Part/Item, no statements, no outline unless asked."""
    doc = pymupdf.open()
    toc = []
    for chapter, sections in CHAPTERS.items():
        for i, section in enumerate(sections):
            page = doc.new_page()
            y = 60.0
            page.insert_text((72, 40), "Example Holdings Annual Review", fontname="helv", fontsize=8)
            if i == 0:
                page.insert_text((72, y + 20), chapter, fontname="hebo", fontsize=16)
                toc.append([1, chapter, doc.page_count])
                y = _body(page, y + 50, 6) + 10
            page.insert_text((72, y + 12), section, fontname="hebo", fontsize=12)
            toc.append([2, section, doc.page_count])
            _body(page, y + 34, 30)
    return save_pdf(doc, path, toc if outline else None)


def test_two_heading_levels_without_sec_structure_or_outline(tmp_path):
    tree = build_tree(report_pdf(tmp_path / "report.pdf"), use_cache=False)
    assert tree.strategy == "layout"
    assert not [n for n in tree.walk() if n.kind == "window"]
    tops = [n for n in tree.nodes if n.node_id != "opening"]
    assert [n.title for n in tops] == list(CHAPTERS)
    for node, sections in zip(tops, CHAPTERS.values(), strict=True):
        children = [c.title for c in node.children if c.node_id.split("/")[-1] != "intro"]
        assert children == sections, node.title
    review = tree.get("operations_review/supply_chain_resilience")
    assert (review.start_page, review.end_page) == (4, 4)
    # the running header repeats on every page: never a heading
    assert not [n for n in tree.walk() if "Annual Review" in n.title]


def test_outline_ignored_on_request(tmp_path):
    pdf = report_pdf(tmp_path / "outlined.pdf", outline=True)
    with_outline = build_tree(pdf, use_cache=False)
    without = build_tree(pdf, use_cache=False, use_outline=False)
    assert with_outline.strategy == "outline"
    assert without.strategy == "layout"
    assert with_outline.builder_version != without.builder_version  # cached apart
    assert [n.title for n in without.nodes if n.node_id != "opening"] == list(CHAPTERS)


def test_cli_build_no_outline(tmp_path):
    pdf = report_pdf(tmp_path / "outlined.pdf", outline=True)
    out = tmp_path / "tree.json"
    result = CliRunner().invoke(app, ["build", str(pdf), "--no-outline", "--no-cache", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "strategy layout" in result.output
    assert json.loads(out.read_text())["strategy"] == "layout"
    shown = CliRunner().invoke(app, ["tree", str(pdf), "--no-outline", "--no-cache"])
    assert shown.exit_code == 0 and "strategy: layout" in shown.output.splitlines()[0]
    assert "strategy: outline" in CliRunner().invoke(app, ["tree", str(pdf), "--no-cache"]).output
    refused = CliRunner().invoke(app, ["tree", str(out), "--no-outline"])
    assert refused.exit_code == 2 and "--no-outline applies to a PDF" in refused.output
    # every option that only a PDF can use is refused for a tree JSON, not silently ignored (trial 12)
    refused = CliRunner().invoke(app, ["tree", str(out), "--max-leaf-pages", "2", "--no-cache"])
    assert refused.exit_code == 2, refused.output
    assert "error: --max-leaf-pages, --no-cache apply to a PDF;" in refused.output
    # and a model for summaries that are not asked for
    unused = CliRunner().invoke(
        app, ["build", str(pdf), "--model", "openai/x", "-o", str(tmp_path / "t2.json")]
    )
    assert unused.exit_code == 2 and "error: --model applies with --summaries only" in unused.output
    assert not (tmp_path / "t2.json").exists()


def _line(text: str, wide_gaps: int = 0) -> Line:
    return Line(
        1, text, True, False, False, 72, 400, 100, 110, 9.0, gap=60.0 * wide_gaps, wide_gaps=wide_gaps
    )


@pytest.mark.parametrize(
    "text,wide_gaps,header",
    [
        ("Three months ended Year ended December 31,", 0, True),
        ("For the year ended", 0, True),
        ("13 Weeks Ended", 0, True),
        ("2Q23 ($ in millions; except EPS)", 0, True),
        ("Worldwide Sales Change Organic local- Total sales", 4, True),
        ("Consolidated Statements of Income Corning Incorporated", 1, False),
        ("Segment Results", 0, False),
        ("Reconciliation of Non-GAAP Measures", 0, False),
        ("($ million) EBITDA EBIT Income", 0, True),  # a unit caption in brackets, singular
        ("(US$ millions, except per share data)", 0, True),
        ("(€ thousand)", 0, True),
        ("(1) Millions of customers served", 0, False),  # a footnote, not a caption
        ("Millionaire Shares Program", 0, False),
    ],
)
def test_table_column_headers_are_not_headings(text, wide_gaps, header):
    assert is_table_header(_line(text, wide_gaps)) is header


PROSE = "the firm reviewed its positions and reported the results to the committee as usual"


def two_column_10q(path: Path) -> Path:
    """A 10-Q page set in two text columns: Part I's last Items in the left column, Part II
    starting at the top of the right one (body type, no bold), as some banks print them."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((250, 60), "FORM 10-Q", fontname="hebo", fontsize=14)
    for k in range(4):
        page.insert_text((72, 80 + 12 * k), PROSE, fontname="helv", fontsize=9)
    page.insert_text((72, 140), "PART I", fontname="hebo", fontsize=11)
    page.insert_text((72, 160), "Item 2. Properties.", fontname="helv", fontsize=9)
    for k in range(3):
        page.insert_text((72, 174 + 12 * k), PROSE[:50], fontname="helv", fontsize=9)
    page = doc.new_page()
    left = ["Item 3. Quantitative and Qualitative Disclosures About", "Market Risk."]
    left += [PROSE[:50]] * 8 + ["Item 4. Controls and Procedures."] + [PROSE[:50]] * 8
    right = ["Part II - Other Information", "Item 1. Legal Proceedings."] + [PROSE[:48]] * 9
    right += ["Item 1A. Risk Factors."] + [PROSE[:48]] * 8
    for k, text in enumerate(left):
        page.insert_text((50, 60 + 12 * k), text, fontname="helv", fontsize=9)
    for k, text in enumerate(right):
        page.insert_text((320, 60 + 12 * k), text, fontname="helv", fontsize=9)
    doc.save(path)
    doc.close()
    return path


def test_two_text_columns_are_read_one_after_the_other(tmp_path):
    from pageindex.tree.pdf import read_pdf

    page = read_pdf(two_column_10q(tmp_path / "q.pdf")).pages[1]
    texts = [line.text for line in page.lines]
    assert texts[0] == "Item 3. Quantitative and Qualitative Disclosures About"  # not merged with Part II
    assert texts.index("Item 4. Controls and Procedures.") < texts.index("Part II - Other Information")
    tree = build_tree(tmp_path / "q.pdf", use_cache=False)
    part_1, part_2 = tree.get("part_1"), tree.get("part_2")
    assert [c.node_id for c in part_1.children] == ["item_2", "item_3", "item_4"]  # Part I's Items
    assert [c.node_id for c in part_2.children] == ["item_1", "item_1a"]
    assert tree.nodes[0].title == "Form 10-Q cover page"


def test_a_wrapped_table_row_label_is_not_a_heading(tmp_path):
    """A bold row label wrapped over two lines puts its figures on a baseline between them (not
    one visual line with either): figures set beside a line make it a row label, never a
    section, while the report's real headings stay."""
    path = report_pdf(tmp_path / "report.pdf")
    doc = pymupdf.open(path)
    page = doc[2]  # "Operations Review / Manufacturing Sites": a table under the section's body
    y = 600.0
    for label, figures in (("Net sales", "2,777  897  3,673"), ("Reported growth %", "(6)  (5)  (6)")):
        page.insert_text((72, y), label, fontname="helv", fontsize=10)
        page.insert_text((300, y), figures, fontname="helv", fontsize=10)
        y += 16
    page.insert_text((72, y), "Comparable Constant Currency", fontname="hebo", fontsize=12)
    page.insert_text((300, y + 6), "(5)  (4)  (5)", fontname="hebo", fontsize=12)
    page.insert_text((72, y + 12), "Growth Rate", fontname="hebo", fontsize=12)
    page.insert_text((72, y + 40), "Volume %   (7)  (6)  (7)", fontname="helv", fontsize=10)
    doc.saveIncr()
    doc.close()
    tree = build_tree(path, use_cache=False)
    titles = [n.title for n in tree.walk()]
    assert not [t for t in titles if "Comparable Constant" in t or t == "Growth Rate"], titles
    assert "Manufacturing Sites" in titles and "Operations Review" in titles


def test_a_running_footer_with_its_page_number_is_no_section(tmp_path):
    """A footer that carries the page number ("ACME GLOBAL GROWTH FUND 7") differs on every page,
    yet it is one running footer: never a section title, while a contents entry that ends in a
    page number still does not hide the heading it points to."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 80), "Contents", fontname="hebo", fontsize=16)
    page.insert_text((72, 110), "Investment Policy and Restrictions 2", fontname="helv", fontsize=10)
    for n in range(2, 17):  # sections longer than a leaf may be: split at their sub-headings
        page = doc.new_page()
        y = 60.0
        if n in (2, 10):
            title = "Investment Policy and Restrictions" if n == 2 else "Risk Management Framework"
            page.insert_text((72, 80), title, fontname="hebo", fontsize=16)
            y = 110.0
        _body(page, y, 40)
        page.insert_text((72, 810), f"ACME GLOBAL GROWTH FUND {n}", fontname="hebo", fontsize=9)
    doc.save(tmp_path / "fund.pdf")
    doc.close()
    tree = build_tree(tmp_path / "fund.pdf", use_cache=False)
    titles = [n.title for n in tree.walk()]
    assert not [t for t in titles if "ACME GLOBAL GROWTH FUND" in t], titles
    assert "Investment Policy and Restrictions" in titles and "Risk Management Framework" in titles


GREY, BLUE = (0.4, 0.4, 0.4), (0.0, 0.3, 0.6)


def test_a_two_coloured_heading_wraps_in_the_colour_it_ended_in(tmp_path):
    """A fund annex titled "Product name:" in grey, then the fund's name in blue, wrapping onto a
    second blue line ("Fund", "Dividend Fund"): the wrapped line is the rest of the title (even a
    word that recurs on several pages), never a section of its own, while the grey-and-blue line
    under it ("Legal entity identifier: ...") is not taken for the rest of the name."""
    funds = [
        ("Acme Funds - Europe Select Equity", "Fund"),
        ("Acme Funds - Global Core Equity", "Fund"),
        ("Acme Funds - Japan Value Equity", "Fund"),
        ("Acme Funds - Europe Strategic", "Dividend Fund"),
    ]
    doc = pymupdf.open()
    for n, (name, rest) in enumerate(funds):
        for i in range(6):  # longer than a leaf: the section is split at its sub-headings
            page = doc.new_page()
            y = 60.0
            if i == 0:
                page.insert_text((72, 80), "Product name:", fontname="helv", fontsize=16, color=GREY)
                page.insert_text((182, 80), name, fontname="helv", fontsize=16, color=BLUE)
                page.insert_text((72, 100), rest, fontname="helv", fontsize=16, color=BLUE)
                lei = f"5493006GJXDH1G8ZPK3{n}"
                label = "Legal entity identifier:"
                page.insert_text((72, 126), label, fontname="helv", fontsize=16, color=GREY)
                page.insert_text((262, 126), lei, fontname="helv", fontsize=16, color=BLUE)
                y = 160.0
            _body(page, y, 40)
    doc.save(tmp_path / "annex.pdf")
    doc.close()
    tree = build_tree(tmp_path / "annex.pdf", use_cache=False)
    titles = [n.title for n in tree.walk()]
    for name, rest in funds:
        assert f"Product name: {name} {rest}" in titles, titles
    assert not [t for t in titles if t in ("Fund", "Dividend Fund")], titles
    assert not [t for t in titles if "Product name" in t and "Legal entity" in t], titles


def test_key_figures_and_repeated_column_labels_are_not_sections(tmp_path):
    """A climate report sets its key figures large ("32.6Mt CO2e", "1TWh") beside its chapters, and a
    table's column headings, bold, read as one line ("Percentage of Percentage of Percentage of"). Neither
    is a title: the chapters stay the top level (review 6: the figures had become the top level and
    swallowed the real chapters)."""
    doc = pymupdf.open()
    for k, (chapter, sections) in enumerate(CHAPTERS.items()):
        for i, section in enumerate(sections):
            page = doc.new_page()
            y = 60.0
            if i == 0:
                page.insert_text((72, y + 20), chapter, fontname="hebo", fontsize=16)
                y = _body(page, y + 50, 6) + 10
            if i == 1:  # a call-out figure, larger than any title, then a table with bold column labels
                page.insert_text((72, y + 24), ["32.6Mt CO2e", "1TWh", "578Mt CO2e"][k], fontname="hebo",
                                 fontsize=22)  # fmt: skip
                page.insert_text((72, y + 50), "Percentage of Percentage of Percentage of", fontname="hebo",
                                 fontsize=12)  # fmt: skip
                y += 60
            page.insert_text((72, y + 12), section, fontname="hebo", fontsize=12)
            _body(page, y + 34, 30)
    path = tmp_path / "climate.pdf"
    doc.save(path)
    doc.close()
    tree = build_tree(path, use_cache=False)
    tops = [n.title for n in tree.nodes if n.node_id != "opening"]
    assert tops == list(CHAPTERS)
    titles = [n.title for n in tree.walk()]
    assert not [t for t in titles if "Mt CO2e" in t or "TWh" in t or t.startswith("Percentage of")]
    assert "Supply Chain Resilience" in titles


@pytest.mark.parametrize(
    ("text", "callout"),
    [("32.6Mt CO2e", True), ("1TWh", True), ("$4.2bn", True), ("12.5 %", True), ("3M", False),
     ("2024 AGM", False), ("2023 Highlights", False), ("1. Introduction", False), ("5G Networks", False)],
)  # fmt: skip
def test_a_figure_with_its_unit_is_a_callout_not_a_title(text, callout):
    from pageindex.tree.split import figure_callout

    assert figure_callout(text) is callout


@pytest.mark.parametrize(
    ("text", "repeated"),
    [("Percentage of Percentage of", True), ("Number of Common Common", True),
     ("Net Revenue Percentage Net Revenue Percentage", True),
     ("Independence of the Members of the Board of Directors", False),  # "of the" twice is English
     ("(4) Consolidated sales units, number of new titles, and sales units forecast", False),  # apart
     ("Risk Management and Risk Factors", False)],
)  # fmt: skip
def test_column_labels_read_as_one_line_repeat_themselves(text, repeated):
    from pageindex.tree.split import repeated_labels

    assert repeated_labels(text) is repeated


def test_lines_under_a_tables_rows_are_not_headings(tmp_path):
    """A bold table whose labels wrap under their figures ("Earnings Per  $1.00", then "Share**") and
    whose last rows are words ("OG&A Rate  No change"): only the headings around it are sections."""
    doc = pymupdf.open()
    for heading in ("Business Overview", "Second Quarter Results", "Capital Allocation", "Outlook"):
        page = doc.new_page()
        page.insert_text((72, 80), heading, fontname="hebo", fontsize=14)
        y = _body(page, 110.0, 6) + 16
        if heading == "Second Quarter Results":
            rows = [("Identical Sales", "1.0%", "5.8%"), ("Earnings Per", "($0.25)", "$1.00"),
                    ("Share**", "", ""), ("Operating Profit", "$989", "$1,110"), ("Profit (Table 7)", "", ""),
                    ("OG&A Rate", "No change", "")]  # fmt: skip
            for label, a, b in rows:
                page.insert_text((72, y), label, fontname="hebo", fontsize=10)
                page.insert_text((300, y), a, fontname="hebo", fontsize=10)
                page.insert_text((400, y), b, fontname="hebo", fontsize=10)
                y += 13
        _body(page, y + 20, 20)
    path = tmp_path / "release.pdf"
    doc.save(path)
    doc.close()
    titles = [n.title for n in build_tree(path, use_cache=False).walk()]
    assert "Second Quarter Results" in titles and "Capital Allocation" in titles, titles
    assert not [t for t in titles if t.startswith(("Share", "Profit (Table", "OG&A"))], titles


def test_a_small_indented_bold_line_is_a_column_heading_not_a_sub_heading() -> None:
    """Body 9 pt from x=57: a 6.6 pt bold line set into the page's columns is a table's column
    heading; at the text edge (Walmart's small risk-factor headings) or centred on its own ("AUDIT
    REPORT") it may be a heading; centred but split into cells it is column headings again."""

    def line(text: str, x0: float, x1: float, size: float, *, centred: bool = False, gaps: int = 0) -> Line:
        return Line(1, text, True, False, centred, x0, x1, 100, 100 + size, size, wide_gaps=gaps)

    body = [line("Body text of the note, set in the document's own size.", 57, 555, 9.0) for _ in range(30)]
    page = Page(1, 612, 792, body)
    rules = SubheadingRules.for_pages([page])
    assert rules.size == 9.0
    assert rules.column_head(page, line("Gross Amount of", 214, 265, 6.6))
    assert not rules.column_head(page, line("Strategic Risks", 57, 140, 7.8))  # at the text edge
    assert not rules.column_head(page, line("AUDIT REPORT", 280, 332, 6.6, centred=True))
    cells = line("Gross Amount of    to Master Netting", 214, 440, 6.6, centred=True, gaps=1)
    assert rules.column_head(page, cells)
    assert not rules.column_head(page, line("Derivatives", 214, 280, 9.0))  # body size: other rules decide


def test_a_name_beside_a_column_of_text_is_a_line_of_its_own(tmp_path):
    """On a page set in two text columns, a name set larger in the left column sits a little lower
    than the right column's line beside it (its centre sorts after that line's): it is a line of its
    own, not glued to the text beside it, and a heading of the section."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((50, 60), "Our Director Nominees", fontname="hebo", fontsize=12)
    left = [PROSE[:44]] * 6
    for k, text in enumerate(left):
        page.insert_text((50, 80 + 12 * k), text, fontname="helv", fontsize=9)
    for block, name in ((0, "JANE A. EXAMPLE"), (1, "JOHN Q. SAMPLE")):
        top = 200 + 200 * block
        for k in range(12):
            page.insert_text((300, top + 12 * k), PROSE[:52], fontname="helv", fontsize=9)
        # the name's centre 1 pt below that of the right column's second line
        page.insert_text((50, top + 12 + 2.5), name, fontname="hebo", fontsize=12)
        page.insert_text((50, top + 40), "Independent Director", fontname="helv", fontsize=9)
    save_pdf(doc, tmp_path / "bios.pdf")

    from pageindex.tree.pdf import read_pdf

    texts = [line.text for line in read_pdf(tmp_path / "bios.pdf").pages[0].lines]
    assert "JANE A. EXAMPLE" in texts and "JOHN Q. SAMPLE" in texts
    assert not any("EXAMPLE" in t and "firm" in t for t in texts)  # not glued to the biography
    titles = [node.title for node in build_tree(tmp_path / "bios.pdf", use_cache=False).walk()]
    assert any(t.startswith("JANE A. EXAMPLE") for t in titles)
    assert any(t.startswith("JOHN Q. SAMPLE") for t in titles)


def _raw_page(pieces: list[tuple[str, float, float, float]]) -> dict:
    """A ``get_text('dict')`` page of one-span lines: (text, x0, x1, baseline centre), 9 pt."""
    lines = [
        {"bbox": (x0, y - 4.5, x1, y + 4.5),
         "spans": [{"text": text, "flags": 0, "font": "Helvetica", "size": 9.0, "color": 0,
                    "bbox": (x0, y - 4.5, x1, y + 4.5)}]}
        for text, x0, x1, y in pieces
    ]  # fmt: skip
    return {"blocks": [{"type": 0, "lines": lines}]}


def _two_columns(y0: float, rows: int) -> list[tuple[str, float, float, float]]:
    """Prose lines side by side: the left column at x=50, the right one at x=300."""
    out = []
    for k in range(rows):
        out += [(PROSE[:44], 50, 250, y0 + 12 * k), (PROSE[:44], 300, 500, y0 + 12 * k)]
    return out


def test_the_rest_of_a_right_column_line_stays_with_it_beside_a_lower_name():
    """The right column's line in two pieces, its second a little lower (another font), both beside a
    name of the left column whose centre sorts between them: the name is a line of its own, and the
    second piece stays with the right column's line, not glued to the name."""
    from pageindex.tree.pdf import _page_lines

    pieces = _two_columns(100, 6)
    pieces += [("the committee reviewed its", 300, 420, 200.0), ("JANE A. EXAMPLE", 50, 160, 201.0)]
    pieces.append(("positions and the results", 424, 540, 201.5))
    texts = [line.text for line in _page_lines(1, _raw_page(pieces), 595, 842)]
    assert "JANE A. EXAMPLE" in texts
    assert "the committee reviewed its positions and the results" in texts


def test_a_lone_tick_beside_a_row_label_is_no_text_column():
    """A grid of ticks on a page set in two text columns: a tick (one letter of a symbol font) at the
    right column's edge, a little higher than the label beside it, does not split the label off as a
    left text column; both stay one line as before."""
    from pageindex.tree.pdf import _page_lines

    pieces = _two_columns(100, 6)
    pieces += [("ü", 300, 306, 200.0), ("Business Model and Strategy", 50, 170, 200.8)]
    texts = [line.text for line in _page_lines(1, _raw_page(pieces), 595, 842)]
    assert "Business Model and Strategy ü" in texts


def test_the_printed_page_number_under_two_columns_is_found():
    """A page set in two text columns reads its right column after the left one, so the footer
    with the printed number, under the left column, is not among the last lines read: it is found
    as one of the lowest lines on the page (three such pages, numbered 16 to 18)."""
    from pageindex.tree.labels import page_labels

    def line(n: int, text: str, x0: float, y0: float, ry: float) -> Line:
        return Line(n, text, False, False, False, x0, x0 + 200, y0, y0 + 9, 9.0, ry=ry)

    pages = []
    for n in (1, 2, 3):
        lines = [line(n, PROSE, 50, 100 + 12 * k, 100 + 12 * k) for k in range(5)]
        lines.append(line(n, str(15 + n), 290, 800, 800))  # the footer, read before the right column
        lines += [line(n, PROSE, 320, 100 + 12 * k, 942 + 12 * k) for k in range(5)]
        pages.append(Page(n, 595, 842, lines))
    assert page_labels(pages) == {"1": "16", "2": "17", "3": "18"}


def test_bracketed_captions_and_period_captions_on_a_cover_are_not_sections(tmp_path):
    """A filing's first page set in bold throughout: the captions under its fields, wholly in brackets
    ("(Exact name of company as registered)", "(Check one)"), and the period it covers ("For the
    transition period ended June 30") are no titles; the document's headline and headings stay."""
    doc = pymupdf.open()
    page = doc.new_page()
    y = 60.0
    for text, size in (
        ("QUARTERLY STATEMENT", 16),
        ("(Check one)", 10),
        ("For the transition period ended June 30, 2031.", 10),
        ("Example Widgets Corp.", 14),
        ("(Exact name of company as registered)", 10),
    ):
        page.insert_text((72, y), text, fontname="hebo", fontsize=size)
        y = _body(page, y + 18, 2) + 14
    for section in ("Results of the Period", "Outlook"):
        page.insert_text((72, y), section, fontname="hebo", fontsize=12)
        y = _body(page, y + 18, 6) + 14
    save_pdf(doc, tmp_path / "cover.pdf")
    titles = [node.title for node in build_tree(tmp_path / "cover.pdf", use_cache=False).walk()]
    assert "Results of the Period" in titles and "Outlook" in titles
    assert not [t for t in titles if t.startswith("(") or "period ended" in t.lower()], titles


@pytest.mark.parametrize(
    ("text", "header"),
    [
        ("For the quarterly period ended April 30, 2031", True),
        ("For the Transition Period Ended", True),
        ("Quarterly Report for the period", False),
    ],
)
def test_a_reporting_period_is_a_caption(text, header):
    assert is_table_header(_line(text, 0)) is header


@pytest.mark.parametrize(
    ("text", "closes"),
    [
        ("Legislation)", True),  # the rest of "ACA (also referred to as U.S. Healthcare" above it
        ("TWAP, VWAP ...)", True),
        ("2021), which is incorporated by reference", True),
        ("1) Overview", False),  # a list marker is no bracket of the text
        ("b) Status of Research", False),
        ("iv) Risk Factors (continued)", False),
        ("Revenue (in millions)", False),
        ("(Check one)", False),
    ],
)
def test_a_line_that_closes_a_bracket_it_did_not_open_is_no_title(text, closes):
    """A glossary term wrapped onto a second line left "Legislation)" a section of Pfizer's cover; a
    line that closes a bracket it did not open continues the line above, in both heading finders."""
    from pageindex.tree.layout import _title_shaped
    from pageindex.tree.split import closes_an_unopened_bracket, is_subheading

    assert closes_an_unopened_bracket(text) is closes
    bold = Line(1, text, True, False, False, 72, 300, 100, 110, 10.0)
    if closes:
        assert not is_subheading(bold, frozenset()) and not _title_shaped(text)
    elif text[0].isdigit():  # a numbered heading stays one
        assert is_subheading(bold, frozenset()) and _title_shaped(text)


LISTED = {
    "Market Overview": ["Regional Demand", "Pricing Environment", "Customer Trends"],
    "Operations Review": ["Manufacturing Sites", "Supply Chain Resilience", "Workforce"],
    "Governance and Risk": ["Board Oversight", "Principal Risks", "Internal Controls"],
    "Sustainability": ["Climate Targets", "Community Programmes", "Product Stewardship"],
}


def _sections_pdf(path: Path, chapters: dict[str, list[str]], cover: list[str]) -> Path:
    """A report without an outline: ``cover`` lines 14 pt regular on page 1, then per chapter a page
    with its title 12 pt bold and each section 10.5 pt bold over body text 10 pt."""
    doc = pymupdf.open()
    page = doc.new_page()
    y = 80.0
    for text in cover:
        page.insert_text((72, y), text, fontname="helv", fontsize=14)
        y = _body(page, y + 22, 2) + 16
    for chapter, sections in chapters.items():
        page = doc.new_page()
        page.insert_text((72, 70), chapter, fontname="hebo", fontsize=12)
        y = _body(page, 92.0, 3) + 8
        for section in sections:
            page.insert_text((72, y + 12), section, fontname="hebo", fontsize=10.5)
            y = _body(page, y + 30, 8) + 8
    return save_pdf(doc, path)


def test_a_style_on_one_page_above_every_other_is_a_title_block_not_level_one(tmp_path):
    """A filing service's cover sheet sets two lines larger than any heading, on page 1 only ("Filer
    EXAMPLE CORP", "Form Type ANNUAL REVIEW"): a title block, not a level whose last heading holds the
    whole document. The chapters are the top sections."""
    pdf = _sections_pdf(tmp_path / "review.pdf", LISTED, ["Filer EXAMPLE CORP", "Form Type ANNUAL REVIEW"])
    tree = build_tree(pdf, use_cache=False)
    assert tree.strategy == "layout"
    tops = [n.title for n in tree.nodes if n.node_id != "opening"]
    assert tops == list(LISTED), tops
    assert not [n for n in tree.walk() if n.title.startswith("Form Type")]


def test_a_style_confined_to_the_middle_is_a_list_inside_a_section(tmp_path):
    """A report's directors are set 14 pt bold capitals, larger than its 12 pt chapter titles, on two
    pages in the middle of ten: a list inside the "Board of Directors" chapter. Ranked by size alone,
    the last name held every chapter after the list; the chapters stay the top sections, the names
    under theirs."""
    chapters = ["Overview", "Strategy", "Markets", "Operations", "Board of Directors",
                "Remuneration", "Audit", "Shareholders", "Outlook"]  # fmt: skip
    names = ["JANE Q. EXAMPLE", "JOHN R. SAMPLE", "MARY T. PLACEHOLDER", "PAUL V. DUMMY"]
    doc = pymupdf.open()
    for chapter in chapters:
        page = doc.new_page()
        page.insert_text((72, 70), chapter, fontname="hebo", fontsize=12)
        y = _body(page, 92.0, 3) + 8
        for section in (f"{chapter} Highlights", f"{chapter} Priorities"):
            page.insert_text((72, y + 12), section, fontname="hebo", fontsize=10.5)
            y = _body(page, y + 30, 4) + 8
        if chapter == "Board of Directors":
            for i, name in enumerate(names):
                if i == 2:  # the list goes on over the next page
                    page = doc.new_page()
                    y = 60.0
                page.insert_text((72, y + 16), name, fontname="hebo", fontsize=14)
                y = _body(page, y + 36, 6) + 8
    pdf = save_pdf(doc, tmp_path / "board.pdf")
    tree = build_tree(pdf, use_cache=False)
    tops = [n.title for n in tree.nodes if n.node_id != "opening"]
    assert tops == chapters, tops
    board = tree.get("board_of_directors")
    assert (board.start_page, board.end_page) == (5, 6)
    assert [n.title for n in board.children if n.title in names] == names


def test_years_in_a_title_are_words_not_figures(tmp_path):
    """A heading naming the years it covers ("... for Fiscal 2031, 2030, and 2029": 12 digits in 56
    characters) is a title: each year counts as one figure. A ZIP code or an amount stays figures."""
    chapters = {
        "Executive Compensation": ["Summary Compensation Table for Fiscal 2031, 2030, and 2029", "Pay Ratio"],
        "Board Matters": ["Director Compensation for Fiscal 2031", "Board Meetings"],
        "Audit Matters": ["Fees Billed in 2031 and 2030", "Pre-Approval Policies"],
    }
    tree = build_tree(_sections_pdf(tmp_path / "proxy.pdf", chapters, []), use_cache=False)
    titles = [n.title for n in tree.walk()]
    for sections in chapters.values():
        assert set(sections) <= set(titles), titles
    assert years_as_one_figure("Table for Fiscal 2031, 2030, and 2029") == "Table for Fiscal 0, 0, and 0"
    for figures in ("Washington, D.C. 20549", "$2024.5", "1,2030", "2030.25"):
        assert years_as_one_figure(figures) == figures


def test_a_sentence_carried_over_above_a_heading_keeps_the_section_before_on_that_page(tmp_path):
    """A short tail of the page before's paragraph above a heading ("and investing in our associates, ...
    shareholders.", under 120 characters) is no running header: the section before runs onto that page.
    It was read as one (little text above the heading), so the section ended a page early and its last
    words fell in no section of theirs (trial 26 on Kroger's release: p. 1 for a section ending on p. 2).
    A running header above a heading still leaves it at the top: the section before ends a page earlier."""
    doc = pymupdf.open()
    sections = ["Comments from the Chief Executive", "Second Quarter Results", "Capital Allocation"]
    page = doc.new_page()
    page.insert_text((72, 60), "Example Holdings Reports Its Results", fontname="hebo", fontsize=16)
    page.insert_text((72, 100), sections[0], fontname="hebo", fontsize=12)
    _body(page, 122, 40)
    page = doc.new_page()
    page.insert_text((72, 40), "Example Holdings", fontname="helv", fontsize=8)  # a running header
    page.insert_text((72, 60), "and investing in our people, we expect to create value for", fontname="helv",
                     fontsize=10)  # fmt: skip
    page.insert_text((72, 73), "shareholders.", fontname="helv", fontsize=10)
    page.insert_text((72, 100), sections[1], fontname="hebo", fontsize=12)
    _body(page, 122, 40)
    page = doc.new_page()
    page.insert_text((72, 40), "Example Holdings", fontname="helv", fontsize=8)
    page.insert_text((72, 70), sections[2], fontname="hebo", fontsize=12)
    _body(page, 92, 40)
    tree = build_tree(save_pdf(doc, tmp_path / "release.pdf"), use_cache=False, use_outline=False)
    spans = {n.title: (n.start_page, n.end_page) for n in tree.walk()}
    assert spans[sections[0]] == (1, 2), spans  # was (1, 1)
    assert spans[sections[1]] == (2, 2), spans  # page 3's heading has only the running header above it
    assert spans[sections[2]] == (3, 3), spans
