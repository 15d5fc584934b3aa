"""One run folder, one run at a time: a run claims its folder for as long as it lasts, so a second
run started into it (two identical ``bench run`` in the same second share a run id) or a resume of
it fails with one line and touches nothing; a run killed with SIGKILL leaves no claim behind, so
its resume is never blocked (review 16)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench.config import RunConfig
from bench.events import EventBus
from bench.runner import Runner, RunSetupError, demo_dataset_dir
from pageindex.cli._common import ExitCode

PLUGIN = '''
import asyncio, os
from pageindex.retrievers.base import register_retriever

@register_retriever("dawdle", needs_llm=False)
async def dawdle(run, opts):
    if os.environ.get("DAWDLE"):
        await asyncio.sleep(120)  # a sample waiting on a slow model
    return run.result("answer", answer="42")
'''


def keys(run: Path) -> list[tuple[str, str, int]]:
    rows = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines() if line.strip()]
    return [(r["question_id"], r["retriever"], r["repeat"]) for r in rows]


def test_two_runs_started_into_one_folder_write_it_once(tmp_path: Path, monkeypatch) -> None:
    """Both pass the check at the start (neither has written anything yet); only one may write."""
    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "run"
    config = RunConfig(retrievers=["extractive"], judge="rules", out=out, limit=3)

    async def both() -> list[object]:
        runners = [Runner(config, events=EventBus(), command=["pageindex", "bench", "run"]) for _ in "ab"]
        return await asyncio.gather(*(r.run() for r in runners), return_exceptions=True)

    outcomes = asyncio.run(both())
    refused = [o for o in outcomes if isinstance(o, RunSetupError)]
    assert len(refused) == 1, outcomes
    assert str(refused[0]).startswith(f"--out {out}: "), refused[0]
    finished = [o for o in outcomes if not isinstance(o, BaseException)]
    assert len(finished) == 1 and finished[0].samples_written == 3 and finished[0].samples_skipped == 0
    assert len(keys(out)) == len(set(keys(out))) == 3


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "dawdle_plugin.py").write_text(PLUGIN)
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "PAGEINDEX_MODEL")}
    path = os.pathsep.join(p for p in (str(tmp_path), env.get("PYTHONPATH", "")) if p)
    env.update(PYTHONPATH=path, PAGEINDEX_PLUGINS="dawdle_plugin")
    env.update(PAGEINDEX_CACHE_DIR=str(tmp_path / "cache"))
    return env


def bench_run(*args: str) -> list[str]:
    return [sys.executable, "-c", "from pageindex.cli import main; main()", "bench", "run", "-q", *args]


def test_a_folder_in_use_is_refused_and_a_killed_run_leaves_no_claim(tmp_path: Path, env) -> None:
    run = tmp_path / "run"
    args = ("--data-dir", str(demo_dataset_dir()), "-r", "dawdle", "--judge", "rules", "--limit", "2")
    first = subprocess.Popen(
        bench_run(*args, "-o", str(run)), env={**env, "DAWDLE": "1"},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not (run / "run.json").exists():  # written once the samples begin
            assert first.poll() is None and time.monotonic() < deadline, "the first run did not start"
            time.sleep(0.1)
        before = {name: (run / name).read_bytes() for name in ("run.json", "samples.jsonl")}

        for again in (["--resume", str(run)], [*args, "-o", str(run)]):
            busy = subprocess.run(bench_run(*again), env=env, capture_output=True, text=True, timeout=90)
            assert busy.returncode == ExitCode.BAD_INPUT, busy.stderr
            lines = [line for line in (busy.stdout + busy.stderr).splitlines() if line.strip()]
            assert len(lines) == 1 and lines[0].startswith("error: "), lines
            assert "another bench run is" in lines[0] or "already holds a run" in lines[0], lines
            assert {name: (run / name).read_bytes() for name in before} == before
        assert first.poll() is None  # the first run went on, undisturbed
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)

    done = subprocess.run(bench_run("--resume", str(run)), env=env, capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert len(keys(run)) == 2
