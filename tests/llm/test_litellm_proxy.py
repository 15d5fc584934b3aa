"""A LiteLLM proxy's answers, replayed by a loopback imitation (not the real proxy).

The status codes and JSON bodies below were captured from a real ``litellm[proxy]`` 1.108.7 in front
of llama.cpp's ``llama-server`` (gemma-3-270m) on 2026-11-28; the real tier does not run LiteLLM.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from aiohttp import web

from pageindex.llm import LLMConfigError, Message, check_reachable, make_client, parse_spec
from pageindex.llm.fakeserver import LoopbackServer, bearer_key, openai_app
from pageindex.llm.preflight import preflight

PROXY_MODEL = "gemma"
# GET /v1/models of a proxy whose model_list names "gemma" (LiteLLM's shape: no context window)
MODELS_ENTRY = {"id": PROXY_MODEL, "object": "model", "created": 1677610602, "owned_by": "openai"}
# POST /v1/chat/completions with "model": "nope": HTTP 400
INVALID_MODEL_MESSAGE = (
    "/chat/completions: Invalid model name passed in model=nope. Call `/v1/models` to view available "
    "models for your key."
)
INVALID_MODEL_BODY = {
    "error": {
        "message": INVALID_MODEL_MESSAGE,
        "type": "invalid_request_error",
        "param": None,
        "code": "400",
        "provider_specific_fields": {"error": INVALID_MODEL_MESSAGE},
    }
}
REPLY = {
    "id": "chatcmpl-uuC71EY3sNGoGas0wgEq5RSfGS2LNdVf",
    "created": 1795826229,
    "model": PROXY_MODEL,
    "object": "chat.completion",
    "system_fingerprint": "b1-0c1e570",
    "choices": [{"finish_reason": "length", "index": 0,
                 "message": {"content": "PONG", "role": "assistant"}, "provider_specific_fields": {}}],
    "usage": {"completion_tokens": 1, "prompt_tokens": 27, "total_tokens": 28,
              "prompt_tokens_details": {"cached_tokens": 0}},
}  # fmt: skip


# any key but the master key, at a proxy with general_settings.master_key and no database: HTTP 400, on
# GET /v1/models and POST /v1/chat/completions alike (the placeholder key sent when none is set too)
NO_DB_BODY = {
    "error": {"message": "No connected db.", "type": "no_db_connection", "param": None, "code": "400"}
}
MASTER_KEY = "sk-rev-litellm-master"


class LiteLLMProxyImitation(LoopbackServer):
    """Answers as the captured proxy did: its one model, and HTTP 400 for any other name; with
    ``master_key``, HTTP 400 ``No connected db.`` for any other key."""

    name = "litellm-proxy-imitation"

    def __init__(self, master_key: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.master_key = master_key
        self.chats: list[dict[str, Any]] = []

    def build_app(self) -> web.Application:
        async def chat(request: web.Request) -> web.Response:
            body = await request.json()
            self.chats.append(body)
            if body.get("model") != PROXY_MODEL:
                return web.json_response(INVALID_MODEL_BODY, status=400)
            return web.json_response(REPLY)

        @web.middleware
        async def master_key(request: web.Request, handler: Any) -> web.StreamResponse:
            if self.master_key is not None and bearer_key(request) != self.master_key:
                return web.json_response(NO_DB_BODY, status=400)
            return await handler(request)

        return openai_app(chat=chat, models=lambda: [MODELS_ENTRY], middlewares=[master_key])


@pytest.fixture
def proxy():
    server = LiteLLMProxyImitation().start()
    yield server
    server.stop()


def test_a_model_the_proxy_does_not_serve_fails_the_preflight(proxy):
    """`bench run -m openai/nope` through a LiteLLM proxy warned that nope is not listed, ran, and every
    sample ended in `http_400: Invalid model name passed in model=nope` (exit 4, a run folder of errors).
    The preflight now asks the server once (one token) and stops with one line naming the listed model."""
    with pytest.raises(LLMConfigError) as refused:
        check_reachable(parse_spec("openai/nope", base_url=proxy.base_url, api_key="k"))
    assert str(refused.value) == (
        f"openai/nope at {proxy.base_url} is not served there: GET /models lists gemma, and a chat request "
        "for nope answered HTTP 400: \"/chat/completions: Invalid model name passed in model=nope. Call "
        "`/v1/models` to view available models for your key.\"; name one of the listed models (openai/gemma)"
    )
    assert [c["max_tokens"] for c in proxy.chats] == [1]
    # the model it serves is checked by its listing alone: no chat request
    check_reachable(parse_spec(f"openai/{PROXY_MODEL}", base_url=proxy.base_url, api_key="k"))
    assert len(proxy.chats) == 1
    client = make_client(f"openai/{PROXY_MODEL}", base_url=proxy.base_url, api_key="k", max_retries=0)
    reply = asyncio.run(client.chat([Message(role="user", content="Say PONG")], max_tokens=8))
    assert (reply.content, reply.usage.prompt_tokens) == ("PONG", 27)


def test_an_unlisted_model_a_server_answers_anyway_keeps_the_warning(serve):
    """llama.cpp answers any name with its one model: the preflight's chat is answered, and the caller's
    warning stays (the run goes on)."""
    server = serve("pong")
    client = make_client("openai/other-name", base_url=server.base_url, api_key="k", max_retries=0)
    asyncio.run(client.check())
    found = client.preflight_result
    assert found is not None and found.model_listed is False
    assert found.unlisted("other-name") == (
        f"other-name is not among the models {server.base_url} lists (scripted): the server answered a "
        "one-token request for it, perhaps with another model"
    )


LLAMA_FILE = "/models/gemma-3-270m-q4_k_m.gguf"


def _llama_server(request: httpx.Request) -> httpx.Response:
    """llama.cpp's llama-server (b1-0c1e570): it lists its model file, answers any name with it, and its
    reply names the file (captured from llama-server 0.3.36 with gemma-3-270m)."""
    if request.url.path.endswith("/models"):
        return httpx.Response(200, json={"object": "list", "data": [{"id": LLAMA_FILE, "object": "model"}]})
    if request.url.path.endswith("/chat/completions"):
        return httpx.Response(200, json={**REPLY, "model": LLAMA_FILE})
    return httpx.Response(503, json={"error": {"message": "Loading model"}})


def test_an_unlisted_model_llama_server_answers_is_said_with_the_model_that_answered():
    """A plain llama-server user's `-m openai/gemma`: the one-token check was answered, and the reply
    names the model file that answered. The warning said the server 'may answer with another model, or
    refuse it', after the check had seen it answer, and with which model; a check that got no reply
    keeps those words."""
    spec = parse_spec("openai/gemma", base_url="http://127.0.0.1:9/v1", api_key="k")
    found = asyncio.run(preflight(spec, transport=httpx.MockTransport(_llama_server)))
    assert (found.model_listed, found.answered_as) == (False, LLAMA_FILE)
    assert found.unlisted("gemma") == (
        f"gemma is not among the models http://127.0.0.1:9/v1 lists ({LLAMA_FILE}): a one-token request "
        "for gemma was answered by that model"
    )
    found.answered_as = None  # the check got no reply (a busy server past the timeout, a 5xx)
    assert found.unlisted("gemma") == (
        f"gemma is not among the models http://127.0.0.1:9/v1 lists ({LLAMA_FILE}): the server may answer "
        "with another model, or refuse it"
    )
    # a router listing several models: the one that answered is named
    found.answered_as, found.models = LLAMA_FILE, ["other.gguf", LLAMA_FILE]
    assert found.unlisted("gemma").endswith(f"a one-token request for gemma was answered by {LLAMA_FILE}")


def test_a_key_a_litellm_proxy_without_a_database_refuses_is_said_as_the_key(monkeypatch):
    """With a master_key and no database, the proxy answers any other key with HTTP 400 "No connected
    db.": `pageindex doctor` and `bench run` said `failed the preflight: GET /models answered HTTP 400: "No
    connected db."`, naming neither the key nor the variable it comes from. Now the key's line, as for a
    401, with the proxy's words; a call made without the preflight says the same."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    proxy = LiteLLMProxyImitation(master_key=MASTER_KEY).start()
    try:
        url = proxy.base_url
        why = (' (the LiteLLM proxy answered "No connected db.": with a master_key and no database it takes '
               "its master key only)")  # fmt: skip
        with pytest.raises(LLMConfigError) as none_given:
            check_reachable(parse_spec("openai/gemma", base_url=url))
        assert str(none_given.value) == (
            f"{url} requires an API key for openai/gemma (HTTP 400) and none was given (OPENAI_API_KEY is "
            "not set); set OPENAI_API_KEY to the server's key" + why
        )
        with pytest.raises(LLMConfigError) as wrong:
            check_reachable(parse_spec("openai/gemma", base_url=url, api_key="sk-wrong-0123456789"))
        assert str(wrong.value) == (
            f"{url} rejected the API key for openai/gemma (HTTP 400); check OPENAI_API_KEY" + why
        )
        client = make_client("openai/gemma", base_url=url, api_key="sk-wrong-0123456789", max_retries=0)
        with pytest.raises(LLMConfigError) as call:
            asyncio.run(client.chat([Message(role="user", content="Say PONG")], max_tokens=8))
        assert str(call.value) == str(wrong.value)
        check_reachable(parse_spec("openai/gemma", base_url=url, api_key=MASTER_KEY))  # the master key passes
    finally:
        proxy.stop()


