"""The OpenAI chat-completions wire format: our types to request JSON and back.

One place converts :class:`Message`/:class:`ToolSpec` into the JSON every OpenAI-compatible
server accepts, parses tool calls out of replies (flagging malformed ones instead of raising),
and builds what servers send back -- ``chat.completion`` bodies, error bodies and the ``/v1/models``
listing -- for the scripted model and the fake servers (:mod:`pageindex.llm.fakeserver`, which the
test server and ``bench/faults`` both build on).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from pageindex.llm.types import Message, ToolCall, ToolSpec

# ----------------------------------------------------------------------------- requests
# Version of the request format (what ``message_to_wire`` sends and what the client puts in a
# request). It is part of every cache key: a change to the messages makes old recordings miss,
# and the miss says they were recorded with an older format. History: 1 = ``content: null`` on
# assistant tool-call messages; 2 = ``content: ""`` there (servers such as llama-cpp-python
# reject null with HTTP 500), ``max_tokens`` on every call, ``tool_choice: "auto"`` with tools;
# 3 = a tool loop's last turn sends ``tool_choice: "none"`` (the model must answer in text).
REQUEST_FORMAT = 3


def message_to_wire(message: Message) -> dict[str, Any]:
    """One message as JSON. ``content`` is always a string: an assistant message that only
    carries tool calls sends ``""``, never ``null`` (llama-cpp-python's server answers ``null``
    with HTTP 500 ``Input should be a valid string``; OpenAI, vLLM and Ollama accept both)."""
    out: dict[str, Any] = {"role": message.role, "content": message.content or ""}
    if message.tool_calls:
        out["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {
                    "name": call.name,
                    "arguments": call.raw_arguments or json.dumps(call.arguments),
                },
            }
            for call in message.tool_calls
        ]
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    if message.name is not None:
        out["name"] = message.name
    return out


def tool_to_wire(tool: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters},
    }


def message_from_wire(data: dict[str, Any]) -> Message:
    content = data.get("content")
    if isinstance(content, list):  # content parts: keep the text ones
        content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
    calls = [parse_tool_call(raw) for raw in data.get("tool_calls") or []]
    return Message(
        role=data["role"],
        content=content,
        tool_calls=calls or None,
        tool_call_id=data.get("tool_call_id"),
        name=data.get("name"),
    )


def tool_from_wire(data: dict[str, Any]) -> ToolSpec:
    function = data.get("function", data)
    return ToolSpec(
        name=function["name"],
        description=function.get("description") or "",
        parameters=function.get("parameters") or {},
    )


# ----------------------------------------------------------------------------- replies
def parse_tool_call(raw: dict[str, Any], tools: list[ToolSpec] | None = None) -> ToolCall:
    """Parse one wire tool call. Never raises: problems land in ``ToolCall.error``."""
    function = raw.get("function") or {}
    name = function.get("name") or ""
    raw_arguments = function.get("arguments")
    if not isinstance(raw_arguments, str):
        raw_arguments = json.dumps(raw_arguments) if raw_arguments is not None else ""
    call = ToolCall(id=raw.get("id") or "", name=name, raw_arguments=raw_arguments)
    try:
        parsed = json.loads(raw_arguments) if raw_arguments.strip() else {}
    except json.JSONDecodeError as exc:
        call.error = f"malformed JSON arguments ({exc.msg} at char {exc.pos})"
        return call
    if not isinstance(parsed, dict):
        call.error = f"arguments must be a JSON object, got {type(parsed).__name__}"
        return call
    call.arguments = parsed
    if tools is not None:
        spec = next((tool for tool in tools if tool.name == name), None)
        if spec is None:
            known = ", ".join(tool.name for tool in tools) or "none"
            call.error = f"unknown tool {name!r} (known: {known})"
        else:
            call.error = schema_error(parsed, spec.parameters)
    return call


def schema_error(arguments: dict[str, Any], schema: dict[str, Any]) -> str | None:
    """The first way ``arguments`` breaks ``schema`` (wrong type, missing field), or None.

    Uses ``jsonschema`` when it is installed; without it only required fields are checked.
    """
    try:
        import jsonschema
    except ImportError:  # pragma: no cover - jsonschema is normally present
        missing = [key for key in schema.get("required", []) if key not in arguments]
        return f"missing required argument(s): {', '.join(missing)}" if missing else None
    validator_cls = jsonschema.validators.validator_for(schema)
    error = jsonschema.exceptions.best_match(validator_cls(schema).iter_errors(arguments))
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path) or "arguments"
    return f"arguments do not match the tool schema at {where}: {error.message}"


# ----------------------------------------------------------------------------- token counting
def count_tokens(text_chars: int) -> int:
    """The scripted model's token rule: one token per started block of 4 characters."""
    return math.ceil(text_chars / 4)


