"""The followup retriever over the real 3M 2018 10-K, driven by the scripted model.

Facts relied on (3M_2018_10K): the section titles "Consolidated Statement of Cash Flow s"
(``item_8/cash_flows``, page 60) and "Consolidated Statement of Incom e" (``item_8/income``,
page 56); neither page is among the pass-1 pages BM25 picks for the question.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest

from pageindex.llm import ScriptedModel, ScriptedRequest, make_client
from pageindex.retrievers import RetrieverConfigError, retrieve
from pageindex.retrievers.ranking import ranker_for
from tests.retrievers.policies import shown_pages, usage_of

QUESTION = "What was 3M's FY2018 capital expenditure as a percentage of net sales?"
ANSWER = {
    "status": "answer",
    "answer": "4.8% (1,577 / 32,765)",
    "sources": [{"node_id": "item_8/cash_flows", "page": 60, "quote": "(1,577)"},
                {"node_id": "item_8/income", "page": 56, "quote": "32,765"}],
    "confidence": 0.8,
    "missing": [],
}
_MARKER = re.compile(r"\[page (\d+)\b")


@pytest.fixture(autouse=True)
def first_pages(tree_3m):
    """Pass 1 shows the pages of the best BM25 sections (at most 6), as the retriever documents."""
    global FIRST_PAGES
    pages: list[int] = []
    for hit in ranker_for(tree_3m, "section").search(QUESTION, k=3):
        pages += [p for p in hit.chunk.pages if p not in pages]
    FIRST_PAGES = pages[:6]
    assert not {56, 60} & set(FIRST_PAGES)


def incomplete(*items):
    return {"status": "incomplete", "answer": "", "missing": list(items)}


def pass_of(req: ScriptedRequest) -> int:
    return 1 + sum(1 for m in req.messages if m.role == "assistant")


def scripted(per_pass):
    """Reply ``per_pass[n-1]`` in pass n (the last one repeats)."""

    def policy(req: ScriptedRequest):
        return per_pass[min(pass_of(req), len(per_pass)) - 1]

    return ScriptedModel(policy=policy)


def run(tree, sm, **opts):
    return retrieve(tree, QUESTION, retriever="followup", llm=make_client("scripted", scripted=sm), **opts)


def page_counts(req: ScriptedRequest) -> Counter:
    return Counter(int(p) for m in req.messages if m.role == "user" for p in _MARKER.findall(m.content or ""))


def assert_usage_exact(result, sm):
    prompt, completion, calls = usage_of(sm)
    assert (result.usage.prompt_tokens, result.usage.completion_tokens, result.usage.llm_calls) == (
        prompt, completion, calls)


def test_happy_path_answer_after_one_followup(tree_3m):
    sm = scripted([incomplete("cash flow statement", "consolidated statement of income"), ANSWER])
    result = run(tree_3m, sm)
    assert result.status == "answer", result.reason or result.error
    assert result.answer == ANSWER["answer"]
    assert [(s.page, s.verified) for s in result.sources] == [(60, True), (56, True)]
    assert len(sm.requests) == 2 and result.iterations == 2
    assert page_counts(sm.requests[0]) == Counter(FIRST_PAGES)
    assert page_counts(sm.requests[1]) == Counter(FIRST_PAGES + [60, 56])  # every page sent exactly once
    assert result.pages_fetched == sorted(FIRST_PAGES + [56, 60]) == shown_pages(sm)
    gaps = result.extra["gaps"]
    assert gaps["identified"] == ["cash flow statement", "consolidated statement of income"]
    assert [(g["item"], g["via"], g["node_id"], g["pages"]) for g in gaps["resolved"]] == [
        ("cash flow statement", "title", "item_8/cash_flows", [60]),
        ("consolidated statement of income", "title", "item_8/income", [56]),
    ]
    assert gaps["unresolved"] == []
    assert "pages [60] (found by section title item_8/cash_flows)" in sm.requests[1].last_user
    assert result.prompt_version == "followup_v1"
    assert {r: u.calls for r, u in result.usage.by_role.items()} == {"followup": 2}
    assert_usage_exact(result, sm)


def test_seen_pages_and_not_found_items_are_never_fetched_again(tree_3m):
    sm = scripted([
        incomplete("zzqx flurbo", "cash flow statement"),
        incomplete("zzqx flurbo", "cash flow statement", "purchases of property plant and equipment"),
        ANSWER,
    ])
    result = run(tree_3m, sm)
    assert result.status == "answer"
    lookups = [e.data["item"] for e in result.trace if e.message.startswith("look up")]
    assert lookups == ["zzqx flurbo", "cash flow statement", "purchases of property plant and equipment"]
    skips = [e.message for e in result.trace if e.message.startswith("skip ")]
    assert skips == ["skip 'zzqx flurbo': already not_found in pass 1",
                     "skip 'cash flow statement': already resolved in pass 1"]
    resolved = {g["item"]: g["pages"] for g in result.extra["gaps"]["resolved"]}
    ppe_pages = resolved["purchases of property plant and equipment"]
    assert ppe_pages and not set(ppe_pages) & set(FIRST_PAGES + [60])  # BM25 skipped pages already shown
    final = page_counts(sm.requests[-1])
    assert set(final.values()) == {1}  # no page was sent twice
    assert sorted(final) == result.pages_fetched == shown_pages(sm)
    assert "zzqx flurbo: NOT FOUND" in sm.requests[1].last_user
    assert "not looked up again" in sm.requests[2].last_user
    assert result.extra["gaps"]["unresolved"] == ["zzqx flurbo"]
    assert [(f.item, f.reason) for f in result.failed_searches] == [("zzqx flurbo", "not found")]
    assert_usage_exact(result, sm)


def test_a_model_that_never_finishes_ends_in_fail_after_max_passes(tree_3m):
    sm = scripted([incomplete("cash flow statement"), incomplete("consolidated statement of income"),
                   incomplete("note on long-term debt"), incomplete("segment information")])
    result = run(tree_3m, sm)
    assert result.status == "fail"
    assert result.reason == "still incomplete after 3 pass(es); missing: note on long-term debt"
    assert len(sm.requests) == 3
    assert result.extra["gaps"]["unresolved"] == ["note on long-term debt"]  # no pass left to look it up
    assert result.pages_fetched == sorted(FIRST_PAGES + [56, 60]) == shown_pages(sm)
    assert_usage_exact(result, sm)

    sm = scripted([incomplete("cash flow statement")])
    result = run(tree_3m, sm, max_passes=1)
    assert result.status == "fail" and len(sm.requests) == 1 and result.pages_fetched == FIRST_PAGES


def test_stops_early_when_nothing_new_can_be_shown(tree_3m):
    sm = scripted([incomplete("zzqx flurbo")])
    result = run(tree_3m, sm)
    assert result.status == "fail" and len(sm.requests) == 1
    assert result.extra["passes"][0]["added_pages"] == []
    assert result.extra["gaps"]["unresolved"] == ["zzqx flurbo"]


def test_page_cap_bounds_what_is_added(tree_3m):
    sm = scripted([incomplete("cash flow statement", "consolidated statement of income"), ANSWER])
    result = run(tree_3m, sm, max_pages=len(FIRST_PAGES) + 1)
    assert result.pages_fetched == sorted(FIRST_PAGES + [60])
    assert [g["item"] for g in result.extra["gaps"]["resolved"]] == ["cash flow statement"]
    assert result.extra["gaps"]["unresolved"] == ["consolidated statement of income"]
    assert f"page limit {len(FIRST_PAGES) + 1} reached" in sm.requests[1].last_user


def test_model_fail_ends_in_fail_with_its_reason(tree_3m):
    sm = scripted([{"status": "fail", "reason": "the filing has no such figure"}])
    result = run(tree_3m, sm)
    assert result.status == "fail" and result.reason == "the filing has no such figure"


def test_malformed_replies(tree_3m):
    # a malformed reply is sent back by the LLM layer; a good second attempt is used
    sm = ScriptedModel(replies=['{"status": "answer"', ANSWER])
    result = run(tree_3m, sm)
    assert result.status == "answer" and len(sm.requests) == 2
    assert_usage_exact(result, sm)
    # "incomplete" without items is invalid too; never valid -> fail of kind invalid_reply, whose
    # reason carries the validation message itself
    sm = ScriptedModel(policy=lambda req: {"status": "incomplete", "missing": []})
    result = run(tree_3m, sm)
    assert result.status == "fail" and result.error_kind == "invalid_reply"
    assert 'status "incomplete" needs at least one "missing" item' in result.reason
    assert len(sm.requests) == 3  # first attempt + 2 validation retries
    assert result.pages_fetched == FIRST_PAGES
    assert_usage_exact(result, sm)


def test_unknown_option_is_an_error(tree_3m):
    with pytest.raises(RetrieverConfigError, match="unknown option 'passes'"):
        run(tree_3m, ScriptedModel(replies=[]), passes=2)


def test_a_reply_that_copies_the_prompts_placeholder_is_unusable_not_a_not_found(tree_3m):
    """gemma-3-270m on llama.cpp answered {"status": "fail", "reason": "<why the filing cannot answer the
    question>"}, the prompt's own placeholder: ask printed "Not found in this filing." and exited 0. The
    placeholder is refused (the model is asked again), and a model that keeps to it is unusable output."""
    placeholder = {"status": "fail", "reason": "<why the filing cannot answer the question>"}
    sm = scripted([placeholder])
    result = run(tree_3m, sm)
    assert result.status == "fail" and result.error_kind == "invalid_reply"
    said = "\"reason\" is the prompt's placeholder '<why the filing cannot answer the question>'"
    assert said in result.reason
    assert len(sm.requests) == 3  # asked again twice
    # a real reason stays a plain fail; a model that corrects itself is answered
    sm = scripted([{"status": "fail", "reason": "the filing does not report capex <by segment>"}])
    assert run(tree_3m, sm).error_kind is None
    replies = iter([placeholder, ANSWER])
    sm = ScriptedModel(policy=lambda req: next(replies))
    assert run(tree_3m, sm).status == "answer"
