"""Errors that name their cause, every HTTP attempt counted, calls sized to the model (issue 13).

Against the loopback FakeOpenAIServer (real HTTP) where the wire matters, else the scripted model.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from pydantic import BaseModel, model_validator

import pageindex.llm.cache as cache_module
from pageindex.llm import (
    Budget,
    BudgetExceeded,
    ContextLengthError,
    HTTPStatusError,
    LLMCache,
    LLMCallError,
    LLMTimeout,
    Message,
    OutputTruncated,
    ReplayMiss,
    ScriptedModel,
    StructuredOutputError,
    ToolCall,
    error_kind_name,
    is_model_failure,
    make_client,
)
from pageindex.llm.http import server_message, shorten, stated_context_window
from pageindex.llm.tokens import TokenCounter, context_window_from_models, known_context_window
from pageindex.llm.wire import REQUEST_FORMAT, message_to_wire


class Decision(BaseModel):
    decision: str
    answer: str = ""

    @model_validator(mode="after")
    def needs_answer(self) -> Decision:
        if self.decision == "answer" and not self.answer.strip():
            raise ValueError('decision "answer" needs a non-empty "answer"')
        return self


def ask(text: str = "What was 3M revenue in FY2018?") -> list[Message]:
    return [Message(role="user", content=text)]


def run(coro):
    return asyncio.run(coro)


# ----------------------------------------------------------------------------- wire conformance
def test_assistant_tool_call_message_sends_an_empty_string_not_null(serve):
    call = ToolCall(id="c1", name="fetch_section", arguments={"node_id": "n1"})
    wire = message_to_wire(Message(role="assistant", content=None, tool_calls=[call]))
    assert wire["content"] == "" and wire["tool_calls"][0]["function"]["arguments"] == '{"node_id": "n1"}'
    server = serve("done")
    client = make_client("openai/m", base_url=server.base_url)
    history = ask() + [
        Message(role="assistant", content=None, tool_calls=[call]),
        Message(role="tool", content="section text", tool_call_id="c1", name="fetch_section"),
    ]
    assert run(client.chat(history)).content == "done"
    sent = server.chat_requests[0]["body"]  # the JSON as it crossed the wire
    assert sent["messages"][1]["content"] == "" and sent["messages"][1]["tool_calls"][0]["id"] == "c1"


def test_server_message_is_extracted_and_never_cut_mid_word():
    detail = [{"loc": ["body", "messages", 1, "content"], "msg": "Input should be a valid string"}]
    body = json.dumps({"detail": detail})
    assert server_message(body) == "messages.1.content: Input should be a valid string"
    assert server_message('{"error": {"message": "model overloaded"}}') == "model overloaded"
    long = "word " * 300
    cut = shorten(long.strip(), 100)
    assert len(cut) <= 100 and cut.endswith("word…")


# ----------------------------------------------------------------------------- error classes
def test_http_error_is_http_status_with_the_servers_whole_message(serve):
    message = "Input should be a valid string: " + "details " * 60 + "END"
    server = serve(ScriptedModel.http_error(422, message=message))
    client = make_client("openai/m", base_url=server.base_url, max_retries=0)
    with pytest.raises(HTTPStatusError) as info:
        run(client.chat(ask()))
    assert info.value.kind == "http_422" and info.value.status == 422
    assert str(info.value).endswith("details END") or str(info.value).endswith("…")
    assert "Input should be a valid string" in str(info.value)
    assert not str(info.value)[-1].isalpha() or str(info.value).endswith("END")


def test_context_overflow_is_its_own_class_and_not_retried(serve):
    server = serve(
        ScriptedModel.http_error(400, message="Requested tokens (9123) exceed context window of 8192"),
        "never reached",
    )
    client = make_client("openai/m", base_url=server.base_url, max_retries=3, context_window=8192)
    with pytest.raises(ContextLengthError) as info:
        run(client.chat(ask()))
    assert info.value.kind == "context_length" and len(server.chat_requests) == 1
    assert "exceed context window of 8192" in str(info.value) and "context window 8192" in str(info.value)
    # the window is the server's: what leaves more room is said, not only the figure (on llama.cpp at
    # --context-window 2048 the error was "(context window 2048): HTTP 400: ...", no way out named)
    assert str(info.value).split(": ", 1)[1].startswith(
        "the prompt does not fit the model's context (context window 8192 (--context-window), as the server "
        "says: pageindex sized the prompt for it, but this one came out longer; a server with a larger "
        "context (given as --context-window), or shorter replies (--opt RETRIEVER.max_tokens=N), leave more "
        "room): HTTP 400: Requested tokens (9123) exceed context window of 8192")


def test_llama_servers_context_overflow_is_a_context_length_error_stating_its_window(serve):
    """llama.cpp's own server (llama-server, built from llama-cpp-python 0.3.36's vendored source) words it
    "request (9024 tokens) exceeds the available context size (4096 tokens)": it was a plain http_400, with
    no window stated and no way out, and the doctor's probe read only a lower bound."""
    from pageindex.llm.http import is_context_overflow, stated_context_window

    said = "request (9024 tokens) exceeds the available context size (4096 tokens), try increasing it"
    assert is_context_overflow(400, said) and stated_context_window(said) == 4096
    server = serve(ScriptedModel.http_error(400, message=said), "never reached")
    client = make_client("openai/gemma-3-270m", base_url=server.base_url, max_retries=3)
    assert run(client.ensure_limits()) == 32768  # the known table's, as a server that says none
    with pytest.raises(ContextLengthError) as info:
        run(client.chat(ask()))
    assert len(server.chat_requests) == 1
    assert "the server's window is 4096 tokens, not 32768 as assumed (known model table); give " \
        "--context-window 4096: HTTP 400: request (9024 tokens) exceeds" in str(info.value)


