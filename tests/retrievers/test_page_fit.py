"""Page text fitted to a known context window: the retrievers that put page or section text into a
prompt themselves (followup, oracle and bm25, the planner's extractions) send no prompt the window
cannot hold, and count as shown only the pages whose text reached the model.

Seen on a real llama.cpp server (gemma-3-270m, ``--n_ctx 2048``): with the doctor's advice followed
(``--context-window 2048``), ``ask -r followup`` on a 3-page earnings excerpt sent all three pages
(2,210 tokens), the server answered HTTP 400, and ``pages_fetched`` still listed the three pages (a
bench run counted such samples as evidence hits)."""

from __future__ import annotations

import re

import pytest

from bench.faults import FaultServer
from bench.faults.limits import ServerLimits
from pageindex.llm import ScriptedModel, make_client
from pageindex.retrievers import retrieve
from tests.retrievers.policies import CAPEX_Q, answer_json, shown_pages

WINDOW = 2048
PROMPT_BUDGET = WINDOW - 512  # the window less room for the reply: its cap (1024), at most a quarter
ANSWER = {"status": "answer", "answer": "1,577", "confidence": 0.9, "missing": [],
          "sources": [{"node_id": "item_8/cash_flows", "page": 60, "quote": "(1,577)"}]}


def cut_events(result):
    return [e for e in result.trace if e.kind == "info" and "to fit the model's" in e.message]


def test_followup_pages_fit_a_small_window_and_only_pages_shown_count(tree_3m):
    def policy(req):  # pass 1: ask for more; pass 2: answer
        passes = 1 + sum(1 for m in req.messages if m.role == "assistant")
        return {"status": "incomplete", "missing": ["cash flow statement"]} if passes == 1 else ANSWER

    sm = ScriptedModel(policy=policy)
    llm = make_client("scripted", scripted=sm, context_window=WINDOW)
    result = retrieve(tree_3m, CAPEX_Q, retriever="followup", llm=llm)
    assert result.status == "answer" and len(sm.requests) == 2
    assert max(r.prompt_tokens for r in sm.requests) <= PROMPT_BUDGET  # was 7,000+ tokens of 6 pages
    assert cut_events(result)  # the trace says what was cut or left out
    assert result.pages_fetched and result.pages_fetched == shown_pages(sm)
    # the prompt lists only the pages it shows
    first = sm.requests[0].last_user
    listed = [int(p) for p in re.search(r"Pages \(([\d, ]+)\)", first).group(1).split(", ")]
    assert listed == sorted(set(listed), key=listed.index) and set(listed) == set(
        int(p) for p in re.findall(r"\[page (\d+)\b", first))


def test_oracle_pages_fit_a_small_window(tree_3m):
    sm = ScriptedModel(replies=[answer_json("1,577", 60, "(1,577)")])
    llm = make_client("scripted", scripted=sm, context_window=WINDOW)
    result = retrieve(tree_3m, CAPEX_Q, retriever="oracle", llm=llm, pages=[60, 61, 62, 63])
    assert result.status == "answer"
    assert sm.requests[0].prompt_tokens <= PROMPT_BUDGET
    (cut,) = cut_events(result)  # page 60 fits whole, 61 is cut, 62 and 63 are left out
    assert cut.data["pages_whole"] == [60] and cut.data["pages_cut"] == [61]
    assert cut.data["pages_left_out"] == [62, 63]
    assert "the rest is left out here: the model's context window is full" in sm.requests[0].last_user
    assert result.pages_fetched == shown_pages(sm) and 63 not in result.pages_fetched


def test_without_a_known_window_nothing_is_cut(tree_3m):
    sm = ScriptedModel(replies=[answer_json("1,577", 60, "(1,577)")])
    result = retrieve(tree_3m, CAPEX_Q, retriever="oracle", llm=make_client("scripted", scripted=sm),
                      pages=[60, 61, 62, 63])
    assert result.pages_fetched == [60, 61, 62, 63] and not cut_events(result)
    assert sm.requests[0].prompt_tokens > PROMPT_BUDGET


