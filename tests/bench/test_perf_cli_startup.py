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


@pytest.mark.parametrize("args", [["--help"], ["retrievers"]])
def test_starting_a_command_does_not_import_the_http_clients(args) -> None:
    """Start-up is what ``cli_startup.py`` times: ``bench.config`` came to import the local-server profile,
    which imported httpx at its top for one URL parse, and the tool loop imported the HTTP transport
    (httpx2) for a string helper, so ``pageindex --help`` and ``pageindex retrievers`` loaded both HTTP
    clients on every start (``retrievers`` 5.6x the floor against the 4x target, 3.3x before)."""
    import subprocess
    import sys

    probe = (
        "import sys; sys.argv = ['pageindex', *sys.argv[1:]]\n"
        "from pageindex.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('LOADED', sorted(m for m in ('httpx', 'httpx2') if m in sys.modules), file=sys.stderr)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, check=True)
    assert "LOADED []" in out.stderr
