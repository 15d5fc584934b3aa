"""The slice of the OpenAI chat.completions wire format the fault server speaks.

``ChatRequest`` is what a policy receives (the parsed request body); ``Reply`` is what a
policy returns; ``completion_body`` turns a reply into the JSON object the official SDK
expects. Everything here is pure data: no I/O. The shapes themselves (completion, error and
``/v1/models`` bodies) live in :mod:`pageindex.llm.wire`, shared with every fake server; this
module keeps the fault server's views of them.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from pageindex.llm import wire


class ChatRequest(BaseModel):
    """A parsed ``POST /v1/chat/completions`` body (non-streaming)."""

    model_config = ConfigDict(extra="allow")

    model: str = "fault-model"
    messages: list[dict[str, Any]] = Field(default_factory=list)
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None
    response_format: dict[str, Any] | None = None
    stream: bool = False

    # -- views a policy needs -----------------------------------------------------
    def tool_names(self) -> list[str]:
        return [t.get("function", {}).get("name", "") for t in self.tools or []]

    def tool_schema(self, name: str) -> dict[str, Any] | None:
        for tool in self.tools or []:
            fn = tool.get("function", {})
            if fn.get("name") == name:
                return fn.get("parameters") or {"type": "object", "properties": {}}
        return None

    def forced_tool(self) -> str | None:
        """The function ``tool_choice`` forces (instructor TOOLS mode), or None."""
        choice = self.tool_choice
        if isinstance(choice, dict):
            return (choice.get("function") or {}).get("name")
        if choice == "required" and len(self.tools or []) == 1:
            return self.tool_names()[0]
        return None

    def response_schema(self) -> dict[str, Any] | None:
        """The JSON schema of ``response_format`` json_schema, or None."""
        fmt = self.response_format or {}
        if fmt.get("type") == "json_schema":
            return (fmt.get("json_schema") or {}).get("schema") or {"type": "object", "properties": {}}
        return None

    def wants_json(self) -> bool:
        return (self.response_format or {}).get("type") in {"json_object", "json_schema"}

    def offers_tools(self) -> bool:
        """Tools are offered and the model is free to choose (not a forced structured call)."""
        return bool(self.tools) and self.tool_choice != "none" and self.forced_tool() is None

    def text_of(self, role: str | None = None) -> str:
        return "\n".join(
            _content_text(m) for m in self.messages if role is None or m.get("role") == role
        )

    def key(self) -> str:
        return logical_call_key(self.model_dump(mode="json"))

    def conversation_key(self) -> str:
        """Identifies a conversation: the hash of its leading system and first user message."""
        head: list[dict[str, Any]] = []
        for message in self.messages:
            head.append({"role": message.get("role"), "content": _content_text(message)})
            if message.get("role") == "user":
                break
        return _digest(head)


def _content_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):  # content parts
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def _digest(obj: Any) -> str:
    blob = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def logical_call_key(body: dict[str, Any]) -> str:
    """The logical-request key: a hash of what makes two requests "the same call".

    Messages, tools, tool_choice and response_format count; the model name, sampling
    options and headers do not, so every retry of one call shares one key.
    """
    return _digest({k: body.get(k) for k in ("messages", "tools", "tool_choice", "response_format")})


class ToolCallOut(BaseModel):
    """A tool call in a reply. ``arguments`` is a dict (serialised) or raw text (sent as is)."""

    name: str
    arguments: dict[str, Any] | str = Field(default_factory=dict)
    id: str | None = None


class Reply(BaseModel):
    """What a policy answers: assistant text, tool calls, or both."""

    content: str | None = None
    tool_calls: list[ToolCallOut] = Field(default_factory=list)
    finish_reason: str | None = None


def count_tokens(text: str) -> int:
    """Deterministic token estimate: the scripted model's rule (one token per started 4 characters)."""
    return wire.count_tokens(len(text))


def completion_body(
    request: ChatRequest, reply: Reply, *, prompt_tokens: int, cached_tokens: int = 0
) -> dict[str, Any]:
    """The chat.completion JSON object for ``reply`` (built by :func:`pageindex.llm.wire.completion_body`).

    Tool-call ids derive from the request key, so a seeded run replays the same conversations
    (and so the same fault choices) every time."""
    tool_calls = [
        wire.wire_tool_call(
            call.id or f"call_{request.key()[:12]}_{i}",
            call.name,
            call.arguments
            if isinstance(call.arguments, str)
            else json.dumps(call.arguments, ensure_ascii=False),
        )
        for i, call in enumerate(reply.tool_calls)
    ]
    body = wire.completion_body(
        model=request.model,
        content=reply.content,
        tool_calls=tool_calls,
        prompt_tokens=prompt_tokens,
        completion_tokens=wire.count_tokens(wire.completion_chars(reply.content, tool_calls)),
        cached_tokens=cached_tokens,
        completion_id=f"chatcmpl-{uuid.uuid4().hex[:24]}",
        finish_reason=reply.finish_reason,
    )
    body["created"] = int(time.time())
    return body
