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
    info = json.loads((outcome.run_dir / "run.json").read_text())
    assert info["unrecorded_usage"] == cut
    assert info["sent_usage"]["calls"] == model.requests + more.requests  # summed over both sessions
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


def test_calls_the_cache_answered_are_said_apart_from_the_calls_sent(tmp_path: Path) -> None:
    """With ``--cache rw`` and ``--repeats 2`` the repeat asks what the first asked: the model is asked
    once, the samples each carry the call's tokens and cost as their own. run.json says which were sent
    (what was spent: here half of the samples' totals) and which the cache answered; a replay sent none."""
    model = CountingPolicy()
    cache = tmp_path / "llm.sqlite"
    outcome, _ = run(config(tmp_path, limit=2, repeats=2, concurrency=1, cache="rw", cache_path=cache), model)
    assert outcome.status == "finished"
    rows = load_samples(outcome.run_dir / "samples.jsonl")
    assert len(rows) == 4 and sum(r.llm_calls for r in rows) == 2 * model.requests
    info = json.loads((outcome.run_dir / "run.json").read_text())
    sent, cached = info["sent_usage"], info["cached_usage"]
    assert sent["calls"] == model.requests == cached["calls"]
    tokens = sum(r.tokens + r.judge_prompt_tokens + r.judge_completion_tokens for r in rows)
    assert sent["prompt_tokens"] + sent["completion_tokens"] == tokens // 2
    assert sent == cached and outcome.sent == sent

    again = CountingPolicy()
    replayed, _ = run(config(tmp_path, out=tmp_path / "replay", limit=2, repeats=2, concurrency=1,
                             cache="replay", cache_path=cache), again)  # fmt: skip
    info = json.loads((replayed.run_dir / "run.json").read_text())
    assert again.requests == 0 and info["sent_usage"]["calls"] == 0
    assert info["cached_usage"]["calls"] == sum(r.llm_calls for r in rows)


def test_bench_summary_says_what_was_spent_beside_the_samples_figures(tmp_path: Path) -> None:
    """The run's last lines said the calls a stop cut and the calls the cache answered, but only then:
    ``bench summary`` of the run later said neither (they were in run.json alone)."""
    from typer.testing import CliRunner

    from pageindex.cli import app

    outcome, _ = run(config(tmp_path, budget_tokens=2000), CountingPolicy())
    cut = outcome.unrecorded
    assert cut is not None
    said = CliRunner().invoke(app, ["bench", "summary", str(outcome.run_dir)], terminal_width=400)
    assert said.exit_code == 0, said.output
    calls = f"{cut['calls']} model call{'s' if cut['calls'] != 1 else ''}"
    assert (
        f"note: {calls} ({cut['prompt_tokens']:,} prompt + {cut['completion_tokens']:,} completion tokens, "
        "cost unknown) went to samples the stop cut"
    ) in said.output

    twice = config(tmp_path, out=tmp_path / "twice", limit=1, repeats=2, concurrency=1, cache="rw",
                   cache_path=tmp_path / "llm.sqlite")  # fmt: skip
    cached_run, _ = run(twice, CountingPolicy())
    said = CliRunner().invoke(app, ["bench", "summary", str(cached_run.run_dir)], terminal_width=400)
    assert " were answered from the cache, not sent: " in said.output
    assert "went to samples the stop cut" not in said.output
    # the report's "Read with care" box says them too, a line each run
    from bench.report.html import render_html
    from bench.rundir import load_run

    page = render_html([load_run(outcome.run_dir), load_run(cached_run.run_dir)])
    assert "went to samples the stop cut" in page and "were answered from the cache, not sent" in page


def test_a_rejudged_run_does_not_take_the_source_runs_call_figures_as_its_own(tmp_path: Path) -> None:
    from bench.judges.base import make_judge
    from bench.rejudge import rejudge_run

    outcome, _ = run(config(tmp_path, budget_tokens=5000), CountingPolicy())
    info = json.loads((outcome.run_dir / "run.json").read_text())
    assert load_samples(outcome.run_dir / "samples.jsonl")
    assert info["sent_usage"]["calls"] > 0 and info["unrecorded_usage"]["calls"] > 0
    asyncio.run(rejudge_run(outcome.run_dir, tmp_path / "new", make_judge("rules"), judge_name="rules"))
    new = json.loads((tmp_path / "new" / "run.json").read_text())
    assert new["sent_usage"] is None and new["cached_usage"] is None and new["unrecorded_usage"] is None


