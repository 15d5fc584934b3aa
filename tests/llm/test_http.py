"""The client against a real OpenAI-compatible HTTP server on 127.0.0.1 (FakeOpenAIServer)."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time

import pytest
from pydantic import BaseModel, field_validator

from pageindex.llm import (
    Budget,
    BudgetExceeded,
    LLMCache,
    LLMCallError,
    LLMConfigError,
    LLMTimeout,
    Message,
    ReplayMiss,
    ScriptedModel,
    StructuredOutputError,
    check_reachable,
    make_client,
    parse_spec,
)
from pageindex.llm.testing import FakeOpenAIServer

KEY = "sk-test-SECRET-abcdef0123456789"


class Revenue(BaseModel):
    amount_musd: float
    fiscal_year: int

    @field_validator("fiscal_year")
    @classmethod
    def plausible(cls, year: int) -> int:
        if not 1990 <= year <= 2030:
            raise ValueError(f"fiscal_year {year} is not plausible")
        return year


def ask(text: str = "What was 3M revenue in FY2018?") -> list[Message]:
    return [Message(role="user", content=text)]


def client_for(server: FakeOpenAIServer, **kwargs):
    kwargs.setdefault("api_key", KEY)
    return make_client("openai/test-model", base_url=server.base_url, **kwargs)


def test_chat_over_http_sends_key_and_parses_usage(serve):
    server = serve(
        ScriptedModel.reply("$32.8 billion", prompt_tokens=120, completion_tokens=7, cached_tokens=100)
    )
    reply = asyncio.run(client_for(server).chat(ask(), max_tokens=50))
    assert reply.content == "$32.8 billion"
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens, reply.usage.cached_tokens) == (
        120,
        7,
        100,
    )
    assert reply.usage.latency_s > 0 and reply.usage.model == "openai/test-model"
    [exchange] = server.chat_requests
    assert exchange["headers"]["Authorization"] == f"Bearer {KEY}"
    assert exchange["body"]["model"] == "test-model" and exchange["body"]["max_tokens"] == 50


def test_structured_output_and_validation_retry(serve):
    server = serve({"amount_musd": 32765, "fiscal_year": 18}, {"amount_musd": 32765, "fiscal_year": 2018})
    out = asyncio.run(client_for(server).structured(ask(), Revenue))
    assert out.value == Revenue(amount_musd=32765, fiscal_year=2018)
    assert out.attempts == 2 and out.usage.calls == 2
    first, second = server.scripted.requests
    assert out.usage.prompt_tokens == first.prompt_tokens + second.prompt_tokens
    assert out.usage.completion_tokens == first.completion_tokens + second.completion_tokens
    # The validation error went back to the model.
    assert "fiscal_year 18 is not plausible" in second.messages[-1].content
    assert second.response_model == "Revenue"


def test_structured_json_mode_over_http(serve):
    server = serve('{"amount_musd": 1.5, "fiscal_year": 1800}', '{"amount_musd": 1.5, "fiscal_year": 2019}')
    client = client_for(server, json_mode=True)

    async def run():
        try:
            return await client.structured(ask(), Revenue)
        finally:
            await client.aclose()

    out = asyncio.run(run())
    assert out.value.fiscal_year == 2019 and out.attempts == 2
    first = server.chat_requests[0]["body"]
    assert "tools" not in first and first["response_format"]["type"] == "json_object"
    # a loopback server also gets the schema (the llama.cpp servers build a grammar from it)
    assert first["response_format"]["schema"] == Revenue.model_json_schema()
    assert "fiscal_year 1800 is not plausible" in str(server.chat_requests[1]["body"]["messages"])


def test_structured_gives_up_with_typed_error_and_raw_reply(serve):
    server = serve('{"amount_musd": "lots"', '{"amount_musd": 1, "fiscal_year": 1066}')
    client = client_for(server)
    with pytest.raises(StructuredOutputError) as info:
        asyncio.run(client.structured(ask(), Revenue, max_retries=1))
    error = info.value
    assert "Revenue after 2 attempt(s)" in str(error) and "openai/test-model" in str(error)
    assert error.raw == '{"amount_musd": 1, "fiscal_year": 1066}'
    assert error.usage.calls == 2 and error.usage.prompt_tokens == sum(
        r.prompt_tokens for r in server.scripted.requests
    )
    [record] = client.ledger.records()
    assert record.error == "invalid_reply" and record.completion_tokens > 0
    assert len(server.chat_requests) == 2


def test_429_with_retry_after_then_success(serve):
    server = serve(ScriptedModel.http_error(429, retry_after=2, message="slow down"), "ok now")
    started = time.perf_counter()
    reply = asyncio.run(client_for(server, max_retries=3).chat(ask()))
    elapsed = time.perf_counter() - started
    assert reply.content == "ok now"
    assert [e["status"] for e in server.chat_requests] == [429, 200]
    # waited as long as Retry-After said: the SDK's own first backoff is at most 0.5 s, so a wait of
    # 2 s or more can only come from the header (no upper bound: the machine may be busy)
    assert elapsed >= 2


def test_500_storm_exhausts_retries(serve):
    server = serve(*[ScriptedModel.http_error(500, retry_after=0.01, message="boom")] * 10)
    client = client_for(server, max_retries=3)
    with pytest.raises(LLMCallError) as info:
        asyncio.run(client.chat(ask()))
    assert len(server.chat_requests) == 1 + 3
    message = str(info.value)
    assert (
        "HTTP 500 after 4 attempt(s)" in message
        and server.base_url in message
        and "openai/test-model" in message
    )
    assert not isinstance(info.value, LLMTimeout) and info.value.kind == "http_500"
    assert message.endswith(": boom")  # the server's own message, whole
    # each of the 4 HTTP attempts is counted in the one ledger record of the failed call
    (record,) = client.ledger.records()
    assert (record.calls, record.error) == (4, "http_500")
    assert [a["status"] for a in info.value.attempts] == [500] * 4


def test_timeout(serve):
    server = serve(ScriptedModel.timeout(), ScriptedModel.timeout())
    client = client_for(server, timeout=0.2, max_retries=1)
    started = time.perf_counter()
    with pytest.raises(LLMTimeout) as info:
        asyncio.run(client.chat(ask()))
    assert time.perf_counter() - started < 5
    assert len(server.chat_requests) == 2
    assert "no reply within 0.2s after 2 attempt(s)" in str(info.value) and server.base_url in str(info.value)


def test_a_timeout_not_retried_is_logged_as_the_clients_not_as_a_server_504(serve, caplog):
    """With retry_timeouts=False (a local server) the client answers a timed-out attempt itself with
    a 504 the SDK does not retry; the log line must not say a gateway sent it."""
    server = serve(ScriptedModel.timeout())
    client = client_for(server, timeout=0.2, max_retries=2, retry_timeouts=False)
    with caplog.at_level(logging.INFO), pytest.raises(LLMTimeout):
        asyncio.run(client.chat(ask()))
    # on a loaded machine the client may give up before the server has recorded the request: wait
    # for it (bounded), then check there was no second one
    deadline = time.monotonic() + 5
    while not server.chat_requests and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)
    assert len(server.chat_requests) == 1  # not retried
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert "Client Timeout (pageindex gave up waiting; no server reply)" in logged, logged
    assert "Gateway Timeout" not in logged


def test_budget_exhaustion_stops_new_calls(serve):
    server = serve(*[ScriptedModel.reply("x", prompt_tokens=60, completion_tokens=10)] * 5)
    budget = Budget(max_tokens=150)
    client = client_for(server, budget=budget)
    judge = make_client(
        "openai/test-model",
        role="judge",
        base_url=server.base_url,
        api_key=KEY,
        budget=budget,
        ledger=client.ledger,
    )

    async def run():
        await client.chat(ask())
        await judge.chat(ask())  # shared budget: 140 spent
        await client.chat(ask())  # allowed (under 150 when it started), now 210
        await judge.chat(ask())

    with pytest.raises(BudgetExceeded, match="210 of 150 tokens"):
        asyncio.run(run())
    assert len(server.chat_requests) == 3
    assert client.ledger.total().total_tokens == 210 == budget.spent_tokens
    assert client.ledger.by("role")["judge"].calls == 1


def test_dollar_budget(serve):
    server = serve(*[ScriptedModel.reply("x", prompt_tokens=1_000_000, completion_tokens=0)] * 3)
    budget = Budget(max_usd=0.20)
    client = make_client("openai/gpt-4o-mini", base_url=server.base_url, api_key=KEY, budget=budget)
    asyncio.run(client.chat(ask()))
    asyncio.run(client.chat(ask()))  # 0.15 spent when it started
    with pytest.raises(BudgetExceeded, match=r"\$0.3000 of \$0.2000"):
        asyncio.run(client.chat(ask()))
    with pytest.raises(LLMConfigError, match="price is unknown"):
        client_for(server, budget=Budget(max_usd=1.0))


def test_cache_write_then_replay_with_server_gone(serve, tmp_path):
    server = serve("Revenue was $32.8 billion.", {"amount_musd": 32765, "fiscal_year": 2018})
    cache = LLMCache(tmp_path / "llm.sqlite", mode="rw")
    recorder = client_for(server, cache=cache)
    live = asyncio.run(recorder.chat(ask(), temperature=0.0))
    live_structured = asyncio.run(recorder.structured(ask("as JSON"), Revenue))
    server.stop()

    with pytest.raises(LLMCallError, match="cannot connect"):
        asyncio.run(client_for(server, max_retries=0).chat(ask()))  # the network really is gone

    replay_cache = LLMCache(tmp_path / "llm.sqlite", mode="replay")
    replayer = make_client("replay/test-model", cache=replay_cache)
    again = asyncio.run(replayer.chat(ask(), temperature=0.0))
    again_structured = asyncio.run(replayer.structured(ask("as JSON"), Revenue))
    assert again.content == live.content
    assert (again.usage.prompt_tokens, again.usage.completion_tokens) == (
        live.usage.prompt_tokens,
        live.usage.completion_tokens,
    )
    assert again.usage.cached and not live.usage.cached
    assert again_structured.value == live_structured.value and again_structured.usage.cached
    assert again_structured.usage.prompt_tokens == live_structured.usage.prompt_tokens
    assert replayer.ledger.total(cached=True).calls == 2

    # An rw client also answers from the cache (no server needed) and marks the reply cached.
    rw_again = asyncio.run(client_for(server, cache=cache, max_retries=0).chat(ask(), temperature=0.0))
    assert rw_again.usage.cached and rw_again.content == live.content

    with sqlite3.connect(tmp_path / "llm.sqlite") as conn:
        rows = conn.execute("SELECT * FROM replies").fetchall()
    assert len(rows) == 2 and all(KEY not in str(row) and server.base_url not in str(row) for row in rows)


def test_replay_miss_names_key_and_model(tmp_path):
    cache = LLMCache(tmp_path / "llm.sqlite", mode="replay")
    client = make_client("replay/gpt-4o-mini", cache=cache)
    with pytest.raises(ReplayMiss) as info:
        asyncio.run(client.chat(ask("never recorded")))
    message = str(info.value)
    assert "gpt-4o-mini" in message
    key = message.split("request key ")[1].split()[0]
    assert len(key) == 64 and int(key, 16) >= 0
    with pytest.raises(LLMConfigError, match="does not exist"):
        asyncio.run(client.check())


def test_missing_key_and_rejected_key_never_leak(serve, caplog, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(LLMConfigError) as info:
        make_client("openai/gpt-4o-mini")
    assert "openai/gpt-4o-mini" in str(info.value) and "https://api.openai.com/v1" in str(info.value)
    assert "OPENAI_API_KEY" in str(info.value)

    caplog.set_level(logging.DEBUG)
    server = serve("never", require_key="the-right-key")
    client = client_for(server, max_retries=0)
    errors = []
    for call in (client.check(), client.chat(ask()), client.structured(ask(), Revenue)):
        with pytest.raises(LLMConfigError) as info:
            asyncio.run(call)
        errors.append(info.value)
    with pytest.raises(LLMConfigError) as info:
        check_reachable(parse_spec("openai/test-model", base_url=server.base_url, api_key=KEY))
    errors.append(info.value)
    for error in errors:
        text = f"{error} {error.raw} {error!r}"
        assert "rejected the API key" in text and server.base_url in text
        assert KEY not in text and "SECRET" not in text
    assert [e["status"] for e in server.exchanges] == [401] * 4
    assert KEY in server.exchanges[0]["headers"]["Authorization"]  # the server did get it ...
    assert f"Incorrect API key provided: {KEY}" in server.exchanges[0]["reply"]  # ... and echoed it back
    assert KEY not in caplog.text  # ... but nothing we logged repeats it


def test_refused_user_info_of_a_base_url_is_said_as_such_not_as_the_api_key(serve, monkeypatch):
    """A base URL's user-info is sent in place of the key (HTTP Basic); a server refusing it was said
    to have `rejected the API key ...; check OPENAI_API_KEY`, a variable that may not even be set.
    The preflight and a call say which credentials were refused; a URL without user-info keeps the
    key's line."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server = serve("never", require_key="the-right-key")
    url = server.base_url.replace("://", "://bob:pw-SECRET-4711@")
    expected = (
        f"{server.base_url.replace('://', '://***@')} rejected the user-info of its URL for "
        "openai/test-model (HTTP 401); check the user name and password in the base URL (sent as HTTP "
        "Basic auth in place of OPENAI_API_KEY)"
    )
    with pytest.raises(LLMConfigError) as preflight:
        check_reachable(parse_spec("openai/test-model", base_url=url))
    assert str(preflight.value) == expected
    with pytest.raises(LLMConfigError) as call:
        asyncio.run(make_client("openai/test-model", base_url=url, max_retries=0).chat(ask()))
    assert str(call.value) == expected
    with pytest.raises(LLMConfigError) as keyed:
        check_reachable(parse_spec("openai/test-model", base_url=server.base_url, api_key=KEY))
    assert str(keyed.value) == (
        f"{server.base_url} rejected the API key for openai/test-model (HTTP 401); check OPENAI_API_KEY"
    )


