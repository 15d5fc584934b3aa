"""The iterative retriever (extraction + synthesis) on the 3M 2018 10-K, scripted."""

from __future__ import annotations

import json

import pytest

from pageindex.llm import ScriptedModel, make_client
from pageindex.retrievers import retrieve
from tests.retrievers.policies import (
    CAPEX_FINDING,
    CAPEX_Q,
    CASH_FLOWS,
    CASH_FLOWS_PAGE,
    iterative_capex_policy,
    shown_pages,
    usage_of,
)


def is_synthesis(req) -> bool:
    return req.response_model == "SynthesisReply"


def run_iterative(tree, sm, **opts):
    return retrieve(tree, CAPEX_Q, retriever="iterative", llm=make_client("scripted", scripted=sm), **opts)


def assert_exact_accounting(result, sm):
    assert (result.usage.prompt_tokens, result.usage.completion_tokens, result.usage.llm_calls) == usage_of(
        sm
    )
    ext, syn = result.usage.by_role["extraction"], result.usage.by_role.get("synthesis")
    assert (ext.prompt_tokens, ext.completion_tokens, ext.calls) == usage_of(
        sm, lambda r: not is_synthesis(r)
    )
    if syn is not None:
        assert (syn.prompt_tokens, syn.completion_tokens, syn.calls) == usage_of(sm, is_synthesis)
    assert result.pages_fetched == shown_pages(sm)
    assert sum(it["tokens"] for it in result.extra["iterations"]) == result.usage.total_tokens


def test_happy_path(tree_3m):
    sm = ScriptedModel(policy=iterative_capex_policy)
    result = run_iterative(tree_3m, sm)
    assert result.status == "answer", result.error
    assert result.answer == "$1,577 million" and result.confidence == 0.9
    assert result.prompt_version == "iterative_extract_v1+iterative_synth_v1"
    [finding] = result.findings
    assert (finding.value, finding.page, finding.section, finding.verified) == (
        "(1,577)",
        60,
        CASH_FLOWS,
        True,
    )
    [source] = result.sources
    assert (source.page, source.quote, source.verified, source.node_id) == (60, "(1,577)", True, CASH_FLOWS)
    assert result.iterations == 1 and result.pages_fetched == [CASH_FLOWS_PAGE]
    [it] = result.extra["iterations"]
    assert it["item"] == CAPEX_Q and it["sections"] == [CASH_FLOWS] and it["decision"] == "answer"
    assert it["findings_added"][0]["value"] == "(1,577)" and it["failure"] is None
    assert_exact_accounting(result, sm)
    # the synthesis agent never sees PDF text: no page markers, no statement lines it was not given
    synth = [r for r in sm.requests if is_synthesis(r)]
    assert len(synth) == 1
    synth_text = "\n".join(m.content or "" for m in synth[0].messages)
    assert "[page" not in synth_text and "Proceeds from sale of PP&E" not in synth_text
    assert "(1,577)" in synth_text and "page 60" in synth_text


def test_never_answers_is_bounded_by_iterations(tree_3m):
    def policy(req):
        if is_synthesis(req):
            return {"decision": "needs", "need": "something else", "why": "not sure"}
        return json.dumps({"status": "fail", "reason": "not found", "tried": []})

    sm = ScriptedModel(policy=policy)
    result = run_iterative(tree_3m, sm, max_iterations=3)
    assert result.status == "fail" and "max_iterations=3" in result.reason
    assert result.error_kind is None  # valid "not found" replies: a search that found nothing
    assert result.iterations == 3 and len(sm.requests) == 6 and len(result.failed_searches) == 3
    # not forced to answer on the last round: the last synthesis prompt says nothing of the kind
    last = [r for r in sm.requests if is_synthesis(r)][-1].last_user
    assert "Round 3 of at most 3" in last
    assert_exact_accounting(result, sm)


