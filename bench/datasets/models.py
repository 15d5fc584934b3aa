"""The shapes every part of the harness uses for a dataset: questions, documents, the dataset.

Pages are always 1-based PDF pages here (FinanceBench files store them zero-based; the
loader converts).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field


class Question(BaseModel):
    """One benchmark question about one document."""

    question_id: str
    question: str
    gold_answer: str
    question_type: str = ""  # metrics-generated, domain-relevant, novel-generated, ...
    doc_id: str
    doc_type: str = ""  # 10k, 10q, 8k, earnings, ...
    evidence_pages: list[int] = Field(default_factory=list)  # 1-based PDF pages
    evidence_texts: list[str] = Field(default_factory=list)
    company: str = ""
    extra: dict[str, Any] = Field(default_factory=dict)  # upstream fields we do not model


class Document(BaseModel):
    """One filing of a dataset (a row of ``documents.jsonl``)."""

    doc_id: str
    company: str = ""
    doc_type: str = ""
    period: str = ""  # fiscal year or period as written upstream, e.g. "2018"
    sector: str = ""
    link: str = ""
    extra: dict[str, Any] = Field(default_factory=dict)


class DroppedQuestion(BaseModel):
    """A question left out before any model is called, and why."""

    question_id: str
    reason: str  # short code: malformed, pdf_missing, pdf_unreadable, ... (see validation.DROP_REASONS)
    detail: str = ""  # one sentence naming the file or question it concerns
    question_type: str | None = None  # so summaries can count drops per group
    doc_type: str | None = None

    @classmethod
    def of(cls, question: Question, reason: str, detail: str = "") -> DroppedQuestion:
        return cls(
            question_id=question.question_id,
            reason=reason,
            detail=detail,
            question_type=question.question_type or None,
            doc_type=question.doc_type or None,
        )


class Dataset(BaseModel):
    """A loaded dataset: questions and documents plus where their PDFs live."""

    name: str
    path: Path
    sha256: str  # hash of the questions and documents files
    questions: list[Question] = Field(default_factory=list)
    documents: dict[str, Document] = Field(default_factory=dict)
    malformed: list[DroppedQuestion] = Field(default_factory=list)  # rows the loader could not parse
    # what is wrong that drops no question (a documents.jsonl row ignored, a filing it does not list)
    problems: list[str] = Field(default_factory=list)

    def pdf_path(self, doc_id: str) -> Path:
        """Where the PDF of ``doc_id`` is (or should be): ``<path>/pdfs/<doc_id>.pdf``."""
        return self.path / "pdfs" / f"{doc_id}.pdf"

    def document(self, doc_id: str) -> Document:
        """The document row, or a bare one when ``documents.jsonl`` does not list it."""
        return self.documents.get(doc_id) or Document(doc_id=doc_id)

    def select(self, question_types: Sequence[str] = (), question_ids: Sequence[str] = ()) -> Dataset:
        """This dataset with only the questions of these types and ids (``--question-type``,
        ``--question-id``; none given: all), and only the malformed rows they would take: a row
        whose type or id could be read and matches, so a run of one question does not report every
        bad row of the file as its own drops, and a malformed row asked for by id is said as such."""

        def taken(row: Question | DroppedQuestion) -> bool:
            return (not question_types or row.question_type in question_types) and (
                not question_ids or row.question_id in question_ids
            )

        return self.model_copy(
            update={
                "questions": [q for q in self.questions if taken(q)],
                "malformed": [m for m in self.malformed if taken(m)],
            }
        )

    def doc_ids(self) -> list[str]:
        """The documents the questions use, in order of first use."""
        return list(dict.fromkeys(q.doc_id for q in self.questions))


class DatasetError(Exception):
    """A dataset directory that cannot be loaded at all (missing or unreadable questions file)."""
