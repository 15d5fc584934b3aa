"""The async LLM client every retriever and judge uses.

:class:`LLMClient` is the cross-cutting layer over one model provider
(:mod:`pageindex.llm.providers`): cache and single-flight, budget, usage, limits, error classes.
The provider decides where requests go (the network, or an in-process transport such as the test
model's); :mod:`pageindex.llm.sdk` speaks the chat-completions API to it through the OpenAI SDK and
instructor and names the cause of every failure. So every provider goes through the same path.
``make_client(spec, role=...)`` (:mod:`pageindex.llm.make`) builds one from a spec string.

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

Malformed replies: an HTTP 200 whose body is truncated / not JSON, or JSON without a usable
``choices[0].message`` (see ``http.py``), is retried like a 5xx by the same SDK machinery and within
the same cap (at most ``1 + max_retries`` HTTP attempts per call), then raises
:class:`MalformedReply` (an :class:`LLMCallError`) naming the model, the (credential-free) URL and
the problem, with the last body in ``.raw``.

Cache, failures and identical calls in flight: with a cache, a call's final failure
(:class:`LLMCallError` and subclasses, :class:`StructuredOutputError`) is recorded next to the
replies; ``replay`` raises the same typed error again (``.cached`` True, same message, the same
usage re-entered in the ledger marked cached), ``rw`` ignores recorded failures and calls live.
With a writable cache, identical requests (same cache key) in flight at the same time in one event
loop are coalesced: the first makes the call, the others wait and get its reply (usage marked
cached) or its failure, so a recorded run and its replay see the same outcomes. If the first caller
is cancelled, or fails with an error that is not recorded (bad key, budget), a waiting caller makes
the call itself.

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
import hashlib
import json
import math
import time
import weakref
from typing import Any, TypeVar

import httpx2
from pydantic import BaseModel

from pageindex.llm.budget import Budget
from pageindex.llm.cache import LLMCache, request_key
from pageindex.llm.http import (
    PARSED_JSON,
    REASONING_ROOM,
    parse_completion,
    recording_attempts,
)
from pageindex.llm.http import completion_problem as parse_completion_problem
from pageindex.llm.ledger import UsageLedger
from pageindex.llm.pricing import Pricing, load_pricing
from pageindex.llm.profile import is_loopback
from pageindex.llm.providers.base import Provider
from pageindex.llm.sdk import (
    REASK_ERRORS,
    InstructorError,
    SdkSession,
    cut_prompt_error,
    finish_reason,
    open_session,
    raw_reply,
    translate_error,
    validation_messages,
)
from pageindex.llm.spec import ModelSpec
from pageindex.llm.tokens import (
    TokenCounter,
    context_window_from_metadata,
    default_max_tokens,
    known_context_window,
    prompt_cut,
)
from pageindex.llm.types import (
    ChatResponse,
    ContextLengthError,
    HTTPStatusError,
    LLMCallError,
    LLMConfigError,
    LLMError,
    LLMTimeout,
    MalformedReply,
    Message,
    OutputTruncated,
    ReplayMiss,
    Role,
    StructuredOutputError,
    StructuredResponse,
    ToolSpec,
    Usage,
    UsageRecord,
    error_kind_name,
)
from pageindex.llm.wire import REQUEST_FORMAT, message_to_wire, parse_tool_call, prompt_chars, tool_to_wire

# Seconds the preflight and metadata probes of a remote API wait (a loopback server: the call timeout).
PROBE_TIMEOUT_S = 10.0

T = TypeVar("T", bound=BaseModel)

_limiters: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Semaphore]] = (
    weakref.WeakKeyDictionary()
)
# In-flight calls per event loop, keyed by (cache file, request key): the single-flight table.
_flights: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, str], asyncio.Future[Any]]] = (
    weakref.WeakKeyDictionary()
)
# Failures recorded in the cache and reproduced by replay (and shared with waiting identical calls).
# Older names (``invalid_output``) read as today's classes; ``http_<status>`` is HTTPStatusError.
_RECORDED_ERRORS: dict[str, type[LLMError]] = {
    cls.kind: cls
    for cls in (
        LLMCallError,
        LLMTimeout,
        MalformedReply,
        ContextLengthError,
        OutputTruncated,
        StructuredOutputError,
    )
}


def _last_reply_usage(attempts: list[dict[str, Any]]) -> tuple[int, int, bool] | None:
    """(prompt tokens, completion tokens, whether its cap was sent as ``max_completion_tokens`` with room
    for reasoning) of the last reply whose usage was reported; None when none was."""
    replies = [a for a in attempts if a.get("outcome") == "ok" and isinstance(a.get("usage"), dict)]
    if not replies:
        return None
    usage = replies[-1]["usage"]
    adapted = "max_tokens" in (replies[-1].get("adapted") or [])
    return int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0), adapted


def _short_of_cap(attempts: list[dict[str, Any]], max_tokens: int) -> tuple[int, int] | None:
    """(prompt, completion) tokens of the last reply when it stopped below ``max_tokens`` as sent
    (``finish_reason: length`` from a server that ended it where its context window ends, a window the
    client does not know: a LiteLLM proxy lists none); None when the usage does not show it."""
    last = _last_reply_usage(attempts)
    if last is None or last[2]:
        return None
    prompt, completion, _ = last
    return (prompt, completion) if 0 < completion < max_tokens and prompt else None


class LLMClient:
    def __init__(
        self,
        spec: ModelSpec,
        *,
        role: Role = "retriever",
        cache: LLMCache | None = None,
        ledger: UsageLedger | None = None,
        budget: Budget | None = None,
        provider: Provider,
        timeout: float = 60.0,
        max_retries: int = 3,
        concurrency: int = 8,
        json_mode: bool = False,
        pricing: Pricing | None = None,
        tag: dict[str, Any] | None = None,
        max_tokens: int | None = None,
        context_window: int | None = None,
        retry_timeouts: bool = True,
        context_window_source: str | None = None,
    ) -> None:
        self._spec = spec
        self.role: Role = role
        self.cache = cache
        self.ledger = ledger if ledger is not None else UsageLedger()
        self.budget = budget
        self.provider = provider
        self.timeout = timeout
        self.max_retries = max_retries
        self.concurrency = concurrency
        self.json_mode = json_mode
        self.pricing = pricing if pricing is not None else load_pricing()
        self.tag: dict[str, Any] = dict(tag or {})
        # Completion cap of calls that give none (None: the per-role default, tokens.py).
        self.max_tokens = max_tokens
        # The model's context window in tokens (None: unknown; see ``discover_context_window``),
        # shared by every ``bind`` clone so discovery happens once.
        self._limits: dict[str, Any] = {
            "window": context_window,
            # where a given window came from, as errors name it: the flag unless said (the doctor's probe)
            "source": (context_window_source or "--context-window") if context_window else None,
            "checked": bool(context_window),
            "kept": None,  # why no flag can change the window here (a resumed run keeps its own)
        }
        self.retry_timeouts = retry_timeouts
        self.tokens = TokenCounter(
            base_url=spec.base_url if provider.remote else None,
            model=spec.model,
            headers=spec.auth_headers(),
        )
        self.replay_only = provider.replay_only or (cache is not None and cache.mode == "replay")
        if (
            budget is not None
            and budget.max_usd is not None
            and self.pricing.price(spec.spec, spec.model) is None
        ):
            raise LLMConfigError(
                f"cannot enforce a dollar budget for {spec.spec}: its price is unknown; add it to a "
                "pricing file (PAGEINDEX_PRICING) or use a token budget"
            )
        self._backends: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, SdkSession] = (
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
        return self.provider.base_url

    @property
    def display_url(self) -> str | None:
        """The base URL with credentials masked, for messages."""
        return self.provider.display_url

    def __getattr__(self, name: str) -> Any:
        # What only one provider has (the test model's recorded requests) reads through the client.
        provider = self.__dict__.get("provider")
        if provider is None or name.startswith("_"):
            raise AttributeError(name)
        try:
            return getattr(provider, name)
        except AttributeError:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}") from None

    def __repr__(self) -> str:
        return f"LLMClient({self.spec!r}, role={self.role!r}, base_url={self.display_url!r})"

    @property
    def context_window(self) -> int | None:
        return self._limits["window"]

    @context_window.setter
    def context_window(self, value: int | None) -> None:
        self._limits.update(window=value, source="--context-window" if value else None, checked=bool(value))

    @property
    def context_window_source(self) -> str | None:
        """Where the context window came from: --context-window, server metadata, known model table."""
        return self._limits["source"]

    def keep_context_window(self, why: str) -> None:
        """No flag can change this client's window (``why``: a resumed run keeps the one it started
        with), so a server whose window is smaller is advised restarted, not ``--context-window N``."""
        self._limits["kept"] = why

    @property
    def context_window_kept(self) -> str | None:
        return self._limits.get("kept")

    def bind(self, **tag: Any) -> LLMClient:
        """A client sharing everything with this one whose records carry ``tag`` as well."""
        clone = object.__new__(LLMClient)
        clone.__dict__.update(self.__dict__)
        clone.tag = {**self.tag, **tag}
        return clone

    # ------------------------------------------------------------------ plumbing
    def _backend(self) -> SdkSession:
        """This event loop's SDK session (opened on first use; see :mod:`pageindex.llm.sdk`)."""
        loop = asyncio.get_running_loop()
        session = self._backends.get(loop)
        if session is None:
            if self.replay_only:
                raise AssertionError("replay-only clients never reach the network")
            session = self._backends[loop] = open_session(self)
        return session

    def _limiter(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        per_loop = _limiters.setdefault(loop, {})
        endpoint = self.provider.endpoint()
        if endpoint not in per_loop:
            per_loop[endpoint] = asyncio.Semaphore(self.concurrency)
        return per_loop[endpoint]

    def _record(
        self,
        usage: Usage,
        tag: dict[str, Any] | None,
        *,
        cached: bool = False,
        shared: bool = False,
        error: str | None = None,
        unreported: tuple[int, int] = (0, 0),
    ) -> UsageRecord:
        """Enter one call in the ledger (and the budget); ``unreported`` is what
        :meth:`_charge_unreported` found of its attempts: how many the server took without reporting
        usage, and their estimated prompt tokens (in no token total; the budget has them)."""
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
            shared=shared,
            error=error,
            unreported_attempts=unreported[0],
            estimated_prompt_tokens=unreported[1],
        )
        self.ledger.add(record)
        if self.budget is not None:
            self.budget.add(record)
        return record

    def _lookup(self, key: str, tag: dict[str, Any] | None, kind: str = "") -> dict[str, Any] | None:
        """The cached reply for ``key``; in replay mode a recorded failure is raised again and a
        miss raises :class:`ReplayMiss`."""
        stored = self.cache.get(key) if self.cache is not None else None
        if stored is None and self.replay_only:
            failure = self.cache.get_failure(key) if self.cache is not None else None
            if failure is not None:
                raise self._reproduce(failure, tag)
            where = self.cache.path if self.cache is not None else "no cache"
            older = self.cache.older_format_count(self.model, REQUEST_FORMAT) if self.cache else 0
            if older:
                raise ReplayMiss(
                    f"replay miss for model {self.model} ({self.spec}): request key {key} is not in "
                    f"{where}, which holds {older} recording(s) of this model made with an older "
                    f"request format (before v{REQUEST_FORMAT}) that today's requests never match; "
                    f"re-record them: run again with openai/{self.model} and --cache rw"
                )
            other = ""
            if kind == "structured" and self.cache is not None:
                # a recording that took JSON mode (a flag, or pageindex doctor's findings for its
                # endpoint, which a replay has not) matches no replay in tools mode, and back
                json_mode = self.json_mode
                mode, flag = ("tools", "without --json-mode") if json_mode else ("JSON", "with --json-mode")
                if n := self.cache.structured_mode_count(self.model, mode.lower()):
                    other = (f" (it holds {n} structured call(s) of this model recorded in {mode} mode: "
                             f"such a recording replays only {flag})")  # fmt: skip
            raise ReplayMiss(
                f"replay miss for model {self.model} ({self.spec}): request key {key} is not in {where}; "
                f"record it first with openai/{self.model} and the cache in mode rw{other}"
            )
        return stored

    async def _resolve(
        self, key: str, kind: str, request: dict[str, Any], tag: dict[str, Any] | None, live: Any
    ) -> tuple[dict[str, Any], str]:
        """The reply for ``key`` and where it came from: ``"cache"``, ``"shared"`` (an identical call
        already in flight, single-flight, writable cache only: sent once, this caller waited for it)
        or ``"live"`` (``live()``, whose reply or recordable final failure is stored)."""
        coalesce = self.cache is not None and self.cache.writable
        while True:
            stored = self._lookup(key, tag, kind)
            if stored is not None:
                return stored, "cache"
            if not coalesce:
                return await live(), "live"
            assert self.cache is not None
            flights = _flights.setdefault(asyncio.get_running_loop(), {})
            flight_key = (str(self.cache.path), key)
            flight = flights.get(flight_key)
            if flight is None:
                break
            status, payload = await asyncio.shield(flight)
            if status == "ok":
                return payload, "shared"
            if status == "failed":
                raise self._reproduce(payload, tag)
            # "gone": the first caller was cancelled or hit an unrecorded error; try again.
        flight = asyncio.get_running_loop().create_future()
        flights[flight_key] = flight
        outcome: tuple[str, Any] = ("gone", None)
        try:
            reply = await live()
            self._store(key, kind, request, reply)
            outcome = ("ok", reply)
            return reply, "live"
        except LLMError as exc:
            failure = _failure_record(exc)
            if failure is not None:
                self.cache.put_failure(
                    key, model=self.model, kind=kind, request=request, failure=failure, wait=False
                )
                outcome = ("failed", failure)
            raise
        finally:
            if flights.get(flight_key) is flight:
                del flights[flight_key]
            flight.set_result(outcome)

    def _reproduce(self, failure: dict[str, Any], tag: dict[str, Any] | None) -> LLMError:
        """The typed error a recorded failure stands for (``cached=True``); tokens it had spent are
        entered in the ledger again, marked cached, as a cached reply's are."""
        kind = error_kind_name(str(failure.get("kind"))) or LLMCallError.kind
        cls = _RECORDED_ERRORS.get(kind, LLMCallError)
        usage = failure.get("usage")
        record = self._record(Usage.model_validate(usage), tag, cached=True, error=kind) if usage else None
        message, raw = str(failure.get("message", "")), failure.get("raw")
        if kind.startswith("http_") and kind[5:].isdigit():
            return HTTPStatusError(message, status=int(kind[5:]), raw=raw, usage=record, cached=True)
        if issubclass(cls, LLMCallError):
            return cls(message, raw=raw, usage=record, cached=True, kind=kind)
        return cls(message, raw=raw, usage=record, cached=True)

    def _store(self, key: str, kind: str, request: dict[str, Any], reply: dict[str, Any]) -> None:
        usage = Usage.model_validate(reply["usage"])
        if self.cache is not None:
            self.cache.put(
                key,
                model=self.model,
                kind=kind,
                request=request,
                reply=reply,
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
                wait=False,
            )

    def _check_budget(self) -> None:
        if self.budget is not None:
            self.budget.check(f"{self.spec} ({self.role})")

    def _error(self, exc: BaseException, attempts: list[dict[str, Any]] | None = None) -> BaseException:
        """The layer's typed error for an SDK / instructor / provider exception (:func:`translate_error`)."""
        return translate_error(self, exc, attempts)

    # ------------------------------------------------------------------ attempts and sizing
    def _attempt_usage(self, attempts: list[dict[str, Any]], latency: float, prompt_len: int) -> Usage:
        """Usage summed over every HTTP attempt of one call (timed-out ones report none);
        calibrates the token estimate with what the server reported."""
        total = Usage(calls=max(len(attempts), 1), latency_s=latency, cost_usd=None)
        for attempt in attempts:
            usage = attempt.get("usage")
            if isinstance(usage, dict):
                one = _usage(usage, 0.0, calls=0)
                total.prompt_tokens += one.prompt_tokens
                total.completion_tokens += one.completion_tokens
                total.cached_tokens += one.cached_tokens
                if attempt is attempts[0] and prompt_cut(prompt_len, one.prompt_tokens) is None:
                    self.tokens.observe(prompt_len, one.prompt_tokens)
        return total

    def _cut_prompt(
        self, attempts: list[dict[str, Any]], prompt_len: int, latency: float, tag: dict[str, Any] | None
    ) -> ContextLengthError | None:
        """The error for a reply the server gave after cutting the prompt (:func:`prompt_cut` of the
        tokens it reported reading), its usage entered in the ledger as a failed call's; None if no
        answered attempt was cut."""
        for attempt in attempts:
            reported = attempt.get("usage")
            if attempt.get("outcome") != "ok" or not isinstance(reported, dict):
                continue
            read = prompt_cut(prompt_len, _usage(reported, 0.0, calls=0).prompt_tokens)
            if read is not None:
                error = cut_prompt_error(self, read, prompt_len)
                error.attempts = list(attempts)  # type: ignore[attr-defined]
                usage = self._attempt_usage(attempts, latency, prompt_len)
                error.usage = self._record(usage, tag, error=error.kind)
                return error
        return None

    def _failed(
        self,
        exc: BaseException,
        attempts: list[dict[str, Any]],
        latency: float,
        prompt_len: int,
        tag: dict[str, Any] | None,
    ) -> BaseException:
        """The typed error for a failed call, with every HTTP attempt it made counted: the
        attempts' usage goes to the ledger (error kind attached) and the error's ``usage``; the
        estimated prompt tokens of attempts that timed out (no usage) count against the budget."""
        error = self._error(exc, attempts)
        if not isinstance(error, LLMError) or isinstance(error, LLMConfigError) or error.cached:
            return error
        error.attempts = list(attempts)  # type: ignore[attr-defined]
        if attempts and error.usage is None:
            usage = self._attempt_usage(attempts, latency, prompt_len)
            unreported = self._charge_unreported(attempts, prompt_len)
            error.usage = self._record(usage, tag, error=error.kind, unreported=unreported)
        return error

    def _charge_unreported(self, attempts: list[dict[str, Any]], prompt_len: int) -> tuple[int, int]:
        """Attempts the server took but reported no usage for (timed out, cut by the caller, or a
        reply without usage) still made it read the prompt: the estimated prompt tokens, and their
        price, count against the budget once per such attempt, whether the call failed or a later
        attempt answered. An attempt refused with an HTTP status (429, 5xx) or that never connected
        computed nothing and costs nothing. Returns how many such attempts and their estimated
        prompt tokens, for the call's record."""
        unreported = sum(1 for a in attempts if a.get("usage") is None and _server_computed(a))
        tokens = unreported * self.tokens.estimate(prompt_len) if unreported else 0
        if self.budget is not None and tokens:
            usd = self.pricing.cost(self.spec, Usage(prompt_tokens=tokens), self.model)
            self.budget.charge_estimate(tokens, usd)
        return unreported, tokens

    def _cancelled(
        self, attempts: list[dict[str, Any]], latency: float, prompt_len: int, tag: dict[str, Any] | None
    ) -> None:
        """A call cancelled by its caller (``aretrieve``'s ``time_limit``, a Ctrl-C): the attempts that
        came back go to the ledger like a failed call's (error ``cancelled``), and the one in flight
        is a call too, whose estimated prompt tokens count against the budget, as a timed-out
        attempt's do: the server goes on computing it, and a run whose samples are all cut must still
        meet its --budget."""
        # only an attempt the transport was sending is one: a cancel before it went out, or during a
        # retry's back-off sleep, cut no request (it was counted as a call and charged an estimate)
        sent = getattr(attempts, "in_flight", True)
        done = [*attempts, {"outcome": "cancelled", "usage": None}] if sent else list(attempts)
        if not done:
            return  # nothing was sent: no call
        usage = self._attempt_usage(done, latency, prompt_len)
        unreported = self._charge_unreported(done, prompt_len)
        self._record(usage, tag, error="cancelled", unreported=unreported)

    def cap_for(self, max_tokens: int | None = None, role: str | None = None) -> int:
        """The completion cap before any window is known: the call's own (``max_tokens``), else
        the client's (``make_client(max_tokens=...)``), else the default of ``role`` (this
        client's role when not given). The one chain: calls, retrievers and prompt budgets use it."""
        return max_tokens or self.max_tokens or default_max_tokens(role or self.role)

    def completion_cap(self, max_tokens: int | None, prompt_len: int) -> int:
        """The ``max_tokens`` a call sends: :meth:`cap_for`, lowered to what is left of a known
        context window after the (estimated) prompt (never below 64)."""
        cap = self.cap_for(max_tokens)
        if self.context_window:
            # A fixed, conservative 3 characters per token: the cap is part of the request (and its
            # cache key), so it must not depend on what earlier calls taught the estimate.
            room = self.context_window - math.ceil(prompt_len / 3) - 16
            cap = max(64, min(cap, room))
        return cap

    async def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` for this model: the server's tokenizer where it has one, else
        characters / 4 calibrated by the usage the server reported so far. Counts go through the
        cache like replies, estimates included (a replayed run sizes its prompts exactly as the
        recorded one did, without a server)."""
        digest = hashlib.sha256(text.encode()).hexdigest()
        request = {"kind": "tokenize", "format": REQUEST_FORMAT, "model": self.model, "text_sha256": digest}
        key = request_key(request)
        stored = self.cache.get(key) if self.cache is not None else None
        if stored is not None:
            return int(stored["tokens"])
        if self.replay_only or not self.provider.remote:
            return math.ceil(len(text) / 4)
        tokens = await self.tokens.count(text, timeout=min(self.timeout, 30.0))
        if self.cache is not None:
            # Every count is kept, the estimates too: a calibrated estimate depends on the replies
            # seen before it, which a replay does not have, so the replay reads the recorded count
            # and cuts an index to fit exactly as the recorded run did.
            self.cache.put(key, model=self.model, kind="tokenize", request=request,
                           reply={"tokens": tokens, "method": self.tokens.method},
                           prompt_tokens=0, completion_tokens=0, wait=False)  # fmt: skip
        return tokens

    def prompt_budget(self, max_tokens: int | None = None, *, reserve: int = 0) -> int | None:
        """Tokens a prompt may use in this model's context window, leaving room for the reply
        (``max_tokens`` or the role's default) and ``reserve`` more; None when the window is unknown."""
        if not self.context_window:
            return None
        return max(self.context_window - self.cap_for(max_tokens) - reserve, 256)

    async def discover_context_window(self) -> int | None:
        """The context window: ``--context-window`` if given, else the server's metadata (vLLM's
        ``max_model_len``; the window Ollama runs the model with; in replay, the figure the recording
        read there),
        else the known table; also probes the server's
        tokenizer. Sets ``context_window`` and ``context_window_source``. A discovery cancelled
        half-way (a sample cut at its time limit) is not taken as done: the next call tries again."""
        limits = self._limits
        if limits["window"]:
            limits["checked"] = True
            return limits["window"]
        # the window sizes prompts and max_tokens, so it is part of what a recording must hold: the
        # server's figure is kept in the cache beside the replies, and a replay reads it from there
        window_request = {"kind": "context_window", "format": REQUEST_FORMAT, "model": self.model}
        key = request_key(window_request)
        if self.provider.remote and not self.replay_only and self._spec.base_url:
            found = await self.provider.context_window(timeout=self.probe_timeout())
            if found is not None:
                limits.update(window=found.tokens, source=found.source, checked=True)
                self._keep_window(found.tokens, found.source)
                return found.tokens
        stored = self.cache.get(key) if self.replay_only and self.cache is not None else None
        if stored is not None:
            source = f"{stored.get('source') or 'server metadata'} (recorded)"
            limits.update(window=int(stored["window"]), source=source, checked=True)
            return limits["window"]
        limits["checked"] = True
        known = known_context_window(self.model)
        if known is not None:
            limits.update(window=known, source="known model table")
        return limits["window"]

    def _keep_window(self, tokens: int, source: str | None) -> None:
        """Record a window read from the server beside the replies (a writable cache only), so a
        replay, which asks no server, sizes prompts and ``max_tokens`` as the recording did."""
        if self.cache is None or self.replay_only:
            return
        window_request = {"kind": "context_window", "format": REQUEST_FORMAT, "model": self.model}
        self.cache.put(request_key(window_request), model=self.model, kind="context_window",
                       request=window_request, reply={"window": tokens, "source": source},
                       prompt_tokens=0, completion_tokens=0, replace=True, wait=False)  # fmt: skip

    async def ensure_limits(self) -> int | None:
        """:meth:`discover_context_window` once per client (and its ``bind`` clones)."""
        if not self._limits["checked"]:
            await self.discover_context_window()
        return self._limits["window"]

    # ------------------------------------------------------------------ chat
    async def chat(
        self,
        messages: list[Message],
        *,
        tools: list[ToolSpec] | None = None,
        tool_choice: str = "auto",
        tag: dict[str, Any] | None = None,
        temperature: float = 0.0,
        max_tokens: int | None = None,
    ) -> ChatResponse:
        """One chat completion. Sends ``max_tokens`` always (see :meth:`completion_cap`); every HTTP
        attempt is counted (``resp.attempts``, ``resp.usage.calls``)."""
        prompt_len = prompt_chars(messages)
        params: dict[str, Any] = {
            "model": self.model,
            "messages": [message_to_wire(m) for m in messages],
            "temperature": temperature,
            "max_tokens": self.completion_cap(max_tokens, prompt_len),
        }
        if tools:
            params["tools"] = [tool_to_wire(t) for t in tools]
            # "auto" is OpenAI's default when tools are given, sent explicitly: llama-cpp-python's
            # function-calling chat handlers ignore the tools without it. "none": the tools stay
            # declared but the model must reply in text.
            params["tool_choice"] = tool_choice
        request = {"kind": "chat", "format": REQUEST_FORMAT, **params}
        key = request_key(request)

        async def live() -> dict[str, Any]:
            self._check_budget()
            backend = self._backend()
            async with self._limiter():
                self._check_budget()  # again: the budget may have been spent while this call queued
                with recording_attempts() as attempts:
                    started = time.perf_counter()
                    try:
                        # The SDK's generic ``post`` (its documented way to reach any endpoint) keeps
                        # all of its retry / timeout / error machinery but skips the typed request
                        # transform and response model construction (about 1 ms of CPU per call).
                        # The transport has already parsed and checked the JSON (http.py).
                        http = await backend.sdk.post(
                            "/chat/completions", body=params, cast_to=httpx2.Response
                        )
                    except Exception as exc:
                        latency = time.perf_counter() - started
                        raise self._failed(exc, attempts, latency, prompt_len, tag) from exc
                    except asyncio.CancelledError:
                        self._cancelled(attempts, time.perf_counter() - started, prompt_len, tag)
                        raise
                    latency = time.perf_counter() - started
            raw = http.extensions.get(PARSED_JSON)
            if raw is None:  # pragma: no cover - only if a transport bypasses the check
                raw, problem = parse_completion(http.content)
                if problem is not None:
                    raise MalformedReply(
                        f"malformed reply from {self._where()}: {problem}", raw=http.text[:2000]
                    )
            if not attempts:  # a transport that records nothing (never in practice): one attempt
                attempts.append({"outcome": "ok", "status": 200, "usage": raw.get("usage")})
            if (cut := self._cut_prompt(attempts, prompt_len, latency, tag)) is not None:
                raise cut
            usage = self._attempt_usage(attempts, latency, prompt_len)
            unreported = self._charge_unreported(attempts, prompt_len)
            return {"raw": raw, "usage": usage.model_dump(), "attempts": attempts, "unreported": unreported}

        reply, source = await self._resolve(key, "chat", request, tag, live)
        usage = Usage.model_validate(reply["usage"])
        unreported = _sent_unreported(reply, source)
        response = self._chat_response(reply["raw"], tools, usage, tag, source=source, unreported=unreported)
        response.attempts = reply.get("attempts") or []
        return response

    def _where(self) -> str:
        return self.provider.where()

    def _chat_response(
        self,
        raw: dict[str, Any],
        tools: list[ToolSpec] | None,
        usage: Usage,
        tag: dict[str, Any] | None,
        *,
        source: str = "live",
        unreported: tuple[int, int] = (0, 0),
    ) -> ChatResponse:
        problem = parse_completion_problem(raw)
        if problem is not None:  # pragma: no cover - replies are checked before they are stored
            raise MalformedReply(f"malformed reply from {self._where()}: {problem}", raw=str(raw)[:2000])
        choices = raw["choices"]
        message = choices[0]["message"]
        calls = [parse_tool_call(c, tools or []) for c in message.get("tool_calls") or []]
        error = "bad_tool_call" if any(c.error for c in calls) else None
        record = self._record(
            usage, tag, cached=source != "live", shared=source == "shared", error=error, unreported=unreported
        )
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
        """A reply validated as ``response_model`` (instructor; tools or JSON mode). Sends
        ``max_tokens`` always. Every HTTP attempt, validation re-asks and HTTP retries included, is
        counted in the usage. Raises :class:`OutputTruncated` when the reply was cut at
        ``max_tokens`` and :class:`StructuredOutputError` (with the validation messages) when it
        never validated."""
        prompt_len = prompt_chars(messages)
        params: dict[str, Any] = {
            "model": self.model,
            "messages": [message_to_wire(m) for m in messages],
            "temperature": temperature,
            "max_tokens": self.completion_cap(max_tokens, prompt_len),
        }
        request = {
            "kind": "structured",
            "format": REQUEST_FORMAT,
            "mode": "json" if self.json_mode else "tools",
            "response_model": response_model.__name__,
            "schema": response_model.model_json_schema(),
            **params,
        }
        # JSON mode on a loopback server also sends the schema as `response_format.schema`: the
        # llama.cpp servers' extension (llama-cpp-python, llama-server) builds a grammar from it, so
        # the reply fits the schema, not merely any JSON; servers without it ignore the key.
        schema_hint = self.json_mode and self.provider.remote and is_loopback(self._spec.base_url)
        if schema_hint:
            request["response_format_schema"] = True
        key = request_key(request)
        if self.json_mode and self.replay_only and not schema_hint and self.cache is not None:
            # a replay asks no endpoint, so it cannot tell whether the recording's was a server on
            # this machine that got the hint: it takes the recording made either way
            hinted = request_key({**request, "response_format_schema": True})
            if self.cache.get(key) is None and self.cache.get_failure(key) is None and (
                self.cache.get(hinted) is not None or self.cache.get_failure(hinted) is not None
            ):
                key = hinted
        live_value: list[T] = []

        async def live() -> dict[str, Any]:
            self._check_budget()
            backend = self._backend()
            headers = self.provider.request_headers(response_model.__name__)
            extra: dict[str, Any] = {"extra_headers": headers} if headers else {}
            if schema_hint:
                schema = request["schema"]
                extra["extra_body"] = {"response_format": {"type": "json_object", "schema": schema}}
            async with self._limiter():
                self._check_budget()  # again: the budget may have been spent while this call queued
                with recording_attempts() as attempts:
                    started = time.perf_counter()
                    try:
                        reasks = self._reask_policy(max_retries, attempts, params["max_tokens"])
                        value, _ = await backend.structured.chat.completions.create_with_completion(
                            response_model=response_model, max_retries=reasks, **params, **extra
                        )
                    except InstructorError as exc:
                        # Retries exhausted, or a reply instructor cannot use at all (e.g. cut
                        # off by max_tokens): a typed, recorded error -- unless an HTTP failure
                        # caused it.
                        latency = time.perf_counter() - started
                        if (cut := self._cut_prompt(attempts, prompt_len, latency, tag)) is not None:
                            raise cut from exc  # an answer to a cut prompt: not the model's failure
                        error = self._error(exc, attempts)
                        if isinstance(error, ContextLengthError) and any(
                            a.get("outcome") == "ok" for a in attempts
                        ):
                            # A reply came back and did not validate; asking again, with that reply
                            # and its errors added, did not fit: the model's output was unusable
                            # (a retriever's fail), not a prompt sized past the window (an error).
                            raise self._invalid_output(
                                exc, response_model, latency, tag, attempts, prompt_len,
                                params["max_tokens"], reask_refused=True,
                            ) from exc
                        if error is not exc:
                            raise self._failed(exc, attempts, latency, prompt_len, tag) from exc
                        raise self._invalid_output(
                            exc, response_model, latency, tag, attempts, prompt_len, params["max_tokens"]
                        ) from exc
                    except Exception as exc:
                        latency = time.perf_counter() - started
                        raise self._failed(exc, attempts, latency, prompt_len, tag) from exc
                    except asyncio.CancelledError:
                        self._cancelled(attempts, time.perf_counter() - started, prompt_len, tag)
                        raise
                    latency = time.perf_counter() - started
            if (cut := self._cut_prompt(attempts, prompt_len, latency, tag)) is not None:
                raise cut
            usage = self._attempt_usage(attempts, latency, prompt_len)
            value = _as_exact_type(value, response_model)
            live_value.append(value)
            return {
                "value": value.model_dump(mode="json"),
                "usage": usage.model_dump(),
                "unreported": self._charge_unreported(attempts, prompt_len),
                # one validation attempt per completion instructor received: the "ok" HTTP attempts
                "attempts": max(sum(1 for a in attempts if a.get("outcome") == "ok"), 1),
                "http_attempts": attempts,
            }

        reply, source = await self._resolve(key, "structured", request, tag, live)
        cached = source != "live"
        usage = Usage.model_validate(reply["usage"])
        unreported = _sent_unreported(reply, source)
        record = self._record(usage, tag, cached=cached, shared=source == "shared", unreported=unreported)
        value = live_value[0] if live_value and not cached else response_model.model_validate(reply["value"])
        return StructuredResponse[response_model](  # type: ignore[valid-type]
            value=value,
            usage=record,
            attempts=reply["attempts"],
            http_attempts=reply.get("http_attempts") or [],
        )

    def _invalid_output(
        self,
        exc: Any,
        response_model: type[BaseModel],
        latency: float,
        tag: dict[str, Any] | None,
        attempts: list[dict[str, Any]],
        prompt_len: int,
        max_tokens: int,
        *,
        reask_refused: bool = False,
    ) -> LLMError:
        """:class:`OutputTruncated` if the last reply stopped at ``max_tokens``, else
        :class:`StructuredOutputError` carrying the validation messages of the last attempt.
        ``reask_refused``: the last attempt, a re-ask, was refused as too long for the context."""
        last = getattr(exc, "last_completion", None)
        finish = finish_reason(last) or (attempts[-1].get("finish_reason") if attempts else None)
        if not attempts:  # a transport that records nothing: fall back on instructor's count
            n = int(getattr(exc, "n_attempts", 0) or 1)
            attempts = [{"outcome": "ok", "usage": None} for _ in range(n)]
        usage = self._attempt_usage(attempts, latency, prompt_len)
        if not any(a.get("usage") for a in attempts):  # instructor's own sum, when it has one
            total = getattr(exc, "total_usage", None) or getattr(last, "usage", None)
            if hasattr(total, "model_dump"):
                reported = _usage(total.model_dump(mode="json"), latency, calls=usage.calls)
                usage = reported
        raw = raw_reply(last)
        n_validations = int(getattr(exc, "n_attempts", 0) or len(attempts) or 1)
        refused = ""
        if reask_refused:
            n_validations = sum(1 for a in attempts if a.get("outcome") == "ok")
            window = f" ({self.context_window:,} tokens)" if self.context_window else ""
            refused = (f"; asking again, with that reply and its errors added, did not fit the model's "
                       f"context window{window}: the server refused the longer prompt")  # fmt: skip
            replies = [a for a in attempts if a.get("outcome") == "ok"]
            finish = replies[-1].get("finish_reason") if replies else None
        said = "finish_reason: length"
        cut, at_window = self._cut_reply(attempts, max_tokens, raw)
        if cut is not None and finish != "length":  # llama-cpp-python: "tool_calls" of a cut tool call
            finish, said = "length", f"{cut}; the server said finish_reason {finish!r}"
        elif cut is not None and at_window and finish == "length":
            said = f"{said}; {cut}"
        if finish == "length":
            kind: type[LLMError] = OutputTruncated
            cap = f"max_tokens={max_tokens}"
            if at_window:  # llama-server stops a reply where the window ends, below the cap sent
                cap = f"the end of the context window, before max_tokens={max_tokens}"
            elif (short := _short_of_cap(attempts, max_tokens)) is not None:  # a window not known here
                cap = f"after {short[1]:,} completion tokens, before max_tokens={max_tokens}"
                said += (f"; the server stopped it below the cap, as at the end of a context window: "
                         f"{short[0]:,} prompt and {short[1]:,} completion tokens; pageindex doctor "
                         f"--probe-context finds the window")  # fmt: skip
            if "max_tokens" in (attempts[-1].get("adapted") or []):
                sent = max_tokens + REASONING_ROOM
                cap = f"max_completion_tokens={sent} ({max_tokens} + {REASONING_ROOM} for reasoning)"
            reasoning = _reasoning_tokens(attempts[-1].get("usage"))
            if reasoning:
                said += f"; {reasoning:,} of its tokens were the model's hidden reasoning"
            cut_at = cap if cap.startswith("after ") else f"at {cap}"
            message = (
                f"{self.spec}: the reply was cut {cut_at} ({said}) "
                f"before it was a complete {response_model.__name__}{refused}"
            )
        else:
            kind = StructuredOutputError
            message = (
                f"{self.spec}: reply did not validate as {response_model.__name__} after "
                f"{n_validations} attempt(s) ({len(attempts)} HTTP request(s)): "
                f"{self._spec.redact(validation_messages(exc))}{refused}"
            )
        unreported = self._charge_unreported(attempts, prompt_len)
        record = self._record(usage, tag, error=kind.kind, unreported=unreported)
        error = kind(message, raw=raw, usage=record)
        error.attempts = list(attempts)  # type: ignore[attr-defined]
        return error

    def _reask_policy(self, max_retries: int, attempts: list[dict[str, Any]], max_tokens: int) -> Any:
        """instructor's own re-asks (up to ``max_retries`` after a reply that does not parse or
        validate), except after a reply cut at ``max_tokens`` (:meth:`_cut_reply`): asked again with the
        same cap, a model that ran out of room runs out again (a tiny model on llama.cpp rambled to 1,024
        tokens three times, 450 s, before the error it would have met at once)."""
        from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_attempt
        from tenacity.stop import stop_base

        class _AfterACut(stop_base):
            def __call__(inner, retry_state: Any) -> bool:  # noqa: N805
                last = attempts[-1] if attempts else {}
                cut, _ = self._cut_reply(attempts, max_tokens, None)
                return last.get("finish_reason") == "length" or cut is not None

        return AsyncRetrying(
            stop=stop_after_attempt(max(max_retries, 0) + 1) | _AfterACut(),
            retry=retry_if_exception_type(REASK_ERRORS), reraise=True,
        )  # fmt: skip

    def _cut_reply(
        self, attempts: list[dict[str, Any]], max_tokens: int, raw: str | None
    ) -> tuple[str | None, bool]:
        """How the last reply shows it was cut whatever its ``finish_reason`` says: as many completion
        tokens as ``max_tokens``, or prompt and completion filling the known context window (a server
        lowers the cap to what the window leaves; the second value says so); None when it does not, or
        when its text (``raw``) is whole JSON: a complete reply that happens to use exactly the cap was
        not cut, and its validation errors are what went wrong."""
        if raw is not None and _whole_json(raw):
            return None, False
        last = _last_reply_usage(attempts)
        if last is None:
            return None, False
        prompt, completion, adapted = last
        if adapted:  # sent as max_completion_tokens, with room
            max_tokens += REASONING_ROOM
        if completion >= max_tokens:
            return f"{completion:,} completion tokens", False
        window = self.context_window
        if window and completion and prompt + completion >= window:
            filled = f"{prompt:,} prompt and {completion:,} completion tokens fill the {window:,}-token"
            filled += " window"
            return filled, True
        return None, False

    async def aclose(self) -> None:
        """Close this event loop's HTTP connections (optional; they are also dropped with the loop)."""
        backend = self._backends.pop(asyncio.get_running_loop(), None)
        if backend is not None:
            await backend.sdk.close()

    # ------------------------------------------------------------------ preflight
    def probe_timeout(self) -> float:
        """How long the preflight and the metadata probes wait: at most :data:`PROBE_TIMEOUT_S` for a
        remote API (an answer to ``GET /models`` is quick, or the endpoint is wrong), the call timeout
        for a server on this machine, which may still be computing a request a previous (killed or
        resumed) run abandoned and answers nothing else until it is done."""
        if is_loopback(self._spec.base_url):
            return self.timeout
        return min(self.timeout, PROBE_TIMEOUT_S)

    async def check(self) -> None:
        """Fail fast with :class:`LLMConfigError` if the endpoint is unreachable or rejects the key
        (``replay``: if the cache file is missing). Call before starting a run."""
        if self.replay_only and (self.provider.remote or self.provider.replay_only):
            if self.cache is None or not self.cache.path.exists():
                where = self.cache.path if self.cache is not None else "(none)"
                raise LLMConfigError(
                    f"{self.spec}: replay needs a recorded cache, but {where} does not exist"
                )
            return
        self.preflight_result = await self.provider.preflight(timeout=self.probe_timeout())
        window, _ = context_window_from_metadata(self.preflight_result.metadata)
        if window is not None and not self._limits["window"]:
            # the model's /models entry, read once here: discovery need not fetch it again, so it
            # is kept for a replay here too (it was not: a replay of a llama-server recording missed)
            self._limits.update(window=window, source="server metadata")
            self._keep_window(window, "server metadata")




def _sent_unreported(reply: dict[str, Any], source: str) -> tuple[int, int]:
    """The attempts without usage of a reply this caller sent (``live``), as its ``live()`` charged
    them; a reply the cache or a call in flight answered sent none (its recording's are not this
    run's)."""
    if source != "live":
        return 0, 0
    count, tokens = reply.get("unreported") or (0, 0)
    return int(count), int(tokens)


def _server_computed(attempt: dict[str, Any]) -> bool:
    """The server took the attempt's request and may have computed it: it did not refuse it with an
    HTTP error status, and the connection was made."""
    outcome = str(attempt.get("outcome", ""))
    return outcome != "connection" and not outcome.startswith("http_")


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


def _reasoning_tokens(usage: Any) -> int:
    """The hidden reasoning tokens a reply's usage counts in its completion tokens (OpenAI's
    ``completion_tokens_details.reasoning_tokens``), 0 when it says none."""
    details = usage.get("completion_tokens_details") if isinstance(usage, dict) else None
    value = details.get("reasoning_tokens") if isinstance(details, dict) else None
    return value if isinstance(value, int) and value > 0 else 0


def _as_exact_type(value: Any, response_model: type[T]) -> T:
    """instructor may hand back an instance of a subclass it derived from ``response_model``;
    return a plain ``response_model`` with the same (already validated) field values."""
    if type(value) is response_model:
        return value
    fields = {name: getattr(value, name) for name in response_model.model_fields}
    return response_model.model_construct(_fields_set=set(value.model_fields_set), **fields)



def _failure_record(exc: LLMError) -> dict[str, Any] | None:
    """What the cache keeps of a call's final failure (None if it is not recorded: config errors,
    budget, replay misses, and failures that were themselves reproduced)."""
    if exc.cached or not isinstance(exc, tuple(_RECORDED_ERRORS.values())):
        return None
    usage = None
    if exc.usage is not None:
        usage = Usage.model_validate(exc.usage.model_dump(include=set(Usage.model_fields))).model_dump()
    return {
        "kind": exc.kind,
        "type": type(exc).__name__,
        "message": str(exc),
        "raw": exc.raw[:4000] if exc.raw else None,
        "usage": usage,
    }


def _whole_json(text: str) -> bool:
    """Whether ``text`` (a reply's content, or its tool calls' arguments one after another, perhaps
    in a code fence) is complete JSON: a reply cut at ``max_tokens`` is not."""
    text = text.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text[: text.rfind("```")] if text.rstrip().endswith("```") else text
    decoder, at, values = json.JSONDecoder(), 0, 0
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at == len(text):
            return values > 0
        try:
            _, at = decoder.raw_decode(text, at)
        except ValueError:
            return False
        values += 1
