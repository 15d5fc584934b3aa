"""The ``iterative`` retriever: an extraction agent and a synthesis agent in a loop.

Each iteration (at most ``max_iterations``):

1. **Extraction** starts from a fresh context with ONE shopping item (the question itself
   the first time). It reads 1 to ``max_sections`` sections with ``fetch_section`` and
   replies with structured findings ``{label, value, unit, page, section, context}`` or a
   failure with a reason and the sections it tried. Sections extracted in earlier
   iterations are refused (their findings are already recorded).
2. **Synthesis** never sees PDF text: it gets the question, every finding so far
   (append-only) and the failed searches, and decides through ``client.structured``:
   ``answer`` (with the pages of the findings used and a confidence), ``needs`` (exactly one
   next item, and why) or ``fail``. It is not told to answer on the last iteration; a
   ``needs`` there ends the retrieval in ``fail``. The answer's sources are the findings on
   the pages it names (a named page that holds no finding is no source).

``result.extra["iterations"]`` records, per iteration, the shopping item, the sections
read, the findings added, the failure (if any), the decision and the tokens spent.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, model_validator

from pageindex.llm.types import Message, ToolCall, UnusableReply
from pageindex.retrievers.base import FetchOptions, QuestionRun, register_retriever
from pageindex.retrievers.prompts import INJECTION_NOTICE, load_prompt
from pageindex.retrievers.replies import TextOrNumber, check_not_placeholder, source_for_page
from pageindex.retrievers.result import FailedSearch, Finding, RetrievalResult, Source
from pageindex.retrievers.toolloop import ToolLoopEnd, run_tool_loop
from pageindex.retrievers.tools import FetchArgs

EXTRACT_PROMPT = "iterative_extract_v1"
SYNTH_PROMPT = "iterative_synth_v1"
PROMPT_VERSION = f"{EXTRACT_PROMPT}+{SYNTH_PROMPT}"


class IterativeOptions(FetchOptions):
    max_iterations: int = Field(4, ge=1, description="extraction + synthesis rounds at most")
    max_sections: int = Field(3, ge=1, description="different sections one extraction may read")
    max_extract_turns: int = Field(6, ge=1, description="model calls per extraction at most")
    index_depth: int | None = Field(
        None, ge=0, description="deepest tree level shown in the index (None = all)"
    )
    summaries: bool = Field(True, description="show node summaries in the index when the tree has them")


# ----------------------------------------------------------------------------- replies
class ExtractedFinding(BaseModel):
    label: str = Field(min_length=1)
    value: TextOrNumber = Field(min_length=1)
    unit: str | None = None
    page: int
    section: str = ""
    context: str = ""


class ExtractionReply(BaseModel):
    status: Literal["found", "fail"]
    findings: list[ExtractedFinding] = Field(default_factory=list)
    reason: str | None = None
    tried: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> ExtractionReply:
        if self.status == "found" and not self.findings:
            raise ValueError('status "found" needs at least one finding')
        if self.status == "fail":
            check_not_placeholder("reason", self.reason)
        for finding in self.findings if self.status == "found" else []:
            check_not_placeholder("value", finding.value)
        return self


class SynthesisReply(BaseModel):
    """What the synthesis agent decides after each extraction."""

    decision: Literal["answer", "needs", "fail"]
    answer: TextOrNumber | None = Field(None, description='the answer, when decision is "answer"')
    pages: list[int] = Field(default_factory=list, description="PDF pages of the findings the answer uses")
    confidence: float | None = Field(None, ge=0.0, le=1.0)
    need: str | None = Field(None, description='exactly one specific missing item, when decision is "needs"')
    why: str | None = Field(None, description="why that item is needed")
    reason: str | None = Field(None, description='why the filing cannot answer, when decision is "fail"')

    @model_validator(mode="after")
    def _consistent(self) -> SynthesisReply:
        if self.decision == "answer" and not (self.answer or "").strip():
            raise ValueError('decision "answer" needs a non-empty "answer"')
        if self.decision == "needs" and not (self.need or "").strip():
            raise ValueError('decision "needs" needs a non-empty "need"')
        return self


class IterationRecord(BaseModel):
    iteration: int
    item: str
    sections: list[str] = Field(default_factory=list)
    findings_added: list[Finding] = Field(default_factory=list)
    failure: FailedSearch | None = None
    decision: str = ""
    need: str | None = None
    tokens: int = 0


class Extraction(BaseModel):
    sections: list[str] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)
    failure: FailedSearch | None = None
    unusable: bool = False  # no valid reply within the turns: the model's output, not the filing


# ----------------------------------------------------------------------------- the loop
@register_retriever("iterative", options=IterativeOptions, prompt_version=PROMPT_VERSION)
async def iterative(run: QuestionRun, opts: IterativeOptions) -> RetrievalResult:
    """Extraction agent (fresh context, one item) + synthesis agent (findings only), in a loop."""
    index = await run.index(max_depth=opts.index_depth, summaries=opts.summaries, role="extraction")
    findings: list[Finding] = []
    failed: list[FailedSearch] = []
    extracted: list[str] = []
    records: list[IterationRecord] = []
    item = run.query

    unusable_rounds = 0

    def finish(status: str, **fields: Any) -> RetrievalResult:
        if status == "fail" and not findings and records and unusable_rounds == len(records):
            # Not one extraction gave a valid reply: the search never happened, so a "not found"
            # would be unfounded. The model's output was unusable (ask exits 4, a run records the kind).
            fields.setdefault("error_kind", "invalid_reply")
        return run.result(
            status,  # type: ignore[arg-type]
            findings=findings,
            failed_searches=failed,
            iterations=len(records),
            extra={"iterations": [r.model_dump(mode="json") for r in records]},
            **fields,
        )

    for iteration in range(1, opts.max_iterations + 1):
        tokens_before = run.tokens_used()
        record = IterationRecord(iteration=iteration, item=item)
        records.append(record)
        run.event("decision", f"iteration {iteration}: extract {item!r}", iteration=iteration, item=item)

        got = await _extract(run, opts, item=item, iteration=iteration, index=index, extracted=extracted)
        record.sections = got.sections
        extracted += [s for s in got.sections if s not in extracted]
        known = {(f.label, f.value, f.page) for f in findings}
        record.findings_added = [f for f in got.findings if (f.label, f.value, f.page) not in known]
        findings += record.findings_added
        if got.failure is not None:
            record.failure = got.failure
            failed.append(got.failure)
        unusable_rounds += got.unusable

        try:
            decision = await _synthesise(run, opts, iteration=iteration, findings=findings, failed=failed)
        except UnusableReply as exc:
            record.tokens = run.tokens_used() - tokens_before
            record.decision = "invalid"
            return finish("fail", reason=f"synthesis reply invalid: {exc}", error_kind=exc.kind)
        record.tokens = run.tokens_used() - tokens_before
        record.decision = decision.decision
        run.event(
            "decision",
            f"iteration {iteration}: synthesis -> {decision.decision}",
            reply=decision.model_dump(mode="json"),
        )
        if decision.decision == "answer":
            return finish(
                "answer",
                answer=(decision.answer or "").strip(),
                confidence=decision.confidence,
                sources=_sources(run, findings, decision.pages),
            )
        if decision.decision == "fail":
            return finish("fail", reason=decision.reason or "the synthesis agent gave up without a reason")
        record.need = decision.need
        item = (decision.need or "").strip()
    return finish(
        "fail", reason=f"no answer after max_iterations={opts.max_iterations}; still missing: {item}"
    )


async def _extract(
    run: QuestionRun, opts: IterativeOptions, *, item: str, iteration: int, index: str, extracted: list[str]
) -> Extraction:
    """One extraction agent, fresh context, at most ``max_sections`` new sections."""
    messages = load_prompt(EXTRACT_PROMPT).messages(
        item=item,
        question=run.query,
        extracted=", ".join(extracted) or "none",
        index=index,
        max_sections=opts.max_sections,
        injection_notice=INJECTION_NOTICE,
    )
    read: list[str] = []

    async def fetch(calls: list[ToolCall]) -> list[Message]:
        return [_fetch_guarded(run, opts, call, read=read, extracted=extracted) for call in calls]

    end = await run_tool_loop(
        run,
        messages,
        ExtractionReply,
        max_turns=opts.max_extract_turns,
        role="extraction",
        what=f"iteration {iteration}",
        format_hint='Reply with the JSON object only ({"status": "found", ...} or {"status": "fail", ...}).',
        tag={"iteration": iteration},
        max_tokens=opts.max_tokens,
        run_tools=fetch,
    )
    reply = end.reply
    if reply is not None and reply.status == "fail":
        tried = list(dict.fromkeys(read + [t for t in reply.tried if t not in read]))
        return Extraction(
            sections=read,
            failure=FailedSearch(item=item, reason=reply.reason or "not found", tried=tried),
        )
    if reply is not None:
        return Extraction(sections=read, findings=[_finding(run, f) for f in reply.findings])
    return Extraction(
        sections=read,
        failure=FailedSearch(
            item=item, reason=f"no valid extraction {_stop(end, opts.max_extract_turns)}", tried=read
        ),
        unusable=True,
    )


def _stop(end: ToolLoopEnd, max_turns: int) -> str:
    """What stopped an extraction loop without a valid reply, worded to follow "no valid extraction"."""
    return f"within {max_turns} turns" if end.stopped_by == "max_turns" else end.reason


def _fetch_guarded(
    run: QuestionRun, opts: IterativeOptions, call: ToolCall, *, read: list[str], extracted: list[str]
) -> Message:
    """Run a fetch unless it targets a section extracted earlier or one section too many."""
    try:
        args = FetchArgs.model_validate(call.arguments) if call.error is None else None
    except ValidationError:
        args = None
    node_id = run.fetcher.resolve(args.node_id).node_id if args is not None else None
    refusal = None
    if node_id is not None and node_id in extracted:
        refusal = (
            f"Section {node_id} was already extracted in an earlier round; its findings are recorded. "
            "Choose another section."
        )
    elif node_id is not None and node_id not in read and len(read) >= opts.max_sections:
        refusal = (
            f"You have already read {opts.max_sections} sections ({', '.join(read)}), the limit for one "
            "item. Reply now with your findings or a failure."
        )
    if refusal is not None:
        run.count_tool_calls()
        run.event(
            "tool_call",
            f"fetch_section({args.node_id!r}) refused: {refusal}",
            node_id=node_id,  # type: ignore[union-attr]
            refused=True,
        )
        return Message(role="tool", content=refusal, tool_call_id=call.id, name=call.name)
    message, piece = run.run_tool_call(call)
    if piece is not None and piece.found and piece.node_id not in read:
        read.append(piece.node_id)  # type: ignore[arg-type]
    return message


def _finding(run: QuestionRun, f: ExtractedFinding) -> Finding:
    section = f.section
    if section not in run.tree and 1 <= f.page <= run.tree.page_count:
        # the section the finding's words sit under on its page (its label, as on a table row, else
        # its value); the page's first section when neither is found there
        leaf = run.tree.leaf_for_page(f.page, [f.label, f.value])
        resolved = run.fetcher.resolve(section).node_id if section else None
        section = resolved or (leaf.node_id if leaf else section)
    return Finding(label=f.label, value=f.value, unit=f.unit, page=f.page, section=section, context=f.context)


async def _synthesise(
    run: QuestionRun,
    opts: IterativeOptions,
    *,
    iteration: int,
    findings: list[Finding],
    failed: list[FailedSearch],
) -> SynthesisReply:
    lines = [
        f"F{i}. {f.label}: {f.value}"
        + (f" {f.unit}" if f.unit else "")
        + f" (page {f.page}, section {f.section}"
        + (f"; {f.context}" if f.context else "")
        + ")"
        for i, f in enumerate(findings, 1)
    ]
    misses = [
        f"- {s.item}: {s.reason}" + (f" (tried {', '.join(s.tried)})" if s.tried else "") for s in failed
    ]
    messages = load_prompt(SYNTH_PROMPT).messages(
        question=run.query,
        findings="\n".join(lines) or "none yet",
        failed="\n".join(misses) or "none",
        iteration=iteration,
        max_iterations=opts.max_iterations,
    )
    return await run.structured(messages, SynthesisReply, role="synthesis", tag={"iteration": iteration})


def _sources(run: QuestionRun, findings: list[Finding], pages: list[int]) -> list[Source]:
    """Sources for the pages the synthesis used: each finding on such a page, quoting its value.

    The synthesis sees findings, never page text, so a page it names that holds no finding (a page
    nobody read, or one read without a finding) is no source: it is left out, and the trace says so.
    When the synthesis names no page that holds a finding, every finding is a source.
    """
    found_on = {f.page for f in findings}
    unfounded = [p for p in dict.fromkeys(pages) if p not in found_on]
    if unfounded:
        run.event(
            "decision",
            f"page(s) {', '.join(map(str, unfounded))} named by the synthesis hold no finding: not sources",
            pages=unfounded,
        )
    chosen = [f for f in findings if f.page in pages] or list(findings)
    return [source_for_page(run.tree, f.page, node_id=f.section, quote=f.value) for f in chosen]
