"""What the served model cannot do: capability switches of the fault server's HTTP layer.

Real OpenAI-compatible servers differ in what they accept and honour. :class:`ServerLimits`
makes the fault server behave like a weaker one, independently of the policy that writes the
replies and of the injected faults, so ``pageindex doctor`` (and any client) can be tested
against each missing ability in turn:

* ``tools``: tools and ``tool_choice`` are ignored (the policy never sees them): a plain text
  reply, never a tool call, as a llama.cpp server without a tool-calling chat template does;
* ``json``: ``response_format`` is ignored, both ``json_object`` and ``json_schema``;
* ``json-schema``: only ``json_schema`` is ignored (JSON mode still honoured);
* ``usage``: replies carry no ``usage`` object;
* ``null-content``: an assistant message with ``"content": null`` is rejected with HTTP 400
  (``""`` is accepted), as some chat templates do;
* ``parallel-tools``: at most one tool call per reply;
* ``max-tokens``: ``max_tokens`` is ignored (the whole reply comes back, ``finish_reason: stop``);
* ``tool-max-tokens``: ``max_tokens`` is ignored only in requests that offer tools, as llama.cpp's
  ``chatml-function-calling`` does (a tool loop's reply runs to the end of the context);
* ``models``: ``GET /models`` answers 404 (no model list);

and ``context_window``: prompts over that many tokens get HTTP 400 ``context_length_exceeded``;
the window is listed in the ``/models`` entry as ``max_model_len`` (as vLLM does) unless
``advertise_context`` is off.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

LIMIT_NAMES = (
    "tools",
    "json",
    "json-schema",
    "usage",
    "null-content",
    "parallel-tools",
    "max-tokens",
    "tool-max-tokens",
    "models",
)


class ServerLimits(BaseModel):
    """Abilities the fault server pretends to lack (all off: a fully capable server)."""

    no_tools: bool = False
    no_json_mode: bool = False
    no_json_schema: bool = False
    no_usage: bool = False
    reject_null_content: bool = False
    no_parallel_tool_calls: bool = False
    ignore_max_tokens: bool = False
    ignore_tool_max_tokens: bool = False
    no_models_list: bool = False
    context_window: int | None = Field(None, ge=16)
    advertise_context: bool = True

    @classmethod
    def parse(
        cls, lacks: str | None, *, context_window: int | None = None, advertise: bool = True
    ) -> ServerLimits:
        """``"tools,usage"`` (names from :data:`LIMIT_NAMES`) -> limits; unknown names raise ValueError."""
        fields = {
            "tools": "no_tools",
            "json": "no_json_mode",
            "json-schema": "no_json_schema",
            "usage": "no_usage",
            "null-content": "reject_null_content",
            "parallel-tools": "no_parallel_tool_calls",
            "max-tokens": "ignore_max_tokens",
            "tool-max-tokens": "ignore_tool_max_tokens",
            "models": "no_models_list",
        }
        values: dict[str, object] = {"context_window": context_window, "advertise_context": advertise}
        for name in (n.strip().lower() for n in (lacks or "").split(",")):
            if not name:
                continue
            if name not in fields:
                raise ValueError(f"unknown ability {name!r} for --lacks; known: {', '.join(LIMIT_NAMES)}")
            values[fields[name]] = True
        return cls.model_validate(values)

    def describe(self) -> str:
        """``"lacks tools, usage; context window 2048 tokens"`` or ``"fully capable"``."""
        lacking = [
            name
            for name, on in (
                ("tools", self.no_tools),
                ("json", self.no_json_mode),
                ("json-schema", self.no_json_schema),
                ("usage", self.no_usage),
                ("null-content", self.reject_null_content),
                ("parallel-tools", self.no_parallel_tool_calls),
                ("max-tokens", self.ignore_max_tokens),
                ("tool-max-tokens", self.ignore_tool_max_tokens),
                ("models", self.no_models_list),
            )
            if on
        ]
        parts = [f"lacks {', '.join(lacking)}"] if lacking else []
        if self.context_window is not None:
            parts.append(f"context window {self.context_window} tokens")
        return "; ".join(parts) or "fully capable"
