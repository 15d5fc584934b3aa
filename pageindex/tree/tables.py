"""The tables on ONE page of a filing, as rows of clean cell text.

:func:`page_tables` reads a single page on demand (both libraries cost 0.3–2 s per page, so
never run this over a whole document):

1. pdfplumber ``find_tables()``: exact cell text on filings whose tables are ruled grids.
2. pymupdf ``find_tables()`` when pdfplumber finds nothing, or *fragments* the page (shaded
   statements come back as one table per shaded row, and the unshaded rows are lost). Cell
   text is read char by char from the page's ``rawdict`` (a char belongs to the cell holding
   more than half of it, as ``Table.to_markdown()`` does), because pymupdf's
   ``Table.extract()`` glues words and moves thousands separators (``'(1577)\\n,'``).

Rows are then cleaned so a statement reads as label + one cell per period: whitespace and
line breaks collapse to one space; a number split across cells (``'(10'`` + ``')'``,
``'$'`` + ``'466'``, ``'12.5'`` + ``'%'``) is joined; empty rows and columns are dropped,
dot leaders are removed; adjacent columns that never both hold text in one row are merged (a
value spanning two grid cells in some rows and one in others). A column heading split over two
grid cells (``"December"`` | ``"28, 2019"``) is left as it is.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from pageindex.tree.errors import PDFCorruptError
from pageindex.tree.pdf import open_pdf

Method = Literal["pdfplumber", "pymupdf"]

_LEADERS = re.compile(r"\s*\.{3,}[\s.]*")  # dot leaders: "Net income........"
_OPENERS = frozenset({"$", "€", "£", "¥", "(", "($", "$("})
_CLOSERS = re.compile(r"^[)%]+$|^\)?%\)?$")
_NUMBER_GAPS = (
    (re.compile(r"(?<=\d)\s*,\s+(?=\d{3}\b)|(?<=\d)\s+,\s*(?=\d{3}\b)"), ","),  # "1 ,577" -> "1,577"
    (re.compile(r"\(\s+(?=[\d$.])"), "("),  # "( 1,577)" -> "(1,577)"
    (re.compile(r"(?<=[\d.])\s+\)"), ")"),  # "(2 )" -> "(2)"
    (re.compile(r"(?<=\$)\s+(?=[\d(])"), ""),  # "$ 466" -> "$466"
)


class PageTable(BaseModel):
    """One table on a PDF page (``page`` is 1-based; ``index`` counts tables on that page from 0)."""

    page: int = Field(ge=1)
    index: int = Field(ge=0)
    rows: list[list[str]]
    method: Method
    bbox: tuple[float, float, float, float]  # x0, top, x1, bottom in PDF points

    @property
    def n_cols(self) -> int:
        return max((len(r) for r in self.rows), default=0)

    def row(self, label: str) -> list[str] | None:
        """The first row whose first cell is ``label`` (case and spacing ignored)."""
        key = " ".join(label.split()).casefold()
        return next((r for r in self.rows if r and r[0].casefold() == key), None)

    def to_frame(self):  # -> pandas.DataFrame (imported lazily)
        import pandas as pd

        return pd.DataFrame(self.rows)


# -- cleaning ----------------------------------------------------------------------------------


def clean_cell(text: str | None) -> str:
    """One line of text with numbers put back together: ``'( 1 ,577 )\\n'`` -> ``'(1,577)'``."""
    if not text:
        return ""
    out = " ".join(_LEADERS.sub(" ", text).split())
    for pattern, repl in _NUMBER_GAPS:
        out = pattern.sub(repl, out)
    return out


def _join_split_numbers(row: list[str]) -> list[str]:
    """Move ``$``/``(`` cells onto the next filled cell and ``)``/``%`` cells onto the previous."""
    row = list(row)
    for j, cell in enumerate(row):
        if cell.endswith(" $") and j + 1 < len(row):  # "Net income $" | "512"
            nxt = next((k for k in range(j + 1, len(row)) if row[k]), None)
            if nxt is not None and not row[nxt][0].isalpha():
                row[j], row[nxt] = cell[:-2], clean_cell("$" + row[nxt])
        elif cell in _OPENERS:
            nxt = next((k for k in range(j + 1, len(row)) if row[k]), None)
            if nxt is not None and not row[nxt][0].isalpha():
                row[nxt] = clean_cell(cell + row[nxt])
                row[j] = ""
    for j, cell in enumerate(row):
        if j and cell and _CLOSERS.match(cell):
            prev = next((k for k in range(j - 1, -1, -1) if row[k]), None)
            if prev is not None and prev > 0:
                row[prev] = clean_cell(row[prev] + cell)
                row[j] = ""
    return row


def clean_rows(raw: list[list[str | None]]) -> list[list[str]]:
    """Cleaned cells, split numbers joined, empty rows/columns dropped, disjoint columns merged."""
    rows = [_join_split_numbers([clean_cell(c) for c in r]) for r in raw]
    rows = [r for r in rows if any(r)]
    if not rows:
        return []
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    keep = [j for j in range(width) if any(r[j] for r in rows)]
    cols = [[r[j] for r in rows] for j in keep]
    merged: list[list[str]] = [cols[0]]
    for col in cols[1:]:
        last = merged[-1]
        if len(merged) > 1 and not any(a and b for a, b in zip(last, col, strict=True)):
            merged[-1] = [a or b for a, b in zip(last, col, strict=True)]
        else:
            merged.append(col)
    return [list(r) for r in zip(*merged, strict=True)]


def is_fragmented(tables: list[list[list[str]]]) -> bool:
    """Several tables and most of them a single row: shaded rows read as separate tables."""
    if len(tables) < 2:
        return False
    single = sum(1 for t in tables if len(t) <= 1)
    return single * 2 > len(tables)


# -- the two readers -------------------------------------------------------------------------


def _pdfplumber_tables(path: Path, page: int) -> list[tuple[list[list[str]], tuple]]:
    import pdfplumber

    try:
        with pdfplumber.open(path, pages=[page]) as pdf:
            found = pdf.pages[0].find_tables()
            out = [(clean_rows(t.extract()), tuple(float(v) for v in t.bbox)) for t in found]
    except Exception as exc:  # pdfminer raises many types on odd files
        raise PDFCorruptError(
            path, f"page {page}: pdfplumber: {str(exc).strip() or type(exc).__name__}"
        ) from None
    return [(rows, bbox) for rows, bbox in out if rows]


def _overlap(a: tuple, b: tuple) -> float:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return w * h if w > 0 and h > 0 else 0.0


def _inside(bbox: tuple, cell: tuple) -> bool:
    """More than half of the char's box lies in the cell (its centre, for a zero-size box)."""
    area = (bbox[2] - bbox[0]) * (bbox[3] - bbox[1])
    if area <= 0:
        x, y = (bbox[0] + bbox[2]) / 2, (bbox[1] + bbox[3]) / 2
        return cell[0] <= x <= cell[2] and cell[1] <= y <= cell[3]
    return _overlap(bbox, cell) > 0.5 * area


