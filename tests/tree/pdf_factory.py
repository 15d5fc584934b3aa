"""Small PDFs made on the fly for tests: plain text, zero pages, scanned, encrypted."""

from __future__ import annotations

from pathlib import Path

import pymupdf


def make_pdf(path: Path, pages: list[list[str]], bold_first: bool = False) -> Path:
    """A small text PDF: one list of lines per page (first line bold when ``bold_first``)."""
    doc = pymupdf.open()
    for lines in pages:
        page = doc.new_page()
        y = 72.0
        for i, line in enumerate(lines):
            font = "hebo" if bold_first and i == 0 else "helv"
            page.insert_text((72, y), line, fontname=font, fontsize=10)
            y += 14
    doc.save(path)
    doc.close()
    return path


def footed_pdf(
    path: Path,
    bodies: list[list[str]],
    feet: list[str | None],
    heads: list[str | None] | None = None,
    right: bool = False,
) -> Path:
    """A small text PDF (A4) whose pages carry a running foot (``feet[i]`` set low on page ``i + 1``,
    none where ``None``; at the right margin with ``right``) and, when given, a running head above the
    body lines ``bodies[i]``."""
    doc = pymupdf.open()
    for i, lines in enumerate(bodies):
        page = doc.new_page(width=595, height=842)
        if heads and heads[i]:
            page.insert_text((72, 40), heads[i], fontname="helv", fontsize=8)
        y = 80.0
        for line in lines:
            page.insert_text((72, y), line, fontname="helv", fontsize=10)
            y += 14
        if feet[i]:
            x = 595 - 72 - pymupdf.get_text_length(feet[i], fontname="helv", fontsize=8) if right else 72
            page.insert_text((x, 805), feet[i], fontname="helv", fontsize=8)
    doc.save(path)
    doc.close()
    return path


def save_pdf(doc: pymupdf.Document, path: Path, toc: list[list] | None = None) -> Path:
    """Give ``doc`` its outline (``toc`` rows ``[level, title, page]``, when given), save it to ``path``
    and close it."""
    if toc:
        doc.set_toc(toc)
    doc.save(path)
    doc.close()
    return path


def zero_page_pdf(path: Path) -> Path:
    """A well-formed PDF whose page tree is empty (pymupdf refuses to save one)."""
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [] /Count 0 >>"]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, obj in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + obj + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    path.write_bytes(bytes(out))
    return path


def scanned_pdf(path: Path) -> Path:
    """One page holding only an image: no text layer."""
    doc = pymupdf.open()
    page = doc.new_page()
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 40, 40), False)
    pix.clear_with(180)
    page.insert_image(page.rect, pixmap=pix)
    doc.save(path)
    doc.close()
    return path


def encrypted_pdf(path: Path) -> Path:
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "secret text")
    doc.save(path, encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="user", owner_pw="owner")
    doc.close()
    return path