def test_a_context_overflow_with_a_window_from_the_known_table_says_how_to_find_the_servers(serve):
    """A server that does not say its window: the table's may be larger than the server's."""
    server = serve(ScriptedModel.http_error(400, message="prompt is too long"))
    client = make_client("openai/gemma-3-270m", base_url=server.base_url, max_retries=0)
    assert run(client.ensure_limits()) == 32768
    with pytest.raises(ContextLengthError) as info:
        run(client.chat(ask()))
    assert str(info.value).endswith(
        "(context window 32768 (known model table); the server's may be smaller: pageindex doctor "
        "--probe-context finds it, then give --context-window N): HTTP 400: prompt is too long")


def test_a_context_overflow_names_the_servers_window_when_it_is_not_the_one_assumed(serve):
    """Review: a llama.cpp server running gemma-3-270m with an 8k context refused every prompt of a
    10-K (sized for the 32768 of the table of known models), and the error said "(context window
    32768)" above the server's "maximum context length is 8192 tokens", with no way out named."""
    said = (
        "This model's maximum context length is 8192 tokens. However, you requested 16583 tokens "
        "(15559 in the messages, 1024 in the completion). Please reduce the length of the messages."
    )
    server = serve(ScriptedModel.http_error(400, message=said))
    client = make_client("openai/gemma-3-270m", base_url=server.base_url, max_retries=0)
    assert run(client.ensure_limits()) == 32768  # what retrievers size their prompts by
    with pytest.raises(ContextLengthError) as info:
        run(client.chat(ask()))
    assert str(info.value).split(": ", 1)[1].startswith(
        "the prompt does not fit the model's context: the "
        "server's window is 8192 tokens, not 32768 as assumed (known model table); give "
        "--context-window 8192: HTTP 400: This model's maximum context length is 8192 tokens."
    )
    # llama.cpp's own wording and JSON field; a window the server does not state is not guessed
    assert stated_context_window("Requested tokens (9123) exceed context window of 4,096") == 4096
    body = {"error": {"message": "the request exceeds the available context size", "n_ctx": 2048}}
    assert stated_context_window(json.dumps(body)) == 2048
    assert stated_context_window("prompt is too long") is None


def test_invalid_reply_carries_the_validation_messages():
    sm = ScriptedModel(policy=lambda req: {"decision": "answer", "answer": ""})
    client = make_client("scripted", scripted=sm)
    with pytest.raises(StructuredOutputError) as info:
        run(client.structured(ask(), Decision, max_retries=2))
    assert info.value.kind == "invalid_reply" and is_model_failure(info.value.kind)
    assert 'decision "answer" needs a non-empty "answer"' in str(info.value)
    assert "after 3 attempt(s) (3 HTTP request(s))" in str(info.value)
    (record,) = client.ledger.records()
    assert record.calls == 3 and record.error == "invalid_reply" and record.prompt_tokens > 0


def test_finish_reason_length_is_output_truncated():
    sm = ScriptedModel(replies=[ScriptedModel.reply(value='{"decision": "ans', finish_reason="length")])
    client = make_client("scripted", scripted=sm)
    with pytest.raises(OutputTruncated) as info:
        run(client.structured(ask(), Decision, max_tokens=5))
    assert info.value.kind == "output_truncated" and is_model_failure("output_truncated")
    assert "finish_reason: length" in str(info.value) and "max_tokens=5" in str(info.value)


def test_old_error_kind_names_still_read():
    assert error_kind_name("invalid_output") == "invalid_reply"
    assert error_kind_name("timeout") == "timeout" and error_kind_name(None) is None
    assert is_model_failure("invalid_output") and not is_model_failure("http_500")
    assert not is_model_failure("context_length") and not is_model_failure("timeout")


# ----------------------------------------------------------------------------- attempts
def test_timeout_then_retry_counts_both_attempts(serve):
    """The timed-out attempt reports no usage, yet the server read its prompt: its estimate counts
    against the budget and is kept on the call's record (``unreported_attempts``,
    ``estimated_prompt_tokens``), as a failed call's is (a call that ended well after a timed-out
    attempt charged the budget nothing for it)."""
    server = serve(ScriptedModel.timeout(), ScriptedModel.reply("late but fine", prompt_tokens=40))
    budget = Budget(max_tokens=10_000)
    client = make_client("openai/m", base_url=server.base_url, timeout=0.3, max_retries=1, budget=budget)
    reply = run(client.chat(ask("x" * 400)))
    assert reply.content == "late but fine" and len(server.chat_requests) == 2
    assert [a["outcome"] for a in reply.attempts] == ["timeout", "ok"]
    assert reply.attempts[0]["usage"] is None and reply.usage.calls == 2 and reply.usage.prompt_tokens == 40
    assert (reply.usage.unreported_attempts, reply.usage.estimated_prompt_tokens) == (1, 100)
    assert budget.spent_tokens == reply.usage.total_tokens + 100  # and 400 characters / 4 for the lost one


