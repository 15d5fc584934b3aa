"""Answering questions inside a session: session first, then the chosen retriever.

:meth:`Analyst.ask` for each question:

1. expires the session when it has been idle too long;
2. a question that repeats a search which already came back empty in this session is answered
   "not found" at once, from the session, without any model call;
3. when the session holds material (findings, sections already read), the ``session`` retriever
   is offered it first (the most relevant first) and either answers from it or declines;
4. otherwise (or when it declines) the chosen retriever runs as usual; the searches that already
   failed in this session are named to it in a short note after the question;
5. the turn and its material are recorded in the session (oldest material evicted beyond the cap).

The returned :class:`AnalystAnswer` says how much came from the session (:class:`SessionUse`:
findings and sections reused, cache hits, tokens spent and an estimate of tokens saved: what
the earlier turns that first read the reused material cost, minus what this question cost).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from rapidfuzz import fuzz

import pageindex.analyst.session_retriever  # noqa: F401  (registers the "session" retriever)
from pageindex.analyst.citations import localize_result
from pageindex.analyst.progress import NullProgress, ObservedClient, ProgressSink
from pageindex.analyst.session import AnalystSession, SessionUse
from pageindex.analyst.session_retriever import SESSION_KEY
from pageindex.retrievers.base import QuestionContext, aretrieve, get_retriever
from pageindex.retrievers.result import RetrievalResult, RoleUsage
from pageindex.tree.model import Tree

STEP_LIMITS = ("max_iterations", "max_turns", "max_passes", "max_rounds")


class SearchedSummary(BaseModel):
    """What a retrieval looked at before giving up (for "not found in this filing")."""

    sections: list[str] = Field(default_factory=list)
    pages: list[int] = Field(default_factory=list)
    failed_searches: list[str] = Field(default_factory=list)


class AnalystAnswer(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    question: str
    result: RetrievalResult  # pages and ids as the retriever saw them
    cited: RetrievalResult  # sources and findings naming their document and its own pages
    use: SessionUse
    turn: int
    expired: bool = False  # the session had expired and was cleared before this question
    searched: SearchedSummary | None = None  # set when the answer is "not found"

    @property
    def not_found(self) -> bool:
        return self.result.status == "fail"


def merge_results(first: RetrievalResult, second: RetrievalResult) -> RetrievalResult:
    """``second`` with ``first``'s usage, trace, pages and latency added (a session check that declined)."""
    out = second.model_copy(deep=True)
    by_role: dict[str, RoleUsage] = {k: v.model_copy() for k, v in out.usage.by_role.items()}
    for role, u in first.usage.by_role.items():
        slot = by_role.setdefault(role, RoleUsage())
        slot.prompt_tokens += u.prompt_tokens
        slot.completion_tokens += u.completion_tokens
        slot.cached_tokens += u.cached_tokens
        slot.calls += u.calls
    out.usage.by_role = by_role
    out.usage.prompt_tokens += first.usage.prompt_tokens
    out.usage.completion_tokens += first.usage.completion_tokens
    out.usage.cached_tokens += first.usage.cached_tokens
    out.usage.llm_calls += first.usage.llm_calls
    if out.usage.cost_usd is not None and first.usage.cost_usd is not None:
        out.usage.cost_usd += first.usage.cost_usd
    else:
        out.usage.cost_usd = None
    out.trace = first.trace + out.trace
    out.pages_fetched = sorted(set(first.pages_fetched) | set(out.pages_fetched))
    out.latency_s = round(first.latency_s + out.latency_s, 4)
    out.extra["session_check"] = {k: v for k, v in first.extra.items() if k != "question_id"}
    return out


def searched_summary(result: RetrievalResult) -> SearchedSummary:
    from pageindex.analyst.session import sections_read

    failed = [
        f"{s.item}: {s.reason}" + (f" (tried {', '.join(s.tried)})" if s.tried else "")
        for s in result.failed_searches
    ]
    sections = list(sections_read(result))
    for search in result.failed_searches:
        sections += [t for t in search.tried if t not in sections]
    return SearchedSummary(sections=sections, pages=list(result.pages_fetched), failed_searches=failed)


