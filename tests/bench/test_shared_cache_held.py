"""A run records into an LLM cache another process holds (a CI matrix sharing one ``llm.sqlite``, a
``cache clear`` vacuuming a large file, a ``sqlite3`` shell left in a transaction). A write that still
meets "database is locked" after the busy timeout costs the recording, never the sample: before,
``sqlite3.OperationalError: database is locked`` was raised into the model call after the model had
answered, and every such sample was recorded as an ``error`` (the run exited 4, its calls paid for)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pageindex.llm.cache as cache_module
from bench.config import RunConfig
from bench.runner import Runner
from bench.samples import load_samples
from pageindex.llm import LLMCache
from tests.held import SQLITE_WRITE_LOCK, held_by_another_process


def test_a_cache_another_process_holds_costs_the_recording_not_the_samples(
    tmp_path: Path, monkeypatch
) -> None:
    path = tmp_path / "llm.sqlite"
    LLMCache(path).put("seed", model="m", kind="chat", request={}, reply={}, prompt_tokens=0,
                       completion_tokens=0)  # fmt: skip (the file exists, in WAL mode)
    monkeypatch.setattr(cache_module, "_BUSY_TIMEOUT_S", 0.2)  # SQLite's wait, 30 s in use
    with held_by_another_process(SQLITE_WRITE_LOCK, path):
        config = RunConfig(
            out=tmp_path / "run", model="scripted", scripted_policy="bench.faults.scripted:policy",
            tree_cache_dir=tmp_path / "trees", retrievers=["agent"], judge="rules", limit=3,
            concurrency=1, cache="rw", cache_path=path,
        )  # fmt: skip
        outcome = asyncio.run(Runner(config, command=["pageindex", "bench", "run"]).run())

    samples = load_samples(outcome.run_dir / "samples.jsonl")
    assert outcome.status == "finished" and len(samples) == 3
    assert [s.status for s in samples] == ["answer"] * 3, [s.error for s in samples]
    assert all(s.llm_calls >= 2 and s.error is None for s in samples)
    notes = [w for w in outcome.warnings if "could not be written to the LLM cache" in w]
    assert len(notes) == 1, outcome.warnings
    calls = sum(s.llm_calls for s in samples)
    assert notes[0].startswith(f"{calls} records (model replies, token counts or failed calls) could not")
    assert "(database is locked: another process held the file for more than 0.2s)" in notes[0]
    assert "a --cache replay of them will miss" in notes[0]
    assert LLMCache(path).stats().entries == 1  # only the seed: nothing of the run was recorded

    # once the file is free, the same cache records: a new run writes every call
    config = config.model_copy(update={"out": tmp_path / "again"})
    again = asyncio.run(Runner(config, command=["pageindex", "bench", "run"]).run())
    assert [s.status for s in load_samples(again.run_dir / "samples.jsonl")] == ["answer"] * 3
    assert not [w for w in again.warnings if "LLM cache" in w]
    assert LLMCache(path).stats().entries > 1


def test_a_rejudge_into_a_held_cache_keeps_its_verdicts_and_says_what_was_not_recorded(
    tmp_path: Path, monkeypatch
) -> None:
    """The same for a judge model's calls (``bench rejudge``/``bench judge --cache rw``): every answer
    keeps the verdict it got, and a warning says the cache did not record them (before, each judge call
    failed with ``OperationalError: database is locked`` and left its answer unjudged)."""
    from typer.testing import CliRunner

    from pageindex.cli import app
    from tests.bench.runfactory import outcomes, write_run

    monkeypatch.setenv("PAGEINDEX_SCRIPTED_POLICY", "bench.faults.scripted:policy")
    run = write_run(tmp_path / "base", outcomes("cic"))
    path = tmp_path / "judge.sqlite"
    LLMCache(path).put("seed", model="m", kind="chat", request={}, reply={}, prompt_tokens=0,
                       completion_tokens=0)  # fmt: skip
    monkeypatch.setattr(cache_module, "_BUSY_TIMEOUT_S", 0.2)
    with held_by_another_process(SQLITE_WRITE_LOCK, path):
        args = ["bench", "rejudge", str(run), "--judge", "llm", "--judge-model", "scripted", "--cache", "rw",
                "--cache-path", str(path), "-o", str(tmp_path / "new")]  # fmt: skip
        result = CliRunner().invoke(app, args, terminal_width=250)
    assert result.exit_code == 0, result.output
    samples = load_samples(tmp_path / "new" / "samples.jsonl")
    assert len(samples) == 3 and all(s.verdict is not None and s.judge_error is None for s in samples)
    said = " ".join(result.output.split())
    assert (
        "warning: 3 records (model replies, token counts or failed calls) could not be written to the LLM "
        f"cache {path} (database is locked: another process held the file for more than 0.2s)"
    ) in said, result.output
    assert LLMCache(path).stats().entries == 1


def test_a_held_cache_does_not_hold_the_run_so_its_samples_keep_their_time_limit(
    tmp_path: Path, demo: Path, monkeypatch
) -> None:
    """A cache write waiting out another process's lock waits in a worker thread, not on the run's event
    loop: the samples answer within ``--time-limit`` and only the recordings are lost. Before, each write
    held the event loop for the busy timeout (30 s in use; 4 s here, past the 3 s limit): every sample's
    coroutine stopped with it, and samples whose model had answered in time ended ``time_limit`` (a trial
    saw 197.5 s against a 10 s limit). Against the fault server (a real HTTP server on loopback), whose
    replies the run awaits as it would a model's."""
    from bench.faults import FaultServer
    from bench.faults.scripted import ChatPolicy

    path = tmp_path / "llm.sqlite"
    LLMCache(path).put("seed", model="m", kind="chat", request={}, reply={}, prompt_tokens=0,
                       completion_tokens=0)  # fmt: skip
    monkeypatch.setattr(cache_module, "_BUSY_TIMEOUT_S", 4.0)
    with FaultServer(policy=ChatPolicy()) as srv, held_by_another_process(SQLITE_WRITE_LOCK, path):
        config = RunConfig(
            data_dir=demo, out=tmp_path / "run", model="openai/fault-model", base_url=srv.base_url,
            retrievers=["iterative"], judge="rules", limit=4, concurrency=2, max_retries=0, timeout_s=5,
            time_limit_s=3, tree_cache_dir=tmp_path / "trees", cache="rw", cache_path=path,
        )  # fmt: skip
        outcome = asyncio.run(Runner(config, command=["pageindex", "bench", "run"]).run())

    samples = load_samples(outcome.run_dir / "samples.jsonl")
    assert [s.status for s in samples] == ["answer"] * 4, [(s.error_kind, s.error) for s in samples]
    assert outcome.status == "finished" and all(s.llm_calls >= 1 for s in samples)
    notes = [w for w in outcome.warnings if "could not be written to the LLM cache" in w]
    assert len(notes) == 1, outcome.warnings
    assert "(database is locked: another process held the file for more than 4s)" in notes[0]
    assert LLMCache(path).stats().entries == 1  # only the seed


