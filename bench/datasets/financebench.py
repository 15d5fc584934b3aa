"""Load any FinanceBench-format directory: ``questions.jsonl``, ``documents.jsonl``, ``pdfs/``.

Rows are kept as close to upstream as possible: fields we do not model go to ``extra``.
A row that cannot be parsed does not stop the load; it is recorded in
``Dataset.malformed`` and validation reports it as dropped.
"""

from __future__ import annotations

import codecs
import hashlib
import json
import math
import os
from pathlib import Path
from typing import Any

from bench.datasets.models import Dataset, DatasetError, Document, DroppedQuestion, Question
from pageindex.wording import shortened

QUESTIONS_FILE = "questions.jsonl"
DOCUMENTS_FILE = "documents.jsonl"
PDF_DIR = "pdfs"
INFO_FILE = "dataset.json"  # optional: {"name": ..., ...} written by our generators

FINANCEBENCH_ENV = "PAGEINDEX_FINANCEBENCH"


def default_financebench_dir() -> Path | None:
    """The shared FinanceBench folder the scripts measure by default: ``$PAGEINDEX_FINANCEBENCH``, else
    ``../shared/financebench`` beside the repository (as the tests find it), when it holds
    ``questions.jsonl``; None otherwise."""
    beside = Path(__file__).resolve().parents[3] / "shared" / "financebench"
    path = Path(os.environ.get(FINANCEBENCH_ENV, beside))
    return path if (path / QUESTIONS_FILE).exists() else None


_QUESTION_KEYS = {"financebench_id", "company", "doc_name", "question_type", "question", "answer", "evidence"}
_DOCUMENT_KEYS = {"doc_name", "company", "gics_sector", "doc_type", "doc_period", "doc_link"}


class MalformedRow(ValueError):
    """A row of a JSONL file that does not have the fields we need."""


def dataset_hash(path: Path) -> str:
    """sha256 over the questions and documents files (names included, so swapping them changes it)."""
    return hash_dataset_files(hashlib.sha256(), path).hexdigest()


def hash_dataset_files(digest: Any, path: Path) -> Any:
    """Feed ``digest`` each of the questions and documents files: its name, then its bytes as a Unix
    tool writes them (:func:`unix_text`; none if it is missing), each part ended by a NUL. Returns
    ``digest``."""
    for name in (QUESTIONS_FILE, DOCUMENTS_FILE):
        file = path / name
        digest.update(name.encode() + b"\0")
        if file.is_file():
            digest.update(unix_text(file.read_bytes()))
        digest.update(b"\0")
    return digest


def unix_text(data: bytes) -> bytes:
    """A dataset file's bytes as written on Unix: UTF-8 with no byte-order mark and LF line ends. The
    same rows saved on Windows (a byte-order mark, CRLF, UTF-16; git's ``core.autocrlf`` checks them
    out so) are the same dataset, and runs over either copy compare and gate; they were ``not
    comparable: dataset content hash ...``. A file already so is hashed as it is (hashes unchanged)."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            data = data.decode("utf-16").encode("utf-8")
        except UnicodeDecodeError:  # not UTF-16 after all: its own bytes, as the loader refuses it
            return data
    return data.removeprefix(codecs.BOM_UTF8).replace(b"\r\n", b"\n")


def _text(row: dict[str, Any], key: str, *, required: bool = True) -> str:
    value = row.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise MalformedRow(f"missing field {key!r}")
        return ""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise MalformedRow(f"field {key!r} must be text, got {type(value).__name__}")
    if isinstance(value, float) and not math.isfinite(value):  # JSON's NaN: a gold answer "nan"
        raise MalformedRow(f"field {key!r} must be text, got {value!r}")
    return str(value)


def doc_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a filing's name, or None. A filing is ``pdfs/{doc_name}.pdf``, so its
    name is one file name: with a ``/`` (or ``\\``), ``../../x`` reaches a file outside ``pdfs/``, and a
    download from a mirror would write there."""
    if "/" in name or "\\" in name or "\0" in name:
        return f"doc_name {name!r} is not a file name: the filing must be pdfs/<doc_name>.pdf, with no folder"
    return None


def _doc_name(row: dict[str, Any]) -> str:
    name = _text(row, "doc_name")
    if problem := doc_name_problem(name):
        raise MalformedRow(problem)
    return name


def parse_document(row: dict[str, Any]) -> Document:
    """One ``documents.jsonl`` row -> ``Document``."""
    return Document(
        doc_id=_doc_name(row),
        company=_text(row, "company", required=False),
        doc_type=_text(row, "doc_type", required=False).lower(),
        period=_text(row, "doc_period", required=False),
        sector=_text(row, "gics_sector", required=False),
        link=_text(row, "doc_link", required=False),
        extra={k: v for k, v in row.items() if k not in _DOCUMENT_KEYS},
    )


