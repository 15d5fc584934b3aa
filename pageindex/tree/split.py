"""Split leaves longer than the limit: sub-headings first, page windows last.

Sub-headings come from the embedded outline when it has entries inside the leaf, else
from emphasised lines (bold, or all caps) that are not running headers or table rows.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from pageindex.tree.draft import Draft, intro_for
from pageindex.tree.headings import at_top, slug
from pageindex.tree.labels import PageNumbers, page_numbers
from pageindex.tree.pdf import Line, Page, compact, is_table_row

# column headings and table captions that look like titles
COLUMN_HEAD = re.compile(
    r"^(?:for\s+the\s+)?(?:(?:three|six|nine|twelve|\d{1,2})\s+(?:months|weeks)|(?:fiscal\s+)?years?|quarters?|weeks?|(?:quarterly|transition|reporting)\s+periods?)\s+ended"
    r"|^as\s+of\b|^(?:in\s+)?(?:millions|thousands|billions)\b|^\(?in\s+(?:millions|thousands|billions)"
    r"|^(?:january|february|march|april|may|june|july|august|september|october|november|december)\s+\d"
    r"|^(?:jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\.\s*\d"
    r"|^(?:q[1-4]|fy)\s?\d{2,4}\b|^\d{4}\s+\d{4}\b|^(?:change|total|amount|unaudited)\b"
    r"|^(?:nt|us|u\.s\.)?\$(?:\s+(?:nt|us)?\$)*$"
    r"|\(\s*\$?\s*in\s+(?:millions|thousands|billions)"
    # a unit caption in brackets: "($ million)", "(US$ millions, except per share)", "(€ thousand)"
    r"|^\(\s*(?:us\s*\$|usd|eur|gbp|chf|jpy|[$€£¥])?\s*(?:in\s+)?(?:[$€£¥]\s*)?(?:millions?|thousands?|billions?)\b",
    re.IGNORECASE,
)

__all__ = [
    "SubheadingRules", "attach", "figure_callout", "repeated_labels", "right_of_middle", "slug",
    "split_long", "subheading_drafts", "window_drafts", "years_as_one_figure",
]  # fmt: skip

# A figure set large as a call-out ("32.6Mt CO2e", "1TWh", "$4.2bn", "12.5 %"): a number with its unit
# glued on or with a decimal point, and at most one more short unit word. A heading is words.
_FIGURE_CALLOUT = re.compile(
    r"^[~≈<>+\-−–]?\s*(?:US)?[$€£¥]?\s*"
    # a unit glued on (two letters or more, or one after a decimal), then at most one short unit word
    r"(?:(?:\d[\d,]*\.\d+[A-Za-z]{1,5}|\d[\d,]*[A-Za-z]{2,5})\d?(?:\s+[A-Za-z]{1,4}\d?[a-z]?)?"
    r"|\d[\d,]*(?:\.\d+)?\s*%)\s*$"  # or a percentage; "2.5 Base Pay" is a numbered title
)
_WORDS = re.compile(r"[a-z0-9][a-z0-9'’\-]*|&")  # "FY2021-FY2025" one word, "Johnson & Johnson" three
_PHRASE_BREAK = re.compile(r"[,;:()]")  # "Cash, Cash Equivalents": a list, not a stutter


def right_of_middle(page: Page, line: Line) -> bool:
    """The line starts right of the page's middle and is not centred: a column heading or a cell,
    not a heading of the text (unless the page is set in two text columns)."""
    return line.x0 > page.width * 0.45 and not line.centred


def figure_callout(text: str) -> bool:
    """A number with its unit, set large: a key figure, not a title."""
    return bool(_FIGURE_CALLOUT.match(text.strip()))


def repeated_labels(text: str) -> bool:
    """Column headings read as one line: a phrase said twice in a row ("Percentage of Percentage of",
    "Net Revenue Percentage Net Revenue Percentage", "Common Common"). A title does not stutter;
    it may use a phrase twice apart ("sales units, number of new titles, and sales units forecast"),
    and "of the" twice is English."""
    for part in _PHRASE_BREAK.split(text.lower()):
        words = _WORDS.findall(part)
        for size in range(1, len(words) // 2 + 1):
            for start in range(len(words) - 2 * size + 1):
                phrase = words[start : start + size]
                if phrase == words[start + size : start + 2 * size] and not set(phrase) <= _SMALL:
                    return True
    return False


_NUMBERISH = re.compile(r"[\d$%()]")
_YEAR = re.compile(r"(?<![\d.,$€£¥])(?:19|20)\d{2}(?!\d|[.,]\d)")


def years_as_one_figure(text: str) -> str:
    """``text`` with each year (1900-2099) written as one figure, for counting a line's figures: a
    year is a word of a title ("Summary Compensation Table for Fiscal 2024, 2023, and 2022"), where
    an amount's digits are figures of a table row."""
    return _YEAR.sub("0", text)
