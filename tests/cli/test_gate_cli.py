"""``bench gate`` and ``bench compare`` as a CI job runs them: a real process (the interpreter the
tests run under, never PATH), its exit code, and a bad input that is one ``error:`` line on stderr."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pageindex.cli import app
from tests.bench.runfactory import outcomes, run_info, write_run


def _pageindex(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from pageindex.cli import main; main()", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def _one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr and "pydantic.dev" not in proc.stderr and "╭" not in proc.stderr
    return lines[0]


def test_gate_exit_codes_in_a_real_process(tmp_path: Path) -> None:
    base = write_run(tmp_path / "base", outcomes("c" * 10))
    full = write_run(tmp_path / "full", outcomes("c" * 10), info=run_info("full"))
    partial = write_run(tmp_path / "partial", outcomes("cc"), info=run_info("partial"))

    ok = _pageindex("bench", "gate", full, "--baseline", base, "--max-drop", "0.05")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert ok.stdout.splitlines()[-1] == "gate passed: 9/9 rules hold"

    failed = _pageindex("bench", "gate", partial, "--baseline", base, "--max-drop", "0.05")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert failed.stdout.splitlines()[2].startswith(
        "FAIL  coverage [agent]: 2 of 10 samples of baseline base"
    )
    assert failed.stdout.splitlines()[-1] == "gate FAILED: 8/9 rules hold; failed: coverage[agent]"

    bad = _pageindex("bench", "gate", full, "--baseline", base, "--min-accuracy", "50")
    assert bad.returncode == 2
    assert _one_error_line(bad).startswith("error: --min-accuracy must be a fraction from 0 to 1")


def test_compare_refuses_runs_scored_differently(tmp_path: Path) -> None:
    a = write_run(tmp_path / "A", outcomes("c" * 10))
    b = write_run(tmp_path / "B", outcomes("c" * 10), info=run_info("B", builder_version="2.0"))
    refused = _pageindex("bench", "compare", a, b)
    assert refused.returncode == 2
    assert _one_error_line(refused) == (
        "error: not comparable: tree builder version A=1.0+handmade vs B=2.0 "
        "(run both with the same tree builder (pageindex and pymupdf releases), "
        "or pass --allow-changed)"  # a rejudge cannot mend it
    )


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--alpha", "5"], "error: --alpha must be a significance level from 0.001 to 0.5 (0.1%-50%)"),
        (["--alpha", "100%"], "error: --alpha must be a significance level from 0.001 to 0.5"),
        (["--by", "colour"], "error: --by must be one of retriever, model, question_type, doc_type, overall"),
        (["--test", "t"], "error: --test must be one of mcnemar, bootstrap; got 't'"),
        (["--max-flips", "-1"], "error: --max-flips must be a whole number of 0 or more; got '-1'"),
    ],
)
def test_bad_compare_option_is_one_line(tmp_path: Path, args: list[str], expected: str) -> None:
    a = write_run(tmp_path / "A", outcomes("cc"))
    b = write_run(tmp_path / "B", outcomes("ci"), info=run_info("B"))
    res = CliRunner().invoke(app, ["bench", "compare", str(a), str(b), *args], terminal_width=250)
    assert res.exit_code == 2
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(expected), res.output
    assert "Traceback" not in res.output and "pydantic.dev" not in res.output