def test_a_ctrl_c_at_the_end_of_a_run_stops_waiting_for_a_held_cache(tmp_path: Path) -> None:
    """The run's end waits for its queued recordings; a Ctrl-C then (or before) stops waiting for the
    process that holds the file: the records are said not written, and why. Before, the wait ran out the
    busy timeout (30 s here, as in use: SQLite's busy handler, which nothing cut short)."""
    from bench.events import EventBus, RunEvent

    path = tmp_path / "llm.sqlite"
    LLMCache(path).put("seed", model="m", kind="chat", request={}, reply={}, prompt_tokens=0,
                       completion_tokens=0)  # fmt: skip
    events = EventBus()
    config = RunConfig(
        out=tmp_path / "run", model="scripted", scripted_policy="bench.faults.scripted:policy",
        tree_cache_dir=tmp_path / "trees", retrievers=["agent"], judge="rules", limit=2,
        concurrency=1, cache="rw", cache_path=path,
    )  # fmt: skip
    runner = Runner(config, command=["pageindex", "bench", "run"], events=events)

    def ctrl_c_at_the_end(event: RunEvent) -> None:
        if event.kind == "run_finished":
            runner.request_stop("interrupted")

    events.subscribe(ctrl_c_at_the_end)
    with held_by_another_process(SQLITE_WRITE_LOCK, path):
        outcome = asyncio.run(runner.run())
    samples = load_samples(outcome.run_dir / "samples.jsonl")
    assert [s.status for s in samples] == ["answer"] * 2
    notes = [w for w in outcome.warnings if "could not be written to the LLM cache" in w]
    calls = sum(s.llm_calls for s in samples)
    assert len(notes) == 1 and notes[0].startswith(f"{calls} records (model replies,"), outcome.warnings
    assert "(another process held the file, and the wait for it was cut short (Ctrl-C))" in notes[0]
    assert LLMCache(path).stats().entries == 1


LAST_ROW_SAYS_SO = """
import pathlib

def policy(request):
    if "LAST" in str(request):
        pathlib.Path(__file__).with_suffix(".judged").touch()
    return "correct"
"""


def test_a_ctrl_c_at_the_end_of_bench_judge_stops_waiting_for_a_held_cache(tmp_path: Path) -> None:
    """``bench judge --cache rw`` waits at its end for the judge model's queued recordings; a Ctrl-C then
    stops waiting for the process that holds the file, and says the replies were not recorded. Before,
    the wait was the event loop's closing, which a Ctrl-C could not cut: it waited out the 30 s busy
    timeout, then said the replies were "kept in the cache: the same command again reuses them"."""
    import json
    import os
    import signal
    import subprocess
    import sys
    import time

    (tmp_path / "judge.py").write_text(LAST_ROW_SAYS_SO)
    rows = [{"question": f"What was revenue in FY{2020 + i}?{' LAST' if i == 3 else ''}",
             "gold_answer": "1577", "model_answer": "$1,577 million"} for i in range(4)]  # fmt: skip
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows))
    path, out = tmp_path / "llm.sqlite", tmp_path / "verdicts.jsonl"
    LLMCache(path).put("seed", model="m", kind="chat", request={}, reply={}, prompt_tokens=0,
                       completion_tokens=0)  # fmt: skip
    env = {**os.environ, "PAGEINDEX_SCRIPTED_POLICY": f"{tmp_path / 'judge.py'}:policy"}
    argv = [sys.executable, "-m", "pageindex.cli", "bench", "judge", "-i", str(answers), "-o", str(out),
            "--judge", "llm", "--judge-model", "scripted", "--cache", "rw", "--cache-path", str(path),
            "-c", "1"]  # fmt: skip
    with held_by_another_process(SQLITE_WRITE_LOCK, path):
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while not (tmp_path / "judge.judged").exists():  # every row judged: the end waits for the cache
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.1)
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    said = " ".join(stderr.split())
    assert proc.returncode == 130, (stdout, stderr)
    assert f"interrupted: nothing written ({out} untouched)" in said
    assert "kept in the cache" not in said
    assert (
        f"warning: 4 records (model replies, token counts or failed calls) could not be written to the LLM "
        f"cache {path} (another process held the file, and the wait for it was cut short (Ctrl-C))"
    ) in said, stderr
    assert not out.exists() and LLMCache(path).stats().entries == 1
