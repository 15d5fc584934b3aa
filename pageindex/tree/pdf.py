"""One pymupdf pass over a PDF: every page as visual lines with emphasis flags.

Spans are merged into *visual lines* by vertical position, so a table row reads
``Purchases of property, plant and equipment (PP&E) (1,577) (1,373) (1,420)`` instead of
one number per line. Each line carries the signals heading detection uses: bold,
all-caps and centred. Font size is kept but is not a reliable heading signal in
EDGAR renders.
"""

from __future__ import annotations

import errno
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import pymupdf

from pageindex.tree.cache import file_sha256
from pageindex.tree.errors import (
    NotAPDFError,
    PDFCorruptError,
    PDFEmptyError,
    PDFEncryptedError,
    PDFMissingError,
    PDFNoTextError,
    PDFUnreadableError,
)

_BOLD_FONT = re.compile(r"bold|black|heavy|semibold|demi|-bd\b|,bd\b", re.IGNORECASE)
# vector paths come with the text as bounding boxes (blocks of type 3) for a few per cent more:
# candidate underlines without a second pass over the page's drawings
LAYOUT_TEXT_FLAGS = pymupdf.TEXTFLAGS_DICT & ~pymupdf.TEXT_PRESERVE_IMAGES | pymupdf.TEXT_COLLECT_VECTORS
# a figure, or a lone currency sign, bracket or dash standing in a table cell
_FIGURE = re.compile(r"^[(\-–$€£¥]*\d[\d,.]*\)?%?$|^[$€£¥(]$|^[-–—]$")
_PAGE_NUMBER_AT_ENDS = re.compile(
    r"^\s*(?:page\s+)?\d{1,4}\s+(?=\S)|\s+(?:page\s+)?\d{1,4}\s*$", re.IGNORECASE
)
_Y_TOLERANCE = 2.0  # points: spans whose vertical centres differ by less are one visual line


def compact(text: str) -> str:
    """``text`` with all whitespace removed, lower-cased: robust to split words ("Busines s")."""
    return "".join(text.split()).lower()


@dataclass(slots=True)
class Line:
    """One visual line of a page (1-based ``page``), left to right."""

    page: int
    text: str
    bold: bool
    caps: bool
    centred: bool
    x0: float
    x1: float
    y0: float
    y1: float
    size: float
    color: int = 0  # sRGB of the line's text when all its spans share one colour, else -1
    underlined: bool = False  # set only by mark_underlined (drawings are read on demand)
    gap: float = 0.0  # widest horizontal gap between the pieces of the line (table cells), points
    wide_gaps: int = 0  # gaps wider than 2.5 x the type size (or 14 pt): cells of a table row
    ry: float = -1.0  # reading position on the page: y0, plus the page height in a right column
    margin: bool = False  # in the page's top or bottom 8%, where running headers and footers stand
    end_color: int = 0  # sRGB of its last span: the colour a heading wrapping onto the next line goes on in

    def __post_init__(self) -> None:
        if self.ry < 0:
            self.ry = self.y0

    @property
    def cells(self) -> int:
        """How many separate cells the line spreads over (1 for ordinary text)."""
        return self.wide_gaps + 1

    @property
    def figures(self) -> int:
        """How many of the line's words are figures (``1,577``, ``(10.5)``, ``12%``, ``$``, ``—``):
        what a table row is made of."""
        return sum(1 for word in self.text.split() if _FIGURE.match(word))

    @property
    def header_key(self) -> str:
        """How a running header or footer recurs from page to page: :attr:`compact`, and for a line
        in the page's margin that carries a page number at either end, its text without the number
        and marked as such ("ACME GLOBAL FUND 75" and "... 76" are one footer, "#acmeglobalfund",
        which no numberless line equals: a contents entry "5.3 Death Benefits 12" never stands for
        its heading). A line with fewer than 12 letters besides the number keeps it ("Note 7")."""
        if not self.margin:
            return self.compact
        stripped = _PAGE_NUMBER_AT_ENDS.sub("", self.text)
        if stripped == self.text or _letters(stripped) < 12:
            return self.compact
        return "#" + compact(stripped)

    @property
    def compact(self) -> str:
        """:func:`compact` of the line's text."""
        return compact(self.text)


def is_table_row(line: Line) -> bool:
    """Figures spread over cells, or a row whose words are mostly figures."""
    if line.cells >= 2:
        return True
    figures = line.figures
    return figures >= 2 and figures >= 0.3 * len(line.text.split())


