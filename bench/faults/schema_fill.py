"""Build a small object that validates against a JSON schema, filled plausibly.

Used by the policies to answer structured requests (instructor TOOLS mode, json_schema
response formats). Supports what pydantic emits: ``$ref``/``$defs``, ``anyOf``/``oneOf``/
``allOf``, ``enum``/``const``, ``default``, nested objects and arrays with ``minItems``.
Property names steer the filling: ``answer`` gets the hinted answer, ``page`` the hinted
page, ``node_id`` the hinted section, an enum called ``status``/``decision`` prefers the
hinted choice (``answer`` normally, ``needs`` for an endless "needs more" model).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Hints:
    answer: str = "42"
    number: float = 42.0
    page: int = 1
    node_id: str = "1"
    section: str = "Section"
    choice: str = "answer"  # preferred enum value / union branch
    text: str = "From the fetched section."
    extra: dict[str, Any] = field(default_factory=dict)  # exact values by property name


_ANSWER_NAMES = {"answer", "final_answer", "result", "value"}
_PAGE_NAMES = {"page", "pdf_page", "page_number"}
_ID_NAMES = {"node_id", "section_id", "id"}
_SECTION_NAMES = {"section", "section_title", "title"}


def fill_schema(schema: dict[str, Any], hints: Hints | None = None) -> Any:
    """A minimal valid instance of ``schema``."""
    return _Filler(schema, hints or Hints()).fill(schema, name="")


class _Filler:
    def __init__(self, root: dict[str, Any], hints: Hints):
        self.root = root
        self.hints = hints
        self.depth = 0

    def resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in schema:
            ref = schema["$ref"]
            node: Any = self.root
            for part in ref.lstrip("#/").split("/"):
                if part:
                    node = node[part]
            schema = {**node, **{k: v for k, v in schema.items() if k != "$ref"}}
        return schema

    def fill(self, schema: dict[str, Any], name: str) -> Any:
        schema = self.resolve(schema)
        if self.depth > 12:
            return None
        self.depth += 1
        try:
            return self._fill(schema, name)
        finally:
            self.depth -= 1

    def _fill(self, schema: dict[str, Any], name: str) -> Any:
        hints = self.hints
        lname = name.lower()
        if name in hints.extra:
            return hints.extra[name]
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return self._pick_enum(schema["enum"])
        for union in ("anyOf", "oneOf"):
            if union in schema:
                return self.fill(self._pick_branch(schema[union]), name)
        if "allOf" in schema:
            merged: dict[str, Any] = {}
            for part in schema["allOf"]:
                part = self.resolve(part)
                merged.setdefault("properties", {}).update(part.get("properties", {}))
                merged.setdefault("required", []).extend(part.get("required", []))
                merged.setdefault("type", part.get("type", "object"))
            return self.fill(merged, name)
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "null")
        if kind is None:
            kind = "object" if "properties" in schema else "string"
        if kind == "object":
            return self._object(schema)
        if kind == "array":
            count = max(int(schema.get("minItems", 0)), 1 if lname not in {"needs", "failed"} else 0)
            count = min(count, int(schema.get("maxItems", count)))
            items = schema.get("items") or {"type": "string"}
            return [self.fill(items, name.rstrip("s")) for _ in range(count)]
        if kind == "integer":
            if lname in _PAGE_NAMES or lname.endswith("page") or lname.endswith("pages"):
                value = hints.page
            else:
                value = (
                    int(round(hints.number)) if lname in _ANSWER_NAMES else int(schema.get("minimum", 0))
                )
            return _clamp(value, schema)
        if kind == "number":
            value = (
                hints.number
                if lname in _ANSWER_NAMES | {"amount"}
                else float(schema.get("minimum", 0.5))
            )
            if lname == "confidence":
                value = 0.8
            return _clamp(value, schema)
        if kind == "boolean":
            return False
        if kind == "null":
            return None
        return self._string(schema, lname)

    def _object(self, schema: dict[str, Any]) -> dict[str, Any]:
        props: dict[str, Any] = schema.get("properties", {})
        required = set(schema.get("required", props.keys()))
        out: dict[str, Any] = {}
        for key, sub in props.items():
            sub = self.resolve(sub)
            if key not in required and "default" in sub:
                continue
            out[key] = self.fill(sub, key)
        return out

    def _string(self, schema: dict[str, Any], lname: str) -> str:
        hints = self.hints
        if lname in _ANSWER_NAMES:
            text = hints.answer
        elif lname in _ID_NAMES or lname.endswith("node_id") or lname.endswith("node_ids"):
            text = hints.node_id
        elif lname in _SECTION_NAMES:
            text = hints.section
        elif lname in {"label", "item", "need", "needs", "query", "request"}:
            text = hints.section
        elif lname == "unit":
            text = "USD millions"
        else:
            text = hints.text
        low, high = int(schema.get("minLength", 0)), schema.get("maxLength")
        if len(text) < low:
            text = text + "x" * (low - len(text))
        if high is not None:
            text = text[: int(high)]
        return text

    def _pick_enum(self, values: list[Any]) -> Any:
        for value in values:
            if isinstance(value, str) and value.lower() == self.hints.choice:
                return value
        for value in values:
            if isinstance(value, str) and self.hints.choice in value.lower():
                return value
        return values[0]

    def _pick_branch(self, branches: list[dict[str, Any]]) -> dict[str, Any]:
        """Prefer a branch mentioning the hinted choice, then any non-null branch."""
        resolved = [self.resolve(b) for b in branches]
        choice = self.hints.choice
        for original, branch in zip(branches, resolved, strict=True):
            title = str(branch.get("title", "")) + str(original.get("$ref", ""))
            consts = [str(p.get("const", "")) for p in branch.get("properties", {}).values()]
            if choice in title.lower() or any(choice == c.lower() for c in consts):
                return original
        for original, branch in zip(branches, resolved, strict=True):
            if branch.get("type") != "null":
                return original
        return branches[0]


def _clamp(value: float, schema: dict[str, Any]) -> Any:
    if "minimum" in schema:
        value = max(value, schema["minimum"])
    if "maximum" in schema:
        value = min(value, schema["maximum"])
    if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
        value = schema["exclusiveMinimum"] + 1
    if "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
        value = schema["exclusiveMaximum"] - 1
    return value


def wrong_types(schema_instance: Any) -> Any:
    """The same object with every leaf value swapped for a value of another JSON type."""
    if isinstance(schema_instance, dict):
        return {k: wrong_types(v) for k, v in schema_instance.items()}
    if isinstance(schema_instance, list):
        return {"not": "a list"}
    if isinstance(schema_instance, bool):
        return "maybe"
    if isinstance(schema_instance, int | float):
        return "not-a-number"
    if isinstance(schema_instance, str):
        return [schema_instance]
    return 17