def test_a_proxy_that_cannot_reach_its_model_server_is_a_connection_failure():
    """LiteLLM's HTTP 500 for a model server that is down was an `http_500` error; it is kind `connection`
    now, said as the proxy's, so that a run asks whether the endpoint is gone."""
    from aiohttp import web

    from pageindex.llm import LLMCallError

    body = {"error": {
        "message": "litellm.InternalServerError: InternalServerError: OpenAIException - Connection error.\n\n"
        "LiteLLM: model group 'gemma' failed with the error above. No fallback was attempted.",
        "type": "internal_server_error", "param": None, "code": "500",
    }}  # fmt: skip

    class Down(LoopbackServer):
        def build_app(self) -> web.Application:
            async def chat(request: web.Request) -> web.Response:
                return web.json_response(body, status=500)

            return openai_app(chat=chat, models=lambda: [MODELS_ENTRY])

    with Down() as proxy:
        client = make_client("openai/gemma", base_url=proxy.base_url, api_key="k", max_retries=1)
        with pytest.raises(LLMCallError) as failed:
            asyncio.run(client.chat([Message(role="user", content="Say PONG")], max_tokens=8))
    assert failed.value.kind == "connection"
    assert str(failed.value) == (
        f"openai/gemma at {proxy.base_url}: the proxy could not reach the model server behind it (HTTP 500 "
        "after 2 attempt(s)): litellm.InternalServerError: InternalServerError: OpenAIException - Connection "
        "error. LiteLLM: model group 'gemma' failed with the error above. No fallback was attempted."
    )