@dataclass(slots=True)
class Page:
    number: int
    width: float
    height: float
    lines: list[Line] = field(default_factory=list)
    underlines_read: bool = False
    rules: list[tuple[float, float, float]] | None = None  # thin horizontal strokes (read_pdf)
    scanned: bool = False  # an image with only a stamp or a page number of text on it (read_pdf)

    @property
    def text(self) -> str:
        return "\n".join(line.text for line in self.lines)


@dataclass(slots=True)
class PdfDocument:
    path: Path
    pages: list[Page]
    toc: list[list]  # pymupdf outline rows: [level, title, page(1-based), ...]
    repaired: bool = False  # the reader rebuilt a broken cross-reference table: text may be missing


LINK_LOOP = "a loop of symbolic links"


PDF_HEADER = b"%PDF-"  # a PDF's first bytes (mupdf allows some junk before it: looked for in the head)
HEAD_BYTES = 1024
TAIL_BYTES = 4096  # where a PDF's %%EOF marker is looked for, before any padding at its end
_PADDING = b"\x00\t\n\f\r "  # NUL bytes and white space a writer or a download pads a file out with
_PADDING_LIMIT = 1 << 20  # more padding than this (a download's preallocated file) is no whole PDF's


def starts_as_pdf(path: Path) -> bool:
    """Whether ``path``'s first bytes hold the PDF header (False when it cannot be read)."""
    try:
        with Path(path).open("rb") as fh:
            return PDF_HEADER in fh.read(HEAD_BYTES)
    except OSError:
        return False


def broken_link(p: Path) -> str:
    """What ``p`` is when it is a symbolic link that leads nowhere (:data:`LINK_LOOP`, or "a symbolic
    link to X, which does not exist"), else ""."""
    if not p.is_symlink():
        return ""
    try:
        p.resolve(strict=True)
    except RuntimeError:  # Python < 3.13 says a loop so
        return LINK_LOOP
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return LINK_LOOP
        return f"a symbolic link to {os.readlink(p)}, which does not exist"
    return ""


def _check_path(p: Path) -> None:
    """Raise the matching :class:`PDFError` unless ``p`` names a regular file (through its links)."""
    if p.is_file():
        _check_name(p)
        return
    if p.is_dir():
        raise NotAPDFError(p, "a directory: give one filing's PDF")
    if link := broken_link(p):
        raise PDFUnreadableError(p, link) if link == LINK_LOOP else PDFMissingError(p, link)
    if p.exists():  # a pipe, a socket, a device
        raise NotAPDFError(p, "not a regular file")
    raise PDFMissingError(p)


def pdf_sha256(path: str | Path) -> str:
    """The sha256 of the file at ``path`` (read in chunks, never whole) or the matching
    :class:`PDFMissingError`, :class:`NotAPDFError` or :class:`PDFUnreadableError`."""
    p = Path(path)
    try:
        _check_path(p)
        return file_sha256(p)
    except OSError as exc:  # a name too long for the file system, no permission, an I/O error
        raise PDFUnreadableError(p, exc.strerror or str(exc)) from None


_KINDS = (  # (what a file that is no PDF starts with, what it is)
    (re.compile(rb"^(?:\xef\xbb\xbf)?\s*<(?:!doctype\s+html|html|head|body)\b", re.IGNORECASE),
     "an HTML page (EDGAR filings are HTML: print it to PDF, or take the filing's PDF)"),
    (re.compile(rb"^PK\x03\x04"), "a ZIP archive (a .docx or .xlsx file?)"),
    (re.compile(rb"^\x89PNG"), "a PNG image"),
    (re.compile(rb"^\xff\xd8\xff"), "a JPEG image"),
    (re.compile(rb"^(?:II\*\x00|MM\x00\*)"), "a TIFF image"),
)  # fmt: skip


def _what_it_is(head: bytes) -> str:
    """What a file that is no PDF is, told from its first bytes ("" when it cannot be told)."""
    return next((kind for pattern, kind in _KINDS if pattern.match(head)), "")