def _evidence(row: dict[str, Any], doc_id: str) -> tuple[list[int], list[str], list[str]]:
    evidence = row.get("evidence") or []
    if not isinstance(evidence, list):
        raise MalformedRow("field 'evidence' must be a list")
    pages: list[int] = []
    texts: list[str] = []
    other_docs: list[str] = []
    for item in evidence:
        if not isinstance(item, dict):
            raise MalformedRow("each evidence item must be an object")
        page = item.get("evidence_page_num")
        if isinstance(page, bool) or not isinstance(page, int) or page < 0:
            said = f"the text {page!r} (write it as a JSON number: {page.strip()})" if (
                isinstance(page, str) and page.strip().isdigit()
            ) else repr(page)  # "got '2'" did not say that the quotes were what was wrong
            if isinstance(page, float) and page.is_integer() and page >= 0:  # pandas: 2.0
                said = f"{page!r} (write it as a whole number: {int(page)})"
            elif "evidence_page_num" not in item:  # it said "got None"
                said = "none (each evidence item needs one)"
            raise MalformedRow(f"evidence_page_num must be a zero-based page number, got {said}")
        if item.get("doc_name") and item["doc_name"] != doc_id:
            other_docs.append(str(item["doc_name"]))
            continue  # evidence in another filing cannot be checked against this one
        if page + 1 not in pages:
            pages.append(page + 1)
        text = item.get("evidence_text")
        if isinstance(text, str) and text.strip():
            texts.append(text)
    return pages, texts, other_docs


def parse_question(row: dict[str, Any], documents: dict[str, Document]) -> Question:
    """One ``questions.jsonl`` row (upstream FinanceBench fields) -> ``Question`` with 1-based pages."""
    question_id = _text(row, "financebench_id")
    doc_id = _doc_name(row)
    pages, texts, other_docs = _evidence(row, doc_id)
    extra = {k: v for k, v in row.items() if k not in _QUESTION_KEYS}
    if other_docs:
        extra["evidence_in_other_docs"] = other_docs
    doc = documents.get(doc_id)
    return Question(
        question_id=question_id,
        question=_text(row, "question"),
        gold_answer=_text(row, "answer"),
        question_type=_text(row, "question_type", required=False),
        doc_id=doc_id,
        doc_type=doc.doc_type if doc else "",
        evidence_pages=pages,
        evidence_texts=texts,
        company=_text(row, "company", required=False) or (doc.company if doc else ""),
        extra=extra,
    )


def text_lines(file: Path) -> list[tuple[int, str | None, str | None]]:
    """(line number, text, problem) for every line of a JSON-lines file as any tool writes it: UTF-8
    with or without a byte-order mark, UTF-16 with its mark (Windows PowerShell's ``>``), LF or CRLF
    ends. ``text`` is None where a line is not UTF-8 text, and ``problem`` says so (one row's problem,
    not the whole file's). Raises :class:`DatasetError` for a file that cannot be read at all. The
    datasets' loader and ``bench judge`` read their files through it."""
    out: list[tuple[int, str | None, str | None]] = []
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise DatasetError(f"{file}: cannot read ({exc.strerror or exc})") from exc
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):  # Windows PowerShell's `>` writes so
        try:  # every row was "not UTF-8 text" or "not valid JSON", and the file had one row more than it has
            data = data.decode("utf-16").encode("utf-8")
        except UnicodeDecodeError as exc:
            said = f"UTF-16 text that cannot be decoded ({exc.reason}); save it as UTF-8"
            raise DatasetError(f"{file}: {said}") from None
    for number, raw in enumerate(data.splitlines(), start=1):
        try:  # one row that is not UTF-8 is that row's problem, not the whole file's
            out.append((number, raw.decode("utf-8-sig" if number == 1 else "utf-8"), None))
        except UnicodeDecodeError as exc:
            out.append((number, None, f"line {number} is not UTF-8 text (byte {exc.start + 1})"))
    return out


def _rows(file: Path) -> list[tuple[int, dict[str, Any] | str]]:
    """(line number, parsed object or an error message) for every non-blank line."""
    out: list[tuple[int, dict[str, Any] | str]] = []
    for number, line, problem in text_lines(file):
        if line is None:
            out.append((number, problem or f"line {number} cannot be read"))
            continue
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            out.append((number, f"line {number} is not valid JSON ({exc.msg})"))
            continue
        out.append((number, value if isinstance(value, dict) else f"line {number} is not a JSON object"))
    return out


