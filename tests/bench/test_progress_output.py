"""``bench run`` in a log (stdout not a terminal): whole tables, whole lines, progress per N samples
and while trees are built; a stop that comes after the last sample leaves the run finished."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path

from rich.console import Console

from bench.config import RunConfig
from bench.events import EventBus, RunEvent, RunProgress
from bench.progress import ProgressView
from bench.runner import Runner, SetupInterrupted

SUMMARY_COLUMNS = ["accuracy (95% CI)", "answered", "tokens/q mean", "evidence hit", "dropped/failed/errored"]


def test_bench_run_in_a_log_prints_whole_tables_and_lines(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in {"OPENAI_API_KEY", "PAGEINDEX_MODEL", "COLUMNS"}}
    env.update(PAGEINDEX_CACHE_DIR=str(tmp_path / "cache"), COLUMNS="80", TERM="dumb")
    exe = str(Path(sys.executable).with_name("pageindex"))
    args = ["bench", "run", "-r", "extractive", "--judge", "rules", "-o", str(tmp_path / "run")]
    res = subprocess.run([exe, *args], capture_output=True, text=True, env=env, timeout=300, check=False)
    assert res.returncode == 0, res.stderr[-2000:]
    lines = res.stdout.splitlines()
    text = res.stdout
    # trees: the count and the filing, then all ready
    assert "building tree 1/3: NORTHWIND_2023_10K.pdf" in text and "3 trees ready" in text
    # progress: a line per couple of samples, each complete (figures and elapsed time at the end)
    progress = [ln for ln in lines if re.match(r"^run: \d+/18 samples", ln)]
    assert 5 <= len(progress) <= 12, progress
    for ln in progress:
        figures = r"acc \d+%  tokens \d+  cost \$\d\.\d{4}  errors \d+"
        assert re.fullmatch(rf"run: \d+/18 samples \(\d+%\)  {figures}  \d:\d\d:\d\d", ln), ln
    assert progress[-1].startswith("run: 18/18 samples (100%)")
    # tables: no panel is split, every header holds every column on one line
    assert not re.search(r"by [a-z ]+ \(\d/\d\)", text)
    headers = [ln for ln in lines if ln.lstrip().startswith(("retriever ", "question_type "))]
    assert len(headers) == 2
    for ln in headers:
        assert all(col in ln for col in SUMMARY_COLUMNS), ln
    assert re.search(r"^ extractive +18 +38\.9% \[20\.3, 61\.4\] .* 100\.0% +0/0/0\s*$", text, re.M)
    # nothing cut: no ellipsis anywhere, no rich "…"
    assert "…" not in text and "..." not in text
    assert "run run: finished; 18 samples written" in text
    # and no line padded with blanks to a width (table titles were, to 200 columns)
    assert [ln for ln in lines if ln != ln.rstrip()] == []


def test_progress_lines_per_n_samples_or_per_interval() -> None:
    now = [0.0]
    console = Console(record=True, width=40, force_terminal=False)
    view = ProgressView(console, every=5, interval_s=10.0, clock=lambda: now[0])
    assert not view.live
    view.on_event(RunEvent(kind="run_started", run_id="r", progress=RunProgress(total=20)))
    for k in range(1, 21):
        now[0] += 0.5 if k < 13 else 12.0  # slow at the end: one line per 10 s
        view.on_event(RunEvent(kind="sample_finished", run_id="r", progress=RunProgress(done=k, total=20)))
    view.on_event(RunEvent(kind="run_finished", run_id="r", progress=RunProgress(done=20, total=20)))
    out = console.export_text().splitlines()
    done = [int(m.group(1)) for ln in out if (m := re.match(r"r: (\d+)/20", ln))]
    assert done == [5, 10, 13, 14, 15, 16, 17, 18, 19, 20]
    assert out[0] == "r: 20 samples to run"
    assert all(len(ln) > 40 for ln in out[1:])  # wider than the console, yet whole
    assert all(ln.endswith("0:00:05") or re.search(r"\d:\d\d:\d\d$", ln) for ln in out[1:])


def test_a_stop_after_the_last_sample_leaves_the_run_finished(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(tmp_path / "cache"))
    events = EventBus()
    config = RunConfig(retrievers=["extractive"], judge="rules", out=tmp_path / "run", limit=3)
    runner = Runner(config, events=events, command=["pageindex", "bench", "run"])

    def ctrl_c_on_last(event: RunEvent) -> None:  # Ctrl-C just as the last sample comes back
        if event.kind == "sample_finished" and event.progress.done == event.progress.total:
            runner.request_stop("interrupted")

    events.subscribe(ctrl_c_on_last)
    outcome = asyncio.run(runner.run())
    assert runner.stop_reason == "interrupted"
    assert outcome.status == "finished" and outcome.samples_written == 3
    assert '"status": "finished"' in (tmp_path / "run" / "run.json").read_text()


def test_a_stop_while_the_trees_are_built_ends_the_run_there_writing_nothing(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(tmp_path / "cache"))
    events = EventBus()
    config = RunConfig(retrievers=["extractive"], judge="rules", out=tmp_path / "run")
    runner = Runner(config, events=events, command=["pageindex", "bench", "run"])
    seen: list[int] = []

    def ctrl_c_on_first_tree(event: RunEvent) -> None:  # Ctrl-C while the first filing's tree is built
        if event.kind == "tree_building":
            seen.append(event.progress.done)
            runner.request_stop("interrupted")

    events.subscribe(ctrl_c_on_first_tree)
    try:
        asyncio.run(runner.run())
    except SetupInterrupted as exc:
        assert str(exc).startswith("while building the trees (1 of ") and "nothing was written" in str(exc)
    else:
        raise AssertionError("the run went on after Ctrl-C")
    assert seen == [0]  # no second tree started
    assert not (tmp_path / "run").exists()


def test_a_stop_after_the_trees_but_before_the_first_sample_writes_nothing(
    tmp_path: Path, monkeypatch
) -> None:
    """Review 10: a Ctrl-C while the run was being described (after the trees) wrote an empty run."""
    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(tmp_path / "cache"))
    config = RunConfig(retrievers=["extractive"], judge="rules", out=tmp_path / "run", limit=2)
    runner = Runner(config, events=EventBus(), command=["pageindex", "bench", "run"])
    describe = Runner._describe

    def ctrl_c_while_describing(self, *args, **kwargs):
        self.request_stop("interrupted")
        return describe(self, *args, **kwargs)

    monkeypatch.setattr(Runner, "_describe", ctrl_c_while_describing)
    try:
        asyncio.run(runner.run())
    except SetupInterrupted as exc:
        assert str(exc) == "before the first sample; no sample ran and nothing was written"
    else:
        raise AssertionError("the run went on after Ctrl-C")
    assert not (tmp_path / "run").exists()


def _silent_server():
    """A loopback port that takes connections and never answers (a server busy with another request)."""
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    return sock, f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


def test_a_preflight_that_waits_says_so_and_a_stop_ends_it_at_once(tmp_path: Path, monkeypatch) -> None:
    """Trial 11: the preflight waited for a busy local server for minutes, printing nothing, and the
    first Ctrl-C did not end it. Now the wait is said, and a stop ends the set-up there."""
    import time

    import bench.runner as runner_module

    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setattr(runner_module, "PREFLIGHT_NOTICE_S", 0.3)
    sock, url = _silent_server()
    events = EventBus()
    config = RunConfig(
        retrievers=["oracle"], model="openai/busy-model", base_url=url, judge="rules", out=tmp_path / "run",
        timeout_s=60, max_retries=0, limit=1,
    )  # fmt: skip
    runner = Runner(config, events=events, command=["pageindex", "bench", "run"])
    said: list[str] = []

    def ctrl_c_after_the_notice(event: RunEvent) -> None:
        if event.kind == "waiting":
            said.append(event.message)
            asyncio.get_running_loop().call_later(0.2, runner.request_stop, "interrupted")

    events.subscribe(ctrl_c_after_the_notice)
    started = time.monotonic()
    try:
        asyncio.run(runner.run())
    except SetupInterrupted as exc:
        assert str(exc) == (
            "while waiting for the model endpoint to answer; no sample ran and nothing was written"
        )
    else:
        raise AssertionError("the run went on after Ctrl-C")
    finally:
        sock.close()
    assert time.monotonic() - started < 10  # not the 60 s call timeout
    assert said == [
        f"waiting for openai/busy-model at {url} to answer (no answer in 0.3s: a server that answers one "
        "request at a time may still be busy with an earlier one; Ctrl-C stops)"
    ]
    assert not (tmp_path / "run").exists()


def test_the_waiting_notice_is_a_line_in_a_log() -> None:
    console = Console(record=True, width=200, force_terminal=False)
    view = ProgressView(console)
    view.on_event(RunEvent(kind="waiting", run_id="", progress=RunProgress(), message="waiting for m at u"))
    assert console.export_text().splitlines() == ["waiting for m at u"]


def test_the_waiting_notice_is_said_with_quiet_and_is_no_header(tmp_path: Path, monkeypatch) -> None:
    """Review 11: with --quiet the notice was never printed, and without it the wait made the
    header (the local-server profile) print before the preflight had passed."""
    from typer.testing import CliRunner

    import bench.runner as runner_module
    from pageindex.cli import app

    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setattr(runner_module, "PREFLIGHT_NOTICE_S", 0.3)
    sock, url = _silent_server()
    try:
        args = ["bench", "run", "-r", "oracle", "-m", "openai/busy-model", "--base-url", url, "--judge",
                "rules", "--timeout", "2", "--limit", "1", "-o", str(tmp_path / "run")]  # fmt: skip
        for extra in (["-q"], []):
            result = CliRunner().invoke(app, args + extra, terminal_width=400)
            assert result.exit_code == 2, result.output
            assert f"waiting for openai/busy-model at {url} to answer" in result.output, extra
            assert "local-server profile" not in result.output  # the preflight never passed
            assert result.output.count("error:") == 1
    finally:
        sock.close()


def test_the_live_accuracy_has_the_summarys_denominator():
    """Review 16: "acc" left errored samples out (30% live, 19% in the summary of the same run)."""
    from bench.summary import summarize
    from tests.bench.runfactory import run_info, sample

    samples = [sample("q1"), sample("q2", verdict="incorrect"), sample("q3", verdict=None), sample("q4")]
    progress = RunProgress(total=4)
    assert progress.accuracy is None
    for s in samples:
        progress.add(s)
    assert progress.accuracy == 0.5 == summarize(samples, run_info()).overall.accuracy.value


def test_one_tree_is_said_in_the_singular() -> None:
    """Trial 2 (Nov 27): `bench run --limit 1` on the demo said '1 trees ready' (counted() had
    fixed '1 samples written' and '1 leaves', not this line)."""
    console = Console(record=True, width=200, force_terminal=False)
    view = ProgressView(console)
    view.on_event(RunEvent(kind="tree_building", run_id="r", progress=RunProgress(done=1, total=1)))
    assert console.export_text().splitlines()[0].startswith("1 tree ready ")


def test_trees_from_the_tree_cache_are_said_loaded_not_built() -> None:
    """Trial 25: `bench run --resume` said "building tree 1/55 ..." of trees it only read back from the
    tree cache. The line says which it is, and the last one counts them apart."""
    console = Console(record=True, width=200, force_terminal=False)
    view = ProgressView(console, interval_s=0.0)

    def tree(done: int, filing: str = "", cached: bool = False, loaded: int = 0) -> None:
        progress = RunProgress(done=done, total=3, skipped=loaded)
        view.on_event(RunEvent(kind="tree_building", run_id="", progress=progress, message=filing,
                               cached=cached))  # fmt: skip

    tree(0, "A.pdf", cached=True)
    tree(1, "B.pdf", cached=False, loaded=1)
    tree(2, "C.pdf", cached=True, loaded=1)
    tree(3, loaded=2)
    lines = [ln.rsplit("  ", 1)[0] for ln in console.export_text().splitlines()]
    assert lines == [
        "loading tree 1/3 from the tree cache: A.pdf",
        "building tree 2/3: B.pdf",
        "loading tree 3/3 from the tree cache: C.pdf",
        "3 trees ready (2 loaded from the tree cache, 1 built)",
    ]


def test_a_second_run_loads_its_trees_from_the_cache_the_first_built(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(tmp_path / "cache"))
    seen: list[tuple[int, bool, int]] = []
    for out in ("first", "second"):
        events = EventBus()
        events.subscribe(
            lambda e: seen.append((e.progress.done, e.cached, e.progress.skipped))
            if e.kind == "tree_building"
            else None
        )
        config = RunConfig(retrievers=["extractive"], judge="rules", out=tmp_path / out, limit=7)
        asyncio.run(Runner(config, events=events, command=["pageindex", "bench", "run"]).run())
    assert seen == [
        (0, False, 0), (1, False, 0), (2, False, 0),  # the first run builds both trees
        (0, True, 0), (1, True, 1), (2, False, 2),  # the second loads them
    ]