def open_pdf(path: str | Path) -> pymupdf.Document:
    """Open ``path`` as a PDF or raise the matching :class:`PDFError`."""
    p = Path(path)
    try:
        _check_path(p)
        size = p.stat().st_size
        with p.open("rb") as fh:
            head = fh.read(HEAD_BYTES)
            end = _content_end(fh, size)
            fh.seek(max(0, end - TAIL_BYTES))
            tail = fh.read(end - max(0, end - TAIL_BYTES))
    except OSError as exc:  # a name too long for the file system, no permission, an I/O error
        raise PDFUnreadableError(p, exc.strerror or str(exc)) from None
    if not head:
        raise NotAPDFError(p, "empty file, 0 bytes")
    if PDF_HEADER not in head:
        kind = _what_it_is(head)
        raise NotAPDFError(p, f"no %PDF header: {kind}" if kind else "no %PDF header")
    if b"%%EOF" not in tail:
        # mupdf would silently "repair" a cut-off file and drop what is missing
        if end == size and size > _PADDING_LIMIT and not tail.strip(_PADDING):
            raise PDFCorruptError(
                p, "no %%EOF marker at the end: it ends in more than 1 MB of NUL bytes or blanks, as an "
                "unfinished or preallocated download does; download it again"
            )
        raise PDFCorruptError(p, "no %%EOF marker at the end")
    try:
        doc = _open_named(p)
        if doc.is_repaired and end < size and (whole := _unpadded(p, end)):
            # padding after %%EOF hid the cross-reference table from the reader, which then rebuilt it
            # and said the file damaged: the file read without its padding
            doc.close()
            doc = whole
    except Exception as exc:  # pymupdf raises FileDataError / RuntimeError variants
        raise PDFCorruptError(p, str(exc).strip() or type(exc).__name__) from None
    if doc.needs_pass or doc.is_encrypted:
        doc.close()
        raise PDFEncryptedError(p)
    if doc.page_count == 0:
        repaired = doc.is_repaired
        doc.close()
        if repaired:  # cut short with its page tree: damaged, not a well-formed PDF without pages
            raise PDFCorruptError(p, "its cross-reference table is broken and no page is left in it")
        raise PDFEmptyError(p)
    return doc


def _check_name(p: Path) -> None:
    """Refuse a name with bytes the locale cannot read as text (Python keeps them as surrogates: a
    Latin-1 name on a UTF-8 system, a UTF-8 name in the C locale with UTF-8 mode off): pymupdf takes a
    file name as UTF-8 text, so it said such a file "corrupt" or "not found", and a tree cannot record
    its name (writing it was an internal error)."""
    stray = next((ch for ch in str(p) if "\udc80" <= ch <= "\udcff"), None)
    if stray is not None:
        byte = ord(stray) - 0xDC00
        raise PDFUnreadableError(
            p, f"its name has a byte that is not text in this locale's encoding (0x{byte:02X}): "
            "rename the file, or run in a UTF-8 locale (LC_ALL=C.UTF-8) if the name is UTF-8"
        )


def _open_named(p: Path) -> pymupdf.Document:
    """``p`` opened by pymupdf, which takes a file name as UTF-8 text: a name the locale writes as other
    bytes (a non-ASCII name under a Latin-1 locale) is opened from the file's content instead (pymupdf
    said it "corrupt" though it was there)."""
    name = str(p)
    if os.fsencode(name) != name.encode("utf-8"):
        return pymupdf.open(stream=p.read_bytes(), filetype="pdf")
    return pymupdf.open(p, filetype="pdf")


def _content_end(fh: BinaryIO, size: int) -> int:
    """Where the content of the open file ``fh`` (``size`` bytes) ends: before the NUL bytes and white
    space at its end. A complete PDF padded out to a block size (20 KB of NULs after a Selenium
    download's %%EOF) keeps its %%EOF before them: it was refused as cut short. Padding longer than
    :data:`_PADDING_LIMIT` is not looked past (the file's size is returned): the file is not read whole."""
    end = size
    while end > max(0, size - _PADDING_LIMIT):
        start = max(0, end - 65536)
        fh.seek(start)
        kept = fh.read(end - start).rstrip(_PADDING)
        if kept:
            return start + len(kept)
        end = start
    return size


def _unpadded(p: Path, end: int) -> pymupdf.Document | None:
    """The PDF ``p`` opened from its first ``end`` bytes (its padding left out), when the reader then
    needs no repair; None otherwise (the file is damaged in another way too)."""
    with p.open("rb") as fh:
        doc = pymupdf.open(stream=fh.read(end), filetype="pdf")
    if doc.is_repaired:
        doc.close()
        return None
    return doc


_BOLD_CACHE: dict[tuple[bool, str], bool] = {}


def _is_bold(flags: int, font: str) -> bool:
    key = (bool(flags & 16), font)
    bold = _BOLD_CACHE.get(key)
    if bold is None:
        bold = _BOLD_CACHE[key] = key[0] or bool(_BOLD_FONT.search(font))
    return bold


