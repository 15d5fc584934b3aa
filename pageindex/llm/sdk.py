"""The wire client every provider goes through: the OpenAI SDK and instructor.

:class:`~pageindex.llm.client.LLMClient` is the cross-cutting layer (cache and single-flight, budget,
usage, limits); this module owns what is particular to speaking the chat-completions API through the
OpenAI SDK: opening one SDK client and its instructor wrapper per event loop
(:func:`open_session`, over the provider's transport and :mod:`pageindex.llm.http`'s checks, which
record every HTTP attempt), reading an SDK completion (:func:`finish_reason`, :func:`raw_reply`,
:func:`validation_messages`) and translating SDK and instructor exceptions into the layer's typed
errors, each naming its cause (:func:`translate_error`). A provider never needs to import it:
providers decide where requests go (:meth:`~pageindex.llm.providers.base.Provider.transport`), this
module how they are spoken.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import httpx2
import instructor
import openai
from instructor.core.exceptions import InstructorError
from pydantic import ValidationError

from pageindex.llm.http import (
    MALFORMED_HEADER,
    TIMEOUT_HEADER,
    UPSTREAM_GONE,
    ConnectionFailures,
    connection_failures,
    is_context_overflow,
    key_refusal,
    make_http_client,
    proxy_timeout,
    server_message,
    shorten,
    stated_context_window,
    transport_failure,
    upstream_unreachable,
)
from pageindex.llm.providers.base import PassThrough, ProviderFailure
from pageindex.llm.redact import redact_library_logs
from pageindex.llm.types import (
    ContextLengthError,
    HTTPStatusError,
    LLMCallError,
    LLMConfigError,
    LLMError,
    LLMTimeout,
    MalformedReply,
)

if TYPE_CHECKING:
    from pageindex.llm.client import LLMClient


def _reask_errors() -> tuple[type[BaseException], ...]:
    """The errors after which instructor asks the model again (a reply that does not parse or
    validate): its own list where this version has one, else pydantic's and JSON's."""
    try:
        from instructor.v2.core.retry import _RETRYABLE_PARSE_ERRORS
    except ImportError:  # pragma: no cover - another instructor layout
        return (ValidationError, json.JSONDecodeError)
    return tuple(_RETRYABLE_PARSE_ERRORS)


REASK_ERRORS = _reask_errors()

__all__ = [
    "InstructorError",
    "SdkSession",
    "finish_reason",
    "is_context_overflow",
    "open_session",
    "raw_reply",
    "translate_error",
    "validation_messages",
]

class SdkSession:
    """The SDK client (and its instructor wrapper) of one event loop."""

    def __init__(self, sdk: openai.AsyncOpenAI, json_mode: bool) -> None:
        self.sdk = sdk
        self.structured = instructor.from_openai(
            sdk, mode=instructor.Mode.JSON if json_mode else instructor.Mode.TOOLS
        )


def open_session(client: LLMClient) -> SdkSession:
    """A new SDK session for ``client`` in the running event loop: its provider's key and
    transport, the checking HTTP client, the base URL (a query in it goes on every request),
    timeout, retries and structured-output mode."""
    api_key = client.provider.sdk_key()
    inner = client.provider.transport()
    secrets = client.model_spec.secrets()
    redact_library_logs(secrets)
    http_client = make_http_client(secrets, inner, retry_timeouts=client.retry_timeouts)
    # A query in the base URL (``?api-key=...``, ``?api-version=...``, as Azure-style proxies
    # want) goes on every request: the SDK would otherwise append paths after it.
    url = httpx2.URL(client.base_url or "")
    sdk = openai.AsyncOpenAI(
        api_key=api_key,
        base_url=str(url.copy_with(query=None)) if url.query else client.base_url,
        default_query=dict(url.params.multi_items()) or None,
        timeout=client.timeout,
        max_retries=client.max_retries,
        http_client=http_client,
    )
    return SdkSession(sdk, client.json_mode)


def translate_error(
    client: LLMClient, exc: BaseException, attempts: list[dict[str, Any]] | None = None
) -> BaseException:
    """Translate an SDK / instructor / provider exception into the layer's typed errors, each
    naming its cause: ``timeout``, ``context_length``, ``http_<status>`` (with the server's
    own message, never cut mid-word), ``malformed_reply``, ``connection`` (no connection),
    ``call_failed`` (another cause).
    Anything else is returned unchanged."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, PassThrough):
            return seen.error
        if isinstance(seen, LLMError):
            return seen
        if isinstance(seen, openai.APIError):
            exc = seen
            break
        seen = seen.__cause__ or seen.__context__
    where = client.provider.where()
    n = len(attempts) if attempts else client.max_retries + 1
    attempts_text = f"after {n} attempt(s)"
    if isinstance(exc, openai.APITimeoutError) or (
        isinstance(exc, openai.APIStatusError) and TIMEOUT_HEADER in exc.response.headers
    ):
        retry = "" if client.retry_timeouts else " (timeouts are not retried for this server)"
        return LLMTimeout(f"{where}: no reply within {client.timeout:g}s {attempts_text}{retry}")
    if isinstance(exc, openai.APIConnectionError) and isinstance(exc.__cause__, ProviderFailure):
        return LLMCallError(f"{where}: {exc.__cause__} ({attempts_text})", kind="provider_error")
    if isinstance(exc, openai.APIConnectionError):
        failures = connection_failures(attempts)
        if failures is None:
            failure = transport_failure(exc)
            failures = ConnectionFailures(
                said=f"{failure.said} ({attempts_text})", connected=failure.connected, went_away=False
            )
        if failures.connected:
            return LLMCallError(f"{where}: no reply: {failures.said}", kind="connection")
        return LLMCallError(f"{where}: cannot connect: {failures.said}", kind="connection")
    if isinstance(exc, openai.APIStatusError) and MALFORMED_HEADER in exc.response.headers:
        return MalformedReply(
            f"malformed reply from {where}: {exc.response.headers[MALFORMED_HEADER]} {attempts_text}",
            raw=exc.response.text[:2000],
        )
    if isinstance(exc, openai.APIStatusError):
        body = client.model_spec.redact(exc.response.text) if exc.response is not None else ""
        if (refused := key_refusal(exc.status_code, body)) is not None:
            return LLMConfigError(client.model_spec.credentials_rejected(exc.status_code) + refused)
        message = client.model_spec.redact(server_message(body) if body else shorten(exc.message, 600))
        if is_context_overflow(exc.status_code, message):
            window = _window_said(client, body or message)
            return ContextLengthError(
                f"{where}: the prompt does not fit the model's context{window}: "
                f"HTTP {exc.status_code}: {message}",
                raw=body[:2000],
            )
        proxied, after = proxy_timeout(exc.status_code, message)
        if proxied:  # the proxy gave up on its model server before pageindex's --timeout ran out
            own = f"its own timeout ({after:g}s)" if after is not None else "its own timeout"
            retry = "" if client.retry_timeouts else " (timeouts are not retried for this server)"
            return LLMTimeout(
                f"{where}: the proxy gave up waiting for the model server behind it (HTTP {exc.status_code} "
                f"{attempts_text}{retry}): {own} is shorter than pageindex's --timeout {client.timeout:g}s; "
                f"raise the proxy's timeout (LiteLLM: timeout in the model's litellm_params): {message}"
            )
        if upstream_unreachable(exc.status_code, message):
            # a proxy whose model server is gone: a connection failure, so that `bench run` asks whether the
            # endpoint is gone (it recorded an http_500 and went on)
            said = f"{UPSTREAM_GONE} (HTTP {exc.status_code} {attempts_text})"
            return LLMCallError(f"{where}: {said}: {message}", kind="connection")
        if isinstance(exc, openai.NotFoundError):
            return LLMConfigError(
                f"{where}: HTTP 404 -- unknown model {client.model!r} or wrong base URL ({message})"
            )
        retried = exc.status_code in (408, 409, 429) or exc.status_code >= 500
        return HTTPStatusError(
            f"{where}: HTTP {exc.status_code}{' ' + attempts_text if retried else ''}: {message}",
            status=exc.status_code,
            raw=body[:2000],
        )
    if isinstance(exc, openai.OpenAIError):
        return LLMCallError(f"{where}: {shorten(client.model_spec.redact(str(exc)), 600)}")
    if isinstance(exc, json.JSONDecodeError):
        return LLMCallError(f"{where}: the reply is not JSON ({exc.msg})", raw=exc.doc[:2000])
    return exc


