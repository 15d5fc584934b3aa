"""One run folder, one run at a time: a run claims its folder for as long as it lasts, so a second
run started into it (the same ``--out``) or a resume of it fails with one line and touches nothing (a
run given no ``--out`` takes the next free folder instead); a run killed with SIGKILL leaves no claim
behind, so its resume is never blocked (review 16)."""

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
from bench.rundir import FolderClaim, FolderInUse
from bench.runner import Runner, RunSetupError, demo_dataset_dir
from pageindex.cli._common import ExitCode
from tests.held import RUN_FOLDER_CLAIM, held_by_another_process

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
        # run.json is written once the samples begin, then dropped.jsonl, then samples.jsonl is
        # created: wait for the last, or a loaded machine reads between them (trial 3: FileNotFoundError)
        while not (run / "samples.jsonl").exists():
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


def test_a_resume_while_the_first_run_builds_its_trees_is_told_the_folder_is_in_use(
    tmp_path: Path, monkeypatch
) -> None:
    """A new run claims its folder before the trees are built (minutes on a real dataset), not once
    the samples begin: a resume started meanwhile said "run.json does not exist" (trial 16)."""
    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "results" / "first"
    config = RunConfig(retrievers=["extractive"], judge="rules", out=out, limit=2)
    first = Runner(config, events=EventBus(), command=["pageindex", "bench", "run"])
    building, go_on = asyncio.Event(), asyncio.Event()
    real_build = first._build_trees

    async def slow_build(*args, **kwargs):
        building.set()
        await go_on.wait()
        return await real_build(*args, **kwargs)

    monkeypatch.setattr(first, "_build_trees", slow_build)

    async def scenario() -> tuple[object, object]:
        started = asyncio.create_task(first.run())
        await building.wait()
        resume = Runner(config, resume_dir=out, events=EventBus(), command=["pageindex", "bench", "run"])
        try:
            await resume.run()
            refused: object = None
        except RunSetupError as exc:
            refused = exc
        go_on.set()
        return refused, await started

    refused, outcome = asyncio.run(scenario())
    assert str(refused) == f"cannot resume {out}: another bench run is using it now; wait for it to end"
    assert outcome.samples_written == 2 and len(keys(out)) == 2  # the first run went on, undisturbed


def test_a_run_that_ends_in_its_set_up_leaves_no_folder_behind(tmp_path: Path, monkeypatch) -> None:
    """The folder claimed early is removed again, with the parents made for it, when nothing was
    written; a folder that was there before stays."""
    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "kept").mkdir()
    for out in (tmp_path / "results" / "deep" / "first", tmp_path / "kept"):
        runner = Runner(
            RunConfig(retrievers=["extractive"], judge="rules", out=out, limit=2),
            events=EventBus(), command=["pageindex", "bench", "run"],
        )  # fmt: skip

        async def broken(*args, out: Path = out, **kwargs):
            assert out.is_dir()  # claimed while the trees are built
            raise RunSetupError("no tree could be built")

        monkeypatch.setattr(runner, "_build_trees", broken)
        with pytest.raises(RunSetupError):
            asyncio.run(runner.run())
    assert not (tmp_path / "results").exists()
    assert (tmp_path / "kept").is_dir()


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc (no folder made)")
def test_a_folder_the_system_will_not_create_is_refused_before_any_tree_is_built(monkeypatch) -> None:
    runner = Runner(
        RunConfig(retrievers=["extractive"], judge="rules", out=Path("/proc/pageindex-x/run"), limit=1),
        events=EventBus(), command=["pageindex", "bench", "run"],
    )  # fmt: skip

    async def never(*args, **kwargs):
        raise AssertionError("trees were built for a run that cannot be written")

    monkeypatch.setattr(runner, "_build_trees", never)
    with pytest.raises(RunSetupError) as refused:
        asyncio.run(runner.run())
    assert str(refused.value).startswith("--out /proc/pageindex-x/run: cannot create the run folder (")