def _page_lines(number: int, raw: dict, width: float, height: float = 0.0) -> list[Line]:
    """Visual lines of one page from its ``get_text('dict')`` output.

    Works on pymupdf's own lines (a run of spans on one baseline), not span by span: each
    becomes one piece (text, box, bold characters, size, colour), and pieces whose vertical
    centres are within ``_Y_TOLERANCE`` are one visual line, read left to right. On a page set
    in two text columns (prose lines side by side on 3+ baselines) the columns are separate
    lines, and the right column's lines come after the left one's (``Line.ry``).
    """
    pieces = []
    bold_cache = _BOLD_CACHE
    for block in raw["blocks"]:
        if block.get("type", 0) != 0:
            continue
        for line in block["lines"]:
            spans = line["spans"]
            if len(spans) == 1:  # most lines: one span, no joining
                span = spans[0]
                text = span["text"]
                n = len(text.strip())
                if not n:
                    continue
                flags, font = span["flags"], span["font"]
                bold = bold_cache.get((flags & 16 != 0, font))
                if bold is None:
                    bold = _is_bold(flags, font)
                x0, y0, x1, y1 = line["bbox"]
                pieces.append(
                    (
                        (y0 + y1) / 2, x0, x1, y0, y1, text, n, n if bold else 0, span["size"], span["color"],
                        span["color"],
                    )
                )
                continue
            texts = []
            chars = bold_chars = 0
            size = 0.0
            color = None
            prev_x1 = None
            for span in spans:
                text = span["text"]
                n = len(text.strip())
                if not n:
                    continue
                bbox = span["bbox"]
                if prev_x1 is not None and bbox[0] - prev_x1 > 0.8 and not texts[-1].endswith(" "):
                    texts.append(" ")
                texts.append(text)
                prev_x1 = bbox[2]
                chars += n
                if _is_bold(span["flags"], span["font"]):
                    bold_chars += n
                if span["size"] > size:
                    size = span["size"]
                c = span["color"]
                color = c if color is None or color == c else -1
            if chars:
                x0, y0, x1, y1 = line["bbox"]  # pymupdf's box of the line's spans
                pieces.append(
                    ((y0 + y1) / 2, x0, x1, y0, y1, "".join(texts), chars, bold_chars, size, color, c)
                )
    if not pieces:
        return []
    pieces.sort(key=_by_position)
    columns = _column_starts(pieces, width)
    groups: list[list[tuple]] = [[pieces[0]]]
    anchor = pieces[0][0]
    first = 0  # groups[first:] are the visual line's groups: one, or one a text column
    splits = 0
    for s in pieces[1:]:
        if s[0] - anchor <= _Y_TOLERANCE:
            group = groups[-1]
            leftmost = min(group, key=_by_x)
            if columns and (
                _starts_column(group[-1], s, columns)
                or (_letters(leftmost[5]) >= 2 and _starts_column(s, leftmost, columns))
            ):
                # the next text column, not a cell of the same row; or the line of the left column
                # whose centre sits a little below that of the right column's line (a name set larger
                # beside a biography), which is sorted after it (not beside a lone tick or bullet)
                groups.append([s])
                splits += 1
            elif len(groups) - first == 1:
                group.append(s)
            else:  # the column it lies in: the rest of the right column's line is not the left one's
                ahead = [g for g in groups[first:] if min(g, key=_by_x)[1] <= s[1]]
                (max(ahead, key=lambda g: min(g, key=_by_x)[1]) if ahead else group).append(s)
        else:
            groups.append([s])
            anchor = s[0]
            first = len(groups) - 1
    # two text columns side by side on 3+ baselines: the right one is read after the left one
    right = columns[0] - 2.0 if splits >= 3 else None
    lines: list[Line] = []
    mid_page = width / 2
    max_centre_off, max_centred_width = width * 0.06, width * 0.75
    for group in groups:
        if len(group) == 1:
            _, lx0, lx1, ly0, ly1, text, chars, bold_chars, size, color, end_color = group[0]
            text = " ".join(text.split())
            gap = 0.0
            wide_gaps = 0
        else:
            group.sort(key=_by_x)
            parts: list[str] = []
            prev_x1 = None
            bold_chars = chars = 0
            size = 0.0
            gap = 0.0
            gaps: list[float] = []
            color = None
            for _, x0, x1, _y0, _y1, piece, n, nb, sz, col, _end in group:
                if prev_x1 is not None:
                    gaps.append(x0 - prev_x1)
                    gap = max(gap, x0 - prev_x1)
                    if x0 - prev_x1 > 0.8 and not parts[-1].endswith(" "):
                        parts.append(" ")
                parts.append(piece)
                prev_x1 = x1
                chars += n
                bold_chars += nb
                if sz > size:
                    size = sz
                color = col if color is None or color == col else -1
            text = " ".join("".join(parts).split())
            end_color = group[-1][10]
            lx0 = group[0][1]
            lx1 = max(s[2] for s in group)
            ly0 = min(s[3] for s in group)
            ly1 = max(s[4] for s in group)
            wide = max(14.0, 2.5 * size)
            wide_gaps = sum(1 for g in gaps if g > wide)
        if not text:
            continue
        caps = text.isupper() and _letters(text) >= 3
        centred = abs((lx0 + lx1) / 2 - mid_page) < max_centre_off and (lx1 - lx0) < max_centred_width
        lines.append(
            Line(
                number,
                text,
                chars > 0 and bold_chars >= 0.8 * chars,
                caps,
                centred,
                lx0,
                lx1,
                ly0,
                ly1,
                size,
                color if color is not None else -1,
                False,
                gap,
                wide_gaps,
                ly0,
                height > 0 and (ly1 < 0.08 * height or ly0 > 0.92 * height),
                end_color,
            )
        )
    if right is not None:
        for line in lines:
            if line.x0 >= right:
                line.ry = line.y0 + height
        lines.sort(key=lambda line: line.ry)
    return lines


