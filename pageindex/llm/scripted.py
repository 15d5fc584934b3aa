"""The scripted model: a fake OpenAI-compatible endpoint for tests.

It plugs into the real ``openai.AsyncOpenAI`` client as an HTTP transport, so scripted calls go
through exactly the code real servers see: the SDK (retries, timeouts, usage parsing),
instructor (structured outputs, validation retries), the cache, the budget and the ledger.
The same object also drives :class:`pageindex.llm.testing.FakeOpenAIServer`, a real HTTP server
(built on the shared fake-server base, :mod:`pageindex.llm.fakeserver`); both send the JSON shapes
of :mod:`pageindex.llm.wire`.

Replies come from a queue (``ScriptedModel(replies=[...])``, one per request, in order) or a
policy (``ScriptedModel(policy=fn)``, ``fn(ScriptedRequest) -> reply``, sync or async). With both,
the queue is used first, then the policy. A reply may be:

* ``str`` -- assistant text (for a structured request: the raw JSON the model "sent");
* ``ScriptedModel.call("fetch_section", node_id="item_7")`` or a list of such -- tool calls;
  ``ScriptedModel.malformed_call(name, '{"node_id": ')`` sends arguments verbatim;
* a pydantic instance or dict -- for ``client.structured`` the value, sent as the forced tool
  call (tools mode) or as JSON content (JSON mode); for ``chat`` its JSON as text;
* an ``Exception`` -- raised by ``client.chat`` / ``client.structured`` unchanged;
* ``ScriptedModel.http_error(429, retry_after=0.01)`` / ``ScriptedModel.timeout()`` -- a failed HTTP
  exchange, retried by the SDK like a real one (each retry takes the next reply);
* ``ScriptedModel.reply(...)`` -- full control, including token counts and a delay;
* ``ScriptedModel.raw_body('{"choices": [')`` -- an HTTP 200 whose body is exactly that text
  (truncated or wrong-shaped JSON; the client retries it like a 5xx, see ``http.py``).

Token counts are deterministic: ``prompt_tokens = ceil(P / 4)`` where P is the number of
characters in all message contents plus the raw arguments of tool calls inside assistant
messages (tool definitions are free); ``completion_tokens = ceil(C / 4)`` where C is the length
of the reply text plus the raw arguments of its tool calls. ``cached_tokens`` is 0. Every request
is recorded in ``.requests`` (a :class:`ScriptedRequest` with both counts filled in) -- every HTTP
attempt, so an SDK retry after a scripted 429 shows up as a second request -- unless the model is made
with ``keep_requests=False`` (``--model scripted`` in ``bench run``, ``ask`` and the others, where no one
reads them: a run of 8,000 samples held some 220 MB of them); ``.request_count`` counts them either way.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import httpx2
import openai
from pydantic import BaseModel, ConfigDict, Field

from pageindex.llm.providers.base import PassThrough, ProviderFailure
from pageindex.llm.types import Message, ToolSpec
from pageindex.llm.wire import (
    completion_body,
    completion_chars,
    count_tokens,
    error_body,
    message_from_wire,
    model_entry,
    models_body,
    prompt_chars,
    tool_from_wire,
    wire_tool_call,
)
from pageindex.wording import error_text

RESPONSE_MODEL_HEADER = "x-pageindex-response-model"


class ScriptedExhausted(RuntimeError):
    """The scripted model was asked more often than the test scripted (a test bug, not a model error)."""


class ScriptedRequest(BaseModel):
    """One request the scripted model saw."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    index: int
    model: str
    messages: list[Message]
    tools: list[ToolSpec] = Field(default_factory=list)
    response_model: str | None = None  # name of the pydantic model a structured call asked for
    json_mode: bool = False  # structured call answered as JSON content rather than a forced tool
    temperature: float | None = None
    max_tokens: int | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    body: dict[str, Any] = Field(default_factory=dict)  # the raw request JSON

    @property
    def last_user(self) -> str:
        """Text of the last user message (handy in policies)."""
        return next((m.content or "" for m in reversed(self.messages) if m.role == "user"), "")

    @property
    def tool_results(self) -> list[Message]:
        return [m for m in self.messages if m.role == "tool"]