def without_note(result: RetrievalResult, note: str) -> RetrievalResult:
    """``result`` with the internal failure note (added to the question for the retriever) taken
    out of everything shown to the user: failed searches ("Searched:"), the trace (``/trace``),
    reasons. The model saw it; the user never typed it."""
    if not note:
        return result
    text = result.model_dump_json()
    for variant in (
        json.dumps(note, ensure_ascii=False)[1:-1],
        json.dumps(note.strip(), ensure_ascii=False)[1:-1],
    ):
        text = text.replace(variant, "")
    return RetrievalResult.model_validate_json(text)


class Analyst:
    """Questions about one tree (one filing, or several combined) within one session."""

    def __init__(
        self,
        tree: Tree,
        *,
        llm: Any,
        retriever: str = "iterative",
        options: dict[str, Any] | None = None,
        session: AnalystSession | None = None,
        session_options: dict[str, Any] | None = None,
        use_session: bool = True,
        clock: Callable[[], float] = time.time,
        progress: ProgressSink | None = None,
        context: dict[str, Any] | None = None,
        time_limit: float | None = None,
    ) -> None:
        self.tree = tree
        self.llm = llm
        self.retriever = retriever
        self.options = dict(options or {})
        self.spec = get_retriever(retriever)
        self.parsed_options = self.spec.parse_options(self.options)  # RetrieverConfigError early
        self.session_options = dict(session_options or {})
        get_retriever("session").parse_options(self.session_options)
        self.clock = clock
        self.session = session if session is not None else AnalystSession.for_tree(tree, now=clock())
        self.use_session = use_session
        self.progress: ProgressSink = progress or NullProgress()
        self.last: AnalystAnswer | None = None
        self.context = dict(context or {})  # QuestionContext fields for the retriever (e.g. evidence_pages)
        # seconds one question's retrieval may take, all its calls (None: no limit); a question past it
        # ends as an error of kind time_limit, as a bench sample does
        self.time_limit = time_limit

    @property
    def step_limit(self) -> tuple[str, int | None]:
        """("iteration", 4) for iterative, ("turn", 12) for agent...: the N of "n of N"."""
        for name in STEP_LIMITS:
            value = getattr(self.parsed_options, name, None)
            if isinstance(value, int):
                return name.removeprefix("max_").rstrip("s"), value
        return "step", None

    def _session_can_answer(self) -> bool:
        """Whether the ``session`` retriever can run: it needs a model, and a retriever that uses
        none (``extractive``) is asked without one; its findings are still kept and a repeated
        failed search is still answered from the session."""
        return self.llm is not None or not get_retriever("session").needs_llm

    def _client(self) -> Any:
        return ObservedClient(self.llm, self.progress) if self.llm is not None else None

    # -- material offered to the session retriever ------------------------------------
    def material(self, question: str) -> dict[str, Any]:
        q = question.lower()
        findings = sorted(
            enumerate(self.session.findings),
            key=lambda t: (
                -fuzz.token_set_ratio(q, f"{t[1].finding.label} {t[1].finding.context}".lower()),
                -t[0],
            ),
        )
        labels: dict[str, str] = {}
        for f in self.session.findings:
            labels[f.finding.section] = labels.get(f.finding.section, "") + " " + f.finding.label
        sections = sorted(
            enumerate(self.session.sections),
            key=lambda t: (
                -fuzz.token_set_ratio(q, f"{t[1].title} {labels.get(t[1].node_id, '')}".lower()),
                -t[0],
            ),
        )
        return {
            "findings": [f.finding.model_dump(mode="json") for _, f in findings],
            "sections": [s.node_id for _, s in sections],
        }

    def _failure_note(self) -> str:
        if not self.session.failures:
            return ""
        items = [
            f"{f.search.item}" + (f" (tried {', '.join(f.search.tried)})" if f.search.tried else "")
            for f in self.session.failures[-5:]
        ]
        return (
            "\n\n(Searches that already came back empty in this session, do not repeat them: "
            + "; ".join(items)
            + ")"
        )

    # -- one question -------------------------------------------------------------------
    async def ask(self, question: str) -> AnalystAnswer:
        question = question.strip()
        expired = self.session.expire_if_idle(self.clock())
        repeated = self.session.repeated_failure(question) if self.use_session else None
        if repeated is not None:
            result = RetrievalResult(
                retriever="session",
                query=question,
                status="fail",
                reason=f"already searched in this session (question {repeated.turn}) without success: "
                f"{repeated.search.reason}",
                failed_searches=[repeated.search],
            )
            use = SessionUse(
                mode="repeat_failed",
                cache_hits=1,
                tokens_saved=self.session.turn_tokens(repeated.turn),
                note="the same search already came back empty in this session; not repeated",
            )
        elif self.use_session and self.session.has_material() and self._session_can_answer():
            result, use = await self._ask_session_first(question)
        else:
            result = await self._ask_retriever(question)
            use = SessionUse(mode="cold", tokens_spent=result.usage.total_tokens)
        turn = self.session.record(self.tree, question, result, use, now=self.clock())
        answer = AnalystAnswer(
            question=question,
            result=result,
            cited=localize_result(self.tree, result),
            use=use,
            turn=turn.index,
            expired=expired,
            searched=searched_summary(result) if result.status == "fail" else None,
        )
        self.last = answer
        return answer

    def last_answer(self) -> AnalystAnswer | None:
        """The last answer: this sitting's, else (a reopened session) the session's last saved turn,
        rebuilt from what a turn keeps (answer, status, sources; not the steps it took)."""
        if self.last is not None or not self.session.turns:
            return self.last
        turn = self.session.turns[-1]
        result = RetrievalResult(
            retriever=turn.retriever or self.retriever, query=turn.question, status=turn.status,  # type: ignore[arg-type]
            answer=turn.answer, reason=turn.reason, confidence=turn.confidence, sources=turn.sources,
        )  # fmt: skip
        return AnalystAnswer(
            question=turn.question, result=result, cited=localize_result(self.tree, result), use=turn.use,
            turn=turn.index,
        )  # fmt: skip

    async def _ask_retriever(self, question: str) -> RetrievalResult:
        unit, limit = self.step_limit
        if hasattr(self.progress, "limit"):
            self.progress.limit, self.progress.unit = limit, unit  # type: ignore[attr-defined]
        self.progress.stage(f"{self.retriever} retriever")
        note = self._failure_note() if self.use_session else ""
        result = await aretrieve(
            self.tree,
            question + note,
            retriever=self.retriever,
            llm=self._client(),
            context=QuestionContext.model_validate(self.context),
            time_limit=self.time_limit,
            **self.options,
        )
        result = without_note(result, note)
        result.query = question
        return result

    async def _ask_session_first(self, question: str) -> tuple[RetrievalResult, SessionUse]:
        if hasattr(self.progress, "limit"):
            self.progress.limit, self.progress.unit = None, "step"  # type: ignore[attr-defined]
        self.progress.stage("checking what this session already read")
        first = await aretrieve(
            self.tree,
            question,
            retriever="session",
            llm=self._client(),
            context=QuestionContext(extra={SESSION_KEY: self.material(question)}),
            time_limit=self.time_limit,
            **self.session_options,
        )
        if first.status == "answer":
            return first, self._use_from_session(first)
        second = await self._ask_retriever(question)
        result = merge_results(first, second)
        use = SessionUse(
            mode="session_then_retriever",
            tokens_spent=result.usage.total_tokens,
            note=f"the session's material was not enough ({first.reason or first.error}); "
            f"asked {self.retriever}",
        )
        return result, use

    def _use_from_session(self, result: RetrievalResult) -> SessionUse:
        cited = {s.page for s in result.sources}
        findings = [f for f in self.session.findings if f.finding.page in cited]
        sections = [s for s in self.session.sections if cited & set(s.pages)]
        offered = set(result.extra.get("offered_sections", []))
        if not findings and not sections:  # an answer without page citations: count what was offered
            findings = list(self.session.findings)
            sections = [s for s in self.session.sections if s.node_id in offered]
        turns = {f.turn for f in findings} | {s.turn for s in sections}
        spent = result.usage.total_tokens
        earlier = sum(self.session.turn_tokens(t) for t in turns)
        return SessionUse(
            mode="session",
            findings_reused=len(findings),
            sections_reused=len(sections),
            cache_hits=len(findings) + len(sections),
            tokens_spent=spent,
            tokens_saved=max(0, earlier - spent),
            note=f"answered from material of question(s) {', '.join(map(str, sorted(turns)))}",
        )
