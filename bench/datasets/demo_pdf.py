"""A small page-layout writer for the demo filings, on top of pymupdf.

Letter pages, Helvetica body text, Helvetica-Bold headings, right-aligned number columns,
a running header and a printed page label at the foot of every page but the cover. Each
paragraph and table is kept on one page, so what it returns (the 0-based page index it
landed on) is the whole of its evidence.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pymupdf

WIDTH, HEIGHT = 612.0, 792.0
LEFT, RIGHT = 72.0, 540.0
TOP, BOTTOM = 78.0, 730.0
BODY_SIZE = 9.5
REGULAR = pymupdf.Font("helv")
BOLD = pymupdf.Font("hebo")
_ADVANCE: dict[tuple[int, str], float] = {}  # (id(font), char) -> advance at size 1


def text_width(font: pymupdf.Font, text: str, size: float) -> float:
    """Same as ``font.text_length`` but with per-character widths cached (that call is slow)."""
    total = 0.0
    key = id(font)
    for char in text:
        advance = _ADVANCE.get((key, char))
        if advance is None:
            advance = _ADVANCE[(key, char)] = font.text_length(char, 1.0)
        total += advance
    return total * size


def money(value: int | float | None, *, decimals: int = 0) -> str:
    """1577 -> "1,577"; -1577 -> "(1,577)"; 0 -> "—"; None -> ""."""
    if value is None:
        return ""
    if value == 0:
        return "\u2014"
    text = f"{abs(value):,.{decimals}f}"
    return f"({text})" if value < 0 else text


@dataclass
class Row:
    """One table line: a label and one value per column."""

    label: str
    values: list[int | float | str | None] = field(default_factory=list)
    bold: bool = False
    indent: int = 0
    rule: bool = False  # a line above the values (subtotal)
    total: bool = False  # bold, a line above and a double line below
    dollar: bool = False  # "$" before each value
    decimals: int = 0


@dataclass
class _Page:
    index: int
    writer: pymupdf.TextWriter
    label: str | None
    rules: list[tuple[float, float, float]] = field(default_factory=list)  # x0, x1, y


class FilingWriter:
    """Flows headings, paragraphs and tables onto pages of ``doc``."""

    def __init__(self, doc: pymupdf.Document, running_header: str) -> None:
        self.doc = doc
        self.running_header = running_header
        self.pages: list[_Page] = []
        self.y = TOP
        self.label_prefix: str | None = None  # None: unlabelled pages (cover)
        self.label_number = 0

    # pages ---------------------------------------------------------------
    @property
    def page_index(self) -> int:
        return len(self.pages) - 1

    def set_labels(self, prefix: str | None, start: int | None = None) -> None:
        """Label the next pages ``prefix + n`` (``""`` for plain numbers); ``None`` for no label."""
        self.label_prefix = prefix
        if start is not None:
            self.label_number = start - 1

    def new_page(self, *, header: bool = True) -> int:
        page = self.doc.new_page(width=WIDTH, height=HEIGHT)
        label = None
        if self.label_prefix is not None:
            self.label_number += 1
            label = f"{self.label_prefix}{self.label_number}"
        self.pages.append(_Page(page.number, pymupdf.TextWriter(page.rect), label))
        self.y = TOP
        if header:
            self._put(self.running_header, LEFT, 44.0, size=7.5)
            toc = "Table of Contents"
            self._put(toc, RIGHT - text_width(REGULAR, toc, 7.5), 44.0, size=7.5)
        return self.page_index

    def ensure(self, height: float) -> None:
        if not self.pages or self.y + height > BOTTOM:
            self.new_page()

    def space(self, points: float) -> None:
        self.y += points

    def labels(self) -> list[str | None]:
        return [p.label for p in self.pages]

    # text ----------------------------------------------------------------
    def _put(self, text: str, x: float, y: float, *, size: float = BODY_SIZE, bold: bool = False) -> None:
        self.pages[-1].writer.append((x, y), text, font=BOLD if bold else REGULAR, fontsize=size)

    def line(
        self,
        text: str,
        *,
        size: float = BODY_SIZE,
        bold: bool = False,
        align: str = "left",
        indent: float = 0.0,
    ) -> int:
        self.ensure(size * 1.5)
        font = BOLD if bold else REGULAR
        width = text_width(font, text, size)
        x = {"left": LEFT + indent, "center": (WIDTH - width) / 2, "right": RIGHT - width}[align]
        self.y += size * 1.3
        self._put(text, x, self.y, size=size, bold=bold)
        return self.page_index

    def heading(self, text: str, *, size: float = 11.0, center: bool = False, keep: float = 90.0) -> int:
        """A bold heading, kept on a page with at least ``keep`` points of what follows."""
        self.ensure(size * 2 + keep)
        self.y += size * 0.9
        return self.line(text, size=size, bold=True, align="center" if center else "left")

    def _wrap(self, text: str, size: float, width: float) -> list[str]:
        lines: list[str] = []
        current = ""
        for word in text.split():
            trial = f"{current} {word}".strip()
            if current and text_width(REGULAR, trial, size) > width:
                lines.append(current)
                current = word
            else:
                current = trial
        if current:
            lines.append(current)
        return lines

    def paragraph(
        self, text: str, *, size: float = BODY_SIZE, indent: float = 0.0, lead: str | None = None
    ) -> int:
        """A wrapped paragraph, never split across pages; ``lead`` is a bold run-in title."""
        body = f"{lead} {text}" if lead else text
        lines = self._wrap(body, size, RIGHT - LEFT - indent)
        leading = size * 1.35
        self.ensure(leading * len(lines) + size)
        self.y += size * 0.5
        for i, line in enumerate(lines):
            self.y += leading
            if i == 0 and lead and line.startswith(lead):
                self._put(lead, LEFT + indent, self.y, size=size, bold=True)
                rest = line[len(lead) :]
                self._put(rest, LEFT + indent + text_width(BOLD, lead, size), self.y, size=size)
            else:
                self._put(line, LEFT + indent, self.y, size=size)
        return self.page_index

    def table(
        self,
        columns: list[str],
        rows: list[Row],
        *,
        title: list[str] | None = None,
        size: float = 8.5,
        new_page: bool = False,
    ) -> int:
        """A financial table: bold centred title lines, right-aligned value columns."""
        leading = size * 1.55
        height = leading * (len(rows) + len(title or []) + 3)
        if new_page:
            self.new_page()
        self.ensure(height)
        for text in title or []:
            self.line(text, size=size + 1, bold=True, align="center")
        self.y += leading * 0.6
        col_width = 62.0
        rights = [RIGHT - col_width * (len(columns) - 1 - i) for i in range(len(columns))]
        self.y += leading
        for right, name in zip(rights, columns, strict=True):
            self._put(name, right - text_width(BOLD, name, size), self.y, size=size, bold=True)
        self.pages[-1].rules.append((rights[0] - col_width + 8, RIGHT, self.y + 3))
        for row in rows:
            self.y += leading
            bold = row.bold or row.total
            self._put(row.label, LEFT + 10 * row.indent, self.y, size=size, bold=bold)
            for right, value in zip(rights, row.values, strict=False):
                text = value if isinstance(value, str) else money(value, decimals=row.decimals)
                if row.dollar and text:
                    self._put("$", right - col_width + 12, self.y, size=size, bold=bold)
                width = text_width((BOLD if bold else REGULAR), text, size)
                self._put(text, right - width, self.y, size=size, bold=bold)
                if row.rule or row.total:
                    self.pages[-1].rules.append((right - col_width + 10, right, self.y - size - 2))
                if row.total:
                    self.pages[-1].rules.append((right - col_width + 10, right, self.y + 3))
                    self.pages[-1].rules.append((right - col_width + 10, right, self.y + 4.5))
        self.y += leading * 0.5
        return self.page_index

    # output --------------------------------------------------------------
    def finish(self) -> None:
        """Write the text, rules and page labels onto the pages."""
        for item in self.pages:
            page = self.doc[item.index]
            if item.label:
                width = text_width(REGULAR, item.label, 9)
                item.writer.append(((WIDTH - width) / 2, 762.0), item.label, font=REGULAR, fontsize=9)
            item.writer.write_text(page)
            if item.rules:
                shape = page.new_shape()
                for x0, x1, y in item.rules:
                    shape.draw_line((x0, y), (x1, y))
                shape.finish(width=0.5, color=(0, 0, 0))
                shape.commit()
