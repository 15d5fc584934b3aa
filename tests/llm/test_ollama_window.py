"""Ollama's context window and prompts a server cuts without an error.

Ollama's OpenAI-compatible endpoint runs a model with a context far smaller than the one it was
trained with (a default that follows the GPU's memory, ``OLLAMA_CONTEXT_LENGTH``, or a Modelfile's
``num_ctx``) and cuts a longer prompt without an error. A loopback imitation of Ollama's documented
API (``/api/version``, ``/api/generate`` loading a model, ``/api/ps`` with ``context_length``,
``/api/show``) stands in for it: no real Ollama runs on this machine.
"""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest
from aiohttp import web
from pydantic import BaseModel

from pageindex.llm import make_client, wire
from pageindex.llm.cache import LLMCache
from pageindex.llm.fakeserver import LoopbackServer, openai_app
from pageindex.llm.tokens import OLLAMA_FALLBACK_WINDOW, prompt_cut
from pageindex.llm.types import ContextLengthError, Message

TRAINED = 131072  # what /api/show's model_info says: llama3.1 was trained with 128k


class FakeOllama(LoopbackServer):
    """Ollama as its API documents it: a model is listed by ``/api/ps`` once loaded, with the context
    it runs at (``num_ctx``; ``lists_context=False`` for a server too old to list it); a prompt longer
    than that is cut to it, and the reply reports the tokens read."""

    shutdown_timeout = 0.1

    def __init__(
        self, *, num_ctx: int = 4096, lists_context: bool = True, parameters: str = "", native: bool = True
    ) -> None:
        super().__init__()
        self.num_ctx, self.lists_context, self.parameters = num_ctx, lists_context, parameters
        self.native = native  # False: a server that cuts prompts but has none of Ollama's own API
        self.loaded = False
        self.paths: list[str] = []

    def build_app(self) -> web.Application:
        listed = [wire.model_entry("llama3.1:latest", owned_by="library")]
        app = openai_app(chat=self._chat, models=lambda: listed)
        if not self.native:
            return app
        app.router.add_get("/api/version", self._version)
        app.router.add_post("/api/generate", self._generate)
        app.router.add_get("/api/ps", self._ps)
        app.router.add_post("/api/show", self._show)
        return app

    async def _version(self, request: web.Request) -> web.Response:
        self.paths.append(request.path)
        return web.json_response({"version": "0.12.3"})

    async def _generate(self, request: web.Request) -> web.Response:
        self.paths.append(request.path)
        body = await request.json()
        assert "prompt" not in body  # loading only
        self.loaded = True
        return web.json_response({"model": body["model"], "response": "", "done": True})

    async def _ps(self, request: web.Request) -> web.Response:
        self.paths.append(request.path)
        entry: dict[str, Any] = {"name": "llama3.1:latest", "model": "llama3.1:latest", "size_vram": 0}
        if self.lists_context:
            entry["context_length"] = self.num_ctx
        return web.json_response({"models": [entry] if self.loaded else []})

    async def _show(self, request: web.Request) -> web.Response:
        self.paths.append(request.path)
        return web.json_response(
            {"parameters": self.parameters, "model_info": {"llama.context_length": TRAINED}}
        )

    async def _chat(self, request: web.Request) -> web.Response:
        self.paths.append(request.path)
        body = await request.json()
        self.loaded = True
        chars = sum(len(m.get("content") or "") for m in body["messages"])
        read = min(math.ceil(chars / 4), self.num_ctx)  # the rest is cut, and nothing says so
        reply = '{"answer": "ok"}'
        return web.json_response(
            wire.completion_body(model=body["model"], content=reply, prompt_tokens=read, completion_tokens=5)
        )


@pytest.fixture
def ollama():
    with FakeOllama() as server:
        yield server


def _window(client: Any) -> tuple[int | None, str | None]:
    return asyncio.run(client.ensure_limits()), client.context_window_source


@pytest.mark.parametrize("spec", ["ollama/llama3.1", "openai/llama3.1"])
def test_the_window_is_the_one_ollama_runs_the_model_with_not_the_trained_one(ollama, spec):
    client = make_client(spec, base_url=ollama.base_url)
    assert _window(client) == (4096, "Ollama's loaded model (/api/ps)")
    # the model was loaded (as a chat request loads it) before /api/ps was read
    assert ollama.paths.index("/api/generate") < ollama.paths.index("/api/ps")
    assert client.prompt_budget(512) == 4096 - 512


def test_an_ollama_too_old_to_list_its_window_gives_the_modelfiles_num_ctx_else_the_smallest_default():
    parameters = 'stop "<|eot_id|>"\nnum_ctx 8192\ntemperature 0.2'
    with FakeOllama(lists_context=False, parameters=parameters) as old:
        assert _window(make_client("ollama/llama3.1", base_url=old.base_url)) == (
            8192, "the model's num_ctx (Ollama /api/show)"
        )  # fmt: skip
    with FakeOllama(lists_context=False) as old:
        window, source = _window(make_client("ollama/llama3.1", base_url=old.base_url))
    assert window == OLLAMA_FALLBACK_WINDOW == 2048 and "does not list its window" in str(source)