def test_failed_extraction_then_a_different_request(tree_3m):
    """Round 1 looks in MD&A and fails; synthesis asks for a specific other item; round 2 starts
    fresh, is refused the section already extracted, reads the cash-flow statement and finds it."""
    first_section = "item_7/financial_condition"

    def policy(req):
        if is_synthesis(req):
            if "F1." in req.last_user:
                return {"decision": "answer", "answer": "$1,577 million", "pages": [60], "confidence": 0.8}
            return {
                "decision": "needs",
                "need": "FY2018 purchases of property, plant and equipment in the cash flow statement",
                "why": "capex is reported there",
            }
        results = req.tool_results
        if "purchases of property, plant and equipment in the cash flow" not in req.last_user:  # round 1
            if not results:
                return ScriptedModel.call("fetch_section", node_id=first_section)
            return json.dumps({"status": "fail", "reason": "MD&A gives no 2018 capex figure", "tried": []})
        if not results:  # round 2, fresh context: tries the old section first
            return ScriptedModel.call("fetch_section", node_id=first_section)
        if len(results) == 1:
            return ScriptedModel.call("fetch_section", node_id=CASH_FLOWS)
        return json.dumps({"status": "found", "findings": [CAPEX_FINDING]})

    sm = ScriptedModel(policy=policy)
    result = run_iterative(tree_3m, sm)
    assert result.status == "answer" and result.iterations == 2
    [failed] = result.failed_searches
    assert failed.item == CAPEX_Q and failed.tried == [first_section]
    it1, it2 = result.extra["iterations"]
    assert it1["failure"]["reason"] == "MD&A gives no 2018 capex figure" and it1["decision"] == "needs"
    assert it2["item"].startswith("FY2018 purchases") and it2["sections"] == [CASH_FLOWS]
    # round 2 extraction started from a fresh context (system + user only) naming the extracted section
    round2 = [r for r in sm.requests if r.last_user.startswith("Item to find: FY2018 purchases")]
    assert len(round2[0].messages) == 2 and f"(do not fetch): {first_section}" in round2[0].last_user
    refusal = round2[1].tool_results[0].content
    assert "already extracted" in refusal and "<document" not in refusal
    # synthesis in round 2 saw the failed search
    synth2 = [r for r in sm.requests if is_synthesis(r)][1]
    assert "MD&A gives no 2018 capex figure" in synth2.last_user
    node = tree_3m.get(first_section)
    assert result.pages_fetched == sorted({*node.pages(), CASH_FLOWS_PAGE}) == shown_pages(sm)
    assert result.tool_calls == 3
    assert_exact_accounting(result, sm)


def test_malformed_replies(tree_3m):
    """Prose instead of JSON from the extractor is sent back; an invalid synthesis value is
    retried by the LLM layer with the validation error; both recover."""
    state = {"synth": 0}

    def policy(req):
        if is_synthesis(req):
            state["synth"] += 1
            if state["synth"] == 1:
                return {"decision": "answer"}  # missing the answer: fails validation
            return {"decision": "answer", "answer": "$1,577 million", "pages": [60]}
        if not req.tool_results:
            return ScriptedModel.call("fetch_section", node_id=CASH_FLOWS)
        if "not valid" not in req.last_user:
            return "Found it: capex was 1,577."
        return json.dumps({"status": "found", "findings": [CAPEX_FINDING]})

    sm = ScriptedModel(policy=policy)
    result = run_iterative(tree_3m, sm)
    assert result.status == "answer" and result.answer == "$1,577 million"
    assert state["synth"] == 2 and result.usage.by_role["synthesis"].calls == 2
    assert any(e.kind == "error" and "malformed extraction reply" in e.message for e in result.trace)
    assert_exact_accounting(result, sm)


def test_synthesis_that_never_validates_ends_in_fail(tree_3m):
    def policy(req):
        if is_synthesis(req):
            return {"decision": "maybe"}
        return json.dumps({"status": "fail", "reason": "nothing"})

    sm = ScriptedModel(policy=policy)
    result = run_iterative(tree_3m, sm)
    assert result.status == "fail" and "synthesis reply invalid" in result.reason
    assert result.extra["iterations"][0]["decision"] == "invalid"
    assert_exact_accounting(result, sm)


def test_fabricated_finding_is_flagged(tree_3m):
    def policy(req):
        if is_synthesis(req):
            return {"decision": "answer", "answer": "$1,999 million", "pages": [60]}
        if not req.tool_results:
            return ScriptedModel.call("fetch_section", node_id=CASH_FLOWS)
        return json.dumps({"status": "found", "findings": [{**CAPEX_FINDING, "value": "(1,999)"}]})

    result = run_iterative(tree_3m, ScriptedModel(policy=policy))
    assert result.status == "answer"
    assert result.findings[0].verified is False and result.sources[0].verified is False


def test_section_cap_per_item(tree_3m):
    def policy(req):
        if is_synthesis(req):
            return {"decision": "fail", "reason": "gave up"}
        n = len(req.tool_results)
        if n < 3:
            return ScriptedModel.call("fetch_section", node_id=["item_1", "item_2", "item_3"][n])
        if n == 3:
            return ScriptedModel.call("fetch_section", node_id="item_4")
        return json.dumps({"status": "fail", "reason": "not in these sections"})

    sm = ScriptedModel(policy=policy)
    result = run_iterative(tree_3m, sm, max_sections=2)
    assert result.status == "fail" and result.reason == "gave up"
    it = result.extra["iterations"][0]
    assert it["sections"] == ["item_1", "item_2"]
    assert "the limit for one item" in sm.requests[3].tool_results[-1].content
    assert result.failed_searches[0].tried == ["item_1", "item_2"]
    assert_exact_accounting(result, sm)