def prompt_chars(messages: list[Message]) -> int:
    """Characters the scripted model counts in a prompt: every message's content plus
    the raw arguments of tool calls in assistant messages (tool definitions are free)."""
    total = 0
    for message in messages:
        total += len(message.content or "")
        for call in message.tool_calls or []:
            total += len(call.raw_arguments or json.dumps(call.arguments))
    return total


def completion_chars(content: str | None, tool_calls: list[dict[str, Any]]) -> int:
    return len(content or "") + sum(len(call["function"]["arguments"]) for call in tool_calls)


def completion_body(
    *,
    model: str,
    content: str | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    prompt_tokens: int = 0,
    completion_tokens: int = 0,
    cached_tokens: int = 0,
    completion_id: str = "chatcmpl-local",
    finish_reason: str | None = None,
) -> dict[str, Any]:
    """A ``chat.completion`` JSON body as OpenAI-compatible servers return it."""
    tool_calls = tool_calls or []
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "finish_reason": finish_reason or ("tool_calls" if tool_calls else "stop"),
                "message": message,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": cached_tokens},
        },
    }


def wire_tool_call(call_id: str, name: str, raw_arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": raw_arguments}}


# ----------------------------------------------------------------------------- other server replies
def error_body(message: str, *, kind: str, code: str | int | None = None) -> dict[str, Any]:
    """An OpenAI-style error body: ``{"error": {"message", "type", "param", "code"}}``."""
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def bad_key_body(got: str | None) -> dict[str, Any]:
    """The HTTP 401 body for a rejected API key. Like OpenAI's (and some local servers') it repeats
    the key it got, which is what lets tests check that the client never does."""
    message = f"Incorrect API key provided: {got or ''}"
    return error_body(message, kind="invalid_request_error", code="invalid_api_key")


def model_entry(model_id: str, *, owned_by: str = "pageindex", **extra: Any) -> dict[str, Any]:
    """One entry of a ``/v1/models`` listing (``extra``: e.g. vLLM's ``max_model_len``)."""
    return {"id": model_id, "object": "model", "created": 0, "owned_by": owned_by, **extra}


def models_body(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``GET /v1/models`` body listing ``entries`` (see :func:`model_entry`)."""
    return {"object": "list", "data": entries}


# ----------------------------------------------------------------------------- reply text
# Chat-template control tokens of the common templates (ChatML, Llama 3, Gemma, Phi), which a reply
# carries as text only when the server's template does not stop the model at its turn's end.
_TEMPLATE_MARKER = re.compile(
    r"<\|im_(?:start|end)\|>|<\|eot_id\|>|<\|(?:start|end)_header_id\|>|<(?:start|end)_of_turn>"
    r"|<\|endoftext\|>|<\|end\|>"
)


def template_markers(text: str | None) -> list[str]:
    """The chat-template control tokens written out in ``text``, each once, in order of appearance."""
    return list(dict.fromkeys(_TEMPLATE_MARKER.findall(text or "")))
