"""Start-up time of the ``pageindex`` command against importing what every command needs.

Usage: ``python bench/perf/cli_startup.py [--run RUN_DIR] [--repeats N]``

In the same run, times (best of N wall-clock runs, each a fresh process) ``python -c "import
typer, rich.console, pydantic"`` (the floor: the CLI cannot start faster than its own framework)
and ``pageindex --help``, ``pageindex retrievers``, ``pageindex cache stats``, ``pageindex bench
summary RUN`` and ``pageindex bench gate RUN --baseline RUN`` (the baseline a copy of RUN in
another folder: the gate refuses a run folder given as its own baseline), and prints each as a ratio to
the floor. Targets: <= 4x for ``--help``, ``retrievers`` and ``cache stats``; <= 8x for ``bench
summary`` and ``bench gate``, which need statistics. Without ``--run`` a small run is generated
first (the demo dataset, the ``extractive`` retriever and the ``rules`` judge: no model needed).
Exit 1 when a target is missed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import typer
from rich.table import Table

from pageindex.cli._common import CliConsole, fail

BIN = Path(sys.executable).parent
FLOOR = [sys.executable, "-c", "import typer, rich.console, pydantic"]


def pageindex() -> list[str]:
    exe = BIN / "pageindex"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "pageindex.cli"]


def best_of(cmd: list[str], repeats: int, env: dict[str, str]) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, env=env)
        elapsed = time.perf_counter() - started
        if done.returncode not in (0, 1):
            tail = done.stderr.decode()[-400:]
            raise SystemExit(f"error: {' '.join(cmd)} exited {done.returncode}: {tail}")
        best = min(best, elapsed)
    return best


def make_run(where: Path, env: dict[str, str]) -> Path:
    out = where / "run"
    cmd = [*pageindex(), "bench", "run", "--retrievers", "extractive", "--judge", "rules",
           "--limit", "6", "--quiet", "-o", str(out)]
    done = subprocess.run(cmd, capture_output=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"error: could not make a run: {done.stderr.decode()[-400:]}")
    return out


def commands(run_dir: Path, where: Path) -> list[tuple[str, list[str], float]]:
    """The timed commands with their targets (ratio to the floor). The gate's baseline is a copy of
    ``run_dir`` in ``where``: given the run folder itself, the gate exits 2 (a run compared with itself
    passes every check), which ended the script before it printed anything."""
    baseline = where / "baseline"
    if not baseline.exists():
        shutil.copytree(run_dir, baseline)
    pi = pageindex()
    return [
        ("pageindex --help", [*pi, "--help"], 4.0),
        ("pageindex retrievers", [*pi, "retrievers"], 4.0),
        ("pageindex cache stats", [*pi, "cache", "stats"], 4.0),
        ("pageindex bench summary RUN", [*pi, "bench", "summary", str(run_dir)], 8.0),
        ("pageindex bench gate RUN --baseline RUN",
         [*pi, "bench", "gate", str(run_dir), "--baseline", str(baseline)], 8.0),
    ]


def main(
    run: Path = typer.Option(None, "--run", help="A run directory (default: a small generated one)."),
    repeats: int = typer.Option(5, "--repeats", "-n", min=1, help="Best of N runs of each command."),
) -> None:
    console = CliConsole()
    if run is not None and not (run / "run.json").is_file():  # a traceback from the baseline's copy
        what = "no such folder" if not run.exists() else "no run.json in it" if run.is_dir() else "a file"
        fail(f"--run {run}: {what} (give a run folder of pageindex bench run, or no --run)")
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = run or make_run(Path(tmp), env)
        timed = commands(run_dir, Path(tmp))
        floor = best_of(FLOOR, repeats, env)
        table = Table(title=f"CLI start-up (best of {repeats}; floor: import typer, rich.console, pydantic)")
        for col in ("command", "seconds", "ratio", "target", ""):
            table.add_column(col, justify="left" if col in ("command", "") else "right")
        table.add_row("python -c 'import typer, rich.console, pydantic'", f"{floor:.3f}", "1.0x", "", "")
        missed = 0
        for name, cmd, target in timed:
            seconds = best_of(cmd, repeats, env)
            ratio = seconds / floor
            ok = ratio <= target
            missed += not ok
            table.add_row(name, f"{seconds:.3f}", f"{ratio:.1f}x", f"<= {target:g}x",
                          "ok" if ok else "[red]missed[/]")
        console.print(table)
    raise typer.Exit(1 if missed else 0)


if __name__ == "__main__":
    typer.run(main)
