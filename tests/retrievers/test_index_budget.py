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
