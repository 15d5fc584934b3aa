"""Soak test of ``pageindex bench run`` under faults, crashes and resumes.

    python -m bench.faults.soak                      # 108 samples, 30% faults, 5 SIGKILLs
    python -m bench.faults.soak --limit 60 --kills 8 --rate 0.3

What it does: starts a :class:`~bench.faults.FaultServer` on 127.0.0.1 answering with the
plausible scripted model (:class:`bench.faults.scripted.ChatPolicy`) and injecting every fault
kind at ``--rate``; runs ``--limit`` FinanceBench questions (real filings; the demo dataset when
FinanceBench is not there) through agent, planner and iterative, scored by the ``rules`` judge,
as a real ``pageindex bench run`` subprocess (``--cache rw``), SIGKILLs it at random moments
``--kills`` times (sometimes also tearing the last line, as a kill mid-write would), resuming
after each kill, and lets the last attempt finish. Then it runs the same
benchmark uninterrupted from the same cache (``--cache replay``: no model calls at all) and
compares the two summaries. It prints:

* samples written, expected, lost and duplicated; terminal statuses by kind;
* retries per call (max and mean) from the server's count of the SDK's retry header, and the cap;
* resumes survived, torn lines dropped, and whether the summaries are equal.

The replay reproduces what the cache holds: the replies of calls that succeeded and the final
failures of calls that did not (retries exhausted, a truncated or wrong-shaped body, an invalid
structured reply), which replay as the same typed error. Identical calls in flight at once are
sent once (single-flight), so recording and replay agree. Every sample must therefore be
identical (status, verdict, answer, tokens, calls) and the two summaries equal; a sample whose
replay still meets a ``ReplayMiss`` is reported as *unreplayable* and fails the soak.

Exit code 0 when the targets hold (0 lost, 0 duplicated, retries never above the cap, every
status terminal, summaries equal), 1 otherwise.

The checks (:func:`check_run`, :func:`retry_figures`, :func:`comparable_summary`) and the
process helpers (:func:`bench_run_command`, :func:`run_and_kill`) are used by the test suite too.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import typer
from pydantic import BaseModel, Field
from rich.console import Console

from bench.faults.stats import StatsSnapshot
from pageindex.cli._common import CliConsole
from pageindex.wording import counted

TERMINAL = ("answer", "fail", "error")
SOAK_RETRIEVERS = ("agent", "planner", "iterative")


# ----------------------------------------------------------------------------- checks
class RunCheck(BaseModel):
    """What a run directory holds against what it should hold."""

    samples: int  # rows in samples.jsonl (well-formed)
    expected: int  # question x retriever x repeat keys the run was asked for
    lost: list[str] = Field(default_factory=list)  # expected keys without a row
    duplicated: list[str] = Field(default_factory=list)  # keys with more than one row
    unexpected: list[str] = Field(default_factory=list)  # rows for keys nobody asked for
    statuses: dict[str, int] = Field(default_factory=dict)
    not_terminal: int = 0  # rows whose status is not answer/fail/error, or an error without a reason
    summary_mismatches: list[str] = Field(default_factory=list)  # summary.json vs the rows
    status: str = ""  # run.json status

    @property
    def ok(self) -> bool:
        return not (self.lost or self.duplicated or self.unexpected or self.not_terminal) and not (
            self.summary_mismatches
        )


def _key(row: dict[str, Any]) -> str:
    return f"{row['question_id']}|{row['retriever']}|{row.get('repeat', 0)}"


def expected_keys(run_dir: Path) -> set[str]:
    """The sample keys a run was asked for: validated questions (after --limit) minus those whose
    tree could not be built, x retrievers x repeats, from its stored config."""
    from bench.config import RunConfig
    from bench.datasets.validation import validate_dataset
    from bench.rundir import RunDir
    from bench.runner import load_dataset

    info = RunDir(run_dir).read_info()
    cfg = RunConfig.model_validate(info.extra["config"])
    dataset = load_dataset(cfg)
    selected = dataset.select(cfg.question_types, cfg.question_ids)
    kept = validate_dataset(selected, similarity_threshold=cfg.similarity_threshold).kept
    kept = kept[: cfg.limit] if cfg.limit else kept
    tree_dropped = {
        row["question_id"]
        for row in _dropped_rows(run_dir)
        if str(row.get("reason", "")).startswith("tree_build_failed")
    }
    return {
        f"{q.question_id}|{r}|{rep}"
        for q in kept
        if q.question_id not in tree_dropped
        for r in info.retrievers
        for rep in range(cfg.repeats)
    }


def _sample_rows(run_dir: Path) -> list[dict[str, Any]]:
    """Every row of the run's ``samples.jsonl``, repeats kept (they are what the check counts), read
    by the file's owner: a torn last line is left out as a resume leaves it out, and any other
    malformed line fails the check as it fails ``bench summary``."""
    from bench.rundir import RunDir
    from bench.samples import read_samples_file

    path = RunDir(run_dir).samples_path
    if not path.exists():
        return []
    return [s.model_dump(mode="json") for s in read_samples_file(path, keep_repeats=True)[0]]


def _dropped_rows(run_dir: Path) -> list[dict[str, Any]]:
    from bench.rundir import RunDir

    return [d.model_dump(mode="json") for d in RunDir(run_dir).read_dropped()]


def _summary(run_dir: Path) -> dict[str, Any]:
    from bench.rundir import RunDir

    return RunDir(run_dir).read_summary().model_dump(mode="json")


def check_run(run_dir: str | Path) -> RunCheck:
    """Compare ``samples.jsonl`` with the keys the run was asked for and with ``summary.json``."""
    run_dir = Path(run_dir)
    rows = _sample_rows(run_dir)
    counts = Counter(_key(r) for r in rows)
    expected = expected_keys(run_dir)
    statuses = Counter(r["status"] for r in rows)
    not_terminal = sum(
        1
        for r in rows
        if r["status"] not in TERMINAL
        or (r["status"] == "error" and not r.get("error"))
        or (r["status"] == "fail" and not r.get("reason"))
    )
    from bench.rundir import RunDir

    info = RunDir(run_dir).read_info()
    return RunCheck(
        samples=len(rows),
        expected=len(expected),
        lost=sorted(expected - set(counts)),
        duplicated=sorted(k for k, n in counts.items() if n > 1),
        unexpected=sorted(set(counts) - expected),
        statuses=dict(statuses),
        not_terminal=not_terminal,
        summary_mismatches=summary_mismatches(run_dir, rows),
        status=info.status,
    )


def summary_mismatches(run_dir: Path, rows: list[dict[str, Any]]) -> list[str]:
    """Differences between ``summary.json``'s counts and counts taken from the rows themselves."""
    if not (run_dir / "summary.json").exists():
        return ["summary.json is missing"]
    summary = _summary(run_dir)
    out = []

    def compare(label: str, group: dict[str, Any], subset: list[dict[str, Any]]) -> None:
        own = {
            "n": len(subset),
            "correct": sum(r.get("verdict") == "correct" for r in subset),
            "incorrect": sum(r.get("verdict") == "incorrect" for r in subset),
            "refusals": sum(r.get("verdict") == "refusal" for r in subset),
            "failed": sum(r["status"] == "fail" for r in subset),
            "errored": sum(r["status"] == "error" for r in subset),
        }
        for field, value in own.items():
            if group.get(field) != value:
                out.append(f"{label}.{field}: summary {group.get(field)} vs samples {value}")

    if summary.get("n_samples") != len(rows):
        out.append(f"n_samples: summary {summary.get('n_samples')} vs samples {len(rows)}")
    compare("overall", summary["overall"], rows)
    groups = {g["group"]: g for g in summary.get("by_retriever", [])}
    for retriever in sorted({r["retriever"] for r in rows} | set(groups)):
        subset = [r for r in rows if r["retriever"] == retriever]
        compare(f"by_retriever[{retriever}]", groups.get(retriever, {}), subset)
    dropped = _dropped_rows(run_dir)
    if summary.get("n_dropped") != len(dropped):
        out.append(f"n_dropped: summary {summary.get('n_dropped')} vs dropped.jsonl {len(dropped)}")
    return out


