"""``bench/perf/wild_sweep.py``: its folder argument is checked before any work, and each command's run is
classed as README's *Reliability* counts it."""

from __future__ import annotations

import json
from pathlib import Path

from bench.perf import wild_sweep
from tests.bench.test_perf_args import _invoke, _said


def test_a_missing_folder_or_one_without_pdfs_is_one_error_line(tmp_path: Path) -> None:
    out = _invoke(wild_sweep.main, str(tmp_path / "nope"))
    assert out.exit_code == 2
    assert _said(out) == f"error: {tmp_path / 'nope'}: no such folder (give a folder of PDFs)"
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "notes.txt").write_text("no PDF here")
    out = _invoke(wild_sweep.main, str(tmp_path))
    assert out.exit_code == 2
    assert _said(out) == f"error: {tmp_path}: no PDF in it or its sub-folders (give a folder of PDFs)"


def _run(rc: int, stderr: str = "", rss_mb: float = 150.0) -> dict:
    return {"rc": rc, "stdout": "", "stderr": stderr, "rss_mb": rss_mb, "hang": rc in (124, 137)}


def test_each_run_is_classed() -> None:
    outcome = wild_sweep.command_outcome
    assert outcome(_run(0), 2048) == "ok"
    assert outcome(_run(0, "warning: f: the PDF is damaged (...): pages may lack text\n"), 2048) == "ok"
    encrypted = "error: f.pdf: PDF is encrypted (password protected); decrypt it first\n"
    assert outcome(_run(2, encrypted), 2048) == "refused"
    assert outcome(_run(0, "warning: f: 4 of 5 pages\nhave no text layer\n"), 2048) == (
        "standard error holds more than one-line warnings"
    )
    assert outcome(_run(2, "error: f.pdf: bad\nerror: again\n"), 2048) == "exit 2 without one error line"
    traceback = "Traceback (most recent call last):\n  ...\n"
    assert outcome(_run(2, traceback), 2048) == "traceback or internal error"
    assert outcome(_run(2, "error: internal error: KeyError\n"), 2048) == "traceback or internal error"
    assert outcome(_run(124), 2048) == "hang past the timeout"
    assert outcome(_run(0, rss_mb=3000.0), 2048) == "peak RSS 3000 MB"
    assert outcome(_run(1), 2048) == "exit 1"


def test_out_never_writes_over_a_file_the_sweep_did_not_make(tmp_path: Path, monkeypatch) -> None:
    """``--out`` naming one of the swept PDFs (or any file it did not write) is one error line before any
    work and the file is kept (the sweep wrote its outcomes over the PDF); an earlier outcomes file is
    replaced."""
    pdf = tmp_path / "a.pdf"
    pdf.write_bytes(b"%PDF-1.4\n%%EOF\n")
    notes = tmp_path / "notes.txt"
    notes.write_text("mine")
    swept: list[Path] = []

    def fake(path: Path, *args: object) -> dict:
        swept.append(path)
        return {"pdf": str(path), "class": "built", "rss_mb": 150.0, "stderr": ""}

    monkeypatch.setattr(wild_sweep, "sweep_one", fake)
    out = _invoke(wild_sweep.main, str(tmp_path), "--out", str(pdf))
    assert out.exit_code == 2
    assert _said(out) == f"error: --out {pdf}: is also the input it reads; write to another file"
    assert pdf.read_bytes() == b"%PDF-1.4\n%%EOF\n" and swept == []
    out = _invoke(wild_sweep.main, str(tmp_path), "--out", str(notes))
    assert out.exit_code == 2
    assert _said(out).startswith(f"error: --out {notes}: exists and is not a wild sweep's outcomes file")
    assert notes.read_text() == "mine" and swept == []
    sweep = tmp_path / "sweep.jsonl"
    for _ in range(2):  # new, then its own earlier outcomes replaced
        out = _invoke(wild_sweep.main, str(tmp_path), "--out", str(sweep))
        assert out.exit_code == 0, out.output
        assert [json.loads(line)["class"] for line in sweep.read_text().splitlines()] == ["built"]
