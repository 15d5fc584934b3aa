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


_PARAGRAPHS = [
    (
        "The economic recovery began with a positive tone, the approval of the vaccines at the end of last",
        "year and the start of the vaccination campaigns giving some visibility on how the health crisis",
        "would evolve over the months ahead; activity rebounded strongly in the second half of the year.",
    ),
    (
        "Valuation levels having become very demanding at the end of the year, watching the technologies",
        "and whether the targets the market expects are met will be essential in the year that has begun,",
        "even if the recovery is unlikely to be a straight line for every one of the economies we follow.",
    ),
]
_DARK = (0.15, 0.15, 0.15)


def _report_pdf(path):
    """A fund's annual report with no Items: a bookmark per chapter, and (as a word processor's
    generated outline has them) one per paragraph of the outlook, the paragraphs printed in a colour of
    their own on the second of its seven pages (long enough to be split at its bold sub-headings); and a
    bold sentence captioning a risk, bookmarked too."""
    doc = pymupdf.open()
    toc = []
    for chapter, length in [("Management Report", 1), ("Outlook", 7), ("Risks", 1), ("Accounts", 1)]:
        toc.append([1, chapter, doc.page_count + 1])
        for k in range(length):
            page = doc.new_page()
            y = 72.0
            if k == 0:
                page.insert_text((72, y), chapter, fontname="hebo", fontsize=14)
                y += 28
            if chapter == "Outlook" and k in (2, 4):
                page.insert_text((72, y), f"Markets in Region {k}", fontname="hebo", fontsize=10)
                y += 16
            if chapter == "Outlook" and k == 1:
                for lines in _PARAGRAPHS:
                    toc.append([2, " ".join(lines)[:254], doc.page_count])
                    for text in lines:
                        page.insert_text((72, y), text, fontname="helv", fontsize=10, color=_DARK)
                        y += 12
                    y += 10
            if chapter == "Risks":
                caption = "Adverse changes in the financial markets could increase our costs of borrowing."
                toc.append([2, caption, doc.page_count])
                page.insert_text((72, y), caption, fontname="hebo", fontsize=10)
                y += 16
            for _ in range(8):
                page.insert_text((72, y), _PROSE[0], fontname="helv", fontsize=10)
                page.insert_text((72, y + 12), _PROSE[1], fontname="helv", fontsize=10)
                y += 34
    return save_pdf(doc, path, toc)


def test_a_bookmark_at_a_paragraph_is_no_section(tmp_path):
    """An outline made from a word processor's paragraphs bookmarks sentences of running text: those are
    no sections, and the first line of a paragraph in a colour of its own is no sub-heading either. A
    risk factor's caption, a sentence set bold, stays a section."""
    tree = build_tree(_report_pdf(tmp_path / "report.pdf"), use_cache=False)
    titles = [n.title for n in tree.walk()]
    assert "Outlook" in titles and "Markets in Region 2" in titles
    assert "Adverse changes in the financial markets could increase our costs of borrowing." in titles
    assert not any(t.startswith(("The economic recovery", "Valuation levels")) for t in titles), titles


def _html_line(page, x: float, y: float, html: str) -> None:
    """One line of 10-point sans-serif text in black with its baseline near ``y`` (the base-14 fonts of
    ``insert_text`` print a bullet as a middle dot)."""
    page.insert_htmlbox(pymupdf.Rect(x, y - 9, 560, y + 5), f'<span style="font-size:10px">{html}</span>')


def _grey_item_pdf(path, lines):
    """Item 1 of eight grey pages split by a bold sub-heading on page 2, Item 2 on page 9; on each page
    ``lines(page, number, y)`` prints that page's own lines after its first twelve and returns where
    the text goes on."""
    doc = pymupdf.open()
    for number in range(1, 10):
        page = doc.new_page()
        y = 72.0
        for at, title in ((1, "Item 1. Business"), (2, "Operations in Region 2"), (9, "Item 2. Properties")):
            if number == at:
                page.insert_text((72, y), title, fontname="hebo", fontsize=10)
                y += 18
        for _ in range(12):
            page.insert_text((72, y), _ITEM_TEXT, fontname="helv", fontsize=10, color=_GREY)
            y += 14
        y = lines(page, number, y)
        for _ in range(6):
            page.insert_text((72, y), _ITEM_TEXT, fontname="helv", fontsize=10, color=_GREY)
            y += 14
    return save_pdf(doc, path)


