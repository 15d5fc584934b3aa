"""Every attempt counted and cost never 0 for an unknown price, in every retriever (issue 13)."""

from __future__ import annotations

from pageindex.llm import ScriptedModel, make_client
from pageindex.retrievers import retrieve
from tests.retrievers.policies import CAPEX_Q


def test_validation_attempts_are_counted_in_the_samples_usage(tree_3m):
    sm = ScriptedModel(policy=lambda req: "prose, never the JSON asked for")
    llm = make_client("openai/gpt-4o-mini", scripted=sm)
    result = retrieve(tree_3m, CAPEX_Q, retriever="oracle", llm=llm, context={"evidence_pages": [60]})
    assert result.status == "fail" and result.error_kind == "invalid_reply"
    assert result.usage.llm_calls == len(sm.requests) == 3  # every HTTP request, not 0
    assert result.usage.prompt_tokens == sum(r.prompt_tokens for r in sm.requests) > 0
    assert result.usage.cost_usd is not None and result.usage.cost_usd > 0  # priced model
    # the trace lists the failed call's attempts as it lists a successful one's (trial 13: it had none)
    failed = [e for e in result.trace if e.kind == "error" and "model call failed" in e.message]
    assert len(failed) == 1 and len(failed[0].data["attempts"]) == 3
    assert failed[0].data["prompt_tokens"] == result.usage.prompt_tokens


def test_unpriced_model_cost_is_null_even_without_calls(tree_3m):
    unpriced = make_client("openai/my-local-model", scripted=ScriptedModel())
    no_calls = retrieve(tree_3m, "zzqx flurbo?", retriever="bm25", llm=unpriced)
    assert no_calls.usage.llm_calls == 0 and no_calls.usage.cost_usd is None
    sm = ScriptedModel(replies=[{"status": "fail", "reason": "not shown"}])
    one = retrieve(
        tree_3m, CAPEX_Q, retriever="oracle", llm=make_client("openai/my-local-model", scripted=sm),
        context={"evidence_pages": [60]},
    )  # fmt: skip
    assert one.usage.llm_calls == 1 and one.usage.cost_usd is None


def test_a_retriever_that_needs_no_model_costs_nothing_whatever_model_the_run_names(tree_3m):
    """``bench run -r bm25,extractive --model M`` hands M's client to extractive too: an unpriced M
    must not turn extractive's free samples into "unknown" cost (trial 12)."""
    unpriced = make_client("openai/my-local-model", scripted=ScriptedModel())
    result = retrieve(tree_3m, CAPEX_Q, retriever="extractive", llm=unpriced)
    assert result.usage.llm_calls == 0 and result.usage.cost_usd == 0.0
    # a model spec string is not even resolved for it: a spec no client could be made from is no error
    named = retrieve(tree_3m, CAPEX_Q, retriever="extractive", llm="no-such-provider/x")
    assert named.status == result.status and named.usage.cost_usd == 0.0


def test_a_retrievals_usage_is_read_from_the_one_ledger(tree_3m):
    """Two retrievals on one client: each result's usage is exactly the ledger's records tagged
    with its retrieval id, and the ledger's total is their sum (nothing counted twice or lost)."""
    sm = ScriptedModel(replies=[{"status": "fail", "reason": "not shown"}] * 2)
    llm = make_client("openai/gpt-4o-mini", scripted=sm)
    results = [
        retrieve(tree_3m, CAPEX_Q, retriever="oracle", llm=llm, context={"evidence_pages": [60]})
        for _ in range(2)
    ]
    ids = {r.tag["retrieval_id"] for r in llm.ledger.records()}
    assert len(ids) == 2 and len(llm.ledger) == 2
    for result in results:
        assert result.usage.llm_calls == 1
        assert result.usage.prompt_tokens == sm.requests[0].prompt_tokens > 0
    total = llm.ledger.total()
    assert total.prompt_tokens == sum(r.usage.prompt_tokens for r in results)
    assert total.cost_usd == sum(r.usage.cost_usd for r in results) > 0
    by_role = llm.ledger.by("role")
    assert sum(u.calls for u in by_role.values()) == 2
    one_id = next(iter(ids))
    assert len(llm.ledger.records(retrieval_id=one_id)) == 1  # found through the tag index
    assert llm.ledger.records(retrieval_id="nope") == []


def test_a_call_shared_with_an_identical_one_in_flight_is_timed_as_waited_for(tree_3m, tmp_path):
    """Review 15: two identical retrievals at once with a writable cache (`--repeats 2 --cache rw`): the
    second is answered by the first's call (single-flight) and was read as a replay, its latency the
    recorded model time plus its own wall time, which already held the wait: about twice the truth."""
    import asyncio
    import time

    from pageindex.llm.cache import LLMCache
    from pageindex.retrievers import aretrieve

    fail = {"status": "fail", "reason": "no"}
    sm = ScriptedModel(policy=lambda r: ScriptedModel.reply(value=fail, delay_s=0.5))
    llm = make_client("openai/gpt-4o-mini", scripted=sm, cache=LLMCache(tmp_path / "c.sqlite", "rw"))

    EVIDENCE = {"evidence_pages": [60]}

    async def timed():
        started = time.perf_counter()
        result = await aretrieve(tree_3m, CAPEX_Q, retriever="oracle", llm=llm, context=EVIDENCE)
        return result, time.perf_counter() - started

    async def both():
        return await asyncio.gather(timed(), timed())

    pairs = asyncio.run(both())
    assert len(sm.requests) == 1
    for result, wall in pairs:
        assert result.latency_s <= wall + 0.01, (result.latency_s, wall)
        assert "recorded_latency_s" not in result.extra
    # a later run served from the cache alone is still timed as a replay
    again = retrieve(tree_3m, CAPEX_Q, retriever="oracle", llm=llm, context=EVIDENCE)
    assert again.extra["recorded_latency_s"] >= 0.5 and len(sm.requests) == 1
