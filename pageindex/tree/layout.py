"""Headings found from the page layout alone, for any document: reports, releases, proxies.

A line is a heading candidate when it stands out from the document's body text (larger type,
bold where the body is not, all capitals, a colour of its own, or a numbering such as "1.",
"(2)", "3)" or "1.2" on an emphasised line), is short and shaped like a title (starts with a
capital or a number, few figures, no sentence end after a long run of words), is one run of
text rather than table cells (no wide gap between its pieces), and is not a running header or
footer (its text recurs on 3+ pages) or a contents line (ends in a page number). A heading
wrapped over two or three lines in the same style is one heading.

Levels come from consistent style: every candidate's style (size rounded to half a point,
bold, capitals, accent colour) is ranked by prominence (size first, then bold, capitals,
colour); numbered headings take the level of their numbering scheme ("1." above "(1)" above
"1)"), in the order the schemes first appear. The most prominent styles become levels 1, 2 and
3; rarer styles that are less prominent than the body's own emphasis are dropped, and so are a style
used once and a one-page style above every spread one (a title block). A style confined to the middle
of the document (a list's entries: a proxy's directors) ranks below the section titles around it.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from pageindex.tree.draft import Draft, intro_for
from pageindex.tree.headings import _ENDS_IN_PAGE_NUMBER, at_top, slug, statement_key
from pageindex.tree.pdf import Line, Page, compact, is_table_row
from pageindex.tree.split import (
    COLUMN_HEAD,
    closes_an_unopened_bracket,
    figure_callout,
    heading_text,
    labels_rows,
    repeated_labels,
    right_of_middle,
    set_as_rows_below,
    years_as_one_figure,
)

_NUMBERISH = re.compile(r"[\d$%€£¥]")
_SCHEMES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("d.d", re.compile(r"^\d{1,2}\.\d{1,2}\.?\s+\S")),
    ("d.", re.compile(r"^\d{1,2}\.\s+\S")),
    ("(d)", re.compile(r"^\(\d{1,2}\)\s*\S")),
    ("d)", re.compile(r"^\d{1,2}\)\s*\S")),
    ("(a)", re.compile(r"^\([a-z]\)\s+\S")),
    ("roman", re.compile(r"^(?:i|ii|iii|iv|v|vi|vii|viii|ix|x)\.\s+\S", re.IGNORECASE)),
)
_SENTENCE_END = re.compile(r"[.;,:]$")
_BAD_END = re.compile(r"(?:[-–—/&]|\b(?:and|or|of|the|to|for|in|on|with|by|de|la|et))$", re.IGNORECASE)
_BULLET = re.compile(r"^[•●▪■◦\-–—*]")
# a line wholly in brackets: a caption under or over a field ("(Mark One)", "(Exact name of registrant
# as specified in its charter)", "(Unaudited)"), never a title
_BRACKETED = re.compile(r"^\([^()]*\)$")


@dataclass(slots=True)
class Candidate:
    page: int
    index: int  # line index on the page
    line: Line
    title: str
    style: tuple  # (size, bold, caps, accent)
    scheme: str  # numbering scheme, "" for none
    bottom: float = 0.0  # y1 of its last line (a heading may wrap)
    last: Line | None = None  # its last line, and that line's style: what a wrapped line goes on from
    last_style: tuple = ()


def body_style(pages: list[Page]) -> tuple[float, bool, int]:
    """(size, bold, colour) most of the document's characters are set in."""
    sizes: Counter[float] = Counter()
    bold: Counter[bool] = Counter()
    colors: Counter[int] = Counter()
    for page in pages[:: max(1, len(pages) // 60)]:
        for line in page.lines:
            n = len(line.text)
            if n < 40 or line.gap > 2 * line.size:
                continue  # prose lines only: table rows are often set smaller
            sizes[round(line.size * 2) / 2] += n
            bold[line.bold] += n
            colors[line.color] += n
    if not sizes:
        return 10.0, False, 0
    return sizes.most_common(1)[0][0], bold.most_common(1)[0][0], colors.most_common(1)[0][0]


def _scheme(text: str) -> str:
    for name, pattern in _SCHEMES:
        if pattern.match(text):
            return name
    return ""


def _title_shaped(text: str) -> bool:
    if not 3 <= len(text) <= 150:
        return False
    first = text[0]
    if not (first.isupper() or first.isdigit() or first == "("):
        return False
    letters = sum(c.isalpha() for c in text)
    if letters < 3:
        return False
    if len(_NUMBERISH.findall(years_as_one_figure(text))) > max(4, len(text) * 0.15):
        return False
    words = text.split()
    if len(words) > 14:
        return False
    if _SENTENCE_END.search(text) and len(words) > 8:
        return False
    long_words = Counter(w.lower() for w in words if len(w) > 3)
    if long_words and long_words.most_common(1)[0][1] >= 3:
        return False  # "January January January": column headings
    if _BRACKETED.match(text) or closes_an_unopened_bracket(text):
        return False  # a caption in brackets, or the end of a line wrapped from the one above
    if figure_callout(text):
        return False  # "32.6Mt CO2e" set large beside a chart: a key figure
    return not COLUMN_HEAD.search(text) and not _BULLET.match(text)


def candidates(pages: list[Page], headers: frozenset[str] | set[str]) -> list[Candidate]:
    """Every heading candidate of the document, in reading order (see the module docstring)."""
    size, body_bold, body_color = body_style(pages)
    out: list[Candidate] = []
    for page in pages:
        lines = page.lines
        on_page = Counter(line.compact for line in lines)
        in_table = _under_table_rows(lines)
        for index, line in enumerate(lines):
            text = heading_text(line)
            if not _title_shaped(text):
                continue
            if index in in_table:
                continue  # the rest of a row label wrapped under its figures, or a row of words
            if on_page[line.compact] >= 3:
                continue  # a label repeated over table columns or rows
            if right_of_middle(page, line):
                continue  # a column heading or a cell, not a heading of the text
            larger = line.size >= size + 0.9
            bold = line.bold and not body_bold
            accent = line.color not in (body_color, -1)
            caps = line.caps and len(text) > 6
            scheme = _scheme(text)
            if not (larger or bold or accent or caps):
                continue
            if line.size < size - 1.5 and not (bold or accent):
                continue  # small print: footnotes, captions
            if line.cells >= 3:
                continue  # table cells on one line
            if _beside_figures(lines, index):
                continue  # a table's row label, its figures set beside it on a baseline of their own
            if labels_rows(lines, index):
                continue  # a label of a group of rows in the middle of a table
            if _ENDS_IN_PAGE_NUMBER.search(text) and not scheme:
                continue  # a contents entry or a running footer
            style = (round(line.size * 2) / 2, bold, caps, accent)
            prev = out[-1] if out else None
            recurs = line.header_key in headers
            wraps = (
                prev is not None
                and prev.page == page.number
                and prev.index == index - 1
                and _goes_on_in(prev, style, line)
                and not scheme
                and line.y0 - prev.bottom < 0.9 * line.size
                and len(prev.title) + len(text) < 150
                and not _SENTENCE_END.search(prev.title)
                and (not recurs or _in_end_colour(prev, line))
            )
            if wraps and prev is not None:
                # a heading wrapped over lines; a line that recurs on other pages ("Fund" under
                # "... Europe Select Equity Fund") goes on with it only when set in the colour the
                # heading's two-coloured line ended in: otherwise it is a running header or label
                prev.title = f"{prev.title} {text}"
                prev.index = index
                prev.bottom = line.y1
                prev.last, prev.last_style = line, style
                continue
            if recurs:
                continue
            out.append(Candidate(page.number, index, line, text, style, scheme, line.y1, line, style))
    # a title wrapped from column headings repeats itself ("Percentage of Percentage of ...")
    return [c for c in out if (not _BAD_END.search(c.title) or c.scheme) and not repeated_labels(c.title)]


def _in_end_colour(prev: Candidate, line: Line) -> bool:
    """``line`` is set, in one colour, in the colour the two-coloured last line of ``prev`` ended in
    (a grey label "Product name:", then the name in the accent colour, wrapping)."""
    last = prev.last or prev.line
    return last.color == -1 and line.color == last.end_color


def _goes_on_in(prev: Candidate, style: tuple, line: Line) -> bool:
    """Whether ``line`` can be the next line of the heading ``prev``: set in the style its last line
    was set in, or, after a two-coloured line, in the colour that line ended in
    (:func:`_in_end_colour`) and otherwise the same style."""
    if prev.last_style == style:
        return True
    return prev.last_style[:3] == style[:3] and _in_end_colour(prev, line)


def _beside_figures(lines: list[Line], index: int, reach: int = 3) -> bool:
    """A table row of figures to the right of line ``index`` that shares part of its height: the
    line labels that row (a label wrapped over two lines puts the figures between them, so they
    are not one visual line). A heading never has figures beside it."""
    line = lines[index]
    for other in lines[max(0, index - reach) : index + reach + 1]:
        if other is line or other.x0 <= line.x1 or not is_table_row(other):
            continue
        shared = min(line.y1, other.y1) - max(line.y0, other.y0)
        if shared > 0.3 * min(line.y1 - line.y0, other.y1 - other.y0):
            return True
    return False


def _under_table_rows(lines: list[Line]) -> set[int]:
    """Lines that go on a table below one of its rows: set at the row labels' left edge and in their
    style, each close under the line before it ("Earnings (Loss) Per ($0.25) $1.00", then "Share**";
    "Adjusted FIFO Operating $989", then "Profit (Table 7)", then rows of words). A heading above a
    table is not below a row, so it stays."""
    inside: set[int] = set()
    row: Line | None = None
    for index, line in enumerate(lines):
        prev = lines[index - 1] if index else None
        goes_on = (
            row is not None and prev is not None and abs(line.x0 - row.x0) <= 2.0
            and line.y0 - prev.y1 < 0.9 * line.size
            # set as the rows are: a bold "Revenues:" under a plain caption row starts a block of its own
            and line.bold == row.bold and abs(line.size - row.size) < 0.6
        )  # fmt: skip
        if goes_on:
            inside.add(index)  # a row below a row (two cells: "OG&A Rate No change") included
        elif is_table_row(line) and line.figures and len(line.text.split()) <= 10:
            # the table's first row (a short label and its figures; two columns of prose read as one
            # line are no row): it may be a two-cell title, so it stays
            row = line
        else:
            row = None
    return inside


def _prominence(style: tuple) -> tuple:
    size, bold, caps, accent = style
    return (-size, not bold, not caps, not accent)


def assign_levels(cands: list[Candidate], max_levels: int = 3) -> list[tuple[Candidate, int]]:
    """(candidate, level 1..max_levels) by consistent style; candidates of dropped styles left out."""
    if not cands:
        return []
    counts = Counter(c.style for c in cands if not c.scheme)
    pages_of: dict[tuple, set[int]] = {}
    for c in cands:
        if not c.scheme:
            pages_of.setdefault(c.style, set()).add(c.page)
    spread = len({c.page for c in cands}) >= 4
    schemes = list(dict.fromkeys(c.scheme for c in cands if c.scheme))
    # a style used once in a long document is more often a title page or a pull quote; one used on
    # a single page and more prominent than every style used on several pages, a title page's or a
    # filing service's cover block ("Filer NVIDIA CORP", "Form Type DEF 14A"): as level 1 it would
    # hold the whole document
    styles = sorted(counts, key=_prominence)
    level_of: dict[tuple, int] = {}
    rank = 0
    for style in styles:
        title_block = spread and not rank and len(pages_of[style]) < 2
        if len(cands) > 12 and (counts[style] < 2 or title_block):
            continue
        rank += 1
        level_of[style] = rank
    for rank, style in enumerate(_entries_below_sections(list(level_of), pages_of, counts), 1):
        level_of[style] = rank
    out: list[tuple[Candidate, int]] = []
    last_numbered: dict[str, tuple[int, int]] = {}  # scheme -> (its last number, that heading's level)
    for c in cands:
        if c.scheme:
            # numbered headings sit under the unnumbered styles that are more prominent
            above = sum(1 for s in level_of if _prominence(s) < _prominence(c.style))
            level = above + 1 + schemes.index(c.scheme)
            number = _sequence_number(c)
            previous = last_numbered.get(c.scheme)
            if number is not None and previous is not None and number == previous[0] + 1:
                level = previous[1]  # "(4)" after "(3)" is its sibling, even set a little smaller
            if number is not None:
                last_numbered[c.scheme] = (number, level)
        else:
            level = level_of.get(c.style, 0)
        if 1 <= level <= max_levels:
            out.append((c, level))
        elif level > max_levels:
            out.append((c, max_levels))
    return out


def _entries_below_sections(
    ranked: list[tuple], pages_of: dict[tuple, set[int]], counts: Counter[tuple]
) -> list[tuple]:
    """``ranked`` (styles, most prominent first) with each style confined to the middle of the
    document moved to just below the first less prominent style that heads sections on both sides of
    it. Confined: all its headings within a stretch of pages at most half as long as the part of the
    document before it and the part after it (counted over the pages that have headings). Such a style names
    the entries of a list inside one section (a proxy's directors, set larger than its section
    titles, on 6 of 75 pages): ranked above the section titles, its last entry held every section
    after the list."""
    if not pages_of:
        return ranked
    lo = min(min(p) for p in pages_of.values())
    hi = max(max(p) for p in pages_of.values())
    out = list(ranked)
    for style in ranked:
        first, last = min(pages_of[style]), max(pages_of[style])
        stretch = last - first + 1
        if counts[style] < 2 or first - lo < 2 * stretch or hi - last < 2 * stretch:
            continue
        at = out.index(style)
        for other in out[at + 1 :]:
            if min(pages_of[other]) < first and max(pages_of[other]) > last:
                out.remove(style)
                out.insert(out.index(other) + 1, style)
                break
    return out


_SEQUENCE = re.compile(r"^\(?(\d{1,2})(?:\.(\d{1,2}))?[.)]?")


def _sequence_number(c: Candidate) -> int | None:
    """The number a numbered heading carries in its scheme ("(4)" -> 4, "2.3" -> 3), None for
    lettered or roman schemes."""
    m = _SEQUENCE.match(c.title)
    if not m or c.scheme not in ("d.d", "d.", "(d)", "d)"):
        return None
    return int(m.group(2) if c.scheme == "d.d" and m.group(2) else m.group(1))


def layout_drafts(
    pages: list[Page],
    headers: frozenset[str] | set[str],
    base_rank: int = 1,
    max_levels: int = 3,
) -> list[Draft]:
    """Drafts for the document's layout headings, ranked ``base_rank`` and below by level."""
    out: list[Draft] = []
    for c, level in assign_levels(candidates(pages, headers), max_levels):
        page = pages[c.page - 1]
        line = c.line
        out.append(
            Draft(
                "heading",
                slug(c.title),
                c.title[:120],
                c.page,
                line.ry,
                at_top(page, line),
                base_rank + level - 1,
            )
        )
    return out


def with_statements(statements: list[Draft], layout: list[Draft], pages: list[Page]) -> list[Draft]:
    """Statements placed among layout headings so that each statement stays a leaf.

    A statement is a top section of the document: it takes the most prominent layout rank,
    so no document section (forward-looking statements, contacts) holds it. It ends where the
    next section begins: a layout heading at the top of a later page, or any heading that is
    no table label (its next line is no table row: figures in cells). Labels inside the
    statement ("Current assets", "Operating activities") are dropped, so the statement is
    a leaf and what follows it is never inside it.
    """
    # a statement title over prose ("Balance Sheet" in a release's narrative) is a heading
    statements = [d for d in statements if _labels_table(pages, d, 4)]
    if not statements:
        return layout
    top = min((d.rank for d in layout), default=1)
    for s in statements:
        s.rank = top

    def near_statement(d: Draft) -> bool:
        return any(s.start_page == d.start_page and abs(s.y - d.y) < 4.0 for s in statements)

    rest = [d for d in layout if not near_statement(d)]
    ordered = sorted([*statements, *rest], key=lambda d: (d.start_page, d.y))
    out: list[Draft] = []
    current: Draft | None = None
    lifted: tuple[int, int] | None = None  # (rank as found, rank given) after a statement
    for d in ordered:
        if d.kind == "statement":
            current, lifted = d, None
        elif current is None and lifted is not None:
            # what follows keeps its nesting, moved up as far as the heading that ended the statement
            d.rank = max(lifted[1], d.rank - (lifted[0] - lifted[1]))
        elif current is not None:
            if "".join(d.title.split()).lower() == "".join(current.title.split()).lower():
                continue  # the statement's title repeated over its next table
            if not (d.at_top and d.start_page > current.start_page) and _labels_table(pages, d):
                continue  # a label inside the statement
            lifted = (d.rank, min(d.rank, current.rank))
            d.rank = lifted[1]  # the next section: beside the statement, not in it
            current = None
        out.append(d)
    return out


def _labels_table(pages: list[Page], d: Draft, lookahead: int = 2) -> bool:
    """True when one of the next ``lookahead`` lines after ``d``'s heading line is a table row."""
    found = _heading_line(pages, d)
    if found is None:
        return False
    lines, i = found
    return any(is_table_row(nxt) for nxt in lines[i + 1 : i + 1 + lookahead])


_NUMBERING = re.compile(r"^(?:\(\d{1,2}\)|\d{1,2}\)|\d{1,2}(?:\.\d{1,2})*\.?)\s*")
_SECTION_KINDS = frozenset({"cover", "part", "item", "exhibit", "financials", "back", "notes", "note"})


def statement_title(title: str) -> bool:
    """A title that names a financial statement, numbered or not ("3. Consolidated Balance Sheets",
    "INCOME STATEMENTS", "Consolidated Statement of Financial Position (IFRS)")."""
    return statement_key(compact(_NUMBERING.sub("", title))) is not None


def _heading_line(pages: list[Page], d: Draft) -> tuple[list[Line], int] | None:
    lines = pages[d.start_page - 1].lines
    for i, line in enumerate(lines):
        if abs(line.ry - d.y) < 0.5:
            return lines, i
    return None


def _row_label(pages: list[Page], d: Draft) -> bool:
    """``d`` is a label of a statement's table rows taken for a heading ("Investing", "(Assets)
    Current assets", "Liabilities and stockholders' equity"): an unnumbered heading that is no
    statement title and holds no sections, set as the table rows below it are
    (:func:`~pageindex.tree.split.set_as_rows_below`)."""
    if d.kind in _SECTION_KINDS or d.kind == "statement" or _scheme(d.title) or statement_title(d.title):
        return False
    if any(c.key != "intro" for c in d.children):
        return False
    found = _heading_line(pages, d)
    return found is not None and set_as_rows_below(*found)


def absorb_row_labels(drafts: list[Draft], pages: list[Page], max_pages: int = 5) -> None:
    """Give a statement back the row labels of its table that were taken for headings.

    Any strategy may split a statement at the bold group labels of its table (its children, or its
    next siblings on the pages it runs on). Under a section titled as a statement (detected, or named
    by the outline or the layout), such labels (:func:`_row_label`) are dropped, the statement
    running on over their pages, so the statement is one section and a retriever never reads a
    balance sheet's "Current liabilities" as a section of the document. A statement longer than
    ``max_pages`` keeps its labels (the leaves stay within the limit), and a heading that opens a
    later page ends the statement (a label under the column headings the statement repeats on its
    next page does not: Daiichi's "Current liabilities" under "(Millions of JPY)" on p. 38).
    """
    i = 0
    while i < len(drafts):
        d = drafts[i]
        if (d.kind == "statement" or statement_title(d.title)) and d.page_count <= max_pages:
            old = [c for c in d.children if c.key != "intro"]
            kept = [c for c in old if not _row_label(pages, c)]
            if len(kept) < len(old):
                d.children = kept
                if kept:
                    intro = intro_for(d, kept[0])
                    if intro is not None:
                        d.children.insert(0, intro)
                    for a, b in zip(kept, kept[1:], strict=False):
                        if b.at_top:
                            a.end_page, a.end_y = max(a.end_page, b.start_page - 1), float("inf")
                        else:
                            a.end_page, a.end_y = b.start_page, b.y
                        _stretch_last(a)
            while i + 1 < len(drafts):
                nxt = drafts[i + 1]
                if (
                    nxt.start_page > d.end_page + 1
                    or (nxt.start_page > d.start_page and _opens_page(pages, nxt))
                    or nxt.end_page - d.start_page + 1 > max_pages
                    or not _row_label(pages, nxt)
                ):
                    break
                d.end_page, d.end_y = nxt.end_page, nxt.end_y
                del drafts[i + 1]
            _stretch_last(d)
        absorb_row_labels(d.children, pages, max_pages)
        i += 1


def _opens_page(pages: list[Page], d: Draft) -> bool:
    """``d``'s heading is the first line of its page but for running headers and footers."""
    found = _heading_line(pages, d)
    return found is not None and not any(not line.margin for line in found[0][: found[1]])


def _stretch_last(d: Draft) -> None:
    """Run ``d``'s last child, and its last child in turn, to ``d``'s end: no page under no leaf."""
    node = d
    while node.children:
        last = node.children[-1]
        last.end_page, last.end_y = node.end_page, node.end_y
        node = last
