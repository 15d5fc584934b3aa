"""Bad filings for reliability tests: corrupt, truncated, encrypted, zero-page, scanned (no
text layer), huge page count, and missing; plus a FinanceBench-format dataset that mixes
them with the good demo filings.

Each writer is deterministic and fast (well under a second). ``EXPECTED_DROP_REASON`` says
what ``validate_dataset`` reports for each kind with its default settings.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pymupdf

from bench.datasets.demo import save_pdf, write_demo_dataset
from bench.datasets.financebench import DOCUMENTS_FILE, INFO_FILE, PDF_DIR, QUESTIONS_FILE, load_financebench
from bench.datasets.models import Dataset

BAD_KINDS = ("corrupt", "truncated", "encrypted", "empty", "scanned", "huge", "missing")
EXPECTED_DROP_REASON = {
    "corrupt": "pdf_unreadable",
    "truncated": "pdf_unreadable",
    "encrypted": "pdf_encrypted",
    "empty": "pdf_empty",
    "scanned": "pdf_no_text",
    "huge": "pdf_too_large",
    "missing": "pdf_missing",
}
ENCRYPTED_PASSWORD = "secret"  # the user password of write_encrypted_pdf's file
HUGE_PAGES = 2000


def _raw_pdf(objects: list[bytes]) -> bytes:
    """A PDF file from object bodies (object 1 must be the catalog), with a correct xref table."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for offset in offsets:
        out += f"{offset:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def _sample_filing(pages: int = 3) -> pymupdf.Document:
    """A short, valid filing-like PDF with a text layer (the source for truncated/encrypted/scanned)."""
    doc = pymupdf.open()
    for n in range(1, pages + 1):
        page = doc.new_page(width=612, height=792)
        page.insert_text((72, 90), "ACME HOLDINGS, INC. FORM 10-K", fontname="hebo", fontsize=14)
        lines = [
            f"Item {n}. Section {n} of the annual report",
            "Net sales were $1,234 million in fiscal 2023 compared with $1,180 million in fiscal 2022.",
            "Purchases of property, plant and equipment were (215) million.",
        ]
        for i, line in enumerate(lines):
            page.insert_text((72, 130 + 18 * i), line, fontname="helv", fontsize=10)
        page.insert_text((300, 760), str(n), fontname="helv", fontsize=9)
    return doc


def write_corrupt_pdf(path: str | Path, *, seed: int = 0) -> Path:
    """A PDF header followed by random bytes: no objects, no xref; pymupdf cannot open it."""
    path = Path(path)
    path.write_bytes(b"%PDF-1.7\n" + random.Random(seed).randbytes(16_384) + b"\n%%EOF\n")
    return path


def write_truncated_pdf(path: str | Path, *, keep: float = 0.5, source: bytes | None = None) -> Path:
    """The first ``keep`` share of a valid PDF's bytes (as after an interrupted download)."""
    path = Path(path)
    if source is None:
        with _sample_filing(6) as doc:
            source = doc.tobytes(garbage=3, deflate=True, no_new_id=True)
    path.write_bytes(source[: max(16, int(len(source) * keep))])
    return path


def write_encrypted_pdf(path: str | Path, *, password: str = ENCRYPTED_PASSWORD) -> Path:
    """A valid filing encrypted with AES-256 that needs ``password`` to open."""
    path = Path(path)
    with _sample_filing() as doc:
        doc.save(
            path,
            encryption=pymupdf.PDF_ENCRYPT_AES_256,
            user_pw=password,
            owner_pw=password + "-owner",
            no_new_id=True,
        )
    return path


