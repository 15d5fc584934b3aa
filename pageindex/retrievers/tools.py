"""The shared, read-only tool: ``fetch_section(node_id, offset=0)``.

:class:`SectionFetcher` serves a section's text in slices of ``slice_chars`` characters,
each page introduced by a marker ``[page 45 | printed 43]`` (``[page 45]`` when the filing
prints no number; ``[page 45 | printed 43, continued]`` when a slice starts mid-page). A slice
never ends on a bare marker line (it ends before it), and it shows (``pages``) only the pages with
some of their text in it.

Requests are resolved forgivingly (:meth:`SectionFetcher.resolve`): exact id, then the id
or its last path segment ignoring case and punctuation (``"Item 7A"`` -> ``item_7a``,
``"note 3"`` -> ``item_8/note_3`` when unique), then the exact title, then fuzzy matching
of ids and titles with rapidfuzz (numbers in the request must match numbers of the
section, so ``note 3`` never resolves to ``note_13``). How a request was matched is
reported in the result and the trace; an unresolvable request returns the closest
candidates instead of failing.

One fetcher lives for one question (:class:`pageindex.retrievers.base.QuestionRun` owns
it): section texts are built once and served from memory afterwards, and every page whose
text is returned is reported to the run's recorder (``pages_fetched``). Inside
:func:`holding_pages` those reports are held back until the caller releases them: a tool loop
releases them when the request carrying the tool results is answered, so pages whose text never
reached a model are never counted. Retrievers get no tool that writes or executes anything.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field, ValidationError
from rapidfuzz import fuzz

from pageindex.llm.types import Message, ToolCall, ToolSpec
from pageindex.retrievers.index import page_span
from pageindex.retrievers.prompts import wrap_document
from pageindex.tree.model import Node, Tree

DEFAULT_SLICE_CHARS = 6000
FUZZY_THRESHOLD = 80.0
MatchKind = Literal["exact", "normalized", "title", "fuzzy_id", "fuzzy_title"]

FETCH_SECTION_TOOL = ToolSpec(
    name="fetch_section",
    description=(
        "Return the text of one section of the document, by its id from the section index "
        "(an approximate id or title also works). Long sections come in slices: call again with "
        "the offset given at the end of a slice to read on. Page markers like [page 45 | printed 43] "
        "give the PDF page of the text that follows."
    ),
    parameters={
        "type": "object",
        "properties": {
            "node_id": {
                "type": "string",
                "description": "section id from the index, e.g. item_7 or item_8/note_3",
            },
            "offset": {
                "type": "integer",
                "minimum": 0,
                "default": 0,
                "description": "character offset to continue a long section",
            },
        },
        "required": ["node_id"],
        "additionalProperties": False,
    },
)


class Recorder(Protocol):
    """What the fetcher reports to (implemented by ``QuestionRun``)."""

    def show_pages(self, pages: list[int], *, why: str = "") -> None: ...

    def event(self, kind: str, message: str, /, **data: Any) -> None: ...


class PageHold:
    """Page reports held back by :func:`holding_pages`, each with the recorder it was meant for."""

    def __init__(self) -> None:
        self._held: list[tuple[Recorder, list[int], str]] = []

    @property
    def pages(self) -> list[int]:
        """The pages held, sorted."""
        return sorted({page for _, pages, _ in self._held for page in pages})

    def hold(self, recorder: Recorder, pages: list[int], why: str) -> None:
        self._held.append((recorder, pages, why))

    def drop_all_but(self, only: set[int]) -> None:
        """Hold only the pages in ``only``: the text of the others was cut from the prompt."""
        narrowed = [(recorder, [p for p in pages if p in only], why) for recorder, pages, why in self._held]
        self._held = [(recorder, pages, why) for recorder, pages, why in narrowed if pages]

    def release(self) -> None:
        """Report the held pages to their recorders (their text reached a model)."""
        held, self._held = self._held, []
        for recorder, pages, why in held:
            recorder.show_pages(pages, why=why)


_HOLD: ContextVar[PageHold | None] = ContextVar("pageindex_page_hold", default=None)


def report_pages(recorder: Recorder, pages: list[int], why: str) -> None:
    """Report that the text of ``pages`` went into a prompt: held while :func:`holding_pages` is open
    in this task (its caller releases them once the request is answered), else recorded at once."""
    hold = _HOLD.get()
    if hold is not None:
        hold.hold(recorder, pages, why)
    else:
        recorder.show_pages(pages, why=why)


@contextmanager
def holding_pages() -> Iterator[PageHold]:
    """Within the block (in this task only: concurrent tasks keep reporting), the pages a
    :class:`SectionFetcher` serves are held in the yielded :class:`PageHold` instead of being
    reported; :meth:`PageHold.release` reports them, and a hold never released counts nothing."""
    hold = PageHold()
    token = _HOLD.set(hold)
    try:
        yield hold
    finally:
        _HOLD.reset(token)


class FetchArgs(BaseModel):
    """Arguments of ``fetch_section`` as the model sends them."""

    node_id: str = Field(min_length=1)
    offset: int = Field(default=0, ge=0)


class Candidate(BaseModel):
    node_id: str
    title: str
    start_page: int
    end_page: int
    score: float


class Resolution(BaseModel):
    """How a requested id/title was matched to a node (``node_id`` None = no match)."""

    requested: str
    node_id: str | None = None
    matched_by: MatchKind | None = None
    score: float = 0.0
    candidates: list[Candidate] = Field(default_factory=list)


class SectionSlice(BaseModel):
    """One answer of ``fetch_section``."""

    requested: str
    found: bool
    node_id: str | None = None
    title: str = ""
    matched_by: MatchKind | None = None
    offset: int = 0
    next_offset: int | None = None  # None = this slice reaches the end of the section
    total_chars: int = 0
    pages: list[int] = Field(default_factory=list)  # PDF pages whose text is in ``text``
    text: str = ""  # with page markers; empty when not found or withheld
    candidates: list[Candidate] = Field(default_factory=list)
    from_memory: bool = False  # this exact slice was already served in this question
    children: list[str] = Field(default_factory=list)  # "id: title" of sub-sections
    note: str = ""

    def render(self) -> str:
        """The tool message a model sees."""
        if not self.found:
            lines = [f'No section matches "{self.requested}". Closest sections:']
            lines += [
                f"- {c.node_id} | {c.title} | pages {c.start_page}-{c.end_page}" for c in self.candidates
            ]
            lines.append("Call fetch_section again with one of these ids.")
            return "\n".join(lines)
        head = f"Section {self.node_id}: {self.title}"
        if self.matched_by not in (None, "exact"):
            head += f' (matched "{self.requested}" by {self.matched_by.replace("_", " ")})'
        end = self.next_offset if self.next_offset is not None else self.total_chars
        head += f"\nCharacters {self.offset}-{end} of {self.total_chars}."
        parts = [head]
        if self.note:
            parts.append(self.note)
        if self.text:
            parts.append(wrap_document(self.text, node_id=self.node_id))
        if self.next_offset is not None:
            parts.append(
                f'More text follows: fetch_section(node_id="{self.node_id}", offset={self.next_offset}).'
            )
        if self.children and self.offset == 0:
            parts.append("Sub-sections: " + "; ".join(self.children))
        return "\n".join(parts)


class _PageSpan(BaseModel):
    page: int
    marker: int  # char offset where the page's marker line starts
    text: int  # where its text starts, after the marker line
    end: int  # where the next page's marker starts (the section's end for the last page)


class _SectionText(BaseModel):
    text: str
    pages: list[_PageSpan]


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _numbers(text: str) -> set[str]:
    return {n.lstrip("0") or "0" for n in re.findall(r"\d+", text)}


class SectionFetcher:
    """``fetch_section`` over one tree for one question (see the module docstring)."""

    def __init__(
        self,
        tree: Tree,
        *,
        slice_chars: int = DEFAULT_SLICE_CHARS,
        recorder: Recorder | None = None,
        fuzzy_threshold: float = FUZZY_THRESHOLD,
        max_candidates: int = 5,
    ):
        if slice_chars < 200:
            raise ValueError(f"slice_chars must be at least 200, got {slice_chars}")
        self.tree = tree
        self.slice_chars = slice_chars
        self.children_chars: int | None = None  # the sub-section list at most (None: whole)
        self.recorder = recorder
        self.fuzzy_threshold = fuzzy_threshold
        self.max_candidates = max_candidates
        self._texts: dict[str, _SectionText] = {}
        self.served: dict[tuple[str, int], int] = {}  # (node_id, offset) -> times served
        self._nodes: list[Node] = list(tree.walk())

    # -- resolution ------------------------------------------------------------------
    def resolve(self, requested: str) -> Resolution:
        """Match a requested id or title to a node (see the module docstring)."""
        req = requested.strip()
        res = Resolution(requested=requested)
        if req in self.tree:
            res.node_id, res.matched_by, res.score = req, "exact", 100.0
            return res
        key = _norm(req)
        if not key:
            res.candidates = self._candidates(req)
            return res
        by_id = [n for n in self._nodes if _norm(n.node_id) == key]
        if not by_id:
            by_id = [n for n in self._nodes if _norm(n.node_id.rsplit("/", 1)[-1]) == key]
        if len(by_id) == 1:
            res.node_id, res.matched_by, res.score = by_id[0].node_id, "normalized", 100.0
            return res
        by_title = [n for n in self._nodes if _norm(n.title) == key]
        if by_title:
            res.node_id, res.matched_by, res.score = by_title[0].node_id, "title", 100.0
            return res
        scored = self._scored(req)
        eligible = [(s, kind, n) for s, kind, n in scored if self._numbers_agree(req, n)]
        if eligible:
            best_score, best_kind, best = eligible[0]
            runner_up = next((s for s, _, n in eligible[1:] if n.node_id != best.node_id), 0.0)
            if best_score >= self.fuzzy_threshold and best_score - runner_up >= 3.0:
                res.node_id, res.matched_by, res.score = best.node_id, best_kind, round(best_score, 1)
                return res
        res.candidates = self._candidates(req, scored)
        return res

    def _scored(self, req: str) -> list[tuple[float, MatchKind, Node]]:
        key, low = _norm(req), req.lower()
        out: list[tuple[float, MatchKind, Node]] = []
        for node in self._nodes:
            id_score = max(
                fuzz.ratio(key, _norm(node.node_id)), fuzz.ratio(key, _norm(node.node_id.rsplit("/", 1)[-1]))
            )
            title_score = fuzz.token_set_ratio(low, node.title.lower()) if node.title else 0.0
            if id_score >= title_score:
                out.append((float(id_score), "fuzzy_id", node))
            else:
                out.append((float(title_score), "fuzzy_title", node))
        out.sort(key=lambda t: (-t[0], t[2].level))
        return out

    @staticmethod
    def _numbers_agree(req: str, node: Node) -> bool:
        wanted = _numbers(req)
        return not wanted or wanted <= (_numbers(node.node_id) | _numbers(node.title))

    def _candidates(
        self, req: str, scored: list[tuple[float, MatchKind, Node]] | None = None
    ) -> list[Candidate]:
        scored = scored if scored is not None else self._scored(req)
        return [
            Candidate(
                node_id=n.node_id,
                title=n.title,
                start_page=n.start_page,
                end_page=n.end_page,
                score=round(s, 1),
            )
            for s, _, n in scored[: self.max_candidates]
        ]

    # -- text ----------------------------------------------------------------------
    def marker(self, page: int, *, continued: bool = False) -> str:
        label = self.tree.page_label(page)
        inner = (
            f"page {page}" + (f" | printed {label}" if label else "") + (", continued" if continued else "")
        )
        return f"[{inner}]"

    def section_text(self, node_id: str) -> _SectionText:
        """The whole section with page markers (built once per question)."""
        cached = self._texts.get(node_id)
        if cached is not None:
            return cached
        node = self.tree.get(node_id)
        chunks: list[str] = []
        spans: list[_PageSpan] = []
        pos = 0
        for page in node.pages():
            marker = f"{self.marker(page)}\n"
            chunk = f"{marker}{self.tree.page_text(page).strip()}\n"
            spans.append(_PageSpan(page=page, marker=pos, text=pos + len(marker), end=pos + len(chunk)))
            chunks.append(chunk)
            pos += len(chunk)
        built = _SectionText(text="".join(chunks), pages=spans)
        self._texts[node_id] = built
        return built

    @staticmethod
    def _pages_between(section: _SectionText, start: int, end: int) -> list[int]:
        """The pages with some of their text (anything after their marker line; for an empty page,
        its closing newline) in ``section.text[start:end]``: a marker alone shows no page."""
        return [p.page for p in section.pages if p.text < end and p.end > start]

    def _slice_end(self, section: _SectionText, offset: int) -> int:
        """Where the slice from ``offset`` ends: ``slice_chars`` on, moved back to the last line end in
        its second half, and back before a page's marker line that would end it with none of the
        page's text (the next slice starts with that marker instead)."""
        total = len(section.text)
        end = min(offset + self.slice_chars, total)
        if end == total:
            return end
        newline = section.text.rfind("\n", offset + self.slice_chars // 2, end)
        if newline > offset:
            end = newline + 1
        for p in section.pages:
            if offset < p.marker < end <= p.text:
                return p.marker
        return end

    def fetch(
        self, node_id: str, offset: int = 0, *, withhold_repeats: bool = False, why: str = ""
    ) -> SectionSlice:
        """One slice of a section. ``withhold_repeats``: a slice already served in this
        question comes back as a short note without its text (and shows no pages)."""
        res = self.resolve(node_id)
        if res.node_id is None:
            out = SectionSlice(requested=node_id, found=False, candidates=res.candidates)
            self._trace(
                f'fetch_section("{node_id}"): no match; offered {[c.node_id for c in res.candidates]}',
                requested=node_id,
                found=False,
                candidates=[c.node_id for c in res.candidates],
            )
            return out
        node = self.tree.get(res.node_id)
        section = self.section_text(node.node_id)
        total = len(section.text)
        offset = min(offset, max(total - 1, 0))
        end = self._slice_end(section, offset)
        pages = self._pages_between(section, offset, end)
        body = section.text[offset:end]
        if pages and not body.startswith("[page "):
            body = f"{self.marker(pages[0], continued=True)}\n{body}"
        key = (node.node_id, offset)
        repeat = key in self.served
        self.served[key] = self.served.get(key, 0) + 1
        out = SectionSlice(
            requested=node_id,
            found=True,
            node_id=node.node_id,
            title=node.title,
            matched_by=res.matched_by,
            offset=offset,
            next_offset=end if end < total else None,
            total_chars=total,
            pages=pages,
            text=body,
            from_memory=repeat,
            children=self._children(node),
        )
        if repeat and withhold_repeats:
            out.text, out.pages = "", []
            out.note = "You already read this slice earlier in this conversation; its text is not repeated."
        elif repeat:
            out.note = "(Served from memory: this slice was already shown earlier for this question.)"
        msg = f'fetch_section("{node_id}", offset={offset}) -> {node.node_id}'
        if res.matched_by != "exact":
            msg += f" (matched by {res.matched_by}, score {res.score})"
        msg += f", pages {pages}" if out.pages else ", no new text"
        self._trace(
            msg,
            requested=node_id,
            node_id=node.node_id,
            matched_by=res.matched_by,
            score=res.score,
            offset=offset,
            pages=out.pages,
            from_memory=repeat,
        )
        if out.pages and self.recorder is not None:
            report_pages(self.recorder, out.pages, why or f"fetch_section {node.node_id}")
        return out

    def _children(self, node: Node) -> list[str]:
        """The sub-sections as listed in a slice: "id: title (pages)", within ``children_chars``."""
        listed = [f"{c.node_id}: {c.title} ({page_span(self.tree, c.start_page, c.end_page)})"
                  for c in node.children]  # fmt: skip
        if self.children_chars is None:
            return listed
        kept: list[str] = []
        for entry in listed:
            if sum(len(e) + 2 for e in kept) + len(entry) > self.children_chars:
                left = len(listed) - len(kept)
                kept.append(f"and {left} more, not listed to fit the model's context window")
                break
            kept.append(entry)
        return kept

    def _trace(self, message: str, **data: Any) -> None:
        if self.recorder is not None:
            self.recorder.event("tool_call", message, **data)

    # -- tool-call plumbing ---------------------------------------------------------
    def call(self, call: ToolCall, *, withhold_repeats: bool = False) -> tuple[Message, SectionSlice | None]:
        """Run one ``fetch_section`` tool call; returns the tool message for the model and the
        slice (None when the call itself was invalid: unknown tool, bad arguments)."""
        if call.name != FETCH_SECTION_TOOL.name:
            text = f"error: unknown tool {call.name!r}; the only tool is fetch_section(node_id, offset)."
            self._error(text, call)
            return _tool_message(call, text), None
        try:
            args = FetchArgs.model_validate(call.arguments)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in exc.errors()
            )
            text = (
                f"error: invalid arguments for fetch_section ({problems}); "
                'expected {"node_id": str, "offset": int}.'
            )
            self._error(text, call)
            return _tool_message(call, text), None
        piece = self.fetch(args.node_id, args.offset, withhold_repeats=withhold_repeats)
        return _tool_message(call, piece.render()), piece

    def _error(self, text: str, call: ToolCall) -> None:
        if self.recorder is not None:
            self.recorder.event(
                "error", text, tool=call.name, arguments=call.arguments, raw=call.raw_arguments
            )


def _tool_message(call: ToolCall, content: str) -> Message:
    return Message(role="tool", content=content, tool_call_id=call.id, name=call.name)


def fetch_section(
    tree: Tree, node_id: str, offset: int = 0, *, slice_chars: int = DEFAULT_SLICE_CHARS
) -> SectionSlice:
    """One-off ``fetch_section`` without a retrieval run (handy in notebooks and tests)."""
    return SectionFetcher(tree, slice_chars=slice_chars).fetch(node_id, offset)
