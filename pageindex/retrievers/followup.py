"""The ``followup`` retriever: one model answers, lists what is missing, and gets pages for it.

Pass 1 shows the model the pages of the leaf sections BM25 ranks best for the question. The
model replies with an answer, or ``incomplete`` with a list of missing items. Each new item is
looked up: section titles first (fuzzy), then BM25 over page text; only pages not yet shown
are added (up to ``max_pages`` in all), and an item that found nothing is remembered and never
looked up again. The new pages go into the same conversation (no page is ever sent twice), for
at most ``max_passes`` passes. Gaps identified, resolved and unresolved are recorded in
``extra["gaps"]``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, model_validator

from pageindex.llm.types import Message
from pageindex.retrievers.base import ModelCallOptions, QuestionRun, register_retriever
from pageindex.retrievers.prompts import INJECTION_NOTICE, load_prompt
from pageindex.retrievers.ranking import match_titles, ranker_for, tokenize
from pageindex.retrievers.replies import AnswerWithSources, CitedSource, check_not_placeholder
from pageindex.retrievers.result import FailedSearch, RetrievalResult
from pageindex.retrievers.tools import holding_pages

PROMPT_VERSION = "followup_v1"


class FollowupOptions(ModelCallOptions):
    max_passes: int = Field(3, ge=1, le=10, description="answering calls at most")
    initial_sections: int = Field(3, ge=1, le=20, description="BM25-ranked leaf sections shown in pass 1")
    initial_pages: int = Field(6, ge=1, description="pages shown in pass 1 at most")
    max_pages: int = Field(12, ge=1, description="pages shown over all passes at most")
    pages_per_item: int = Field(2, ge=1, le=10, description="pages added per missing item at most")
    title_min_score: float = Field(85.0, ge=0, le=100, description="fuzzy title match needed (0-100)")
    max_chars_per_page: int | None = Field(None, ge=100, description="truncate each page (None = whole)")


class FollowupReply(BaseModel):
    status: Literal["answer", "incomplete", "fail"]
    answer: str = ""
    sources: list[CitedSource] = Field(default_factory=list)
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    missing: list[str] = Field(default_factory=list)
    reason: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> FollowupReply:
        if self.status == "answer" and not self.answer.strip():
            raise ValueError('status "answer" needs a non-empty "answer"')
        if self.status == "incomplete" and not [m for m in self.missing if m.strip()]:
            raise ValueError('status "incomplete" needs at least one "missing" item')
        if self.status == "fail":
            check_not_placeholder("reason", self.reason)
        else:
            check_not_placeholder("answer", self.answer)
        return self


class Gap(BaseModel):
    item: str
    pass_no: int  # the pass whose reply listed it
    status: Literal["resolved", "not_found", "page_cap"]
    via: Literal["title", "bm25"] | None = None
    node_id: str | None = None  # title match
    pages: list[int] = Field(default_factory=list)


def _key(item: str) -> str:
    return " ".join(sorted(set(tokenize(item)))) or item.strip().lower()


class _Lookup:
    """Finds pages for missing items; remembers what it saw and what it could not find."""

    def __init__(self, run: QuestionRun, opts: FollowupOptions, seen: list[int]):
        self.run = run
        self.opts = opts
        self.seen = seen  # pages shown so far, in order
        self.gaps: dict[str, Gap] = {}
        self.identified: list[str] = []  # every missing item any reply listed, first wording kept

    def find(self, item: str, pass_no: int) -> Gap:
        room = self.opts.max_pages - len(self.seen)
        if room <= 0:
            return Gap(item=item, pass_no=pass_no, status="page_cap")
        want = min(self.opts.pages_per_item, room)
        seen = set(self.seen)
        for match in match_titles(self.run.tree, item, min_score=self.opts.title_min_score):
            node = self.run.tree.get(match.node_id)
            pages = [p for p in node.pages() if p not in seen][:want]
            if pages:
                return Gap(item=item, pass_no=pass_no, status="resolved", via="title", node_id=node.node_id,
                           pages=pages)
        pages = ranker_for(self.run.tree, "page").top_pages(item, k=want, exclude_pages=frozenset(seen))
        if pages:
            return Gap(item=item, pass_no=pass_no, status="resolved", via="bm25", pages=pages)
        return Gap(item=item, pass_no=pass_no, status="not_found")


@register_retriever("followup", options=FollowupOptions, prompt_version=PROMPT_VERSION)
async def followup(run: QuestionRun, opts: FollowupOptions) -> RetrievalResult:
    """One model answers from BM25-chosen sections and lists what is missing; missing items are
    looked up (titles, then BM25) and shown, at most max_passes times."""
    prompt = load_prompt(PROMPT_VERSION)
    hits = ranker_for(run.tree, "section").search(run.query, k=opts.initial_sections)
    first: list[int] = []
    for hit in hits:
        first += [p for p in hit.chunk.pages if p not in first]
    first = first[: min(opts.initial_pages, opts.max_pages)]
    run.event("decision", f"pass 1: sections {[h.chunk.key for h in hits]} -> pages {first}", pages=first)
    if not first:
        return run.result("fail", reason="no section matches any word of the question")
    seen: list[int] = list(first)
    lookup = _Lookup(run, opts, seen)
    fit = {"role": "followup", "reply": FollowupReply, "max_chars_per_page": opts.max_chars_per_page}
    # The pages' text fits the model's known context window (cut or left out where it does not, said in
    # the trace; pass 1 takes half the room when later passes may add pages); a page counts as shown
    # once the request carrying it is answered.
    with holding_pages() as unsent:
        messages = await run.fitted_pages(first, lambda text, shown: prompt.messages(
            question=run.query,
            max_passes=opts.max_passes,
            injection_notice=INJECTION_NOTICE,
            page_list=", ".join(map(str, shown)),
            pages=text,
        ), share=0.5 if opts.max_passes > 1 else 1.0, **fit)  # fmt: skip
    assert messages is not None  # required: no room at all is a ContextLengthError
    reply: FollowupReply | None = None
    passes: list[dict] = []
    for pass_no in range(1, opts.max_passes + 1):
        run.count_turn(reached=pass_no)
        reply = await run.structured(messages, FollowupReply, role="followup", tag={"pass": pass_no},
                                     shows=unsent)
        record = {"pass": pass_no, "status": reply.status, "missing": reply.missing,
                  "tokens": run.tokens_used()}
        passes.append(record)
        for item in reply.missing:
            if item.strip() and _key(item) not in {_key(i) for i in lookup.identified}:
                lookup.identified.append(item.strip())
        run.event("decision", f"pass {pass_no}: {reply.status}, missing {reply.missing}")
        if reply.status == "fail" or (reply.status == "answer" and not reply.missing):
            break
        if pass_no == opts.max_passes:
            break
        new_pages, notes = _look_up(lookup, reply.missing, pass_no)
        record["added_pages"] = new_pages
        if not new_pages:
            run.event("decision", f"pass {pass_no}: nothing new to show; stopping")
            break
        said = [*messages, Message(role="assistant", content=reply.model_dump_json(exclude_none=True))]

        def more(text: str, shown: list[int], said: list[Message] = said, notes: list[str] = notes
                 ) -> list[Message]:
            return [*said, Message(
                role="user",
                content="\n".join(notes) + f"\n\nPages ({', '.join(map(str, shown))}):\n" + text
                + "\n\nReply with the JSON object as before.",
            )]  # fmt: skip

        with holding_pages() as unsent:
            fitted = await run.fitted_pages(new_pages, more, required=False, **fit)
        if fitted is None:
            run.event("decision", f"pass {pass_no}: no room left in the model's context for the pages found; "
                                  "stopping")
            break
        messages = fitted
    return _finish(run, opts, reply, lookup, passes)


def _look_up(lookup: _Lookup, missing: list[str], pass_no: int) -> tuple[list[int], list[str]]:
    """Pages for the new items of one reply and the notes telling the model what happened."""
    new_pages: list[int] = []
    notes: list[str] = []
    for item in dict.fromkeys(m.strip() for m in missing if m.strip()):
        key = _key(item)
        known = lookup.gaps.get(key)
        if known is not None:
            where = f"pages {known.pages}" if known.pages else "nothing"
            notes.append(f"- {item}: already looked up in pass {known.pass_no} ({known.status}, {where}); "
                         "not looked up again.")
            lookup.run.event("decision", f"skip {item!r}: already {known.status} in pass {known.pass_no}")
            continue
        gap = lookup.find(item, pass_no)
        lookup.gaps[key] = gap
        if gap.status == "resolved":
            lookup.seen.extend(gap.pages)
            new_pages.extend(gap.pages)
            via = f"section title {gap.node_id}" if gap.via == "title" else "word search"
            notes.append(f"- {item}: pages {gap.pages} (found by {via}).")
        elif gap.status == "page_cap":
            notes.append(f"- {item}: not looked up (page limit {lookup.opts.max_pages} reached).")
        else:
            notes.append(f"- {item}: NOT FOUND in this filing; do not ask for it again.")
        lookup.run.event("tool_call", f"look up {item!r}: {gap.status}"
                         + (f" via {gap.via}, pages {gap.pages}" if gap.pages else ""),
                         item=item, status=gap.status, via=gap.via, pages=gap.pages)
    lookup.run.count_tool_calls(sum(1 for g in lookup.gaps.values() if g.pass_no == pass_no))
    return new_pages, ["Missing items:", *notes]


def _finish(run: QuestionRun, opts: FollowupOptions, reply: FollowupReply | None, lookup: _Lookup,
            passes: list[dict]) -> RetrievalResult:
    gaps = list(lookup.gaps.values())
    unresolved = [g.item for g in gaps if g.status != "resolved"]
    if reply is not None and reply.status != "fail":  # listed in the last reply, no pass left to look up
        unresolved += [m for m in lookup.identified if _key(m) not in lookup.gaps]
    extra = {
        "passes": passes,
        "gaps": {
            "identified": lookup.identified,
            "resolved": [g.model_dump(mode="json") for g in gaps if g.status == "resolved"],
            "unresolved": unresolved,
        },
    }
    failed = [
        FailedSearch(item=g.item, reason=g.status.replace("_", " "), tried=["titles", "bm25"])
        for g in gaps if g.status != "resolved"
    ]
    common = {"iterations": len(passes), "failed_searches": failed, "extra": extra}
    if reply is None:
        return run.result("fail", reason="no reply", **common)
    if reply.status == "answer":
        answer = AnswerWithSources(status="answer", answer=reply.answer, sources=reply.sources,
                                   confidence=reply.confidence)
        return run.result_from_answer(answer, **common)
    if reply.status == "fail":
        return run.result("fail", reason=reply.reason or "the model gave no reason", **common)
    reason = f"still incomplete after {len(passes)} pass(es); missing: {', '.join(reply.missing)}"
    if reply.answer.strip():
        extra["partial_answer"] = reply.answer.strip()
    return run.result("fail", reason=reason, **common)


__all__ = ["FollowupOptions", "FollowupReply", "Gap", "followup"]
