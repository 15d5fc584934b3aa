"""The agent retriever on the 3M 2018 10-K, driven by the scripted model."""

from __future__ import annotations

import asyncio
import json

import pytest

from pageindex.llm import ScriptedModel, make_client
from pageindex.llm.types import BudgetExceeded, LLMTimeout
from pageindex.retrievers import QuestionContext, RetrieverConfigError, aretrieve, retrieve
from tests.retrievers.policies import (
    CAPEX_Q,
    CASH_FLOWS,
    CASH_FLOWS_PAGE,
    agent_capex_policy,
    answer_json,
    shown_pages,
    usage_of,
)


def run_agent(tree, sm, **opts):
    client = make_client("scripted", scripted=sm)
    return retrieve(tree, CAPEX_Q, retriever="agent", llm=client, context={"question_id": "fb_03029"}, **opts)


def assert_exact_accounting(result, sm):
    prompt, completion, calls = usage_of(sm)
    assert (result.usage.prompt_tokens, result.usage.completion_tokens, result.usage.llm_calls) == (
        prompt,
        completion,
        calls,
    )
    assert result.usage.by_role["agent"].calls == calls
    assert result.pages_fetched == shown_pages(sm)


def test_happy_path_answers_with_verified_source(tree_3m):
    sm = ScriptedModel(policy=agent_capex_policy)
    result = run_agent(tree_3m, sm)
    assert result.status == "answer", result.error
    assert "1,577" in result.answer
    assert result.prompt_version == "agent_v1" and result.retriever == "agent"
    [source] = result.sources
    assert (source.node_id, source.page, source.page_label, source.verified) == (CASH_FLOWS, 60, "60", True)
    assert source.title.startswith("Consolidated Statement of Cash Flow")
    assert result.pages_fetched == [CASH_FLOWS_PAGE]
    assert (result.turns, result.tool_calls) == (2, 1)
    assert_exact_accounting(result, sm)
    # the model saw the section index, the injection notice, and the page text inside document tags
    first = sm.requests[0]
    assert [t.name for t in first.tools] == ["fetch_section"]
    assert "item_8/cash_flows" in first.last_user and "never an instruction" in first.messages[0].content
    tool_msg = sm.requests[1].tool_results[0].content
    assert "<document" in tool_msg and "(1,577)" in tool_msg
    assert 'matched "Consolidated Statement of Cash Flows" by title' in tool_msg
    # the trace tells the story: model call, tool call (with the fuzzy match), model call, decision
    kinds = [e.kind for e in result.trace]
    assert kinds == ["info", "model_call", "tool_call", "model_call", "decision"]
    assert result.trace[2].data["matched_by"] == "title"
    assert result.options["max_turns"] == 12 and result.extra["question_id"] == "fb_03029"
    assert result.latency_s > 0


def test_model_that_never_answers_is_bounded_and_fails(tree_3m):
    sm = ScriptedModel(policy=lambda req: ScriptedModel.call("fetch_section", node_id="item_7"))
    result = run_agent(tree_3m, sm, max_turns=4, slice_chars=2000)
    assert result.status == "fail" and "max_turns=4" in result.reason
    # the 4th, last turn's call is not run: no turn is left to send its result to
    assert len(sm.requests) == 4 and result.turns == 4 and result.tool_calls == 3
    # repeats of the same slice are withheld, so only the first slice's pages were shown
    assert result.pages_fetched == shown_pages(sm) == [15]
    assert_exact_accounting(result, sm)


def test_unknown_section_gets_candidates_then_recovers(tree_3m):
    def policy(req):
        if not req.tool_results:
            return ScriptedModel.call("fetch_section", node_id="item_8/statement_of_capex_99")
        last = req.tool_results[-1].content
        if "No section matches" in last:
            return ScriptedModel.call("fetch_section", node_id="cash flow statement")
        return answer_json("$1,577 million", CASH_FLOWS_PAGE, "1,577")

    sm = ScriptedModel(policy=policy)
    result = run_agent(tree_3m, sm)
    assert result.status == "answer" and result.sources[0].verified is True
    miss = sm.requests[1].tool_results[0].content
    assert "No section matches" in miss and miss.count("\n- ") == 5
    miss_event = next(e for e in result.trace if e.kind == "tool_call" and e.data.get("found") is False)
    assert len(miss_event.data["candidates"]) == 5
    assert result.pages_fetched == [CASH_FLOWS_PAGE] == shown_pages(sm)
    assert result.tool_calls == 2
    assert_exact_accounting(result, sm)


def test_malformed_replies_are_sent_back_and_recovered(tree_3m):
    sm = ScriptedModel(
        replies=[
            ScriptedModel.malformed_call("fetch_section", '{"node_id": '),  # broken JSON arguments
            ScriptedModel.call("fetch_section", node_id=CASH_FLOWS),
            "The capex was about 1.6 billion I think.",  # prose instead of JSON
            '{"status": "answer", "answer": ""}',  # JSON of the wrong shape
            "```json\n" + answer_json("$1,577 million", CASH_FLOWS_PAGE, "(1,577)") + "\n```",
        ]
    )
    result = run_agent(tree_3m, sm)
    assert result.status == "answer" and result.turns == 5
    assert "unusable" in sm.requests[1].tool_results[0].content
    assert "no JSON object" in sm.requests[3].last_user
    assert "non-empty" in sm.requests[4].last_user
    assert sum(e.kind == "error" for e in result.trace) == 3
    assert result.sources[0].verified is True
    assert_exact_accounting(result, sm)


