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
from pageindex.tree.split import slug

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
        if len(want) >= 4:
            for line in page.lines:
                if line.margin and line.y0 > page.height / 2:
                    continue  # a running footer repeats the title ("... DIVIDEND FUND 82"): not where it is
                c = line.compact
                # the title, or its first line; or either after a short label ("Product name: JPMorgan
                # Investment Funds - Europe Strategic", the title's first line after "Product name:")
                label = c.find(":", 0, 21)
                after = c[label + 1 :] if label > 0 else ""
                if any(_begins(t, want) for t in (c, after) if t):
                    y, top = line.ry, at_top(page, line)
                    break
        if out and out[-1].start_page == number and y <= out[-1].y:
            y, top = out[-1].y + 0.01, False  # outline order is authoritative within a page
        rank = usual.get(kind, level)
        out.append(Draft(kind, key, title[:120], number, y, top, rank))
    return out
