"""Rules of the shared tool loop (pageindex.retrievers.toolloop), through the agent retriever."""

from __future__ import annotations

import json
import math

import pytest

from pageindex.llm import ScriptedModel, make_client
from pageindex.retrievers import retrieve
from tests.retrievers.policies import CAPEX_Q, answer_json, shown_pages


def reading_on(tree):
    """A model that never answers: each reply fetches another section, one that starts on a page no
    earlier one touched (so every round shows new pages), whatever ``tool_choice`` says."""
    seen: set[int] = set()
    sections = []
    for node in tree.walk():
        if not node.children and not seen & set(node.pages()):
            sections.append(node.node_id)
            seen |= set(node.pages())

    def policy(req):
        return ScriptedModel.call("fetch_section", node_id=sections[len(req.tool_results)])

    return policy


@pytest.mark.parametrize("max_turns", [1, 2, 5])
def test_tool_calls_on_the_last_turn_are_not_run_and_show_no_pages(tree_3m, max_turns):
    """A server that ignores tool_choice "none": the last turn's calls could never be followed by a
    reply, so they are not run, and pages_fetched holds only pages a request carried to the model."""
    sm = ScriptedModel(policy=reading_on(tree_3m))
    result = retrieve(
        tree_3m, CAPEX_Q, retriever="agent", llm=make_client("scripted", scripted=sm), max_turns=max_turns
    )
    assert result.status == "fail" and len(sm.requests) == result.turns == max_turns
    assert result.tool_calls == max_turns - 1
    assert result.pages_fetched == shown_pages(sm)
    assert any("not run" in e.message for e in result.trace if e.kind == "info")


@pytest.mark.parametrize("context_window", [12_000, 16_000])
def test_a_loop_stopped_by_a_full_context_counts_no_pages_of_its_unsent_tool_results(
    tree_3m, context_window
):
    sm = ScriptedModel(policy=reading_on(tree_3m))
    llm = make_client("scripted", scripted=sm, context_window=context_window)
    result = retrieve(tree_3m, CAPEX_Q, retriever="agent", llm=llm, max_turns=30)
    stop = [e for e in result.trace if e.kind == "info" and "no longer fits" in e.message]
    assert len(stop) == 1 and result.turns < 30
    assert result.tool_calls == result.turns  # the last round's results were never sent
    assert result.pages_fetched == shown_pages(sm)
    unsent = stop[0].data["unsent_pages"]  # named in the trace: pages of their own, not counted
    assert unsent and not set(unsent) & set(result.pages_fetched)


@pytest.mark.parametrize("context_window", [12_000, 16_000])
def test_a_loop_stopped_by_a_full_context_fails_naming_it_with_its_figures(tree_3m, context_window):
    """Not "no answer within max_turns": the turns were not used up, the context window was."""
    sm = ScriptedModel(policy=reading_on(tree_3m))
    llm = make_client("scripted", scripted=sm, context_window=context_window)
    result = retrieve(tree_3m, CAPEX_Q, retriever="agent", llm=llm, max_turns=30)
    (stop,) = [e for e in result.trace if e.kind == "info" and "no longer fits" in e.message]
    assert result.status == "fail" and result.turns < 30 and "max_turns" not in result.reason
    assert result.reason == (
        f"no answer after {result.turns} turn(s): the conversation no longer fits the model's context "
        f"(the next prompt, about {stop.data['prompt_tokens']:,} tokens, and 64 for a reply exceed its "
        f"{context_window:,}-token window)"
    )
    assert stop.data["prompt_tokens"] + 64 > context_window
    assert result.trace[-1].kind == "decision" and result.trace[-1].data["stopped_by"] == "context_full"


def test_an_extraction_loop_stopped_by_a_full_context_names_it_too(tree_3m):
    """iterative's extraction agents share the loop: a full context is named there as in the agent,
    not reported as turns run out."""
    reading = reading_on(tree_3m)

    def policy(req):
        if req.response_model:  # the synthesis: nothing to synthesise from
            return {"decision": "fail", "reason": "nothing found"}
        return reading(req)

    sm = ScriptedModel(policy=policy)
    llm = make_client("scripted", scripted=sm, context_window=12_000)
    opts = {"max_iterations": 1, "max_extract_turns": 30, "max_sections": 30}
    result = retrieve(tree_3m, CAPEX_Q, retriever="iterative", llm=llm, **opts)
    (failed,) = result.failed_searches
    assert failed.reason.startswith("no valid extraction after "), failed.reason
    assert "no longer fits the model's context" in failed.reason and "12,000-token window" in failed.reason