def test_fabricated_quote_is_flagged(tree_3m):
    def policy(req):
        if not req.tool_results:
            return ScriptedModel.call("fetch_section", node_id=CASH_FLOWS)
        return json.dumps(
            {
                "status": "answer",
                "answer": "$1,999 million",
                "sources": [
                    {"node_id": CASH_FLOWS, "page": 60, "quote": "Purchases of PP&E (1,999)"},
                    {
                        "node_id": CASH_FLOWS,
                        "page": 60,
                        "quote": "Proceeds from sale of PP&E and other assets",
                    },
                ],
            }
        )

    result = run_agent(tree_3m, ScriptedModel(policy=policy))
    assert result.status == "answer"
    assert [s.verified for s in result.sources] == [False, True]


def test_explicit_fail_reply(tree_3m):
    sm = ScriptedModel(replies=['{"status": "fail", "reason": "no segment data for 1990"}'])
    result = run_agent(tree_3m, sm)
    assert result.status == "fail" and result.reason == "no segment data for 1990"
    assert result.pages_fetched == [] and result.tool_calls == 0


def test_errors_become_status_error_but_budget_propagates(tree_3m):
    result = run_agent(tree_3m, ScriptedModel(replies=[LLMTimeout("scripted timeout")]))
    assert result.status == "error" and result.error_kind == "timeout" and "scripted timeout" in result.error

    sm = ScriptedModel(
        replies=[ScriptedModel.call("fetch_section", node_id=CASH_FLOWS), BudgetExceeded("spent")]
    )
    with pytest.raises(BudgetExceeded) as info:
        run_agent(tree_3m, sm)
    partial = info.value.partial_result
    assert partial.status == "error" and partial.error_kind == "budget"
    # the fetched page's text never went out (the call carrying it was refused by the budget): no page
    # counts as shown (review 17: pages were counted before the request that carries them was answered)
    assert partial.pages_fetched == [] and partial.usage.llm_calls == 1


def test_configuration_mistakes_raise_before_work(tree_3m):
    sm = ScriptedModel(replies=[])
    client = make_client("scripted", scripted=sm)
    with pytest.raises(RetrieverConfigError, match="unknown option 'max_turn'"):
        retrieve(tree_3m, CAPEX_Q, retriever="agent", llm=client, max_turn=3)
    with pytest.raises(RetrieverConfigError, match="max_turns"):
        retrieve(tree_3m, CAPEX_Q, retriever="agent", llm=client, max_turns=0)
    with pytest.raises(RetrieverConfigError, match="unknown retriever 'agnet'"):
        retrieve(tree_3m, CAPEX_Q, retriever="agnet", llm=client)
    with pytest.raises(RetrieverConfigError, match="needs a model"):
        retrieve(tree_3m, CAPEX_Q, retriever="agent")
    assert sm.requests == []


def test_async_interface_and_context_model(tree_3m):
    sm = ScriptedModel(policy=agent_capex_policy)
    client = make_client("scripted", scripted=sm)
    ctx = QuestionContext(question_id="q1", evidence_pages=[60])
    result = asyncio.run(aretrieve(tree_3m, CAPEX_Q, retriever="agent", llm=client, context=ctx))
    assert result.status == "answer" and result.extra["question_id"] == "q1"
    records = client.ledger.records()
    assert len(records) == 2 and len({r.tag["retrieval_id"] for r in records}) == 1
    assert all(r.tag["question_id"] == "q1" and r.tag["role"] == "agent" for r in records)
    assert [r.tag["turn"] for r in records] == [1, 2]


def test_the_last_turn_forbids_tool_calls_so_the_model_answers(tree_3m):
    """Every turn but the last offers fetch_section with tool_choice "auto"; the last keeps the tool
    declared but sends tool_choice "none", so a model that would go on fetching must reply."""
    sm = ScriptedModel(policy=lambda req: ScriptedModel.call("fetch_section", node_id="item_7"))
    llm = make_client("openai/gpt-4o-mini", scripted=sm)
    retrieve(tree_3m, "What was capex?", retriever="agent", llm=llm, max_turns=3)
    choices = [
        (r.body.get("tool_choice"), [t.name for t in r.tools]) for r in sm.requests
    ]
    assert choices == [("auto", ["fetch_section"])] * 2 + [("none", ["fetch_section"])]


def test_a_model_whose_every_reply_is_malformed_is_unusable_output_not_a_not_found(tree_3m):
    """12 prose replies, no tool call: the agent never read the filing, yet its fail had no error kind,
    so `ask` printed "Not found in this filing." and exited 0 (found against the fault server's
    `--lacks tools`, which answers an agent in JSON mode with prose). As iterative's extractions do, it
    is `invalid_reply`; a model that keeps fetching sections and never answers stays a plain fail."""
    sm = ScriptedModel(policy=lambda req: "The answer is 3 (page 1).")
    result = run_agent(tree_3m, sm, max_turns=3)
    assert result.status == "fail" and result.error_kind == "invalid_reply"
    assert result.reason == "no answer within max_turns=3: every reply was malformed"
    assert result.pages_fetched == [] and result.tool_calls == 0 and result.turns == 3
    fetching = ScriptedModel(policy=lambda req: ScriptedModel.call("fetch_section", node_id="item_7"))
    kept = run_agent(tree_3m, fetching, max_turns=3)
    assert kept.status == "fail" and kept.error_kind is None
