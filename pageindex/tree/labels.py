"""Printed page numbers: what the filing prints on each page, for citations like "page 45".

No FinanceBench filing carries PDF page labels; the printed number sits in the first or
last three text lines of a page (EDGAR renders put it right after the content). The offset
to the PDF page changes inside a document and restarts in exhibits, so the result is a
per-page map, never a constant offset.
"""

from __future__ import annotations

import re

from pageindex.tree.pdf import Page

_LABEL = re.compile(
    r"^(?:page\s+)?((?:[A-Z]{1,2}\s?-\s?)?\d{1,3}|[ivxlc]{1,6})(?:\s+of\s+\d{1,3})?$", re.IGNORECASE
)
_ROMAN = re.compile(r"^[ivxlc]{1,6}$")


def _candidate(text: str) -> str | None:
    text = text.strip().strip("-–— ").strip()
    m = _LABEL.match(text)
    if not m:
        return None
    label = re.sub(r"\s+", "", m.group(1))
    if _ROMAN.match(label) and label != label.lower():
        return None  # upper-case roman numerals are more often "PART II" pieces than folios
    return label


def page_label(page: Page) -> str | None:
    """The printed page number of ``page``, or ``None`` when it prints none."""
    lines = page.lines
    if not lines:
        return None
    tail = lines[-3:][::-1]
    head = lines[:3]
    # then the lowest three by position: a page set in two text columns reads its right column
    # after the footer that prints the number
    bottom = sorted(lines, key=lambda line: line.y1)[-3:][::-1]
    for line in tail + head + bottom:
        label = _candidate(line.text)
        if label is not None:
            return label
    return None


def page_labels(pages: list[Page]) -> dict[str, str]:
    """``{"<pdf page>": "<printed number>"}`` for every page that prints one."""
    out: dict[str, str] = {}
    for page in pages:
        label = page_label(page)
        if label is not None:
            out[str(page.number)] = label
    return out
