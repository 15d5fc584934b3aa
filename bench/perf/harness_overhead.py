"""The bench runner's own overhead per sample (everything but model time).

Usage: ``python bench/perf/harness_overhead.py [DATA_DIR] [--questions 100] [--retrievers a,b,c]``

Runs ``--questions`` questions x the retrievers (default 100 x 3 = 300 samples) of a
FinanceBench-format directory (default FinanceBench, else the demo dataset) with the plausible
scripted model (``bench.faults.scripted``) and the ``llm`` judge, one sample at a time, after a
warm-up pass that builds the trees (so trees are cached, as the target assumes). The time spent
inside the scripted model's policy is "model time"; everything else -- loading and validating
the dataset, the retrievers' loops and tools, prompts, the LLM client (SDK, instructor, HTTP
transport), verification, judging, writing fsynced samples, the summary -- is harness overhead.
Target: under 50 ms per sample.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

import typer

from bench.config import RunConfig
from bench.datasets.financebench import default_financebench_dir
from bench.faults.scripted import policy as plausible
from bench.perf import dataset_folder
from bench.runner import Runner, RunSetupError, choose_retrievers
from pageindex.cli._common import CliConsole, fail


class TimedPolicy:
    """The scripted policy, with the time spent in it (model time) added up."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.calls = 0

    def __call__(self, request):
        start = time.perf_counter()
        try:
            return plausible(request)
        finally:
            self.seconds += time.perf_counter() - start
            self.calls += 1


def main(
    data_dir: Path = typer.Argument(None, help="FinanceBench-format directory (default: FinanceBench)."),
    questions: int = typer.Option(100, min=1, help="Questions to run."),
    retrievers: str = typer.Option("agent,iterative,oracle", help="Comma-separated retrievers."),
) -> None:
    """Print the harness overhead per sample."""
    console = CliConsole()
    if data_dir is None:
        data_dir = default_financebench_dir()
    else:
        dataset_folder(data_dir)
    base = dict(data_dir=data_dir, retrievers=retrievers, model="scripted", judge="llm", limit=questions)
    base["concurrency"] = 1
    try:  # a retriever's name checked before the warm-up builds every tree (minutes), not after it
        choose_retrievers(RunConfig(**base), "scripted")
    except RunSetupError as exc:
        fail(f"--retrievers {retrievers!r}: {exc}")
    work = Path(tempfile.mkdtemp(prefix="harness-overhead-"))
    # warm-up: build (or load) every tree once
    warmup = RunConfig(**{**base, "retrievers": "oracle"}, out=work / "warmup")
    asyncio.run(Runner(warmup, scripted=plausible).run())
    timed = TimedPolicy()
    runner = Runner(RunConfig(**base, out=work / "run"), scripted=timed)
    start = time.perf_counter()
    outcome = asyncio.run(runner.run())
    wall = time.perf_counter() - start
    n = outcome.samples_written
    overhead = (wall - timed.seconds) / n
    console.print(
        f"{n} samples ({questions} questions x {len(retrievers.split(','))} retrievers), "
        f"{timed.calls} model calls, concurrency 1, trees cached",
        highlight=False,
    )
    console.print(
        f"wall {wall:.2f} s, model (scripted policy) {timed.seconds:.2f} s, "
        f"harness {wall - timed.seconds:.2f} s",
        highlight=False,
    )
    verdict = "[green]under[/]" if overhead < 0.050 else "[red]OVER[/]"
    console.print(f"harness overhead per sample: {overhead * 1000:.1f} ms ({verdict} the 50 ms target)")


if __name__ == "__main__":
    typer.run(main)
