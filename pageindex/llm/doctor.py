"""Know what a model endpoint can do before a long run starts (``pageindex doctor``).

:func:`diagnose` makes a short, bounded series of real calls (each with a timeout; about two
thousand tokens in all, more with ``probe_context``) and returns a :class:`DoctorReport`:

* reachable, OpenAI-compatible, the model listed -- the run's own preflight
  (:func:`pageindex.llm.preflight.preflight`), which also gives the model's metadata;
* plain chat, and whether ``usage`` is reported;
* a forced ``tool_choice`` gives a tool call; a tool result sent back gets a reply, tried with
  ``content: null`` and with ``content: ""`` on the assistant tool-call message (servers differ:
  some chat templates reject one of them); ``parallel_tool_calls``;
* ``response_format`` ``json_object`` (JSON mode) and ``json_schema``: honoured or ignored;
* ``max_tokens`` honoured and ``finish_reason: "length"`` reported; again with a tool offered (last;
  on a server that answers one request at a time only with ``probe_tool_cap``, since a server that
  ignores it there generates to the end of its context and stays busy for minutes);
* the context window from metadata (vLLM's ``max_model_len``, llama.cpp's ``n_ctx``, ...; the
  window Ollama runs and LM Studio loaded the model with), and with ``probe_context`` the window a
  refusal states (else a lower bound) found by up to 4 calls doubling a filler prompt;
* latency per call, prompt and generation tokens per second, and whether two requests are
  served side by side; the price known or not (``pricing.py``).

Then a verdict (``usable``, ``limited``, ``unusable``; exit code 0, 1, 2) with its reasons and
:class:`SuggestedSettings` (JSON mode, concurrency, timeout, context budget). Reports are cached
per (base URL without credentials, model) for 7 days under the user cache dir (not when the verdict is
``unusable``, nor when a probe met server errors — 429 or 5xx — on all of its tries: the next call probes
again); they never hold
a key (:func:`cached_findings` reads them back, :func:`suggest_settings` turns them into settings).
This module is part of the library: it never imports ``bench``.
"""

from __future__ import annotations

import asyncio
import hashlib
import ipaddress
import json
import logging
import math
import re
import statistics
import time
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import httpx
from pydantic import BaseModel, Field, ValidationError

from pageindex.atomic import write_atomic
from pageindex.cachedir import cache_root
from pageindex.llm.http import (
    REASONING_ROOM,
    REFUSABLE_PARAMS,
    UPSTREAM_GONE,
    refused_param,
    stated_context_window,
    stated_request_tokens,
    upstream_unreachable,
    without_refused,
)
from pageindex.llm.preflight import PreflightResult, check_upstream, describe_response, preflight
from pageindex.llm.pricing import load_pricing
from pageindex.llm.providers import provider_class
from pageindex.llm.spec import ModelSpec
from pageindex.llm.tokens import (
    DEFAULT_MAX_TOKENS,
    ServerWindow,
    context_window_from_metadata,
    known_context_window,
    prompt_cut,
)
from pageindex.llm.types import LLMConfigError, LLMError
from pageindex.llm.wire import count_tokens, schema_error, template_markers

log = logging.getLogger(__name__)

# 2: a tool result the server took is accepted, whatever the model then said (1 read an empty reply as
# a rejection, and bench run and ask took JSON mode from such a cached report)
REPORT_VERSION = 2
CACHE_TTL = timedelta(days=7)
SMALL_CONTEXT = 16_384  # below this the index and fetched sections may not fit: a limit
LLM_RETRIEVERS = ("agent", "planner", "iterative")
TOOL_RETRIEVERS = ("agent", "iterative")  # their loops need tool calls (fetch_section)
FILLER = "The quick brown fox jumps over the lazy dog near the river bank. "
CONTEXT_PROBE_START = 1024  # tokens of filler in the first context probe call; then doubled
CONTEXT_PROBE_CALLS = 4
PROMPT_SPEED_TOKENS = 400
TYPICAL_PROMPT_TOKENS = 4000  # a retriever call: the index plus a fetched section
TYPICAL_COMPLETION_TOKENS = 300

Status = Literal["ok", "warn", "fail", "info", "skip"]
EndpointVerdict = Literal["usable", "limited", "unusable"]


class Check(BaseModel):
    """One row of the doctor's table."""

    key: str
    label: str
    status: Status
    detail: str
    latency_s: float | None = None


class Findings(BaseModel):
    """What the probes found, as facts other code can act on (None: not probed / unknown)."""

    reachable: bool = False
    openai_compatible: bool = False
    model_listed: bool | None = None
    chat: bool = False
    chat_empty: bool = False  # the plain reply was empty: the server answered, the model said nothing
    # chat-template control tokens written out in the plain reply (``<|im_end|>``): the server's template
    # does not end the model's turn (llama-server with a chatml template over gemma-3-270m)
    template_markers: list[str] = Field(default_factory=list)
    usage: bool | None = None
    tool_call: bool | None = None
    tool_result_null: bool | None = None
    tool_result_empty: bool | None = None
    parallel_tool_calls: bool | None = None
    json_mode: bool | None = None
    json_schema: bool | None = None
    max_tokens: bool | None = None
    # max_tokens also when tools are offered (a tool loop's calls): llama.cpp's chatml-function-calling
    # ignores it there and a reply runs to the end of the context
    tool_max_tokens: bool | None = None
    finish_length: bool | None = None
    context_window: int | None = None
    # metadata: the model's /models entry; server: the server's own API (Ollama's loaded model), which
    # runs read too (context_told says where); probe: the context probe
    context_source: Literal["metadata", "server", "probe"] | None = None
    context_told: str | None = None
    context_lower_bound: bool = False
    context_refused: bool = False  # the context probe met a refusal (the window is < 2x the bound)
    context_cut: bool = False  # the context probe saw a longer prompt cut without an error
    latency_s: float | None = None  # median latency of the probe calls
    prompt_tps: float | None = None
    generation_tps: float | None = None
    serial: bool | None = None  # True: two requests took about twice as long as one
    local: bool = False  # loopback or private address
    price_known: bool = False

    @property
    def tools_usable(self) -> bool:
        """Tool calls work end to end: a forced call, and a tool result read back in some form."""
        return bool(self.tool_call) and bool(self.tool_result_null or self.tool_result_empty)

    @property
    def json_usable(self) -> bool:
        return bool(self.json_mode or self.json_schema)


class SuggestedSettings(BaseModel):
    """Settings that suit this endpoint (the doctor's part of a run's defaults)."""

    json_mode: bool = False
    concurrency: int = 4
    timeout_s: float = 60.0
    context_window: int | None = None
    context_budget_tokens: int | None = None  # prompt tokens to aim for per call (index + sections)
    # the --context-window to give: a window the probe found that runs do not learn by themselves
    # (they read /models metadata, else assume the known model table's)
    context_flag: int | None = None
    retrievers: list[str] = Field(default_factory=list)  # the LLM retrievers that can run here
    notes: list[str] = Field(default_factory=list)

    def flags(self) -> str:
        """The command-line flags these settings mean, for the verdict line."""
        parts = ["--json-mode"] if self.json_mode else []
        parts += [f"--concurrency {self.concurrency}", f"--timeout {self.timeout_s:g}"]
        if self.context_flag is not None:
            parts.append(f"--context-window {self.context_flag}")
        if self.retrievers and len(self.retrievers) < len(LLM_RETRIEVERS):
            parts.append(f"-r {','.join(self.retrievers)}")
        return " ".join(parts)


class DoctorReport(BaseModel):
    """The doctor's findings about one (endpoint, model). Holds no key: the URL is masked."""

    version: int = REPORT_VERSION
    spec: str
    model: str
    url: str
    probed_at: datetime
    checks: list[Check] = Field(default_factory=list)
    findings: Findings = Field(default_factory=Findings)
    verdict: EndpointVerdict = "unusable"
    reasons: list[str] = Field(default_factory=list)
    settings: SuggestedSettings = Field(default_factory=SuggestedSettings)
    tokens_used: int = 0
    calls: int = 0
    cached: bool = False  # read back from the cache, not probed now
    unsure: bool = False  # some probe met server errors on every try: not cached

    @property
    def exit_code(self) -> int:
        return {"usable": 0, "limited": 1, "unusable": 2}[self.verdict]

    def check(self, key: str) -> Check | None:
        return next((c for c in self.checks if c.key == key), None)


