"""Fault kinds, their rates, and the seeded choice of which request gets which fault.

The choice is a pure function of ``(seed, request key, attempt number of that key)``, so a
run is reproducible even when requests arrive in a different order: the n-th attempt of a
given logical request always meets the same fate for a given seed.

``needs_more`` is sticky: once a conversation (same system prompt and first user message)
draws it, every later request of that conversation gets a "needs more" reply, so a retriever
loop that never stops on its own would spin until its own cap.
"""

from __future__ import annotations

import hashlib
import json
import random
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field, field_validator, model_validator

from bench.faults.policies import IndexEntry, fetch_tool, fetched_ids, index_entries
from bench.faults.protocol import ChatRequest, Reply, ToolCallOut
from bench.faults.schema_fill import Hints, fill_schema, wrong_types


class FaultKind(StrEnum):
    RATE_LIMIT = "429"  # 429 with Retry-After (and retry-after-ms)
    RATE_LIMIT_BARE = "429-bare"  # 429 without any retry-after header
    SERVER_500 = "500"
    BAD_GATEWAY = "502"
    UNAVAILABLE = "503"
    RESET = "reset"  # TCP connection reset before any response byte
    STALL = "stall"  # wait ``stall_seconds`` before answering normally
    TRUNCATED = "truncated"  # 200, application/json, body cut in half
    WRONG_SHAPE = "wrong_shape"  # 200, valid JSON that is not a chat.completion
    UNKNOWN_TOOL = "unknown_tool"  # a tool call to a function that was not offered
    BAD_ARGS = "bad_args"  # a tool call whose arguments have the wrong JSON types
    BAD_SECTION = "bad_section"  # fetch_section on a node id that is not in the index
    NEEDS_MORE = "needs_more"  # endless "needs more" replies (sticky per conversation)

    @property
    def is_http(self) -> bool:
        """Faults at the transport/HTTP level, applicable to every request."""
        return self in HTTP_FAULTS


HTTP_FAULTS = frozenset(
    {
        FaultKind.RATE_LIMIT,
        FaultKind.RATE_LIMIT_BARE,
        FaultKind.SERVER_500,
        FaultKind.BAD_GATEWAY,
        FaultKind.UNAVAILABLE,
        FaultKind.RESET,
        FaultKind.STALL,
        FaultKind.TRUNCATED,
        FaultKind.WRONG_SHAPE,
    }
)
STATUS_OF = {
    FaultKind.RATE_LIMIT: 429,
    FaultKind.RATE_LIMIT_BARE: 429,
    FaultKind.SERVER_500: 500,
    FaultKind.BAD_GATEWAY: 502,
    FaultKind.UNAVAILABLE: 503,
}
ALIASES: dict[str, list[FaultKind]] = {
    "all": list(FaultKind),
    "http": sorted(HTTP_FAULTS, key=list(FaultKind).index),
    "5xx": [FaultKind.SERVER_500, FaultKind.BAD_GATEWAY, FaultKind.UNAVAILABLE],
    "tools": [FaultKind.UNKNOWN_TOOL, FaultKind.BAD_ARGS, FaultKind.BAD_SECTION],
}
NO_FAULT = "none"
MISSING_NODE_ID = "no_such_section_999"
UNKNOWN_TOOL_NAME = "run_shell_command"


def parse_faults(spec: str | list[str] | None) -> dict[FaultKind, float | None]:
    """``"429,500,stall=0.05"`` -> kinds with optional explicit rates (None = share ``rate``).

    Aliases: ``all``, ``http``, ``5xx``, ``tools``. Unknown names raise ``ValueError``.
    """
    if spec is None:
        return dict.fromkeys(FaultKind)
    items = spec.split(",") if isinstance(spec, str) else list(spec)
    out: dict[FaultKind, float | None] = {}
    for item in (i.strip() for i in items):
        if not item:
            continue
        name, _, rate_text = item.partition("=")
        rate = float(rate_text) if rate_text else None
        name = name.strip().lower()
        if name in ALIASES:
            for kind in ALIASES[name]:
                out[kind] = rate
            continue
        try:
            out[FaultKind(name)] = rate
        except ValueError:
            known = ", ".join([k.value for k in FaultKind] + list(ALIASES))
            raise ValueError(f"unknown fault kind {name!r}; known: {known}") from None
    return out


