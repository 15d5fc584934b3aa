"""The fault-injecting OpenAI-compatible server, built on the shared fake-server base.

:mod:`pageindex.llm.fakeserver` provides what every fake server has: the loopback-only socket in
a daemon thread (start/stop/``with``, ``url``, ``base_url``, :class:`NonLoopbackError`), the
``GET /v1/models`` route, the optional bearer-key check (``require_key``: 401 in the shared
shape) and the JSON shapes (:mod:`pageindex.llm.wire`). This module adds the fault layer:
:class:`FaultApp` answers ``POST /v1/chat/completions`` (non-streaming) through a policy, injects
faults, imitates model limits (``limits.py``) and serves ``GET /stats`` (counters as JSON, not
itself counted) and ``POST /stats/reset``; :class:`FaultServer` runs it.

    with FaultServer(policy=SectionSeekingPolicy(), rate=0.3, seed=1) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="test")
        ...
        srv.stats().by_fault
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import logging
import math
import socket
import struct
from collections.abc import Callable
from typing import Any

from aiohttp import web
from pydantic import ValidationError

from bench.faults.faults import (
    STATUS_OF,
    FaultConfig,
    FaultKind,
    choose_fault,
    fault_reply,
    needs_more_reply,
)
from bench.faults.limits import ServerLimits
from bench.faults.policies import Policy, SectionSeekingPolicy, as_reply
from bench.faults.protocol import ChatRequest, Reply, completion_body, count_tokens
from bench.faults.stats import RequestStats, StatsSnapshot
from pageindex.llm.fakeserver import LoopbackServer, NonLoopbackError, bearer_key, ensure_loopback, openai_app
from pageindex.llm.wire import error_body, model_entry
from pageindex.wording import error_text

__all__ = ["FaultApp", "FaultServer", "NonLoopbackError", "ensure_loopback"]

log = logging.getLogger(__name__)
MODEL_ID = "fault-model"


class _Aborted(Exception):
    """The connection was reset on purpose; nothing more to send."""


class FaultApp:
    """The request handling, independent of how the server is run."""

    def __init__(
        self,
        policy: Policy,
        config: FaultConfig,
        limits: ServerLimits | None = None,
        *,
        require_key: str | Callable[[], str | None] | None = None,
    ):
        self.policy = policy
        self.config = config
        self.limits = limits or ServerLimits()
        self.require_key = require_key
        self.stats = RequestStats()
        self.closing = asyncio.Event()
        self._seen_prefixes: set[str] = set()

    def build(self) -> web.Application:
        app = openai_app(
            chat=self.chat, models=self.model_entries, require_key=self.require_key, middlewares=[self._count]
        )
        app.router.add_get("/stats", self.stats_json)
        app.router.add_post("/stats/reset", self.stats_reset)
        return app

    # -- counting ----------------------------------------------------------------
    @web.middleware
    async def _count(self, request: web.Request, handler: Any) -> web.StreamResponse:
        if request.path == "/stats":
            return await handler(request)
        self.stats.begin(request.path)
        try:
            response = await handler(request)
        except _Aborted:
            self.stats.end("reset")
            raise
        except web.HTTPException as exc:
            self.stats.end(exc.status)
            raise
        except BaseException:
            self.stats.end("error")
            raise
        self.stats.end(response.status)
        return response

    # -- endpoints ---------------------------------------------------------------
    def model_entries(self) -> list[dict[str, Any]] | None:
        """What ``GET /v1/models`` lists; None (HTTP 404) for a server without the listing."""
        if self.limits.no_models_list:
            return None
        extra: dict[str, Any] = {}
        if self.limits.context_window is not None and self.limits.advertise_context:
            extra["max_model_len"] = self.limits.context_window
        return [model_entry(MODEL_ID, owned_by="bench", **extra)]

    async def stats_json(self, request: web.Request) -> web.Response:
        return web.json_response(self.stats.snapshot().model_dump(mode="json"))

    async def stats_reset(self, request: web.Request) -> web.Response:
        self.stats.reset()
        return web.json_response({"ok": True})

    async def chat(self, request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json()
            chat = ChatRequest.model_validate(body)
        except (json.JSONDecodeError, ValidationError, UnicodeDecodeError) as exc:
            self.stats.outcome(None, "bad_request", answered=False)
            return web.json_response(
                error_body(f"invalid request body: {str(exc)[:200]}", kind="invalid_request_error"),
                status=400,
            )
        if chat.stream:
            self.stats.outcome(None, "bad_request", answered=False)
            return web.json_response(
                error_body("streaming is not supported by the fault server", kind="invalid_request_error"),
                status=400,
            )
        refusal = self._refusal(chat)
        if refusal is not None:
            self.stats.outcome(None, "bad_request", answered=False)
            body = error_body(refusal[0], kind="invalid_request_error", code=refusal[1])
            return web.json_response(body, status=400)
        key = chat.key()
        attempt = self.stats.chat(key, request.headers.get("x-stainless-retry-count"))
        fault = self._fault_for(chat, key, attempt)
        token = bearer_key(request)
        if fault in STATUS_OF:
            self.stats.outcome(key, fault.value, answered=False)
            return self._http_error(fault, token)
        if fault is FaultKind.RESET:
            self.stats.outcome(key, fault.value, answered=False)
            _reset(request)
            raise _Aborted()
        stalled = fault is FaultKind.STALL
        if stalled:
            self.stats.outcome(key, FaultKind.STALL.value, answered=False)
            try:
                await asyncio.wait_for(self.closing.wait(), timeout=self.config.stall_seconds)
            except TimeoutError:
                pass
            fault = None  # then answer normally, if anyone still listens
        try:
            reply = self._limit_reply(chat, await self._reply(self._view(chat), fault))
        except Exception as exc:  # a broken policy is a 500, counted as such
            log.exception("fault server policy failed")
            if not stalled:
                self.stats.outcome(key, "policy_error", answered=False)
            message = f"policy error: {error_text(exc)}"[:300]
            return web.json_response(error_body(message, kind="server_error"), status=500)
        if not stalled:
            answered = fault not in {FaultKind.TRUNCATED, FaultKind.WRONG_SHAPE}
            self.stats.outcome(key, fault.value if fault else "none", answered=answered)
        payload = self._completion(chat, reply)
        if fault is FaultKind.TRUNCATED:
            text = json.dumps(payload)
            return web.Response(body=text[: len(text) // 2].encode(), content_type="application/json")
        if fault is FaultKind.WRONG_SHAPE:
            return web.json_response(_wrong_shape(payload, attempt))
        return web.json_response(payload)

    # -- decisions -----------------------------------------------------------------
    def _fault_for(self, chat: ChatRequest, key: str, attempt: int) -> FaultKind | None:
        conversation = chat.conversation_key()
        if conversation in self.stats.sticky and FaultKind.NEEDS_MORE in self.config.weights():
            return FaultKind.NEEDS_MORE
        cap = self.config.max_faults_per_key
        if cap is not None and self.stats.key_faults(key) >= cap:
            return None
        fault = choose_fault(self.config, chat, key, attempt)
        if fault is FaultKind.NEEDS_MORE:
            self.stats.sticky.add(conversation)
        return fault

    async def _reply(self, chat: ChatRequest, fault: FaultKind | None) -> Reply:
        if fault is FaultKind.NEEDS_MORE:
            return needs_more_reply(chat)
        out = self.policy(chat)
        if inspect.isawaitable(out):
            out = await out
        base = as_reply(chat, out)
        if fault in {FaultKind.UNKNOWN_TOOL, FaultKind.BAD_ARGS, FaultKind.BAD_SECTION}:
            return fault_reply(fault, chat, base)
        return base

    # -- capability limits (see limits.py) -------------------------------------------------
    def _refusal(self, chat: ChatRequest) -> tuple[str, str] | None:
        """Why a server with these limits rejects the request outright (message, code), or None."""
        limits = self.limits
        if limits.reject_null_content:
            for i, message in enumerate(chat.messages):
                if message.get("role") == "assistant" and message.get("content") is None:
                    message = f"messages[{i}]: assistant message content must be a string, not null"
                    return (message, "invalid_content")
        if limits.context_window is not None:
            tokens = self._prompt_tokens(chat)
            if tokens > limits.context_window:
                return (
                    f"This model's maximum context length is {limits.context_window} tokens. However, your "
                    f"messages resulted in {tokens} tokens. Please reduce the length of the messages.",
                    "context_length_exceeded",
                )
        return None

    def _view(self, chat: ChatRequest) -> ChatRequest:
        """The request as the policy sees it: what this server ignores is removed."""
        limits = self.limits
        drop: dict[str, Any] = {}
        if limits.no_tools:
            drop.update(tools=None, tool_choice=None)
        fmt = (chat.response_format or {}).get("type")
        if limits.no_json_mode or (limits.no_json_schema and fmt == "json_schema"):
            drop["response_format"] = None
        return chat.model_copy(update=drop) if drop else chat

    def _limit_reply(self, chat: ChatRequest, reply: Reply) -> Reply:
        """Apply ``max_tokens`` (unless ignored) and the one-tool-call limit to a policy's reply."""
        parallel = getattr(chat, "parallel_tool_calls", None)
        if len(reply.tool_calls) > 1 and (self.limits.no_parallel_tool_calls or parallel is False):
            reply = reply.model_copy(update={"tool_calls": reply.tool_calls[:1]})
        extra = chat.model_extra or {}
        cap = extra.get("max_completion_tokens") or extra.get("max_tokens")
        ignored = self.limits.ignore_max_tokens or (self.limits.ignore_tool_max_tokens and bool(chat.tools))
        if not isinstance(cap, int) or cap <= 0 or ignored:
            return reply
        if reply.tool_calls:
            # a tool call is generated text too: past the cap its arguments stop mid-JSON, as a real
            # server's do (finish_reason "length"); later calls are never reached
            first = reply.tool_calls[0]
            arguments = first.arguments if isinstance(first.arguments, str) else json.dumps(first.arguments)
            if count_tokens(arguments) > cap:
                cut = first.model_copy(update={"arguments": arguments[: cap * 4]})
                reply = reply.model_copy(update={"tool_calls": [cut], "finish_reason": "length"})
        elif reply.content and count_tokens(reply.content) > cap:
            reply = reply.model_copy(update={"content": reply.content[: cap * 4], "finish_reason": "length"})
        return reply

    def _prompt_tokens(self, chat: ChatRequest) -> int:
        prompt = [json.dumps(m, sort_keys=True, ensure_ascii=False) for m in chat.messages]
        return count_tokens("".join(prompt) + (json.dumps(chat.tools) if chat.tools else ""))

    def _completion(self, chat: ChatRequest, reply: Reply) -> dict[str, Any]:
        prompt = [json.dumps(m, sort_keys=True, ensure_ascii=False) for m in chat.messages]
        tools_text = json.dumps(chat.tools) if chat.tools else ""
        prompt_tokens = self._prompt_tokens(chat)
        cached = 0
        digest = hashlib.sha256(tools_text.encode())
        for i, part in enumerate(prompt):
            digest.update(part.encode())
            prefix = digest.hexdigest()
            if prefix in self._seen_prefixes and i < len(prompt) - 1:
                cached = count_tokens("".join(prompt[: i + 1]) + tools_text)
            self._seen_prefixes.add(prefix)
        body = completion_body(chat, reply, prompt_tokens=prompt_tokens, cached_tokens=cached)
        if self.limits.no_usage:
            body.pop("usage", None)
        return body

    def _http_error(self, fault: FaultKind, token: str | None) -> web.Response:
        status = STATUS_OF[fault]
        who = f" for API key {token}" if self.config.echo_api_key and token else ""
        messages = {
            429: f"Rate limit reached{who}. Please try again later.",
            500: f"The server had an error while processing your request{who}.",
            502: f"Bad gateway{who}.",
            503: f"The engine is currently overloaded{who}, please try again later.",
        }
        kinds = {429: "rate_limit_error", 500: "server_error", 502: "server_error", 503: "server_error"}
        headers: dict[str, str] = {}
        if fault is FaultKind.RATE_LIMIT:
            seconds = self.config.retry_after_seconds
            headers["Retry-After"] = str(max(math.ceil(seconds), 0))
            headers["retry-after-ms"] = str(int(round(seconds * 1000)))
        return web.json_response(
            error_body(messages[status], kind=kinds[status]), status=status, headers=headers
        )