def test_no_valid_extraction_at_all_is_unusable_output_not_a_not_found(tree_3m):
    """A model that never gives a valid extraction reply (a real 135M model did this on every
    turn) did not search the filing: the fail carries error kind invalid_reply, so ``ask`` exits 4
    instead of printing "Not found in this filing." with exit 0."""

    def policy(req):
        if is_synthesis(req):
            return {"decision": "fail", "reason": "the extractions found nothing"}
        return "I think the capital expenditure is somewhere in the cash flow statement."

    sm = ScriptedModel(policy=policy)
    result = run_iterative(tree_3m, sm, max_iterations=2)
    assert (result.status, result.error_kind) == ("fail", "invalid_reply"), result.reason
    assert all("no valid extraction" in f.reason for f in result.failed_searches)


def test_a_finding_of_an_unknown_section_is_placed_where_its_words_are_on_the_page(tree_3m):
    """Review 11: iterative placed a finding citing an unknown section in the page's first section;
    3M's page 49 holds three, and the capex row sits under "Free Cash Flow (non-GAAP measure)"."""
    from pageindex.retrievers.base import QuestionContext, QuestionRun, get_retriever
    from pageindex.retrievers.iterative import ExtractedFinding, _finding

    spec = get_retriever("iterative")
    context = QuestionContext()
    run = QuestionRun(spec=spec, tree=tree_3m, query="q", options=spec.options(), llm=None, context=context)
    label = "Purchases of property, plant and equipment (PP&E)"
    row = ExtractedFinding(label=label, value="(1,577)", page=49, section="no such section")
    assert _finding(run, row).section == "item_7/free_cash_flow_non_gaap_measure"
    by_value = row.model_copy(update={"label": "capex"})
    assert _finding(run, by_value).section == "item_7/free_cash_flow_non_gaap_measure"
    nowhere = row.model_copy(update={"label": "zzz", "value": "zzz"})
    assert _finding(run, nowhere).section == "item_7/cash_flows_from_financing_activities"  # the first


def test_a_synthesis_answer_given_as_a_json_number_is_an_answer(tree_3m):
    def policy(req):
        if is_synthesis(req):
            return {"decision": "answer", "answer": 1577, "pages": [CASH_FLOWS_PAGE], "confidence": 0.9}
        if not req.tool_results:
            return ScriptedModel.call("fetch_section", node_id=CASH_FLOWS)
        return json.dumps({"status": "found", "findings": [{**CAPEX_FINDING, "value": 1577}]})

    sm = ScriptedModel(policy=policy)
    result = run_iterative(tree_3m, sm)
    assert (result.status, result.answer) == ("answer", "1577"), result.reason
    assert [(s.page, s.quote, s.verified) for s in result.sources] == [(CASH_FLOWS_PAGE, "1577", True)]
    assert [r.response_model for r in sm.requests].count("SynthesisReply") == 1  # no retry needed


INCOME = "item_8/income"  # PDF page 56: no capex on it


@pytest.mark.parametrize(
    ("read", "named", "unfounded"),
    [
        ([CASH_FLOWS], [CASH_FLOWS_PAGE, 61], "61"),  # 61: never read
        ([INCOME, CASH_FLOWS], [56, CASH_FLOWS_PAGE], "56"),  # 56: read, nothing found on it
        ([CASH_FLOWS], [61], "61"),  # no named page holds a finding: every finding is a source
    ],
)
def test_a_page_named_by_the_synthesis_that_holds_no_finding_is_no_source(tree_3m, read, named, unfounded):
    """The synthesis never sees page text: its sources are findings, each checked against its page."""

    def policy(req):
        if is_synthesis(req):
            return {"decision": "answer", "answer": "$1,577 million", "pages": named, "confidence": 0.9}
        if len(req.tool_results) < len(read):
            return ScriptedModel.call("fetch_section", node_id=read[len(req.tool_results)])
        return json.dumps({"status": "found", "findings": [CAPEX_FINDING]})

    result = run_iterative(tree_3m, ScriptedModel(policy=policy))
    assert result.status == "answer", result.reason
    assert result.pages_fetched == sorted(p for r in read for p in tree_3m.get(r).pages())
    assert [(s.page, s.quote, s.verified) for s in result.sources] == [(CASH_FLOWS_PAGE, "(1,577)", True)]
    said = [e.message for e in result.trace if "named by the synthesis" in e.message]
    assert said == [f"page(s) {unfounded} named by the synthesis hold no finding: not sources"]