# ----------------------------------------------------------------------------- HTTP
class _Answer(BaseModel):
    """One probe call's outcome."""

    status: int | None = None  # None: no HTTP answer (timeout, connection error)
    data: dict[str, Any] | None = None
    error: str = ""
    latency_s: float = 0.0
    timed_out: bool = False  # no answer within the wait (not a refused or dropped connection)

    @property
    def ok(self) -> bool:
        return (
            self.status == 200 and isinstance(self.data, dict) and isinstance(self.data.get("choices"), list)
        )

    @property
    def message(self) -> dict[str, Any]:
        try:
            return dict(self.data["choices"][0]["message"] or {})  # type: ignore[index]
        except (KeyError, IndexError, TypeError):
            return {}

    @property
    def content(self) -> str:
        content = self.message.get("content")
        if isinstance(content, list):
            return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        return content if isinstance(content, str) else ""

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        return [c for c in self.message.get("tool_calls") or [] if isinstance(c, dict)]

    @property
    def finish_reason(self) -> str | None:
        try:
            return self.data["choices"][0].get("finish_reason")  # type: ignore[index]
        except (KeyError, IndexError, TypeError, AttributeError):
            return None

    @property
    def usage(self) -> dict[str, Any] | None:
        usage = (self.data or {}).get("usage")
        if isinstance(usage, dict) and int(usage.get("prompt_tokens") or 0) > 0:
            return usage
        return None

    def prompt_tokens(self, fallback_chars: int) -> int:
        usage = self.usage
        return int(usage["prompt_tokens"]) if usage else count_tokens(fallback_chars)

    def completion_tokens(self) -> int:
        usage = self.usage
        if usage and usage.get("completion_tokens") is not None:
            return int(usage["completion_tokens"])
        args = "".join(str((c.get("function") or {}).get("arguments") or "") for c in self.tool_calls)
        return count_tokens(len(self.content) + len(args))

    def why(self) -> str:
        """One line on what went wrong."""
        return self.error or "no choices in the reply"


# A server's passing trouble (rate limit, overload, a proxy's 502): not what it can do. A probe that
# meets it is tried again, as runs retry such calls; still failing after TRANSIENT_TRIES, its finding
# is unsure, said in a row of its own, and the report is not cached.
TRANSIENT_STATUSES = frozenset({429, 500, 502, 503, 504})
TRANSIENT_TRIES = 3
_TRANSIENT_PAUSE_S = (0.5, 1.0)  # before the second and third tries (a Retry-After up to 5 s wins)


def _retry_after(response: httpx.Response, default: float) -> float:
    try:
        return min(max(float(response.headers.get("retry-after", "")), 0.0), 5.0)
    except ValueError:
        return default


class _Prober:
    def __init__(self, spec: ModelSpec, timeout: float, transport: httpx.AsyncBaseTransport | None):
        url = httpx.URL(spec.base_url or "")
        self.spec = spec
        self.timeout = timeout
        self.endpoint = str(url.copy_with(query=None)).rstrip("/") + "/chat/completions"
        self.params = dict(url.params.multi_items())
        headers = spec.auth_headers()
        self.transport = transport
        self.refused: set[str] = set()  # chat parameters the model refused (a reasoning model)
        self.http = httpx.AsyncClient(timeout=timeout, transport=transport, headers=headers)
        self.calls = 0
        self.tokens = 0
        self.latencies: list[float] = []
        self.generated: list[tuple[int, float]] = []  # (completion tokens, seconds) of each usable reply
        self.transient: list[str] = []  # probes that met server trouble on every try

    async def chat(
        self, messages: list[dict[str, Any]], *, within: float | None = None, retry: bool = True,
        **params: Any,
    ) -> _Answer:
        """One chat completion; ``within`` caps this call's wait below the prober's timeout. A reply
        in :data:`TRANSIENT_STATUSES` is tried again (unless ``retry`` is False), up to
        :data:`TRANSIENT_TRIES` times in all. A 500 with the same message every time is the server's
        answer to this request (llama.cpp: "tools param requires --jinja flag"), not passing trouble."""
        said: list[str] = []
        for attempt in range(TRANSIENT_TRIES if retry else 1):
            answer, response = await self._chat_once(messages, within, params)
            if response is None or response.status_code not in TRANSIENT_STATUSES:
                return answer
            said.append(f"{response.status_code} {answer.why()}")
            if response.status_code == 500 and len(said) > 1 and said[-1] == said[-2]:
                return answer  # the same 500 again: a finding
            if attempt + 1 < TRANSIENT_TRIES:
                await asyncio.sleep(_retry_after(response, _TRANSIENT_PAUSE_S[attempt]))
        if retry:
            self.transient.append(answer.why())
        return answer

    async def _chat_once(
        self, messages: list[dict[str, Any]], within: float | None, params: dict[str, Any]
    ) -> tuple[_Answer, httpx.Response | None]:
        body = {"model": self.spec.model, "messages": messages, "temperature": 0, **params}
        self.calls += 1
        started = time.perf_counter()
        wait = min(within, self.timeout) if within else self.timeout
        try:
            for _ in range(len(REFUSABLE_PARAMS) + 1):  # as runs send it (http.RedactingTransport)
                sent = without_refused(body, self.refused) if self.refused else body
                response = await self.http.post(self.endpoint, params=self.params, json=sent, timeout=wait)
                param = refused_param(response.status_code, response.text)
                if param is None or param in self.refused:
                    break
                self.refused.add(param)
        except httpx.TimeoutException:
            timed_out = _Answer(
                error=f"no answer within {wait:g}s", latency_s=time.perf_counter() - started, timed_out=True
            )
            return timed_out, None
        except httpx.HTTPError as exc:
            reason = self.spec.redact(" ".join(str(exc).split())) or type(exc).__name__
            failed = _Answer(error=f"connection failed: {reason}", latency_s=time.perf_counter() - started)
            return failed, None
        latency = time.perf_counter() - started
        try:
            data = response.json()
        except ValueError:
            data = None
        answer = _Answer(
            status=response.status_code, data=data if isinstance(data, dict) else None, latency_s=latency
        )
        if not answer.ok:
            answer.error = self.spec.redact(describe_response(response))
        else:
            self.latencies.append(latency)
            self.generated.append((answer.completion_tokens(), latency))
            chars = sum(len(json.dumps(m)) for m in messages)
            self.tokens += answer.prompt_tokens(chars) + answer.completion_tokens()
        return answer, response

    async def aclose(self) -> None:
        await self.http.aclose()


# ----------------------------------------------------------------------------- probes
SECRET_WORD_TOOL = {
    "type": "function",
    "function": {
        "name": "get_secret_word",
        "description": "Return today's secret word.",
        "parameters": {"type": "object", "properties": {}},
    },
}
RECORD_TOOL = {
    "type": "function",
    "function": {
        "name": "record_fruit",
        "description": "Record the name of a fruit.",
        "parameters": {
            "type": "object",
            "properties": {"fruit": {"type": "string", "description": "The fruit's name."}},
            "required": ["fruit"],
        },
    },
}
TIME_TOOL = {
    "type": "function",
    "function": {
        "name": "get_local_time",
        "description": "Return the local time in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "The city's name."}},
            "required": ["city"],
        },
    },
}
PICK_SCHEMA = {
    "type": "object",
    "properties": {
        "colour": {"type": "string", "enum": ["red", "green", "blue"]},
        "number": {"type": "integer", "minimum": 1, "maximum": 9},
    },
    "required": ["colour", "number"],
    "additionalProperties": False,
}