def load_documents(path: Path, problems: list[str] | None = None) -> dict[str, Document]:
    """``documents.jsonl`` as a dict by doc id; malformed rows are skipped (questions on them
    still load, with a bare document), each said in ``problems`` when given, as is a repeated doc_name
    (the first row is kept)."""
    file = path / DOCUMENTS_FILE
    documents: dict[str, Document] = {}
    lines: dict[str, int] = {}
    said = problems if problems is not None else []
    if not file.exists():
        return documents
    for number, row in _rows(file):
        if isinstance(row, str):
            said.append(f"{DOCUMENTS_FILE} {row}; the row is ignored")
            continue
        try:
            doc = parse_document(row)
        except MalformedRow as exc:
            said.append(f"{DOCUMENTS_FILE} line {number}: {exc}; the row is ignored")
            continue
        if doc.doc_id in documents:
            said.append(
                f"{DOCUMENTS_FILE} line {number}: doc_name {doc.doc_id!r} repeats line {lines[doc.doc_id]}; "
                "the first row is kept"
            )
            continue
        documents[doc.doc_id] = doc
        lines[doc.doc_id] = number
    return documents


def _unlisted(path: Path, questions: list[Question], documents: dict[str, Document]) -> list[str]:
    """The filings questions name that ``documents.jsonl`` does not list (they have no doc type,
    so a summary files them under none), said in one line."""
    missing = [doc for doc in dict.fromkeys(q.doc_id for q in questions) if doc not in documents]
    if not missing:
        return []
    if not (path / DOCUMENTS_FILE).exists():
        return [f"no {DOCUMENTS_FILE}: the questions' filings have no doc type, company or period"]
    return [
        f"{DOCUMENTS_FILE} does not list {len(missing)} of the questions' filings ({shortened(missing, 5)}): "
        "their doc type, company and period are unknown"
    ]


def _dataset_name(path: Path, name: str | None) -> str:
    if name:
        return name
    info = path / INFO_FILE
    if info.exists():
        try:
            value = json.loads(info.read_text(encoding="utf-8-sig")).get("name")
        except (OSError, ValueError, AttributeError):
            value = None
        if isinstance(value, str) and value:
            return value
    return path.resolve().name


def load_financebench(path: str | Path, *, name: str | None = None) -> Dataset:
    """Load a FinanceBench-format directory. Raises ``DatasetError`` only when there is no
    readable ``questions.jsonl``; bad rows are kept aside in ``Dataset.malformed``."""
    root = Path(path)
    questions_file = root / QUESTIONS_FILE
    if root.is_file():
        raise DatasetError(
            f"{root} is a file; give the dataset's folder (the one holding {QUESTIONS_FILE} and pdfs/)"
        )
    if not root.is_dir():
        raise DatasetError(f"{root}: no such dataset directory")
    if not questions_file.exists():
        raise DatasetError(f"{root}: no {QUESTIONS_FILE} (expected a FinanceBench-format directory)")
    problems: list[str] = []
    documents = load_documents(root, problems)
    questions: list[Question] = []
    malformed: list[DroppedQuestion] = []
    for number, row in _rows(questions_file):
        where = f"{QUESTIONS_FILE} line {number}"
        if isinstance(row, str):
            detail = f"{QUESTIONS_FILE} {row}"  # as a row's own problems: "questions.jsonl line 3: ..."
            malformed.append(DroppedQuestion(question_id=f"line-{number}", reason="malformed", detail=detail))
            continue
        try:
            questions.append(parse_question(row, documents))
        except MalformedRow as exc:
            qid = row.get("financebench_id")
            qid = str(qid) if isinstance(qid, str | int) and str(qid).strip() else f"line-{number}"
            kind = row.get("question_type")  # kept where readable: a --question-type selection takes it
            malformed.append(DroppedQuestion(
                question_id=qid, reason="malformed", detail=f"{where}: {exc}",
                question_type=kind if isinstance(kind, str) and kind.strip() else None,
            ))  # fmt: skip
    return Dataset(
        name=_dataset_name(root, name),
        path=root,
        sha256=dataset_hash(root),
        questions=questions,
        documents=documents,
        malformed=malformed,
        problems=[*pdf_folder_problem(root), *problems, *_unlisted(root, questions, documents)],
    )


def pdf_folder_problem(root: Path) -> list[str]:
    """What is wrong with ``root``'s pdfs/ when it is no folder (every question's filing is then
    dropped as missing, one by one, and this says why), or nothing."""
    pdfs = root / PDF_DIR
    try:
        if pdfs.is_dir():
            return []
        from pageindex.tree.pdf import broken_link  # pymupdf's import, only for a dataset this broken

        link = broken_link(pdfs)
        what = f"it is {link}" if link else "it is a file" if pdfs.exists() else "there is none"
    except OSError as exc:
        what = exc.strerror or str(exc)
    return [
        f"{pdfs} is not a folder ({what}): the filings are looked for as {PDF_DIR}/<doc_name>.pdf, so every "
        "question's filing is missing"
    ]