def test_timeouts_not_retried_for_local_profile_and_estimate_charged(serve):
    server = serve(ScriptedModel.timeout(), "never asked")
    budget = Budget(max_tokens=10_000)
    client = make_client(
        "openai/m", base_url=server.base_url, timeout=0.3, max_retries=3, retry_timeouts=False, budget=budget
    )
    with pytest.raises(LLMTimeout) as info:
        run(client.chat(ask("x" * 400)))
    assert len(server.chat_requests) == 1 and "not retried" in str(info.value)
    assert [a["outcome"] for a in info.value.attempts] == ["timeout"]
    (record,) = client.ledger.records()
    assert (record.calls, record.total_tokens, record.error) == (1, 0, "timeout")
    assert budget.spent_tokens == 100  # 400 characters / 4, the estimated prompt of the lost attempt
    assert (record.unreported_attempts, record.estimated_prompt_tokens) == (1, 100)


def test_every_call_sends_max_tokens_sized_to_the_context():
    sm = ScriptedModel(policy=lambda req: {"decision": "fail"})
    client = make_client("scripted", scripted=sm, role="judge")
    run(client.structured(ask(), Decision))
    run(client.chat(ask()))
    assert [r.max_tokens for r in sm.requests] == [512, 512]  # the judge's default, structured too
    small = make_client("scripted", scripted=ScriptedModel(replies=["ok"]), context_window=1000)
    run(small.chat(ask("y" * 2400), max_tokens=900))  # 800 tokens at a conservative 3 chars each
    assert small.scripted.requests[0].max_tokens == 1000 - 800 - 16


def test_old_recordings_miss_with_a_message_saying_so(tmp_path):
    path = tmp_path / "c.sqlite"
    cache = LLMCache(path, "rw")
    cache.put("oldkey", model="m", kind="chat", request={"kind": "chat", "model": "m"}, reply={},
              prompt_tokens=1, completion_tokens=1)
    client = make_client("replay/m", cache=LLMCache(path, "replay"))
    with pytest.raises(ReplayMiss) as info:
        run(client.chat(ask()))
    text = str(info.value)
    assert f"older request format (before v{REQUEST_FORMAT})" in text and "--cache rw" in text


# ----------------------------------------------------------------------------- sizing
def test_token_counter_calibrates_from_reported_usage():
    counter = TokenCounter()
    assert counter.estimate("x" * 400) == 100 and counter.method == "chars/4"
    counter.observe(3000, 1000)
    assert counter.estimate("x" * 300) == 100 and counter.method == "chars/3.00 (calibrated)"


def test_context_windows_from_metadata_and_table():
    vllm = {"object": "list", "data": [{"id": "qwen", "max_model_len": 32768}]}
    assert context_window_from_models(vllm, "qwen") == 32768
    llama_cpp = {"object": "list", "data": [{"id": "x.gguf", "owned_by": "me"}]}
    assert context_window_from_models(llama_cpp, "x.gguf") is None
    assert known_context_window("SmolLM2-135M-Instruct") == 8192 and known_context_window("zzz") is None


def test_a_replay_reads_the_recorded_token_estimate(serve, tmp_path):
    """A server without a tokenizer: the recorded run counts by the estimate its replies
    calibrated; the replay, which has no replies to calibrate from, reads that count from the
    cache instead of estimating chars/4 (it used to, and an index cut to fit came out different)."""
    server = serve("done")
    path = tmp_path / "c.sqlite"
    live = make_client("openai/m", base_url=server.base_url, cache=LLMCache(path, "rw"))
    live.tokens.observe(3000, 1000)  # the server's usage said 3 characters per token
    text = "x" * 300
    # 100 by the estimate, and the fitting margin on top (no tokenizer counted it)
    assert run(live.count_tokens(text)) == 120 and live.tokens.method == "chars/3.00 (calibrated)"
    replay = make_client("replay/m", cache=LLMCache(path, "replay"))
    assert run(replay.count_tokens(text)) == 120
    assert run(replay.count_tokens("y" * 300)) == 75  # never counted live: chars/4


def test_refused_or_unconnected_attempts_cost_nothing_timeouts_cost_their_prompt_in_dollars(serve):
    """Review 15: every attempt without usage was charged its estimated prompt, so a storm of 429s
    (or a server that is down) ended a run as "budget spent" with nothing spent; and a dollar budget
    never counted timed-out attempts, so calls that kept timing out never stopped a `--budget '$X'` run.
    Only attempts the server took (timed out, cut) are charged, in tokens and, when priced, dollars."""
    server = serve(*[ScriptedModel.http_error(429, retry_after=0)] * 3)
    budget = Budget(max_tokens=100)
    client = make_client("openai/m", base_url=server.base_url, max_retries=2, budget=budget)
    with pytest.raises(LLMCallError):
        run(client.chat(ask("x" * 4000)))
    assert len(server.chat_requests) == 3 and budget.spent_tokens == 0 and not budget.exhausted
    server.stop()
    with pytest.raises(LLMCallError):
        run(client.chat(ask("x" * 4000)))  # nothing listens any more
    assert budget.spent_tokens == 0

    slow = serve(ScriptedModel.timeout(), "never asked")
    dollars = Budget(max_usd=0.0001)
    priced = make_client(
        "openai/gpt-4o-mini", base_url=slow.base_url, api_key="k", timeout=0.3, retry_timeouts=False,
        budget=dollars,
    )
    with pytest.raises(LLMTimeout):
        run(priced.chat(ask("x" * 4000)))  # about 1,000 prompt tokens at $0.15 per million
    assert dollars.spent_tokens == 1000 and dollars.spent_usd == pytest.approx(0.00015)
    with pytest.raises(BudgetExceeded, match="dollar budget spent"):
        run(priced.chat(ask()))
    assert len(slow.chat_requests) == 1


