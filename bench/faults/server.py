"""The fault-injecting OpenAI-compatible server (aiohttp, in a background thread).

Endpoints: ``POST /v1/chat/completions`` (non-streaming), ``GET /v1/models``,
``GET /stats`` (counters as JSON, not itself counted) and ``POST /stats/reset``.
Only loopback addresses are ever bound.

    with FaultServer(policy=SectionSeekingPolicy(), rate=0.3, seed=1) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="test")
        ...
        srv.stats().by_fault
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import ipaddress
import json
import logging
import math
import socket
import struct
import threading
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
from bench.faults.protocol import (
    ChatRequest,
    Reply,
    completion_body,
    count_tokens,
    error_body,
)
from bench.faults.stats import RequestStats, StatsSnapshot

log = logging.getLogger(__name__)
MODEL_ID = "fault-model"


class NonLoopbackError(ValueError):
    """Raised when asked to bind anything but a loopback address."""


def ensure_loopback(host: str) -> str:
    """``host`` if it is a loopback address (``localhost`` -> ``127.0.0.1``), else raise."""
    if host.strip().lower() == "localhost":
        return "127.0.0.1"
    try:
        address = ipaddress.ip_address(host.strip().strip("[]"))
    except ValueError:
        raise NonLoopbackError(
            f"refusing to bind {host!r}: the fault server only listens on loopback addresses "
            "(127.0.0.1, ::1 or localhost)"
        ) from None
    if not address.is_loopback:
        raise NonLoopbackError(
            f"refusing to bind {host!r}: it is not a loopback address; the fault server only "
            "listens on 127.0.0.1, ::1 or localhost"
        )
    return str(address)


class _Aborted(Exception):
    """The connection was reset on purpose; nothing more to send."""


class FaultApp:
    """The request handling, independent of how the server is run."""

    def __init__(self, policy: Policy, config: FaultConfig, limits: ServerLimits | None = None):
        self.policy = policy
        self.config = config
        self.limits = limits or ServerLimits()
        self.stats = RequestStats()
        self.closing = asyncio.Event()
        self._seen_prefixes: set[str] = set()

    def build(self) -> web.Application:
        app = web.Application(middlewares=[self._count], client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self.chat)
        app.router.add_post("/chat/completions", self.chat)
        app.router.add_get("/v1/models", self.models)
        app.router.add_get("/models", self.models)
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
    async def models(self, request: web.Request) -> web.Response:
        if self.limits.no_models_list:
            return web.json_response(error_body("Not Found", kind="not_found_error"), status=404)
        entry: dict[str, Any] = {"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "bench"}
        if self.limits.context_window is not None and self.limits.advertise_context:
            entry["max_model_len"] = self.limits.context_window
        return web.json_response({"object": "list", "data": [entry]})

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
                error_body(
                    "streaming is not supported by the fault server", kind="invalid_request_error"
                ),
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
        token = _bearer(request)
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
            message = f"policy error: {type(exc).__name__}: {exc}"[:300]
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
        if (
            isinstance(cap, int)
            and cap > 0
            and not self.limits.ignore_max_tokens
            and not reply.tool_calls
            and reply.content
            and count_tokens(reply.content) > cap
        ):
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


def _bearer(request: web.Request) -> str | None:
    header = request.headers.get("Authorization", "")
    return header[7:] if header.lower().startswith("bearer ") else None


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


class FaultServer:
    """Runs a :class:`FaultApp` on a loopback port in a background thread.

    ``port=0`` picks a free ephemeral port. Either pass a ready ``config`` or the individual
    knobs (``rate``, ``faults``, ``seed``, ``stall_seconds``, ...), which build one.
    """

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
    ):
        self.host = ensure_loopback(host)
        self.port = port
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
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._started = threading.Event()
        self._error: BaseException | None = None

    # -- addresses -------------------------------------------------------------------
    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def base_url(self) -> str:
        """What to give ``openai.OpenAI(base_url=...)``."""
        return f"{self.url}/v1"

    # -- control -------------------------------------------------------------------------
    def start(self) -> FaultServer:
        if self._thread is not None:
            return self
        self._thread = threading.Thread(target=self._run, name="fault-server", daemon=True)
        self._thread.start()
        self._started.wait(timeout=10)
        if self._error is not None:
            raise self._error
        if not self._started.is_set():
            raise RuntimeError("fault server did not start within 10 s")
        return self

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        loop.call_soon_threadsafe(self._request_stop)
        thread.join(timeout=10)
        self._thread = None

    def __enter__(self) -> FaultServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

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

    # -- the thread ----------------------------------------------------------------------
    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self._serve())
        except BaseException as exc:  # surfaced to start()
            self._error = exc
            self._started.set()
        finally:
            loop.close()

    async def _serve(self) -> None:
        self._app = FaultApp(self.policy, self.config, self.limits)
        self._stop_event = asyncio.Event()
        runner = web.AppRunner(
            self._app.build(), access_log=None, shutdown_timeout=1.0, handle_signals=False
        )
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port, backlog=1024, reuse_address=True)
        await site.start()
        server = getattr(site, "_server", None)
        if self.port == 0 and server is not None and server.sockets:
            self.port = server.sockets[0].getsockname()[1]
        self._runner = runner
        self._started.set()
        await self._stop_event.wait()
        self._app.closing.set()
        await runner.cleanup()

    def _request_stop(self) -> None:
        self._stop_event.set()


logging.getLogger("aiohttp.server").setLevel(logging.CRITICAL)