# a heading numbered in brackets, "(6) Decision Policy ..." (the layout rules take them too); lettered
# ones, "(c) Lump Sum Distributions", are mostly the clauses of a plan or agreement filed as an exhibit
_PAREN_NUMBER = re.compile(r"^\(\d{1,2}\)\s*[A-Z]")
_SKIP = re.compile(r"continued|tableofcontents|^\(?inmillions|^page\d|^\d+$|^\(?unaudited\)?$")


T = TypeVar("T")


def _dominant(pages: list[Page], key: Callable[[Line], T], default: T) -> T:
    """The value of ``key`` that most of the document's text has (over up to ~40 sampled pages)."""
    counts: Counter[T] = Counter()
    for page in pages[:: max(1, len(pages) // 40)]:
        for line in page.lines:
            counts[key(line)] += len(line.text)
    return counts.most_common(1)[0][0] if counts else default


def body_color(pages: list[Page]) -> int:
    """The colour most of the document's text is set in."""
    return _dominant(pages, lambda line: line.color, 0)


def header_texts(pages: list[Page], numbers: PageNumbers | None = None) -> set[str]:
    """Texts (:attr:`Line.header_key`) that repeat on 3+ pages: running headers, footers (with
    their page numbers) and table labels; and those of the lines that print their page's number
    (:attr:`PageNumbers.running`: a footer set above the page's margin band, "2 NIKE, INC."; read
    from ``pages`` unless the build read them already)."""
    counts: Counter[str] = Counter()
    for page in pages:
        counts.update({line.header_key for line in page.lines if len(line.text) < 120})
    running = (numbers or page_numbers(pages)).running
    return {text for text, n in counts.items() if n >= 3} | {line.header_key for line in running}


def body_size(pages: list[Page]) -> float:
    """The type size most of the document's text is set in (0 when it has none)."""
    return _dominant(pages, lambda line: round(line.size, 1), 0.0)


def text_edge(page: Page) -> float:
    """Where the page's text starts on the left (its leftmost line)."""
    return min((line.x0 for line in page.lines), default=0.0)


# Set this much smaller than the body text, an emphasised line is a table's column heading or a note,
# not a heading: headings are set at the body's size or larger.
_SMALLER = 0.9


@dataclass(frozen=True, slots=True)
class SubheadingRules:
    """What counts as a sub-heading in one document: its running headers, its body colour and size."""

    headers: frozenset[str]
    body: int
    size: float = 0.0

    @classmethod
    def for_pages(cls, pages: list[Page], numbers: PageNumbers | None = None) -> SubheadingRules:
        return cls(frozenset(header_texts(pages, numbers)), body_color(pages), body_size(pages))

    def accepts(self, line: Line) -> bool:
        return is_subheading(line, self.headers, self.body)

    def column_head(self, page: Page, line: Line, edge: float | None = None) -> bool:
        """Set smaller than the body text, indented from the page's text edge, and not a title centred
        on its own: a table's column heading ("Gross Amount of    to Master Netting Agreements",
        "Stores"), not a heading. (Small headings at the text edge exist: Walmart sets its risk-factor
        headings below its body size; so do centred ones: "AUDIT REPORT".) ``edge``: the page's
        :func:`text_edge`, when the caller has it already."""
        edge = text_edge(page) if edge is None else edge
        small = line.size < _SMALLER * self.size and line.x0 > edge + 0.1 * page.width
        return small and (not line.centred or line.wide_gaps > 0)


def is_subheading(line: Line, headers: frozenset[str] | set[str], body: int = 0) -> bool:
    text = line.text
    accent = line.color not in (body, -1) and len(text) < 100  # a heading set in a colour of its own
    if not (line.bold or (line.caps and len(text) > 8) or accent):
        return False
    if not 3 <= len(text) <= 160:
        return False
    first = text[0]
    numbered = _PAREN_NUMBER.match(text)
    if not (first.isupper() or first.isdigit() or first in "•●▪" or numbered):
        return False
    if first in "•●▪" and not (line.bold and text[1:].lstrip()[:1].isupper()):
        return False  # a list item: a bulleted heading is set bold and capitalised
    if not line.bold and not line.caps and _colour_only_sentence(text):
        return False
    letters = sum(c.isalpha() for c in text)
    figures = _NUMBERISH.findall(text[numbered.end() - 1 :] if numbered else text)  # the numbering aside
    if letters < 3 or len(figures) > max(2, len(text) * 0.1):
        return False
    c = line.compact
    if line.header_key in headers or _SKIP.search(c):
        return False
    if _column_labels(text) or closes_an_unopened_bracket(text):
        return False
    return not is_table_header(line)


def _colour_only_sentence(text: str) -> bool:
    """A line that stands out by its colour alone and reads as a sentence of running text (six words or
    more, four of them lower-case, ending in a full stop or semicolon) is a one-line paragraph, not a
    heading: an exhibit printed in black inside a grey filing ("The aforesaid Board of Directors must have
    at least three independent directors."). A caption set bold (a risk factor's) is not judged here."""
    if not text.endswith((".", ";")):
        return False
    words = text.split()
    lower = sum(1 for w in words if w[:1].islower())
    return len(words) >= 6 and lower >= 4


_LIST_MARKER = re.compile(r"^\s*(?:\d{1,3}|[A-Za-z]|[ivxlcIVXLC]{1,6})\)\s")


def closes_an_unopened_bracket(text: str) -> bool:
    """The line closes a bracket it did not open ("Legislation)"): the end of a line wrapped from the
    line above, never a title of its own. A leading list marker ("1) Overview", "b) Status") is
    not such a bracket."""
    depth = 0
    for char in _LIST_MARKER.sub("", text, count=1):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0:
            return True
    return False


def _column_labels(text: str) -> bool:
    """Column headings said twice in a row, or a key figure. (A line that ends on "of" or "and" may be
    the first line of a wrapped heading: :func:`subheading_drafts` judges the joined title.)"""
    return repeated_labels(text) or figure_callout(text)


def is_table_header(line: Line) -> bool:
    """Column headings of a table: cells spread over the line with wide gaps between them
    ("Three months ended  Year ended December 31,": three cells or more), or a period/unit
    caption ("For the year ended", "As of", "(in millions)"). A title with the company name
    set apart on the same line is two cells, and stays a heading."""
    return line.cells >= 3 or bool(COLUMN_HEAD.search(line.text))


_TERMINAL = re.compile(r"[.,;:]$")
# A title does not end on these ("Percentage of", "Productivity and": a column heading wrapped over two
# lines); "A" is left out: "SG&A", "Series A", "Appendix A" end titles.
_DANGLING = re.compile(r"\b(?:and|or|of|the|to|for|in|on|with|by|as)$", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z][A-Za-z'’\-]*")
_SMALL = {"and", "or", "of", "the", "for", "to", "in", "on", "with", "by", "a", "an", "from", "at", "as"}


def is_plain_subheading(page: Page, index: int, headers: frozenset[str] | set[str]) -> bool:
    """A sub-heading set in body type: underlined, or a short title-case line standing alone
    (the line before it ends a paragraph, the line after it starts body text). Used only in
    long sections that have no emphasised sub-headings."""
    lines = page.lines
    line = lines[index]
    text = line.text
    if not 4 <= len(text) <= 120 or not text[0].isupper():
        return False
    if sum(c.isalpha() for c in text) < 4 or len(_NUMBERISH.findall(text)) > 2:
        return False
    c = line.compact
    if line.header_key in headers or _SKIP.search(c) or _column_labels(text):
        return False
    if line.underlined:
        # the last line of a paragraph over a rule ("States federal income tax purposes.") is no heading
        return index == 0 or _ends_paragraph(lines, index - 1, rows=True)
    words = _WORD.findall(text)
    if len(text) > 80 or _TERMINAL.search(text) or not 2 <= len(words) <= 12:
        return False
    if any(not w[0].isupper() and w.lower() not in _SMALL for w in words):
        return False  # title case: every word capitalised but the small ones
    nxt = lines[index + 1] if index + 1 < len(lines) else None
    if nxt is None or len(nxt.text) < 60 or nxt.x0 < line.x0 - 2.0:
        return False
    if index > 0:
        prev = lines[index - 1]
        if not _ends_paragraph(lines, index - 1) or len(prev.text) >= 60 and not prev.text.endswith("."):
            return False
    return True


def _ends_paragraph(lines: list[Line], index: int, rows: bool = False) -> bool:
    """Line ``index`` ends a paragraph: it ends a sentence (or a bracket, a quotation, a colon), or
    stops well short of the page's right text edge; with ``rows``, also when it is a row of a table
    (cells, or a last figure: an underlined heading under a table)."""
    prev = lines[index]
    if rows and (prev.cells >= 2 or prev.text[-1:].isdigit() or prev.text.endswith(("—", "-", "%"))):
        return True
    if prev.text.endswith((".", ":", ")", "”", '"')):
        return True
    right = max(other.x1 for other in lines)  # the page's right text edge, only when it decides
    return prev.x1 < right - 0.25 * (right - prev.x0)


def _ends_the_paragraph_above(lines: list[Line], index: int) -> bool:
    """Line ``index``, emphasised only by capitals or colour, is the last line of the paragraph above:
    that line is set as it is (colour, size, left edge, not bold) and runs on without ending a sentence
    ("... after consultation with other governmental agencies" over "R.O.C. FSC)."; an exhibit printed
    in black where the filing's body is grey, "... divided into 28,050,000,000 shares, at ten" over "New
    Taiwan Dollars each, and may be paid-up in installments."). A table row above ends no paragraph.
    The line above may start further right, as the first line of a paragraph or a list item set with a
    first-line indent does, its next line coming back to the left edge ("(x) to evidence the succession
    of another Person to the" over "Issuer or the Guarantor, respectively;")."""
    line = lines[index]
    if line.bold or index == 0:
        return False
    prev = lines[index - 1]
    indent = prev.x0 - line.x0
    same = prev.color == line.color and abs(prev.size - line.size) < 0.6 and -2.0 <= indent <= 4 * line.size
    return same and not prev.bold and not _ends_paragraph(lines, index - 1, rows=True)


def opens_paragraph(lines: list[Line], index: int) -> bool:
    """Line ``index`` is the first line of a paragraph, not a heading: not bold, not in capitals, it runs
    on to its text column's right edge and the paragraph goes on under it, set as it is (same size and
    colour, not bold, close below, at its left edge or out from a first-line indent) for two more lines
    or to the end of a sentence. A wrapped heading's second line ends no sentence. (Mandarine's outlook
    paragraphs are printed in a grey of their own, which made each first line a heading.)"""
    line = lines[index]
    if line.bold or line.caps:
        return False
    run = [line]
    for nxt in lines[index + 1 : index + 3]:
        prev = run[-1]
        if nxt.bold or nxt.color != line.color or abs(nxt.size - line.size) >= 0.6:
            break
        if not -2.0 <= prev.x0 - nxt.x0 <= 4 * line.size or nxt.y0 - prev.y1 > line.size:
            break
        run.append(nxt)
        if nxt.text.rstrip().endswith((".", "!", "?", ";")):
            break
    if len(run) < 2 or len(run) == 2 and not run[1].text.rstrip().endswith((".", "!", "?", ";")):
        return False
    # the right edge of its text column: of the lines that start left of its end
    right = max(other.x1 for other in lines if other.x0 < line.x1)
    return line.x1 >= right - 0.25 * (right - line.x0)


# A unit caption ("million yen", "(in thousands)", "US$ millions", "million U.S. dollars/Euros") set
# apart at the right end of a heading's line: it captions the table's figures, not the heading.
# The unit word is in lower case: "Beyond a Billion" is a title's own words.
_UNIT_CELL = re.compile(
    r"\s+\(?(?:[Ii]n\s+)?(?:(?:[A-Z]{0,3}\$|€|¥)\s*)?(?:millions?|billions?|thousands?)"
    r"(?:\s+(?:of\s+)?[A-Za-z.$€¥/ ]{1,30})?\)?$"
)


def heading_text(line: Line) -> str:
    """The text of a heading's line without a unit caption set apart in a cell at its right end
    ("(1) Consolidated sales information        million yen"); a line of one cell is left whole."""
    if line.cells < 2:
        return line.text
    text = _UNIT_CELL.sub("", line.text)
    return text if len(text) >= 3 else line.text


def set_as_rows_below(lines: list[Line], index: int) -> bool:
    """Line ``index`` is set as the table rows it heads: a table row within the next two lines, and
    the line not centred, no larger than that row, at its left edge or out to the left of it by up
    to three type sizes (group labels stand out from the indented rows they head)."""
    line = lines[index]
    row = next((nxt for nxt in lines[index + 1 : index + 3] if is_table_row(nxt)), None)
    return (
        row is not None
        and not line.centred
        and line.size <= row.size + 0.5
        and row.x0 - 3 * line.size <= line.x0 <= row.x0 + 2.0
    )


def labels_rows(lines: list[Line], index: int) -> bool:
    """Line ``index`` labels a group of rows inside a table ("Operating Income" between the revenue
    rows and its own in a segment table): a table row stands close above it and the line is set as
    the rows below it are (:func:`set_as_rows_below`). A heading over a table stands after prose or
    space, not right under a row."""
    if index == 0:
        return False
    line, prev = lines[index], lines[index - 1]
    return is_table_row(prev) and line.y0 - prev.y1 <= line.size and set_as_rows_below(lines, index)


def subheading_drafts(
    pages: list[Page],
    first: int,
    last: int,
    after_y: float,
    rank: int,
    rules: SubheadingRules,
    before_y: float = float("inf"),
    per_page: int = 2,
    plain: bool = False,
    title: str = "",
    prominent: bool = False,
) -> list[Draft]:
    """Sub-headings on pages ``first..last``: on ``first`` only below ``after_y`` and below the
    rest of the section's own ``title`` when it wraps onto the lines after ``after_y``, on ``last``
    only above ``before_y``. A heading directly followed by another (a heading over a
    sub-heading) counts once; at most ``per_page`` per page (the first ones and the last,
    which titles the text running on to the next pages). With ``prominent``, a page keeps more
    than ``per_page`` of them when they are set as the section's most prominent sub-headings are
    (:func:`_as_prominent`; an Item's sub-headings). ``plain`` looks for headings set in body type
    (:func:`is_plain_subheading`) instead of emphasised ones."""
    by_page: list[tuple[Page, list[Draft], dict[int, _Candidate]]] = []
    # every emphasised line (or bold one) in reading order, with the sub-heading it starts (None: none)
    emphasised: list[tuple[Draft | None, Line]] = []
    for number in range(first, last + 1):
        page = pages[number - 1]
        found: list[Draft] = []
        candidates: dict[int, _Candidate] = {}  # id(draft) -> its first line, and its last line's index
        previous_was_heading = False
        rest_of_title = compact(title) if number == first else ""
        # a page set in two text columns has headings in its right column; elsewhere a line that starts
        # right of the middle is a column heading or a cell
        right_prose = [line for line in page.lines if right_of_middle(page, line) and _prose_line(line.text)]
        two_columns = len(right_prose) >= 5
        edge = text_edge(page)
        for index, line in enumerate(page.lines):
            if number == first and line.ry <= after_y:
                continue
            if rest_of_title:
                # the title's last line(s) ("Dividend Fund" under "Product name: ... Strategic"),
                # read from the bottom of the title up
                if line.compact and rest_of_title.endswith(line.compact) and rest_of_title != line.compact:
                    rest_of_title = rest_of_title[: -len(line.compact)]
                    continue
                rest_of_title = ""
            if number == last and line.ry >= before_y:
                break
            # on a page set in two text columns neither test applies: its right column has headings too
            right_side = not two_columns and (
                right_of_middle(page, line) or rules.column_head(page, line, edge)
            )
            if plain:
                heading = is_plain_subheading(page, index, rules.headers)
            else:
                heading = (
                    rules.accepts(line)
                    and not _ends_the_paragraph_above(page.lines, index)
                    and not labels_rows(page.lines, index)
                    and not opens_paragraph(page.lines, index)
                )
            if heading and not right_side:
                if previous_was_heading and found:
                    found[-1].title = f"{found[-1].title} — {heading_text(line)}"[:120]
                    candidates[id(found[-1])].last = index
                else:
                    title = heading_text(line)
                    found.append(
                        Draft(
                            "heading",
                            slug(title),
                            title[:120],
                            number,
                            line.ry,
                            at_top(page, line),
                            rank,
                        )
                    )
                    candidates[id(found[-1])] = _Candidate(line, index)
                    emphasised.append((found[-1], line))
                previous_was_heading = True
            else:
                previous_was_heading = False
                bold = line.bold and line.header_key not in rules.headers
                if not plain and (bold or rules.accepts(line)):
                    emphasised.append((None, line))  # Pfizer's bold "Our 2021 Performance"
        # a heading wrapped over lines is judged whole: "NEW DRUG CANDIDATES IN — LATE-STAGE DEVELOPMENT"
        # stays, a lone "Percentage of" (the top line of a column heading) goes
        found = [d for d in found if not _DANGLING.search(d.title)]
        by_page.append((page, found, candidates))
    lines = [candidates[id(d)].line for _, found, candidates in by_page for d in found]
    top = _top_tier(lines, rules) if prominent else None
    out: list[Draft] = []
    for page, found, candidates in by_page:
        if len(found) > per_page:
            ends = {id(d) for d in found[: per_page - 1] + found[-1:]}
            # the page's sub-headings all set alike are siblings (NVIDIA's 10-Q p. 33: three in bold
            # 9 pt, under the Item's 9.9 pt green ones): none is a lower level than those kept
            page_lines = [candidates[id(d)].line for d in found]
            tier = _top_tier(page_lines, rules) if top is not None else None
            alike = tier is not None and all(
                line.size >= tier[0] and _emphasis(line, rules) == tier[1] for line in page_lines
            )
            found = [
                d for d in found
                if id(d) in ends or _as_prominent(page, d, candidates[id(d)], top, rules)
                or (alike and _as_prominent(page, d, candidates[id(d)], tier, rules))
            ]  # fmt: skip
        out.extend(found)
    if top is not None:
        # a sub-heading set smaller than the section's largest ones, after one of those, is its child
        # (NVIDIA's 10-Q: "Liquidity", 9 pt, under "Liquidity and Capital Resources", 9.9 pt), unless
        # that one was dropped (a page keeps two) or is none (a bold or emphasised line of that size not
        # taken for a sub-heading): then its parent is not in the tree (Pfizer's "Cost of Sales" is under
        # "Costs and Expenses", not under the last large heading kept before it); nor when it stands out
        # in a way the larger one does not (bold under a plain line, capitals under title case, a colour
        # under black: MGM's bold "Exhibit Number" is no part of the blue link above it)
        kept = {id(d) for d in out}
        parent: Line | None = None
        for d, line in emphasised:
            if line.size >= top[0]:
                parent = line if d is not None and id(d) in kept else None
            elif d is not None and id(d) in kept and parent is not None:
                d.rank += _no_more_emphasis(line, parent, rules)
    return out


@dataclass(slots=True)
class _Candidate:
    """A sub-heading's first line, and the index of its last line on the page (a heading directly
    over a sub-heading is one)."""

    line: Line
    last: int


def _emphasis(line: Line, rules: SubheadingRules) -> tuple[bool, bool, bool]:
    """How a heading stands out besides its size: capitals, a colour of its own, bold (in that order)."""
    return line.caps, line.color not in (rules.body, -1), line.bold


def _no_more_emphasis(line: Line, above: Line, rules: SubheadingRules) -> bool:
    """``line`` stands out in no way ``above`` does not (:func:`_emphasis`, each of its three)."""
    mine, theirs = _emphasis(line, rules), _emphasis(above, rules)
    return all(a <= b for a, b in zip(mine, theirs, strict=True))


def _top_tier(lines: list[Line], rules: SubheadingRules) -> tuple[float, tuple[bool, bool, bool]] | None:
    """The section's most prominent sub-heading style: the largest type size among ``lines`` (half a
    point either way is one size), and the strongest emphasis set at that size."""
    if not lines:
        return None
    size = max(line.size for line in lines) - 0.5
    return size, max(_emphasis(line, rules) for line in lines if line.size >= size)


def _as_prominent(
    page: Page, draft: Draft, candidate: _Candidate, top: tuple[float, tuple[bool, bool, bool]] | None,
    rules: SubheadingRules,
) -> bool:
    """A sub-heading set as the section's most prominent ones are (:func:`_top_tier`: TSMC's Item 4
    opens with four on one page, "Our History and Structure", "Our Principal Office", ...), at the
    page's text edge, a title rather than a sentence (a risk factor's caption, a clause), and followed
    by text, not by a table's rows (a table's caption)."""
    line = candidate.line
    if top is None or line.size < top[0] or _emphasis(line, rules) != top[1]:
        return False
    if abs(line.x0 - text_edge(page)) > 2.0:
        return False
    title = draft.title
    if len(title) > _TITLE_CHARS or title.endswith((".", ",", ";")) or title[0] in "•●▪":
        return False
    lines = page.lines
    nxt = lines[candidate.last + 1] if candidate.last + 1 < len(lines) else None
    return nxt is None or not is_table_row(nxt)


_TITLE_CHARS = 70  # a sub-heading longer than this is a sentence: a risk factor's caption


def _prose_line(text: str) -> bool:
    """A line of running text: long, with lower-case words as sentences have (not a row of figures,
    not column headings such as "(In Millions) (In Millions)" or "1 Year 1-3 Years")."""
    lower = sum(1 for w in text.split() if w.isalpha() and w.islower() and len(w) >= 3)
    return len(text) >= 40 and lower >= 5


def window_drafts(first: int, last: int, size: int, rank: int) -> list[Draft]:
    """Fixed page windows of at most ``size`` pages, as equal as possible."""
    total = last - first + 1
    count = -(-total // size)
    base, extra = divmod(total, count)
    out: list[Draft] = []
    start = first
    for i in range(count):
        n = base + (1 if i < extra else 0)
        end = start + n - 1
        out.append(
            Draft(
                "window", f"pages_{start}_{end}", f"Pages {start}–{end}", start, 0.0, True, rank, end_page=end
            )
        )
        start = end + 1
    return out


def _outline_inside(node: Draft, outline: list[Draft], rank: int) -> list[Draft]:
    """Outline entries strictly inside ``node``'s span, the first on each page."""
    out: list[Draft] = []
    for d in outline:
        if (d.start_page, d.y) <= (node.start_page, node.y):
            continue
        if d.start_page > node.end_page or (d.start_page == node.end_page and d.y >= node.end_y):
            continue
        if out and out[-1].start_page == d.start_page:
            continue
        out.append(Draft("heading", d.key, d.title, d.start_page, d.y, d.at_top, rank))
    return out


def split_long(
    node: Draft,
    pages: list[Page],
    max_pages: int,
    rules: SubheadingRules,
    outline: list[Draft] | None = None,
    use_subheadings: bool = True,
    underline: Callable[[int, int], None] | None = None,
) -> None:
    """Recursively give every leaf longer than ``max_pages`` children that cover it.

    Sub-headings come from the outline, then emphasised lines, then (for a section with
    neither) headings set in body type: underlined lines, read on demand through
    ``underline(first, last)``, or short title-case lines standing alone. Page windows last.
    """
    for child in node.children:
        split_long(child, pages, max_pages, rules, outline, use_subheadings, underline)
    if node.children or node.page_count <= max_pages:
        return
    subs: list[Draft] = []
    if use_subheadings and node.kind != "window":
        if outline:
            subs = _inside(node, _outline_inside(node, outline, node.rank + 1))
        if not subs:
            subs = _below_title(
                node,
                subheading_drafts(
                    pages,
                    node.start_page,
                    node.end_page,
                    node.y,
                    node.rank + 1,
                    rules,
                    node.end_y,
                    title=node.title,
                    prominent=node.kind == "item",
                ),
            )
        if not subs:
            subs = _plain_inside(node, pages, rules, underline)
    if not subs:
        node.children = window_drafts(node.start_page, node.end_page, max_pages, node.rank + 1)
        return
    attach(node, _nest_lower(subs))
    for parent in node.children:
        if parent.children:
            attach(parent, parent.children)
    for child in [d for d in node.walk() if d is not node and not d.children]:
        if child.page_count <= max_pages:
            continue
        plain = _plain_inside(child, pages, rules, underline) if use_subheadings else []
        if plain:
            attach(child, plain)
            for grandchild in child.children:
                if grandchild.page_count > max_pages:
                    grandchild.children = window_drafts(
                        grandchild.start_page, grandchild.end_page, max_pages, grandchild.rank + 1
                    )
        else:
            child.children = window_drafts(child.start_page, child.end_page, max_pages, child.rank + 1)


def _nest_lower(subs: list[Draft]) -> list[Draft]:
    """``subs`` (reading order) with each one ranked below the one before it (a smaller sub-heading after
    one of the section's largest, :func:`subheading_drafts`) made a child of that one: the top level."""
    out: list[Draft] = []
    for d in subs:
        if out and d.rank > out[-1].rank:
            out[-1].children.append(d)
        else:
            out.append(d)
    return out


def _inside(node: Draft, subs: list[Draft]) -> list[Draft]:
    return [d for d in subs if d.start_page > node.start_page or not d.at_top]


def _below_title(node: Draft, subs: list[Draft]) -> list[Draft]:
    """:func:`_inside`, and also a sub-heading near the top of the section's first page when the
    section's own title was found above it on that page (NVIDIA's "Forward-Looking Statements" right
    under "ITEM 2. MANAGEMENT'S DISCUSSION ..."): it starts below that title, not at the page's top."""
    out = []
    for d in subs:
        if d.start_page == node.start_page and d.at_top:
            if node.y <= 0.0 or compact(d.title) in compact(node.title):
                continue
            d.at_top = False
        out.append(d)
    return out


def _plain_inside(
    node: Draft, pages: list[Page], rules: SubheadingRules, underline: Callable[[int, int], None] | None
) -> list[Draft]:
    if underline is not None:
        underline(node.start_page, node.end_page)
    found = subheading_drafts(
        pages, node.start_page, node.end_page, node.y, node.rank + 1, rules, node.end_y, plain=True,
        title=node.title,  # the rest of a wrapped title is no heading in body type either
    )  # fmt: skip
    return _inside(node, found)


def attach(node: Draft, subs: list[Draft]) -> None:
    """Make ``subs`` (reading order, inside ``node``) its children, with an opening child
    when the first one starts on a later page."""
    for i, d in enumerate(subs):
        nxt = subs[i + 1] if i + 1 < len(subs) else None
        if nxt is None:
            d.end_page, d.end_y = node.end_page, node.end_y
        elif nxt.at_top:
            d.end_page = max(d.start_page, nxt.start_page - 1)
        else:
            d.end_page, d.end_y = nxt.start_page, nxt.y
    intro = intro_for(node, subs[0])
    if intro is not None:
        subs = [intro, *subs]
    node.children = subs