class FaultConfig(BaseModel):
    """How often and which faults to inject.

    ``rate`` is the probability that a request gets a fault at all, shared equally by the
    kinds in ``faults`` that have no explicit rate in ``rates``. A kind that does not apply
    to a request (tool faults on a request without tools) is skipped: its share goes to the
    kinds that apply, so the overall rate holds.
    """

    rate: float = Field(0.0, ge=0.0, le=1.0)
    faults: list[FaultKind] = Field(default_factory=lambda: list(FaultKind))
    rates: dict[FaultKind, float] = Field(default_factory=dict)
    seed: int = 0
    stall_seconds: float = Field(90.0, ge=0.0)
    retry_after_seconds: float = Field(1.0, ge=0.0)
    echo_api_key: bool = False  # put the caller's bearer token in error messages (redaction tests)
    max_faults_per_key: int | None = None  # after this many faults for one key, always answer

    @field_validator("faults", mode="before")
    @classmethod
    def _parse_faults(cls, value: Any) -> Any:
        if value is None or isinstance(value, str):
            return list(parse_faults(value))
        return [FaultKind(v) if not isinstance(v, FaultKind) else v for v in value]

    @model_validator(mode="after")
    def _check_rates(self) -> FaultConfig:
        if sum(self.weights().values()) > 1.0 + 1e-9:
            raise ValueError("fault rates add up to more than 1")
        return self

    def weights(self) -> dict[FaultKind, float]:
        """Per-kind probability (before skipping kinds that do not apply)."""
        kinds = list(dict.fromkeys([*self.faults, *self.rates]))
        shared = [k for k in kinds if k not in self.rates]
        each = self.rate / len(shared) if shared else 0.0
        return {k: self.rates.get(k, each) for k in kinds}


def applicable(kind: FaultKind, request: ChatRequest) -> bool:
    if kind.is_http or kind is FaultKind.NEEDS_MORE:
        return True
    if kind is FaultKind.BAD_SECTION:
        return request.offers_tools() and fetch_tool(request) is not None
    if kind is FaultKind.BAD_ARGS:
        return bool(request.tools) or request.response_schema() is not None
    return bool(request.tools)  # UNKNOWN_TOOL


def choose_fault(config: FaultConfig, request: ChatRequest, key: str, attempt: int) -> FaultKind | None:
    """The fault for the ``attempt``-th (0-based) request with logical key ``key``, or None."""
    weights = config.weights()
    total = sum(weights.values())
    if total <= 0:
        return None
    digest = hashlib.sha256(f"{config.seed}:{key}:{attempt}".encode()).digest()
    rng = random.Random(int.from_bytes(digest[:8], "big"))
    if rng.random() >= total:
        return None
    usable = [(k, w) for k, w in weights.items() if w > 0 and applicable(k, request)]
    if not usable:
        return None
    kinds, ws = zip(*usable, strict=True)
    return rng.choices(kinds, weights=ws, k=1)[0]


# ------------------------------------------------------------ content-level fault replies
def fault_reply(kind: FaultKind, request: ChatRequest, base: Reply) -> Reply:
    """The reply for a content-level fault; ``base`` is what the policy would have said."""
    if kind is FaultKind.UNKNOWN_TOOL:
        return Reply(
            tool_calls=[ToolCallOut(name=UNKNOWN_TOOL_NAME, arguments={"command": "cat /etc/passwd"})]
        )
    if kind is FaultKind.BAD_SECTION:
        return Reply(
            tool_calls=[
                ToolCallOut(
                    name=fetch_tool(request) or "fetch_section", arguments={"node_id": MISSING_NODE_ID}
                )
            ]
        )
    if kind is FaultKind.BAD_ARGS:
        if base.tool_calls:
            calls = [
                ToolCallOut(
                    name=c.name,
                    arguments=wrong_types(c.arguments if isinstance(c.arguments, dict) else {}),
                )
                for c in base.tool_calls
            ]
            return Reply(tool_calls=calls)
        name = (
            request.forced_tool()
            or fetch_tool(request)
            or (request.tool_names() or ["fetch_section"])[0]
        )
        schema = (
            request.tool_schema(name)
            or request.response_schema()
            or {"type": "object", "properties": {}}
        )
        wrong = wrong_types(fill_schema(schema))
        if not wrong:
            wrong = {"node_id": 12345, "offset": "zero"}
        if request.tools:
            return Reply(tool_calls=[ToolCallOut(name=name, arguments=wrong)])
        return Reply(content=json.dumps(wrong))
    if kind is FaultKind.NEEDS_MORE:
        return needs_more_reply(request)
    raise ValueError(f"{kind} is not a content-level fault")


def needs_more_reply(request: ChatRequest) -> Reply:
    """A reply that never concludes: fetch yet another section, or ask for more."""
    hints = Hints(
        choice="needs", answer="", text="Need more information: the figure is not in the sections seen."
    )
    forced = request.forced_tool()
    if forced is not None:
        schema = request.tool_schema(forced) or {"type": "object", "properties": {}}
        return Reply(tool_calls=[ToolCallOut(name=forced, arguments=fill_schema(schema, hints))])
    schema = request.response_schema()
    if schema is not None and not request.offers_tools():
        return Reply(content=json.dumps(fill_schema(schema, hints)))
    fetch = fetch_tool(request) if request.offers_tools() else None
    if fetch is not None:
        entries = index_entries(request) or [IndexEntry("1", "Section")]
        entry = entries[len(fetched_ids(request)) % len(entries)]
        return Reply(tool_calls=[ToolCallOut(name=fetch, arguments={"node_id": entry.node_id})])
    return Reply(
        content="NEEDS MORE: I need more information before I can answer. Please fetch another section."
    )
