"""A spent budget cuts the samples in flight: they are not written (they run again on resume), yet
the model calls they made were paid for. Those calls are reported (run.json ``unrecorded_usage``,
the run's last lines), so the samples' tokens plus the unrecorded ones are every call the model
answered. Before, a ``--budget '$5'`` run against a server that billed $6.82 wrote no sample and
said nothing of the money spent."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from bench.config import RunConfig
from bench.faults.scripted import policy
from bench.runner import Runner, RunOutcome
from bench.samples import load_samples


class CountingPolicy:
    """The scripted model's policy, counting the requests it answers (what a server would log)."""

    def __init__(self) -> None:
        self.requests = 0

    def __call__(self, request):
        self.requests += 1
        return policy(request)


def run(cfg: RunConfig, model: CountingPolicy, **kwargs) -> tuple[RunOutcome, Runner]:
    runner = Runner(cfg, scripted=model, command=["pageindex", "bench", "run"], **kwargs)
    return asyncio.run(runner.run()), runner


def config(tmp_path: Path, **changes) -> RunConfig:
    base = dict(
        out=tmp_path / "run", model="scripted", tree_cache_dir=tmp_path / "trees", retrievers=["agent"],
        judge="llm", limit=4, concurrency=2, scripted_policy="bench.faults.scripted:policy",
    )  # fmt: skip
    return RunConfig(**{**base, **changes})


def test_calls_of_samples_a_budget_cut_are_reported_and_add_up_to_every_call(tmp_path: Path) -> None:
    model = CountingPolicy()
    outcome, runner = run(config(tmp_path, budget_tokens=2000), model)
    assert outcome.status == "aborted_due_to_budget"
    rows = load_samples(outcome.run_dir / "samples.jsonl")
    assert len(rows) < 4
    cut = outcome.unrecorded
    assert cut is not None and cut["calls"] >= 1 and cut["prompt_tokens"] > 0
    # every request the model answered is in a written sample or in the unrecorded figure
    assert sum(r.llm_calls for r in rows) + cut["calls"] == model.requests
    spent = runner._ledger.total()
    assert spent.calls == model.requests
    assert sum(r.retriever_prompt_tokens + r.judge_prompt_tokens for r in rows) + cut["prompt_tokens"] == (
        spent.prompt_tokens
    )
    assert sum(r.retriever_completion_tokens + r.judge_completion_tokens for r in rows) + (
        cut["completion_tokens"]
    ) == spent.completion_tokens
    assert cut["cost_usd"] is None  # the scripted model has no price: unknown, never 0
    info = json.loads((outcome.run_dir / "run.json").read_text())
    assert info["unrecorded_usage"] == cut

    # a resume that finishes writes every sample it runs: the earlier sessions' figure stays as it was
    more = CountingPolicy()
    done, _ = run(RunConfig(), more, resume_dir=outcome.run_dir, resume_overrides={"budget_tokens": 10**7})
    assert done.status == "finished" and done.unrecorded is None
    assert json.loads((outcome.run_dir / "run.json").read_text())["unrecorded_usage"] == cut
    final = load_samples(outcome.run_dir / "samples.jsonl")
    assert len(final) == 4
    assert sum(r.llm_calls for r in final) == sum(r.llm_calls for r in rows) + more.requests


def test_a_run_that_finishes_has_no_unrecorded_calls(tmp_path: Path) -> None:
    model = CountingPolicy()
    outcome, _ = run(config(tmp_path, limit=2), model)
    assert outcome.status == "finished" and outcome.unrecorded is None
    rows = load_samples(outcome.run_dir / "samples.jsonl")
    assert sum(r.llm_calls for r in rows) == model.requests > 0
    assert json.loads((outcome.run_dir / "run.json").read_text())["unrecorded_usage"] is None