PROXY_TIMEOUT_MESSAGE = (
    "litellm.Timeout: APITimeoutError - Request timed out. Error_str: Request timed out. - timeout "
    "value=3.0, time taken=3.0 seconds\n\nDeployment Info: request_timeout: None\ntimeout: 3.0\n\nLiteLLM: "
    "model group 'gemma' failed with the error above. No fallback was attempted."
)


@pytest.mark.parametrize("retry_timeouts", [False, True])
def test_the_proxys_own_timeout_is_said_as_a_timeout_and_not_retried_on_a_local_server(retry_timeouts):
    """A proxy with a `timeout: 3` for its model server answered HTTP 408 (the body below) while pageindex
    waited up to its --timeout: the SDK retried each 408 as a passing error, every retry queued behind the
    generation the proxy abandoned on a one-at-a-time llama-server, and a call that ran out of retries was
    an `http_408`. It is a timeout now, naming the proxy's timeout against pageindex's, and, as a client
    timeout, not retried where the local-server profile does not retry timeouts."""
    from aiohttp import web

    from pageindex.llm import LLMTimeout

    body = {"error": {"message": PROXY_TIMEOUT_MESSAGE, "type": "invalid_request_error", "param": None,
                      "code": "408"}}  # fmt: skip
    seen: list[int] = []

    class Slow(LoopbackServer):
        def build_app(self) -> web.Application:
            async def chat(request: web.Request) -> web.Response:
                seen.append(1)
                return web.json_response(body, status=408)

            return openai_app(chat=chat, models=lambda: [MODELS_ENTRY])

    with Slow() as proxy:
        client = make_client("openai/gemma", base_url=proxy.base_url, api_key="k", max_retries=2, timeout=100,
                             retry_timeouts=retry_timeouts)  # fmt: skip
        with pytest.raises(LLMTimeout) as failed:
            asyncio.run(client.chat([Message(role="user", content="Write a story")], max_tokens=8))
    attempts = 3 if retry_timeouts else 1
    assert len(seen) == attempts
    not_retried = "" if retry_timeouts else " (timeouts are not retried for this server)"
    assert failed.value.kind == "timeout"
    assert str(failed.value) == (
        f"openai/gemma at {proxy.base_url}: the proxy gave up waiting for the model server behind it (HTTP "
        f"408 after {attempts} attempt(s){not_retried}): its own timeout (3s) is shorter than pageindex's "
        "--timeout 100s; raise the proxy's timeout (LiteLLM: timeout in the model's litellm_params): "
        + " ".join(PROXY_TIMEOUT_MESSAGE.split())
    )