@pytest.mark.parametrize("retriever", ["agent", "iterative"])
def test_a_section_fetched_into_a_small_window_fits_it(tree_3m, retriever):
    """A long section's 6,000-character slice (and its sub-section list) never fitted a 2,048-token
    window beside the index (the doctor's --context-window 2048 for llama.cpp at --n_ctx 2048): the
    loop that fetched it stopped with "no longer fits", the model never shown a page. Slices are cut to
    fit a small known window now (twice the prompt's token budget in characters)."""
    fetched = {"node_id": "item_7"}  # MD&A: 137,002 characters from page 15 on

    def policy(req):
        if req.response_model:  # iterative's synthesis
            return {"decision": "answer", "answer": "1,577", "confidence": 0.9, "pages": [15]}
        if not req.tool_results:
            return ScriptedModel.call("fetch_section", **fetched)
        if retriever == "agent":
            return answer_json("1,577", 15, "(1,577)", node_id="item_7")
        return json.dumps({"status": "found", "findings": [
            {"label": "capex", "value": "(1,577)", "page": 15, "section": "item_7"}]})

    sm = ScriptedModel(policy=policy)
    llm = make_client("scripted", scripted=sm, context_window=2048)
    result = retrieve(tree_3m, CAPEX_Q, retriever=retriever, llm=llm)
    assert not [e for e in result.trace if "no longer fits" in e.message]
    assert result.status == "answer", (result.reason, result.error)
    assert max(r.prompt_tokens for r in sm.requests) + 64 <= 2048
    assert 15 in result.pages_fetched and result.pages_fetched == shown_pages(sm)
    (sized,) = [e for e in result.trace if "fetch_section slices are" in e.message]
    assert sized.data["slice_chars"] == 2 * (2048 - 1024)
    # a window with room keeps the option's slices
    sm = ScriptedModel(policy=policy)
    result = retrieve(tree_3m, CAPEX_Q, retriever=retriever,
                      llm=make_client("scripted", scripted=sm, context_window=8192))
    assert result.status == "answer" and not [e for e in result.trace if "slices are" in e.message]


def test_a_conversation_whose_replies_tokenize_denser_than_the_index_is_stopped_before_the_server_refuses(
    tree_3m,
):
    """On llama.cpp (gemma-3-270m, --n_ctx 2048, --context-window 2048) an iterative extraction whose
    every reply rambled was estimated to fit (characters per token learnt from earlier prompts, mostly
    the index) and was 2,061 tokens: HTTP 400, the sample an `error`. The next prompt is now the tokens
    the server counted for the last one plus what was added, the echoed reply at its own density."""
    window = 2048
    ramble = "<<SYS>> - part_9 | PART IX | pages 235-240 (printed 240-241)\n" * 10

    def tokens_of(req):  # a tokenizer that makes a token of each character of a reply, of 4 of the rest
        sizes = [len(m.content or "") / (1 if m.role == "assistant" else 4) for m in req.messages]
        return sum(math.ceil(size) for size in sizes)

    def policy(req):
        used = tokens_of(req)
        if used > window:
            return ScriptedModel.http_error(
                400, message=f"This model's maximum context length is {window} tokens. However, you "
                             f"requested {used} tokens")  # fmt: skip
        return ScriptedModel.reply(ramble, prompt_tokens=used, completion_tokens=len(ramble))

    sm = ScriptedModel(policy=policy)
    llm = make_client("scripted", scripted=sm, context_window=window)
    result = retrieve(tree_3m, CAPEX_Q, retriever="agent", llm=llm, max_turns=12)
    assert max(tokens_of(r) for r in sm.requests) <= window
    assert result.status == "fail" and result.error_kind == "invalid_reply", (result.status, result.error)
    assert "the conversation no longer fits the model's context" in result.reason
    assert len(sm.requests) == 3  # it went on while the conversation fitted


def test_a_loop_whose_next_prompt_the_server_refuses_ends_as_a_full_context_not_an_error(tree_3m):
    """Through a LiteLLM proxy (no tokenizer) an agent's second prompt, estimated to fit, was refused as
    past the window: the run ended as an error. It has outgrown the window as surely as when the
    estimate says so first: the loop ends the same way, a fail naming the refusal. The first prompt
    refused is still an error (the retriever sized it)."""
    said = "request (9024 tokens) exceeds the available context size (8192 tokens), try increasing it"
    reading = reading_on(tree_3m)

    def policy(req):
        return reading(req) if not req.tool_results else ScriptedModel.http_error(400, message=said)

    sm = ScriptedModel(policy=policy)
    llm = make_client("scripted", scripted=sm, context_window=128_000, max_retries=0)
    result = retrieve(tree_3m, CAPEX_Q, retriever="agent", llm=llm, max_turns=8)
    assert result.status == "fail" and result.error_kind is None and result.turns == 2
    assert result.reason.startswith("no answer after 1 turn(s): the conversation no longer fits the model's "
                                    "context (the server refused the next prompt: ")  # fmt: skip
    assert "exceeds the available context size (8192 tokens)" in result.reason
    assert result.trace[-1].data["stopped_by"] == "context_full"
    assert [r.error for r in llm.ledger.records()] == [None, "context_length"]  # the refused call counted
    assert result.pages_fetched == []  # the tool results never reached the model
    first = ScriptedModel(policy=lambda req: ScriptedModel.http_error(400, message=said))
    refused = retrieve(tree_3m, CAPEX_Q, retriever="agent", max_turns=8,
                       llm=make_client("scripted", scripted=first, context_window=128_000, max_retries=0))
    assert refused.status == "error" and refused.error_kind == "context_length"
