"""A real ``pageindex bench run`` process: SIGKILL and resume (torn line dropped with a warning,
every sample exactly once, summary equal to an uninterrupted run from the same cache), and
Ctrl-C (summary written, clear message, exit 130; a second Ctrl-C exits at once, files intact)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from bench.datasets.demo import write_demo_dataset
from bench.faults.soak import bench_run_command, check_run, comparable_summary, run_and_kill, tear_last_line
from bench.samples import load_samples

SLOW_POLICY = """
import time
from bench.faults.scripted import policy as plausible

def policy(request):
    time.sleep(0.05)  # a model that takes a moment, so signals land mid-run
    return plausible(request)
"""


@pytest.fixture(scope="module")
def setup(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("proc")
    write_demo_dataset(root / "data")
    (root / "slow.py").write_text(SLOW_POLICY)
    env = {**os.environ, "PAGEINDEX_CACHE_DIR": str(root / "cache")}
    env.pop("OPENAI_API_KEY", None)
    return {"root": root, "env": env}


def args(setup: dict, out: Path, *extra: str) -> list[str]:
    root = setup["root"]
    return bench_run_command(
        "--data-dir", str(root / "data"), "-r", "agent,planner,iterative", "--model", "scripted",
        "--scripted-policy", f"{root / 'slow.py'}:policy", "--judge", "llm", "--limit", "4",
        "--concurrency", "2", "--cache", "rw", "--cache-path", str(root / "llm.sqlite"), "--out", str(out),
        "-q", *extra,
    )  # fmt: skip


def test_sigkill_then_resume_equals_an_uninterrupted_run(setup, tmp_path):
    env, samples = setup["env"], tmp_path / "run" / "samples.jsonl"
    assert run_and_kill(args(setup, tmp_path / "run"), env=env, samples_file=samples, kill_after_samples=4)
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert info["status"] == "running" and not (tmp_path / "run" / "summary.json").exists()
    kept = len(load_samples(samples))
    assert 4 <= kept < 12
    assert tear_last_line(samples)  # the kill landed mid-write

    resume = bench_run_command("--resume", str(tmp_path / "run"), "-q")
    done = subprocess.run(resume, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "dropped a partial last line" in done.stderr
    assert f"{kept - 1} already done" in " ".join(done.stdout.split())
    check = check_run(tmp_path / "run")
    assert check.ok and check.samples == 12 and check.status == "finished", check

    reference = subprocess.run(
        args(setup, tmp_path / "ref"), env=env, capture_output=True, text=True, timeout=120
    )
    assert reference.returncode == 0, reference.stderr
    a = comparable_summary(json.loads((tmp_path / "run" / "summary.json").read_text()))
    b = comparable_summary(json.loads((tmp_path / "ref" / "summary.json").read_text()))
    assert a == b
    rows = {s.key: (s.answer, s.verdict, s.tokens) for s in load_samples(samples)}
    ref = {s.key: (s.answer, s.verdict, s.tokens) for s in load_samples(tmp_path / "ref" / "samples.jsonl")}
    assert rows == ref


def live(setup: dict, out: Path) -> list[str]:
    """:func:`args` with a cache of its own: the module's cache holds the earlier tests' replies, and a run
    replayed from it (no model time) could finish before a signal sent after its second sample landed
    (exit 0, not 130: seen under load in a full suite)."""
    return args(setup, out, "--cache-path", str(out.parent / f"{out.name}.sqlite"))


def _wait_for_lines(path: Path, n: int, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if path.exists() and path.read_bytes().count(b"\n") >= n:
            return
        time.sleep(0.01)
    raise AssertionError(f"{path} never reached {n} lines (exit {proc.poll()})")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_stop_the_run_as_ctrl_c_does(setup, tmp_path, sig):
    """Trial 15: a cancelled CI job (SIGTERM), `timeout`, `docker stop` or a closed terminal (SIGHUP)
    killed the run with no summary and run.json left "running" for a process that was gone."""
    out = tmp_path / "term"
    proc = subprocess.Popen(
        live(setup, out), env=setup["env"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    _wait_for_lines(out / "samples.jsonl", 2, proc)
    proc.send_signal(sig)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert f"interrupted ({sig.name}): no new samples start" in stderr
    assert f"({sig.name} again to quit at once)" in stderr  # not "Ctrl-C again", which was not pressed
    info = json.loads((out / "run.json").read_text())
    assert info["status"] == "interrupted" == json.loads((out / "summary.json").read_text())["status"]
    assert not check_run(out).duplicated


def test_a_run_under_nohup_goes_on_when_its_terminal_closes(setup, tmp_path):
    """Review 17: handling SIGHUP replaced the "ignore" `nohup` had set, so a nohup'd run stopped
    when its terminal closed."""
    out = tmp_path / "nohup"
    proc = subprocess.Popen(
        args(setup, out), env=setup["env"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN),
    )  # fmt: skip
    _wait_for_lines(out / "samples.jsonl", 2, proc)
    proc.send_signal(signal.SIGHUP)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    assert json.loads((out / "run.json").read_text())["status"] == "finished"


def test_ctrl_c_writes_the_summary_and_a_second_exits_at_once(setup, tmp_path):
    env = setup["env"]
    out = tmp_path / "int"
    proc = subprocess.Popen(
        live(setup, out), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    _wait_for_lines(out / "samples.jsonl", 3, proc)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "interrupted: no new samples start" in stderr and f"--resume {out}" in " ".join(stderr.split())
    info = json.loads((out / "run.json").read_text())
    summary = json.loads((out / "summary.json").read_text())
    assert info["status"] == "interrupted" == summary["status"]
    check = check_run(out)
    assert not check.duplicated and not check.summary_mismatches and 3 <= check.samples < 12
    assert summary["n_samples"] == check.samples

    # A second Ctrl-C: out at once, no summary rewritten, the sample file still loads.
    out2 = tmp_path / "int2"
    proc = subprocess.Popen(
        live(setup, out2), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    _wait_for_lines(out2 / "samples.jsonl", 2, proc)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    started = time.monotonic()
    proc.communicate(timeout=30)
    # 130, or death by SIGINT where the second Ctrl-C came as the process was already ending (Python
    # gives SIGINT its default action back while it shuts down); a shell reports 130 for both
    assert proc.returncode in (130, -signal.SIGINT) and time.monotonic() - started < 5
    partial = load_samples(out2 / "samples.jsonl")
    assert len(partial) >= 2 and len({s.key for s in partial}) == len(partial)
    done = subprocess.run(
        bench_run_command("--resume", str(out2), "-q"), env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert check_run(out2).ok and check_run(out2).samples == 12


BLOCKING_POLICY = """
import time
from bench.faults.scripted import policy as plausible