def write_empty_pdf(path: str | Path) -> Path:
    """A well-formed PDF with zero pages (crafted by hand: pymupdf refuses to save one)."""
    path = Path(path)
    path.write_bytes(
        _raw_pdf([b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [] /Count 0 >>"])
    )
    return path


def write_scanned_pdf(path: str | Path, *, pages: int = 2, dpi: int = 60) -> Path:
    """Pages that are only images of text (as from a scanner): no text layer at all."""
    path = Path(path)
    out = pymupdf.open()
    with _sample_filing(pages) as source:
        for page in source:
            pix = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY)
            target = out.new_page(width=page.rect.width, height=page.rect.height)
            target.insert_image(target.rect, pixmap=pix)
    save_pdf(out, path)
    out.close()
    return path


def write_huge_pdf(path: str | Path, *, pages: int = HUGE_PAGES) -> Path:
    """``pages`` near-empty pages sharing one content stream (written directly; ~0.1 s for 2,000)."""
    path = Path(path)
    first_page = 5
    kids = " ".join(f"{first_page + i} 0 R" for i in range(pages))
    stream = b"BT /F1 8 Tf 72 720 Td (This page is intentionally left blank.) Tj ET"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        f"<< /Length {len(stream)} >>\nstream\n".encode() + stream + b"\nendstream",
    ]
    page = (
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
        b"/Contents 4 0 R >>"
    )
    objects.extend([page] * pages)
    path.write_bytes(_raw_pdf(objects))
    return path


WRITERS = {
    "corrupt": write_corrupt_pdf,
    "truncated": write_truncated_pdf,
    "encrypted": write_encrypted_pdf,
    "empty": write_empty_pdf,
    "scanned": write_scanned_pdf,
    "huge": write_huge_pdf,
}


def bad_doc_id(kind: str) -> str:
    return f"BAD_{kind.upper()}_2023_10K"


def write_bad_pdf(kind: str, path: str | Path) -> Path | None:
    """Write the bad filing of ``kind`` to ``path`` (``missing`` writes nothing)."""
    if kind not in BAD_KINDS:
        raise ValueError(f"unknown bad-filing kind {kind!r}; choose from {', '.join(BAD_KINDS)}")
    if kind == "missing":
        return None
    return WRITERS[kind](path)


def write_bad_dataset(
    out_dir: str | Path, *, kinds: Iterable[str] = BAD_KINDS, seed: int = 0, hostile: bool = False
) -> Dataset:
    """The demo dataset plus one filing (and one question) per bad ``kind``.

    The bad filings' questions have ids ``bad_<kind>`` and documents ``BAD_<KIND>_2023_10K``
    (their ``documents.jsonl`` rows carry ``bad_kind``). Validation should drop exactly those
    questions, with ``EXPECTED_DROP_REASON[kind]``, and keep every demo question."""
    root = Path(out_dir)
    write_demo_dataset(root, hostile=hostile, seed=seed)
    questions: list[dict[str, Any]] = []
    documents: list[dict[str, Any]] = []
    for kind in kinds:
        doc_id = bad_doc_id(kind)
        write_bad_pdf(kind, root / PDF_DIR / f"{doc_id}.pdf")
        questions.append(
            {
                "financebench_id": f"bad_{kind}",
                "company": f"Bad {kind.title()} Co",
                "doc_name": doc_id,
                "question_type": "metrics-generated",
                "question_reasoning": "Information extraction",
                "domain_question_num": None,
                "question": f"What were Bad {kind.title()} Co's FY2023 net sales (the {kind} filing)?",
                "answer": "$1,234 million",
                "justification": f"Planted {kind} filing: validation should drop this question.",
                "dataset_subset_label": "BAD",
                "evidence": [
                    {
                        "evidence_text": "Net sales were $1,234 million",
                        "doc_name": doc_id,
                        "evidence_page_num": 0,
                        "evidence_text_full_page": "",
                    }
                ],
            }
        )
        documents.append(
            {
                "doc_name": doc_id,
                "company": f"Bad {kind.title()} Co",
                "gics_sector": "",
                "doc_type": "10k",
                "doc_period": 2023,
                "doc_link": "",
                "bad_kind": kind,
            }
        )
    with (root / QUESTIONS_FILE).open("a", encoding="utf-8") as fh:
        fh.writelines(json.dumps(row) + "\n" for row in questions)
    with (root / DOCUMENTS_FILE).open("a", encoding="utf-8") as fh:
        fh.writelines(json.dumps(row) + "\n" for row in documents)
    info = json.loads((root / INFO_FILE).read_text(encoding="utf-8"))
    info.update(name="demo-bad", bad_kinds=list(kinds))
    (root / INFO_FILE).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return load_financebench(root)
