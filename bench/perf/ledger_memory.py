"""What a run's usage ledger holds, with every record kept (as before) and as ``bench run`` keeps it now.

Usage: ``python bench/perf/ledger_memory.py [DATA_DIR] [--repeats 4] [--retrievers agent,iterative,bm25]``

Runs the questions of a FinanceBench-format folder (default: the demo dataset) x the retrievers x
``--repeats`` with the plausible scripted model (``bench.faults.scripted``) and the ``llm`` judge, trees
cached (a warm-up run builds them), twice in this process: once with the ledger keeping every record of
the run (``UsageLedger()``, what ``bench run`` made before), once as ``bench run`` makes it now
(``keep_records=False``: the records of the retrievals under way, the run's totals as running sums).
For each it prints the records the ledger holds at the end of the run and the Python memory
(``tracemalloc``) the finished run still holds per sample (the samples, kept for the summary, and the
ledger), and checks that run.json's usage figures are the same.
"""

from __future__ import annotations

import asyncio
import gc
import json
import tempfile
import tracemalloc
from pathlib import Path

import typer

import pageindex.llm
from bench.config import RunConfig
from bench.faults.scripted import policy
from bench.perf import dataset_folder
from bench.runner import Runner
from pageindex.cli._common import CliConsole
from pageindex.llm.ledger import UsageLedger

DEMO = Path(__file__).resolve().parents[2] / "datasets" / "demo"


class KeepEveryRecord(UsageLedger):
    """The ledger as ``bench run`` made it before: every record of the run kept."""

    def __init__(self, *, keep_records: bool = True) -> None:
        super().__init__(keep_records=True)


def _measure(base: dict, out: Path) -> tuple[int, int, int, float, dict]:
    """(samples, calls entered, records held, bytes held per sample, run.json's usage figures)."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    runner = Runner(RunConfig(**base, out=out), scripted=policy)
    outcome = asyncio.run(runner.run())
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    info = json.loads((out / "run.json").read_text())
    usage = {k: info.get(k) for k in ("sent_usage", "cached_usage", "unrecorded_usage")}
    ledger = runner._ledger
    return outcome.samples_written, len(ledger), ledger.records_held, held / outcome.samples_written, usage


def main(
    data_dir: Path = typer.Argument(None, help="FinanceBench-format directory (default: the demo dataset)."),
    repeats: int = typer.Option(4, min=1, help="Repeats of every question and retriever."),
    retrievers: str = typer.Option("agent,iterative,bm25", help="Comma-separated retrievers."),
) -> None:
    """Print the ledger's records and the memory a finished run holds per sample, before and after."""
    say = CliConsole().print
    data_dir = dataset_folder(data_dir) if data_dir is not None else DEMO
    base = dict(data_dir=data_dir, retrievers=retrievers, model="scripted", judge="llm", concurrency=4)
    work = Path(tempfile.mkdtemp(prefix="ledger-memory-"))
    asyncio.run(Runner(RunConfig(**base, out=work / "warmup"), scripted=policy).run())  # trees cached
    base["repeats"] = repeats
    real = pageindex.llm.UsageLedger
    pageindex.llm.UsageLedger = KeepEveryRecord  # type: ignore[misc]
    try:
        n, calls, held_before, kb_before, usage_before = _measure(base, work / "every-record")
    finally:
        pageindex.llm.UsageLedger = real  # type: ignore[misc]
    n2, calls2, held_after, kb_after, usage_after = _measure(base, work / "held-while-under-way")
    say(f"{n:,} samples, {calls:,} model calls ({calls / n:.1f} a sample), {retrievers}, repeats {repeats}",
        highlight=False)  # fmt: skip
    say(f"every record kept: {held_before:,} records held at the end, {kb_before / 1024:.1f} KB a sample",
        highlight=False)  # fmt: skip
    say(f"as bench run keeps it: {held_after:,} records held at the end, {kb_after / 1024:.1f} KB a "
        f"sample; ratio {kb_after / kb_before:.2f}, {(kb_before - kb_after) / 1024:.2f} KB a sample less "
        f"({(kb_before - kb_after) * n / calls / 1024:.2f} KB a call)", highlight=False)  # fmt: skip
    same = usage_before == usage_after and (n, calls) == (n2, calls2)
    say(f"run.json's sent_usage, cached_usage, unrecorded_usage: {'the same' if same else 'DIFFERENT'}",
        highlight=False)  # fmt: skip
    if not same:
        raise typer.Exit(1)


if __name__ == "__main__":
    typer.run(main)