def test_attempts_that_timed_out_are_counted_with_their_estimated_prompts(demo, tmp_path: Path) -> None:
    """A timed-out attempt reports no usage, yet the server read its prompt (and bills it). Each sample's
    first request stalls past the timeout and the retry answers: the samples' token totals hold only the
    answered attempts, so run.json's ``sent_usage`` says how many attempts came back without usage and
    their estimated prompt tokens, and the summary says it in words. Before, nothing said so."""
    from typer.testing import CliRunner

    from bench.faults import FaultServer
    from bench.faults.scripted import ChatPolicy
    from bench.runinfo import spend_notes
    from pageindex.cli import app

    settings = dict(
        data_dir=demo, out=tmp_path / "run", retrievers=["bm25"], model="openai/fault-model", judge="rules",
        limit=2, concurrency=1, max_retries=1, timeout_s=0.5, tree_cache_dir=tmp_path / "trees",
    )  # fmt: skip
    stalls = dict(rate=1.0, faults="stall", stall_seconds=3, max_faults_per_key=1)
    with FaultServer(policy=ChatPolicy(), **stalls) as srv:
        outcome = asyncio.run(Runner(RunConfig(**settings, base_url=srv.base_url)).run())
    assert outcome.status == "finished"
    rows = load_samples(outcome.run_dir / "samples.jsonl")
    assert [r.status for r in rows] == ["answer", "answer"] and all(r.llm_calls == 2 for r in rows)
    sent = json.loads((outcome.run_dir / "run.json").read_text())["sent_usage"]
    assert sent["calls"] == 4 and sent["unreported_attempts"] == 2
    assert sent["prompt_tokens"] == sum(r.retriever_prompt_tokens for r in rows)  # the answered two only
    assert sent["estimated_prompt_tokens"] > 0.5 * sent["prompt_tokens"]  # two prompts like the answered
    note = spend_notes(None, sent, None)[0]
    assert note.startswith("2 attempts timed out or were cut after the server took them: no usage came back")
    assert f"about {sent['estimated_prompt_tokens']:,} tokens by estimate" in note
    summary = CliRunner().invoke(app, ["bench", "summary", str(outcome.run_dir)], terminal_width=400)
    assert summary.exit_code == 0 and "2 attempts timed out or were cut" in summary.output


def test_one_call_or_attempt_is_said_in_the_singular() -> None:
    """A note of one call or attempt agrees with it: "1 attempt timed out or was cut ... its prompt" (it
    said "1 attempt timed out or were cut ..., so their prompts"), "1 model call ... went", "... was
    answered from the cache"."""
    from bench.runinfo import spend_notes

    one = {"calls": 1, "prompt_tokens": 1160, "completion_tokens": 27, "cost_usd": None}
    sent = {**one, "unreported_attempts": 1, "estimated_prompt_tokens": 1160}
    cut, timed_out, cached = spend_notes(one, sent, one)
    assert cut.startswith("1 model call (1,160 prompt + 27 completion tokens, cost unknown) went to samples")
    assert timed_out.startswith(
        "1 attempt timed out or was cut after the server took it: no usage came back, so its prompt, about "
        "1,160 tokens by estimate, is in no token or cost total"
    )
    assert cached.startswith("1 model call (1,160 prompt + 27 completion tokens, cost unknown) was answered "
                             "from the cache, not sent")  # fmt: skip
    two = {**one, "calls": 2, "unreported_attempts": 2}
    assert spend_notes(None, two, two)[0].startswith(
        "2 attempts timed out or were cut after the server took them: no usage came back, so their prompts, "
        "about 0 tokens by estimate, are in no token or cost total"
    )
    assert " were answered from the cache" in spend_notes(None, two, two)[1]
