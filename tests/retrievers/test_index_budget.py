"""The section index sized to the model (issue 13): never over budget, shallower levels first."""

from __future__ import annotations

import math

from pageindex.llm import ScriptedModel, make_client
from pageindex.retrievers import retrieve
from pageindex.retrievers.index import render_index
from tests.retrievers.policies import CAPEX_Q


def tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def test_index_fits_the_budget_shallow_levels_first(tree_3m):
    full = render_index(tree_3m)
    levels = {n.level for n in tree_3m.walk()}
    assert len(levels) >= 2
    for budget in (tokens(full) // 2, tokens(full) // 5, 300, 120):
        text = render_index(tree_3m, max_tokens=budget)
        assert tokens(text) <= budget, budget
        assert "Index shortened to fit the model's context" in text and "fetch_section" in text
        # no node is listed whose parent level was left out
        listed = {line.split(" | ")[0].strip(" -") for line in text.splitlines()[1:-1]}
        shown_levels = {n.level for n in tree_3m.walk() if n.node_id in listed}
        assert shown_levels == set(range(min(levels), min(levels) + len(shown_levels)))
    assert render_index(tree_3m, max_tokens=tokens(full)) == full  # fits: unchanged, no note


def test_agent_sizes_its_index_to_the_context_window(tree_3m):
    sm = ScriptedModel(replies=[{"status": "fail", "reason": "no"}])
    llm = make_client("scripted", scripted=sm, context_window=4096)
    result = retrieve(tree_3m, CAPEX_Q, retriever="agent", llm=llm, max_turns=1, max_tokens=256)
    (event,) = [e for e in result.trace if e.message.startswith("index:")]
    assert event.data["budget"] == (4096 - 256) // 2 and event.data["shortened"] is True
    assert event.data["index_tokens"] <= event.data["budget"] < event.data["full_index_tokens"]
    assert sm.requests[0].max_tokens == 256
    assert sm.requests[0].prompt_tokens < 4096 - 256


def test_a_rambling_reply_is_echoed_clipped_and_a_full_context_stops_the_loop(tree_3m):
    """A server that ignores max_tokens on plain replies (llama-cpp-python's chatml-function-calling)
    sends back thousands of tokens of prose: the loop echoes only its start with the parse error,
    and stops (no request) once the conversation would no longer fit the context window."""
    ramble = "The company reports many things about capital expenditures. " * 200  # ~3k tokens
    sm = ScriptedModel(replies=[ramble] * 3)
    llm = make_client("scripted", scripted=sm, context_window=4096)
    result = retrieve(tree_3m, CAPEX_Q, retriever="agent", llm=llm, max_turns=3, max_tokens=256)
    assert result.status in ("fail", "error") and result.error_kind != "context_length"
    assert len(sm.requests) >= 2
    echoed = [m for m in sm.requests[1].messages if m.role == "assistant"]
    assert echoed and len(echoed[-1].content or "") <= 1200 + 2
    assert all(r.prompt_tokens < 4096 for r in sm.requests)
    tight = ScriptedModel(replies=[ramble] * 3)
    llm = make_client("scripted", scripted=tight, context_window=1200)
    opts = {"max_turns": 3, "max_tokens": 64, "index_tokens": 300}
    small = retrieve(tree_3m, CAPEX_Q, retriever="agent", llm=llm, **opts)
    stops = [e for e in small.trace if "no longer fits the model's context" in e.message]
    assert stops and all(r.prompt_tokens < 1200 for r in tight.requests)


def test_one_cap_chain_call_option_client_role(tree_3m):
    """The retriever's ``max_tokens`` option, else the client's own cap, else the role's default:
    a client made with ``max_tokens`` caps every retriever call (it used to be skipped)."""
    reply = [{"status": "fail", "reason": "no"}]
    sm = ScriptedModel(replies=reply)
    retrieve(tree_3m, CAPEX_Q, retriever="agent", llm=make_client("scripted", scripted=sm, max_tokens=77),
             max_turns=1)  # fmt: skip
    assert sm.requests[0].max_tokens == 77
    sm = ScriptedModel(replies=reply)
    retrieve(tree_3m, CAPEX_Q, retriever="agent", llm=make_client("scripted", scripted=sm, max_tokens=77),
             max_turns=1, max_tokens=200)  # fmt: skip
    assert sm.requests[0].max_tokens == 200  # the option wins over the client
    sm = ScriptedModel(replies=reply)
    retrieve(tree_3m, CAPEX_Q, retriever="agent", llm=make_client("scripted", scripted=sm), max_turns=1)
    assert sm.requests[0].max_tokens == 1024  # the agent role's default
    budget = make_client("scripted", scripted=sm, max_tokens=77, context_window=4096)
    assert budget.prompt_budget() == 4096 - 77 and budget.cap_for(None, "judge") == 77
    assert make_client("scripted", scripted=sm).cap_for(None, "judge") == 512