def _cell_text(chars: list[tuple[str, tuple, int]], cell: tuple) -> str:
    """Chars (in reading order) more than half inside ``cell``; lines joined with a space."""
    parts: list[str] = []
    last_line = None
    for c, bbox, line_no in chars:
        if not _inside(bbox, cell):
            continue
        if last_line is not None and line_no != last_line:
            parts.append(" ")
        parts.append(c)
        last_line = line_no
    return "".join(parts)


def _page_chars(mupage) -> list[tuple[str, tuple, int]]:
    import pymupdf

    raw = mupage.get_text("rawdict", flags=pymupdf.TEXTFLAGS_RAWDICT & ~pymupdf.TEXT_PRESERVE_IMAGES)
    chars: list[tuple[str, tuple, int]] = []
    line_no = 0
    for block in raw["blocks"]:
        if block.get("type", 0) != 0:
            continue
        for line in block["lines"]:
            line_no += 1
            for span in line["spans"]:
                chars.extend((ch["c"], tuple(ch["bbox"]), line_no) for ch in span["chars"])
    return chars


def _pymupdf_tables(doc, path: Path, page: int) -> list[tuple[list[list[str]], tuple]]:
    try:
        mupage = doc[page - 1]
        found = mupage.find_tables().tables
        if not found:
            return []
        chars = _page_chars(mupage)
    except Exception as exc:
        raise PDFCorruptError(
            path, f"page {page}: pymupdf: {str(exc).strip() or type(exc).__name__}"
        ) from None
    out = []
    for table in found:
        raw = []
        for row in table.rows:
            box = row.bbox
            near = [ch for ch in chars if _overlap(ch[1], box) > 0 or ch[1][0] == ch[1][2]]
            raw.append([_cell_text(near, tuple(c)) if c is not None else "" for c in row.cells])
        rows = clean_rows(raw)
        if rows:
            out.append((rows, tuple(float(v) for v in table.bbox)))
    return out


def page_tables(pdf_path: str | Path, page: int) -> list[PageTable]:
    """The tables on PDF page ``page`` (1-based) of ``pdf_path``; ``[]`` when it has none.

    Raises the :mod:`pageindex.tree.errors` classes for a missing, non-PDF, corrupt or
    encrypted file, and ``ValueError`` for a page outside the document.
    """
    path = Path(pdf_path)
    doc = open_pdf(path)
    try:
        if isinstance(page, bool) or not isinstance(page, int):
            raise ValueError(f"{path}: page must be a whole number, got {page!r}")
        if not 1 <= page <= doc.page_count:
            raise ValueError(f"{path}: page {page} is outside 1..{doc.page_count}")
        found = _pdfplumber_tables(path, page)
        method: Method = "pdfplumber"
        if not found or is_fragmented([rows for rows, _ in found]):
            fallback = _pymupdf_tables(doc, path, page)
            if fallback:
                found, method = fallback, "pymupdf"
    finally:
        doc.close()
    return [
        PageTable(page=page, index=i, rows=rows, method=method, bbox=bbox)
        for i, (rows, bbox) in enumerate(found)
    ]