def test_calls_queued_behind_the_concurrency_limit_are_checked_against_the_budget_when_they_start():
    """Review 15: the budget was checked before a call waited for its request slot, so every call
    queued behind a concurrency of 1 went out after the budget was spent."""
    model = ScriptedModel(policy=lambda r: ScriptedModel.reply("ok", prompt_tokens=8, completion_tokens=2))
    budget = Budget(max_tokens=10)
    client = make_client("scripted", scripted=model, budget=budget, concurrency=1)

    async def one(i: int) -> str:
        try:
            await client.chat(ask(f"question {i}"))
            return "ok"
        except BudgetExceeded:
            return "budget"

    async def all_of_them() -> list[str]:
        return await asyncio.gather(*(one(i) for i in range(6)))

    assert run(all_of_them()) == ["ok"] + ["budget"] * 5
    assert len(model.requests) == 1 and budget.spent_tokens == 10
    structured = make_client("scripted", scripted=ScriptedModel(policy=lambda r: {"decision": "fail"}),
                             budget=Budget(max_tokens=1), concurrency=1)

    async def two() -> list[BaseException | object]:
        return await asyncio.gather(*(structured.structured(ask(f"q{i}"), Decision) for i in range(2)),
                                    return_exceptions=True)

    outcomes = run(two())
    assert sum(isinstance(o, BudgetExceeded) for o in outcomes) == 1, outcomes


@pytest.mark.parametrize("status", [400, 500])
def test_a_prompt_that_does_not_fit_is_not_retried_whatever_the_status(serve, status):
    """Review 15: llama.cpp servers answer a prompt longer than the context with a 500, which the SDK
    retried (four requests for one call with max_retries=3) before it was read as a context overflow."""
    message = "Requested tokens (9000) exceed context window of 8192"
    server = serve(*[ScriptedModel.http_error(status, message=message, retry_after=0)] * 4)
    client = make_client("openai/m", base_url=server.base_url, max_retries=3)
    with pytest.raises(ContextLengthError) as info:
        run(client.chat(ask()))
    assert len(server.chat_requests) == 1 and len(info.value.attempts) == 1
    # any other 500 is still retried
    other = serve(ScriptedModel.http_error(500, message="boom", retry_after=0), "fine")
    assert run(make_client("openai/m", base_url=other.base_url, max_retries=1).chat(ask())).content == "fine"


def test_a_replay_reads_the_context_window_the_recording_was_sized_by(tmp_path):
    """Review 15: a replay asks no server, so a window the recording read from the server's metadata
    (vLLM's max_model_len, Ollama, LM Studio) was unknown there: max_tokens came out different, every
    key missed, and the README's record-then-replay recipe failed against such servers. The figure is
    kept with the replies; a later recording against a server restarted with another window replaces it."""
    from pageindex.llm import wire
    from pageindex.llm.fakeserver import openai_app
    from pageindex.llm.testing import FakeOpenAIServer

    class WindowServer(FakeOpenAIServer):
        window = 6000

        def build_app(self):
            entry = wire.model_entry("m", max_model_len=self.window)
            return openai_app(chat=self._chat, models=lambda: [entry], require_key=lambda: None,
                              middlewares=[self._record])

    path = tmp_path / "c.sqlite"
    text = "x" * 9000  # 3,000 tokens at the fixed 3 characters a token: room for 2,984 of a 6,000 window
    for window, cap in ((6000, 2984), (5000, 1984)):
        server = WindowServer(ScriptedModel(policy=lambda r: "ok", name="m"))
        server.window = window
        server.start()
        try:
            live = make_client("openai/m", base_url=server.base_url, cache=LLMCache(path, "rw"))
            assert run(live.ensure_limits()) == window  # what a retriever does before its first call
            run(live.chat(ask(text), max_tokens=4000))
            assert server.chat_requests[0]["body"]["max_tokens"] == cap
        finally:
            server.stop()
        replay = make_client("replay/m", cache=LLMCache(path, "replay"))
        assert run(replay.ensure_limits()) == window
        assert run(replay.chat(ask(text), max_tokens=4000)).content == "ok"
        # review 17: the recorded window is no "recording made with an older request format"
        assert LLMCache(path, "replay").older_format_count("m", REQUEST_FORMAT) == 0
        assert (replay.context_window, replay.context_window_source) == (window, "server metadata (recorded)")


