"""The FinanceBench downloader against a local HTTP server (127.0.0.1) that this test starts.

The server serves a small upstream-shaped tree (the demo filings as if they were FinanceBench)
and supports Range requests; it can cut a response short, ignore Range, or 404.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote

import pytest
from typer.testing import CliRunner

from bench.datasets import load_financebench, validate_dataset
from bench.datasets.demo import write_demo_dataset
from bench.datasets.fetch import (
    MANIFEST_FILE,
    REMOTE_DOCUMENTS,
    REMOTE_QUESTIONS,
    FetchError,
    fetch_financebench,
    load_manifest,
)

DOCS = ["NORTHWIND_2023_10K", "BLUEFIN_2022_10K", "GRANITEPEAK_2023_10K"]


@dataclass
class ServerState:
    files: dict[str, bytes]
    cut_once: dict[str, int] = field(default_factory=dict)  # path -> bytes sent before dropping
    ignore_range: set[str] = field(default_factory=set)
    log: list[tuple[str, str | None]] = field(default_factory=list)

    def requests(self, path: str) -> list[str | None]:
        return [rng for p, rng in self.log if p == path]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:  # keep test output quiet
        pass

    def do_GET(self) -> None:
        state: ServerState = self.server.state  # type: ignore[attr-defined]
        path = unquote(self.path)
        range_header = self.headers.get("Range")
        state.log.append((path, range_header))
        data = state.files.get(path)
        if data is None:
            self._send(404, b"Not Found")
            return
        start, status = 0, 200
        if range_header and path not in state.ignore_range:
            start = int(re.fullmatch(r"bytes=(\d+)-", range_header).group(1))
            if start >= len(data):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(data)}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            status = 206
        body = data[start:]
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Accept-Ranges", "bytes")
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        self.end_headers()
        cut = state.cut_once.pop(path, None)
        if cut is not None:
            self.wfile.write(body[:cut])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(body)

    def _send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """Files as the upstream repository lays them out, made from the demo dataset."""
    demo = write_demo_dataset(tmp_path_factory.mktemp("upstream"))
    docs = (demo.path / "documents.jsonl").read_text()
    unused = json.dumps({"doc_name": "UNUSED_2020_10K", "company": "Unused", "doc_type": "10k"}) + "\n"
    files = {
        "/" + REMOTE_QUESTIONS: (demo.path / "questions.jsonl").read_bytes(),
        "/" + REMOTE_DOCUMENTS: (docs + unused).encode(),
    }
    for doc in DOCS:
        files[f"/pdfs/{doc}.pdf"] = demo.pdf_path(doc).read_bytes()
    return files


@pytest.fixture()
def server(upstream: dict[str, bytes]) -> Iterator[tuple[str, ServerState]]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    state = ServerState(files=dict(upstream))
    httpd.state = state  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", state
    finally:
        httpd.shutdown()
        httpd.server_close()


def _fetch(out: Path, url: str, **kw):
    return fetch_financebench(out, base_url=url, backoff=0.0, timeout=10.0, **kw)


def test_fetch_downloads_converts_and_records_manifest(server, upstream, tmp_path: Path) -> None:
    url, state = server
    events = []
    report = _fetch(tmp_path / "fb", url, progress=events.append)
    out = tmp_path / "fb"
    assert report.count("downloaded") == 5 and report.failed == []
    assert [e.path for e in events] == [
        "raw/financebench_open_source.jsonl",
        "raw/financebench_document_information.jsonl",
        *[f"pdfs/{d}.pdf" for d in DOCS],
    ]
    assert (report.questions, report.documents) == (18, 3)
    assert (out / "questions.jsonl").read_bytes() == upstream["/" + REMOTE_QUESTIONS]
    doc_rows = [json.loads(line) for line in (out / "documents.jsonl").open()]
    assert [r["doc_name"] for r in doc_rows] == DOCS  # the unused filing is left out
    manifest = load_manifest(out)
    for doc in DOCS:
        data = upstream[f"/pdfs/{doc}.pdf"]
        assert (out / "pdfs" / f"{doc}.pdf").read_bytes() == data
        entry = manifest.files[f"pdfs/{doc}.pdf"]
        assert entry.size == len(data)
        assert entry.sha256 == hashlib.sha256(data).hexdigest()
        assert entry.url == f"{url}/pdfs/{doc}.pdf"
        assert not (out / "pdfs" / f"{doc}.pdf.part").exists()
    ds = load_financebench(out)
    assert ds.name == "financebench" and len(ds.questions) == 18
    assert validate_dataset(ds).dropped == []
    assert all(rng is None for _, rng in state.log)


def test_rerun_skips_verified_files_and_replaces_corrupt_ones(server, upstream, tmp_path: Path) -> None:
    url, state = server
    out = tmp_path / "fb"
    _fetch(out, url)
    state.log.clear()
    again = _fetch(out, url)
    assert again.count("skipped") == 5 and state.log == []

    corrupt = out / "pdfs" / f"{DOCS[0]}.pdf"
    data = bytearray(corrupt.read_bytes())
    data[len(data) // 2] ^= 0xFF  # same size, different content
    corrupt.write_bytes(bytes(data))
    (out / "pdfs" / f"{DOCS[1]}.pdf").unlink()
    third = _fetch(out, url)
    statuses = {e.path: e.status for e in third.events}
    assert statuses[f"pdfs/{DOCS[0]}.pdf"] == "replaced"
    assert statuses[f"pdfs/{DOCS[1]}.pdf"] == "downloaded"
    assert statuses[f"pdfs/{DOCS[2]}.pdf"] == "skipped"
    assert sorted(p for p, _ in state.log) == sorted([f"/pdfs/{DOCS[0]}.pdf", f"/pdfs/{DOCS[1]}.pdf"])
    assert corrupt.read_bytes() == upstream[f"/pdfs/{DOCS[0]}.pdf"]


def test_dropped_connection_resumes_with_a_range_request(server, upstream, tmp_path: Path) -> None:
    url, state = server
    path = f"/pdfs/{DOCS[1]}.pdf"
    state.cut_once[path] = 20_000
    report = _fetch(tmp_path / "fb", url)
    assert state.requests(path) == [None, "bytes=20000-"]
    assert {e.path: e.status for e in report.events}[f"pdfs/{DOCS[1]}.pdf"] == "resumed"
    assert (tmp_path / "fb" / "pdfs" / f"{DOCS[1]}.pdf").read_bytes() == upstream[path]


def test_partial_file_from_an_interrupted_run_is_resumed(server, upstream, tmp_path: Path) -> None:
    url, state = server
    out = tmp_path / "fb"
    (out / "pdfs").mkdir(parents=True)
    path = f"/pdfs/{DOCS[2]}.pdf"
    (out / "pdfs" / f"{DOCS[2]}.pdf.part").write_bytes(upstream[path][:30_000])
    _fetch(out, url)
    assert state.requests(path) == ["bytes=30000-"]
    assert (out / "pdfs" / f"{DOCS[2]}.pdf").read_bytes() == upstream[path]
    assert load_manifest(out).files[f"pdfs/{DOCS[2]}.pdf"].size == len(upstream[path])


def test_server_ignoring_range_or_stale_part_starts_over(server, upstream, tmp_path: Path) -> None:
    url, state = server
    out = tmp_path / "fb"
    (out / "pdfs").mkdir(parents=True)
    ignored, stale = f"/pdfs/{DOCS[0]}.pdf", f"/pdfs/{DOCS[1]}.pdf"
    state.ignore_range.add(ignored)
    (out / "pdfs" / f"{DOCS[0]}.pdf.part").write_bytes(b"junk" * 100)
    (out / "pdfs" / f"{DOCS[1]}.pdf.part").write_bytes(
        b"x" * (len(upstream[stale]) + 10)
    )  # longer than the file
    _fetch(out, url)
    assert (out / "pdfs" / f"{DOCS[0]}.pdf").read_bytes() == upstream[ignored]
    assert state.requests(stale) == [f"bytes={len(upstream[stale]) + 10}-", None]
    assert (out / "pdfs" / f"{DOCS[1]}.pdf").read_bytes() == upstream[stale]


def test_missing_or_non_pdf_files_fail_alone(server, tmp_path: Path) -> None:
    url, state = server
    del state.files[f"/pdfs/{DOCS[0]}.pdf"]
    state.files[f"/pdfs/{DOCS[1]}.pdf"] = b"version https://git-lfs.github.com/spec/v1\noid sha256:abc\n"
    report = _fetch(tmp_path / "fb", url, retries=1)
    failed = {e.path: e.detail for e in report.failed}
    assert set(failed) == {f"pdfs/{DOCS[0]}.pdf", f"pdfs/{DOCS[1]}.pdf"}
    assert "HTTP 404" in failed[f"pdfs/{DOCS[0]}.pdf"]
    assert "not a PDF" in failed[f"pdfs/{DOCS[1]}.pdf"]
    assert (tmp_path / "fb" / "pdfs" / f"{DOCS[2]}.pdf").exists()
    assert len(state.requests(f"/pdfs/{DOCS[0]}.pdf")) == 1  # a 404 is not retried
    manifest = json.loads((tmp_path / "fb" / MANIFEST_FILE).read_text())
    assert f"pdfs/{DOCS[1]}.pdf" not in manifest["files"]


def test_missing_metadata_is_an_error(server, tmp_path: Path) -> None:
    url, state = server
    del state.files["/" + REMOTE_QUESTIONS]
    with pytest.raises(FetchError, match="financebench_open_source.jsonl: HTTP 404"):
        _fetch(tmp_path / "fb", url)


def test_cli_fetch_and_validate(server, tmp_path: Path) -> None:
    from pageindex.cli import app

    url, _ = server
    runner = CliRunner()
    out = tmp_path / "fb"
    result = runner.invoke(app, ["bench", "datasets", "fetch", "financebench", str(out), "--base-url", url])
    assert result.exit_code == 0, result.output
    assert "18 questions over 3 filings; files: 5 downloaded" in result.output
    result = runner.invoke(app, ["bench", "datasets", "fetch", "financebench", str(out), "--base-url", url])
    assert "5 skipped" in result.output and result.exit_code == 0
    result = runner.invoke(app, ["bench", "datasets", "validate", str(out)])
    assert result.exit_code == 0 and "18 kept, 0 dropped" in result.output
    result = runner.invoke(app, ["bench", "datasets", "fetch", "squad", str(out)])
    assert result.exit_code == 2 and "unknown dataset 'squad'" in result.output


def test_cli_fetch_exit_codes_unreachable_2_partial_4(server, tmp_path: Path) -> None:
    """The exit-code table: metadata that cannot be fetched is 2 (nothing fetched); a fetch where some
    files failed finished with errors, 4, and says how to resume."""
    from pageindex.cli import app

    url, state = server
    runner = CliRunner()
    del state.files[f"/pdfs/{DOCS[0]}.pdf"]
    partial = runner.invoke(
        app, ["bench", "datasets", "fetch", "financebench", str(tmp_path / "a"), "--base-url", url]
    )
    assert partial.exit_code == 4, partial.output
    assert " ".join(partial.output.split()).endswith(  # a re-run cannot fetch what the source lacks
        f"error: 1 file(s) failed: the source refused them (HTTP 404: pdfs/{DOCS[0]}.pdf); check --base-url, "
        "or run the same command again once the source has them"
    ), partial.output
    del state.files["/" + REMOTE_QUESTIONS]
    gone = runner.invoke(
        app, ["bench", "datasets", "fetch", "financebench", str(tmp_path / "b"), "--base-url", url]
    )
    assert gone.exit_code == 2
    assert gone.output.strip().splitlines()[-1].startswith("error: ") and "HTTP 404" in gone.output


def test_an_unreachable_source_is_one_error_line(tmp_path: Path) -> None:
    """Nothing can be fetched: exactly one line (the failed file is not listed before it), exit 2."""
    import socket

    from typer.testing import CliRunner

    from pageindex.cli import app

    with socket.socket() as sock:  # a loopback port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    args = ["bench", "datasets", "fetch", "financebench", "--out", str(tmp_path / "new" / "fb"),
            "--base-url", f"http://127.0.0.1:{port}/", "--retries", "0"]  # fmt: skip
    result = CliRunner().invoke(app, args, terminal_width=200)
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error: "), result.output
    assert list(tmp_path.iterdir()) == []  # the folders it made (new/fb, raw/, pdfs/) were left empty: gone
    (tmp_path / "mine").mkdir()
    args[5] = str(tmp_path / "mine")
    assert CliRunner().invoke(app, args).exit_code == 2
    assert (tmp_path / "mine").is_dir() and list((tmp_path / "mine").iterdir()) == []  # the user's: kept


def test_credentials_in_the_source_url_are_masked_where_it_is_named(server, tmp_path: Path) -> None:
    """A private mirror's ``https://user:TOKEN@host`` (or ``?token=``): the files are fetched with
    it, but the manifest, info.json and the failures name the URL masked."""
    url, state = server
    del state.files[f"/pdfs/{DOCS[0]}.pdf"]
    secret_url = url.replace("://", "://mirror:tokSECRET42@") + "/"
    report = _fetch(tmp_path / "fb", secret_url, retries=0)
    masked = url.replace("://", "://***@")
    assert report.count("downloaded") == 4
    assert [e.detail for e in report.failed] == [f"{masked}/pdfs/{DOCS[0]}.pdf: HTTP 404"]
    manifest = load_manifest(tmp_path / "fb")
    assert manifest.base_url == masked
    assert manifest.files[f"pdfs/{DOCS[1]}.pdf"].url == f"{masked}/pdfs/{DOCS[1]}.pdf"
    stored = "".join(p.read_text() for p in (tmp_path / "fb").glob("*.json"))
    assert "tokSECRET42" not in stored
    assert json.loads((tmp_path / "fb" / "dataset.json").read_text())["source"] == masked


def test_a_doc_name_with_folders_is_never_fetched_outside_the_dataset(server, upstream, tmp_path) -> None:
    """A mirror's questions file naming ``sub/../../../escaped/X`` made the fetcher GET /escaped/X.pdf and
    write it at tmp/escaped/X.pdf, over whatever was there; now that filing fails alone (its question is
    then a malformed row) and the others are fetched."""
    url, state = server
    rows = [json.loads(line) for line in upstream["/" + REMOTE_QUESTIONS].decode().splitlines()]
    rows[0]["doc_name"] = "sub/../../../escaped/X"
    state.files["/" + REMOTE_QUESTIONS] = "".join(json.dumps(r) + "\n" for r in rows).encode()
    state.files["/escaped/X.pdf"] = upstream[f"/pdfs/{DOCS[0]}.pdf"]
    victim = tmp_path / "escaped" / "X.pdf"
    victim.parent.mkdir()
    victim.write_bytes(b"mine")
    report = _fetch(tmp_path / "fb", url)
    assert victim.read_bytes() == b"mine" and not state.requests("/escaped/X.pdf")
    [failed] = report.failed
    assert failed.path == "pdfs/sub/../../../escaped/X.pdf" and "is not a file name" in failed.detail
    assert report.count("downloaded") == 5
    ds = load_financebench(tmp_path / "fb")
    [bad] = ds.malformed
    assert bad.question_id == rows[0]["financebench_id"] and "is not a file name" in bad.detail


def test_a_questions_file_of_other_rows_is_one_error_not_a_crash(server, tmp_path: Path) -> None:
    """A row that is no JSON object (a list) was "internal error: AttributeError"; a byte that is not
    UTF-8, "internal error: UnicodeDecodeError"."""
    url, state = server
    state.files["/" + REMOTE_QUESTIONS] = state.files["/" + REMOTE_QUESTIONS] + b"[1, 2]\n"
    with pytest.raises(FetchError, match=r"financebench_open_source.jsonl: line 19 is not a JSON object"):
        _fetch(tmp_path / "a", url)
    state.files["/" + REMOTE_QUESTIONS] = b'{"doc_name": "caf\xe9"}\n'
    with pytest.raises(FetchError, match=r"financebench_open_source.jsonl: not UTF-8 text \(byte 18\)"):
        _fetch(tmp_path / "b", url)


def test_a_metadata_file_that_is_an_html_page_is_never_recorded_as_done(server, upstream, tmp_path) -> None:
    """A --base-url whose server answered the questions file with an HTML page (a sign-in page, a web
    page's address) had the page recorded in manifest.json as a verified download: every re-run, also
    once the source was right, skipped it and failed with "line 1 is not valid JSON"."""
    url, state = server
    page = b"<!DOCTYPE html>\n<html><body>Sign in to continue</body></html>\n"
    state.files["/" + REMOTE_QUESTIONS] = page
    out = tmp_path / "fb"
    with pytest.raises(FetchError, match=r"financebench_open_source.jsonl: an HTML page, not JSON lines"):
        _fetch(out, url)
    assert "raw/financebench_open_source.jsonl" not in load_manifest(out).files
    state.files["/" + REMOTE_QUESTIONS] = upstream["/" + REMOTE_QUESTIONS]  # the source is right now
    report = _fetch(out, url)
    assert report.failed == [] and report.questions == 18
    assert (out / "questions.jsonl").read_bytes() == upstream["/" + REMOTE_QUESTIONS]

    # a folder an earlier version left so (the page recorded as verified) is downloaded again
    raw = out / "raw" / "financebench_open_source.jsonl"
    raw.write_bytes(page)
    manifest = load_manifest(out)
    entry = manifest.files["raw/financebench_open_source.jsonl"]
    manifest.files["raw/financebench_open_source.jsonl"] = entry.model_copy(
        update={"size": len(page), "sha256": hashlib.sha256(page).hexdigest()}
    )
    (out / MANIFEST_FILE).write_text(manifest.model_dump_json())
    events = []
    report = _fetch(out, url, progress=events.append)
    assert report.failed == [] and report.questions == 18
    assert events[0].path == "raw/financebench_open_source.jsonl" and events[0].status == "replaced"
    assert raw.read_bytes() == upstream["/" + REMOTE_QUESTIONS]


def test_an_interrupted_fetch_says_how_to_go_on(tmp_path: Path, monkeypatch) -> None:
    """A Ctrl-C was the bare line "interrupted": nothing said the partial file is kept and that the same
    command resumes it."""
    from bench.datasets import fetch as fetch_module
    from bench.datasets.fetch import FetchEvent
    from pageindex.cli import app

    def interrupted(out_dir, *, progress, **kwargs):
        progress(FetchEvent(path="raw/financebench_open_source.jsonl", status="downloaded", size=10))
        (Path(out_dir) / "pdfs").mkdir(parents=True)
        (Path(out_dir) / "pdfs" / "A_2023_10K.pdf.part").write_bytes(b"%PDF-1.7\n")
        raise KeyboardInterrupt

    monkeypatch.setattr(fetch_module, "fetch_financebench", interrupted)
    out = tmp_path / "fb"
    result = CliRunner().invoke(app, ["bench", "datasets", "fetch", "financebench", "-o", str(out)])
    assert result.exit_code == 130
    assert result.output.splitlines()[-1] == (
        "interrupted; A_2023_10K.pdf.part is kept and resumed: run the same command again to go on "
        "(1 file done)"
    )


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("nonsense", "it must start with http:// or https://"),
        ("ftp://mirror/fb", "it must start with http:// or https://"),
        ("http://127.0.0.1:99999", "its port must be a number from 1 to 65535"),
    ],
)
def test_a_base_url_no_server_can_have_is_refused_at_once(url: str, problem: str, tmp_path: Path) -> None:
    """It was tried four times with back-off, as if the server were down, and said as "download failed
    after 4 attempts (Request URL is missing an 'http://' or 'https://' protocol.)"."""
    from pageindex.cli import app

    out = tmp_path / "fb"
    args = ["bench", "datasets", "fetch", "financebench", "-o", str(out), "--base-url", url]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert result.output.strip() == (
        f"error: --base-url {url}: {problem} (the default is "
        "https://raw.githubusercontent.com/patronus-ai/financebench/main)"
    )
    assert not out.exists()


def test_a_rewrite_that_fails_part_way_leaves_the_questions_file_whole(server, tmp_path, monkeypatch):
    """A re-run rewrites questions.jsonl and documents.jsonl; a write cut short (a full disk, a kill) left a
    torn file of fewer questions where the complete one had been."""
    import io

    url, _ = server
    out = tmp_path / "fb"
    _fetch(out, url)
    before = (out / "questions.jsonl").read_bytes()
    real_open = io.open

    class DiskFull:
        def __init__(self, fh):
            self.fh = fh

        def write(self, data):
            if len(data) > 10_000:  # the questions' rows: half of them land, then the disk is full
                self.fh.write(data[: len(data) // 2])
                self.fh.flush()
                raise OSError(28, "No space left on device")
            return self.fh.write(data)

        def __getattr__(self, name):
            return getattr(self.fh, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

    def opened(file, mode="r", *args, **kwargs):
        fh = real_open(file, mode, *args, **kwargs)
        return DiskFull(fh) if "w" in mode else fh

    monkeypatch.setattr(io, "open", opened)
    with pytest.raises(OSError, match="No space left"):
        _fetch(out, url)
    monkeypatch.undo()
    assert (out / "questions.jsonl").read_bytes() == before
    assert len(load_financebench(out).questions) == 18


def test_a_pdf_the_source_serves_cut_short_fails_and_is_fetched_again_once_whole(server, upstream, tmp_path):
    """A PDF whose source copy is truncated (sent whole, its own length) was "downloaded" and recorded as
    verified; validation then dropped it as corrupt, and every re-run skipped it, also once the source was
    mended."""
    url, state = server
    name = f"/pdfs/{DOCS[0]}.pdf"
    state.files[name] = upstream[name][: len(upstream[name]) // 2]
    out = tmp_path / "fb"
    report = _fetch(out, url, retries=0)
    [failed] = report.failed
    assert failed.path == f"pdfs/{DOCS[0]}.pdf"
    said = ": a PDF cut short (no %%EOF marker at the end): the source's copy is truncated"
    assert failed.detail.endswith(said)
    assert f"pdfs/{DOCS[0]}.pdf" not in load_manifest(out).files
    assert not (out / "pdfs" / f"{DOCS[0]}.pdf").exists()
    state.files[name] = upstream[name]  # mended
    report = _fetch(out, url)
    assert report.failed == [] and (out / "pdfs" / f"{DOCS[0]}.pdf").read_bytes() == upstream[name]


@pytest.mark.parametrize(("retries", "said"), [(0, "after 1 attempt ("), (2, "after 3 attempts (")])
def test_a_server_that_is_not_there_is_said_after_the_attempts_made(tmp_path: Path, retries, said) -> None:
    """With --retries 0 the line said "download failed after 1 attempts"."""
    import socket

    with socket.socket() as s:  # a port no one listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(FetchError) as failed:
        _fetch(tmp_path / "fb", f"http://127.0.0.1:{port}", retries=retries)
    assert f"download failed {said}" in str(failed.value), failed.value
