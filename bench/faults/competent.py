"""The fault server's named policies, and a default that answers like a competent model.

``pageindex bench fault-server --policy NAME`` picks one of :data:`POLICY_NAMES` or loads
``module:function`` / ``file.py:function``:

* ``competent`` (the default): pageindex's own prompts (agent, planner, iterative, judges) get
  :class:`~bench.faults.scripted.ChatPolicy`'s answers; anything else gets what a competent
  general model would send -- a forced tool is called with arguments that fit its schema, a
  ``response_format`` gets a JSON object (fitting the schema when one is given), offered tools are
  called (once per quoted item when parallel calls are allowed) and their results read back, and
  plain questions get short answers ("reply with exactly X" -> ``X``, ``2+3`` -> ``5``, "count
  from 1 to 50" -> the numbers). So "point any client at it" gives answers.
* ``section-seeking``: :class:`~bench.faults.policies.SectionSeekingPolicy` (the library default).
* ``scripted``: :class:`~bench.faults.scripted.ChatPolicy` alone (the soak's model).

A ``module:function`` is either a fault-server policy (a callable of a
:class:`~bench.faults.protocol.ChatRequest` -- a class instance with ``__call__``, or a function
whose first parameter is annotated ``ChatRequest``) or a ``--scripted-policy`` function of a
:class:`~pageindex.llm.scripted.ScriptedRequest` (any other function, or a ``ScriptedModel``),
served through :meth:`ScriptedModel.respond` exactly as the in-process scripted model answers.
"""

from __future__ import annotations

import inspect
import json
import operator
import re
import typing
from typing import Any

from bench.faults.policies import Policy, SectionSeekingPolicy, as_reply, fetch_tool, index_entries
from bench.faults.protocol import ChatRequest, Reply, ToolCallOut
from bench.faults.schema_fill import Hints, fill_schema
from bench.faults.scripted import ChatPolicy

POLICY_NAMES = ("competent", "section-seeking", "scripted")
DEFAULT_POLICY = "competent"

_EXACTLY = re.compile(
    r"\b(?:reply|respond|answer|say)\s+(?:with\s+)?(?:(?:exactly|only|just)\s+(?:the\s+word\s+)?|the\s+word\s+)"
    r"[\"'`]?([\w\-.!]+)",
    re.IGNORECASE,
)
_ARITH = re.compile(
    r"\b(?:what\s+is|what's|compute|calculate)\s+(-?\d+(?:\.\d+)?)\s*([+\-*x×])\s*(-?\d+(?:\.\d+)?)",
    re.IGNORECASE,
)
_COUNT = re.compile(r"\bcount\s+from\s+(\d+)\s+to\s+(\d+)", re.IGNORECASE)
_QUOTED = re.compile(r"[\"“]([^\"”]{1,60})[\"”]")
_OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "x": operator.mul, "×": operator.mul}


class GeneralPolicy:
    """A competent general-purpose model for requests that are not pageindex's own prompts."""

    def __init__(self) -> None:
        self._sections = SectionSeekingPolicy()

    def __call__(self, chat: ChatRequest) -> Reply:
        if index_entries(chat) or fetch_tool(chat):  # a document index or a fetch tool: read sections
            return as_reply(chat, self._sections(chat))
        hints = Hints(answer=self.text(chat), text=self.text(chat), extra=self._quoted_extra(chat))
        forced = chat.forced_tool()
        if forced is not None:
            schema = chat.tool_schema(forced) or {"type": "object", "properties": {}}
            return Reply(tool_calls=[ToolCallOut(name=forced, arguments=fill_schema(schema, hints))])
        schema = chat.response_schema()
        if schema is not None:
            return Reply(content=json.dumps(fill_schema(schema, hints)))
        if chat.wants_json():
            return Reply(content=json.dumps({"answer": self.text(chat)}))
        if chat.offers_tools():
            return self.tool_step(chat)
        return Reply(content=self.text(chat))

    def tool_step(self, chat: ChatRequest) -> Reply:
        last = chat.messages[-1] if chat.messages else {}
        if last.get("role") == "tool":  # read the results back
            results = [str(m.get("content") or "") for m in _trailing_tool_messages(chat)]
            return Reply(content="The tool returned: " + "; ".join(results))
        name = chat.tool_names()[0]
        schema = chat.tool_schema(name) or {"type": "object", "properties": {}}
        items = _QUOTED.findall(_last_user(chat))
        string_params = [
            key for key, prop in (schema.get("properties") or {}).items() if prop.get("type") == "string"
        ]
        parallel = getattr(chat, "parallel_tool_calls", None) is not False
        if len(items) > 1 and parallel and string_params:
            return Reply(
                tool_calls=[
                    ToolCallOut(
                        name=name, arguments=fill_schema(schema, Hints(extra={string_params[0]: item}))
                    )
                    for item in dict.fromkeys(items)
                ]
            )
        return Reply(tool_calls=[ToolCallOut(name=name, arguments=fill_schema(schema, self._hints(chat)))])

    def text(self, chat: ChatRequest) -> str:
        """A short plain answer to the last user message."""
        question = _last_user(chat)
        count = _COUNT.search(question)
        if count:
            start, end = int(count.group(1)), int(count.group(2))
            return " ".join(str(n) for n in range(start, min(end, start + 5000) + 1))
        exact = _EXACTLY.search(question)
        if exact:
            return exact.group(1).rstrip(".!")
        arith = _ARITH.search(question)
        if arith and arith.group(2) in _OPS:
            value = _OPS[arith.group(2)](float(arith.group(1)), float(arith.group(3)))
            return f"{value:g}"
        topic = " ".join(question.split()[:12]).rstrip("?.!")
        return f"Here is a short answer about {topic or 'your question'}: it depends on the details given."

    def _hints(self, chat: ChatRequest) -> Hints:
        return Hints(answer=self.text(chat), text=self.text(chat), extra=self._quoted_extra(chat))

    def _quoted_extra(self, chat: ChatRequest) -> dict[str, Any]:
        """Fill the first string parameter of a forced/offered tool with the first quoted item."""
        items = _QUOTED.findall(_last_user(chat))
        if not items:
            return {}
        names = [chat.forced_tool()] if chat.forced_tool() else chat.tool_names()[:1]
        for name in names:
            schema = chat.tool_schema(name) if name else None
            for key, prop in ((schema or {}).get("properties") or {}).items():
                if prop.get("type") == "string":
                    return {key: items[0]}
        return {}