def test_the_tokenizer_url_keeps_a_base_urls_query_after_its_path():
    """Review 15: "http://host/v1?api-version=2" gave "http://host/v1?api-version=2/extras/tokenize"."""
    url = lambda base: TokenCounter(base_url=base)._tokenize_url()  # noqa: E731
    assert url("http://h:8080/v1?api-version=2") == "http://h:8080/extras/tokenize?api-version=2"
    assert url("http://h:8080/v1/") == url("http://h:8080/v1") == "http://h:8080/extras/tokenize"
    assert url("http://h/proxy/v1") == "http://h/proxy/extras/tokenize" and url(None) is None


def test_a_base_urls_query_stays_after_the_path_of_every_endpoint_asked():
    """Trial 15: with "...?api_key=K" in the base URL, the context-window lookup asked
    ".../v1?api_key=K/models" (and Ollama's "/api/show" the same way): 404s on every run. One function
    builds every endpoint URL from a base URL."""
    from pageindex.llm import wire
    from pageindex.llm.fakeserver import openai_app
    from pageindex.llm.spec import endpoint
    from pageindex.llm.testing import FakeOpenAIServer

    assert endpoint("http://h/v1?api_key=K", "/models") == "http://h/v1/models?api_key=K"
    assert endpoint("http://h/v1/?a=1", "/api/show", root=True) == "http://h/api/show?a=1"

    class WindowServer(FakeOpenAIServer):
        def build_app(self):
            entry = wire.model_entry("m", max_model_len=7000)
            return openai_app(chat=self._chat, models=lambda: [entry], require_key=lambda: None,
                              middlewares=[self._record])

    with WindowServer(ScriptedModel(policy=lambda r: "ok", name="m")) as server:
        client = make_client("openai/m", base_url=server.base_url + "?api_key=K123456789")
        assert run(client.ensure_limits()) == 7000
        assert [e["path"] for e in server.exchanges] == ["/v1/models"]


def test_a_reask_the_context_cannot_hold_is_unusable_output_not_a_context_error():
    """gemma-3-270m on llama.cpp (--context-window 4096): the planner's first plan did not validate, and
    each re-ask carried the 1,024-token reply back (prompts 1,179, 2,381, 3,539 tokens); at 2,048 the
    first re-ask is refused (HTTP 400), which made the whole retrieval an `error` of kind context_length.
    The model answered unusably: that is StructuredOutputError (a retriever's fail), the refusal said."""

    class Reply(BaseModel):
        status: str
        missing: list[str] = []

        @model_validator(mode="after")
        def _needs_missing(self):
            if not self.missing:
                raise ValueError('"missing" needs an item')
            return self

    refusal = "This model's maximum context length is 2048 tokens. However, you requested 2400 tokens"
    replies = iter([{"status": "incomplete"}, ScriptedModel.http_error(400, message=refusal)])
    sm = ScriptedModel(policy=lambda req: next(replies))
    client = make_client("scripted", scripted=sm, context_window=2048, max_retries=0)
    with pytest.raises(StructuredOutputError) as info:
        run(client.structured(ask(), Reply))
    assert str(info.value) == (
        "scripted: reply did not validate as Reply after 1 attempt(s) (2 HTTP request(s)): "
        "\"missing\" needs an item; asking again, with that reply and its errors added, did not fit the "
        "model's context window (2,048 tokens): the server refused the longer prompt")
    (record,) = client.ledger.records()
    assert record.error == "invalid_reply" and record.calls == 2  # the refused re-ask is a call too
    # a first request refused is still the prompt's fault: context_length
    sm = ScriptedModel(replies=[ScriptedModel.http_error(400, message=refusal)])
    with pytest.raises(ContextLengthError):
        run(make_client("scripted", scripted=sm, context_window=2048, max_retries=0).structured(ask(), Reply))


def test_a_tool_call_cut_at_max_tokens_is_output_truncated_whatever_its_finish_reason():
    """llama-cpp-python reports finish_reason "tool_calls" for a forced tool call cut at max_tokens
    (gemma-3-270m's planner replies: 1,024 of 1,024 tokens, or prompt and reply filling the 4,096-token
    window): it was `invalid_reply` "Invalid JSON: EOF while parsing a string", not a reply cut short."""

    class Reply(BaseModel):
        answer: str

    def cut(completion_tokens, prompt_tokens=None):
        call = ScriptedModel.malformed_call("Reply", '{"answer": "the revenue was')
        return ScriptedModel.reply(calls=[call], completion_tokens=completion_tokens,
                                   prompt_tokens=prompt_tokens, finish_reason="tool_calls")  # fmt: skip

    sm = ScriptedModel(policy=lambda req: cut(64))
    client = make_client("scripted", scripted=sm, max_retries=0)
    with pytest.raises(OutputTruncated) as info:
        run(client.structured(ask(), Reply, max_tokens=64, max_retries=0))
    assert str(info.value) == (
        "scripted: the reply was cut at max_tokens=64 (64 completion tokens; the server said finish_reason "
        "'tool_calls') before it was a complete Reply")
    sm = ScriptedModel(policy=lambda req: cut(557, prompt_tokens=3539))
    client = make_client("scripted", scripted=sm, max_retries=0, context_window=4096)
    with pytest.raises(OutputTruncated) as info:
        run(client.structured(ask(), Reply, max_tokens=1024, max_retries=0))
    assert str(info.value) == (
        "scripted: the reply was cut at the end of the context window, before max_tokens=1024 (3,539 prompt "
        "and 557 completion tokens fill the 4,096-token window; the server said finish_reason 'tool_calls') "
        "before it was a complete Reply")
    sm = ScriptedModel(policy=lambda req: cut(20))  # not cut: a malformed reply stays one
    with pytest.raises(StructuredOutputError):
        run(make_client("scripted", scripted=sm, max_retries=0).structured(ask(), Reply, max_tokens=64,
                                                                          max_retries=0))


