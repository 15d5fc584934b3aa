"""``bench run``'s usage ledger holds the records of the retrievals under way, not one per call of the
run (about 1.4 KB a call: a 100,000-sample agent run held about 1 GB of records nobody read again once
their sample was made). Every figure the run writes is the same as when the ledger kept every record:
the samples' tokens, calls and cost, run.json's ``sent_usage``, ``cached_usage`` and
``unrecorded_usage`` (a budget stop), and the summary."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

import pytest

import pageindex.llm
from bench.config import RunConfig
from bench.faults.scripted import policy
from bench.runner import Runner, RunOutcome
from pageindex.llm.ledger import UsageLedger, sum_usage
from pageindex.llm.types import UsageRecord

# the fields of a sample that count model usage (the rest is the same code either way, or a wall time)
USAGE_FIELDS = (
    "llm_calls", "retriever_llm_calls", "retriever_prompt_tokens", "retriever_completion_tokens",
    "judge_prompt_tokens", "judge_completion_tokens", "cost_usd", "status", "verdict", "answer",
)  # fmt: skip


class KeepEveryRecord(UsageLedger):
    """The ledger as ``bench run`` made it before: every record of the run kept."""

    def __init__(self, *, keep_records: bool = True) -> None:
        super().__init__(keep_records=True)


def _run(tmp_path: Path, name: str, **changes) -> tuple[RunOutcome, Runner]:
    cfg = RunConfig(**{
        "out": tmp_path / name, "model": "scripted", "tree_cache_dir": tmp_path / "trees",
        "retrievers": ["agent", "iterative", "bm25"], "judge": "llm", "limit": 3, "repeats": 2,
        "concurrency": 1, "cache": "rw", "cache_path": tmp_path / f"{name}.sqlite", **changes,
    })  # fmt: skip
    runner = Runner(cfg, scripted=policy, command=["pageindex", "bench", "run"])
    return asyncio.run(runner.run()), runner


def _figures(run_dir: Path) -> dict:
    info = json.loads((run_dir / "run.json").read_text())
    rows = [json.loads(line) for line in (run_dir / "samples.jsonl").read_text().splitlines()]
    samples = {
        f"{r['question_id']}/{r['retriever']}/{r['repeat']}": json.dumps({k: r.get(k) for k in USAGE_FIELDS})
        for r in rows
    }
    summary = json.loads((run_dir / "summary.json").read_text())
    for volatile in ("run_id", "generated_at", "created_at"):
        summary.pop(volatile, None)
    usage = {k: json.dumps(info.get(k)) for k in ("sent_usage", "cached_usage", "unrecorded_usage", "status")}
    return {"samples": samples, "usage": usage, "summary": _without_latency(summary)}


def _without_latency(value):
    """The summary less its wall times (which differ between any two runs)."""
    if isinstance(value, dict):
        return {k: _without_latency(v) for k, v in value.items() if "latency" not in k and "wall" not in k}
    if isinstance(value, list):
        return [_without_latency(v) for v in value]
    return value


@pytest.fixture
def priced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A price for the scripted model, so that costs are summed (as floats) and compared too."""
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"models": {"scripted": {"input": 0.37, "output": 1.13}}}))
    monkeypatch.setenv("PAGEINDEX_PRICING", str(prices))


# a budget stop (as tests/bench/test_unrecorded_usage.py makes one) cuts samples in flight: unrecorded usage
BUDGET_STOP = {"budget_tokens": 2000, "concurrency": 2, "retrievers": ["agent"], "limit": 4, "repeats": 1}


