"""Download the public FinanceBench files and lay them out as a FinanceBench-format directory.

``fetch_financebench(DIR)`` fetches the questions file, the document-information file and every
PDF the questions use, from ``base_url`` (default: the patronus-ai/financebench repository on
GitHub). Downloads go to ``<file>.part`` and resume with an HTTP ``Range`` request after an
interruption; a finished file's size and sha256 go into ``manifest.json``. A re-run skips files
whose size and hash still match the manifest and downloads again those that do not.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal
from urllib.parse import quote

import httpx
from pydantic import BaseModel, Field

from bench.datasets.financebench import (
    DOCUMENTS_FILE,
    INFO_FILE,
    PDF_DIR,
    QUESTIONS_FILE,
    doc_name_problem,
)
from pageindex.atomic import missing_folders, remove_empty, write_atomic
from pageindex.llm.redact import redact, redact_url
from pageindex.wording import counted

DEFAULT_BASE_URL = "https://raw.githubusercontent.com/patronus-ai/financebench/main"
REMOTE_QUESTIONS = "data/financebench_open_source.jsonl"
REMOTE_DOCUMENTS = "data/financebench_document_information.jsonl"
REMOTE_PDF = "pdfs/{doc_name}.pdf"
RAW_DIR = "raw"  # upstream files, unchanged
MANIFEST_FILE = "manifest.json"


class FetchError(Exception):
    """A file could not be downloaded (the message names the URL, credentials masked, and the
    problem)."""

    def __init__(self, message: str) -> None:
        super().__init__(redact(message))


class _Incomplete(Exception):
    pass


class ManifestEntry(BaseModel):
    url: str
    size: int
    sha256: str


class Manifest(BaseModel):
    base_url: str = ""
    files: dict[str, ManifestEntry] = Field(default_factory=dict)  # path relative to the dataset dir


FetchStatus = Literal["skipped", "downloaded", "resumed", "replaced", "failed"]


class FetchEvent(BaseModel):
    """One file finished (or failed); ``replaced`` means a corrupt copy was downloaded again."""

    path: str
    status: FetchStatus
    size: int = 0
    detail: str = ""


class FetchReport(BaseModel):
    path: str
    events: list[FetchEvent] = Field(default_factory=list)
    questions: int = 0
    documents: int = 0

    def count(self, status: FetchStatus) -> int:
        return sum(1 for e in self.events if e.status == status)

    @property
    def failed(self) -> list[FetchEvent]:
        return [e for e in self.events if e.status == "failed"]


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def load_manifest(root: Path) -> Manifest:
    file = root / MANIFEST_FILE
    if not file.exists():
        return Manifest()
    try:
        return Manifest.model_validate_json(file.read_text(encoding="utf-8"))
    except ValueError:
        return Manifest()  # an unreadable manifest only costs a re-download


def save_manifest(root: Path, manifest: Manifest) -> None:
    write_atomic(root / MANIFEST_FILE, manifest.model_dump_json(indent=2) + "\n")


def is_verified(root: Path, rel: str, manifest: Manifest) -> bool:
    """True when ``rel`` exists with the size and sha256 the manifest recorded."""
    entry = manifest.files.get(rel)
    file = root / rel
    return (
        entry is not None
        and file.is_file()
        and file.stat().st_size == entry.size
        and sha256_file(file) == entry.sha256
    )


_CONTENT_RANGE = re.compile(r"bytes\s+(\d+)-(\d+)/(\d+|\*)")


def download(client: httpx.Client, url: str, dest: Path, *, retries: int = 3, backoff: float = 0.5) -> bool:
    """Download ``url`` to ``dest`` through ``dest.part``, resuming from a partial ``.part``
    with an HTTP Range request (also after a connection drop mid-file). Returns whether
    any bytes were reused from an earlier, interrupted attempt."""
    part = dest.with_name(dest.name + ".part")
    resumed = False
    last: Exception | None = None
    for attempt in range(retries + 1):
        if attempt:
            time.sleep(backoff * 2 ** (attempt - 1))
        offset = part.stat().st_size if part.exists() else 0
        # identity encoding: byte ranges then count the bytes we store
        headers = {"Accept-Encoding": "identity"} | ({"Range": f"bytes={offset}-"} if offset else {})
        try:
            with client.stream("GET", url, headers=headers) as response:
                status = response.status_code
                if status == 416 and offset:  # nothing after offset: complete, or a stale .part
                    match = re.search(r"/(\d+)", response.headers.get("content-range", ""))
                    if match and int(match.group(1)) == offset:
                        break
                    part.unlink()
                    continue
                if status >= 500 or status == 429:
                    raise _Incomplete(f"HTTP {status}")
                if status not in (200, 206):
                    raise FetchError(f"{url}: HTTP {status}")
                total: int | None = None
                mode = "wb"
                if status == 206:
                    match = _CONTENT_RANGE.match(response.headers.get("content-range", ""))
                    if not match or int(match.group(1)) != offset:
                        part.unlink(missing_ok=True)  # a range we did not ask for: start over
                        raise _Incomplete("unexpected Content-Range")
                    total = None if match.group(3) == "*" else int(match.group(3))
                    mode = "ab"
                    resumed = resumed or offset > 0
                elif "content-length" in response.headers:
                    total = int(response.headers["content-length"])
                dest.parent.mkdir(parents=True, exist_ok=True)
                with part.open(mode) as fh:
                    for chunk in response.iter_raw():  # as received, so a drop loses nothing kept
                        fh.write(chunk)
            size = part.stat().st_size
            if total is not None and size != total:
                raise _Incomplete(f"got {size} of {total} bytes")
            break
        except (httpx.TransportError, _Incomplete) as exc:
            last = exc
    else:
        raise FetchError(f"{url}: download failed after {counted(retries + 1, 'attempt')} ({last})")
    part.replace(dest)
    return resumed


class _Fetcher:
    def __init__(
        self,
        root: Path,
        base_url: str,
        client: httpx.Client,
        retries: int,
        backoff: float,
        progress: Callable[[FetchEvent], None] | None,
    ) -> None:
        self.root = root
        self.base_url = base_url.rstrip("/")
        self.client = client
        self.retries = retries
        self.backoff = backoff
        self.progress = progress
        self.manifest = load_manifest(root)
        self.manifest.base_url = redact_url(self.base_url) or ""  # stored: never a credential
        self.report = FetchReport(path=str(root))

    def emit(self, event: FetchEvent) -> None:
        self.report.events.append(event)
        if self.progress:
            self.progress(event)

    def get(self, rel: str, remote: str, *, check: Callable[[Path], str | None]) -> bool:
        """Make ``root/rel`` a verified copy of ``base_url/remote``; False if it failed. ``check``
        says what is wrong with a file's content (None: nothing): a file it finds wrong is never
        recorded as done, and one recorded before is downloaded again (a questions file that was an
        HTML page was kept as verified, so every re-run skipped it and failed the same way)."""
        url = f"{self.base_url}/{remote}"
        dest = self.root / rel
        if is_verified(self.root, rel, self.manifest) and check(dest) is None:
            self.emit(FetchEvent(path=rel, status="skipped", size=dest.stat().st_size))
            return True
        replaced = dest.exists()
        if replaced:
            dest.unlink()  # present but not matching the manifest: corrupt or unknown
        if rel in self.manifest.files:
            self.manifest.files.pop(rel)
            save_manifest(self.root, self.manifest)  # never left naming a file that is gone
        try:
            resumed = download(self.client, url, dest, retries=self.retries, backoff=self.backoff)
            if problem := check(dest):
                dest.unlink()
                raise FetchError(f"{url}: {problem}")
        except FetchError as exc:
            self.emit(FetchEvent(path=rel, status="failed", detail=str(exc)))
            return False
        size = dest.stat().st_size
        entry = ManifestEntry(url=redact_url(url) or url, size=size, sha256=sha256_file(dest))
        self.manifest.files[rel] = entry
        save_manifest(self.root, self.manifest)
        status: FetchStatus = "replaced" if replaced else "resumed" if resumed else "downloaded"
        self.emit(FetchEvent(path=rel, status=status, size=size))
        return True


def _parse_jsonl(path: Path) -> list[dict] | str:
    """The rows of a downloaded JSONL file, or what is wrong with it: not UTF-8 JSON objects, one a
    line (it was an internal error: a list row, a byte that is not UTF-8), or an HTML page (a
    ``--base-url`` that is a web page's address, a sign-in page)."""
    rows = []
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        return f"not UTF-8 text (byte {exc.start + 1})"
    if re.match(r"\s*<(?:!doctype\s+html|html|head|body)\b", text, re.IGNORECASE):
        return "an HTML page, not JSON lines (is --base-url the address of the raw files?)"
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                return f"line {number} is not valid JSON ({exc.msg})"
            if not isinstance(row, dict):
                return f"line {number} is not a JSON object"
            rows.append(row)
    return rows


def _jsonl_problem(path: Path) -> str | None:
    rows = _parse_jsonl(path)
    return rows if isinstance(rows, str) else None


def _pdf_problem(path: Path) -> str | None:
    """Why ``path`` is no whole PDF, as validation would drop it (``pdf_unreadable``), or None: a file
    cut short by the server (its full length sent, no ``%%EOF`` at the end) was recorded as a verified
    download, so a re-run skipped it for good, also once the source served it whole."""
    from pageindex.tree.pdf import starts_as_pdf

    if not starts_as_pdf(path):
        return "not a PDF (an HTML error page or a Git LFS pointer?)"
    try:
        with path.open("rb") as fh:
            fh.seek(max(0, path.stat().st_size - 4096))
            tail = fh.read()
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if b"%%EOF" not in tail:
        return "a PDF cut short (no %%EOF marker at the end): the source's copy is truncated"
    return None


def _read_jsonl(path: Path) -> list[dict]:
    """The rows of a JSONL file :func:`_jsonl_problem` passed."""
    rows = _parse_jsonl(path)
    if isinstance(rows, str):
        raise FetchError(f"{path}: {rows}")
    return rows


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    """Written whole (temp file + rename), as the demo's files are: a re-run's rewrite that is killed or
    fails part-way (a full disk) left a torn questions.jsonl, of fewer questions, for any run to read."""
    write_atomic(path, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))


