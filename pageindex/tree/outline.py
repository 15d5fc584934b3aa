"""The PDF's embedded outline (bookmarks), used when it is real.

Only some filings carry one, and some are junk: file names, a single entry, repeated
"...and Subsidiaries" noise. ``real_outline`` keeps an outline only when it looks like a
table of contents of this document.
"""

from __future__ import annotations

import re
from collections import Counter

from pageindex.tree.draft import Draft
from pageindex.tree.headings import (
    _ITEM,
    _NOTE,
    _NOTES_TITLE,
    _PART,
    at_top,
    item_key,
    part_rank,
    statement_key,
)
from pageindex.tree.pdf import Page, compact
from pageindex.tree.split import opens_paragraph, slug

_ESCAPED = re.compile(r"\\([^\w\s])")
_JUNK = re.compile(r"\.(pdf|docx?|htm)\b|_final|press release -|untitled", re.IGNORECASE)


def real_outline(toc: list[list], page_count: int) -> list[tuple[int, str, int]]:
    """The outline as ``(level, title, page)`` rows, or ``[]`` when it is not a usable one."""
    rows = []
    for row in toc:
        level, title, page = int(row[0]), str(row[1]).strip(), int(row[2])
        if not title or not 1 <= page <= page_count:
            continue
        # a backslash before punctuation is an escape the PDF's producer left in ("Funds \- Global")
        rows.append((level, _ESCAPED.sub(r"\1", re.sub(r"\s+", " ", title)), page))
    if len(rows) < 6:
        return []
    if sum(1 for _, t, _ in rows if _JUNK.search(t)) > len(rows) * 0.2:
        return []
    if len({p for _, _, p in rows}) < 4:
        return []
    titles = [compact(t) for _, t, _ in rows]
    if len(set(titles)) < len(titles) * 0.6:  # the same entry over and over
        return []
    backwards = sum(1 for a, b in zip(rows, rows[1:], strict=False) if b[2] < a[2])
    if backwards > len(rows) * 0.1:
        return []
    kept: list[tuple[int, str, int]] = []
    for row in rows:  # drop stray entries (exhibit file names pointing at page 1, ...)
        if _JUNK.search(row[1]) or (kept and row[2] < kept[-1][2]):
            continue
        kept.append(row)
    return kept


def _classify(title: str) -> tuple[str, str]:
    """(kind, key) for an outline title: Parts, Items, statements, notes keep SEC-style ids."""
    text = title.strip()
    m = _PART.match(text)
    if m and len(text) < 60:
        return "part", f"part_{part_rank(m)}"
    m = _ITEM.match(text)
    if m:
        return "item", item_key(m)
    m = _NOTE.match(text)
    if m:
        return "note", f"note_{int(m.group(1))}"
    c = compact(text)
    if "cover" in c and len(c) < 30:
        return "cover", "cover"
    if _NOTES_TITLE.match(c):
        return "notes", "notes"
    key = statement_key(c)
    if key:
        return "statement", key
    return "outline", slug(text)


def _begins(text: str, title: str) -> bool:
    """``text`` (a compacted line) is the title, or its first line: one begins with the other."""
    return (len(text) >= 4 and title.startswith(text[: len(title)])) or text.startswith(title)


def _title_line(page: Page, want: str) -> int | None:
    """Index of the line of ``page`` where a bookmark's title (``want``: compacted, its first 30
    characters) is printed, or None."""
    if len(want) < 4:
        return None
    for index, line in enumerate(page.lines):
        if line.margin and line.y0 > page.height / 2:
            continue  # a running footer repeats the title ("... DIVIDEND FUND 82"): not where it is
        c = line.compact
        # the title, or its first line; or either after a short label ("Product name: JPMorgan
        # Investment Funds - Europe Strategic", the title's first line after "Product name:")
        label = c.find(":", 0, 21)
        after = c[label + 1 :] if label > 0 else ""
        if any(_begins(t, want) for t in (c, after) if t):
            return index
    return None


_SENTENCE_END = re.compile(r"(?:[.!?;…]|\.\.\.)[\s»”\"')]*$")


def _sentence(title: str) -> bool:
    """A bookmark title that is a sentence of running text, not a heading: worded as prose (five or more
    lower-case words) and either ending as a sentence does or longer than any heading (an outline
    generated from a word processor's paragraphs cuts them at 254 characters, "...")."""
    lower = sum(1 for w in title.split() if w.isalpha() and w.islower() and len(w) >= 3)
    return lower >= 5 and (len(title) > 120 or bool(_SENTENCE_END.search(title)))


def without_body_sentences(rows: list[tuple[int, str, int]], pages: list[Page]) -> list[tuple[int, str, int]]:
    """The outline without bookmarks that point at a paragraph rather than a heading: the title is a
    sentence (:func:`_sentence`) and its line on the page opens a paragraph
    (:func:`pageindex.tree.split.opens_paragraph`). Mandarine's report bookmarks eleven paragraphs of
    its economic commentary, NVIDIA's proxy one sentence of its peer-group discussion; a risk factor's
    caption (Verizon's bookmarks) is set bold and stays."""
    kept = []
    for row in rows:
        level, title, number = row
        if _sentence(title):
            page = pages[number - 1]
            index = _title_line(page, compact(title)[:30])
            if index is not None and opens_paragraph(page.lines, index):
                continue
        kept.append(row)
    return kept


def outline_drafts(rows: list[tuple[int, str, int]], pages: list[Page]) -> list[Draft]:
    """Drafts for outline rows, placed at the title line when it can be found on the page.

    Items and Parts take the outline level most of their kind have, so one misplaced entry
    (an Item filed under a note) does not swallow the rest of the document.
    """
    kinds = [_classify(title) for _, title, _ in rows]
    usual: dict[str, int] = {}
    for kind in ("part", "item"):
        levels = [row[0] for row, (k, _) in zip(rows, kinds, strict=True) if k == kind]
        if levels:
            usual[kind] = Counter(levels).most_common(1)[0][0]
    out: list[Draft] = []
    for (level, title, number), (kind, key) in zip(rows, kinds, strict=True):
        page = pages[number - 1]
        want = compact(title)[:30]
        y, top = 0.0, True
        index = _title_line(page, want)
        if index is not None:
            line = page.lines[index]
            y, top = line.ry, at_top(page, line)
        if out and out[-1].start_page == number and y <= out[-1].y:
            y, top = out[-1].y + 0.01, False  # outline order is authoritative within a page
        rank = usual.get(kind, level)
        out.append(Draft(kind, key, title[:120], number, y, top, rank))
    return out
