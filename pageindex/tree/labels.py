"""Printed page numbers: what the filing prints on each page, for citations like "page 45".

No FinanceBench filing carries PDF page labels. The printed number is the number of a running header
or footer, whatever words stand beside it: a line among the last three read, the three lowest (a page
in two text columns prints it under the left one, read before the right one) or the first three of its
page ("16", "Page 16", "- 16 -", "F-16", "ii", "16/34", "JPMORGAN INVESTMENT FUNDS 16", "16 NIKE, INC.").
Its *shape* is the line with the number taken out; the number is the page's when a page at most
``_NEAR`` away has a line of that shape at the same place (foot or head) whose number rises with the
page, by as many as the pages between or fewer. So restarts (an exhibit's "1"), roman front matter and
footers that alternate between odd and even pages need no rule of their own, and what does not rise
with the page is never read: a year (four digits), a date, a table's figures, a lone figure ending a
page's text. The offset to the PDF page changes inside a document and restarts in exhibits, so the
result is a per-page map, never a constant offset.

A page with no neighbour in its shape (a one-page exhibit or appendix) still has its number when its foot
has a line that is a folio by its own look and nothing else: a letter-prefixed number ("A-1", "C-2",
"S-1"), a number between dashes ("-1-", "- 1 -") or a roman numeral ("i"). A bare number alone is not
enough there: a figure ending a page, a stray "8" over an auditor's consent, the previous page's number an
EDGAR render carries over look the same.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from pageindex.tree.pdf import Line, Page, compact

# a number standing as a word: digits (after a letter prefix, "F-16"), or lower-case roman numerals
# (upper-case ones are more often "PART II" pieces than folios); figures of a table ("1,577", "1.5",
# "(12)", "12%", "$12"), a date's day ("May 5, 2023") and pieces of a word or a code ("10-K") are none
_NUMBER = re.compile(
    r"(?<![\w.,$€£(/])(?<!\w-)(?:(?P<prefix>[A-Z]{1,2}\s?-\s?)?(?P<digits>\d{1,3})|(?P<roman>[ivxlc]{1,9}))"
    r"(?![\w%),]|[.-]\w)"
)
# "16/34", "16 of 34": the number and the page count beside it
_OF_COUNT = re.compile(r"^\s*(?:/|of\s)\s*(\d{1,4})(?!\w)", re.IGNORECASE)
# one word before the number, nothing after: a part of the document ("Exhibit 23", "Note 7", "Clause 49")
_PART = re.compile(r"^(?!page$)[^\W\d_]{2,}$", re.IGNORECASE)
_PLACES = 3  # the first, last and lowest lines of a page that may carry its number
# the shapes of a line that is a folio by its look alone: "A-1" ("a-#"), "-1-", "i"
_LONE_FOLIO = re.compile(r"^(?:[a-z]{1,2}-#|-#-|#r)$")
_NEAR = 3  # pages: how close another page printing the shape must be to confirm the number


def _roman(n: int) -> str:
    """``n`` (1-399) in lower-case roman numerals."""
    out = ""
    for numeral, value in zip(("c", "xc", "l", "xl", "x", "ix", "v", "iv", "i"),
                              (100, 90, 50, 40, 10, 9, 5, 4, 1), strict=True):
        count, n = divmod(n, value)
        out += numeral * count
    return out


_ROMAN_VALUES = {_roman(n): n for n in range(1, 400)}  # written the usual way: "iv", not "iiii"


def _candidates(line: Line, page_count: int) -> list[tuple[str, int, str]]:
    """(shape, value, label) of each number of ``line`` that may be its page's printed number: the
    shape is the line's text with the number taken out (with the page count beside it, only that)."""
    text = line.text.strip()
    out = []
    for m in _NUMBER.finditer(text):
        before, after = text[: m.start()], text[m.end():]
        if _PART.match(before.strip()) and after.strip() in ("", "."):
            continue
        if m["roman"]:
            if m["roman"] not in _ROMAN_VALUES:
                continue
            value, label, mark = _ROMAN_VALUES[m["roman"]], m["roman"], "#r"
        else:
            value, label = int(m["digits"]), re.sub(r"\s+", "", m.group())
            mark = compact(m["prefix"] or "") + "#"
        count = _OF_COUNT.match(after)
        if count and int(count[1]) == page_count and value <= page_count:
            out.append((mark + "/" + count[1], value, label))
        else:
            out.append((compact(before) + mark + compact(after), value, label))
    return out