async def diagnose(
    spec: ModelSpec,
    *,
    timeout: float = 30.0,
    probe_context: bool = False,
    probe_tool_cap: bool = False,
    transport: httpx.AsyncBaseTransport | None = None,
) -> DoctorReport:
    """Probe ``spec``'s endpoint (see the module docstring). Never raises for what the endpoint
    does; raises :class:`LLMConfigError` only for a spec with no endpoint (scripted, replay)."""
    if spec.base_url is None:
        raise LLMConfigError(
            f"doctor probes a model server; {spec.spec} has none (use openai/<model> or ollama/<model>)"
        )
    report = DoctorReport(
        spec=spec.spec, model=spec.model, url=spec.display_url or "", probed_at=datetime.now(UTC)
    )
    facts = report.findings
    facts.local = _is_local(spec.base_url)
    price = load_pricing().price(spec.spec, spec.model)
    facts.price_known = price is not None
    rows = report.checks

    def add(key: str, label: str, status: Status, detail: str, latency: float | None = None) -> None:
        rows.append(Check(key=key, label=label, status=status, detail=detail, latency_s=latency))

    try:
        found: PreflightResult | None = await preflight(spec, timeout=timeout, transport=transport)
    except LLMConfigError as exc:
        found = None
        message = str(exc)
        unreachable = message.startswith("cannot reach")
        facts.reachable = not unreachable
        add("reachable", "reachable", "fail" if unreachable else "ok", message if unreachable else report.url)
        if not unreachable:
            add("openai_compatible", "OpenAI-compatible API", "fail", message)
        return _finish(report, price)
    facts.reachable = facts.openai_compatible = True
    add("reachable", "reachable", "ok", report.url, found.latency_s)
    via = "JSON model list at /models" if found.via == "models" else "no /models list; a chat reply came back"
    add("openai_compatible", "OpenAI-compatible API", "ok", via)
    facts.model_listed = found.model_listed
    if found.model_listed is None:
        add("model_listed", "model listed", "info", "the server has no model list")
    elif found.model_listed:
        add("model_listed", "model listed", "ok", f"{spec.model} is listed")
    else:
        add("model_listed", "model listed", "warn", f"{spec.model} is not among: {found.shown_models()}")

    prober = _Prober(spec, timeout, transport)
    try:
        await _probe_all(prober, report, add, found, probe_context, probe_tool_cap)
    finally:
        await prober.aclose()
    if prober.transient:
        report.unsure = True
        add(
            "server_errors",
            "server errors",
            "warn",
            f"{len(prober.transient)} probe(s) met server errors on all {TRANSIENT_TRIES} tries "
            f"({prober.transient[0]}): the findings they gave may be wrong; not cached, run doctor again",
        )
    report.calls = prober.calls + 1
    report.tokens_used = prober.tokens
    if prober.latencies:
        facts.latency_s = round(statistics.median(prober.latencies), 3)
    return _finish(report, price)