def test_a_server_that_needs_a_key_when_none_was_given_says_so(serve, monkeypatch):
    """With OPENAI_API_KEY unset, a local server started with --api-key (llama-server) refused the
    placeholder key, and the line said it `rejected the API key ...; check OPENAI_API_KEY`, of a key the
    user never gave. The preflight and a call now say that the server needs one and none was given."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    server = serve("never", require_key="the-right-key")
    expected = (
        f"{server.base_url} requires an API key for openai/test-model (HTTP 401) and none was given "
        "(OPENAI_API_KEY is not set); set OPENAI_API_KEY to the server's key"
    )
    with pytest.raises(LLMConfigError) as preflight:
        check_reachable(parse_spec("openai/test-model", base_url=server.base_url))
    assert str(preflight.value) == expected
    with pytest.raises(LLMConfigError) as call:
        asyncio.run(make_client("openai/test-model", base_url=server.base_url, max_retries=0).chat(ask()))
    assert str(call.value) == expected
    assert server.exchanges[0]["headers"]["Authorization"] == "Bearer not-needed"


def test_unreachable_server_fails_preflight(serve):
    server = serve()
    url = server.base_url
    server.stop()
    spec = parse_spec("openai/test-model", base_url=url, api_key=KEY)
    with pytest.raises(LLMConfigError, match=f"cannot reach openai/test-model at {url}"):
        check_reachable(spec, timeout=2)
    client = make_client("openai/test-model", base_url=url, api_key=KEY, max_retries=0)
    with pytest.raises(LLMConfigError, match=f"cannot reach openai/test-model at {url}"):
        asyncio.run(client.check())


def test_concurrency_limit_per_endpoint(serve):
    server = serve(scripted=ScriptedModel(policy=lambda r: ScriptedModel.reply("ok", delay_s=0.1)))
    client = client_for(server, concurrency=4)
    other_role = make_client(
        "openai/test-model", role="judge", base_url=server.base_url, api_key=KEY, concurrency=4
    )

    async def run():
        started = time.perf_counter()
        await asyncio.gather(*(c.chat(ask(str(i))) for i, c in enumerate([client, other_role] * 4)))
        return time.perf_counter() - started

    elapsed = asyncio.run(run())
    assert len(server.chat_requests) == 8
    assert elapsed >= 0.2  # 8 calls, at most 4 at a time on this endpoint, 0.1 s each


class BusyModelsServer(FakeOpenAIServer):
    """A one-request-at-a-time local server still busy with an abandoned request: its ``/models``
    answers only after ``busy_s`` (the sleep blocks its whole event loop, as such a server does)."""

    busy_s = 0.6

    def build_app(self):
        from pageindex.llm import wire
        from pageindex.llm.fakeserver import openai_app

        def models():
            time.sleep(self.busy_s)
            return [wire.model_entry(self.scripted.name)]

        return openai_app(chat=self._chat, models=models, require_key=lambda: self.require_key)


def test_the_preflight_waits_for_a_busy_local_server_but_not_for_a_remote_one(monkeypatch):
    import pageindex.llm.client as client_module

    monkeypatch.setattr(client_module, "PROBE_TIMEOUT_S", 0.2)  # shorter than the server is busy
    server = BusyModelsServer().start()
    try:
        local = make_client("openai/test-model", base_url=server.base_url, api_key=KEY, timeout=5.0)
        asyncio.run(local.check())  # a loopback server gets the call timeout, not the 0.2 s cap
        assert local.preflight_result is not None and local.preflight_result.models == ["scripted"]
        assert local.preflight_result.latency_s >= BusyModelsServer.busy_s
        # busier than the call timeout: the error says what a busy local server is, not "cannot reach"
        impatient = make_client("openai/test-model", base_url=server.base_url, api_key=KEY, timeout=0.2)
        with pytest.raises(LLMConfigError, match="did not answer within 0.2s: a server on this machine"):
            asyncio.run(impatient.check())
    finally:
        server.stop()
    remote = make_client("openai/test-model", base_url="https://api.example.com/v1", api_key=KEY, timeout=600)
    assert remote.probe_timeout() == 0.2
    assert make_client("openai/test-model", base_url="https://api.example.com/v1", api_key=KEY,
                       timeout=0.1).probe_timeout() == 0.1  # fmt: skip