def cut_prompt_error(client: LLMClient, read: int, prompt_chars: int) -> ContextLengthError:
    """A reply to a prompt the server cut to fit a smaller window without saying so (Ollama past its
    context length): it reported reading ``read`` tokens of ``prompt_chars`` characters, far fewer
    than any tokenizer makes of so much text. The reply answered another prompt, so it is not used."""
    return ContextLengthError(
        f"{client.provider.where()}: the server read only {read:,} tokens of a {prompt_chars:,}-character "
        "prompt and answered without an error: it cut the prompt to fit a smaller context window "
        "(Ollama does so past its context length; 'ollama ps' shows it)"
        + _window_said(client, "", stated=read)
    )


def _window_said(client: LLMClient, error: str, *, stated: int | None = None) -> str:
    """The window the prompt was sized for, and the server's where its error states another (or
    ``stated``): a llama.cpp server started with a smaller context than the model's (gemma-3-270m at
    8192 where the table of known models says 32768) refused every prompt, and the message named only
    the 32768."""
    assumed = client.context_window
    stated = stated if stated is not None else stated_context_window(error)
    source = f" ({client.context_window_source})" if client.context_window_source else ""
    if not assumed and stated is None:
        return ""
    if stated is None and client.context_window_source == "known model table":
        return (
            f" (context window {assumed}{source}; the server's may be smaller: pageindex doctor "
            "--probe-context finds it, then give --context-window N)"
        )
    if stated is None or stated == assumed:
        # The window is right: the prompt outgrew what it was sized for (a validation re-ask carries the
        # model's reply, a judge prompt the answer); say what leaves more room, not just the figure.
        said = ", as the server says" if stated == assumed else ""
        return (
            f" (context window {assumed}{source}{said}: pageindex sized the prompt for it, but this one "
            "came out longer; a server with a larger context (given as --context-window), or shorter "
            "replies (--opt RETRIEVER.max_tokens=N), leave more room)"
        )
    was = f"not {assumed} as assumed{source}" if assumed else "which pageindex did not know"
    kept = getattr(client, "context_window_kept", None)
    if kept:  # a resume refuses --context-window: say what can be done
        earlier = f"at least {assumed} tokens" if assumed else "the window it had"
        return (
            f": the server's window is {stated} tokens, {was}; {kept}: restart the server with a context "
            f"of {earlier}, or start a new run with --context-window {stated}"
        )
    return f": the server's window is {stated} tokens, {was}; give --context-window {stated}"