def test_the_folder_is_removed_while_the_run_still_holds_it(tmp_path: Path, monkeypatch) -> None:
    """Removed after the claim was released, a run started into the folder in that moment claimed it,
    then lost it to the removal (and failed writing run.json into a folder gone)."""

    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "results" / "first"
    runner = Runner(
        RunConfig(retrievers=["extractive"], judge="rules", out=out, limit=2),
        events=EventBus(), command=["pageindex", "bench", "run"],
    )  # fmt: skip

    async def broken(*args, **kwargs):
        raise RunSetupError("no tree could be built")

    monkeypatch.setattr(runner, "_build_trees", broken)
    there_when_released: list[bool] = []
    real_release = FolderClaim.release

    def release(claim: FolderClaim) -> None:
        there_when_released.append(out.exists())
        real_release(claim)

    monkeypatch.setattr(FolderClaim, "release", release)
    with pytest.raises(RunSetupError):
        asyncio.run(runner.run())
    assert there_when_released == [False] and not (tmp_path / "results").exists()


SLOW_TREES = """
import asyncio, sys
from bench.runner import Runner
async def slow(self, *args, **kwargs):
    print("building", file=sys.stderr, flush=True)
    await asyncio.sleep(120)  # trees that take long (a real dataset's first build)
Runner._build_trees = slow
from pageindex.cli import main
main()
"""


def test_ctrl_c_twice_while_the_trees_are_built_leaves_no_folder(tmp_path: Path, env) -> None:
    """The second Ctrl-C quits at once (os._exit): the folder the run had made for itself stayed, empty,
    and a --resume of it said 'run.json does not exist'."""
    out = tmp_path / "results" / "first"
    args = ["bench", "run", "-q", "-r", "extractive", "--judge", "rules", "--limit", "1", "-o", str(out)]
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_TREES, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        assert proc.stderr.readline().strip() == "building"
        assert out.is_dir()  # claimed while the trees are built
        proc.send_signal(signal.SIGINT)
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == ExitCode.INTERRUPTED
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert not (tmp_path / "results").exists()


def test_a_folder_gone_before_it_is_claimed_is_in_use(tmp_path: Path) -> None:
    """Made by this run, then removed by another run that held it and ended in its set-up: that was
    an internal error (FileNotFoundError) rather than the folder being in use (review 18)."""
    with pytest.raises(FolderInUse):
        FolderClaim.take(tmp_path / "gone")


def test_a_run_given_no_out_takes_the_next_free_folder_when_its_run_id_is_taken(
    tmp_path: Path, monkeypatch
) -> None:
    """Two runs without --out started in the same second with the same options share a run id, also when
    they differ in settings from the environment (two CI jobs, $PAGEINDEX_MODEL a and b): the second was
    refused, exit 2, ``--out results/ID: another bench run is writing into it now; give another --out``
    (it gave none). Now it runs in ``results/ID-2``, or the next folder no run has."""
    import bench.runner

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(bench.runner, "new_run_id", lambda config: "20261128-004513-bd5d83")
    results = tmp_path / "results"
    with held_by_another_process(RUN_FOLDER_CLAIM, results / "20261128-004513-bd5d83"):
        config = RunConfig(retrievers=["extractive"], judge="rules", limit=2)
        first = asyncio.run(Runner(config, command=["pageindex", "bench", "run"]).run())
        second = asyncio.run(Runner(config, command=["pageindex", "bench", "run"]).run())
    assert first.run_id == "20261128-004513-bd5d83-2"
    assert first.run_dir == Path("results/20261128-004513-bd5d83-2")
    # the folder of a run that already wrote its files is passed over too, held or not
    assert second.run_dir == Path("results/20261128-004513-bd5d83-3")
    for outcome in (first, second):
        assert outcome.status == "finished" and len(keys(results / outcome.run_id)) == 2
        assert json.loads((results / outcome.run_id / "run.json").read_text())["run_id"] == outcome.run_id
    assert list((results / "20261128-004513-bd5d83").iterdir()) == []  # the holder's, untouched