def test_a_reply_stopped_where_the_window_ends_says_so_not_that_max_tokens_cut_it():
    """llama-server stops a reply where prompt and reply fill its window, finish_reason "length", below
    the max_tokens sent (followup at --ctx-size 2048: 1,343 prompt + 705 completion tokens, max_tokens
    1024): the error said "cut at max_tokens=1024 (finish_reason: length)", a cap the reply never reached."""

    class Reply(BaseModel):
        answer: str

    sm = ScriptedModel(policy=lambda req: ScriptedModel.reply(
        '{"answer": "the capex was', completion_tokens=705, prompt_tokens=1343, finish_reason="length"))
    client = make_client("scripted", scripted=sm, max_retries=0, context_window=2048)
    with pytest.raises(OutputTruncated) as info:
        run(client.structured(ask(), Reply, max_tokens=1024, max_retries=0))
    assert str(info.value) == (
        "scripted: the reply was cut at the end of the context window, before max_tokens=1024 "
        "(finish_reason: length; 1,343 prompt and 705 completion tokens fill the 2,048-token window) "
        "before it was a complete Reply")
    sm = ScriptedModel(policy=lambda req: ScriptedModel.reply(
        '{"answer": "the capex was', completion_tokens=64, prompt_tokens=100, finish_reason="length"))
    with pytest.raises(OutputTruncated) as info:  # the cap reached: said as before
        run(make_client("scripted", scripted=sm, max_retries=0, context_window=2048)
            .structured(ask(), Reply, max_tokens=64, max_retries=0))
    assert "the reply was cut at max_tokens=64 (finish_reason: length) before" in str(info.value)


def test_a_reply_stopped_below_the_cap_in_a_window_pageindex_does_not_know_says_so():
    """Through a LiteLLM proxy (which lists no window) in front of llama-server, or on llama-cpp-python
    (which reports none), a reply that the server stopped where its window ends, below the max_tokens
    sent, was still said as "cut at max_tokens=1024 (finish_reason: length)", a cap it never reached:
    the window case above needs the window known."""

    class Reply(BaseModel):
        answer: str

    sm = ScriptedModel(policy=lambda req: ScriptedModel.reply(
        '{"answer": "the capex was', completion_tokens=705, prompt_tokens=1343, finish_reason="length"))
    with pytest.raises(OutputTruncated) as info:
        run(make_client("scripted", scripted=sm, max_retries=0).structured(ask(), Reply, max_tokens=1024,
                                                                          max_retries=0))
    assert str(info.value) == (
        "scripted: the reply was cut after 705 completion tokens, before max_tokens=1024 (finish_reason: "
        "length; the server stopped it below the cap, as at the end of a context window: 1,343 prompt and "
        "705 completion tokens; pageindex doctor --probe-context finds the window) before it was a complete "
        "Reply")


def test_a_complete_reply_of_exactly_max_tokens_that_did_not_validate_is_invalid_reply():
    """A reply that is whole JSON, ended by the model itself, and happens to use exactly ``max_tokens``
    was not cut: its validation error (here an empty answer) is what went wrong, whatever the count.
    It was output_truncated 'cut at max_tokens=64 (64 completion tokens...)', its reason hidden."""

    class Reply(BaseModel):
        status: str
        answer: str = ""

        @model_validator(mode="after")
        def _has_answer(self) -> Reply:
            if self.status == "answer" and not self.answer:
                raise ValueError('status "answer" needs a non-empty "answer"')
            return self

    for finish in ("stop", "tool_calls"):
        def whole(req, finish=finish):
            call = ScriptedModel.call("Reply", status="answer", answer="")
            return ScriptedModel.reply(calls=[call], completion_tokens=64, finish_reason=finish)

        client = make_client("scripted", scripted=ScriptedModel(policy=whole), max_retries=0)
        with pytest.raises(StructuredOutputError, match='needs a non-empty "answer"'):
            run(client.structured(ask(), Reply, max_tokens=64, max_retries=0))
        client = make_client("scripted", scripted=ScriptedModel(policy=whole), max_retries=0,
                             context_window=100)
        with pytest.raises(StructuredOutputError, match='needs a non-empty "answer"'):
            run(client.structured(ask(), Reply, max_tokens=64, max_retries=0))