def validation_messages(exc: Any, *, limit: int = 600) -> str:
    """The validation messages of the last failed attempt (``decision "answer" needs a non-empty
    "answer"``), not just pydantic's "1 validation error for X" headline."""
    found: Any = None
    for attempt in reversed(list(getattr(exc, "failed_attempts", None) or [])):
        found = getattr(attempt, "exception", None)
        if found is not None:
            break
    found = found or exc
    seen: Any = found
    while seen is not None and not hasattr(seen, "errors"):
        seen = seen.__cause__ or seen.__context__
    if seen is not None and callable(getattr(seen, "errors", None)):
        try:
            errors = seen.errors()
        except Exception:  # pragma: no cover - not a pydantic error after all
            errors = None
        if errors:
            parts = []
            for err in errors:
                loc = ".".join(str(x) for x in err.get("loc", ()))
                msg = str(err.get("msg", "")).removeprefix("Value error, ")
                parts.append(f"{loc}: {msg}" if loc else msg)
            return shorten("; ".join(parts), limit)
    lines = [line.strip() for line in str(found).splitlines() if line.strip()]
    useful = [line for line in lines if "validation error" not in line and "errors.pydantic.dev" not in line]
    return shorten("; ".join(useful or lines) or "validation failed", limit)


def finish_reason(completion: Any) -> str | None:
    try:
        return completion.choices[0].finish_reason
    except (AttributeError, IndexError, TypeError):
        return None


def raw_reply(completion: Any) -> str | None:
    if completion is None:
        return None
    try:
        message = completion.choices[0].message
    except (AttributeError, IndexError):
        return str(completion)[:4000]
    if message.tool_calls:
        return "\n".join(call.function.arguments for call in message.tool_calls)
    return message.content
