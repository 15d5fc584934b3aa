"""Data shapes of the LLM layer: messages, tool specs, replies, usage and errors.

Every retriever and judge talks to models through :class:`pageindex.llm.client.LLMClient`
(see that module); these types are what crosses the boundary.
"""

from __future__ import annotations

from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, Field

from pageindex.llm.redact import redact

Role = Literal["retriever", "judge", "summarizer"]
T = TypeVar("T", bound=BaseModel)


class ToolCall(BaseModel):
    """A tool call the model asked for. ``arguments`` is the parsed JSON object;
    ``raw_arguments`` the text the model sent (kept for debugging malformed calls)."""

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    raw_arguments: str = ""
    # Set by the client when the call is unusable: malformed JSON arguments, an unknown tool,
    # or arguments that do not match the tool's JSON schema. ``arguments`` is then ``{}`` or
    # whatever parsed; ``raw_arguments`` keeps exactly what the model sent.
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def raise_for_error(self) -> None:
        """Raise :class:`ToolCallError` (raw reply kept) if the model's call was unusable."""
        if self.error is not None:
            raise ToolCallError(f"tool call {self.name!r}: {self.error}", raw=self.raw_arguments)


class Message(BaseModel):
    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None
    name: str | None = None


class ToolSpec(BaseModel):
    """A function the model may call; ``parameters`` is a JSON schema object."""

    name: str
    description: str
    parameters: dict[str, Any]


class Usage(BaseModel):
    """Usage of one model call (or a sum of calls when ``calls`` > 1)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    calls: int = 0
    latency_s: float = 0.0
    cost_usd: float | None = 0.0  # None = unknown (a model missing from the pricing table)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        cost = None if self.cost_usd is None or other.cost_usd is None else self.cost_usd + other.cost_usd
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
            calls=self.calls + other.calls,
            latency_s=self.latency_s + other.latency_s,
            cost_usd=cost,
        )


class UsageRecord(Usage):
    """One call as the ledger keeps it."""

    model: str
    role: Role
    tag: dict[str, Any] = Field(default_factory=dict)
    cached: bool = False  # served from the on-disk cache, or shared (below); the budget does not count it
    # answered by an identical call in flight at the same time (sent once; this caller waited for it live)
    shared: bool = False
    error: str | None = None  # error kind when the call failed after spending tokens (e.g. "invalid_reply")
    # attempts the server took but reported no usage for (timed out, cut by the caller): the server read
    # their prompts, whose estimate is here, not in prompt_tokens (the budget counts it)
    unreported_attempts: int = 0
    estimated_prompt_tokens: int = 0


class ChatResponse(BaseModel):
    content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    finish_reason: str | None = None
    usage: UsageRecord
    raw: dict[str, Any] | None = None
    # One dict per HTTP attempt (outcome, status, latency_s, usage or None, finish_reason).
    attempts: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def bad_tool_calls(self) -> list[ToolCall]:
        """Tool calls the client flagged as unusable (see :attr:`ToolCall.error`)."""
        return [call for call in self.tool_calls if call.error is not None]


class StructuredResponse(BaseModel, Generic[T]):
    value: T
    usage: Usage  # summed over every HTTP attempt, validation re-asks and retries included
    attempts: int = 1  # validation attempts (instructor's re-asks)
    http_attempts: list[dict[str, Any]] = Field(default_factory=list)  # every HTTP request made


# ---------------------------------------------------------------------------- errors
class LLMError(Exception):
    """Base of every error the LLM layer raises. Messages never contain API keys: the client masks
    the keys it knows, and as a last net anything shaped like a credential (``sk-...`` keys, URL
    user-info, ``?api-key=`` values) is masked here, in the message and in ``raw``.

    ``cached`` is True when the error was not met live but reproduced from the cache (``replay``
    of a recorded failure) or shared from an identical request in flight at the same time."""

    kind = "llm_error"

    def __init__(
        self, message: str, *, raw: str | None = None, usage: Usage | None = None, cached: bool = False
    ):
        super().__init__(redact(message))
        self.raw = redact(raw) if raw else raw
        self.usage = usage  # tokens spent before the failure, when known
        self.cached = cached
        self.attempts: list[dict[str, Any]] = []  # the HTTP attempts the failed call made


class LLMConfigError(LLMError):
    """Bad model spec, missing API key, unreachable server: raised before work starts."""

    kind = "config"


class EndpointUnreachableError(LLMConfigError):
    """The endpoint gave no HTTP answer at all: refused, reset, no answer within the timeout. ``reason``
    says what was met without the endpoint's name ("connection refused"); ``timed_out`` whether it was
    the silence of a server that took the connection. An HTTP answer, even an error status, is another
    :class:`LLMConfigError`: the server is there."""

    def __init__(self, message: str, *, reason: str, timed_out: bool = False) -> None:
        super().__init__(message)
        self.reason = redact(reason)
        self.timed_out = timed_out


class BaseURLError(LLMConfigError):
    """A base URL no server can have (no http(s) scheme, no host, a port outside 1-65535): its message
    names the URL, so a command says it as it is rather than as a mistake in the model option."""


class LLMCallError(LLMError):
    """A call failed after the retry cap (429/5xx/timeouts/connection errors): the infrastructure
    failed, not the model. ``kind`` names the cause (``http_<status>``, ``timeout``,
    ``context_length``, ``connection`` when the server could not be reached; ``call_failed`` for
    another cause)."""

    kind = "call_failed"

    def __init__(
        self,
        message: str,
        *,
        raw: str | None = None,
        usage: Usage | None = None,
        cached: bool = False,
        kind: str | None = None,
    ):
        super().__init__(message, raw=raw, usage=usage, cached=cached)
        if kind is not None:
            self.kind = kind


class HTTPStatusError(LLMCallError):
    """The server answered an HTTP error status (after the retries for 408/409/429/5xx); the kind
    is ``http_<status>`` and the message carries the server's own message."""

    kind = "http_error"

    def __init__(self, message: str, *, status: int | None = None, **kwargs: Any):
        kwargs.setdefault("kind", f"http_{status}" if status else None)
        super().__init__(message, **kwargs)
        self.status = status


