"""Checks run before any model is called. A question that cannot be answered fairly is
dropped with a reason; the rest of the dataset goes on.

Dropped when: the row is malformed, its PDF is missing, unreadable (corrupt, damaged,
encrypted, zero pages, no text layer, more pages than ``max_pages``), an evidence page is
beyond the PDF's last page, its id repeats an earlier question's id, or its text repeats an
earlier question on the same document exactly or nearly (rapidfuzz ratio at or above
``similarity_threshold``; questions that mention different numbers, e.g. FY2018 vs FY2019,
are never near-duplicates). The first of a group of duplicates is kept.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field
from rapidfuzz import fuzz
from rapidfuzz.utils import default_process

from bench.datasets.models import Dataset, DroppedQuestion, Question
from pageindex.tree.errors import (
    NotAPDFError,
    PDFCorruptError,
    PDFEmptyError,
    PDFEncryptedError,
    PDFError,
    PDFMissingError,
    PDFNoTextError,
)
from pageindex.tree.pdf import is_scanned_page, open_pdf

if TYPE_CHECKING:
    import pymupdf

DEFAULT_SIMILARITY_THRESHOLD = 0.92
DEFAULT_MAX_PAGES = 1000
TEXT_PROBE_PAGES = 40  # pages sampled (evenly) when looking for a text layer

DROP_REASONS: dict[str, str] = {
    "malformed": "the row lacks required fields or is not valid JSON",
    "duplicate_id": "another question already uses this id",
    "pdf_missing": "the filing's PDF is not in pdfs/",
    "pdf_unreadable": "the PDF cannot be opened or is damaged",
    "pdf_encrypted": "the PDF needs a password",
    "pdf_empty": "the PDF has no pages",
    "pdf_no_text": "the PDF has no text layer (scanned images only)",
    "pdf_too_large": "the PDF has more pages than the limit",
    "evidence_page_out_of_range": "a gold evidence page is beyond the PDF's last page",
    "duplicate": "the same question text already appears for this document",
    "near_duplicate": "a nearly identical question already appears for this document",
}


_ERROR_REASONS: dict[type[PDFError], str] = {
    PDFMissingError: "pdf_missing",
    NotAPDFError: "pdf_unreadable",
    PDFCorruptError: "pdf_unreadable",
    PDFEncryptedError: "pdf_encrypted",
    PDFEmptyError: "pdf_empty",
}


class PdfCheck(BaseModel):
    """What opening a PDF once told us."""

    path: str
    ok: bool
    page_count: int = 0
    reason: str | None = None  # a DROP_REASONS key when not ok
    detail: str = ""


class ValidationResult(BaseModel):
    kept: list[Question] = Field(default_factory=list)
    dropped: list[DroppedQuestion] = Field(default_factory=list)
    pdfs: dict[str, PdfCheck] = Field(default_factory=dict)  # doc id -> check

    def counts(self) -> dict[str, int]:
        """Dropped questions per reason."""
        return dict(Counter(d.reason for d in self.dropped))


def _sampled(pages: int) -> range:
    """The pages looked at for a text layer: about ``TEXT_PROBE_PAGES`` of them, evenly spread."""
    return range(0, pages, max(1, pages // TEXT_PROBE_PAGES))


def _has_text(doc: pymupdf.Document) -> bool:
    """Whether a sampled page has a text layer: some text, and more than a scanner's stamp or a page
    number over a page image (:func:`~pageindex.tree.pdf.is_scanned_page`, as the tree builder sees it)."""
    for i in _sampled(doc.page_count):
        page = doc[i]
        text = page.get_text("text")
        if text.strip() and not is_scanned_page(page, text):
            return True
    return False


def check_pdf(
    path: str | Path,
    *,
    max_pages: int | None = DEFAULT_MAX_PAGES,
    allow_repaired: bool = False,
    require_text: bool = True,
) -> PdfCheck:
    """Open ``path`` with pymupdf and say whether a tree can be built from it."""
    path = Path(path)

    def bad(reason: str, detail: str, pages: int = 0) -> PdfCheck:
        return PdfCheck(path=str(path), ok=False, page_count=pages, reason=reason, detail=f"{path}: {detail}")

    try:
        doc = open_pdf(path)  # the tree builder's own checks, so both agree on what is unreadable
    except PDFError as exc:
        reason = _ERROR_REASONS.get(type(exc), "pdf_unreadable")
        hint = missing_hint(path) if reason == "pdf_missing" else ""
        return PdfCheck(path=str(path), ok=False, reason=reason, detail=f"{exc}{hint}")
    with doc:
        pages = doc.page_count
        if doc.is_repaired and not allow_repaired:
            return bad("pdf_unreadable", "damaged (truncated or broken cross-reference table)", pages)
        if max_pages is not None and pages > max_pages:
            return bad("pdf_too_large", f"has {pages} pages, more than the limit of {max_pages}", pages)
        try:
            if require_text and not _has_text(doc):
                # the tree builder's own words for it (pageindex build says the same of this file)
                sampled = len(_sampled(pages))
                detail = f"no text on the {sampled} of its {pages} pages sampled" if sampled < pages else None
                return PdfCheck(
                    path=str(path), ok=False, page_count=pages, reason="pdf_no_text",
                    detail=str(PDFNoTextError(path, detail)),
                )  # fmt: skip
        except Exception as exc:
            return bad("pdf_unreadable", f"cannot extract text ({exc})", pages)
        return PdfCheck(path=str(path), ok=True, page_count=pages)


def missing_hint(path: Path) -> str:
    """What lies beside a filing that is not there, when it says why (else ""): the partial download of an
    interrupted ``datasets fetch`` (``X.pdf.part``), a doc_name written with its ``.pdf`` (the file looked
    for is ``X.pdf.pdf``), or a file whose name differs only in case. Each was only "file not found"."""
    try:
        if path.with_name(path.name + ".part").is_file():
            return f"; {path.name}.part is a partial download: run pageindex bench datasets fetch again"
        if path.name.lower().endswith(".pdf.pdf") and path.with_name(path.name[:-4]).is_file():
            return f"; {path.name[:-4]} is there: the doc_name must not end in .pdf"
        if path.parent.is_dir():
            lower = path.name.lower()
            same = [p.name for p in path.parent.iterdir() if p.name.lower() == lower and p.name != path.name]
            if same:
                return f"; {same[0]} is there (the doc_name must match its case)"
    except OSError:
        pass
    return ""


_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def _numbers(text: str) -> tuple[str, ...]:
    return tuple(_NUMBER.findall(text))


def _duplicates(questions: list[Question], threshold: float) -> tuple[list[Question], list[DroppedQuestion]]:
    kept: list[Question] = []
    dropped: list[DroppedQuestion] = []
    seen_ids: set[str] = set()
    by_doc: dict[str, list[tuple[Question, str, tuple[str, ...]]]] = {}
    for q in questions:
        if q.question_id in seen_ids:
            detail = f"question id {q.question_id} appears more than once; the first is kept"
            dropped.append(DroppedQuestion.of(q, "duplicate_id", detail))
            continue
        norm = default_process(q.question)
        numbers = _numbers(q.question)
        earlier = by_doc.setdefault(q.doc_id, [])
        hit: DroppedQuestion | None = None
        for other, other_norm, other_numbers in earlier:
            if norm == other_norm:
                hit = DroppedQuestion.of(q, "duplicate", f"same text as {other.question_id} on {q.doc_id}")
                break
            if numbers == other_numbers:
                score = fuzz.ratio(norm, other_norm, score_cutoff=threshold * 100) / 100
                if score >= threshold:
                    hit = DroppedQuestion.of(
                        q,
                        "near_duplicate",
                        f"{score:.2f} similar to {other.question_id} on {q.doc_id} "
                        f"(threshold {threshold:.2f})",
                    )
                    break
        if hit:
            dropped.append(hit)
            continue
        seen_ids.add(q.question_id)
        earlier.append((q, norm, numbers))
        kept.append(q)
    return kept, dropped


def validate_dataset(
    dataset: Dataset,
    *,
    similarity_threshold: float = DEFAULT_SIMILARITY_THRESHOLD,
    max_pages: int | None = DEFAULT_MAX_PAGES,
    allow_repaired: bool = False,
    require_text: bool = True,
) -> ValidationResult:
    """Split ``dataset.questions`` into kept and dropped (with reasons), in dataset order.

    Each PDF is opened once. Malformed rows found by the loader are reported first."""
    dropped: list[DroppedQuestion] = list(dataset.malformed)
    pdfs: dict[str, PdfCheck] = {}
    survivors: list[Question] = []
    for q in dataset.questions:
        check = pdfs.get(q.doc_id)
        if check is None:
            check = check_pdf(
                dataset.pdf_path(q.doc_id),
                max_pages=max_pages,
                allow_repaired=allow_repaired,
                require_text=require_text,
            )
            pdfs[q.doc_id] = check
        if not check.ok:
            dropped.append(DroppedQuestion.of(q, check.reason or "pdf_unreadable", check.detail))
            continue
        beyond = [p for p in q.evidence_pages if p < 1 or p > check.page_count]
        if beyond:
            numbers = ", ".join(str(p - 1) for p in beyond)  # as the row wrote them: zero-based
            pages = ", ".join(str(p) for p in beyond)
            are = "is page" if len(beyond) == 1 else "are pages"
            detail = (  # it said "evidence page(s) [4] (1-based)" of a row that wrote 3, the page it meant
                f"evidence_page_num {numbers} {are} {pages}, beyond the {check.page_count} pages of "
                f"{q.doc_id}.pdf (evidence_page_num counts from 0: 0 to {check.page_count - 1} here)"
            )
            dropped.append(DroppedQuestion.of(q, "evidence_page_out_of_range", detail))
            continue
        survivors.append(q)
    kept, duplicates = _duplicates(survivors, similarity_threshold)
    dropped.extend(duplicates)
    return ValidationResult(kept=kept, dropped=dropped, pdfs=pdfs)