def fetch_financebench(
    out_dir: str | Path,
    *,
    base_url: str = DEFAULT_BASE_URL,
    retries: int = 3,
    backoff: float = 0.5,
    timeout: float = 60.0,
    client: httpx.Client | None = None,
    progress: Callable[[FetchEvent], None] | None = None,
) -> FetchReport:
    """Download FinanceBench into ``out_dir`` (``questions.jsonl``, ``documents.jsonl``,
    ``pdfs/``, plus ``raw/`` upstream files and ``manifest.json``). Safe to re-run: it resumes
    and verifies. A PDF that fails is reported in the result and does not stop the others;
    failing to get the two metadata files raises ``FetchError``."""
    root = Path(out_dir)
    made = missing_folders(root / RAW_DIR, root / PDF_DIR)  # taken back if nothing could be fetched
    (root / RAW_DIR).mkdir(parents=True, exist_ok=True)
    (root / PDF_DIR).mkdir(parents=True, exist_ok=True)
    own_client = client is None
    http = client or httpx.Client(timeout=httpx.Timeout(timeout, connect=15.0), follow_redirects=True)
    try:
        fetcher = _Fetcher(root, base_url, http, retries, backoff, progress)
        raw_questions = f"{RAW_DIR}/{Path(REMOTE_QUESTIONS).name}"
        raw_documents = f"{RAW_DIR}/{Path(REMOTE_DOCUMENTS).name}"
        for rel, remote in ((raw_questions, REMOTE_QUESTIONS), (raw_documents, REMOTE_DOCUMENTS)):
            if not fetcher.get(rel, remote, check=_jsonl_problem):
                remove_empty(made)  # an unreachable server left empty raw/ and pdfs/ behind
                raise FetchError(fetcher.report.failed[-1].detail)
        questions = _read_jsonl(root / raw_questions)
        doc_names = list(dict.fromkeys(str(q["doc_name"]) for q in questions if q.get("doc_name")))
        for name in [n for n in doc_names if doc_name_problem(n)]:  # never a file outside pdfs/
            doc_names.remove(name)
            detail = f"not downloaded: {doc_name_problem(name)}"
            fetcher.emit(FetchEvent(path=f"{PDF_DIR}/{name}.pdf", status="failed", detail=detail))
        used = set(doc_names)
        documents = [d for d in _read_jsonl(root / raw_documents) if d.get("doc_name") in used]
        _write_jsonl(root / QUESTIONS_FILE, questions)
        _write_jsonl(root / DOCUMENTS_FILE, documents)
        info = {"name": "financebench", "source": redact_url(fetcher.base_url)}
        write_atomic(root / INFO_FILE, json.dumps(info, indent=2) + "\n")
        for doc_name in doc_names:
            pdf_file, pdf_url = f"{PDF_DIR}/{doc_name}.pdf", REMOTE_PDF.format(doc_name=quote(doc_name))
            fetcher.get(pdf_file, pdf_url, check=_pdf_problem)
        fetcher.report.questions = len(questions)
        fetcher.report.documents = len(doc_names)
        return fetcher.report
    finally:
        if own_client:
            http.close()