def test_a_server_that_is_not_ollama_is_asked_nothing_of_ollamas(tmp_path):
    """llama-cpp-python lists no window and has no /api/version: the known table, as before, and no
    model-loading request is sent to it."""

    class Plain(LoopbackServer):
        paths: list[str] = []

        def build_app(self) -> web.Application:
            async def chat(request: web.Request) -> web.Response:
                raise AssertionError("no chat expected")

            @web.middleware
            async def seen(request: web.Request, handler: Any) -> web.StreamResponse:
                self.paths.append(request.path)
                return await handler(request)

            return openai_app(chat=chat, models=lambda: [wire.model_entry("llama3.1")], middlewares=[seen])

    with Plain() as plain:
        client = make_client("openai/llama3.1", base_url=plain.base_url)
        assert _window(client) == (TRAINED, "known model table")
    assert "/api/generate" not in plain.paths and "/api/version" in plain.paths


def test_a_replay_reads_the_recorded_window_and_where_it_came_from(ollama, tmp_path):
    cache = LLMCache(tmp_path / "cache.sqlite", mode="rw")
    assert _window(make_client("ollama/llama3.1", base_url=ollama.base_url, cache=cache))[0] == 4096
    replay = make_client("replay/llama3.1", cache=LLMCache(tmp_path / "cache.sqlite", mode="replay"))
    assert _window(replay) == (4096, "Ollama's loaded model (/api/ps) (recorded)")


class Answer(BaseModel):
    answer: str


def test_a_reply_to_a_prompt_the_server_cut_is_a_context_length_error_naming_the_window(ollama):
    """Sized for a window the server does not run (given as 131072), a 40,000-character prompt is cut
    to 4,096 tokens: the reply answered another prompt, so it is a context_length error that says
    the window to give, its tokens in the ledger, and the estimate does not learn from it."""
    client = make_client("ollama/llama3.1", base_url=ollama.base_url, context_window=TRAINED, json_mode=True)
    long = [Message(role="user", content="Revenue was 1,577 in 2022. " * 1500)]
    with pytest.raises(ContextLengthError) as caught:
        asyncio.run(client.chat(long))
    message = str(caught.value)
    assert "the server read only 4,096 tokens of a 40,500-character prompt" in message
    assert "not 131072 as assumed (--context-window); give --context-window 4096" in message
    assert "\n" not in message and caught.value.kind == "context_length"
    assert caught.value.usage is not None and caught.value.usage.prompt_tokens == 4096
    assert client.ledger.records()[-1].error == "context_length"
    assert not client.tokens.calibrated
    with pytest.raises(ContextLengthError, match="read only 4,096 tokens"):
        asyncio.run(client.structured(long, Answer))
    # in tools mode the reply to the cut prompt does not validate either: still the cut, not the model
    tools = make_client("ollama/llama3.1", base_url=ollama.base_url, context_window=TRAINED)
    with pytest.raises(ContextLengthError, match="read only 4,096 tokens"):
        asyncio.run(tools.structured(long, Answer, max_retries=0))
    # a prompt that fits is answered, and teaches the estimate
    short = [Message(role="user", content="Revenue was 1,577 in 2022. " * 400)]
    assert asyncio.run(client.chat(short)).content == '{"answer": "ok"}'
    assert asyncio.run(client.structured(short, Answer)).value.answer == "ok"
    assert client.tokens.calibrated


def test_prompt_cut_holds_only_for_a_long_prompt_read_as_far_too_few_tokens():
    assert prompt_cut(40_000, 4096) == 4096  # ~10 characters a token: cut
    assert prompt_cut(40_000, 5001) is None  # 8 characters a token: a tokenizer could (figures, spaces)
    assert prompt_cut(7_999, 10) is None  # short prompts are never judged
    assert prompt_cut(40_000, 0) is None  # a server that reports no usage says nothing


def test_the_doctor_reports_the_window_runs_will_use_and_finds_a_server_that_cuts_prompts():
    """With Ollama's API the doctor says the window as a run reads it; without it, the context probe
    sees a prompt twice as long read as no more tokens: cut without an error, the window about that."""
    from pageindex.llm.doctor import diagnose
    from pageindex.llm.spec import parse_spec

    with FakeOllama() as server:
        spec = parse_spec("ollama/llama3.1", base_url=server.base_url, env={})
        report = asyncio.run(diagnose(spec, timeout=10, probe_context=True))
    row = report.check("context_window")
    assert report.findings.context_window == 4096 and report.findings.context_source == "server"
    assert row is not None and "4,096 tokens (Ollama's loaded model (/api/ps))" in row.detail
    probe = report.check("context_probe")
    assert probe is not None and "about 4,096 tokens: the server cut a longer prompt" in probe.detail
    with FakeOllama(native=False) as server:
        spec = parse_spec("openai/llama3.1", base_url=server.base_url, env={})
        report = asyncio.run(diagnose(spec, timeout=10, probe_context=True))
    assert (report.findings.context_window, report.findings.context_source) == (4096, "probe")
    assert not report.findings.context_lower_bound
    row = report.check("context_window")
    assert row is not None and "give --context-window 4096" in row.detail, row.detail