def policy(request):
    time.sleep(0.03)  # blocks the event loop: a sample never yields to it
    return plausible(request)
"""


@pytest.mark.parametrize(
    "retriever",
    [
        ["-r", "extractive", "--judge", "rules", "--repeats", "30"],  # no model, no await that suspends
        ["-r", "iterative", "--judge", "rules", "--model", "scripted"],  # a scripted model answers in-line
    ],
    ids=["extractive", "iterative-scripted"],
)
def test_ctrl_c_stops_a_run_whose_samples_never_yield_to_the_event_loop(setup, tmp_path, retriever):
    """The loop runs the Ctrl-C handler only when it gets a turn: the runner gives it one between
    samples, so the interrupt is honoured whatever the retriever (it was ignored to the end of the
    run, status finished, exit 0)."""
    (tmp_path / "blocking.py").write_text(BLOCKING_POLICY)
    out = tmp_path / "int"
    policy = ["--scripted-policy", f"{tmp_path / 'blocking.py'}:policy"] if "scripted" in retriever else []
    argv = bench_run_command(
        "--data-dir", str(setup["root"] / "data"), *retriever, *policy, "--concurrency", "1", "--out",
        str(out), "-q",
    )  # fmt: skip
    proc = subprocess.Popen(argv, env=setup["env"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait_for_lines(out / "samples.jsonl", 2, proc)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    info = json.loads((out / "run.json").read_text())
    summary = json.loads((out / "summary.json").read_text())
    check = check_run(out)
    assert info["status"] == "interrupted" == summary["status"] == check.status
    # it stopped soon after the Ctrl-C, long before the end (ignored, it ran all 18 or 540): how many
    # finished in between is the machine's speed (6 at most until extractive kept its pages' reading: 7)
    assert 2 <= check.samples <= max(6, check.expected // 10) < check.expected, check
    assert not check.duplicated and not check.summary_mismatches and summary["n_samples"] == check.samples