async def _probe_all(
    prober: _Prober, report: DoctorReport, add: Any, found: PreflightResult, probe_context: bool,
    probe_tool_cap: bool = False,
) -> None:
    facts = report.findings
    # -- plain chat and usage
    ping = [{"role": "user", "content": "Reply with exactly the word PONG."}]
    chat = await prober.chat(ping, max_tokens=16)
    if not chat.ok:
        slow = " (a server that is slow, or busy with another request, needs a larger --timeout)"
        detail = f"POST /chat/completions: {chat.why()}" + (slow if chat.timed_out else "")
        if upstream_unreachable(chat.status, chat.why()):  # a LiteLLM proxy whose model server is down
            detail = f"POST /chat/completions: {UPSTREAM_GONE} ({chat.why()})"
        add("chat", "plain chat", "fail", detail, chat.latency_s)
        for key, label in (("tools", "tool calls"), ("json", "JSON output")):
            add(key, label, "skip", "not probed: plain chat failed")
        return
    facts.chat = True
    facts.chat_empty = not chat.content.strip() and not chat.tool_calls
    facts.template_markers = template_markers(chat.content)
    if facts.chat_empty:
        detail = "an empty reply: the server answered, but the model said nothing"
        add("chat", "plain chat", "warn", detail, chat.latency_s)
    elif facts.template_markers:
        detail = (
            f"replied {_gist(chat.content)!r}, writing out the chat template's "
            f"{', '.join(facts.template_markers)}: the turn did not end there"
        )
        add("chat", "plain chat", "warn", detail, chat.latency_s)
    else:
        add("chat", "plain chat", "ok", f"replied {_gist(chat.content)!r}", chat.latency_s)
    if prober.refused:
        sends = []
        if "max_tokens" in prober.refused:
            sends.append(f"max_completion_tokens, the cap plus {REASONING_ROOM:,} for its hidden reasoning")
        if "temperature" in prober.refused:
            sends.append("no temperature (its default: replies are not deterministic)")
        refused = " and ".join(sorted(prober.refused))
        add(
            "parameters", "refused parameters", "info",
            f"the model refuses {refused} (a reasoning model, as OpenAI's o series and gpt-5): runs send "
            + ", and ".join(sends),
        )  # fmt: skip
    if chat.usage:
        facts.usage = True
        u = chat.usage
        add(
            "usage",
            "usage reported",
            "ok",
            f"prompt {u['prompt_tokens']}, completion {u.get('completion_tokens')} tokens",
        )
    else:
        facts.usage = False
        add(
            "usage",
            "usage reported",
            "warn",
            "no usage in replies: token budgets and costs cannot be counted",
        )

    # -- a forced tool call
    forced = await prober.chat(
        [{"role": "user", "content": 'Call record_fruit with the fruit "plum".'}],
        tools=[RECORD_TOOL],
        tool_choice={"type": "function", "function": {"name": "record_fruit"}},
        max_tokens=64,
    )
    facts.tool_call = False
    if not forced.ok:
        add("tool_call", "forced tool call", "fail", f"rejected: {forced.why()}", forced.latency_s)
    else:
        call = next(
            (c for c in forced.tool_calls if (c.get("function") or {}).get("name") == "record_fruit"), None
        )
        if call is None:
            what = (
                f"named {forced.tool_calls[0]['function'].get('name')!r}"
                if forced.tool_calls
                else (f"text {_gist(forced.content)!r}")
            )
            add(
                "tool_call",
                "forced tool call",
                "fail",
                f"no record_fruit call; the reply was {what}",
                forced.latency_s,
            )
        else:
            problem = _arguments_problem(call, RECORD_TOOL["function"]["parameters"])
            if problem is not None and forced.finish_reason == "length":
                problem += " (the reply was cut at max_tokens=64: finish_reason length)"
            facts.tool_call = problem is None
            add(
                "tool_call",
                "forced tool call",
                "ok" if problem is None else "fail",
                f"record_fruit({(call.get('function') or {}).get('arguments')})"
                if problem is None
                else problem,
                forced.latency_s,
            )

    # -- a tool result sent back, with content null and with content ""
    for key, content, label in (
        ("tool_result_null", None, "tool result (content null)"),
        ("tool_result_empty", "", 'tool result (content "")'),
    ):
        answer = await prober.chat(_round_trip(content), tools=[SECRET_WORD_TOOL], max_tokens=32)
        # the server took the message (a chat completion came back): what the model then said is its
        # skill. An empty reply was taken for a rejection, and a server that accepts content "" was
        # said to reject tool results (llama-cpp-python with gemma-3-270m, which says nothing here)
        accepted = answer.ok
        setattr(facts, key, accepted)
        if accepted and not (answer.content or answer.tool_calls):
            detail = "accepted; the reply was empty (the model said nothing after the result)"
            add(key, label, "info", detail, answer.latency_s)
        elif accepted:
            used = "PLUM" in answer.content.upper()
            detail = f"accepted; replied {_gist(answer.content)!r}" + (
                "" if used else " (the result was not used)"
            )
            add(key, label, "ok", detail, answer.latency_s)
        else:
            add(key, label, "fail", f"rejected: {answer.why()}", answer.latency_s)

    # -- parallel tool calls
    parallel = await prober.chat(
        [
            {
                "role": "user",
                "content": 'Call get_local_time once for "Paris" and once for "Tokyo", in this one reply.',
            }
        ],
        tools=[TIME_TOOL],
        tool_choice="auto",
        parallel_tool_calls=True,
        max_tokens=96,
    )
    names = [(c.get("function") or {}).get("name") for c in parallel.tool_calls]
    facts.parallel_tool_calls = parallel.ok and names.count("get_local_time") >= 2
    if not parallel.ok:
        add(
            "parallel_tool_calls",
            "parallel tool calls",
            "info",
            f"rejected: {parallel.why()}",
            parallel.latency_s,
        )
    else:
        add(
            "parallel_tool_calls",
            "parallel tool calls",
            "ok" if facts.parallel_tool_calls else "info",
            f"{len(names)} tool call(s) in one reply",
            parallel.latency_s,
        )

    # -- JSON mode and JSON schema
    json_mode = await prober.chat(
        [
            {
                "role": "user",
                "content": 'Give a colour and a number from 1 to 9 as JSON with keys "colour" and "number".',
            }
        ],
        response_format={"type": "json_object"},
        max_tokens=64,
    )
    value = _json_object(json_mode.content) if json_mode.ok else None
    facts.json_mode = value is not None
    if not json_mode.ok:
        add(
            "json_mode",
            "JSON mode (json_object)",
            "warn",
            f"rejected: {json_mode.why()}",
            json_mode.latency_s,
        )
    else:
        detail = f"a JSON object: {_gist(json.dumps(value))}" if value is not None else (
            f"ignored: {_gist(json_mode.content)!r}"
        )
        begun = json_mode.content.lstrip().startswith("{")
        if value is None and json_mode.finish_reason == "length" and begun:
            # JSON so far, cut at the cap (llama-server's grammar over gemma-3-270m kept adding keys):
            # not a reply that ignored JSON mode, and not one that shows it honoured
            detail = f"not measured: the reply was cut at max_tokens=64 before its object closed: " \
                f"{_gist(json_mode.content)!r}"
        add("json_mode", "JSON mode (json_object)", "ok" if value is not None else "info", detail,
            json_mode.latency_s)  # fmt: skip
    schema_answer = await prober.chat(
        [{"role": "user", "content": "Pick a colour and a number."}],
        response_format={
            "type": "json_schema",
            "json_schema": {"name": "pick", "strict": True, "schema": PICK_SCHEMA},
        },
        max_tokens=64,
    )
    picked = _json_object(schema_answer.content) if schema_answer.ok else None
    problem = schema_error(picked, PICK_SCHEMA) if picked is not None else "not a JSON object"
    facts.json_schema = picked is not None and problem is None
    if not schema_answer.ok:
        add(
            "json_schema",
            "JSON schema output",
            "info",
            f"rejected: {schema_answer.why()}",
            schema_answer.latency_s,
        )
    else:
        detail = (
            f"matches the schema: {_gist(json.dumps(picked))}"
            if facts.json_schema
            else (f"ignored ({problem}): {_gist(schema_answer.content)!r}")
        )
        add(
            "json_schema",
            "JSON schema output",
            "ok" if facts.json_schema else "info",
            detail,
            schema_answer.latency_s,
        )

    # -- max_tokens and finish_reason "length" (also the generation-speed sample)
    cap = 8
    capped = await prober.chat(
        [{"role": "user", "content": "Count from 1 to 300, separated by spaces."}], max_tokens=cap
    )
    if not capped.ok:
        add("max_tokens", "max_tokens honoured", "warn", f"rejected: {capped.why()}", capped.latency_s)
    else:
        produced = capped.completion_tokens()
        if produced < cap and capped.finish_reason != "length":  # stopped by itself: nothing learnt
            detail = f"not tested: the model stopped by itself after {produced} tokens"
            add("max_tokens", "max_tokens honoured", "info", detail, capped.latency_s)
        else:
            sent, name = cap, "max_tokens"
            if "max_tokens" in prober.refused:  # reasoning counts in its cap
                sent, name = cap + REASONING_ROOM, "max_completion_tokens"
            facts.max_tokens = produced <= sent + 2
            facts.finish_length = capped.finish_reason == "length"
            add(
                "max_tokens",
                "max_tokens honoured",
                "ok" if facts.max_tokens else "warn",
                f"{produced} completion tokens for {name}={sent}",
                capped.latency_s,
            )
            add(
                "finish_length",
                "finish_reason length",
                "ok" if facts.finish_length else "warn",
                f"finish_reason {capped.finish_reason!r}"
                + ("" if facts.finish_length else ": cut-off replies cannot be told from complete ones"),
            )

    # -- prompt speed: a ~400-token prompt and one token out. It opens with a word of its own each run:
    # llama.cpp keeps earlier prompts' computed prefixes, so a --refresh (or a doctor run after the
    # 7 days) sending the same filler again was served from that cache, read as 7,806 tokens/s where
    # the first run had read 383, and the timeout advised was sized on it
    filler = f"Probe {uuid.uuid4().hex[:8]}. " + _filler(PROMPT_SPEED_TOKENS)
    long_prompt = [{"role": "user", "content": filler + "\nReply with exactly the word OK."}]
    prompt_run = await prober.chat(long_prompt, max_tokens=1)
    base_latency = chat.latency_s
    base_prompt = chat.prompt_tokens(len(ping[0]["content"]))
    if prompt_run.ok:
        p_tokens = prompt_run.prompt_tokens(len(long_prompt[0]["content"]))
        facts.prompt_tps = _rate(
            p_tokens - base_prompt, prompt_run.latency_s - base_latency, p_tokens, prompt_run.latency_s
        )
        add(
            "prompt_speed",
            "prompt speed",
            "info",
            f"{facts.prompt_tps:,.0f} tokens/s ({p_tokens} prompt tokens in {prompt_run.latency_s:.2f}s)",
            prompt_run.latency_s,
        )
    else:
        add(
            "prompt_speed",
            "prompt speed",
            "info",
            f"a {PROMPT_SPEED_TOKENS}-token prompt failed: {prompt_run.why()}",
            prompt_run.latency_s,
        )
    # a short prompt, so nearly all of the call is generation (a lower bound): the capped reply, else
    # the probe reply that generated most (a model that stops at once gave "0.0 tokens/s", and the
    # timeout was then sized without it)
    sample = (capped.completion_tokens(), capped.latency_s) if capped.ok else (0, 0.0)
    source = ""
    if sample[0] == 0 and (longest := max(prober.generated, default=(0, 0.0)))[0]:
        sample, source = longest, ", the longest reply of the probes"
    if sample[0] > 0:
        g_tokens, g_seconds = sample
        facts.generation_tps = round(g_tokens / max(g_seconds, 1e-3), 1)
        add(
            "generation_speed",
            "generation speed",
            "info",
            f"{facts.generation_tps:,.1f} tokens/s ({g_tokens} tokens in {g_seconds:.2f}s{source})",
        )
    elif capped.ok:
        add("generation_speed", "generation speed", "info", "not measured: the model generated no tokens")

    # -- two requests at once: served side by side or one after the other
    serial, detail = await _concurrency(prober)
    if detail:
        facts.serial = serial
        add("concurrency", "concurrent requests", "info", detail)

    # -- context window: metadata, then an optional bounded probe
    window, source_key = context_window_from_metadata(found.metadata)
    if window is not None:
        facts.context_window, facts.context_source = window, "metadata"
    elif (told := await _told_window(prober.spec, prober.timeout, prober.transport)) is not None:
        # as a run finds it (the only model listed, Ollama's loaded model)
        facts.context_window, facts.context_source, facts.context_told = told.tokens, "server", told.source
    if probe_context:
        bound, refused, stated, detail = await _probe_context(prober)
        facts.context_cut = stated is not None and not refused
        if stated is not None and facts.context_window is None:  # the server's own figure
            facts.context_window, facts.context_source = stated, "probe"
        elif bound is not None and facts.context_window is None:
            facts.context_window, facts.context_source, facts.context_lower_bound = bound, "probe", True
            facts.context_refused = refused
        add("context_probe", "context probe", "info", detail)
    if facts.context_window is None:
        hint = "" if probe_context else " (--probe-context probes it)"
        detail = f"unknown: the server does not say{hint}"
        if assumed := _runs_assume(report.model):  # what the client will size prompts by
            detail += (
                f"; {assumed}: a server started with a smaller context refuses their longer prompts, "
                "give --context-window N"
            )
        add("context_window", "context window", "info", detail)
    else:
        where = (
            f"{source_key} in /models" if facts.context_source == "metadata"
            else str(facts.context_told) if facts.context_source == "server"
            else "at least, by probe" if facts.context_lower_bound
            else "as the server read a longer prompt, cut without an error" if facts.context_cut
            else "as the server stated it when refusing a longer prompt"
        )  # fmt: skip
        small = _small_context(facts)
        detail = f"{facts.context_window:,} tokens ({where})"
        detail += ": small for index + sections" if small else ""
        if (flag := _context_flag(report)) is not None:  # runs do not probe: they need the flag
            detail += f"; {_runs_assume(report.model) or 'runs do not know it'}: give --context-window {flag}"
        add("context_window", "context window", "warn" if small else "ok", detail)

    # -- max_tokens with tools offered: last, since a server that ignores it may still be generating
    # the reply after the doctor stopped waiting for it. A one-at-a-time server would then be busy
    # for minutes (llama.cpp at 8k: 8,159 tokens, 10.5 min), and the run that follows the doctor
    # would wait for it: there only when asked.
    if facts.tool_call and capped.ok and facts.max_tokens:
        if facts.serial and not probe_tool_cap:
            add(
                "tool_max_tokens", "max_tokens with tools", "skip",
                "not probed: the server answers one request at a time, and a reply that ignores the cap "
                "would keep it busy until the end of its context (minutes); --probe-tool-cap probes it",
            )  # fmt: skip
        else:
            await _probe_tool_max_tokens(prober, facts, add, capped.latency_s)