def _by_position(s: tuple) -> tuple[float, float]:
    return (s[0], s[1])


def _by_x(s: tuple) -> float:
    return s[1]


_NOT_LETTER = re.compile(r"[\W\d_]+")


def _letters(text: str) -> int:
    """How many letters ``text`` holds."""
    return len(_NOT_LETTER.sub("", text))


def _prose(text: str) -> bool:
    return _letters(text) >= 0.6 * len(text)


def _column_starts(pieces: list[tuple], width: float) -> list[float]:
    """Left edges shared by 5+ prose pieces (30+ characters, mostly letters) that are not the
    page's leftmost text edge and lie right of a third of the page: where a second text
    column starts."""
    counts: dict[int, int] = {}
    for s in pieces:
        if len(s[5]) >= 30 and _prose(s[5]):
            key = round(s[1])
            counts[key] = counts.get(key, 0) + 1
    starts = sorted(x for x, n in counts.items() if n >= 5)
    return [float(x) for x in starts[1:] if x > width / 3] if len(starts) > 1 else []


def _starts_column(prev: tuple, s: tuple, columns: list[float]) -> bool:
    """``s`` begins a text column to the right of ``prev`` on the same baseline: two text
    columns side by side, not a table row (both pieces are mostly letters)."""
    return (
        s[1] - prev[2] >= 8.0
        and any(abs(s[1] - x) <= 2.0 for x in columns)
        and _prose(s[5])
        and _prose(prev[5])
    )


def read_pdf(path: str | Path) -> PdfDocument:
    """Read every page of ``path`` into visual lines (one ``get_text('dict')`` pass)."""
    p = Path(path)
    doc = open_pdf(p)
    try:
        pages: list[Page] = []
        for index in range(doc.page_count):
            try:
                page = doc.load_page(index)
                raw = page.get_text("dict", flags=LAYOUT_TEXT_FLAGS)
            except Exception as exc:
                raise PDFCorruptError(
                    p, f"page {index + 1}: {str(exc).strip() or type(exc).__name__}"
                ) from None
            rect = page.rect
            width, height = rect.width, rect.height
            if turn := sideways(raw):  # a wide table printed turned on an upright page
                raw, width, height = upright(raw, turn, width, height), height, width
            lines = _page_lines(index + 1, raw, width, height)
            scanned = bool(lines) and is_scanned_page(page, "".join(line.text for line in lines))
            pages.append(Page(index + 1, width, height, lines, rules=_vector_rules(raw), scanned=scanned))
        try:
            toc = doc.get_toc(simple=True)
        except Exception:
            toc = []
        # a bookmark repeated one after another (level, title, page: a merge of copies) is one entry
        toc = [row for k, row in enumerate(toc) if not k or row[:3] != toc[k - 1][:3]]
        repaired = doc.is_repaired
    finally:
        doc.close()
    if not any(page.lines for page in pages):
        if repaired:  # a file cut short loses its text with its objects: not a scan to OCR
            raise PDFCorruptError(p, "its cross-reference table is broken and no page text is readable")
        raise PDFNoTextError(p)
    if all(page.scanned or not page.lines for page in pages):
        detail = f"every page is an image with fewer than {SCAN_LETTERS} letters of text on it"
        raise PDFNoTextError(p, f"{detail}: a scanner's stamp or page numbers?")
    return PdfDocument(path=p, pages=pages, toc=toc, repaired=repaired)


