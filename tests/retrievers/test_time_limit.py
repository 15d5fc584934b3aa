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


@pytest.mark.parametrize("bad", [0, -1, float("inf"), float("nan")])
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
    assert result.status == "error" and result.error_kind == TIME_LIMIT, result.error
    assert 3 <= took < 12
    assert 1 <= result.usage.llm_calls < len(server.chat_requests) + 1
    assert result.usage.prompt_tokens > 0 and result.tool_calls >= 1