TOOL_CAP = 8
TOOL_CAP_WAIT_S = 15.0  # the least the doctor waits for the tool-offered capped reply


# Two prompts of the same work that share no prefix past the first words, so that neither request of
# the pair is served from the other's prompt cache, and both generate to the cap (a model that stops
# early after "PONG" made the pair's times differ by its length, not by the server).
_PAIR_PROMPTS = (
    "Count from 1 to 60, separated by spaces.",
    "Count from 61 to 120, separated by spaces.",
)
# The serial reading of a pair: its later reply took as long as both together. How far the later
# reply's time must be from the halfway point (in log terms) between "its own time" and "both
# together" for one pair to decide; nearer, a second pair is sent, and a pair that stays unclear is
# read as one at a time (the safe reading: concurrency 1, no probe that may keep the server busy).
_CLEAR_MARGIN = 0.15


def _pair_reading(pair: list[_Answer]) -> float:
    """Where the later reply's time lies between the pair served side by side (0: it took only its
    own time) and one after the other (1: it took its own time plus the earlier reply's), on a log
    scale. Each reply's own time is the earlier reply's time per generated token times its tokens, so a
    reply that generated fewer tokens is not taken for a faster server."""
    first, later = sorted(pair, key=lambda a: a.latency_s)
    per_token = first.latency_s / max(first.completion_tokens(), 1)
    own = max(per_token * max(later.completion_tokens(), 1), 1e-6)
    both = first.latency_s + own
    return math.log(max(later.latency_s, 1e-6) / own) / math.log(both / own)


async def _concurrency(prober: _Prober) -> tuple[bool | None, str]:
    """Two requests at once: whether the server serves one at a time (None: unknown), and the row's
    detail. Not retried: a server that refuses the second request while it serves the first
    (429/503) serves one at a time; a pair with another failure is not measured. Otherwise the
    pair is read against itself, not against an earlier call (the pair shares the machine's load): a
    one-at-a-time server makes the later reply wait for the earlier one (:func:`_pair_reading`). A
    pair near the halfway point is sent once more (trial 11 saw a serial llama.cpp server read as side
    by side at 1.4x); still unclear, it is read as one at a time."""
    readings: list[float] = []
    ratios: list[float] = []
    for _ in range(2):
        pair = list(
            await asyncio.gather(*(
                prober.chat([{"role": "user", "content": text}], max_tokens=16, retry=False)
                for text in _PAIR_PROMPTS
            ))
        )
        refused = [a for a in pair if a.status in TRANSIENT_STATUSES]
        if len(refused) == 1 and any(a.ok for a in pair):
            why = refused[0].why()
            return True, (
                f"2 requests at once: one was refused ({why}) while the other was served: one at a time"
            )
        if not all(a.ok for a in pair):
            # said, not left out: a pair with a failed request used to leave no row, and a loopback
            # server was then advised --concurrency 2 (unknown is not serial: a remote API's passing
            # reset must not make bench run take concurrency 1 from the cached findings)
            why = next(a for a in pair if not a.ok).why()
            which = "one of them" if any(a.ok for a in pair) else "both"
            return None, f"not measured: 2 requests sent at once, {which} failed ({why})"
        together = max(a.latency_s for a in pair)
        single = min(a.latency_s for a in pair)
        if single < 0.05:
            return None, f"2 requests in {together:.3f}s (too fast to tell)"
        readings.append(_pair_reading(pair))
        ratios.append(together / single)
        if abs(readings[-1] - 0.5) >= _CLEAR_MARGIN:
            break
    reading = sum(readings) / len(readings)
    measured = " and ".join(f"{r:.1f}×" for r in ratios)
    unclear = abs(reading - 0.5) < _CLEAR_MARGIN
    serial = reading >= 0.5 or unclear
    how = "one after the other" if serial else "side by side"
    pairs = "2 pairs" if len(readings) > 1 else "2 requests"
    note = ": unclear, taken as one at a time (the safe reading)" if unclear else ""
    return serial, f"{pairs} served {how} (the slower took {measured} the faster){note}"


async def _probe_tool_max_tokens(prober: _Prober, facts: Findings, add: Any, capped_latency: float) -> None:
    """A reply with a tool offered (``tool_choice: auto``, as a tool loop sends) and ``max_tokens=8``:
    capped or not. The wait is bounded by 20 times the plain capped reply's time (at least
    :data:`TOOL_CAP_WAIT_S`, at most the doctor's timeout): a
    server that honours the cap answers as fast as it did without tools; one that ignores it generates
    to the end of its context (2,016 tokens in 119 s on llama.cpp's chatml-function-calling)."""
    within = min(max(TOOL_CAP_WAIT_S, 20 * capped_latency), prober.timeout)
    answer = await prober.chat(
        [{"role": "user", "content": "Count from 1 to 300, separated by spaces."}],
        tools=[TIME_TOOL], tool_choice="auto", max_tokens=TOOL_CAP, within=within,
    )  # fmt: skip
    label = "max_tokens with tools"
    if answer.timed_out:
        facts.tool_max_tokens = False
        detail = (
            f"no reply within {within:g}s for max_tokens={TOOL_CAP} (without tools: {capped_latency:.2f}s): "
            "the cap looks ignored; the server may still be generating that reply for a while"
        )
        add("tool_max_tokens", label, "warn", detail, answer.latency_s)
    elif not answer.ok:
        add("tool_max_tokens", label, "info", f"not tested: {answer.why()}", answer.latency_s)
    else:
        produced = answer.completion_tokens()
        facts.tool_max_tokens = produced <= TOOL_CAP + 2
        add(
            "tool_max_tokens", label, "ok" if facts.tool_max_tokens else "warn",
            f"{produced} completion tokens for max_tokens={TOOL_CAP} with a tool offered", answer.latency_s,
        )  # fmt: skip


