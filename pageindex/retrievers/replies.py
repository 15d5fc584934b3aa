"""Model replies shared by retrievers: the "answer with sources" contract and its parsing.

Prompts ask for a JSON object; :func:`parse_json_reply` finds it in the reply (bare, in a
```json fence, or after some prose) and validates it into a pydantic model. A reply that
does not parse raises :class:`ReplyParseError` whose message is meant to be shown back to
the model ("your reply was not valid: ...").
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, BeforeValidator, Field, ValidationError, model_validator

from pageindex.retrievers.result import Source
from pageindex.tree.model import Tree

T = TypeVar("T", bound=BaseModel)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


def number_as_text(value: Any) -> Any:
    """A JSON number where a reply's text is expected, as text (``1577`` -> ``"1577"``, ``4.8`` ->
    ``"4.8"``): a figure is a fair answer or quote. Anything else is left to the field's own checks
    (``true`` is not a number)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return value


TextOrNumber = Annotated[str, BeforeValidator(number_as_text)]
"""Text in a model reply that may come as a JSON number (an answer, a quote, a value); its JSON schema
stays ``string``."""


_PLACEHOLDER = re.compile(r"<([^<>]+)>")
_PROMPTS = Path(__file__).parent / "prompts"


@cache
def _prompt_placeholders() -> frozenset[str]:
    """The ``<...>`` placeholders of the retrievers' prompts, lower-cased and with their spaces collapsed."""
    found = {" ".join(m.group(1).lower().split()) for path in _PROMPTS.glob("*.md")
             for m in _PLACEHOLDER.finditer(path.read_text(encoding="utf-8"))}  # fmt: skip
    return frozenset(found)


def check_not_placeholder(field: str, text: str | None) -> None:
    """Refuse a reply field that is one of the prompts' ``<...>`` placeholders copied as it stands
    (gemma-3-270m answered ``"reason": "<why the filing cannot answer the question>"``, which ``ask``
    printed as "Not found in this filing." and exit 0): the model said nothing, so it is asked again and,
    failing that, its output was unusable rather than a finding about the filing. A bracketed text with a
    digit that is no prompt's placeholder is an answer ("<$1,577 million>": the figure written inside the
    template's brackets; "<1>" as a filing prints it), not refused. Callers check only the fields their
    reply's status uses (a complete answer's unused "reason" does not matter)."""
    if text is None:
        return
    match = _PLACEHOLDER.fullmatch(text.strip())
    if match is None:
        return
    inner = " ".join(match.group(1).lower().split())
    if inner in _prompt_placeholders() or not any(ch.isdigit() for ch in inner):
        raise ValueError(f'"{field}" is the prompt\'s placeholder {text.strip()!r}: write the {field} itself')


class ReplyParseError(ValueError):
    """A model reply that is not the JSON object the prompt asked for."""

    def __init__(self, message: str, raw: str | None):
        super().__init__(message)
        self.raw = raw


class CitedSource(BaseModel):
    """A page the model says its answer rests on."""

    node_id: str = ""
    page: int = Field(description="1-based PDF page, as in the [page N | ...] markers")
    quote: TextOrNumber | None = Field(
        default=None, description="the exact value or phrase taken from that page"
    )


class AnswerWithSources(BaseModel):
    """The final reply of an answering model: an answer with sources, or a failure."""

    status: Literal["answer", "fail"] = "answer"
    answer: TextOrNumber = ""
    sources: list[CitedSource] = Field(default_factory=list)
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    reason: str | None = None  # why it failed

    @model_validator(mode="after")
    def _answer_has_text(self) -> AnswerWithSources:
        if self.status == "answer" and not self.answer.strip():
            raise ValueError('status "answer" needs a non-empty "answer"')
        if self.status == "fail":
            check_not_placeholder("reason", self.reason)
        else:
            check_not_placeholder("answer", self.answer)
        if self.status == "fail" and not (self.reason or "").strip():
            self.reason = "the model gave no reason"
        return self


def extract_json_object(text: str) -> object:
    """The first JSON value in ``text``: a fenced block, the whole text, or the first ``{...}``."""
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for candidate in candidates:
        candidate = candidate.strip()
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            pass
        start = candidate.find("{")
        while start != -1:
            try:
                value, _ = json.JSONDecoder().raw_decode(candidate[start:])
                return value
            except json.JSONDecodeError:
                start = candidate.find("{", start + 1)
    raise ValueError("no JSON object found")


def parse_json_reply(text: str | None, model: type[T]) -> T:
    """Validate the JSON object in a model reply into ``model``; :class:`ReplyParseError` if not."""
    if text is None or not text.strip():
        raise ReplyParseError("the reply was empty; reply with one JSON object", text)
    try:
        data = extract_json_object(text)
    except ValueError:
        raise ReplyParseError(
            "the reply contained no JSON object; reply with one JSON object only", text
        ) from None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'reply'}: {e['msg']}" for e in exc.errors()[:5]
        )
        raise ReplyParseError(f"the JSON did not match the expected shape ({problems})", text) from None


def source_for_page(tree: Tree, page: int, *, node_id: str = "", quote: str | None = None) -> Source:
    """A :class:`Source` with title and printed page filled from the tree, under the section that
    holds ``page``: ``node_id``'s, else the leaf the quote sits under (:meth:`Tree.section_for_page`);
    for a page outside the document, ``node_id``'s as given."""
    node = tree.section_for_page(page, node_id, quote)
    if node is None and node_id in tree:
        node = tree.get(node_id)
    return Source(
        node_id=node.node_id if node else node_id,
        title=node.title if node else "",
        page=page,
        page_label=tree.page_label(page) if 1 <= page <= tree.page_count else None,
        quote=quote,
    )


def sources_from_citations(tree: Tree, cited: list[CitedSource]) -> list[Source]:
    """Turn the model's citations into :class:`Source` objects (duplicates dropped)."""
    seen: set[tuple[str, int, str | None]] = set()
    out: list[Source] = []
    for c in cited:
        key = (c.node_id, c.page, c.quote)
        if key in seen:
            continue
        seen.add(key)
        out.append(source_for_page(tree, c.page, node_id=c.node_id, quote=c.quote))
    return out