_VOLATILE = {"latency_s", "run_id", "status"}


def comparable_summary(summary: dict[str, Any]) -> dict[str, Any]:
    """``summary.json`` without what legitimately differs between two runs of the same samples:
    wall-clock latency, the run id and the final status."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in _VOLATILE}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return strip(summary)


class RetryFigures(BaseModel):
    calls: int  # first attempts seen by the server
    requests: int
    max_retries_seen: int  # highest x-stainless-retry-count the server received
    mean_retries: float  # retries per call

    @classmethod
    def of(cls, stats: StatsSnapshot) -> RetryFigures:
        return retry_figures(stats)


def retry_figures(stats: StatsSnapshot) -> RetryFigures:
    """Retries per call from the SDK's retry-count header as counted by the fault server: every
    attempt of a call carries its retry number (0 for the first)."""
    tally = {int(k): v for k, v in stats.retry_count_header.items()}
    calls = tally.get(0, 0)
    requests = sum(tally.values())
    return RetryFigures(
        calls=calls,
        requests=requests,
        max_retries_seen=max(tally, default=0),
        mean_retries=(requests - calls) / calls if calls else 0.0,
    )


# ----------------------------------------------------------------------------- processes
def bench_run_command(*args: str) -> list[str]:
    """``pageindex bench run ARGS`` as an argv for this interpreter."""
    return [sys.executable, "-c", "from pageindex.cli import main; main()", "bench", "run", *args]


def run_and_kill(
    argv: list[str],
    *,
    env: dict[str, str],
    samples_file: Path,
    kill_after_samples: int,
    timeout_s: float = 300.0,
) -> bool:
    """Start ``argv``; SIGKILL it once ``samples_file`` holds at least ``kill_after_samples`` lines
    (plus a random few milliseconds, so some kills land mid-write). Returns whether it was killed
    (False: it finished first)."""
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout_s
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            if samples_file.exists() and _line_count(samples_file) >= kill_after_samples:
                time.sleep(random.uniform(0, 0.03))
                if proc.poll() is None:
                    proc.send_signal(signal.SIGKILL)
                    proc.wait()
                    return True
                return False
            time.sleep(0.01)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
            raise TimeoutError(f"bench run did not finish within {timeout_s:.0f}s")
        return False
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _line_count(path: Path) -> int:
    with path.open("rb") as fh:
        return fh.read().count(b"\n")


def tear_last_line(samples_file: Path) -> bool:
    """Cut the file inside its last row, as a crash mid-write would (``False`` if it is empty)."""
    data = samples_file.read_bytes()
    if not data.strip():
        return False
    body = data.rstrip(b"\n")
    start = body.rfind(b"\n") + 1
    samples_file.write_bytes(body[: start + max(1, (len(body) - start) // 2)])
    return True


# ----------------------------------------------------------------------------- the soak
_SAME = ("status", "verdict", "answer", "retriever_prompt_tokens", "retriever_completion_tokens", "llm_calls")


def sample_differences(run_dir: Path, ref_dir: Path) -> tuple[list[str], list[str]]:
    """Keys whose rows differ between two runs: (unreplayable, unexplained). A difference is
    unreplayable when the reference row met a ReplayMiss (a call the recorded run never completed)."""
    a = {_key(r): r for r in _sample_rows(run_dir)}
    b = {_key(r): r for r in _sample_rows(ref_dir)}
    unreplayable, unexplained = [], []
    for key in sorted(set(a) | set(b)):
        x, y = a.get(key), b.get(key)
        if x is not None and y is not None and all(x.get(f) == y.get(f) for f in _SAME):
            continue
        if y is not None and "ReplayMiss" in str(y.get("error") or ""):
            unreplayable.append(key)
        else:
            unexplained.append(key)
    return unreplayable, unexplained


class SoakReport(BaseModel):
    check: RunCheck
    reference: RunCheck
    retries: RetryFigures
    retry_cap: int
    kills: int
    resumes: int
    torn_lines: int
    summaries_equal: bool
    unreplayable: list[str] = Field(default_factory=list)
    unexplained: list[str] = Field(default_factory=list)
    summary_diff: list[str] = Field(default_factory=list)
    faults: dict[str, int] = Field(default_factory=dict)
    seconds: float

    @property
    def ok(self) -> bool:
        return (
            self.check.ok
            and self.reference.ok
            and self.retries.max_retries_seen <= self.retry_cap
            and not self.unexplained
            and not self.unreplayable
            and self.summaries_equal
            and self.check.status == "finished"
        )


def _diff(a: Any, b: Any, path: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            out += _diff(a.get(k), b.get(k), f"{path}.{k}" if path else k)
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in _diff(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


def benchmark_args(data: Path, limit: int) -> list[str]:
    """What both the soak run and its reference run ask for."""
    return [
        "--data-dir", str(data), "-r", ",".join(SOAK_RETRIEVERS), "--model", "openai/soak-model",
        "--judge", "rules", "--limit", str(limit),
    ]  # fmt: skip


def soak(
    workdir: Path,
    *,
    rate: float = 0.3,
    kills: int = 5,
    limit: int = 36,
    data_dir: Path | None = None,
    max_retries: int = 2,
    timeout_s: float = 1.0,
    concurrency: int = 6,
    seed: int = 7,
    log: Console | None = None,
) -> SoakReport:
    """Run the soak in ``workdir`` (see the module docstring)."""
    from bench.datasets.demo import write_demo_dataset
    from bench.datasets.financebench import default_financebench_dir
    from bench.faults import FaultServer
    from bench.faults.scripted import ChatPolicy

    say = log.print if log else (lambda *a, **k: None)
    rng = random.Random(seed)
    random.seed(seed)
    data = data_dir or default_financebench_dir()
    if data is None:
        data = workdir / "data"
        if not (data / "questions.jsonl").exists():
            write_demo_dataset(data)
    run_dir, ref_dir, cache = workdir / "run", workdir / "reference", workdir / "llm-cache.sqlite"
    env = {**os.environ, "OPENAI_API_KEY": "sk-soak-not-a-real-key"}
    started = time.monotonic()
    with FaultServer(
        policy=ChatPolicy(), rate=rate, seed=seed, stall_seconds=timeout_s * 2, retry_after_seconds=0.05
    ) as srv:
        common = [
            "--base-url", srv.base_url, "--max-retries", str(max_retries), "--timeout", str(timeout_s),
            "--concurrency", str(concurrency), "--cache", "rw", "--cache-path", str(cache), "-q",
        ]  # fmt: skip
        resume = bench_run_command("--resume", str(run_dir), *common)
        argv = bench_run_command(*benchmark_args(data, limit), "--out", str(run_dir), *common)
        samples_file = run_dir / "samples.jsonl"
        done_kills = resumes = torn = 0
        while done_kills < kills:
            have = _line_count(samples_file) if samples_file.exists() else 0
            step = max(1, (limit * len(SOAK_RETRIEVERS) - have) // (kills - done_kills + 1))
            target = have + rng.randint(1, 2 * step - 1)  # kills spread over the whole run
            if not run_and_kill(argv, env=env, samples_file=samples_file, kill_after_samples=target):
                say("the run finished before the next kill")
                break
            done_kills += 1
            if rng.random() < 0.4 and tear_last_line(samples_file):
                torn += 1  # as if the kill had landed mid-write
            say(f"kill {done_kills}: SIGKILL after {_line_count(samples_file)} samples")
            argv, resumes = resume, resumes + 1
        final = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=1200)
        say(f"last attempt: exit code {final.returncode}")
        stats = srv.stats()
    # The reference: the same benchmark, uninterrupted, answered from the same cache only.
    ref = subprocess.run(
        bench_run_command(
            *benchmark_args(data, limit),
            "--out",
            str(ref_dir),
            "--cache",
            "replay",
            "--cache-path",
            str(cache),
            "--base-url",
            "http://127.0.0.1:9/v1",
            "-q",
        ),  # fmt: skip
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    say(f"reference (uninterrupted replay): exit code {ref.returncode}")
    a = comparable_summary(_summary(run_dir))
    b = comparable_summary(_summary(ref_dir))
    diff = _diff(a, b)
    unreplayable, unexplained = sample_differences(run_dir, ref_dir)
    return SoakReport(
        unreplayable=unreplayable,
        unexplained=unexplained,
        check=check_run(run_dir),
        reference=check_run(ref_dir),
        retries=retry_figures(stats),
        retry_cap=max_retries,
        kills=done_kills,
        resumes=resumes,
        torn_lines=torn,
        summaries_equal=not diff,
        summary_diff=diff[:20],
        faults=dict(sorted(stats.by_fault.items())),
        seconds=time.monotonic() - started,
    )


def print_report(report: SoakReport, console: Console) -> None:
    c, r = report.check, report.retries
    same = "equal to" if report.summaries_equal else "DIFFERS from"
    lines = [
        f"samples        {c.samples} (expected {c.expected})",
        "statuses       " + ", ".join(f"{k} {v}" for k, v in sorted(c.statuses.items())),
        f"lost           {len(c.lost)}",
        f"duplicated     {len(c.duplicated)}",
        f"not terminal   {c.not_terminal}",
        f"retries/call   max {r.max_retries_seen} (cap {report.retry_cap}), mean {r.mean_retries:.2f} "
        f"over {r.calls} calls / {r.requests} requests",
        "faults         " + ", ".join(f"{k}={v}" for k, v in report.faults.items()),
        f"resumes        {report.resumes} survived ({report.kills} SIGKILLs, "
        f"{counted(report.torn_lines, 'torn last line')} dropped)",
        f"summary        {'matches' if not c.summary_mismatches else 'DOES NOT match'} samples.jsonl; "
        f"{same} the uninterrupted replay",
        f"replay         {c.samples - len(report.unreplayable) - len(report.unexplained)} samples identical, "
        f"{len(report.unreplayable)} unreplayable (replay miss), "
        f"{len(report.unexplained)} unexplained differences",
        *[f"  {line}" for line in (report.summary_diff if report.unexplained else [])],
        f"time           {report.seconds:.0f} s",
    ]
    for line in lines:
        console.print(line, highlight=False)
    console.print("[bold green]PASS[/]" if report.ok else "[bold red]FAIL[/]")


def main(
    rate: float = typer.Option(0.3, help="Share of requests that get a fault."),
    kills: int = typer.Option(5, help="SIGKILLs at random points (each followed by --resume)."),
    limit: int = typer.Option(36, help="Questions (x 3 retrievers = samples)."),
    data_dir: Path = typer.Option(None, help="FinanceBench-format directory (default: FinanceBench)."),
    max_retries: int = typer.Option(2, "--max-retries", help="Retry cap per model call."),
    timeout: float = typer.Option(1.0, help="Seconds per model call attempt."),
    concurrency: int = typer.Option(6, help="Samples in flight."),
    seed: int = typer.Option(7, help="Seed of the fault choice and the kill points."),
    workdir: Path = typer.Option(None, help="Where to put runs and the cache (default: a temp dir)."),
) -> None:
    """Run the soak and print its figures; exit 1 if a target is missed."""
    console = CliConsole()
    root = workdir or Path(tempfile.mkdtemp(prefix="pageindex-soak-"))
    root.mkdir(parents=True, exist_ok=True)
    console.print(f"soak in {root}: rate {rate}, {kills} kills, {limit} questions x 3 retrievers, "
                  f"retry cap {max_retries}", highlight=False)  # fmt: skip
    report = soak(
        root, rate=rate, kills=kills, limit=limit, data_dir=data_dir, max_retries=max_retries,
        timeout_s=timeout, concurrency=concurrency, seed=seed, log=console,
    )  # fmt: skip
    print_report(report, console)
    raise typer.Exit(0 if report.ok else 1)


if __name__ == "__main__":
    typer.run(main)