def _bullets_pdf(path):
    """On page 4 a bulleted list item printed in black (a colour of its own in this filing), on page 6 a
    bold bulleted heading."""

    def lines(page, number: int, y: float) -> float:
        if number == 4:
            item = "• the number of common shares such person will receive upon such withdrawal;"
            _html_line(page, 90, y + 8, item)
        elif number == 6:
            _html_line(page, 72, y + 8, "<b>• Respiratory Products</b>")
        return y + 30 if number in (4, 6) else y

    return _grey_item_pdf(path, lines)


def test_a_bulleted_list_item_is_no_heading(tmp_path):
    """A bulleted line in a colour of its own is an item of a list (an agreement printed in black in a
    grey filing); a bulleted heading is set bold and capitalised, and stays one."""
    tree = build_tree(_bullets_pdf(tmp_path / "bullets.pdf"), use_cache=False)
    titles = [n.title for n in tree.walk()]
    assert "• Respiratory Products" in titles or "Respiratory Products" in titles, titles
    assert not any("common shares" in t for t in titles), titles


def _sentences_pdf(path):
    """On page 4 a one-line paragraph printed in black, on page 6 a title printed in black (both stand
    out by colour alone)."""

    def lines(page, number: int, y: float) -> float:
        if number == 4:
            text = "The aforesaid Board of Directors must have at least three independent directors."
            page.insert_text((72, y + 8), text, fontname="helv", fontsize=10)
        elif number == 6:
            page.insert_text((72, y + 8), "Composition of the Board", fontname="helv", fontsize=10)
        return y + 30 if number in (4, 6) else y

    return _grey_item_pdf(path, lines)


def test_a_sentence_in_a_colour_of_its_own_is_no_heading(tmp_path):
    """A one-line paragraph that stands out only by its colour is running text; a title in that colour
    stays a sub-heading."""
    tree = build_tree(_sentences_pdf(tmp_path / "sentences.pdf"), use_cache=False)
    titles = [n.title for n in tree.walk()]
    assert "Composition of the Board" in titles, titles
    assert not any(t.startswith("The aforesaid") for t in titles), titles


def test_a_sub_heading_right_under_its_items_title_is_a_section(tmp_path):
    """An Item's first sub-heading may stand right under the Item's title at the top of its page (NVIDIA's
    "Forward-Looking Statements" under "ITEM 2. MANAGEMENT'S DISCUSSION ..."): it is a section, not part
    of the title."""
    doc = pymupdf.open()
    for number in range(1, 10):
        page = doc.new_page()
        y = 72.0
        if number == 1:
            page.insert_text((72, y), "Item 1. Business", fontname="hebo", fontsize=10)
            page.insert_text((72, y + 16), "Forward-Looking Statements", fontname="hebo", fontsize=10)
            y += 34
        if number == 3:
            page.insert_text((72, y), "Operations in Region 3", fontname="hebo", fontsize=10)
            y += 18
        if number == 9:
            page.insert_text((72, y), "Item 2. Properties", fontname="hebo", fontsize=10)
            y += 18
        for _ in range(20):
            page.insert_text((72, y), _ITEM_TEXT, fontname="helv", fontsize=10)
            y += 14
    tree = build_tree(save_pdf(doc, tmp_path / "under_title.pdf"), use_cache=False)
    children = [(n.title, n.start_page, n.end_page) for n in tree.get("item_1").children]
    assert children[0] == ("Forward-Looking Statements", 1, 2), children
    assert ("Operations in Region 3", 3, 8) in children