def _reset(request: web.Request) -> None:
    """Close the connection with a TCP RST (SO_LINGER 0) before any response byte."""
    transport = request.transport
    if transport is None:
        return
    sock = transport.get_extra_info("socket")
    if sock is not None:
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
    transport.abort()


def _wrong_shape(payload: dict[str, Any], attempt: int) -> Any:
    """Valid JSON that is not a chat.completion, in one of three shapes."""
    message = payload["choices"][0]["message"]
    variants: list[Any] = [
        {"id": payload["id"], "object": "chat.completion", "result": {"text": message.get("content")}},
        {**payload, "choices": {"message": message.get("content") or "ok"}},
        [{"message": message.get("content") or "ok"}],
    ]
    return variants[attempt % len(variants)]


class FaultServer(LoopbackServer):
    """Runs a :class:`FaultApp` on a loopback port in a background thread (a
    :class:`~pageindex.llm.fakeserver.LoopbackServer`).

    ``port=0`` picks a free ephemeral port. Either pass a ready ``config`` or the individual
    knobs (``rate``, ``faults``, ``seed``, ``stall_seconds``, ...), which build one. With
    ``require_key`` any other API key gets HTTP 401 (``/stats`` stays open).
    """

    name = "fault-server"

    def __init__(
        self,
        policy: Policy | None = None,
        *,
        rate: float = 0.0,
        faults: list[FaultKind] | list[str] | str | None = None,
        seed: int = 0,
        stall_seconds: float = 90.0,
        retry_after_seconds: float = 1.0,
        rates: dict[str, float] | None = None,
        echo_api_key: bool = False,
        max_faults_per_key: int | None = None,
        config: FaultConfig | None = None,
        limits: ServerLimits | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        require_key: str | None = None,
    ):
        super().__init__(host=host, port=port, require_key=require_key)
        self.config = config or FaultConfig(
            rate=rate,
            faults=faults,
            rates=rates or {},
            seed=seed,
            stall_seconds=stall_seconds,
            retry_after_seconds=retry_after_seconds,
            echo_api_key=echo_api_key,
            max_faults_per_key=max_faults_per_key,
        )
        self.policy: Policy = policy or SectionSeekingPolicy()
        self.limits = limits or ServerLimits()
        self._app: FaultApp | None = None

    def build_app(self) -> web.Application:
        self._app = FaultApp(self.policy, self.config, self.limits, require_key=lambda: self.require_key)
        return self._app.build()

    def closing(self) -> None:
        if self._app is not None:
            self._app.closing.set()  # release stalled requests before the runner cancels them

    def stats(self) -> StatsSnapshot:
        if self._app is None:
            return StatsSnapshot()
        return self._app.stats.snapshot()

    def reset_stats(self) -> None:
        if self._app is not None:
            self._app.stats.reset()

    def set_limits(self, limits: ServerLimits) -> None:
        """Change what the served model lacks while running."""
        self.limits = limits
        if self._app is not None:
            self._app.limits = limits

    def configure(self, **changes: Any) -> None:
        """Change fault settings while running, e.g. ``srv.configure(rate=0.0)``."""
        self.config = FaultConfig.model_validate({**self.config.model_dump(), **changes})
        if self._app is not None:
            self._app.config = self.config


logging.getLogger("aiohttp.server").setLevel(logging.CRITICAL)