def _places(page: Page) -> list[tuple[Line, str]]:
    """The lines of ``page`` that may carry its number, most likely first, with their place (its
    foot or its head): the last three read, the three lowest, then the first three (on a short page
    a line may be in both places)."""
    lines = page.lines
    bottom = sorted(lines, key=lambda line: line.y1)[-_PLACES:][::-1]
    out: list[tuple[Line, str]] = []
    for place, some in (("foot", lines[-_PLACES:][::-1] + bottom), ("head", lines[:_PLACES])):
        out += [(line, place) for line in some if all(line is not seen or p != place for seen, p in out)]
    return out


@dataclass(frozen=True)
class PageNumbers:
    """What a document's pages print as their numbers, read once per build (:func:`page_numbers`).

    ``labels``: ``{"<pdf page>": "<printed number>"}`` for every page that prints one. ``running``: the
    lines that print their page's number in a shape three or more pages print it in (a running header
    or footer with its number, wherever on the page it stands), never a heading (NIKE's even pages set
    "2 NIKE, INC." halfway down the page, above the margin band where :attr:`Line.header_key` knows a
    footer). Two pages are not enough: "Markets in Region 2" and "... 4" heading pages 4 and 6 rise
    with the page as a footer does."""

    labels: dict[str, str]
    running: list[Line]


def page_numbers(pages: list[Page]) -> PageNumbers:
    """The printed numbers of ``pages`` and the lines that print them (:class:`PageNumbers`)."""
    numbered = _numbered_lines(pages)
    pages_of: dict[tuple[str, str], set[int]] = defaultdict(set)
    for number, _, _, key in numbered:
        pages_of[key].add(number)
    return PageNumbers(
        labels={str(number): label for number, _, label, _ in numbered},
        running=[line for _, line, _, key in numbered if len(pages_of[key]) >= 3],
    )


def page_labels(pages: list[Page]) -> dict[str, str]:
    """``{"<pdf page>": "<printed number>"}`` for every page that prints one."""
    return page_numbers(pages).labels


def _numbered_lines(pages: list[Page]) -> list[tuple[int, Line, str, tuple[str, str]]]:
    """(pdf page, the line printing its number, the number, the line's place and shape) of every page
    that prints one."""
    # (place, shape) -> page -> the numbers it prints so; and each page's candidates, likeliest first
    seen: dict[tuple[str, str], dict[int, set[int]]] = defaultdict(lambda: defaultdict(set))
    per_page: list[tuple[int, list[tuple[tuple[str, str], int, str, Line]]]] = []
    for page in pages:
        found = []
        for line, place in _places(page):
            for shape, value, label in _candidates(line, len(pages)):
                seen[place, shape][page.number].add(value)
                found.append(((place, shape), value, label, line))
        per_page.append((page.number, found))
    out: list[tuple[int, Line, str, tuple[str, str]]] = []
    for number, found in per_page:
        hits = ((line, label, key) for key, value, label, line in found if _rises(seen[key], number, value))
        # else a foot line that is a folio by its look alone
        lone = ((ln, label, (place, shape)) for (place, shape), _, label, ln in found
                if place == "foot" and _LONE_FOLIO.match(shape))  # fmt: skip
        hit = next(hits, None) or next(lone, None)
        if hit is not None:
            out.append((number, *hit))
    return out


def _rises(shape: dict[int, set[int]], page: int, value: int) -> bool:
    """A page within ``_NEAR`` of ``page`` prints a number of the same shape that rises with the
    page from ``value``: by as many as the pages between (a constant offset), or fewer (an EDGAR
    render spreads a printed page over two PDF pages)."""
    return any(
        0 < (v - value) / (other - page) <= 1
        for other in range(page - _NEAR, page + _NEAR + 1)
        if other != page and other in shape
        for v in shape[other]
    )
