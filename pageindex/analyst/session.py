"""An analyst session: what was read and found while answering questions about one set of filings.

The session keeps *material* that later questions can reuse:

- ``findings``: facts extracted or cited in earlier answers (value, page, section);
- ``sections``: sections whose text a model already read (the text itself is re-read from the
  tree, so only ids, pages and sizes are stored);
- ``failures``: searches that came back empty (the question or item, the reason, what was tried).

and the ``turns`` (question, outcome, tokens, how much came from the session).

Limits (:class:`SessionLimits`): a session idle for longer than ``idle_ttl_s`` has expired
(:meth:`AnalystSession.expire_if_idle` drops its material and turns), and the material is capped
at ``max_chars`` characters (a section counts its text length, a finding or failure the length of
its JSON): :meth:`AnalystSession.evict` drops the oldest material first until it fits.
"""

from __future__ import annotations

import re
import time
from typing import Literal

from pydantic import BaseModel, Field
from rapidfuzz import fuzz

from pageindex.retrievers.result import FailedSearch, Finding, RetrievalResult, Source
from pageindex.tree.model import Tree
from pageindex.wording import counted

DEFAULT_IDLE_TTL_S = 24 * 3600.0
DEFAULT_MAX_CHARS = 200_000
REPEAT_SIMILARITY = 92.0  # a question this similar to a failed one is "the same search"

UseMode = Literal["cold", "session", "repeat_failed", "session_then_retriever"]


class SessionLimits(BaseModel):
    idle_ttl_s: float = Field(DEFAULT_IDLE_TTL_S, gt=0, description="seconds of inactivity before expiry")
    max_chars: int = Field(DEFAULT_MAX_CHARS, ge=0, description="cap on stored material, in characters")


class DocumentRef(BaseModel):
    doc_id: str
    source: str
    sha256: str
    builder_version: str = ""  # the tree builder's: node ids are its own ("" in sessions saved before it)


class SessionFinding(BaseModel):
    finding: Finding
    question: str
    turn: int
    added_at: float

    @property
    def size(self) -> int:
        return len(self.finding.model_dump_json())


class SessionSection(BaseModel):
    node_id: str
    title: str = ""
    pages: list[int] = Field(default_factory=list)
    chars: int = 0
    turn: int
    added_at: float

    @property
    def size(self) -> int:
        return self.chars


class SessionFailure(BaseModel):
    search: FailedSearch
    question: str
    turn: int
    added_at: float

    @property
    def size(self) -> int:
        return len(self.search.model_dump_json())


class SessionUse(BaseModel):
    """How much of one answer came from the session."""

    mode: UseMode = "cold"
    findings_reused: int = 0
    sections_reused: int = 0
    cache_hits: int = 0  # findings + sections + repeated failures served from the session
    tokens_spent: int = 0  # tokens this question cost
    tokens_saved: int = 0  # estimate: tokens the turns that first read the reused material cost, minus spent
    note: str = ""


class SessionTurn(BaseModel):
    index: int
    question: str
    status: str
    answer: str = ""
    reason: str | None = None
    retriever: str = ""
    confidence: float | None = None
    sources: list[Source] = Field(default_factory=list)
    tokens: int = 0
    use: SessionUse = Field(default_factory=SessionUse)
    at: float