def sideways(raw: dict) -> int:
    """1 when most of a page's text runs down the page (a statement of changes in equity printed turned a
    quarter to fit its columns: TSMC's 20-F), -1 when most runs up it, 0 otherwise (``line['dir']``)."""
    down = up = across = 0
    for block in raw["blocks"]:
        for line in block.get("lines", ()):
            n = sum(len(span["text"].strip()) for span in line["spans"])
            dx, dy = line["dir"]
            if dy > 0.9:
                down += n
            elif dy < -0.9:
                up += n
            else:
                across += n
    if max(down, up) <= 2 * across:
        return 0
    return 1 if down >= up else -1


def upright(raw: dict, turn: int, width: float, height: float) -> dict:
    """The page's text blocks with their boxes as they sit on the page turned upright (``turn`` from
    :func:`sideways`): its lines then read top to bottom, left to right, as on any other page."""

    def box(b: tuple) -> tuple[float, float, float, float]:
        x0, y0, x1, y1 = b
        return (y0, width - x1, y1, width - x0) if turn > 0 else (height - y1, x0, height - y0, x1)

    def spans(line: dict) -> list[dict]:
        return [{**span, "bbox": box(span["bbox"])} for span in line["spans"]]

    blocks = []
    for block in raw["blocks"]:
        if block.get("type", 0) != 0:
            continue
        lines = [
            {**line, "bbox": box(line["bbox"]), "spans": spans(line)}
            for line in block["lines"]
        ]
        blocks.append({**block, "bbox": box(block["bbox"]), "lines": lines})
    return {**raw, "blocks": blocks}


SCAN_LETTERS = 100  # fewer letters than this over an image covering half the page: a scanned page


def is_scanned_page(page: pymupdf.Page, text: str) -> bool:
    """Whether ``page``, whose text is ``text``, is a scan: fewer than :data:`SCAN_LETTERS` letters
    (a scanner's stamp, a page number) over images covering half of it or more. The images are looked
    for only on pages with that little text, so a filing's text pages cost nothing more."""
    if _letters(text) >= SCAN_LETTERS:
        return False
    area = abs(page.rect)
    if not area:
        return False
    try:
        covered = sum(abs(pymupdf.Rect(image["bbox"]) & page.rect) for image in page.get_image_info())
    except Exception:  # an image the reader cannot place says nothing either way
        return False
    return covered >= 0.5 * area


def _vector_rules(raw: dict) -> list[tuple[float, float, float]]:
    """Thin horizontal paths of a page's ``get_text('dict')`` output (vector blocks), as
    (x0, x1, y): candidate underlines."""
    out = []
    for block in raw["blocks"]:
        if block.get("type") == 3:
            x0, y0, x1, y1 = block["bbox"]
            if y1 - y0 <= 2.0 and x1 - x0 >= 8.0:
                out.append((x0, x1, (y0 + y1) / 2))
    return out


class UnderlineReader:
    """Marks ``Line.underlined`` on the pages asked for (long sections with no emphasised
    sub-headings), each page once, from the thin horizontal paths :func:`read_pdf` kept with the
    page's text (``Page.rules``: no second pass over the PDF). A line is underlined when strokes
    just below it span at least 90% of its width and reach no further than it.
    """

    def __init__(self, pages: list[Page]) -> None:
        self.pages = pages

    def __call__(self, first: int, last: int) -> None:
        for n in range(max(first, 1), min(last, len(self.pages)) + 1):
            page = self.pages[n - 1]
            if page.underlines_read:
                continue
            page.underlines_read = True
            if page.rules:
                _mark(page, page.rules)


def _mark(page: Page, rules: list[tuple[float, float, float]]) -> None:
    for line in page.lines:
        width = line.x1 - line.x0
        under = [
            (x0, x1)
            for x0, x1, y in rules
            if line.y1 - 3.0 <= y <= line.y1 + 3.0 and x0 >= line.x0 - 3.0 and x1 <= line.x1 + 3.0
        ]
        if width > 0 and sum(x1 - x0 for x0, x1 in under) >= 0.9 * width:
            line.underlined = True