class CompetentPolicy(ChatPolicy):
    """pageindex's prompts as :class:`ChatPolicy` answers them; everything else as :class:`GeneralPolicy`."""

    def __init__(self, *, max_fetches: int = 2):
        super().__init__(max_fetches=max_fetches)
        self._fallback = GeneralPolicy()  # type: ignore[assignment]


class ScriptedPolicyServer:
    """Serves a ``--scripted-policy`` function (or a ``ScriptedModel``) as a fault-server policy."""

    def __init__(self, policy: Any):
        from pageindex.llm.scripted import ScriptedModel

        self.model = policy if isinstance(policy, ScriptedModel) else ScriptedModel(policy=policy)

    async def __call__(self, chat: ChatRequest) -> Reply:
        wire = await self.model.respond(chat.model_dump(mode="json", exclude_none=True))
        if wire.raise_error is not None:
            raise wire.raise_error
        if wire.status >= 400 or wire.text is not None or wire.timeout:
            raise RuntimeError(f"scripted policy answered HTTP {wire.status} / a raw body, not a reply")
        choice = wire.body["choices"][0]
        message = choice["message"]
        calls = [
            ToolCallOut(id=c.get("id"), name=c["function"]["name"], arguments=c["function"]["arguments"])
            for c in message.get("tool_calls") or []
        ]
        return Reply(
            content=message.get("content"), tool_calls=calls, finish_reason=choice.get("finish_reason")
        )


def resolve_policy(spec: str | None) -> Policy:
    """A policy by name (:data:`POLICY_NAMES`) or ``module:function`` / ``file.py:function``.
    Raises ``ValueError`` with one line naming what is allowed."""
    name = (spec or DEFAULT_POLICY).strip()
    if name == "competent":
        return CompetentPolicy()
    if name == "section-seeking":
        return SectionSeekingPolicy()
    if name == "scripted":
        return ChatPolicy()
    if ":" not in name:
        raise ValueError(f"unknown policy {name!r}; use one of {', '.join(POLICY_NAMES)} or module:function")
    from pageindex.llm.scripted import ScriptedModel, load_policy

    loaded = load_policy(name)
    if isinstance(loaded, type):  # a policy class: instantiate it
        loaded = loaded()
    if isinstance(loaded, ScriptedModel) or not _takes_chat_request(loaded):
        return ScriptedPolicyServer(loaded)
    return loaded  # type: ignore[return-value]


def _takes_chat_request(fn: Any) -> bool:
    if not inspect.isfunction(fn) and not inspect.ismethod(fn):
        return callable(fn)  # an instance with __call__ (SectionSeekingPolicy and the like)
    try:
        hints = typing.get_type_hints(fn)
    except Exception:
        hints = dict(getattr(fn, "__annotations__", {}))
    params = [p for p in inspect.signature(fn).parameters.values() if p.name != "self"]
    if not params:
        return False
    annotation = hints.get(params[0].name, params[0].annotation)
    return annotation is ChatRequest or annotation == "ChatRequest"


def _last_user(chat: ChatRequest) -> str:
    users = [m for m in chat.messages if m.get("role") == "user"]
    if not users:
        return ""
    content = users[-1].get("content")
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def _trailing_tool_messages(chat: ChatRequest) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in reversed(chat.messages):
        if message.get("role") != "tool":
            break
        out.append(message)
    return list(reversed(out))
