"""Models that refuse ``max_tokens`` and temperature (OpenAI's o series and gpt-5).

They answer HTTP 400 to ``max_tokens`` ("Use 'max_completion_tokens' instead") and to any temperature
but their default; every call pageindex makes sends both, so each failed. A loopback imitation of the
documented error bodies stands in for them (no OpenAI access here).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from aiohttp import web
from pydantic import BaseModel

from pageindex.llm import make_client, wire
from pageindex.llm.cache import LLMCache
from pageindex.llm.fakeserver import LoopbackServer, openai_app
from pageindex.llm.http import REASONING_ROOM
from pageindex.llm.types import HTTPStatusError, Message, OutputTruncated

MAX_TOKENS_REFUSED = {
    "message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
    "Use 'max_completion_tokens' instead.",
    "type": "invalid_request_error", "param": "max_tokens", "code": "unsupported_parameter",
}  # fmt: skip
TEMPERATURE_REFUSED = {
    "message": "Unsupported value: 'temperature' does not support 0.0 with this model. "
    "Only the default (1) value is supported.",
    "type": "invalid_request_error", "param": "temperature", "code": "unsupported_value",
}  # fmt: skip


class ReasoningServer(LoopbackServer):
    """Refuses ``max_tokens`` and a temperature other than 1 as OpenAI does; thinks ``reasoning``
    tokens before answering, which ``max_completion_tokens`` must leave room for."""

    shutdown_timeout = 0.1

    def __init__(self, *, reasoning: int = 700, reply: str = '{"answer": "1,577"}') -> None:
        super().__init__()
        self.reasoning, self.reply = reasoning, reply
        self.bodies: list[dict[str, Any]] = []

    def build_app(self) -> web.Application:
        return openai_app(chat=self._chat, models=lambda: [wire.model_entry("gpt-5-mini")])

    async def _chat(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.bodies.append(body)
        if "max_tokens" in body:
            return web.json_response({"error": MAX_TOKENS_REFUSED}, status=400)
        if body.get("temperature", 1) != 1:
            return web.json_response({"error": TEMPERATURE_REFUSED}, status=400)
        cap = body.get("max_completion_tokens") or 10**9
        cut = cap < self.reasoning + 10
        content = "" if cut else self.reply
        data = wire.completion_body(
            model=body["model"], content=content, prompt_tokens=20,
            completion_tokens=min(cap, self.reasoning + 10), finish_reason="length" if cut else "stop",
        )  # fmt: skip
        data["usage"]["completion_tokens_details"] = {"reasoning_tokens": min(cap, self.reasoning)}
        return web.json_response(data)


class Answer(BaseModel):
    answer: str


QUESTION = [Message(role="user", content="What was 3M's FY2018 capital expenditure?")]


@pytest.fixture
def server():
    with ReasoningServer() as srv:
        yield srv


def test_a_model_refusing_max_tokens_and_temperature_is_sent_max_completion_tokens_and_no_temperature(server):
    client = make_client("openai/gpt-5-mini", base_url=server.base_url, api_key="sk-test", json_mode=True)
    first = asyncio.run(client.chat(QUESTION, max_tokens=256))
    assert first.content == '{"answer": "1,577"}'
    # learnt once: refused max_tokens, then the temperature, then answered; the refusals are no attempts
    assert [sorted(b) for b in server.bodies[:3]] == [
        ["max_tokens", "messages", "model", "temperature"],
        ["max_completion_tokens", "messages", "model", "temperature"],
        ["max_completion_tokens", "messages", "model"],
    ]
    assert server.bodies[2]["max_completion_tokens"] == 256 + REASONING_ROOM
    assert len(first.attempts) == 1 and first.attempts[0]["adapted"] == ["max_tokens", "temperature"]
    assert first.usage.calls == 1
    # every later request of this model is sent so from the start, structured ones included
    before = len(server.bodies)
    value = asyncio.run(client.structured(QUESTION, Answer, max_tokens=128)).value
    assert value.answer == "1,577" and len(server.bodies) == before + 1
    assert "temperature" not in server.bodies[-1]
    assert server.bodies[-1]["max_completion_tokens"] == 128 + REASONING_ROOM


def test_the_cache_key_is_what_was_asked_so_a_replay_answers_without_the_server(server, tmp_path):
    path = tmp_path / "cache.sqlite"
    live = make_client("openai/gpt-5-mini", base_url=server.base_url, api_key="sk-test",
                       cache=LLMCache(path, mode="rw"))  # fmt: skip
    assert asyncio.run(live.chat(QUESTION, max_tokens=64)).content == '{"answer": "1,577"}'
    replay = make_client("replay/gpt-5-mini", cache=LLMCache(path, mode="replay"))
    assert asyncio.run(replay.chat(QUESTION, max_tokens=64)).content == '{"answer": "1,577"}'


def test_a_reply_cut_by_its_reasoning_says_the_cap_sent_and_the_reasoning_tokens():
    with ReasoningServer(reasoning=REASONING_ROOM + 1000) as srv:
        client = make_client("openai/gpt-5-mini", base_url=srv.base_url, api_key="sk-test", json_mode=True)
        with pytest.raises(OutputTruncated) as caught:
            asyncio.run(client.structured(QUESTION, Answer, max_tokens=512, max_retries=0))
    message = str(caught.value)
    sent = 512 + REASONING_ROOM
    assert f"cut at max_completion_tokens={sent} (512 + {REASONING_ROOM} for reasoning)" in message
    assert f"{512 + REASONING_ROOM:,} of its tokens were the model's hidden reasoning" in message


def test_other_400s_are_errors_as_before():
    """A 400 naming another parameter, or max_tokens with another code (a value too large), is the
    server's answer to the request: reported, not sent again."""

    class TooLarge(LoopbackServer):
        calls = 0

        def build_app(self) -> web.Application:
            async def chat(request: web.Request) -> web.Response:
                TooLarge.calls += 1
                error = {"message": "max_tokens is too large: 20000. This model supports at most 16384 "
                         "completion tokens", "param": "max_tokens", "code": "invalid_value"}  # fmt: skip
                return web.json_response({"error": error}, status=400)

            return openai_app(chat=chat, models=lambda: [wire.model_entry("gpt-4o")])

    with TooLarge() as srv:
        client = make_client("openai/gpt-4o", base_url=srv.base_url, api_key="sk-test", max_retries=0)
        with pytest.raises(HTTPStatusError, match="max_tokens is too large"):
            asyncio.run(client.chat(QUESTION, max_tokens=20000))
    assert TooLarge.calls == 1


def test_the_doctor_asks_as_runs_do_and_says_what_the_model_refuses(server):
    from pageindex.llm.doctor import diagnose
    from pageindex.llm.spec import parse_spec

    spec = parse_spec("openai/gpt-5-mini", base_url=server.base_url, api_key="sk-test", env={})
    report = asyncio.run(diagnose(spec, timeout=10))
    assert report.check("chat").status == "ok"  # it failed with HTTP 400 on every probe
    row = report.check("parameters")
    assert row is not None and "refuses max_tokens and temperature" in row.detail
    assert f"the cap plus {REASONING_ROOM:,} for its hidden reasoning" in row.detail
    capped = report.check("max_tokens")
    assert capped is not None and capped.status == "ok"
    assert f"for max_completion_tokens={8 + REASONING_ROOM}" in capped.detail
