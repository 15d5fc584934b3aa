"""The PDF's embedded outline (bookmarks), used when it is real.

Only some filings carry one, and some are junk: file names, a single entry, repeated
"...and Subsidiaries" noise. ``real_outline`` keeps an outline only when it looks like a
table of contents of this document.
"""

from __future__ import annotations

import re

from pageindex.tree.draft import Draft
from pageindex.tree.headings import at_top, compact
from pageindex.tree.pdf import Page

_JUNK = re.compile(r"\.(pdf|docx?|htm)\b|_final|press release -|untitled", re.IGNORECASE)


def real_outline(toc: list[list], page_count: int) -> list[tuple[int, str, int]]:
    """The outline as ``(level, title, page)`` rows, or ``[]`` when it is not a usable one."""
    rows = []
    for row in toc:
        level, title, page = int(row[0]), str(row[1]).strip(), int(row[2])
        if not title or not 1 <= page <= page_count:
            continue
        rows.append((level, re.sub(r"\s+", " ", title), page))
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
    return rows


def outline_drafts(rows: list[tuple[int, str, int]], pages: list[Page]) -> list[Draft]:
    """Drafts for outline rows, placed at the title line when it can be found on the page."""
    out: list[Draft] = []
    for level, title, number in rows:
        page = pages[number - 1]
        want = compact(title)[:30]
        y, top = 0.0, True
        for line in page.lines:
            if (
                want
                and line.compact.startswith(want[: max(6, len(line.compact))])
                or (want and want.startswith(line.compact) and len(line.compact) >= 6)
            ):
                y, top = line.y0, at_top(page, line)
                break
        slug = re.sub(r"[^a-z0-9]+", "_", title.lower()).strip("_")[:40].rstrip("_") or "section"
        out.append(Draft("outline", slug, title[:120], number, y, top, level))
    return out
