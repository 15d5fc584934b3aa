"""How the harness's costs grow with the size of a run and of the LLM cache, as ratios measured in one run.

Usage: ``python bench/perf/scale.py [--samples 2000] [--entries 50000] [--misses 40] [--calls 2000]``

* **summary**: :func:`bench.summary.summarize` of N, 2N and 4N synthetic samples (questions x 4
  retrievers x 2 repeats, verdicts that differ between repeats for a quarter of the questions, 30
  documents): the time per sample should stay flat (ratios near 1; before the repeat agreement was
  counted in one pass it was a pandas Series per question in each of 14 groupings, 1.9 ms a sample).
* **replay misses**: a ``replay/m`` client's misses against a cache of 1,000 replies and one of
  ``--entries`` (6 KB requests, as a scripted recording's), with one older-format recording in each so
  that every miss message counts them: the time per miss should not grow with the cache (it read every
  recording once a miss, 0.5 s a miss at 100,000 replies, before the counts were read once a cache).
* **scripted model**: Python memory held after ``--calls`` calls of a scripted model made of a policy
  function, as ``--model scripted`` makes it (``keep_requests=False``), and of one that keeps its
  requests for a test to read: bytes held per call, with a usage ledger that keeps every record (a
  client's own, ``make_client``'s default) and with one as ``bench run`` makes it
  (``keep_records=False``: nothing held once a retrieval is over; these calls belong to none).
"""

from __future__ import annotations

import asyncio
import gc
import json
import sqlite3
import tempfile
import time
import tracemalloc
from pathlib import Path

import typer

from bench.runinfo import DatasetInfo, RunInfo
from bench.samples import Sample
from bench.summary import summarize
from pageindex.cli._common import CliConsole
from pageindex.llm import LLMCache, Message, ReplayMiss, ScriptedModel, UsageLedger, make_client
from pageindex.llm.wire import REQUEST_FORMAT

RETRIEVERS = ("agent", "iterative", "oracle", "bm25")
REPEATS = 2


def _samples(n: int) -> list[Sample]:
    questions = max(1, n // (len(RETRIEVERS) * REPEATS))
    out = []
    for q in range(questions):
        for r in RETRIEVERS:
            for rep in range(REPEATS):
                verdict = "incorrect" if q % 4 == 0 and rep == 1 else ("correct" if q % 3 else "incorrect")
                out.append(
                    Sample(
                        run_id="scale", question_id=f"q{q:05d}", retriever=r, repeat=rep, model="scripted",
                        status="answer", verdict=verdict, evidence_hit=verdict == "correct",
                        question=f"What was the revenue of question {q}?", question_type="metrics-generated",
                        doc_id=f"DOC_{q % 30}", doc_type="10k", gold_answer="$1,577 million",
                        answer="$1,577 million", judge="rules", retriever_prompt_tokens=1000,
                    )  # fmt: skip
                )
    return out


def _info() -> RunInfo:
    return RunInfo(
        run_id="scale", command=["pageindex", "bench", "run"], package_version="0",
        dataset=DatasetInfo(name="scale", path="/scale", sha256="0", content_sha256="0"),
        retrievers=list(RETRIEVERS), model="scripted", builder_version="0", judge="rules",
        judge_version="0", started_at="2026-01-01T00:00:00Z", status="finished",
    )  # fmt: skip


def _summary_seconds_per_sample(n: int) -> float:
    samples, info = _samples(n), _info()
    start = time.perf_counter()
    summarize(samples, info)
    return (time.perf_counter() - start) / len(samples)


def _cache(path: Path, entries: int) -> Path:
    request = json.dumps({"format": REQUEST_FORMAT, "kind": "chat", "messages": "x" * 6000})
    cache = LLMCache(path, "rw")  # one recording of an older request format (no "format" field)
    cache.put("old", model="m", kind="chat", request={"kind": "chat"}, reply={},
              prompt_tokens=1, completion_tokens=1)  # fmt: skip
    cache.close()
    conn = sqlite3.connect(path)
    rows = ((f"k{i}", "m", "chat", request, "{}", 1, 1, 0.0) for i in range(entries - 1))
    conn.executemany("INSERT INTO replies VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
    conn.commit()
    conn.close()
    return path


def _seconds_per_miss(path: Path, misses: int) -> tuple[float, float]:
    """The first miss (which reads the counts its message gives) and the mean of the ``misses`` after it."""
    client = make_client("replay/m", cache=LLMCache(path, "replay"))
    times = []
    for k in range(misses + 1):
        start = time.perf_counter()
        try:
            asyncio.run(client.chat([Message(role="user", content=f"a question never recorded {k}")]))
        except ReplayMiss:
            pass
        times.append(time.perf_counter() - start)
    return times[0], sum(times[1:]) / misses


def _bytes_held_per_call(calls: int, keep: bool, keep_records: bool = True) -> float:
    model = ScriptedModel(policy=lambda request: "ok", keep_requests=keep)
    client = make_client("scripted", scripted=model, ledger=UsageLedger(keep_records=keep_records))
    prompt = [Message(role="user", content="y" * 6000)]

    async def go() -> None:
        for _ in range(calls):
            await client.chat(prompt)

    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    asyncio.run(go())
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    return held / calls


def main(
    samples: int = typer.Option(2000, min=8, help="N: the summary is timed at N, 2N and 4N samples."),
    entries: int = typer.Option(50_000, min=2000, help="Replies in the large LLM cache."),
    misses: int = typer.Option(40, min=1, help="Replay misses timed against each cache."),
    calls: int = typer.Option(2000, min=1, help="Calls of the scripted model whose memory is read."),
) -> None:
    """Print how the summary, replay misses and the scripted model's memory grow, as ratios."""
    console = CliConsole()
    say = lambda text: console.print(text, highlight=False, markup=False)  # noqa: E731
    per = {n: _summary_seconds_per_sample(n) for n in (samples, 2 * samples, 4 * samples)}
    a, b, c = per.values()
    say(
        f"summary: {1000 * a:.3f} / {1000 * b:.3f} / {1000 * c:.3f} ms a sample at {samples:,} / "
        f"{2 * samples:,} / {4 * samples:,} samples; ratio 2N:N {b / a:.2f}, 4N:2N {c / b:.2f} (flat: 1)"
    )
    with tempfile.TemporaryDirectory(prefix="scale-cache-") as tmp:
        small_first, small = _seconds_per_miss(_cache(Path(tmp) / "small.sqlite", 1000), misses)
        large_first, large = _seconds_per_miss(_cache(Path(tmp) / "large.sqlite", entries), misses)
    say(
        f"replay miss: {1000 * small:.2f} ms against 1,000 replies, {1000 * large:.2f} ms against "
        f"{entries:,}; ratio {large / small:.2f} (flat: 1; {entries / 1000:.0f} if a miss read every reply); "
        f"the first miss, which reads the counts: {1000 * small_first:.1f} ms, {1000 * large_first:.1f} ms"
    )
    _bytes_held_per_call(200, True)  # warm-up: what the first calls allocate once (SDK, client) is no growth
    kept, counted = _bytes_held_per_call(calls, True), _bytes_held_per_call(calls, False)
    run = _bytes_held_per_call(calls, False, keep_records=False)
    say(
        f"scripted model: {kept / 1024:.1f} KB held a call keeping its requests, {counted / 1024:.2f} KB "
        f"as --model scripted makes it (the ledger's record), {run / 1024:.3f} KB with bench run's ledger "
        f"(keep_records=False), over {calls:,} calls"
    )


if __name__ == "__main__":
    typer.run(main)
