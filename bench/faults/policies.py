"""Policies: how the fault server answers a request when it is not injecting a fault.

A policy is any callable ``policy(request: ChatRequest) -> Reply | str | dict``:
a ``Reply`` (text and/or tool calls), a ``str`` (assistant text) or a ``dict`` (a structured
object: sent as the forced tool's arguments, or as JSON content). ``as_reply`` normalises.

``SectionSeekingPolicy`` (the default) behaves like a plausible model for our retrievers:

* tools offered -> call ``fetch_section`` on the index entry whose title best matches the
  question; once section text came back, answer with a number from it (through an
  ``answer``/``submit``/``final`` tool when one is offered, else as text);
* a forced tool (instructor TOOLS mode) or ``response_format`` json_schema / JSON mode ->
  a minimal valid object for the schema, filled from the question and fetched text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rapidfuzz import fuzz

from bench.faults.protocol import ChatRequest, Reply, ToolCallOut
from bench.faults.schema_fill import Hints, fill_schema

Policy = Callable[[ChatRequest], Reply | str | dict[str, Any]]


@dataclass(frozen=True)
class IndexEntry:
    node_id: str
    title: str


# ------------------------------------------------------------------ reading the prompt
_JSON_ENTRY_RE = re.compile(r"\{[^{}]*\"node_id\"[^{}]*\}")
_KV_ENTRY_RE = re.compile(
    r"(?:node_id|id)\s*[=:]\s*[\"']?(?P<id>[\w.\-/]+)[\"']?.*?title\s*[=:]\s*[\"']?(?P<title>[^\"'|\n]+)",
    re.IGNORECASE,
)
_LINE_ENTRY_RE = re.compile(
    r"^\s*(?:[-*\u2022]\s*)?[\[(]?(?P<id>[A-Za-z0-9][\w.\-/]*)[\])]?\s*(?:[:|\u2013\u2014)]\s*|-\s+|\s+)(?P<title>.+)$"
)
_PAGE_SPAN_RE = re.compile(
    r"[\s|,;(\[]*\b(?:pp?\.|pages?)\s*\d+(?:\s*[-\u2013to]+\s*\d+)?[)\]]?.*$", re.IGNORECASE
)
_QUESTION_RE = re.compile(
    r"^\s*(?:question|query)\s*[:\uff1a]\s*(?P<q>.+)$", re.IGNORECASE | re.MULTILINE
)
_NUMBER_RE = re.compile(r"\(?-?\$?\d[\d,]*(?:\.\d+)?\)?%?")
_PAGE_MARK_RE = re.compile(r"\bpage\s*[:#]?\s*(\d+)", re.IGNORECASE)
_SKIP_LINE_RE = re.compile(
    r"^\s*(?:\[page [^\]]*\]\s*$|characters \d+-\d+ of \d+|section \S+:)", re.IGNORECASE
)
_NOT_FOUND = "No section matches"
_WORD_RE = re.compile(r"[a-z][a-z0-9']+")
_STOP = {
    "the",
    "what",
    "was",
    "were",
    "for",
    "and",
    "of",
    "in",
    "is",
    "a",
    "an",
    "to",
    "fy",
    "by",
    "its",
    "how",
}
_NON_ID_WORDS = {"question", "query", "answer", "note", "sections", "section", "index"}


def index_entries(request: ChatRequest) -> list[IndexEntry]:
    """Section ids and titles listed in the system and user messages, in order, no repeats."""
    text = "\n".join(request.text_of(role) for role in ("system", "user"))
    text += "\n" + "\n".join(t for t in tool_outputs(request) if t.startswith(_NOT_FOUND))
    found: dict[str, str] = {}
    for blob in _JSON_ENTRY_RE.findall(text):
        try:
            obj = json.loads(blob)
        except json.JSONDecodeError:
            continue
        if obj.get("node_id") is not None:
            found.setdefault(str(obj["node_id"]), str(obj.get("title", "")))
    for line in text.splitlines():
        match = _KV_ENTRY_RE.search(line)
        if match is None:
            match = _LINE_ENTRY_RE.match(line)
            if (
                match is None
                or not re.search(r"[\d_.]", match["id"])
                or match["id"].lower() in _NON_ID_WORDS
            ):
                continue
        title = _clean_title(match["title"])
        if title and re.search(r"[A-Za-z]", title):
            found.setdefault(match["id"], title)
    return [IndexEntry(node_id, title) for node_id, title in found.items()]


def _clean_title(title: str) -> str:
    title = _PAGE_SPAN_RE.sub("", title)
    title = title.split(" | ")[0]
    return title.strip(" \t-:|\"'")


def question_of(request: ChatRequest) -> str:
    users = [m for m in request.messages if m.get("role") == "user"]
    text = request.text_of("user") or request.text_of()
    match = _QUESTION_RE.search(text)
    if match:
        return match["q"].strip()
    if users:
        lines = [ln for ln in request.text_of("user").splitlines() if ln.strip()]
        return lines[-1].strip() if lines else ""
    return ""


def fetch_tool(request: ChatRequest) -> str | None:
    names = request.tool_names()
    if "fetch_section" in names:
        return "fetch_section"
    return next((n for n in names if any(w in n.lower() for w in ("fetch", "section", "read"))), None)


def answer_tool(request: ChatRequest) -> str | None:
    return next(
        (n for n in request.tool_names() if any(w in n.lower() for w in ("answer", "submit", "final"))),
        None,
    )


def fetched_ids(request: ChatRequest) -> list[str]:
    """Section ids the assistant already asked for in this conversation."""
    ids: list[str] = []
    for message in request.messages:
        for call in message.get("tool_calls") or []:
            try:
                args = json.loads((call.get("function") or {}).get("arguments") or "{}")
            except json.JSONDecodeError:
                continue
            if isinstance(args, dict):
                value = args.get("node_id", args.get("id"))
                if value is not None:
                    ids.append(str(value))
    return ids


def tool_outputs(request: ChatRequest) -> list[str]:
    return [str(m.get("content") or "") for m in request.messages if m.get("role") == "tool"]


def section_texts(request: ChatRequest) -> list[str]:
    """Tool outputs that carry section text (not "no section matches" lists)."""
    return [t for t in tool_outputs(request) if not t.startswith((_NOT_FOUND, "error:"))]


def _words(text: str) -> set[str]:
    return {w for w in _WORD_RE.findall(text.lower()) if w not in _STOP}


def rank_entries(entries: list[IndexEntry], question: str) -> list[IndexEntry]:
    """Entries ordered by how well their titles match the question (stable for ties)."""
    qwords = _words(question)

    def score(entry: IndexEntry) -> float:
        overlap = len(qwords & _words(entry.title))
        return overlap * 100 + fuzz.token_set_ratio(question.lower(), entry.title.lower())

    return sorted(entries, key=score, reverse=True)


def find_answer(texts: list[str], question: str) -> tuple[str, int] | None:
    """The number on the line of ``texts`` that best matches the question, and its page."""
    qwords = _words(question)
    best: tuple[int, int, str, int] | None = None  # (overlap, -order, number, page)
    order = 0
    for text in texts:
        page = 1
        for line in text.splitlines():
            mark = _PAGE_MARK_RE.search(line)
            if mark:
                page = int(mark.group(1))
            if _SKIP_LINE_RE.match(line):
                continue  # a page marker or a slice header, not content
            for match in _NUMBER_RE.finditer(line):
                token = match.group(0)
                digits = re.sub(r"\D", "", token)
                if not digits or (
                    len(digits) == 4 and digits.startswith(("19", "20")) and "," not in token
                ):
                    continue  # a year, not a figure
                if mark and mark.start() <= match.start() <= mark.end():
                    continue  # the page marker itself
                order += 1
                cand = (len(qwords & _words(line)), -order, token.strip("()"), page)
                if best is None or cand[:2] > best[:2]:
                    best = cand
                break
    return (best[2], best[3]) if best else None


def embedded_schema(request: ChatRequest) -> dict[str, Any] | None:
    """A JSON schema written into the messages (instructor JSON mode puts it in the prompt)."""
    text = request.text_of()
    start = text.find("{")
    while start != -1:
        depth = 0
        for end in range(start, len(text)):
            if text[end] == "{":
                depth += 1
            elif text[end] == "}":
                depth -= 1
                if depth == 0:
                    try:
                        obj = json.loads(text[start : end + 1])
                    except json.JSONDecodeError:
                        break
                    if isinstance(obj, dict) and "properties" in obj:
                        return obj
                    break
        start = text.find("{", start + 1)
    return None


# ------------------------------------------------------------------ the default policy
class SectionSeekingPolicy:
    """Fetch the best-matching section, then answer with a number from its text.

    ``max_fetches``: sections to fetch before answering when the text so far holds no number.
    ``choice``: the enum value / union branch preferred in structured replies.
    """

    def __init__(self, *, max_fetches: int = 2, choice: str = "answer"):
        self.max_fetches = max_fetches
        self.choice = choice

    def hints(self, request: ChatRequest, choice: str | None = None) -> Hints:
        question = question_of(request)
        ranked = rank_entries(index_entries(request), question)
        texts = section_texts(request) or [request.text_of("user")]
        found = find_answer(texts, question)
        number_text, page = found if found else ("42", 1)
        try:
            number = float(number_text.replace(",", "").replace("$", "").rstrip("%"))
        except ValueError:
            number = 42.0
        top = ranked[0] if ranked else IndexEntry("1", "Section")
        fetched = fetched_ids(request)
        if fetched:  # cite the section read last, under its index title when known
            titles = {e.node_id: e.title for e in ranked}
            top = IndexEntry(fetched[-1], titles.get(fetched[-1], fetched[-1]))
        return Hints(
            answer=number_text,
            number=number,
            page=page,
            node_id=top.node_id,
            section=top.title,
            choice=choice or self.choice,
            text=f"Based on {top.title} (page {page}).",
        )

    def next_section(self, request: ChatRequest) -> IndexEntry | None:
        seen = set(fetched_ids(request))
        ranked = rank_entries(index_entries(request), question_of(request))
        return next((e for e in ranked if e.node_id not in seen), None)

    def __call__(self, request: ChatRequest) -> Reply:
        forced = request.forced_tool()
        if forced is not None:
            schema = request.tool_schema(forced) or {"type": "object", "properties": {}}
            return Reply(
                tool_calls=[ToolCallOut(name=forced, arguments=fill_schema(schema, self.hints(request)))]
            )
        schema = request.response_schema()
        if schema is None and request.wants_json():
            schema = embedded_schema(request) or {
                "type": "object",
                "properties": {"answer": {"type": "string"}},
            }
        if schema is not None and not request.offers_tools():
            return Reply(content=json.dumps(fill_schema(schema, self.hints(request))))
        if request.offers_tools():
            return self._tool_step(request)
        schema = embedded_schema(request)
        if schema is not None:  # a schema in the prompt, no JSON mode: answer in a fenced block
            return Reply(content=f"```json\n{json.dumps(fill_schema(schema, self.hints(request)))}\n```")
        hints = self.hints(request)
        return Reply(content=f"The answer is {hints.answer} (page {hints.page}).")

    def _tool_step(self, request: ChatRequest) -> Reply:
        outputs = section_texts(request)
        have_number = find_answer(outputs, question_of(request)) is not None
        fetch = fetch_tool(request)
        nxt = self.next_section(request)
        want_more = not outputs or (not have_number and len(fetched_ids(request)) < self.max_fetches)
        if fetch is not None and nxt is not None and want_more:
            return Reply(tool_calls=[ToolCallOut(name=fetch, arguments={"node_id": nxt.node_id})])
        hints = self.hints(request)
        final = answer_tool(request)
        if final is not None:
            schema = request.tool_schema(final) or {"type": "object", "properties": {}}
            return Reply(tool_calls=[ToolCallOut(name=final, arguments=fill_schema(schema, hints))])
        return Reply(
            content=f"The answer is {hints.answer} (page {hints.page}, section {hints.node_id})."
        )


def as_reply(request: ChatRequest, out: Reply | str | dict[str, Any]) -> Reply:
    """Normalise what a policy returned into a ``Reply``."""
    if isinstance(out, Reply):
        return out
    if isinstance(out, str):
        return Reply(content=out)
    if isinstance(out, dict):
        forced = request.forced_tool()
        if forced is not None:
            return Reply(tool_calls=[ToolCallOut(name=forced, arguments=out)])
        return Reply(content=json.dumps(out))
    raise TypeError(f"a policy must return Reply, str or dict, not {type(out).__name__}")