class AnalystSession(BaseModel):
    name: str | None = None
    documents: list[DocumentRef] = Field(default_factory=list)
    created_at: float = Field(default_factory=time.time)
    last_used_at: float = Field(default_factory=time.time)
    limits: SessionLimits = Field(default_factory=SessionLimits)
    turns: list[SessionTurn] = Field(default_factory=list)
    findings: list[SessionFinding] = Field(default_factory=list)
    sections: list[SessionSection] = Field(default_factory=list)
    failures: list[SessionFailure] = Field(default_factory=list)
    evicted: int = 0  # material items dropped by the size cap so far

    # -- identity ------------------------------------------------------------------
    @classmethod
    def for_tree(
        cls,
        tree: Tree,
        *,
        name: str | None = None,
        limits: SessionLimits | None = None,
        now: float | None = None,
    ) -> AnalystSession:
        now = time.time() if now is None else now
        parts = getattr(tree, "parts", None)
        built = tree.builder_version
        docs = [
            DocumentRef(doc_id=d.doc_id, source=d.source, sha256=d.sha256, builder_version=built)
            for d in (parts or [tree])
        ]
        return cls(
            name=name, documents=docs, created_at=now, last_used_at=now, limits=limits or SessionLimits()
        )

    def same_documents(self, other: AnalystSession) -> bool:
        """About the same filings (their bytes), in the same order."""
        return [d.sha256 for d in self.documents] == [d.sha256 for d in other.documents]

    def same_build(self, other: AnalystSession) -> bool:
        """Its trees were built by the same tree builder as ``other``'s: the sections it read are
        named by node ids, which another builder version may give to other sections."""
        return [d.builder_version for d in self.documents] == [d.builder_version for d in other.documents]

    def contents(self, sep: str = ", ") -> str:
        """What it holds, in words: "2 questions, 3 findings, 1 section read" (joined by ``sep``)."""
        return sep.join(
            (counted(len(self.turns), "question"), counted(len(self.findings), "finding"),
             f"{counted(len(self.sections), 'section')} read")
        )  # fmt: skip

    # -- limits --------------------------------------------------------------------
    def idle_for(self, now: float) -> float:
        return max(0.0, now - self.last_used_at)

    def is_expired(self, now: float) -> bool:
        return self.idle_for(now) > self.limits.idle_ttl_s

    def clear(self) -> None:
        """Forget the turns and all material (findings, sections, failed searches)."""
        self.turns, self.findings, self.sections, self.failures = [], [], [], []

    def expire_if_idle(self, now: float) -> bool:
        """Drop material and turns when idle too long; True if it expired."""
        if not self.is_expired(now):
            return False
        self.clear()
        self.created_at = self.last_used_at = now
        return True

    def material_chars(self) -> int:
        return sum(m.size for m in (*self.findings, *self.sections, *self.failures))

    def evict(self) -> int:
        """Drop the oldest material until it fits ``limits.max_chars``; how many items were dropped."""
        dropped = 0
        while self.material_chars() > self.limits.max_chars:
            pools = [p for p in (self.findings, self.sections, self.failures) if p]
            oldest_pool = min(pools, key=lambda p: p[0].added_at)
            oldest_pool.pop(0)
            dropped += 1
        self.evicted += dropped
        return dropped

    # -- lookup --------------------------------------------------------------------
    def has_material(self) -> bool:
        return bool(self.findings or self.sections)

    def section(self, node_id: str) -> SessionSection | None:
        return next((s for s in self.sections if s.node_id == node_id), None)

    def repeated_failure(self, question: str) -> SessionFailure | None:
        """An earlier failed search this question repeats (same numbers, near-identical words)."""
        for failure in reversed(self.failures):
            for text in (failure.question, failure.search.item):
                if _same_search(question, text):
                    return failure
        return None

    def turn_tokens(self, turn: int) -> int:
        return next((t.tokens for t in self.turns if t.index == turn), 0)

    # -- recording -----------------------------------------------------------------
    def record(
        self, tree: Tree, question: str, result: RetrievalResult, use: SessionUse, *, now: float
    ) -> SessionTurn:
        """Add a turn and the material its result read, found and failed to find; then evict."""
        index = len(self.turns) + 1
        turn = SessionTurn(
            index=index,
            question=question,
            status=result.status,
            answer=result.answer,
            reason=result.reason or result.error,
            retriever=result.retriever,
            confidence=result.confidence,
            sources=result.sources,
            tokens=result.usage.total_tokens,
            use=use,
            at=now,
        )
        self.turns.append(turn)
        if use.mode != "repeat_failed":
            self._add_material(tree, question, result, index, now)
        self.last_used_at = now
        self.evict()
        return turn

    def _add_material(
        self, tree: Tree, question: str, result: RetrievalResult, turn: int, now: float
    ) -> None:
        known = {(f.finding.label, f.finding.value, f.finding.page) for f in self.findings}
        facts = list(result.findings)
        if result.status == "answer":  # what the answer quotes is a finding too
            facts += [
                Finding(
                    label=f"cited for: {question}",
                    value=s.quote,
                    page=s.page,
                    section=s.node_id,
                    verified=s.verified,
                )
                for s in result.sources
                if s.quote
            ]
        for fact in facts:
            key = (fact.label, fact.value, fact.page)
            if key not in known and fact.verified is not False:
                known.add(key)
                self.findings.append(SessionFinding(finding=fact, question=question, turn=turn, added_at=now))
        for node_id, pages in sections_read(result).items():
            if node_id not in tree or self.section(node_id) is not None:
                continue
            node = tree.get(node_id)
            chars = sum(len(tree.page_text(p)) for p in node.pages())
            self.sections.append(
                SessionSection(
                    node_id=node_id, title=node.title, pages=pages, chars=chars, turn=turn, added_at=now
                )
            )
        if result.status == "error" or result.error_kind:
            # The retrieval broke down (a timeout, a lost server) or the model's output was unusable:
            # its searches did not come back empty, they never ran as asked. Kept as failures, the
            # same question asked again was answered "Not found in this filing ... already searched"
            # with no model call (and ask exited 0), though the filing was never read.
            return
        searches = list(result.failed_searches)
        if result.status == "fail":
            searches.append(
                FailedSearch(
                    item=question, reason=result.reason or "no answer", tried=list(sections_read(result))
                )
            )
        for search in searches:
            self.failures.append(SessionFailure(search=search, question=question, turn=turn, added_at=now))


def sections_read(result: RetrievalResult) -> dict[str, list[int]]:
    """Sections whose text the retrieval showed a model (from its trace), with their pages."""
    out: dict[str, list[int]] = {}
    for event in result.trace:
        data = event.data
        if event.kind != "tool_call" or not data.get("node_id") or data.get("refused"):
            continue
        pages = [p for p in data.get("pages") or [] if isinstance(p, int)]
        if pages or data.get("from_memory"):
            slot = out.setdefault(str(data["node_id"]), [])
            slot += [p for p in pages if p not in slot]
    return out


def _numbers(text: str) -> set[str]:
    return set(re.findall(r"\d+", text))


def _same_search(a: str, b: str) -> bool:
    if not a.strip() or not b.strip() or _numbers(a) != _numbers(b):
        return False
    return fuzz.token_set_ratio(a.lower(), b.lower()) >= REPEAT_SIMILARITY
