"""Faults the soak met: malformed replies, credentials in URLs, replay of failed calls, and identical
calls in flight at once (single-flight)."""

from __future__ import annotations

import asyncio
import logging
import sqlite3

import pytest
from pydantic import BaseModel

from pageindex.llm import (
    LLMCache,
    LLMCallError,
    LLMConfigError,
    LLMTimeout,
    MalformedReply,
    Message,
    ReplayMiss,
    ScriptedModel,
    StructuredOutputError,
    make_client,
    parse_spec,
)
from pageindex.llm.redact import redact, redact_url, url_secrets
from pageindex.llm.testing import FakeOpenAIServer

Q = [Message(role="user", content="What was 3M revenue in FY2018?")]
FAST_500 = ScriptedModel.http_error(500, retry_after=0.01, message="boom")
VALID = '{"id": "x", "object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 3, "completion_tokens": 1}}'  # noqa: E501


class Answer(BaseModel):
    answer: str


def run(coro):
    return asyncio.run(coro)


# ----------------------------------------------------------------------------- malformed replies
WRONG_SHAPES = {
    "truncated": (VALID[: len(VALID) // 2], "the body is not valid JSON"),
    "no choices": ('{"id": "x", "result": {"text": "ok"}}', "no choices (choices is missing)"),
    "choices dict": ('{"id": "x", "choices": {"message": "ok"}}', "no choices (choices is dict)"),
    "a list": ('[{"message": "ok"}]', "expected a chat.completion object, got a JSON list"),
    "error at 200": ('{"error": {"message": "model overloaded"}}', "server error: model overloaded"),
    "html": ("<html>gateway</html>", "the body is not valid JSON"),
    "no message": ('{"choices": [{"text": "ok"}]}', "choices[0] has no message object"),
}


@pytest.mark.parametrize("name", list(WRONG_SHAPES))
def test_malformed_reply_is_retried_then_a_typed_error_with_the_raw_body(name):
    body, reason = WRONG_SHAPES[name]
    sm = ScriptedModel(replies=[ScriptedModel.raw_body(body)] * 3)
    client = make_client("scripted", scripted=sm, max_retries=2)
    with pytest.raises(MalformedReply) as info:
        run(client.chat(Q))
    assert isinstance(info.value, LLMCallError) and info.value.kind == "malformed_reply"
    message = str(info.value)
    assert message.startswith("malformed reply from scripted (scripted): ") and reason in message
    assert "after 3 attempt(s)" in message and len(sm.requests) == 3  # 1 + max_retries, no more
    assert info.value.raw == body
    # every HTTP attempt is counted: one ledger record of the failed call, 3 attempts, no tokens
    (record,) = client.ledger.records()
    assert (record.calls, record.total_tokens, record.error) == (3, 0, "malformed_reply")
    assert [a["outcome"] for a in info.value.attempts] == ["malformed_reply"] * 3


def test_a_truncated_body_then_a_good_one_succeeds_within_the_cap():
    sm = ScriptedModel(replies=[ScriptedModel.raw_body(VALID[:40]), "fine"])
    reply = run(make_client("scripted", scripted=sm, max_retries=1).chat(Q))
    assert reply.content == "fine" and len(sm.requests) == 2
    none_left = ScriptedModel(replies=[ScriptedModel.raw_body(VALID[:40]), "never sent"])
    with pytest.raises(MalformedReply, match="after 1 attempt"):
        run(make_client("scripted", scripted=none_left, max_retries=0).chat(Q))
    assert len(none_left.requests) == 1


def test_malformed_reply_on_structured_calls_over_http():
    sm = ScriptedModel(
        replies=[ScriptedModel.raw_body('{"choices": {"message": "x"}}'), Answer(answer="$32.8B")]
        + [ScriptedModel.raw_body(VALID[:30])] * 2
    )
    with FakeOpenAIServer(sm) as server:
        client = make_client("openai/test-model", base_url=server.base_url, api_key="k", max_retries=1)
        assert run(client.structured(Q, Answer)).value.answer == "$32.8B"
        with pytest.raises(MalformedReply) as info:
            run(client.structured([Message(role="user", content="again")], Answer))
        assert len(server.chat_requests) == 4
    assert f"malformed reply from openai/test-model at {server.base_url}" in str(info.value)
    assert "not valid JSON" in str(info.value) and info.value.raw == VALID[:30]


# ----------------------------------------------------------------------------- credentials in URLs
CRED_URL = "https://alice:PaSsWoRd-42@proxy.example.com/v1?api-key=QUERYKEY-9876&api-version=2024-06-01"


def test_redact_url_and_text():
    assert redact_url(CRED_URL) == "https://***@proxy.example.com/v1?api-key=***&api-version=2024-06-01"
    assert set(url_secrets(CRED_URL)) >= {"alice", "PaSsWoRd-42", "QUERYKEY-9876"}
    text = f"GET {CRED_URL} failed; token=abcd1234 and ?access_token=zzzz9999&page=2, sk-live-abcdefghijkl"
    cleaned = redact(text)
    for secret in ("PaSsWoRd-42", "QUERYKEY-9876", "zzzz9999", "abcdefghijkl"):
        assert secret not in cleaned
    assert "page=2" in cleaned and "api-version=2024-06-01" in cleaned
    assert redact("the key was hunter22 ok", ["hunter22"]) == "the key was *** ok"


def test_spec_where_repr_and_errors_never_show_url_credentials():
    spec = parse_spec("openai/gpt-4o-mini", base_url=CRED_URL, api_key="sk-proj-abcdefgh12345678")
    shown = [spec.where(), repr(spec), str(spec)]
    client = make_client("openai/gpt-4o-mini", base_url=CRED_URL, api_key="k")
    shown.append(repr(client))
    for text in shown:
        assert "PaSsWoRd-42" not in text and "QUERYKEY-9876" not in text and "alice" not in text
        assert "abcdefgh12345678" not in text
    assert spec.where() == f"openai/gpt-4o-mini at {redact_url(CRED_URL)}"
    assert spec.base_url == CRED_URL  # the real URL is still used to connect
    assert "QUERYKEY-9876" not in spec.redact(f"echo: {CRED_URL} key=QUERYKEY-9876")


def test_errors_from_a_server_reached_through_a_credential_url_are_clean(caplog):
    secret_user, secret_pw, query_key = "bob-user", "pw-SECRET-7777", "QKEY-SECRET-5555"
    with FakeOpenAIServer(ScriptedModel(replies=[FAST_500] * 2)) as server:
        url = server.base_url.replace("http://", f"http://{secret_user}:{secret_pw}@") + f"?key={query_key}"
        client = make_client("openai/test-model", base_url=url, api_key="k", max_retries=1)
        with caplog.at_level(logging.DEBUG), pytest.raises(LLMCallError) as info:
            run(client.chat(Q))
        assert len(server.chat_requests) == 2
    port = server.port
    url = f"http://{secret_user}:{secret_pw}@127.0.0.1:{port}/v1?key={query_key}"  # now nothing listens
    gone = make_client("openai/test-model", base_url=url, api_key="k", max_retries=0, timeout=2)
    with pytest.raises(LLMConfigError) as unreachable:
        run(gone.check())
    with pytest.raises(LLMCallError) as refused:
        run(gone.chat(Q))
    texts = [str(info.value), info.value.raw or "", str(unreachable.value), str(refused.value), caplog.text]
    for text in texts:
        assert secret_pw not in text and query_key not in text and secret_user not in text
    assert "HTTP 500 after 2 attempt(s)" in texts[0] and f"127.0.0.1:{port}/v1" in texts[0]
    assert f"http://***@127.0.0.1:{port}/v1?key=***" in texts[2]


# ----------------------------------------------------------------------------- failures in the cache
def test_final_failure_is_replayed_as_the_same_typed_error_and_rw_retries_it(tmp_path):
    path = tmp_path / "c.sqlite"
    sm = ScriptedModel(replies=[FAST_500, FAST_500, "recovered"])
    rw = make_client("openai/gpt-4o-mini", scripted=sm, cache=LLMCache(path, "rw"), max_retries=1)
    with pytest.raises(LLMCallError) as live:
        run(rw.chat(Q))
    assert not live.value.cached and len(sm.requests) == 2
    stats = LLMCache(path).stats()
    assert (stats.entries, stats.failures, stats.failures_by_kind) == (0, 1, {"http_500": 1})

    replay = make_client("replay/gpt-4o-mini", cache=LLMCache(path, "replay"))
    with pytest.raises(LLMCallError) as replayed:
        run(replay.chat(Q))
    assert type(replayed.value) is type(live.value) and str(replayed.value) == str(live.value)
    assert replayed.value.cached and replayed.value.raw == live.value.raw
    other = [Message(role="user", content="a question never asked")]
    with pytest.raises(ReplayMiss):
        run(replay.chat(other))

    # rw never reuses the failure: it calls live again, and the success replaces the record
    assert run(rw.chat(Q)).content == "recovered" and len(sm.requests) == 3
    stats = LLMCache(path).stats()
    assert (stats.entries, stats.failures) == (1, 0)
    assert run(replay.chat(Q)).content == "recovered"


def test_timeouts_and_invalid_output_replay_with_their_kind_and_usage(tmp_path):
    path = tmp_path / "c.sqlite"
    sm = ScriptedModel(
        replies=[ScriptedModel.timeout()] + ['{"answer": 5}'] * 2 + [ScriptedModel.raw_body("[1]")]
    )
    cache = LLMCache(path, "rw")
    rw = make_client("openai/gpt-4o-mini", scripted=sm, cache=cache, max_retries=0, timeout=0.05)
    with pytest.raises(LLMTimeout):
        run(rw.chat(Q))
    with pytest.raises(StructuredOutputError) as invalid:
        run(rw.structured(Q, Answer, max_retries=1))
    with pytest.raises(MalformedReply):
        run(rw.chat([Message(role="user", content="third")]))
    spent = invalid.value.usage
    assert spent is not None and spent.completion_tokens > 0 and spent.calls == 2
    stats = cache.stats()
    assert stats.failures_by_kind == {"timeout": 1, "invalid_reply": 1, "malformed_reply": 1}
    assert stats.entries == 0 and cache.failure_writes == 3

    replay = make_client("replay/gpt-4o-mini", cache=LLMCache(path, "replay"))
    with pytest.raises(LLMTimeout):
        run(replay.chat(Q))
    with pytest.raises(StructuredOutputError) as again:
        run(replay.structured(Q, Answer, max_retries=1))
    with pytest.raises(MalformedReply):
        run(replay.chat([Message(role="user", content="third")]))
    assert str(again.value) == str(invalid.value) and again.value.raw == invalid.value.raw
    timed_out, record = replay.ledger.records()[:2]
    assert timed_out.error == "timeout" and timed_out.calls == 1 and timed_out.total_tokens == 0
    assert record.cached and record.error == "invalid_reply"
    assert (record.prompt_tokens, record.completion_tokens, record.calls) == (
        spent.prompt_tokens,
        spent.completion_tokens,
        2,
    )


def test_failure_rows_hold_no_key(tmp_path):
    key = "sk-test-SECRET-abcdef0123456789"
    path = tmp_path / "c.sqlite"
    echo = ScriptedModel.http_error(500, retry_after=0.01, message=f"bad key {key} at ?api-key=QK-123456")
    with FakeOpenAIServer(ScriptedModel(replies=[echo])) as server:
        client = make_client(
            "openai/test-model", base_url=server.base_url, api_key=key, cache=LLMCache(path), max_retries=0
        )
        with pytest.raises(LLMCallError):
            run(client.chat(Q))
    with sqlite3.connect(path) as conn:
        dump = "\n".join(conn.iterdump())
    assert "abcdef0123456789" not in dump and "QK-123456" not in dump and "HTTP 500" in dump


# ----------------------------------------------------------------------------- single-flight
def test_identical_calls_in_flight_are_made_once(tmp_path):
    sm = ScriptedModel(replies=[ScriptedModel.reply("shared", delay_s=0.1, prompt_tokens=50)])
    client = make_client("scripted", scripted=sm, cache=LLMCache(tmp_path / "c.sqlite"))

    async def main():
        return await asyncio.gather(*(client.bind(sample_id=i).chat(Q) for i in range(6)))

    replies = run(main())
    assert len(sm.requests) == 1 and {r.content for r in replies} == {"shared"}
    flags = sorted(r.usage.cached for r in replies)
    assert flags == [False] + [True] * 5
    assert {r.usage.prompt_tokens for r in replies} == {50}
    assert {r.tag["sample_id"] for r in client.ledger.records()} == set(range(6))


def test_identical_calls_share_a_failure_and_replay_agrees(tmp_path):
    path = tmp_path / "c.sqlite"
    storm = ScriptedModel.http_error(500, retry_after=0.05, message="down")
    sm = ScriptedModel(
        policy=lambda req: storm if "3M" in req.last_user else ScriptedModel.reply("other", delay_s=0.05)
    )
    client = make_client("scripted/m", scripted=sm, cache=LLMCache(path), max_retries=1)
    other = [Message(role="user", content="another question")]

    async def main(c):
        calls = [c.chat(Q), c.chat(Q), c.chat(other), c.chat(Q)]
        return await asyncio.gather(*calls, return_exceptions=True)

    recorded = run(main(client))
    assert len(sm.requests) == 3  # 2 attempts of the shared call + the other one
    assert [type(r).__name__ for r in recorded] == [
        "HTTPStatusError",
        "HTTPStatusError",
        "ChatResponse",
        "HTTPStatusError",
    ]
    assert {getattr(r, "kind", None) for r in recorded} == {"http_500", None}
    assert [getattr(r, "cached", None) for r in recorded if isinstance(r, LLMCallError)] == [
        False,
        True,
        True,
    ]
    replayed = run(main(make_client("scripted/m", scripted=sm, cache=LLMCache(path, "replay"))))
    assert [type(r).__name__ for r in replayed] == [type(r).__name__ for r in recorded]
    assert [str(r) for r in replayed if isinstance(r, LLMCallError)] == [str(recorded[0])] * 3
    assert replayed[2].content == "other" and len(sm.requests) == 3


def test_a_cancelled_first_caller_hands_the_call_to_a_waiting_one(tmp_path):
    sm = ScriptedModel(replies=[ScriptedModel.reply("first", delay_s=0.5), "second"])
    client = make_client("scripted", scripted=sm, cache=LLMCache(tmp_path / "c.sqlite"))

    async def main():
        leader = asyncio.ensure_future(client.chat(Q))
        await asyncio.sleep(0.05)
        follower = asyncio.ensure_future(client.chat(Q))
        await asyncio.sleep(0.05)
        leader.cancel()
        reply = await follower
        with pytest.raises(asyncio.CancelledError):
            await leader
        return reply

    reply = run(main())
    assert reply.content == "second" and not reply.usage.cached and len(sm.requests) == 2


def test_no_coalescing_without_a_writable_cache():
    sm = ScriptedModel(policy=lambda request: ScriptedModel.reply("x", delay_s=0.05))
    client = make_client("scripted", scripted=sm)

    async def main():
        return await asyncio.gather(*(client.chat(Q) for _ in range(3)))

    assert [r.usage.cached for r in run(main())] == [False] * 3 and len(sm.requests) == 3
