"""The oracle baseline: one answering call over the gold evidence pages (3M 2018 10-K, page 60)."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from pageindex.llm import ScriptedModel, make_client
from pageindex.retrievers import RetrieverConfigError, retrieve
from tests.retrievers.policies import CAPEX_Q, shown_pages, usage_of

ANSWER = {"status": "answer", "answer": "$1,577 million",
          "sources": [{"node_id": "", "page": 60, "quote": "(1,577)"}], "confidence": 0.9}


def oracle(tree, sm, context=None, **opts):
    return retrieve(tree, CAPEX_Q, retriever="oracle", llm=make_client("scripted", scripted=sm),
                    context=context, **opts)


def assert_usage_exact(result, sm):
    prompt, completion, calls = usage_of(sm)
    assert (result.usage.prompt_tokens, result.usage.completion_tokens, result.usage.llm_calls) == (
        prompt, completion, calls)


def test_answers_from_the_gold_pages_only(tree_3m):
    sm = ScriptedModel(replies=[ANSWER])
    result = oracle(tree_3m, sm, context={"question_id": "fb_03029", "evidence_pages": [60]})
    assert result.status == "answer" and result.answer == "$1,577 million"
    assert len(sm.requests) == 1
    markers = Counter(int(p) for p in re.findall(r"\[page (\d+)", sm.requests[0].last_user))
    assert markers == Counter({60: 1})
    assert "(1,577)" in sm.requests[0].last_user and CAPEX_Q in sm.requests[0].last_user
    assert result.pages_fetched == [60] == shown_pages(sm)
    src = result.sources[0]
    assert (src.node_id, src.page, src.page_label, src.verified) == ("item_8/cash_flows", 60, "60", True)
    assert result.prompt_version == "answer_from_pages_v1"
    assert result.extra["evidence_pages"] == [60] and result.extra["question_id"] == "fb_03029"
    assert {r: u.calls for r, u in result.usage.by_role.items()} == {"answer": 1}
    assert_usage_exact(result, sm)


def test_pages_option_overrides_and_bad_pages_are_dropped(tree_3m):
    sm = ScriptedModel(replies=[ANSWER])
    result = oracle(tree_3m, sm, context={"evidence_pages": [12]}, pages=[56, 60, 999])
    assert result.status == "answer"
    assert result.pages_fetched == [56, 60] == shown_pages(sm)
    assert any("outside 1..160" in e.message for e in result.trace)
    # the command line passes "--opt pages=56,60" as text
    sm = ScriptedModel(replies=[ANSWER])
    assert oracle(tree_3m, sm, pages="56,60").pages_fetched == [56, 60] == shown_pages(sm)


def test_without_gold_pages_it_is_an_error_and_no_model_call(tree_3m):
    sm = ScriptedModel(replies=[])
    result = oracle(tree_3m, sm)
    assert result.status == "error" and result.error_kind == "no_evidence"
    assert sm.requests == [] and result.pages_fetched == [] and result.usage.llm_calls == 0


def test_gold_pages_all_outside_the_filing_are_said_as_such(tree_3m):
    # it said "no gold evidence pages for this question" of a question that had them (of another filing)
    sm = ScriptedModel(replies=[])
    result = oracle(tree_3m, sm, context={"evidence_pages": [500, 501]})
    assert result.status == "error" and result.error_kind == "no_evidence" and sm.requests == []
    assert result.error == (
        "the question's evidence pages [500, 501] are all outside this filing's pages 1-160 "
        "(pages of another filing?)"
    )


def test_fabricated_quote_is_flagged(tree_3m):
    fake = {**ANSWER, "sources": [{"node_id": "", "page": 60, "quote": "(2,999)"}]}
    result = oracle(tree_3m, ScriptedModel(replies=[fake]), context={"evidence_pages": [60]})
    assert result.status == "answer" and result.sources[0].verified is False


def test_model_fail_and_malformed_replies(tree_3m):
    sm = ScriptedModel(replies=[{"status": "fail", "reason": "page 60 shows no capex"}])
    result = oracle(tree_3m, sm, context={"evidence_pages": [60]})
    assert result.status == "fail" and result.reason == "page 60 shows no capex"

    sm = ScriptedModel(policy=lambda req: "The answer is 1,577.")  # never the JSON asked for
    result = oracle(tree_3m, sm, context={"evidence_pages": [60]})
    # the model answered unusably: a fail (as in every retriever), naming the cause
    assert result.status == "fail" and result.error_kind == "invalid_reply"
    assert result.reason.startswith("the model's reply was unusable") and result.error is None
    assert len(sm.requests) == 3  # bounded: one attempt and two validation retries
    assert result.pages_fetched == [60]
    assert_usage_exact(result, sm)


def test_needs_a_model_and_known_options(tree_3m):
    with pytest.raises(RetrieverConfigError, match="needs a model"):
        retrieve(tree_3m, CAPEX_Q, retriever="oracle", context={"evidence_pages": [60]})
    with pytest.raises(RetrieverConfigError, match="unknown option 'evidence'"):
        oracle(tree_3m, ScriptedModel(replies=[]), evidence=[60])


def test_a_pages_option_with_no_page_of_the_filing_is_bad_input(tree_3m):
    """``--opt pages=999`` on a 160-page filing: bad input (ask exits 2), not 'no gold evidence
    pages'; text that is no page list is refused before any work."""
    sm = ScriptedModel(replies=[])
    result = oracle(tree_3m, sm, pages=[999])
    assert (result.status, result.error_kind) == ("error", "bad_input") and sm.requests == []
    assert result.error == "pages option [999]: outside this filing's pages 1-160"
    with pytest.raises(RetrieverConfigError, match=r"page numbers separated by commas"):
        oracle(tree_3m, sm, pages="abc")