@pytest.mark.parametrize("changes", [{}, BUDGET_STOP], ids=["finished", "budget_stop"])
def test_a_run_writes_the_same_figures_as_with_every_record_kept_and_holds_none_at_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, priced: None, changes: dict
) -> None:
    after, runner = _run(tmp_path, "after", **changes)
    assert not runner._ledger.keep_records
    assert len(runner._ledger) >= 3  # calls entered
    assert runner._ledger.records_held == 0  # every retrieval is over: none of its records is held
    with monkeypatch.context() as patch:
        patch.setattr(pageindex.llm, "UsageLedger", KeepEveryRecord)
        before, old = _run(tmp_path, "before", **changes)
    assert old._ledger.keep_records and old._ledger.records_held == len(old._ledger) == len(runner._ledger)

    assert after.status == before.status == ("aborted_due_to_budget" if changes else "finished")
    a, b = _figures(after.run_dir), _figures(before.run_dir)
    assert a["usage"] == b["usage"]
    assert a["samples"] == b["samples"] and len(a["samples"]) == after.samples_written
    assert a["summary"] == b["summary"]
    sent, cached = json.loads(a["usage"]["sent_usage"]), json.loads(a["usage"]["cached_usage"])
    assert sent["calls"] > 0 and sent["cost_usd"] > 0
    if changes:  # the calls of the samples the stop cut, read from the totals
        assert json.loads(a["usage"]["unrecorded_usage"])["calls"] > 0
    else:  # the second repeats were answered from the cache: both totals were summed
        assert cached["calls"] > 0 and cached["cost_usd"] > 0
    assert (after.sent, after.cached, after.unrecorded) == (before.sent, before.cached, before.unrecorded)


def _stream(n: int) -> list[UsageRecord]:
    """Records as a run's: several retrievals, costs that do not add exactly in floats, some unknown,
    cached and shared replies, attempts without usage, judge calls with no retrieval id."""
    rng = random.Random(7)
    out = []
    for k in range(n):
        tag = {"retriever": "agent", "question_id": f"q{k % 5}"}
        if k % 4:
            tag["retrieval_id"] = f"r{k % 6}"
        out.append(UsageRecord(
            prompt_tokens=rng.randint(0, 5000), completion_tokens=rng.randint(0, 300), calls=1,
            latency_s=rng.random(), cost_usd=None if k == 31 else rng.random() / 1000, model="m",
            role="retriever" if k % 4 else "judge", tag=tag, cached=rng.random() < 0.3,
            unreported_attempts=k % 7 == 0, estimated_prompt_tokens=1234 if k % 7 == 0 else 0,
        ))  # fmt: skip
    return out


def test_running_totals_are_the_sums_of_the_records_to_the_last_bit() -> None:
    records = _stream(60)
    every, held = UsageLedger(), UsageLedger(keep_records=False)
    for rid in {r.tag.get("retrieval_id") for r in records} - {None}:
        held.hold(rid)
    for k, record in enumerate(records):
        every.add(record)
        held.add(record)
        if k == 40:
            held.release("r1")  # over: later records of it (a request it abandoned) only in the totals
    for cached in (None, True, False):
        mine = [r for r in records if cached is None or r.cached == cached]
        for ledger in (every, held):
            assert ledger.total(cached=cached) == sum_usage(mine)  # cost None: one call's is unknown
            assert ledger.unreported(cached=cached) == (
                sum(r.unreported_attempts for r in mine), sum(r.estimated_prompt_tokens for r in mine)
            )
    sent = [r for r in records[:31] if not r.cached]
    assert sum_usage(sent).cost_usd is not None
    # a retrieval under way reads its records as a ledger keeping every record does
    assert held.records(retrieval_id="r2") == every.records(retrieval_id="r2") != []
    assert held.total(retrieval_id="r3", role="retriever") == every.total(retrieval_id="r3", role="retriever")
    assert held.records_held == sum(1 for r in records if r.tag.get("retrieval_id") not in (None, "r1"))
    assert len(held) == len(every) == 60 and every.records_held == 60
    for rid in ("r0", "r2", "r3", "r4", "r5"):
        held.release(rid)
    assert held.records_held == 0
    with pytest.raises(LookupError, match="keeps only the records of retrievals under way"):
        held.records(retrieval_id="r2")  # let go: not an empty list, which would read as no calls
    with pytest.raises(LookupError):
        held.by("role")
