"""The async LLM client every retriever and judge uses.

``make_client(spec, role=...)`` builds an :class:`LLMClient` on ``openai.AsyncOpenAI``; the scripted
test model plugs in as the SDK's HTTP transport, so tests exercise the same path as real servers.

Retries: the OpenAI SDK's own machinery (``max_retries``) retries HTTP 408/409/429/5xx, timeouts and
connection errors with exponential backoff (0.5 s doubling, capped at 8 s, minus up to 25 % jitter)
and honours ``Retry-After`` / ``retry-after-ms`` when it is between 0 and 120 s (a longer one means
"do not retry"); ``timeout`` is per HTTP attempt (checked in openai 3.3 ``_base_client``; the
tests pin the behaviour: a 429 with Retry-After, a 500 storm making exactly 1 + max_retries requests).
After the cap the call raises :class:`LLMCallError` (:class:`LLMTimeout` for timeouts); a rejected
key (401/403) or unknown model (404) raises :class:`LLMConfigError`. Messages name the spec and base
URL and never contain the key.

Concurrency: one semaphore per endpoint (base URL) and event loop, shared by every client pointing
there; its size is the ``concurrency`` of the first client that used it.

``chat`` returns tool calls as :class:`ToolCall`; malformed JSON arguments, unknown tools and
arguments that break the tool's schema do not raise -- the call carries ``error`` and the verbatim
``raw_arguments`` (``resp.bad_tool_calls``, ``call.raise_for_error()``), and the ledger record gets
``error="bad_tool_call"``.

``structured`` goes through instructor (tools mode; JSON mode with ``json_mode=True`` for servers
without tool or JSON-schema support). A reply that fails validation is sent back to the model with
the validation error, at most ``max_retries`` times; then :class:`StructuredOutputError` is raised
with the last raw reply in ``.raw`` and the tokens spent in ``.usage`` (also recorded in the ledger
with ``error="invalid_output"``).
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import time
import weakref
from typing import Any, TypeVar

import httpx2
import instructor
import openai
from instructor.core.exceptions import InstructorError
from pydantic import BaseModel

from pageindex.llm.budget import Budget
from pageindex.llm.cache import CacheMode, LLMCache, request_key
from pageindex.llm.http import make_http_client
from pageindex.llm.ledger import UsageLedger
from pageindex.llm.pricing import Pricing, load_pricing
from pageindex.llm.scripted import RESPONSE_MODEL_HEADER, ScriptedModel, ScriptedRaise, ScriptedTransport
from pageindex.llm.spec import ModelSpec, parse_spec
from pageindex.llm.types import (
    ChatResponse,
    LLMCallError,
    LLMConfigError,
    LLMError,
    LLMTimeout,
    Message,
    ReplayMiss,
    Role,
    StructuredOutputError,
    StructuredResponse,
    ToolSpec,
    Usage,
    UsageRecord,
)
from pageindex.llm.wire import message_to_wire, parse_tool_call, tool_to_wire

T = TypeVar("T", bound=BaseModel)

SCRIPTED_BASE_URL = "http://scripted.invalid/v1"

_limiters: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Semaphore]] = (
    weakref.WeakKeyDictionary()
)
_attempts: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar("_attempts", default=None)


def _count_attempt(*args: Any, **kwargs: Any) -> None:
    seen = _attempts.get()
    if seen is not None:
        seen.append(1)


class _Backend:
    """The SDK client (and its instructor wrapper) of one event loop."""

    def __init__(self, sdk: openai.AsyncOpenAI, json_mode: bool) -> None:
        self.sdk = sdk
        self.structured = instructor.from_openai(
            sdk, mode=instructor.Mode.JSON if json_mode else instructor.Mode.TOOLS
        )
        self.structured.on("completion:response", _count_attempt)


class LLMClient:
    def __init__(
        self,
        spec: ModelSpec,
        *,
        role: Role = "retriever",
        cache: LLMCache | None = None,
        ledger: UsageLedger | None = None,
        budget: Budget | None = None,
        scripted: ScriptedModel | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        concurrency: int = 8,
        json_mode: bool = False,
        pricing: Pricing | None = None,
        transport: httpx2.AsyncBaseTransport | None = None,
        tag: dict[str, Any] | None = None,
    ) -> None:
        self._spec = spec
        self.role: Role = role
        self.cache = cache
        self.ledger = ledger if ledger is not None else UsageLedger()
        self.budget = budget
        self.scripted = scripted
        self.transport = transport
        self.timeout = timeout
        self.max_retries = max_retries
        self.concurrency = concurrency
        self.json_mode = json_mode
        self.pricing = pricing if pricing is not None else load_pricing()
        self.tag: dict[str, Any] = dict(tag or {})
        self.replay_only = spec.provider == "replay" or (cache is not None and cache.mode == "replay")
        if (
            budget is not None
            and budget.max_usd is not None
            and self.pricing.price(spec.spec, spec.model) is None
        ):
            raise LLMConfigError(
                f"cannot enforce a dollar budget for {spec.spec}: its price is unknown; add it to a "
                "pricing file (PAGEINDEX_PRICING) or use a token budget"
            )
        self._backends: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Backend] = (
            weakref.WeakKeyDictionary()
        )

    # ------------------------------------------------------------------ identity
    @property
    def spec(self) -> str:
        return self._spec.spec

    @property
    def model(self) -> str:
        return self._spec.model

    @property
    def model_spec(self) -> ModelSpec:
        return self._spec

    @property
    def base_url(self) -> str | None:
        return SCRIPTED_BASE_URL if self.scripted is not None else self._spec.base_url

    def __repr__(self) -> str:
        return f"LLMClient({self.spec!r}, role={self.role!r}, base_url={self.base_url!r})"

    def bind(self, **tag: Any) -> LLMClient:
        """A client sharing everything with this one whose records carry ``tag`` as well."""
        clone = object.__new__(LLMClient)
        clone.__dict__.update(self.__dict__)
        clone.tag = {**self.tag, **tag}
        return clone

    # ------------------------------------------------------------------ plumbing
    def _backend(self) -> _Backend:
        loop = asyncio.get_running_loop()
        backend = self._backends.get(loop)
        if backend is None:
            if self.replay_only:
                raise AssertionError("replay-only clients never reach the network")
            api_key = self._spec.api_key.get_secret_value() if self._spec.api_key else "scripted"
            inner = ScriptedTransport(self.scripted) if self.scripted is not None else self.transport
            http_client = make_http_client(api_key, inner)
            sdk = openai.AsyncOpenAI(
                api_key=api_key,
                base_url=self.base_url,
                timeout=self.timeout,
                max_retries=self.max_retries,
                http_client=http_client,
            )
            backend = self._backends[loop] = _Backend(sdk, self.json_mode)
        return backend

    def _limiter(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        per_loop = _limiters.setdefault(loop, {})
        endpoint = f"scripted:{id(self.scripted)}" if self.scripted is not None else str(self._spec.base_url)
        if endpoint not in per_loop:
            per_loop[endpoint] = asyncio.Semaphore(self.concurrency)
        return per_loop[endpoint]

    def _record(
        self, usage: Usage, tag: dict[str, Any] | None, *, cached: bool = False, error: str | None = None
    ) -> UsageRecord:
        record = UsageRecord(
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            cached_tokens=usage.cached_tokens,
            calls=usage.calls,
            latency_s=usage.latency_s,
            cost_usd=self.pricing.cost(self.spec, usage, self.model),
            model=self.spec,
            role=self.role,
            tag={**self.tag, **(tag or {})},
            cached=cached,
            error=error,
        )
        self.ledger.add(record)
        if self.budget is not None:
            self.budget.add(record)
        return record

    def _lookup(self, key: str, request: dict[str, Any]) -> dict[str, Any] | None:
        stored = self.cache.get(key) if self.cache is not None else None
        if stored is None and self.replay_only:
            where = self.cache.path if self.cache is not None else "no cache"
            raise ReplayMiss(
                f"replay miss for model {self.model} ({self.spec}): request key {key} is not in {where}; "
                f"record it first with openai/{self.model} and the cache in mode rw"
            )
        return stored

    def _store(
        self, key: str, kind: str, request: dict[str, Any], reply: dict[str, Any], usage: Usage
    ) -> None:
        if self.cache is not None:
            self.cache.put(
                key,
                model=self.model,
                kind=kind,
                request=request,
                reply=reply,
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
            )

    def _check_budget(self) -> None:
        if self.budget is not None:
            self.budget.check(f"{self.spec} ({self.role})")

    def _error(self, exc: BaseException) -> BaseException:
        """Translate an SDK / instructor / scripted exception into the layer's typed errors."""
        seen: BaseException | None = exc
        while seen is not None:
            if isinstance(seen, ScriptedRaise):
                return seen.error
            if isinstance(seen, LLMError):
                return seen
            if isinstance(seen, openai.APIError):
                exc = seen
                break
            seen = seen.__cause__ or seen.__context__
        where = self._spec.where() if self.scripted is None else f"{self.spec} (scripted)"
        attempts = f"after {self.max_retries + 1} attempt(s)"
        if isinstance(exc, openai.APITimeoutError):
            return LLMTimeout(f"{where}: no reply within {self.timeout:g}s {attempts}")
        if isinstance(exc, openai.APIConnectionError):
            return LLMCallError(f"{where}: cannot connect {attempts}")
        if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
            return LLMConfigError(
                f"{self.base_url} rejected the API key for {self.spec} "
                f"(HTTP {exc.status_code}); check OPENAI_API_KEY"
            )
        if isinstance(exc, openai.NotFoundError):
            return LLMConfigError(
                f"{where}: HTTP 404 -- unknown model {self.model!r} or wrong base URL "
                f"({self._spec.redact(exc.message)})"
            )
        if isinstance(exc, openai.APIStatusError):
            body = self._spec.redact(exc.response.text[:2000]) if exc.response is not None else None
            retried = exc.status_code in (408, 409, 429) or exc.status_code >= 500
            return LLMCallError(
                f"{where}: HTTP {exc.status_code}{' ' + attempts if retried else ''}: "
                f"{self._spec.redact(exc.message)[:300]}",
                raw=body,
            )
        if isinstance(exc, openai.OpenAIError):
            return LLMCallError(f"{where}: {self._spec.redact(str(exc))[:300]}")
        if isinstance(exc, json.JSONDecodeError):
            return LLMCallError(f"{where}: the reply is not JSON ({exc.msg})", raw=exc.doc[:2000])
        return exc

    # ------------------------------------------------------------------ chat
    async def chat(
        self,
        messages: list[Message],
        *,
        tools: list[ToolSpec] | None = None,
        tag: dict[str, Any] | None = None,
        temperature: float = 0.0,
        max_tokens: int | None = None,
    ) -> ChatResponse:
        params: dict[str, Any] = {
            "model": self.model,
            "messages": [message_to_wire(m) for m in messages],
            "temperature": temperature,
        }
        if tools:
            params["tools"] = [tool_to_wire(t) for t in tools]
        if max_tokens is not None:
            params["max_tokens"] = max_tokens
        request = {"kind": "chat", **params}
        key = request_key(request)
        stored = self._lookup(key, request)
        if stored is not None:
            usage = Usage.model_validate(stored["usage"])
            response = self._chat_response(stored["raw"], tools, usage, tag, cached=True)
            return response
        self._check_budget()
        backend = self._backend()
        async with self._limiter():
            started = time.perf_counter()
            try:
                # The SDK's generic ``post`` (its documented way to reach any endpoint) keeps all of its
                # retry / timeout / error machinery but skips the typed request transform and response
                # model construction, which cost about 1 ms of CPU per call; we parse the JSON ourselves.
                text = await backend.sdk.post("/chat/completions", body=params, cast_to=str)
                raw = json.loads(text)
            except Exception as exc:
                raise self._error(exc) from exc
            latency = time.perf_counter() - started
        if not isinstance(raw, dict):
            raise LLMCallError(f"{self.spec}: the reply is not a JSON object", raw=str(raw)[:2000])
        usage = _usage(raw.get("usage"), latency, calls=1)
        response = self._chat_response(raw, tools, usage, tag)
        self._store(key, "chat", request, {"raw": raw, "usage": usage.model_dump()}, usage)
        return response

    def _chat_response(
        self,
        raw: dict[str, Any],
        tools: list[ToolSpec] | None,
        usage: Usage,
        tag: dict[str, Any] | None,
        *,
        cached: bool = False,
    ) -> ChatResponse:
        choices = raw.get("choices") or []
        if not choices:
            self._record(usage, tag, cached=cached, error="call_failed")
            raise LLMCallError(f"{self.spec}: the reply has no choices", raw=str(raw)[:2000])
        message = choices[0].get("message") or {}
        calls = [parse_tool_call(c, tools or []) for c in message.get("tool_calls") or []]
        error = "bad_tool_call" if any(c.error for c in calls) else None
        record = self._record(usage, tag, cached=cached, error=error)
        return ChatResponse(
            content=message.get("content"),
            tool_calls=calls,
            finish_reason=choices[0].get("finish_reason"),
            usage=record,
            raw=raw,
        )

    # ------------------------------------------------------------------ structured
    async def structured(
        self,
        messages: list[Message],
        response_model: type[T],
        *,
        tag: dict[str, Any] | None = None,
        max_retries: int = 2,
        temperature: float = 0.0,
        max_tokens: int | None = None,
    ) -> StructuredResponse[T]:
        params: dict[str, Any] = {
            "model": self.model,
            "messages": [message_to_wire(m) for m in messages],
            "temperature": temperature,
        }
        if max_tokens is not None:
            params["max_tokens"] = max_tokens
        request = {
            "kind": "structured",
            "mode": "json" if self.json_mode else "tools",
            "response_model": response_model.__name__,
            "schema": response_model.model_json_schema(),
            **params,
        }
        key = request_key(request)
        stored = self._lookup(key, request)
        if stored is not None:
            record = self._record(Usage.model_validate(stored["usage"]), tag, cached=True)
            value = response_model.model_validate(stored["value"])
            return StructuredResponse[response_model](value=value, usage=record, attempts=stored["attempts"])
        self._check_budget()
        backend = self._backend()
        extra = {"extra_headers": {RESPONSE_MODEL_HEADER: response_model.__name__}} if self.scripted else {}
        attempts: list[Any] = []
        token = _attempts.set(attempts)
        try:
            async with self._limiter():
                started = time.perf_counter()
                try:
                    value, completion = await backend.structured.chat.completions.create_with_completion(
                        response_model=response_model, max_retries=max_retries, **params, **extra
                    )
                except InstructorError as exc:
                    # Retries exhausted, or a reply instructor cannot use at all (e.g. cut off by
                    # max_tokens): a typed, recorded error -- unless an HTTP failure caused it.
                    latency = time.perf_counter() - started
                    error = self._error(exc)
                    if error is not exc:
                        raise error from exc
                    raise self._invalid_output(exc, response_model, latency, tag, len(attempts)) from exc
                except Exception as exc:
                    raise self._error(exc) from exc
                latency = time.perf_counter() - started
        finally:
            _attempts.reset(token)
        n_attempts = max(len(attempts), 1)
        value = _as_exact_type(value, response_model)
        raw = completion.model_dump(mode="json", exclude_none=True)
        usage = _usage(raw.get("usage"), latency, calls=n_attempts)
        record = self._record(usage, tag)
        reply = {"value": value.model_dump(mode="json"), "usage": usage.model_dump(), "attempts": n_attempts}
        self._store(key, "structured", request, reply, usage)
        return StructuredResponse[response_model](value=value, usage=record, attempts=n_attempts)

    def _invalid_output(
        self,
        exc: Any,
        response_model: type[BaseModel],
        latency: float,
        tag: dict[str, Any] | None,
        seen_attempts: int,
    ) -> StructuredOutputError:
        n_attempts = int(getattr(exc, "n_attempts", 0) or seen_attempts or 1)
        total = getattr(exc, "total_usage", None) or getattr(
            getattr(exc, "last_completion", None), "usage", None
        )
        total_dict = total.model_dump(mode="json") if hasattr(total, "model_dump") else None
        usage = _usage(total_dict, latency, calls=n_attempts)
        record = self._record(usage, tag, error=StructuredOutputError.kind)
        raw = _raw_reply(getattr(exc, "last_completion", None))
        last_error = str(exc).strip().splitlines()
        reason = next(
            (line.strip() for line in last_error if "error" in line.lower()),
            last_error[0] if last_error else "validation failed",
        )
        return StructuredOutputError(
            f"{self.spec}: reply did not validate as {response_model.__name__} after {n_attempts} "
            f"attempt(s): {self._spec.redact(reason)[:300]}",
            raw=raw,
            usage=record,
        )

    async def aclose(self) -> None:
        """Close this event loop's HTTP connections (optional; they are also dropped with the loop)."""
        backend = self._backends.pop(asyncio.get_running_loop(), None)
        if backend is not None:
            await backend.sdk.close()

    # ------------------------------------------------------------------ preflight
    async def check(self) -> None:
        """Fail fast with :class:`LLMConfigError` if the endpoint is unreachable or rejects the key
        (``replay``: if the cache file is missing). Call before starting a run."""
        if self.replay_only and self.scripted is None:
            if self.cache is None or not self.cache.path.exists():
                where = self.cache.path if self.cache is not None else "(none)"
                raise LLMConfigError(
                    f"{self.spec}: replay needs a recorded cache, but {where} does not exist"
                )
            return
        try:
            await self._backend().sdk.models.list(timeout=min(self.timeout, 10.0))
        except openai.NotFoundError:
            return  # reachable, just no model list (some servers)
        except Exception as exc:
            error = self._error(exc)
            if isinstance(error, LLMConfigError):
                raise error from None
            where = self._spec.where()
            reason = str(error).removeprefix(f"{where}: ")
            raise LLMConfigError(f"cannot reach {where}: {reason}") from None


