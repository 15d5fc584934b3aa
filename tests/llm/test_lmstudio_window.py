"""LM Studio's context window: the one it loaded the model with, read from its own API.

LM Studio's OpenAI-compatible ``/v1/models`` lists no window, and the known table gives the window a
model was trained with (131,072 for Llama 3.1), where LM Studio loads a model with the app's default (a
few thousand tokens) and refuses a longer prompt (HTTP 400, "The number of tokens to keep from the initial
prompt is greater than the context length (n_keep: 10247 >= n_ctx: 4096)"). A loopback imitation of LM
Studio's documented REST API (``/api/v1/models`` with ``loaded_instances[].config.context_length`` in 0.4+,
``/api/v0/models/{model}`` with ``state`` in 0.3.6+, just-in-time loading by the first chat request)
stands in for it: no LM Studio runs on this machine.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from aiohttp import web

from pageindex.llm import make_client, wire
from pageindex.llm.fakeserver import LoopbackServer, openai_app
from pageindex.llm.types import ContextLengthError, Message

MODEL = "meta-llama-3.1-8b-instruct"  # trained with 131,072 tokens: the known table's figure


class FakeLMStudio(LoopbackServer):
    """LM Studio as its docs describe it: ``api`` is ``"v1"`` (0.4+, which also has v0) or ``"v0"``
    (0.3.6+); ``loaded`` False: the model loads at the first chat request, at ``n_ctx``; a prompt past
    the window is refused with LM Studio's wording."""

    shutdown_timeout = 0.1

    def __init__(self, *, n_ctx: int = 4096, api: str = "v1", loaded: bool = True) -> None:
        super().__init__()
        self.n_ctx, self.api, self.loaded = n_ctx, api, loaded
        self.paths: list[str] = []

    def build_app(self) -> web.Application:
        listed = [wire.model_entry(MODEL, owned_by="organization_owner")]
        app = openai_app(chat=self._chat, models=lambda: listed)
        app.router.add_get("/api/version", self._unexpected)
        app.router.add_get("/api/v0/models/{model}", self._v0)
        if self.api == "v1":
            app.router.add_get("/api/v1/models", self._v1)
        return app

    async def _unexpected(self, request: web.Request) -> web.Response:
        # LM Studio answers an endpoint it lacks 200 with an error body: no Ollama's /api/version
        return web.json_response({"error": "Unexpected endpoint or method."})

    async def _v1(self, request: web.Request) -> web.Response:
        self.paths.append(request.path)
        instances = [{"id": MODEL, "config": {"context_length": self.n_ctx}}] if self.loaded else []
        other = {"type": "llm", "key": "qwen2.5-7b-instruct", "loaded_instances": [],
                 "max_context_length": 32768}  # fmt: skip
        entry = {**other, "key": MODEL, "loaded_instances": instances, "max_context_length": 131072}
        return web.json_response({"models": [other, entry]})

    async def _v0(self, request: web.Request) -> web.Response:
        self.paths.append(request.path)
        if request.match_info["model"] != MODEL:
            return web.json_response({"error": "Model not found"}, status=404)
        entry: dict[str, Any] = {"id": MODEL, "object": "model", "type": "llm", "max_context_length": 131072,
                                 "state": "loaded" if self.loaded else "not-loaded"}  # fmt: skip
        if self.loaded:
            entry["loaded_context_length"] = self.n_ctx
        return web.json_response(entry)

    async def _chat(self, request: web.Request) -> web.Response:
        self.paths.append(request.path)
        body = await request.json()
        self.loaded = True  # just-in-time loading
        tokens = sum(len(m.get("content") or "") for m in body["messages"]) // 4
        if tokens >= self.n_ctx:
            said = ("The number of tokens to keep from the initial prompt is greater than the context "
                    f"length (n_keep: {tokens} >= n_ctx: {self.n_ctx}). Try to load the model with a larger "
                    "context length, or provide a shorter prompt.")  # fmt: skip
            return web.json_response({"error": said}, status=400)
        return web.json_response(wire.completion_body(model=MODEL, content="ok", prompt_tokens=tokens,
                                                      completion_tokens=1))  # fmt: skip


def _window(client: Any) -> tuple[int | None, str | None]:
    return asyncio.run(client.ensure_limits()), client.context_window_source


@pytest.mark.parametrize("api", ["v1", "v0"])
def test_the_window_is_the_one_lm_studio_loaded_the_model_with_not_the_trained_one(api):
    with FakeLMStudio(api=api) as server:
        client = make_client(f"openai/{MODEL}", base_url=server.base_url)
        assert _window(client) == (4096, f"LM Studio's loaded model (/api/{api}/models)")
        assert client.prompt_budget(512) == 4096 - 512
        assert "/v1/chat/completions" not in server.paths  # loaded already: nothing sent to the model


@pytest.mark.parametrize("api", ["v1", "v0"])
def test_a_model_not_loaded_yet_is_loaded_as_a_run_would_load_it_then_read(api):
    with FakeLMStudio(api=api, loaded=False, n_ctx=8192) as server:
        assert _window(make_client(f"openai/{MODEL}", base_url=server.base_url))[0] == 8192
        chats = [i for i, p in enumerate(server.paths) if p == "/v1/chat/completions"]
        assert len(chats) == 1 and server.paths[-1].startswith("/api/")  # one load, then read again


def test_a_model_lm_studio_does_not_know_keeps_the_known_table_and_nothing_is_loaded():
    with FakeLMStudio(api="v0") as server:
        client = make_client("openai/llama-3.1-other", base_url=server.base_url)
        assert _window(client) == (131072, "known model table")
        assert "/v1/chat/completions" not in server.paths


def test_a_refusal_in_lm_studios_words_is_a_context_length_error_naming_its_window():
    """Sized for the trained window (given as 131,072), a long prompt is refused: a context_length error
    that reads the window from LM Studio's message and says the flag to give (it was a plain http_400)."""
    with FakeLMStudio() as server:
        client = make_client(f"openai/{MODEL}", base_url=server.base_url, context_window=131072)
        long = [Message(role="user", content="Revenue was 1,577 in 2022. " * 1500)]
        with pytest.raises(ContextLengthError) as caught:
            asyncio.run(client.chat(long))
    message = str(caught.value)
    assert "the server's window is 4096 tokens, not 131072 as assumed" in message, message
    assert "give --context-window 4096" in message and caught.value.kind == "context_length"