def _finish(report: DoctorReport, price: Any) -> DoctorReport:
    facts = report.findings
    if price is not None:
        cached = f", cached input ${price.cached_input:g}" if price.cached_input is not None else ""
        detail = f"${price.input:g} in / ${price.output:g} out per 1M tokens{cached}"
        report.checks.append(Check(key="price", label="price", status="ok", detail=detail))
    else:
        detail = "unknown: cost shows as unknown; a dollar --budget needs it in PAGEINDEX_PRICING"
        report.checks.append(Check(key="price", label="price", status="info", detail=detail))
    report.verdict, report.reasons = _verdict(facts, report)
    report.settings = suggest_settings(report)
    return report


def _verdict(facts: Findings, report: DoctorReport) -> tuple[EndpointVerdict, list[str]]:
    if not facts.reachable or not facts.openai_compatible:
        first = next((c.detail for c in report.checks if c.status == "fail"), "not reachable")
        return "unusable", [first]
    if not facts.chat:
        check = report.check("chat")
        return "unusable", [f"plain chat fails: {check.detail if check else 'no reply'}"]
    if not facts.tools_usable and not facts.json_usable:
        return "unusable", [
            "cannot run the LLM retrievers: no tool calls and no JSON output (JSON mode and JSON schema "
            "both ignored); only extractive, bm25 and oracle can run"
        ]
    limits: list[str] = []
    if not facts.tools_usable:
        why = "no tool calls" if not facts.tool_call else "tool results are rejected"
        limits.append(
            f"{why}: use --json-mode; agent and iterative need tool calls, so run planner "
            "(and the retrievers that need no model)"
        )
    elif facts.tool_result_null is False:
        limits.append(
            'rejects content: null on assistant tool-call messages (content "" works, and pageindex '
            'sends ""): other clients\' tool loops that send null get an HTTP error'
        )
    elif facts.tool_result_empty is False:
        limits.append('rejects content "" on assistant tool-call messages (null works)')
    if facts.chat_empty:
        limits.append(
            "the model answered a plain request with an empty message: its answers may be empty too"
        )
    if facts.template_markers:
        limits.append(
            f"replies write out chat-template markers ({', '.join(facts.template_markers)}) and go on past "
            "them: the server's chat template does not end the model's turn, so replies run to max_tokens "
            "with made-up turns; start the server with the model's own chat template"
        )
    if facts.usage is False:
        limits.append("no usage reported: token budgets and costs cannot be counted")
    if facts.max_tokens is False:
        limits.append("max_tokens is ignored: replies are not capped")
    elif facts.tool_max_tokens is False and facts.tools_usable:
        limits.append(
            "max_tokens is ignored when tools are offered: each turn of a tool loop (agent, iterative) may "
            "generate to the end of the context window, which is slow "
            "(bench run --time-limit bounds a sample); planner offers no tools"
        )
    elif facts.finish_length is False:
        limits.append('finish_reason "length" is not reported: cut-off replies look complete')
    if _small_context(facts):
        limits.append(
            f"context window {facts.context_window:,} tokens"
            + (" (lower bound)" if facts.context_lower_bound else "")
            + ": keep prompts (index + fetched sections) under the context budget"
        )
    if facts.model_listed is False:
        limits.append(f"{report.model} is not in the server's model list (it answered anyway)")
    return ("limited" if limits else "usable"), limits