def _usage(data: dict[str, Any] | None, latency: float, *, calls: int) -> Usage:
    data = data or {}
    details = data.get("prompt_tokens_details") or {}
    return Usage(
        prompt_tokens=int(data.get("prompt_tokens") or 0),
        completion_tokens=int(data.get("completion_tokens") or 0),
        cached_tokens=int(details.get("cached_tokens") or 0),
        calls=calls,
        latency_s=latency,
        cost_usd=None,
    )


def _as_exact_type(value: Any, response_model: type[T]) -> T:
    """instructor may hand back an instance of a subclass it derived from ``response_model``;
    return a plain ``response_model`` with the same (already validated) field values."""
    if type(value) is response_model:
        return value
    fields = {name: getattr(value, name) for name in response_model.model_fields}
    return response_model.model_construct(_fields_set=set(value.model_fields_set), **fields)


def _raw_reply(completion: Any) -> str | None:
    if completion is None:
        return None
    try:
        message = completion.choices[0].message
    except (AttributeError, IndexError):
        return str(completion)[:4000]
    if message.tool_calls:
        return "\n".join(call.function.arguments for call in message.tool_calls)
    return message.content


def make_client(
    spec: str,
    *,
    role: Role = "retriever",
    base_url: str | None = None,
    api_key: str | None = None,
    cache: LLMCache | CacheMode | None = None,
    ledger: UsageLedger | None = None,
    budget: Budget | None = None,
    scripted: ScriptedModel | None = None,
    timeout: float = 60.0,
    max_retries: int = 3,
    concurrency: int = 8,
    json_mode: bool = False,
    pricing: Pricing | None = None,
    tag: dict[str, Any] | None = None,
    transport: httpx2.AsyncBaseTransport | None = None,
) -> LLMClient:
    """Build a client from a spec string; raises :class:`LLMConfigError` on a bad spec or missing key.

    ``cache`` is an :class:`LLMCache`, a mode string (``"rw"``, ``"replay"``, ``"off"``; default path)
    or None (no cache). ``replay/<model>`` without a cache uses the default cache file read-only.
    ``scripted`` answers every request from a :class:`ScriptedModel` (required for ``scripted``;
    with another spec, e.g. ``openai/gpt-4o-mini``, the scripted model stands in for that model so
    pricing applies). ``transport`` replaces the HTTP transport under the SDK (fault injection,
    benchmarks); retries, redaction and everything above it stay the same.
    """
    if scripted is not None:
        parsed = parse_spec(spec, base_url=base_url or SCRIPTED_BASE_URL, api_key=api_key or "scripted")
    else:
        parsed = parse_spec(spec, base_url=base_url, api_key=api_key)
        if parsed.provider == "scripted":
            raise LLMConfigError("model spec 'scripted' needs scripted=ScriptedModel(...)")
    if isinstance(cache, str):
        cache = None if cache == "off" else LLMCache(mode=cache)
    if parsed.provider == "replay" and cache is None:
        cache = LLMCache(mode="replay")
    return LLMClient(
        parsed,
        role=role,
        cache=cache,
        ledger=ledger,
        budget=budget,
        scripted=scripted,
        timeout=timeout,
        max_retries=max_retries,
        concurrency=concurrency,
        json_mode=json_mode,
        transport=transport,
        pricing=pricing,
        tag=tag,
    )