def test_planner_extractions_fit_a_small_window(tree_3m):
    from tests.retrievers.test_planner import GOOD_PLAN, Policy

    sm = ScriptedModel(policy=Policy([GOOD_PLAN]))
    llm = make_client("scripted", scripted=sm, context_window=1200)
    result = retrieve(tree_3m, CAPEX_Q, retriever="planner", llm=llm)
    extractions = [r for r in sm.requests if r.response_model == "ExtractReply"]
    assert len(extractions) == 2 and max(r.prompt_tokens for r in extractions) <= 1200 - 300
    assert any("section text cut to" in e.message for e in result.trace)
    assert result.status == "answer" and result.pages_fetched == shown_pages(sm) == [56, 60]


@pytest.mark.parametrize("retriever", ["followup", "oracle"])
def test_a_prompt_with_no_room_for_any_page_is_refused_before_it_is_sent(tree_3m, retriever):
    sm = ScriptedModel(replies=[answer_json("1,577", 60, "(1,577)")])
    llm = make_client("scripted", scripted=sm, context_window=800)
    opts = {"pages": [60]} if retriever == "oracle" else {}
    result = retrieve(tree_3m, CAPEX_Q, retriever=retriever, llm=llm, **opts)
    assert result.status == "error" and result.error_kind == "context_length"
    assert sm.requests == [] and result.pages_fetched == []
    said = {"followup": "the followup prompt", "oracle": "the answer prompt of oracle"}[retriever]
    assert re.search(
        said + r" takes about [\d,]+ tokens without document text and 200 are kept for the reply, which "
        r"leaves no room for a page in the 800-token window \(--context-window\); nothing was sent\. Use a "
        r"server with a larger context \(and give it as --context-window\), or a smaller reply cap",
        result.error)  # fmt: skip
    assert f"--opt {retriever}.max_tokens=N" in result.error


def test_pages_of_a_prompt_the_server_refused_are_not_counted(tree_3m):
    """A window the client does not know (the server does not say it): the prompt goes, is refused,
    and its pages never reached the model."""
    limits = ServerLimits(context_window=1500, advertise_context=False)
    with FaultServer(limits=limits) as srv:
        llm = make_client("openai/m", base_url=srv.base_url, max_retries=0)
        result = retrieve(tree_3m, CAPEX_Q, retriever="followup", llm=llm)
    assert result.status == "error" and result.error_kind == "context_length"
    assert result.pages_fetched == []


def test_a_long_question_leaves_followup_room_for_pages_in_a_2k_window(tree_3m):
    """A FinanceBench question's followup prompt, with its reply schema, is about 740 tokens: with 1,024
    kept for the reply of a 2,048-token window, gemma-3-270m's tokenizer left no room for a page (every
    followup sample a context_length error in a bench run at --context-window 2048). The reply keeps at
    most a quarter of the window now, and pass 1 at least 256 tokens of its share."""
    question = ("Assume that you are a public equities analyst. Answer the following question by primarily "
                "using information that is shown in the balance sheet: what is the year end FY2018 net PP&E "
                "for 3M? Answer in USD billions.")
    sm = ScriptedModel(replies=[ANSWER])
    result = retrieve(tree_3m, question, retriever="followup",
                      llm=make_client("scripted", scripted=sm, context_window=WINDOW))
    assert result.status == "answer" and result.pages_fetched
    shown = re.search(r"<document[^>]*>(.*)</document>", sm.requests[0].last_user, re.S).group(1)
    assert len(shown) / 4 >= 300  # tokens of page text (the scripted model's 4 characters a token)


def test_a_cut_with_no_whole_page_says_no_empty_list(tree_3m):
    """The trace said "pages [] whole, page 60 cut" when not one page fitted whole."""
    sm = ScriptedModel(replies=[answer_json("1,577", 60, "(1,577)")])
    llm = make_client("scripted", scripted=sm, context_window=1200)
    result = retrieve(tree_3m, CAPEX_Q, retriever="oracle", llm=llm, pages=[60, 61])
    (cut,) = cut_events(result)
    assert cut.data["pages_whole"] == [] and cut.data["pages_cut"] == [60]
    assert cut.message.endswith("context window: page 60 cut, pages [61] left out")