class ContextLengthError(LLMCallError):
    """The prompt (plus the requested completion) does not fit the model's context window.
    Never retried: the same request would fail again."""

    kind = "context_length"


class LLMTimeout(LLMCallError):
    """No reply within the client's timeout (per HTTP attempt), after the retries."""

    kind = "timeout"


class MalformedReply(LLMCallError):
    """HTTP 200 but no usable chat completion: a truncated or non-JSON body, or JSON of the wrong
    shape (no ``choices``). Retried like a 5xx within the same ``max_retries`` cap; ``raw`` keeps
    the body of the last attempt."""

    kind = "malformed_reply"


class UnusableReply(LLMError):
    """The model answered, but its reply cannot be used as the structured reply asked for (cut
    off, or never valid): a retriever's ``fail``, not an ``error``. Catch this one name."""


class OutputTruncated(UnusableReply):
    """The model's reply was cut at ``max_tokens`` (``finish_reason: length``) before it was a
    usable structured reply: the model answered, but unusably (a ``fail``, not an ``error``)."""

    kind = "output_truncated"


class StructuredOutputError(UnusableReply):
    """The model's reply never validated against the response model; the message carries the
    validation messages of the last attempt."""

    kind = "invalid_reply"


class ToolCallError(LLMError):
    """The model called an unknown tool or passed arguments of the wrong type."""

    kind = "bad_tool_call"


class ReplayMiss(LLMError):
    """Replay-only mode and the request is not in the cache."""

    kind = "replay_miss"


class BudgetExceeded(LLMError):
    """The run's token or dollar budget is spent; callers stop starting new work."""

    kind = "budget"


# Kinds written by older versions, read as today's names (runs, caches, ledgers).
LEGACY_ERROR_KINDS = {"invalid_output": "invalid_reply"}
# Kinds where the model answered, but unusably: a retriever's ``fail``, not an ``error``.
MODEL_FAILURE_KINDS = frozenset({"invalid_reply", "output_truncated", "bad_tool_call"})


def error_kind_name(kind: str | None) -> str | None:
    """Today's name of an error kind (older names are translated; ``None`` stays ``None``)."""
    return LEGACY_ERROR_KINDS.get(kind, kind) if kind else kind


def is_model_failure(kind: str | None) -> bool:
    """True for kinds where the model answered unusably (status ``fail``); False for
    infrastructure failures (HTTP, timeout, context overflow: status ``error``)."""
    return error_kind_name(kind) in MODEL_FAILURE_KINDS
