"""``bench/perf/cli_startup.py`` times each command it lists; every one must run (exit 0 or 1), or the
script stops with an error before printing its table."""

from __future__ import annotations

import os

import pytest
import typer

from bench.perf import cli_startup


def test_every_timed_command_runs(tmp_path, monkeypatch) -> None:
    """The gate was timed as ``bench gate RUN --baseline RUN``, which the gate refuses (exit 2: a run
    folder given as its own baseline), so the script the README's performance table cites ended in
    ``error: ... exited 2`` after the first four commands, with no table."""
    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "")
    monkeypatch.setenv("PAGEINDEX_MODEL", "")
    run = cli_startup.make_run(tmp_path, dict(os.environ))
    with pytest.raises(typer.Exit) as done:  # 0, or 1 for a target missed on a loaded machine
        cli_startup.main(run=run, repeats=1)
    assert done.value.exit_code in (0, 1)
