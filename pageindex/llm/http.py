"""The HTTP client under the OpenAI SDK: connection pool, key redaction of error replies, and
detection of malformed chat completions.

Redaction: some servers echo the API key they were given in their 401 body ("Incorrect API key
provided: sk-..."). The SDK puts that body into its exception text, and instructor logs it. To
keep keys out of every message and log, error replies (status >= 400) pass through
:class:`RedactingTransport`, which rewrites their body with the credentials (the key, and any
inside the base URL) and anything shaped like an OpenAI key masked.

Malformed replies: a ``200`` to ``POST .../chat/completions`` whose body is not JSON (truncated,
an HTML page) or is JSON without a usable ``choices[0].message`` is turned into a ``502`` carrying
the header ``x-pageindex-malformed: <reason>`` and the (redacted) body. The SDK's own retry
machinery then retries it like any 5xx -- within the same ``max_retries`` cap, so a call never
makes more than ``1 + max_retries`` HTTP attempts -- and the client reports the final one as
:class:`~pageindex.llm.types.MalformedReply` with the raw body kept. Valid completions pass
unchanged, with their parsed JSON in ``response.extensions["pageindex.json"]`` so the client does
not parse them twice.

Attempts: every HTTP attempt made inside a :func:`recording_attempts` block is recorded (outcome,
status, latency, usage when the server reported it, ``finish_reason``), retries and timed-out
attempts included, so the client can count each one in the trace and the usage.

Timeouts without retry: with ``retry_timeouts=False`` an attempt that times out is answered with a
synthetic ``504`` carrying ``x-should-retry: false`` and ``x-pageindex-timeout``: the SDK does not
retry it (a single-slot local server would still be computing the abandoned request, and the
retry would queue behind it) and the client reports it as a timeout.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx2
from pydantic import BaseModel

from pageindex.llm.redact import redact

# Same pool the SDK uses by default.
CONNECTION_LIMITS = httpx2.Limits(max_connections=1000, max_keepalive_connections=100)
MALFORMED_HEADER = "x-pageindex-malformed"
MALFORMED_STATUS = 502
PARSED_JSON = "pageindex.json"
TIMEOUT_HEADER = "x-pageindex-timeout"
TIMEOUT_STATUS = 504
TIMEOUT_REASON = "Client Timeout (pageindex gave up waiting; no server reply)"
_attempts: contextvars.ContextVar[list[dict[str, Any]] | None] = contextvars.ContextVar(
    "pageindex_http_attempts", default=None
)


class Attempts(list[dict[str, Any]]):
    """The attempts of one call; ``in_flight``: an attempt was handed to the transport and has not
    come back (a call cancelled then was sent; one cancelled before it, or in a retry's back-off
    sleep, was not: the server never saw that attempt)."""

    in_flight: bool = False


@contextlib.contextmanager
def recording_attempts() -> Iterator[Attempts]:
    """Collect one dict per HTTP attempt made (in this task) inside the block."""
    seen = Attempts()
    token = _attempts.set(seen)
    try:
        yield seen
    finally:
        _attempts.reset(token)


def _mark_sent(request: httpx2.Request, seen: Attempts) -> None:
    """Set ``seen.in_flight`` once the request's body is written (httpcore's trace events): from then
    until the attempt is noted, a cancel cuts a request the server has; before it (a connection being
    made, a pooled one awaited) the server has nothing to compute."""
    earlier = request.extensions.get("trace")

    async def trace(name: str, info: dict[str, Any]) -> None:
        if name.endswith("send_request_body.complete"):
            seen.in_flight = True
        if earlier is not None:
            await earlier(name, info)

    request.extensions = {**request.extensions, "trace": trace}


def _note(request: httpx2.Request, started: float, outcome: str, **fields: Any) -> None:
    seen = _attempts.get()
    if seen is None or request.method != "POST":
        return
    seen.append({"outcome": outcome, "latency_s": round(time.perf_counter() - started, 4), **fields})
    if isinstance(seen, Attempts):
        seen.in_flight = False


class TransportFailure(BaseModel):
    """What an HTTP request that got no reply met: ``said`` in a few words, and whether a connection
    was ever made (``connected``: False for a refusal, a connect timeout or another failure to
    connect; True for a connection reset, closed or cut while the server computed its reply)."""

    said: str
    connected: bool


def transport_failure(exc: BaseException) -> TransportFailure:
    """What an HTTP request that got no reply met, from the exception (``httpx`` or ``httpx2``, by
    class name) and the OS error under it: a server that is not there refuses the connection; one
    that dies while it computes the reply closes or resets a connection it had accepted; one that
    hangs lets the request time out. These are different facts about a server (a killed llama.cpp
    server's cut request was reported as "cannot connect"), so each is said."""
    chain: list[BaseException] = []
    seen: BaseException | None = exc
    while seen is not None and len(chain) < 10:
        chain.append(seen)
        seen = seen.__cause__ or seen.__context__
    names = {type(e).__name__ for e in chain}
    text = " ".join(str(e) for e in chain).lower()
    if any(isinstance(e, ConnectionRefusedError) for e in chain) or "connection refused" in text:
        return TransportFailure(said="connection refused", connected=False)
    if "ConnectTimeout" in names:
        return TransportFailure(said="no connection within the timeout", connected=False)
    if "ConnectError" in names:
        detail = next((str(e) for e in chain[1:] if str(e)), "") or str(exc)
        said = f"could not connect ({shorten(detail, 120)})" if detail else "could not connect"
        return TransportFailure(said=said, connected=False)
    if any(isinstance(e, ConnectionResetError) for e in chain) or "reset by peer" in text:
        said = "the server reset the connection before its reply was complete"
    elif "without sending a response" in text:
        said = "the server closed the connection without replying"
    elif "RemoteProtocolError" in names and "complete message body" in text:
        said = "the server closed the connection in the middle of its reply"
    elif any("Timeout" in n for n in names):
        said = "no reply within the timeout"
    elif "WriteError" in names:
        said = "the connection broke while the request was sent"
    elif "ReadError" in names:
        said = "the connection broke while waiting for the reply"
    else:
        said = shorten(str(exc), 120) or type(exc).__name__
    return TransportFailure(said=said, connected=True)


class ConnectionFailures(BaseModel):
    """The transport failures of a call's attempts (:func:`connection_failures`): ``said`` in one
    line; ``connected``: some attempt reached the server (a reply, or a connection it cut);
    ``went_away``: a connection was refused after one had been made."""

    said: str
    connected: bool
    went_away: bool


def connection_failures(attempts: list[dict[str, Any]] | None) -> ConnectionFailures | None:
    """The transport failures of a call's attempts, in order, one run of equal ones at a time:
    ``the server closed the connection without replying (attempt 1), then connection refused
    (attempts 2-4): the server went away during the call``. None when no attempt failed so."""
    runs: list[list[Any]] = []  # [what, first attempt, last attempt]
    accepted = False  # a connection was made (a reply or a cut one) before a later refusal
    went_away = False
    for number, attempt in enumerate(attempts or [], 1):
        if attempt.get("outcome") != "connection":
            accepted = True
            continue
        what = str(attempt.get("error") or "no connection")
        refused = not attempt.get("connected", False)
        if refused and accepted:
            went_away = True
        if not refused:
            accepted = True
        if runs and runs[-1][0] == what and runs[-1][2] == number - 1:
            runs[-1][2] = number
        else:
            runs.append([what, number, number])
    if not runs:
        return None
    total = len(attempts or [])
    if len(runs) == 1 and runs[0][1] == 1 and runs[0][2] == total:
        said = f"{runs[0][0]} ({'all ' if total > 1 else ''}{total} attempt{'s' if total > 1 else ''})"
    else:
        said = ", then ".join(
            f"{what} (attempt{'s' if last > first else ''} {first}{f'-{last}' if last > first else ''})"
            for what, first, last in runs
        )
    said += ": the server went away during the call" if went_away else ""
    return ConnectionFailures(said=said, connected=accepted, went_away=went_away)


# How servers word a prompt that does not fit the context window (llama.cpp, vLLM, OpenAI, Ollama).
_CONTEXT_OVERFLOW = re.compile(
    r"context (window|length)|maximum context|n_ctx|context_length_exceeded|too many tokens"
    r"|prompt is too long|exceeds? the (available |model'?s? )?(maximum )?(context|input)|input is too long",
    re.IGNORECASE,
)


def is_context_overflow(status: int | None, message: str) -> bool:
    """Whether an HTTP error says the prompt did not fit the model's context window."""
    return status in (400, 413, 422, 500) and bool(_CONTEXT_OVERFLOW.search(message or ""))


# Where such an error states the server's window: vLLM, llama-cpp-python and OpenAI ("maximum context
# length is 8192 tokens"), llama.cpp ("exceed context window of 8192"; llama-server: "request (9024 tokens)
# exceeds the available context size (4096 tokens)", and its JSON error's "n_ctx": 4096), LM Studio ("The
# number of tokens to keep from the initial prompt is greater than the context length (n_keep: 10247 >=
# n_ctx: 4096)"; before, "... the model is loaded with context length of only 7866 tokens").
_STATED_WINDOW = re.compile(
    r"maximum context length is (\d[\d,]*)|context window of (\d[\d,]*)|\"?\bn_ctx\"?\s*:\s*(\d+)"
    r"|available context size \((\d[\d,]*) tokens\)|context length of only (\d[\d,]*)",
    re.IGNORECASE,
)


def _stated_figure(pattern: re.Pattern[str], text: str) -> int | None:
    """The figure (``4,096``: its groups' first that matched) ``pattern`` finds in ``text``, if any."""
    found = pattern.search(text or "")
    if found is None:
        return None
    return int(next(g for g in found.groups() if g).replace(",", ""))


def stated_context_window(text: str) -> int | None:
    """The context window (tokens) a server's context-overflow error states, if it states one."""
    return _stated_figure(_STATED_WINDOW, text)


# Where such an error states the refused request's own size: llama-server ("request (7090 tokens) exceeds
# ..."), OpenAI ("your messages resulted in 7090 tokens"), vLLM ("you requested 7091 tokens (7090 in the
# messages, 1 in the completion)": the messages' count), llama-cpp-python ("Requested tokens (7090) exceed
# context window of 4096").
_STATED_REQUEST = re.compile(
    r"\brequest \((\d[\d,]*) tokens\)|messages resulted in (\d[\d,]*) tokens|\((\d[\d,]*) in the messages"
    r"|requested tokens \((\d[\d,]*)\)",
    re.IGNORECASE,
)


def stated_request_tokens(text: str) -> int | None:
    """The prompt size (tokens) a server's context-overflow error says the refused request had, if it does."""
    return _stated_figure(_STATED_REQUEST, text)


# How a proxy says that the model server behind it could not be reached: LiteLLM's proxy (1.108.7) answers
# HTTP 500 "litellm.InternalServerError: InternalServerError: OpenAIException - Connection error. ... LiteLLM:
# model group 'gemma' failed ..." for an upstream that is down, or killed while it computed the reply.
_UPSTREAM_UNREACHABLE = re.compile(
    r"OpenAIException - Connection error|litellm\.APIConnectionError", re.IGNORECASE
)
UPSTREAM_GONE = "the proxy could not reach the model server behind it"


def upstream_unreachable(status: int | None, message: str) -> bool:
    """Whether an HTTP error is a proxy's saying that it could not reach the model server it forwards to."""
    return status in (500, 502, 503, 504) and bool(_UPSTREAM_UNREACHABLE.search(message or ""))


# A proxy whose own timeout for its model server ran out before the client's: LiteLLM's proxy (1.108.7, a
# ``timeout`` in its model's litellm_params) answers HTTP 408 "litellm.Timeout: APITimeoutError - Request
# timed out. Error_str: Request timed out. - timeout value=3.0, time taken=3.0 seconds ...".
_PROXY_TIMEOUT = re.compile(r"litellm\.Timeout\b", re.IGNORECASE)
_PROXY_TIMEOUT_VALUE = re.compile(r"timeout value=(\d+(?:\.\d+)?)", re.IGNORECASE)


def proxy_timeout(status: int | None, message: str) -> tuple[bool, float | None]:
    """Whether an HTTP error is a proxy's own timeout (LiteLLM's 408), and the timeout it says (seconds)."""
    if status not in (408, 504) or not _PROXY_TIMEOUT.search(message or ""):
        return False, None
    value = _PROXY_TIMEOUT_VALUE.search(message)
    return True, float(value.group(1)) if value else None


def key_refusal(status: int, text: str) -> str | None:
    """Whether an HTTP error refuses the request's credentials: "" for a 401 or 403, and for a LiteLLM
    proxy started with a ``master_key`` and no database, which answers every other key (the placeholder
    sent when none was given too) with HTTP 400 ``{"error": {"message": "No connected db.", "type":
    "no_db_connection"}}`` (litellm 1.108.7), what to add to the line that says so; None otherwise."""
    if status in (401, 403):
        return ""
    if status != 400:
        return None
    try:
        error = json.loads(text).get("error")
    except (ValueError, TypeError, AttributeError):
        return None
    if not isinstance(error, dict) or error.get("type") != "no_db_connection":
        return None
    said = server_message(text, limit=120)
    return (
        f' (the LiteLLM proxy answered "{said}": with a master_key and no database it takes its '
        "master key only)"
    )


def server_message(text: str, *, limit: int = 600) -> str:
    """The server's own message out of an error body: ``error.message`` / ``error`` / ``detail`` /
    ``message`` of a JSON body (FastAPI validation lists keep their ``msg`` and field), else the
    text; whitespace collapsed and, when longer than ``limit``, cut at a word boundary with "…"."""
    message: Any = text
    try:
        data = json.loads(text)
    except (ValueError, TypeError):
        data = None
    if isinstance(data, dict):
        found = data.get("error") or data.get("detail") or data.get("message")
        if isinstance(found, dict):
            found = found.get("message") or found.get("msg") or found
        if isinstance(found, list):  # FastAPI / pydantic validation errors
            parts = []
            for item in found:
                if isinstance(item, dict):
                    loc = ".".join(str(x) for x in item.get("loc", []) if x != "body")
                    parts.append(f"{loc}: {item.get('msg', '')}" if loc else str(item.get("msg", item)))
                else:
                    parts.append(str(item))
            found = "; ".join(parts)
        if found:
            message = found
    return shorten(" ".join(str(message).split()), limit)


def shorten(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters at a word boundary, with "…" when cut."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"
_DROP_HEADERS = {"content-encoding", "content-length", "transfer-encoding"}


def completion_problem(data: Any) -> str | None:
    """Why parsed JSON is not a usable ``chat.completion`` (None when it is)."""
    if not isinstance(data, dict):
        return f"expected a chat.completion object, got a JSON {type(data).__name__}"
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        error = data.get("error")
        if isinstance(error, dict):
            error = error.get("message")
        found = (
            "empty"
            if isinstance(choices, list)
            else ("missing" if choices is None else type(choices).__name__)
        )
        keys = ", ".join(sorted(map(str, data))[:8]) or "none"
        detail = f"; server error: {str(error)[:200]}" if error else f"; top-level keys: {keys}"
        return f"no choices (choices is {found}){detail}"
    first = choices[0]
    if not isinstance(first, dict) or not isinstance(first.get("message"), dict):
        return "choices[0] has no message object"
    return None


def parse_completion(content: bytes) -> tuple[Any, str | None]:
    """Parse a chat-completions body: ``(data, None)`` or ``(None, reason)``."""
    try:
        data = json.loads(content)
    except (ValueError, UnicodeDecodeError) as exc:
        what = f"{exc.msg}, char {exc.pos}" if isinstance(exc, json.JSONDecodeError) else str(exc)[:100]
        return None, f"the body is not valid JSON ({what}; {len(content)} bytes, truncated?)"
    return data, completion_problem(data)


# Chat parameters a model may refuse that a request can go without: OpenAI's reasoning models (the o
# series, gpt-5) answer HTTP 400 to ``max_tokens`` ("Use 'max_completion_tokens' instead") and to any
# temperature but their default. Their ``max_completion_tokens`` counts the hidden reasoning too, so
# the reply's cap gets REASONING_ROOM more tokens of room.
REFUSABLE_PARAMS = ("max_tokens", "temperature")
REFUSED_CODES = ("unsupported_parameter", "unsupported_value")
REASONING_ROOM = 8192
# (chat endpoint URL, model) -> the parameters that model refused there: learnt once per process
_refused: dict[tuple[str, str], set[str]] = {}


def refused_param(status: int, text: str) -> str | None:
    """The chat parameter a ``400`` reply refuses as unsupported by this model (OpenAI's error shape:
    ``{"error": {"param": "max_tokens", "code": "unsupported_parameter"}}``), when it is one of
    :data:`REFUSABLE_PARAMS`; else None."""
    if status != 400:
        return None
    try:
        error = json.loads(text).get("error")
    except (ValueError, AttributeError):
        return None
    if not isinstance(error, dict):
        return None
    param = error.get("param")
    return param if param in REFUSABLE_PARAMS and error.get("code") in REFUSED_CODES else None


def without_refused(body: dict[str, Any], refused: Iterable[str]) -> dict[str, Any]:
    """``body`` as a model that refuses ``refused`` takes it: ``max_completion_tokens`` (the cap plus
    :data:`REASONING_ROOM`) for ``max_tokens``, no ``temperature`` (the model's default)."""
    refused, body = set(refused), dict(body)
    if "max_tokens" in refused and isinstance(body.get("max_tokens"), int):
        body["max_completion_tokens"] = body.pop("max_tokens") + REASONING_ROOM
    if "temperature" in refused:
        body.pop("temperature", None)
    return body


class RedactingTransport(httpx2.AsyncBaseTransport):
    def __init__(
        self,
        inner: httpx2.AsyncBaseTransport,
        secrets: str | Iterable[str] | None,
        *,
        retry_timeouts: bool = True,
    ) -> None:
        self.inner = inner
        self.secrets = [secrets] if isinstance(secrets, str) else list(secrets or [])
        self.retry_timeouts = retry_timeouts

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """One HTTP attempt. A chat request whose model refused a parameter it can go without
        (:func:`refused_param`) is sent again at once without it, and later ones are sent so from the
        start (:func:`without_refused`); that refusal is not an attempt (the server computed nothing).
        The request's cache key is what was asked, not this wire form."""
        body = _chat_body(request)
        if body is None:
            response = await self._attempt(request)
            assert not isinstance(response, _Refused)
            return response
        where = (str(request.url.copy_with(query=None)), str(body.get("model")))
        for _ in range(len(REFUSABLE_PARAMS) + 1):
            refused = _refused.get(where, set())
            sent = _with_body(request, without_refused(body, refused)) if refused else request
            response = await self._attempt(sent, refused=refused)
            if not isinstance(response, _Refused):
                if refused and (seen := _attempts.get()):
                    seen[-1]["adapted"] = sorted(refused)  # what this attempt was sent without
                return response
            _refused.setdefault(where, set()).add(response.param)
        return response.response  # pragma: no cover - each pass learns a new parameter

    async def _attempt(
        self, request: httpx2.Request, *, refused: set[str] | None = None
    ) -> httpx2.Response | _Refused:
        """One HTTP attempt; with ``refused`` (a chat request: the parameters its model already refused),
        a 400 refusing another parameter it can go without is handed back as :class:`_Refused`, unnoted."""
        started = time.perf_counter()
        seen = _attempts.get()
        if isinstance(seen, Attempts) and request.method == "POST":
            _mark_sent(request, seen)
        try:
            response = await self.inner.handle_async_request(request)
        except httpx2.TimeoutException:
            _note(request, started, "timeout", status=None, usage=None)
            if self.retry_timeouts:
                raise
            return httpx2.Response(
                TIMEOUT_STATUS,
                headers={TIMEOUT_HEADER: "1", "x-should-retry": "false", "content-type": "application/json"},
                content=b'{"error": {"message": "client timeout (not retried)"}}',
                request=request,
                # what a log line shows: no server sent this, the client gave up waiting
                extensions={"reason_phrase": TIMEOUT_REASON.encode()},
            )
        except httpx2.TransportError as exc:
            failure = transport_failure(exc)
            _note(request, started, "connection", status=None, usage=None, error=failure.said,
                  connected=failure.connected)
            raise
        if response.status_code >= 400:
            content = await _read(response, request)
            text = redact(_text(content), self.secrets)
            param = refused_param(response.status_code, text) if refused is not None else None
            if param is not None and param not in refused:
                return _Refused(param, _rebuild(response, request, response.status_code, text))
            message = server_message(text, limit=300)
            _note(request, started, f"http_{response.status_code}", status=response.status_code,
                  usage=None, error=message)
            # a prompt that does not fit fails the same way every time: not retried, whatever the
            # status (llama.cpp servers answer it with a 500, which the SDK would retry)
            overflow = is_context_overflow(response.status_code, message)
            # a proxy's own timeout is a timeout: not retried where client timeouts are not (a one-at-a-time
            # model server behind it goes on computing the abandoned request; a retry queues behind it)
            timed_out = not self.retry_timeouts and proxy_timeout(response.status_code, message)[0]
            never = {"x-should-retry": "false"} if overflow or timed_out else None
            return _rebuild(response, request, response.status_code, text, never)
        if (
            response.status_code != 200
            or request.method != "POST"
            or not request.url.path.endswith("/chat/completions")
        ):
            return response
        # Read the body in place (``aread`` undoes any content-encoding and keeps the bytes, so
        # the client above does not read the stream again): no second Response object per call.
        content = await response.aread()
        data, problem = parse_completion(content)
        if problem is None:
            response.extensions = {**response.extensions, PARSED_JSON: data}
            choice = data["choices"][0]
            _note(request, started, "ok", status=200, usage=data.get("usage"),
                  finish_reason=choice.get("finish_reason"))
            return response
        _note(request, started, "malformed_reply", status=200, usage=None, error=problem)
        return _rebuild(
            response,
            request,
            MALFORMED_STATUS,
            redact(_text(content), self.secrets),
            extra_headers={
                MALFORMED_HEADER: problem.encode("ascii", "replace").decode(),
                "x-should-retry": "true",
            },
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


@dataclass
class _Refused:
    """A ``400`` refusing a chat parameter the request can go without (``param``): sent again without it."""

    param: str
    response: httpx2.Response


def _chat_body(request: httpx2.Request) -> dict[str, Any] | None:
    """The JSON body of a chat completion request (None for any other request)."""
    if request.method != "POST" or not request.url.path.endswith("/chat/completions"):
        return None
    try:
        body = json.loads(request.content or b"{}")
    except (ValueError, httpx2.RequestNotRead):
        return None
    return body if isinstance(body, dict) else None


def _with_body(request: httpx2.Request, body: dict[str, Any]) -> httpx2.Request:
    headers = [(k, v) for k, v in request.headers.multi_items() if k.lower() != "content-length"]
    return httpx2.Request(request.method, request.url, headers=headers, content=json.dumps(body).encode(),
                          extensions=request.extensions)  # fmt: skip


async def _read(response: httpx2.Response, request: httpx2.Request) -> bytes:
    """The decoded body of a transport-level response (content-encoding undone)."""
    if hasattr(response, "_content"):
        return response.content
    decoded = httpx2.Response(
        response.status_code, headers=response.headers, stream=response.stream, request=request
    )
    try:
        return await decoded.aread()
    finally:
        await decoded.aclose()


def _text(content: bytes) -> str:
    return content.decode("utf-8", "replace")


def _rebuild(
    response: httpx2.Response,
    request: httpx2.Request,
    status: int,
    content: bytes | str,
    extra_headers: dict[str, str] | None = None,
) -> httpx2.Response:
    headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in _DROP_HEADERS]
    headers += list((extra_headers or {}).items())
    return httpx2.Response(
        status,
        headers=headers,
        content=content.encode() if isinstance(content, str) else content,
        request=request,
        extensions=response.extensions,
    )


def make_http_client(
    secrets: str | Iterable[str] | None,
    inner: httpx2.AsyncBaseTransport | None = None,
    *,
    retry_timeouts: bool = True,
) -> httpx2.AsyncClient:
    """An ``httpx2.AsyncClient`` for ``openai.AsyncOpenAI(http_client=...)``; ``secrets`` are masked
    in every error body; ``retry_timeouts=False`` makes a timed-out attempt final."""
    transport = inner if inner is not None else httpx2.AsyncHTTPTransport(limits=CONNECTION_LIMITS)
    return httpx2.AsyncClient(
        transport=RedactingTransport(transport, secrets, retry_timeouts=retry_timeouts),
        follow_redirects=True,
    )