def test_the_unlisted_check_waits_briefly_for_a_server_busy_for_another_client(monkeypatch):
    """llama-server busy generating for another client answers the one-token check only when done:
    `ask -m openai/gemma` sat silent for the rest of that generation (18 s for 800 tokens; up to the local
    --timeout of 600 s), where `-m` with the listed name started at once. The check waits
    UNLISTED_CHECK_S, then leaves it undecided (the warning says what may happen); a refusal is at once."""
    import time

    from pageindex.llm import preflight as module

    monkeypatch.setattr(module, "UNLISTED_CHECK_S", 0.5, raising=False)

    class Busy(LoopbackServer):
        def build_app(self) -> web.Application:
            async def chat(request: web.Request) -> web.Response:
                await asyncio.sleep(4)  # another client's generation first
                return web.json_response({**REPLY, "model": LLAMA_FILE})

            return openai_app(chat=chat, models=lambda: [{"id": LLAMA_FILE, "object": "model"}])

    with Busy() as server:
        spec = parse_spec("openai/gemma", base_url=server.base_url, api_key="k")
        started = time.perf_counter()
        found = asyncio.run(preflight(spec, timeout=30))
        waited = time.perf_counter() - started
    assert waited < 2.5, waited
    assert (found.model_listed, found.answered_as) == (False, None)
    assert found.unlisted("gemma").endswith("the server may answer with another model, or refuse it")


def test_the_doctor_says_a_proxy_whose_model_server_is_down_as_such():
    """A first `pageindex doctor` through a LiteLLM proxy whose llama-server was killed said only `plain
    chat fails: POST /chat/completions: HTTP 500: "litellm.InternalServerError: ..."`, where bench run,
    ask and the doctor's cached path say `the proxy could not reach the model server behind it`."""
    from pageindex.llm.doctor import run_doctor

    message = (
        "litellm.InternalServerError: InternalServerError: OpenAIException - Connection error.\n\nLiteLLM: "
        "model group 'gemma' failed with the error above. No fallback was attempted."
    )

    class Down(LoopbackServer):
        def build_app(self) -> web.Application:
            async def chat(request: web.Request) -> web.Response:
                body = {"error": {"message": message, "type": "internal_server_error", "code": "500"}}
                return web.json_response(body, status=500)

            return openai_app(chat=chat, models=lambda: [MODELS_ENTRY])

    with Down() as proxy:
        spec = parse_spec("openai/gemma", base_url=proxy.base_url, api_key="k")
        report = run_doctor(spec, timeout=10, use_cache=False)
    chat = next(c for c in report.checks if c.key == "chat")
    assert report.verdict == "unusable" and chat.status == "fail"
    assert chat.detail.startswith(
        "POST /chat/completions: the proxy could not reach the model server behind it (HTTP 500: "
        '"litellm.InternalServerError: InternalServerError: OpenAIException - Connection error.'
    ), chat.detail
