"""``bench/perf/wild_sweep.py``: its folder argument is checked before any work, and each command's run is
classed as README's *Reliability* counts it."""

from __future__ import annotations

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
