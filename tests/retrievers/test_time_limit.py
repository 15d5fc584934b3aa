"""``aretrieve(..., time_limit=S)``: one question's whole retrieval is bounded, and a retrieval cut
at the limit is an ``error`` of kind ``time_limit`` that keeps what was recorded before the cut."""

from __future__ import annotations

import asyncio
import time

import pytest

from pageindex.llm import ScriptedModel, make_client
from pageindex.llm.testing import FakeOpenAIServer
from pageindex.retrievers import RetrieverConfigError, register_retriever, retrieve
from pageindex.retrievers.base import TIME_LIMIT
from tests.retrievers.policies import CAPEX_Q


@register_retriever("test_slow_pages", needs_llm=False)
async def slow_pages(run, opts):
    run.show_pages([3, 4])
    await asyncio.sleep(30)
    return run.result("answer", answer="too late")  # pragma: no cover


@register_retriever("test_own_timeout", needs_llm=False)
async def own_timeout(run, opts):
    raise TimeoutError("a wait of the retriever's own")


def test_a_retrieval_past_its_time_limit_is_an_error_that_keeps_what_it_recorded(tree_3m):
    started = time.monotonic()
    result = retrieve(tree_3m, "q", retriever="test_slow_pages", time_limit=0.3)
    assert time.monotonic() - started < 5  # not the retriever's 30 s
    assert result.status == "error" and result.error_kind == TIME_LIMIT
    assert result.error == "TimeLimit: test_slow_pages did not finish within its time limit of 0.3s"
    assert result.pages_fetched == [3, 4] and result.trace[-1].kind == "error"
    assert 0.3 <= result.latency_s < 5


def test_a_timeout_the_retriever_raises_itself_is_not_the_time_limit(tree_3m):
    for limit in (None, 60):
        result = retrieve(tree_3m, "q", retriever="test_own_timeout", time_limit=limit)
        assert result.status == "error" and result.error_kind == "TimeoutError", limit
        assert result.error == "TimeoutError: a wait of the retriever's own"


# "5" was a bare TypeError ("must be real number, not str"), True a limit of 1 s
@pytest.mark.parametrize("bad", [0, -1, float("inf"), float("nan"), "5", True])
def test_a_time_limit_must_be_a_finite_number_of_seconds(tree_3m, bad):
    with pytest.raises(RetrieverConfigError, match="time_limit .*: must be a finite number of seconds > 0"):
        retrieve(tree_3m, "q", retriever="bm25", time_limit=bad)


def test_a_tool_loop_over_http_is_cut_mid_call_and_keeps_the_calls_that_finished(tree_3m):
    """The agent against a slow loopback server that always asks for another section: the limit
    cancels the call in flight; the calls that came back before it are counted."""

    def fetch_forever(req):
        return ScriptedModel.call("fetch_section", node_id="Consolidated Statement of Cash Flows")

    with FakeOpenAIServer(ScriptedModel(policy=fetch_forever), delay_s=0.3) as server:
        llm = make_client("openai/test-model", base_url=server.base_url, api_key="sk-test")
        started = time.monotonic()
        result = retrieve(tree_3m, CAPEX_Q, retriever="agent", llm=llm, time_limit=3, max_turns=50)
        took = time.monotonic() - started
        server.wait_for(lambda: len(server.chat_requests) >= result.usage.llm_calls)  # the cut one too
    assert result.status == "error" and result.error_kind == TIME_LIMIT, result.error
    assert 3 <= took < 12
    assert 1 <= result.usage.llm_calls < len(server.chat_requests) + 1
    assert result.usage.prompt_tokens > 0 and result.tool_calls >= 1


def test_a_call_cut_by_the_time_limit_is_counted_and_charged_to_the_budget(tree_3m):
    """Review 11: a cancelled call left no record, and its estimated prompt tokens were never charged,
    so a run whose samples were all cut never met its --budget."""
    from pageindex.llm import Budget
    from pageindex.llm.types import BudgetExceeded

    def fetch_forever(req):
        return ScriptedModel.call("fetch_section", node_id="Consolidated Statement of Cash Flows")

    budget = Budget(max_tokens=1)
    with FakeOpenAIServer(ScriptedModel(policy=fetch_forever), delay_s=5) as server:
        llm = make_client("openai/test-model", base_url=server.base_url, api_key="sk-test", budget=budget)
        # 2 s: the agent's first call must have been sent before the limit (at 0.5 s a loaded machine had
        # not yet sent it once in a full suite); the server's 5 s delay still outlasts the limit
        result = retrieve(tree_3m, CAPEX_Q, retriever="agent", llm=llm, time_limit=2.0)
        assert result.status == "error" and result.error_kind == TIME_LIMIT
        cut = [r for r in llm.ledger.records() if r.error == "cancelled"]
        assert len(cut) == 1 and cut[0].calls == 1 and result.usage.llm_calls == 1
        assert budget.spent_tokens > 1  # the estimate of the prompt the server is still reading
        with pytest.raises(BudgetExceeded):
            retrieve(tree_3m, CAPEX_Q, retriever="agent", llm=llm, time_limit=0.5)


def test_a_context_window_discovery_cut_by_the_time_limit_is_tried_again(tree_3m):
    """Review 11: a discovery cancelled half-way was taken as done, and the client kept no window
    (unsized indexes) for the rest of the run."""
    import asyncio

    from pageindex.retrievers.base import aretrieve

    @register_retriever("test_index_first", needs_llm=True)
    async def index_first(run, opts):
        await run.index()
        return run.result("fail", reason="only the index")

    async def slow_window(*, timeout):
        from pageindex.llm.tokens import ServerWindow

        await asyncio.sleep(1.0)
        return ServerWindow(tokens=8192, source="server metadata")

    async def scenario():
        llm = make_client("openai/test-model", base_url="http://127.0.0.1:9/v1", api_key="sk-test")
        llm.provider.context_window = slow_window
        cut = await aretrieve(tree_3m, "q", retriever="test_index_first", llm=llm, time_limit=0.2)
        assert cut.error_kind == TIME_LIMIT and llm.context_window is None
        assert await llm.ensure_limits() == 8192  # discovered on the next try

    asyncio.run(scenario())