def _prompt_room(window: int) -> int:
    """The prompt tokens a window leaves: the window less a reply's room, at least half of it."""
    return max(window - DEFAULT_MAX_TOKENS, window // 2)


def suggest_settings(report: DoctorReport) -> SuggestedSettings:
    """Settings that suit the endpoint the report describes: JSON mode where tools fail, the
    context window and a prompt budget, a concurrency the server can serve and a timeout
    that fits its measured speed."""
    facts = report.findings
    notes: list[str] = []
    json_mode = not facts.tools_usable and facts.json_usable
    if json_mode:
        notes.append("JSON mode: tool calls do not work here")
    retrievers: list[str] = []
    if facts.chat and (facts.tools_usable or facts.json_usable):
        retrievers = [r for r in LLM_RETRIEVERS if facts.tools_usable or r not in TOOL_RETRIEVERS]
    if facts.serial:
        concurrency = 1
        notes.append("concurrency 1: the server answers one request at a time")
    elif facts.local and facts.serial is False:
        concurrency = 2
    elif facts.local:  # unknown: the safe reading, as the local-server profile
        concurrency = 1
        notes.append(
            "concurrency 1: whether the server serves two requests at once is unknown (the safe reading)"
        )
    else:
        concurrency = 4
    timeout = 60.0
    sure_window = _sure_window(facts)
    if facts.prompt_tps:
        overhead = facts.latency_s or 0.0
        # The largest prompt a run sends: retrievers fill the window the client knows (the server's,
        # else the model table's) less room for the reply, so a timeout sized on a typical prompt
        # cut off the long calls (a real llama.cpp server: most agent samples timed out). That
        # prompt is the context budget below, also when the window is smaller than a typical prompt.
        window = sure_window or known_context_window(report.model)
        prompt = _prompt_room(window) if window else TYPICAL_PROMPT_TOKENS
        # a model that generated nothing leaves the reply's time unknown: the prompt alone sizes it
        # (it was left out, and a 53 tokens/s server was advised the default 60 s); where replies write
        # out chat-template markers, every reply runs on to its cap (gemma-3-270m under llama-server's
        # ChatML template: advised 80 s on a 300-token reply, its 1,024-token replies timed out)
        reply = DEFAULT_MAX_TOKENS if facts.template_markers else TYPICAL_COMPLETION_TOKENS
        generation = reply / facts.generation_tps if facts.generation_tps else 0.0
        estimate = prompt / facts.prompt_tps + generation
        timeout = float(min(max(math.ceil(3 * (estimate + overhead) / 10) * 10, 30), 900))
        which = f" (a {window}-token window less {window - prompt} for the reply)" if window else ""
        runs_on = ""
        if facts.template_markers:
            runs_on = " (replies run to their cap: the chat template does not end the turn)"
        took = f"about {estimate + overhead:.0f}s here"
        notes.append(
            f"timeout {timeout:g}s: a {prompt}-token prompt{which} and a {reply}-token reply{runs_on} "
            f"take {took}"
            if facts.generation_tps
            else f"timeout {timeout:g}s: a {prompt}-token prompt{which} takes {took} (the reply's time is "
            "not counted: the model generated no tokens to measure)"
        )
    elif facts.latency_s:
        timeout = float(min(max(60, math.ceil(10 * facts.latency_s / 10) * 10), 900))
    budget = _prompt_room(sure_window) if sure_window else None
    return SuggestedSettings(
        context_flag=_context_flag(report),
        json_mode=json_mode,
        concurrency=concurrency,
        timeout_s=timeout,
        context_window=facts.context_window,
        context_budget_tokens=budget,
        retrievers=retrievers,
        notes=notes,
    )


async def _told_window(
    spec: ModelSpec, timeout: float, transport: httpx.AsyncBaseTransport | None
) -> ServerWindow | None:
    """The window the server's own API tells (Ollama's loaded model), read as a run reads it; not
    with a test's transport, which the provider does not use."""
    provider = provider_class(spec.provider)
    if provider is None or transport is not None:
        return None
    return await provider(spec).context_window(timeout=timeout)


def _runs_assume(model: str) -> str | None:
    """The window runs size prompts by where the server states none (the known model table's)."""
    known = known_context_window(model)
    return f"runs assume {known:,} tokens (known model table)" if known else None


def _sure_window(facts: Findings) -> int | None:
    """The server's window, unless the context probe only bounds it from below (a bound counts
    when the next doubling was refused: the window is then below twice the bound)."""
    if facts.context_lower_bound and not facts.context_refused:
        return None
    return facts.context_window


def _context_flag(report: DoctorReport) -> int | None:
    """The ``--context-window`` runs need: a window the probe found (a run does not probe; it reads
    /models metadata, else assumes the known model table's), when it differs from what runs assume.
    llama-cpp-python with gemma-3-270m at ``--n_ctx 4096``: the doctor said 4,096 and a 3,072-token
    budget, but not the flag, and runs sized their prompts for the table's 32,768."""
    window = _sure_window(report.findings)
    if window is None or report.findings.context_source != "probe":
        return None
    return None if window == known_context_window(report.model) else window


def _small_context(facts: Findings) -> bool:
    """A known window under :data:`SMALL_CONTEXT` (a probed lower bound counts only when the
    next doubling was refused, so the real window is below twice the bound)."""
    window = _sure_window(facts)
    return window is not None and window < SMALL_CONTEXT


def _whole_refusal(answer: _Answer) -> str:
    """An error's gist and its whole body: the gist is clipped, and a proxy's (LiteLLM's) wraps the server's
    words, with the figures, in its own ("litellm.ContextWindowExceededError: ... (4096 tokens)")."""
    return f"{answer.why()} {json.dumps(answer.data or {})}"


async def _probe_context(prober: _Prober) -> tuple[int | None, bool, int | None, str]:
    """Up to 4 calls doubling a filler prompt; the largest accepted prompt is a lower bound, and a
    refusal that states the window (llama.cpp, vLLM, OpenAI do) gives the window itself, as does a
    prompt the server read as hardly more tokens than one half as long (cut without an error).
    Returns (bound, whether a larger prompt was refused, the window the refusal states or the cut
    shows (a cut: not refused), the account)."""
    best: int | None = None
    size = CONTEXT_PROBE_START
    tried: list[str] = []
    refused = False  # the last prompt tried was refused (an HTTP error, not silence)
    for _ in range(CONTEXT_PROBE_CALLS):
        messages = [{"role": "user", "content": _filler(size) + "\nReply with exactly the word OK."}]
        answer = await prober.chat(messages, max_tokens=1)
        if answer.status is None:  # a timeout or a dropped connection says nothing about the window
            tried.append(f"~{size:,} stopped ({_gist(answer.why(), 60)})")
            break
        if not answer.ok:
            # the server's count where its refusal states one (llama-server behind LiteLLM said 7,090 where
            # the row said ~8,192, the filler's estimate)
            counted_by_server = stated_request_tokens(_whole_refusal(answer))
            said = f"{counted_by_server:,}" if counted_by_server else f"~{size:,}"
            tried.append(f"{said} refused ({_gist(answer.why(), 60)})")
            refused = True
            break
        accepted = answer.prompt_tokens(len(messages[0]["content"]))
        chars = len(messages[0]["content"])
        if (best is not None and accepted < 1.5 * best) or (answer.usage and prompt_cut(chars, accepted)):
            # a prompt twice as long read as hardly more tokens: the server cut it, without an error
            window = max(best or 0, accepted)
            tried.append(f"~{size:,} read as {accepted:,}")
            return best, False, window, (
                f"about {window:,} tokens: the server cut a longer prompt to it without an error "
                "(Ollama does so past its context length): " + "; ".join(tried)
            )  # fmt: skip
        best = max(best or 0, accepted)
        tried.append(f"{accepted:,} ok")
        size *= 2
    stated = stated_context_window(_whole_refusal(answer)) if refused else None
    if stated is not None:
        return best, refused, stated, f"{stated:,} tokens, as the refusal states: " + "; ".join(tried)
    if best is None:
        what = "were refused" if refused else "got no answer"
        return None, refused, None, f"even ~{CONTEXT_PROBE_START:,} tokens {what}: " + "; ".join(tried)
    return best, refused, None, f"at least {best:,} tokens: " + "; ".join(tried)


# ----------------------------------------------------------------------------- helpers
def _round_trip(content: str | None) -> list[dict[str, Any]]:
    call = {
        "id": "call_doctor_1",
        "type": "function",
        "function": {"name": "get_secret_word", "arguments": "{}"},
    }
    return [
        {"role": "user", "content": "Call get_secret_word, then tell me the word it returns."},
        {"role": "assistant", "content": content, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_doctor_1", "content": "The secret word is PLUM."},
    ]


def _arguments_problem(call: dict[str, Any], schema: dict[str, Any]) -> str | None:
    raw = (call.get("function") or {}).get("arguments")
    try:
        args = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError:
        return f"arguments are not JSON: {_gist(str(raw))!r}"
    if not isinstance(args, dict):
        return f"arguments are not a JSON object: {_gist(str(raw))!r}"
    return schema_error(args, schema)


def _json_object(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text.strip())
    except (json.JSONDecodeError, AttributeError):
        return None
    return value if isinstance(value, dict) else None


def _filler(tokens: int) -> str:
    chars = tokens * 4
    return (FILLER * (chars // len(FILLER) + 1))[:chars]


def _rate(tokens_delta: int, seconds_delta: float, tokens: int, seconds: float) -> float:
    """Tokens per second from the difference to a small baseline call (overhead cancels), or
    from the call alone when the difference is too small to measure."""
    if tokens_delta > 0 and seconds_delta > 0.01:
        return round(tokens_delta / seconds_delta, 1)
    return round(tokens / max(seconds, 1e-3), 1)


def _gist(text: str, limit: int = 48) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _is_local(base_url: str) -> bool:
    host = httpx.URL(base_url).host
    if host in {"localhost", ""} or host.endswith(".local"):
        return True
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return address.is_loopback or address.is_private


# ----------------------------------------------------------------------------- the cache
def cache_dir() -> Path:
    """``$PAGEINDEX_CACHE_DIR/doctor``, else ``~/.cache/pageindex/doctor`` (beside the LLM cache)."""
    return cache_root() / "doctor"


def cache_key(spec: ModelSpec) -> str:
    """The cache file name for (base URL without credentials, model): no secret goes into it."""
    url = _strip_credentials(spec.base_url or "")
    digest = hashlib.sha256(f"{url}\n{spec.model}".encode()).hexdigest()[:20]
    slug = re.sub(r"[^A-Za-z0-9]+", "-", spec.model).strip("-")[:40]
    return f"{slug}-{digest}.json"


def _strip_credentials(url: str) -> str:
    """The URL with user-info and credential-like query values removed (not just masked)."""
    from pageindex.llm.redact import is_sensitive_param

    parsed = httpx.URL(url)
    params = [(k, v) for k, v in parsed.params.multi_items() if not is_sensitive_param(k)]
    return str(parsed.copy_with(userinfo=b"", params=params or None)).rstrip("/?")


def save_report(report: DoctorReport, spec: ModelSpec, directory: Path | None = None) -> Path:
    """Write ``report`` to the cache (atomically). The report holds the masked URL only; any
    secret of ``spec`` that would appear in it is masked before writing."""
    from pageindex.llm.redact import redact

    path = (directory or cache_dir()) / cache_key(spec)
    text = redact(report.model_copy(update={"cached": False}).model_dump_json(indent=2), spec.secrets())
    write_atomic(path, text)  # a full disk leaves no half-written temp file behind
    return path


def cached_findings(
    spec: ModelSpec,
    *,
    max_age: timedelta = CACHE_TTL,
    directory: Path | None = None,
    now: datetime | None = None,
) -> DoctorReport | None:
    """The doctor's cached report for ``spec``'s (endpoint, model), if younger than ``max_age``
    (7 days); None when there is none, it is stale, or it cannot be read."""
    if spec.base_url is None:
        return None
    path = (directory or cache_dir()) / cache_key(spec)
    try:
        report = DoctorReport.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError, ValueError):
        return None
    if report.version != REPORT_VERSION or report.model != spec.model:
        return None
    if (now or datetime.now(UTC)) - report.probed_at > max_age:
        return None
    return report.model_copy(update={"cached": True})


def run_doctor(
    spec: ModelSpec,
    *,
    timeout: float = 30.0,
    probe_context: bool = False,
    probe_tool_cap: bool = False,
    refresh: bool = False,
    use_cache: bool = True,
    transport: httpx.AsyncBaseTransport | None = None,
    warn: Callable[[str], None] | None = None,
) -> DoctorReport:
    """The cached report when fresh (unless ``refresh``), else :func:`diagnose` and cache it.
    A report asked with ``probe_context`` or ``probe_tool_cap`` is only served from a cache that
    probed it too. A cache that cannot be written (``$PAGEINDEX_CACHE_DIR`` a file, a full or
    read-only disk) loses no findings: the report is returned, and ``warn`` told why it was not
    kept (it was an ``internal error: NotADirectoryError`` after minutes of probes).

    Cached findings are served only after the preflight passes now (one ``GET /models``): they said
    ``usable`` of a server that had been stopped since, or of a key it refuses (a LiteLLM proxy with the
    wrong key, or stopped: exit 1, where ``bench run`` then stopped with exit 2). A failed preflight
    probes again, and its unusable verdict is what the doctor says."""
    if use_cache and not refresh:
        cached = cached_findings(spec)
        tool_row = cached.check("tool_max_tokens") if cached is not None else None
        if (
            cached is not None
            and (not probe_context or cached.check("context_probe") is not None)
            and (not probe_tool_cap or (tool_row is not None and tool_row.status != "skip"))
            and _still_answers(spec, timeout, transport, cached)
        ):
            return cached
    report = asyncio.run(
        diagnose(
            spec, timeout=timeout, probe_context=probe_context, probe_tool_cap=probe_tool_cap,
            transport=transport,
        )  # fmt: skip
    )
    if use_cache and report.findings.reachable and report.verdict != "unusable" and not report.unsure:
        # An unusable endpoint is not remembered: the next doctor probes again (a server started
        # on that port since, or fixed, is found at once rather than after the cache expires).
        try:
            save_report(report, spec)
        except OSError as exc:
            where = cache_dir() / cache_key(spec)
            (warn or log.warning)(
                f"the findings are not cached: cannot write {where} ({exc.strerror or exc}); "
                "bench run and ask will not take their settings from them"
            )
    return report


def _still_answers(
    spec: ModelSpec, timeout: float, transport: httpx.AsyncBaseTransport | None, cached: DoctorReport
) -> bool:
    """Whether ``spec``'s endpoint passes the preflight now (reachable, the key taken, the model served),
    is no proxy that cannot reach its model server (a LiteLLM proxy lists its models all the same: one
    token of chat), and lists the context window ``cached`` read from its metadata (a llama-server
    restarted with another ``-c`` lists its new ``n_ctx``: the cached window was said after it), or tells
    it as a run reads it (``-m openai/gemma`` at a llama-server that lists only its model file: the
    window of the one model listed; Ollama's loaded model)."""

    async def probe() -> tuple[PreflightResult, ServerWindow | None]:
        found = await preflight(spec, timeout=timeout, transport=transport)
        await check_upstream(spec, timeout=timeout, transport=transport, found=found)
        told = None
        if cached.findings.context_source == "server":
            told = await _told_window(spec, timeout, transport)
        return found, told

    try:
        found, told = asyncio.run(probe())
    except LLMConfigError:
        return False
    if cached.findings.context_source == "metadata":
        return context_window_from_metadata(found.metadata)[0] == cached.findings.context_window
    if cached.findings.context_source == "server" and transport is None:
        return told is not None and told.tokens == cached.findings.context_window
    return True


# ----------------------------------------------------------------------------- run defaults
DEFAULTABLE = ("json_mode", "concurrency", "timeout_s", "context_window")


def doctor_defaults(
    spec: ModelSpec, *, given: set[str] | frozenset[str] = frozenset(), directory: Path | None = None
) -> tuple[dict[str, Any], list[str]]:
    """Settings from the cached doctor findings for ``spec`` that a run or ``ask`` should use, and
    one note per setting saying why (for the run's header and run.json).

    Only settings in :data:`DEFAULTABLE` that are not in ``given`` are returned: ``given`` holds
    what the user's flags (or a resumed run's stored settings) already decided, which win over the
    doctor; the doctor's findings in turn win over a local-server profile and the defaults. No
    cached findings (or stale ones): nothing, and no call is made."""
    report = cached_findings(spec, directory=directory)
    if report is None or report.verdict == "unusable" and not report.findings.chat:
        return {}, []
    settings = report.settings
    when = report.probed_at.strftime("%Y-%m-%d")
    out: dict[str, Any] = {}
    notes: list[str] = []
    if "json_mode" not in given and settings.json_mode:
        out["json_mode"] = True
        # the URL in use now (the report may have been made with credentials in it: same server)
        notes.append(f"JSON mode: tool calls do not work at {spec.display_url} (pageindex doctor, {when})")
    if "concurrency" not in given and report.findings.serial:
        out["concurrency"] = settings.concurrency
        notes.append(
            f"concurrency {settings.concurrency}: the server answers one request at a time "
            f"(pageindex doctor, {when})"
        )
    if "timeout_s" not in given and settings.timeout_s > 60:
        out["timeout_s"] = settings.timeout_s
        notes.append(
            f"timeout {settings.timeout_s:g}s: measured speed of {report.spec} (pageindex doctor, {when})"
        )
    if "context_window" not in given and settings.context_flag:
        # the window the context probe found, which runs do not learn by themselves (the verdict's
        # `use: --context-window N`): taken as if given, so prompts are sized for it from the start
        flag = settings.context_flag
        how = "a longer prompt was cut without an error" if report.findings.context_cut else (
            "the server stated it when refusing a longer prompt")  # fmt: skip
        out["context_window"] = flag
        notes.append(f"context window {flag:,} tokens: {how} (pageindex doctor --probe-context, {when})")
    return out, notes


def doctor_settings_for(
    model: str | None, base_url: str | None, *, given: set[str] | frozenset[str] = frozenset()
) -> tuple[dict[str, Any], list[str]]:
    """:func:`doctor_defaults` for a model spec string as a user typed it (``--model``,
    ``--base-url``): nothing for providers with no server to have probed (``scripted``,
    ``replay``, plug-ins that say so) or a spec that does not resolve; no call is made. The findings
    are the endpoint's and the model's, whatever key reaches them: the spec is resolved without one
    (a judge at OpenAI's endpoint with only ``$PAGEINDEX_JUDGE_API_KEY`` set found none)."""
    spec = _probed_spec(model, base_url)
    return doctor_defaults(spec, given=given) if spec is not None else ({}, [])


def _probed_spec(model: str | None, base_url: str | None) -> ModelSpec | None:
    """The spec whose endpoint the doctor may have probed (resolved without a key); None for providers
    with no server (``scripted``, ``replay``, plug-ins that say so) or a spec that does not resolve."""
    from pageindex.llm.spec import PLACEHOLDER_KEY, parse_spec

    provider = provider_class(model.split("/", 1)[0]) if model else None
    if provider is None or not provider.remote:
        return None
    try:
        return parse_spec(model or "", base_url=base_url, api_key=PLACEHOLDER_KEY)
    except LLMError:
        return None


def tool_loop_warning(
    model: str | None, base_url: str | None, retrievers: Sequence[str], *, outcome: str
) -> str | None:
    """What to say before a run or ``ask`` whose ``retrievers`` include a tool loop (agent, iterative)
    at an endpoint where the cached doctor findings say tool calls do not work: each such sample ends
    without an answer after its turns (the doctor's verdict says to run planner; the run went on in
    silence, exit 0). ``outcome`` says what ends so (``their samples end``). None: nothing to say."""
    loops = [name for name in retrievers if name in TOOL_RETRIEVERS]
    spec = _probed_spec(model, base_url) if loops else None
    report = cached_findings(spec) if spec is not None else None
    if report is None or report.findings.tools_usable or not report.findings.chat:
        return None
    why = "no tool calls" if not report.findings.tool_call else "that tool results are rejected"
    when = report.probed_at.strftime("%Y-%m-%d")
    need = "needs" if len(loops) == 1 else "need"
    return (
        f"{' and '.join(loops)} {need} tool calls, and pageindex doctor found {why} at {spec.display_url} "
        f"({when}): {outcome} without an answer; run planner there (pageindex doctor --refresh if the "
        "server changed)"
    )
