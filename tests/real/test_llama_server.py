"""Conformance against a real OpenAI-compatible server: llama-cpp-python 0.3.36 with SmolLM2-135M
(``--chat_format chatml-function-calling``, 8k context) on loopback.

These tests assert protocol and bookkeeping -- what crossed the wire, what the trace and the usage
record, which error class a failure gets -- never the tiny model's accuracy.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from pydantic import BaseModel

from pageindex.llm import (
    ContextLengthError,
    LLMCache,
    LLMTimeout,
    Message,
    OutputTruncated,
    make_client,
)
from pageindex.retrievers import aretrieve
from pageindex.tree import build_tree
from tests.real.conftest import N_CTX
from tests.tree.pdf_factory import make_pdf

PAGES = [
    ["ACME Corp Annual Report 2023"],
    ["Item 7. Management's Discussion and Analysis", "Revenue was $120 million in 2023.",
     "Revenue was $100 million in 2022."],
    ["Item 8. Financial Statements", "Net income was $15 million in 2023."],
]  # fmt: skip
QUESTION = "What was ACME's revenue in 2023?"


def run(coro):
    return asyncio.run(coro)


@pytest.fixture(scope="module")
def acme_tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("acme")
    pdf = make_pdf(root / "acme.pdf", PAGES, bold_first=True)
    return build_tree(pdf, cache_dir=root / "trees")


def client(server, **kwargs):
    kwargs.setdefault("timeout", 600)
    kwargs.setdefault("max_retries", 0)
    return make_client(server.spec, base_url=server.base_url, **kwargs)


def tool_round_trip(result) -> tuple[int, int]:
    """(index of the first tool call event, index of a model call after it) in the trace."""
    kinds = [(e.kind, e.data) for e in result.trace]
    tool_at = next(i for i, (k, _) in enumerate(kinds) if k == "tool_call")
    reply_at = next(i for i, (k, _) in enumerate(kinds) if k == "model_call" and i > tool_at)
    return tool_at, reply_at


# ----------------------------------------------------------------------------- tool calls
def test_agent_tool_call_round_trip_then_replay_identical(llama_tools, acme_tree, tmp_path):
    llama = llama_tools
    cache = tmp_path / "llm.sqlite"
    live = client(llama, cache=LLMCache(cache, "rw"), context_window=2048)
    result = run(aretrieve(acme_tree, QUESTION, retriever="agent", llm=live, max_turns=2, max_tokens=96))
    assert result.status in ("answer", "fail"), result.error
    tool_at, reply_at = tool_round_trip(result)
    calls = [e for e in result.trace if e.kind == "model_call"]
    assert calls[0].data["tool_calls"] == ["fetch_section"] and calls[0].data["finish_reason"] == "tool_calls"
    assert calls[1].data["attempts"][0]["status"] == 200  # the tool result went back and was accepted
    assert result.tool_calls >= 1 and result.usage.llm_calls == 2
    records = live.ledger.records()
    assert all(r.prompt_tokens > 0 for r in records)  # usage comes from the server
    # The second request carried the assistant's tool call and the tool result (two more messages).
    # Its prompt may still be shorter: it is the last turn, sent with tool_choice "none", and
    # chatml-function-calling then leaves the function descriptions out of the prompt.
    sent = [int(e.message.split(": ", 1)[1].split(" messages", 1)[0]) for e in calls]
    assert sent[1] == sent[0] + 2, [e.message for e in calls]

    replay = make_client(f"replay/{llama.model}", cache=LLMCache(cache, "replay"))
    again = run(aretrieve(acme_tree, QUESTION, retriever="agent", llm=replay, max_turns=2, max_tokens=96))
    assert (again.status, again.answer, again.reason) == (result.status, result.answer, result.reason)
    assert again.usage.prompt_tokens == result.usage.prompt_tokens
    assert again.usage.completion_tokens == result.usage.completion_tokens
    assert [e.message for e in again.trace if e.kind != "info"] == [
        e.message for e in result.trace if e.kind != "info"
    ]
    assert all(r.cached for r in replay.ledger.records())
    recorded_model_time = sum(r.latency_s for r in records)
    assert again.extra["recorded_latency_s"] == pytest.approx(recorded_model_time, rel=0.01)
    assert again.latency_s >= recorded_model_time > again.extra["replay_latency_s"]


def test_iterative_tool_call_round_trip_and_synthesis(llama_tools, acme_tree):
    llm = client(llama_tools, context_window=2048)
    result = run(
        aretrieve(
            acme_tree, QUESTION, retriever="iterative", llm=llm,
            max_iterations=1, max_extract_turns=2, max_tokens=96,
        )
    )  # fmt: skip
    records = llm.ledger.records()
    assert result.usage.llm_calls == sum(r.calls for r in records) >= 2
    tool_at = next(i for i, e in enumerate(result.trace) if e.kind == "tool_call")
    first = records[0]
    assert first.error is None and first.prompt_tokens > 0  # the tool call came back over HTTP 200
    # The request carrying the tool result was sent (content "" on the assistant tool-call message:
    # no HTTP 500 for content null) and answered: the extraction's last turn sends tool_choice
    # "none", which chatml-function-calling answers as a plain completion kept to max_tokens (its
    # "auto" path would generate to the end of the context and get HTTP 400).
    assert result.status in ("answer", "fail"), result.error
    tool_round_trip(result)  # the tool result went back and a reply came after it
    assert any(e.kind == "model_call" for e in result.trace[tool_at + 1 :])
    turns = records[:2]  # the extraction's two turns: the tool call, then the reply after its result
    assert all(r.error is None for r in turns), [r.error for r in turns]
    assert all(r.completion_tokens <= 96 for r in turns)  # max_tokens kept on both


def test_judge_json_mode_on_a_second_chat_template(gemma):
    from bench.judges.base import make_judge
    from pageindex.llm import StructuredOutputError

    judge = make_judge("llm", model_client=client(gemma, json_mode=True, role="judge"))
    try:
        verdict = run(judge.judge(QUESTION, "$120 million", "Revenue was $120 million."))
    except StructuredOutputError as exc:
        # gemma-3-270m gives the schema's description as its reasoning: no verdict is made up from it
        assert "schema's description" in str(exc), exc
        assert exc.usage is not None and exc.usage.prompt_tokens > 0 and exc.usage.calls >= 1
        return
    assert verdict.verdict in ("correct", "incorrect", "refusal")
    assert verdict.usage.prompt_tokens > 0 and verdict.usage.calls >= 1


# ----------------------------------------------------------------------------- structured calls
class Verdict(BaseModel):
    correct: bool
    reason: str


@pytest.mark.parametrize("json_mode", [False, True], ids=["tools", "json"])
def test_structured_call_completes_with_max_tokens(llama, json_mode):
    llm = client(llama, json_mode=json_mode, role="judge")
    out = run(
        llm.structured(
            [Message(role="user", content="Is 2+2=4? Answer as the JSON object asked for.")],
            Verdict,
            max_retries=1,
        )
    )
    assert isinstance(out.value.correct, bool) and out.usage.completion_tokens > 0
    assert out.usage.calls == len(out.http_attempts) >= 1
    assert all(a["status"] == 200 for a in out.http_attempts)


@pytest.mark.parametrize("json_mode", [False, True], ids=["tools", "json"])
def test_llm_judge_completes_in_both_modes(llama, json_mode):
    from bench.judges.base import make_judge

    judge = make_judge("llm", model_client=client(llama, json_mode=json_mode, role="judge"))
    verdict = run(judge.judge(QUESTION, "$120 million", "Revenue was $120 million."))
    assert verdict.verdict in ("correct", "incorrect", "refusal")
    assert verdict.usage is not None and verdict.usage.prompt_tokens > 0


@pytest.mark.parametrize("json_mode", [False, True], ids=["tools", "json"])
def test_planner_completes_its_structured_calls(llama, acme_tree, json_mode):
    llm = client(llama, json_mode=json_mode)
    result = run(
        aretrieve(
            acme_tree, QUESTION, retriever="planner", llm=llm, max_replans=0, max_tasks=2, max_tokens=160
        )
    )
    assert result.status in ("answer", "fail"), result.error  # never an infrastructure error
    planner_calls = [e for e in result.trace if e.data.get("role") == "planner"]
    assert planner_calls, [e.message for e in result.trace]
    if result.status == "fail" and result.error_kind:
        assert result.error_kind in ("invalid_reply", "output_truncated")
    assert result.usage.llm_calls == sum(r.calls for r in llm.ledger.records())


# ----------------------------------------------------------------------------- error classes
def test_context_overflow_is_context_length_and_not_retried(llama):
    llm = client(llama, max_retries=2)
    huge = "revenue grew strongly " * 3000  # ~12k tokens, over the 8k window
    with pytest.raises(ContextLengthError) as info:
        run(llm.chat([Message(role="user", content=huge)], max_tokens=8))
    assert info.value.kind == "context_length" and "maximum context length is 8192" in str(info.value)
    assert len(info.value.attempts) == 1  # a 400: not retried


def test_finish_reason_length_is_output_truncated(llama):
    llm = client(llama, json_mode=True)
    with pytest.raises(OutputTruncated) as info:
        run(
            llm.structured(
                [Message(role="user", content="Explain in detail why revenue matters.")],
                Verdict,
                max_tokens=6,
                max_retries=0,
            )
        )
    assert info.value.kind == "output_truncated" and "finish_reason: length" in str(info.value)
    assert info.value.attempts[-1]["finish_reason"] == "length"


def test_client_timeout_is_an_attempt_and_retried_with_max_retries_1(llama):
    """A timeout the server cannot beat on an idle machine either: each call's prompt starts with words
    of its own (llama.cpp reuses a prompt prefix it has just evaluated: a retry of the same prompt
    skips its evaluation) and asks for 256 tokens, which a 2-core CPU does not write in 0.1 s (with
    0.5 s and 16 tokens the retry was answered in time on an idle machine)."""

    def prompt(topic: str) -> list[Message]:
        return [Message(role="user", content=f"Write a long story about {topic}. " * 20)]

    no_retry = client(llama, timeout=0.1, max_retries=3, retry_timeouts=False)
    with pytest.raises(LLMTimeout) as info:
        run(no_retry.chat(prompt("a company"), max_tokens=256))
    assert [a["outcome"] for a in info.value.attempts] == ["timeout"]
    (record,) = no_retry.ledger.records()
    assert (record.calls, record.error, record.total_tokens) == (1, "timeout", 0)

    retried = client(llama, timeout=0.1, max_retries=1)
    with pytest.raises(LLMTimeout) as info:
        run(retried.chat(prompt("a lighthouse keeper"), max_tokens=256))
    assert [a["outcome"] for a in info.value.attempts] == ["timeout", "timeout"]
    assert "after 2 attempt(s)" in str(info.value)
    (record,) = retried.ledger.records()
    assert record.calls == 2 and record.error == "timeout"


def test_a_time_limit_cuts_a_real_tool_loop_and_the_server_serves_again(llama_tools, acme_tree):
    """``time_limit`` against a real server: the call in flight is cancelled (no exception escapes),
    the result is a ``time_limit`` error in about the limit, and the server answers the next request
    once it has dropped or finished the abandoned one."""
    import time

    llm = client(llama_tools, context_window=2048)
    started = time.monotonic()
    result = run(
        aretrieve(acme_tree, QUESTION, retriever="agent", llm=llm, max_turns=6, max_tokens=96, time_limit=0.5)
    )
    took = time.monotonic() - started
    assert result.status == "error" and result.error_kind == "time_limit", (result.status, result.error)
    assert result.error == "TimeLimit: agent did not finish within its time limit of 0.5s"
    assert took < 5, took
    deadline = time.monotonic() + 300
    while True:  # the one-at-a-time server answers GET /models only when idle
        try:
            run(llm.check())
            break
        except Exception:
            assert time.monotonic() < deadline, "the server never became idle again"
    reply = run(llm.chat([Message(role="user", content="Say OK.")], max_tokens=4))
    assert reply.usage.completion_tokens > 0


# ----------------------------------------------------------------------------- sizing
def test_500_page_filing_index_fits_an_8k_context(llama, fb_pdf, tmp_path):
    pdf = fb_pdf("PEPSICO_2022_10K")
    if not pdf.exists():
        pytest.fail(f"{pdf} is missing: the tier needs ../shared/financebench")
    tree = build_tree(pdf, cache_dir=Path(tmp_path) / "trees")
    assert tree.page_count >= 400
    llm = client(llama)
    question = "What was PepsiCo's total net revenue in FY2022?"
    result = run(aretrieve(tree, question, retriever="agent", llm=llm, max_turns=1, max_tokens=48))
    assert result.error_kind != "context_length", result.error
    (index_event,) = [e for e in result.trace if e.message.startswith("index:")]
    assert index_event.data["full_index_tokens"] > N_CTX  # the whole index would not fit
    assert index_event.data["shortened"] is True
    first = llm.ledger.records()[0]
    assert first.error is None and 0 < first.prompt_tokens < N_CTX - 1024
    assert llm.context_window == N_CTX and llm.context_window_source == "known model table"
    assert json.dumps(result.trace[0].data)  # the trace is serialisable


def test_page_text_fits_a_2k_window_by_the_servers_own_tokenizer(gemma, fb_pdf, tmp_path):
    """followup sends whole pages no more: at --context-window 2048 (the doctor's advice for llama.cpp at
    --n_ctx 2048) a 3-page earnings excerpt was 2,210 tokens by gemma's tokenizer and met HTTP 400. Here
    the page text is cut by the server's own count (/extras/tokenize) to leave room for the reply."""
    tree = build_tree(fb_pdf("3M_2018_10K"), cache_dir=Path(tmp_path) / "trees")
    llm = client(gemma, context_window=2048, max_tokens=16)
    question = "What is the FY2018 capital expenditure amount (in USD millions) for 3M?"
    result = run(aretrieve(tree, question, retriever="followup", llm=llm, max_passes=1))
    assert result.error_kind != "context_length", result.error
    assert llm.tokens.method == "server tokenizer"
    (cut,) = [e for e in result.trace if "page text cut to fit" in e.message]
    assert cut.data["pages_left_out"] or cut.data["pages_cut"]
    # every HTTP attempt (validation re-asks too), by the server's own count
    lists = [v for e in result.trace for k, v in e.data.items() if k in ("attempts", "http_attempts")]
    attempts = [a for v in lists if isinstance(v, list) for a in v if a.get("usage")]
    assert attempts and all(0 < a["usage"]["prompt_tokens"] <= 2048 - 16 for a in attempts)