def test_llama_servers_own_tokenize_endpoint_counts_the_tokens():
    """llama.cpp's llama-server counts at ``POST /tokenize`` (``content``), not llama-cpp-python's
    ``/extras/tokenize``: its prompts were sized by a chars/4 estimate. The endpoint that answered is
    the only one asked from then on."""
    from aiohttp import web

    from pageindex.llm import wire
    from pageindex.llm.fakeserver import LoopbackServer, openai_app

    class LlamaServer(LoopbackServer):
        asked: list[str] = []

        def build_app(self) -> web.Application:
            async def tokenize(request: web.Request) -> web.Response:
                LlamaServer.asked.append(request.path)
                body = await request.json()
                return web.json_response({"tokens": list(range(len(body["content"].split())))})

            async def chat(request: web.Request) -> web.Response:
                raise AssertionError("no chat")

            app = openai_app(chat=chat, models=lambda: [wire.model_entry("m")])
            app.router.add_post("/tokenize", tokenize)
            return app

    with LlamaServer() as server:
        client = make_client("openai/m", base_url=server.base_url)
        assert run(client.count_tokens("one two three " * 100)) == 300
        assert run(client.count_tokens("four five")) == 2
    assert client.tokens.method == "server tokenizer"
    assert LlamaServer.asked == ["/tokenize", "/tokenize"]  # /extras/tokenize (404) asked once, before


def test_vllms_tokenize_endpoint_counts_the_tokens():
    """vLLM's ``POST /tokenize`` wants ``model`` and ``prompt`` (a body without ``prompt`` is refused, as
    its request model requires one) and answers ``tokens`` and ``count``; an imitation of its documented
    API stands in (no vLLM here)."""
    from aiohttp import web

    from pageindex.llm import wire
    from pageindex.llm.fakeserver import LoopbackServer, openai_app

    class Vllm(LoopbackServer):
        asked: list[str] = []

        def build_app(self) -> web.Application:
            async def tokenize(request: web.Request) -> web.Response:
                body = await request.json()
                Vllm.asked.append(",".join(sorted(body)))
                if "prompt" not in body or body.get("model") != "m":
                    return web.json_response({"object": "error", "message": "Field required"}, status=400)
                tokens = list(range(len(body["prompt"].split())))
                return web.json_response({"count": len(tokens), "max_model_len": 8192, "tokens": tokens})

            async def chat(request: web.Request) -> web.Response:
                raise AssertionError("no chat")

            entry = wire.model_entry("m", max_model_len=8192)
            app = openai_app(chat=chat, models=lambda: [entry])
            app.router.add_post("/tokenize", tokenize)
            return app

    with Vllm() as server:
        client = make_client("openai/m", base_url=server.base_url)
        assert run(client.ensure_limits()) == 8192
        assert run(client.count_tokens("one two three " * 100)) == 300
        assert run(client.count_tokens("four five")) == 2
    assert client.tokens.method == "server tokenizer"
    # llama-server's body first (refused), then vLLM's, which alone is asked from then on
    vllms = "add_special_tokens,model,prompt"
    assert Vllm.asked == ["add_special,content", vllms, vllms]


def test_a_count_with_no_tokenizer_keeps_a_margin_for_fitting():
    """Through a LiteLLM proxy (no tokenizer listed) an agent's fetched table, estimated at the characters
    per token its index taught, came out past an 8,192-token window: estimates fit prompts with 20% room;
    the plain estimate (budgets, charges) has none."""
    from pageindex.llm.tokens import ESTIMATE_MARGIN, TokenCounter

    counter = TokenCounter()
    assert counter.estimate("x" * 400) == 100
    assert run(counter.count("x" * 400)) == 120 == round(100 * ESTIMATE_MARGIN)


def test_a_plugin_provider_whose_complete_raises_is_named_not_a_connection_error() -> None:
    """Review rev-plugin: a ``CompletionProvider`` plug-in whose ``complete`` raised was "brokenprov/x at
    http://brokenprov.invalid/v1: no reply: Connection error." (kind ``connection``): its own exception,
    the one thing its author needed, was nowhere."""
    from pageindex.llm.providers import CompletionProvider, register_provider

    @register_provider("raising-plugin-provider")
    class Raising(CompletionProvider):
        async def complete(self, request: dict) -> dict:
            raise RuntimeError("provider boom")

    client = make_client("raising-plugin-provider/m", max_retries=1)
    with pytest.raises(LLMCallError) as caught:
        asyncio.run(client.chat([Message(role="user", content="hi")]))
    assert caught.value.kind == "provider_error"
    assert str(caught.value) == (
        "raising-plugin-provider/m at http://raising-plugin-provider.invalid/v1: provider "
        f"'raising-plugin-provider' (from {__name__}): complete() raised RuntimeError: provider boom "
        "(after 2 attempt(s))"
    )


class _WindowServer:
    """A fake server on loopback whose /models lists the model with a 6,000-token window."""

    @staticmethod
    def make(policy):
        from pageindex.llm import wire
        from pageindex.llm.fakeserver import openai_app
        from pageindex.llm.testing import FakeOpenAIServer

        class WindowServer(FakeOpenAIServer):
            def build_app(self):
                entry = wire.model_entry("m", max_model_len=6000)
                return openai_app(chat=self._chat, models=lambda: [entry], require_key=lambda: None,
                                  middlewares=[self._record])

        return WindowServer(ScriptedModel(policy=policy, name="m"))