@dataclass
class ScriptedCall:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    raw_arguments: str | None = None  # sent verbatim instead of json.dumps(arguments)

    def raw(self) -> str:
        return self.raw_arguments if self.raw_arguments is not None else json.dumps(self.arguments)


@dataclass
class ScriptedReply:
    content: str | None = None
    calls: list[ScriptedCall] = field(default_factory=list)
    value: Any = None  # structured value: pydantic instance, dict or raw JSON text
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    error_message: str = "scripted error"
    raise_error: BaseException | None = None
    timeout: bool = False
    delay_s: float = 0.0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int = 0
    finish_reason: str | None = None  # default: "tool_calls" or "stop"
    raw_body: str | None = None  # sent verbatim as a 200 application/json body


@dataclass
class WireReply:
    """What goes back over HTTP (or is raised)."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: dict[str, Any] = field(default_factory=dict)
    delay_s: float = 0.0
    timeout: bool = False
    raise_error: BaseException | None = None
    text: str | None = None  # a verbatim body instead of ``body``

    def content(self) -> bytes:
        return (self.text if self.text is not None else json.dumps(self.body)).encode()


class ScriptedRaise(openai.OpenAIError, PassThrough):
    """Carries a scripted exception through the SDK (which re-raises OpenAIErrors without retrying)."""

    def __init__(self, error: BaseException):
        super().__init__(str(error))
        self.error = error


Policy = Callable[[ScriptedRequest], Any]


class ScriptedModel:
    def __init__(
        self,
        replies: Iterable[Any] | None = None,
        policy: Policy | None = None,
        name: str = "scripted",
        *,
        keep_requests: bool = True,
    ) -> None:
        self._queue: deque[Any] = deque(replies or [])
        self.policy = policy
        self.name = name
        self.keep_requests = keep_requests
        self.requests: list[ScriptedRequest] = []
        self.request_count = 0
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ reply builders
    @staticmethod
    def call(tool_name: str, /, **arguments: Any) -> ScriptedCall:
        return ScriptedCall(name=tool_name, arguments=arguments)

    @staticmethod
    def malformed_call(tool_name: str, raw_arguments: str) -> ScriptedCall:
        return ScriptedCall(name=tool_name, raw_arguments=raw_arguments)

    @staticmethod
    def reply(
        content: str | None = None,
        *,
        calls: Iterable[ScriptedCall] = (),
        value: Any = None,
        prompt_tokens: int | None = None,
        completion_tokens: int | None = None,
        cached_tokens: int = 0,
        delay_s: float = 0.0,
        finish_reason: str | None = None,
    ) -> ScriptedReply:
        return ScriptedReply(
            content=content,
            calls=list(calls),
            value=value,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cached_tokens=cached_tokens,
            delay_s=delay_s,
            finish_reason=finish_reason,
        )

    @staticmethod
    def http_error(
        status: int,
        *,
        retry_after: float | None = None,
        message: str = "scripted error",
        headers: dict[str, str] | None = None,
    ) -> ScriptedReply:
        all_headers = dict(headers or {})
        if retry_after is not None:
            all_headers["retry-after"] = f"{retry_after:g}"
        return ScriptedReply(status=status, headers=all_headers, error_message=message)

    @staticmethod
    def raw_body(text: str, *, delay_s: float = 0.0) -> ScriptedReply:
        """An HTTP 200 with exactly ``text`` as its JSON body (e.g. truncated or wrong-shaped)."""
        return ScriptedReply(raw_body=text, delay_s=delay_s)

    @staticmethod
    def timeout() -> ScriptedReply:
        return ScriptedReply(timeout=True)

    def add(self, *replies: Any) -> None:
        """Queue more replies."""
        with self._lock:
            self._queue.extend(replies)

    @property
    def pending(self) -> int:
        return len(self._queue)

    # ------------------------------------------------------------------ answering
    async def respond(self, body: dict[str, Any], headers: dict[str, str] | None = None) -> WireReply:
        """Turn one chat-completions request into a reply (used by the transport and the test server)."""
        request = self._parse(body, headers or {})
        with self._lock:
            request.index = self.request_count
            self.request_count += 1
            if self.keep_requests:
                self.requests.append(request)
            queued = self._queue.popleft() if self._queue else _EMPTY
        if queued is _EMPTY:
            if self.policy is None:
                return WireReply(
                    raise_error=ScriptedExhausted(
                        f"scripted model has no reply left for request #{request.index} "
                        f"(last user message: {request.last_user[:80]!r})"
                    )
                )
            queued = self.policy(request)
            if inspect.isawaitable(queued):
                queued = await queued
        return self._to_wire(_normalise(queued, request), request)

    def _parse(self, body: dict[str, Any], headers: dict[str, str]) -> ScriptedRequest:
        messages = [message_from_wire(m) for m in body.get("messages", [])]
        tools = [tool_from_wire(t) for t in body.get("tools") or []]
        response_model = headers.get(RESPONSE_MODEL_HEADER)
        tool_choice = body.get("tool_choice")
        forced = tool_choice.get("function", {}).get("name") if isinstance(tool_choice, dict) else None
        response_format = body.get("response_format") or {}
        if response_format.get("type") == "json_schema":
            response_model = response_model or response_format.get("json_schema", {}).get("name")
        json_mode = forced is None and (
            response_model is not None or response_format.get("type") in ("json_object", "json_schema")
        )
        return ScriptedRequest(
            index=self.request_count,  # set again when it is counted
            model=body.get("model", self.name),
            messages=messages,
            tools=tools,
            response_model=forced or response_model,
            json_mode=json_mode,
            temperature=body.get("temperature"),
            max_tokens=body.get("max_tokens") or body.get("max_completion_tokens"),
            prompt_tokens=count_tokens(prompt_chars(messages)),
            body=body,
        )

    def _to_wire(self, reply: ScriptedReply | BaseException, request: ScriptedRequest) -> WireReply:
        if isinstance(reply, BaseException):
            return WireReply(raise_error=reply)
        if reply.timeout:
            return WireReply(timeout=True, delay_s=reply.delay_s)
        if reply.raw_body is not None:
            return WireReply(text=reply.raw_body, delay_s=reply.delay_s)
        if reply.status >= 400:
            return WireReply(
                status=reply.status,
                headers=reply.headers,
                delay_s=reply.delay_s,
                body=error_body(reply.error_message, kind="scripted", code=reply.status),
            )
        content, calls = reply.content, list(reply.calls)
        if reply.value is not None:
            text = _as_json_text(reply.value)
            if request.response_model is not None and not request.json_mode:
                calls.append(ScriptedCall(name=request.response_model, raw_arguments=text))
            else:
                content = text
        wire_calls = [
            wire_tool_call(f"call_{request.index}_{i}", c.name, c.raw()) for i, c in enumerate(calls)
        ]
        prompt = reply.prompt_tokens if reply.prompt_tokens is not None else request.prompt_tokens
        completion = (
            reply.completion_tokens
            if reply.completion_tokens is not None
            else count_tokens(completion_chars(content, wire_calls))
        )
        request.prompt_tokens, request.completion_tokens = prompt, completion
        body = completion_body(
            model=request.model,
            content=content,
            tool_calls=wire_calls,
            prompt_tokens=prompt,
            completion_tokens=completion,
            cached_tokens=reply.cached_tokens,
            completion_id=f"scripted-{request.index}",
            finish_reason=reply.finish_reason,
        )
        return WireReply(body=body, delay_s=reply.delay_s)


_EMPTY = object()


def _as_json_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    return json.dumps(value)


def _normalise(reply: Any, request: ScriptedRequest) -> ScriptedReply | BaseException:
    if isinstance(reply, ScriptedReply | BaseException):
        return reply
    if reply is None:
        return ScriptedExhausted(f"scripted policy returned no reply for request #{request.index}")
    if isinstance(reply, ScriptedCall):
        return ScriptedReply(calls=[reply])
    if isinstance(reply, list | tuple) and reply and all(isinstance(r, ScriptedCall) for r in reply):
        return ScriptedReply(calls=list(reply))
    if request.response_model is not None and isinstance(reply, BaseModel | dict | str):
        return ScriptedReply(value=reply)
    if isinstance(reply, str):
        return ScriptedReply(content=reply)
    if isinstance(reply, BaseModel | dict):
        return ScriptedReply(content=_as_json_text(reply))
    return ScriptedExhausted(f"scripted reply of unsupported type {type(reply).__name__}: {reply!r}")


class ScriptedTransport(httpx2.AsyncBaseTransport):
    """An httpx2 transport answering every request from a :class:`ScriptedModel`.

    Honours the SDK's read timeout: a reply delayed longer than it raises a timeout, like a socket would.
    """

    def __init__(self, model: ScriptedModel) -> None:
        self.model = model

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.method == "GET" and request.url.path.endswith("/models"):
            listing = models_body([model_entry(self.model.name)])
            return httpx2.Response(200, json=listing, request=request)
        body = json.loads(await request.aread() or b"{}")
        try:
            wire = await self.model.respond(body, {k.lower(): v for k, v in request.headers.items()})
        except Exception as exc:  # the policy's bug: said as such, not as "Connection error."
            if isinstance(exc, httpx2.HTTPError | PassThrough):  # its stand-in for a network failure
                raise
            raise ProviderFailure(f"the scripted model's policy raised {error_text(exc)}") from exc
        timeout = (request.extensions.get("timeout") or {}).get("read")
        if wire.timeout or (timeout is not None and wire.delay_s > timeout):
            await asyncio.sleep(min(wire.delay_s, timeout or 0.0))
            raise httpx2.ReadTimeout("scripted timeout", request=request)
        if wire.delay_s:
            await asyncio.sleep(wire.delay_s)
        if wire.raise_error is not None:
            raise ScriptedRaise(wire.raise_error)
        headers = {"content-type": "application/json", **wire.headers}
        return httpx2.Response(wire.status, headers=headers, content=wire.content(), request=request)


def load_policy(spec: str) -> Callable[..., Any] | ScriptedModel:
    """``package.module:function`` or ``path/to/file.py:function`` -> the policy it names (a function
    of a :class:`ScriptedRequest`, or a :class:`ScriptedModel`), for ``--scripted-policy``.
    Raises ``ValueError`` with a message naming the spec."""
    import importlib
    import importlib.util
    from pathlib import Path

    target, sep, attr = spec.rpartition(":")
    if not sep or not target or not attr:
        raise ValueError(f"scripted policy {spec!r}: write module:function or file.py:function")
    try:
        if target.endswith(".py"):
            path = Path(target)
            if not path.exists():
                raise ValueError(f"scripted policy {spec!r}: {path} not found")
            module_spec = importlib.util.spec_from_file_location(f"_pageindex_policy_{path.stem}", path)
            if module_spec is None or module_spec.loader is None:
                raise ValueError(f"scripted policy {spec!r}: cannot import {path}")
            module = importlib.util.module_from_spec(module_spec)
            module_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(target)
    except ImportError as exc:
        raise ValueError(f"scripted policy {spec!r}: {exc}") from None
    policy = getattr(module, attr, None)
    if not (isinstance(policy, ScriptedModel) or callable(policy)):
        raise ValueError(f"scripted policy {spec!r}: {target} has no function {attr!r}")
    return policy