def test_a_recording_keeps_the_window_its_preflight_read(tmp_path):
    """Fresh-user trial: recorded against llama.cpp's llama-server (n_ctx in /models), the README's CI
    recipe replayed calls as misses: the window the run's preflight read from /models was never kept
    with the replies (only one a later discovery read was), so the replay sized prompts without it."""
    path = tmp_path / "c.sqlite"
    text = "x" * 9000
    with _WindowServer.make(lambda r: "ok") as server:
        live = make_client("openai/m", base_url=server.base_url, cache=LLMCache(path, "rw"))
        run(live.check())  # the run's preflight, before any retriever asks for the window
        assert run(live.ensure_limits()) == 6000
        run(live.chat(ask(text), max_tokens=4000))
    replay = make_client("replay/m", cache=LLMCache(path, "replay"))
    run(replay.check())
    assert run(replay.ensure_limits()) == 6000
    assert run(replay.chat(ask(text), max_tokens=4000)).content == "ok"


def test_a_replay_in_json_mode_finds_a_loopback_recording_sent_with_the_schema_hint(tmp_path):
    """Fresh-user trial: JSON mode on a server on this machine also sends the schema as
    `response_format.schema` (llama.cpp's grammar), and that hint is part of the request's key. A
    replay asks no server and left it out, so every structured call of a `--json-mode` recording
    against llama-server (the doctor's advice there) was a replay miss."""
    path = tmp_path / "c.sqlite"
    reply = json.dumps({"decision": "answer", "answer": "42"})
    with _WindowServer.make(lambda r: reply) as server:
        live = make_client("openai/m", base_url=server.base_url, cache=LLMCache(path, "rw"), json_mode=True)
        run(live.check())
        assert run(live.structured(ask(), Decision)).value.answer == "42"
        assert server.chat_requests[0]["body"]["response_format"]["schema"]  # the hint was sent
    replay = make_client("replay/m", cache=LLMCache(path, "replay"), json_mode=True)
    run(replay.check())
    assert run(replay.structured(ask(), Decision)).value.answer == "42"
    with pytest.raises(ReplayMiss):  # a request recorded neither way is still a miss
        run(replay.structured(ask("other"), Decision))


def test_a_replay_miss_says_the_calls_were_recorded_in_the_other_structured_mode(tmp_path):
    """Fresh-user trial: a recording against llama-server took JSON mode from the doctor's findings; its
    replay (no endpoint, so no findings) asked in tools mode, and every miss said "record it first with
    openai/gemma and the cache in mode rw" of calls that had just been recorded."""
    path = tmp_path / "c.sqlite"
    reply = json.dumps({"decision": "answer", "answer": "42"})
    with _WindowServer.make(lambda r: reply) as server:
        live = make_client("openai/m", base_url=server.base_url, cache=LLMCache(path, "rw"), json_mode=True)
        run(live.structured(ask(), Decision))
    with pytest.raises(ReplayMiss) as info:
        run(make_client("replay/m", cache=LLMCache(path, "replay")).structured(ask(), Decision))
    assert "1 structured call(s) of this model recorded in JSON mode" in str(info.value)
    assert "replays only with --json-mode" in str(info.value)


def test_replay_misses_read_the_recordings_counts_once_not_once_a_miss(tmp_path, monkeypatch):
    """Scale review: every replay miss counted the model's older-format and other-mode recordings
    again, two queries that read every recording's request text (no index covers it): 400 misses of a
    replay against a cache of 100,000 replies took 3 min 32 s, against 1,800 replies 12.5 s. The
    counts are read once per cache (a replay writes nothing); every miss still says them."""
    path = tmp_path / "c.sqlite"
    rw = LLMCache(path, "rw")
    rw.put("oldkey", model="m", kind="chat", request={"kind": "chat", "model": "m"}, reply={},
           prompt_tokens=1, completion_tokens=1)  # fmt: skip
    rw.close()
    json_path = tmp_path / "json.sqlite"
    rw = LLMCache(json_path, "rw")
    rw.put("jsonkey", model="m", kind="structured", request={"format": REQUEST_FORMAT, "mode": "json"},
           reply={}, prompt_tokens=1, completion_tokens=1)  # fmt: skip
    rw.close()
    statements: list[str] = []
    real_open = cache_module._open_read_only

    def traced(target):
        conn = real_open(target)
        conn.set_trace_callback(statements.append)
        return conn

    monkeypatch.setattr(cache_module, "_open_read_only", traced)
    client = make_client("replay/m", cache=LLMCache(path, "replay"))
    for k in range(5):
        with pytest.raises(ReplayMiss) as chat_miss:
            run(client.chat(ask(f"question {k}")))
        assert "holds 1 recording(s) of this model made with an older request format" in str(chat_miss.value)
    client = make_client("replay/m", cache=LLMCache(json_path, "replay"), json_mode=False)
    for k in range(5):
        with pytest.raises(ReplayMiss) as structured_miss:
            run(client.structured(ask(f"question {k}"), Decision))
        assert "holds 1 structured call(s) of this model recorded in JSON mode" in str(structured_miss.value)
    counts = [s for s in statements if s.startswith("SELECT COUNT(*)")]
    # once per cache: 1 (older format), then 1 (older format) + 2 (JSON mode: replies, failures);
    # each miss read them again: 5 + 5 x 3
    assert len(counts) == 4
