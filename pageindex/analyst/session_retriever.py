"""The ``session`` retriever: answer a follow-up from what the session already read, or decline.

It gets the session's material through ``QuestionContext.extra["session"]``
(``{"findings": [Finding...], "sections": [node_id...]}``, most relevant first, chosen by
:mod:`pageindex.analyst.engine`), shows the model the findings and the text of those sections
(re-read from the tree through the run's fetcher, so ``pages_fetched`` and page verification work
as for any retriever, up to ``offer_chars`` characters), and asks one structured question:
``answer`` (with sources) or ``search`` (the material is not enough). ``search`` ends in status
``fail`` with ``extra["session_decision"] = "search"``; the engine then asks the chosen retriever.

It needs no change in the retriever machinery: it registers itself like any retriever when this
module is imported.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, model_validator

from pageindex.retrievers.base import QuestionRun, RetrieverOptions, register_retriever
from pageindex.retrievers.prompts import INJECTION_NOTICE, PromptTemplate, wrap_document
from pageindex.retrievers.replies import CitedSource, sources_from_citations
from pageindex.retrievers.result import Finding, RetrievalResult

PROMPT_VERSION = "session_answer_v1"
PROMPT_FILE = Path(__file__).parent / "prompts" / f"{PROMPT_VERSION}.md"
SESSION_KEY = "session"


class SessionOptions(RetrieverOptions):
    offer_chars: int = Field(
        16_000, ge=0, description="characters of already-read section text offered at most"
    )
    max_findings: int = Field(60, ge=0, description="findings from earlier questions offered at most")
    slice_chars: int = Field(8_000, ge=200, description="characters per section slice read from the session")


class SessionReply(BaseModel):
    decision: Literal["answer", "search"]
    answer: str | None = Field(None, description='the answer, when decision is "answer"')
    sources: list[CitedSource] = Field(default_factory=list, description="pages and quotes the answer uses")
    confidence: float | None = Field(None, ge=0.0, le=1.0)
    missing: str | None = Field(None, description='what the material lacks, when decision is "search"')

    @model_validator(mode="after")
    def _consistent(self) -> SessionReply:
        if self.decision == "answer" and not (self.answer or "").strip():
            raise ValueError('decision "answer" needs a non-empty "answer"')
        return self


def load_session_prompt() -> PromptTemplate:
    text = PROMPT_FILE.read_text(encoding="utf-8")
    parts: dict[str, str] = {}
    role = None
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped in ("=== system ===", "=== user ==="):
            role = stripped.strip("= ").strip()
            parts[role] = ""
        elif role is not None:
            parts[role] += line
    return PromptTemplate(version=PROMPT_VERSION, parts=parts)


def _finding_line(i: int, f: Finding) -> str:
    return (
        f"F{i}. {f.label}: {f.value}"
        + (f" {f.unit}" if f.unit else "")
        + f" (page {f.page}, section {f.section}"
        + (f"; {f.context}" if f.context else "")
        + ")"
    )


def _section_texts(run: QuestionRun, node_ids: list[str], budget: int) -> tuple[str, list[str]]:
    """Text of already-read sections (most relevant first) within ``budget`` characters."""
    blocks: list[str] = []
    offered: list[str] = []
    used = 0
    for node_id in node_ids:
        if node_id not in run.tree or used >= budget:
            continue
        offset: int | None = 0
        while offset is not None and used < budget:
            piece = run.fetcher.fetch(node_id, offset, why="session: already read")
            if not piece.found or not piece.text:
                break
            blocks.append(
                f"Section {piece.node_id}: {piece.title}\n" + wrap_document(piece.text, node_id=piece.node_id)
            )
            used += len(piece.text)
            offset = piece.next_offset
        offered.append(node_id)
    return "\n\n".join(blocks), offered


@register_retriever("session", options=SessionOptions, prompt_version=PROMPT_VERSION)
async def session(run: QuestionRun, opts: SessionOptions) -> RetrievalResult:
    """Answer from the session's findings and already-read sections, or decline ("search")."""
    material = run.context.extra.get(SESSION_KEY) or {}
    findings = [Finding.model_validate(f) for f in material.get("findings", [])][: opts.max_findings]
    sections, offered = _section_texts(run, list(material.get("sections", [])), opts.offer_chars)
    run.event(
        "decision",
        f"session: offering {len(findings)} finding(s) and {len(offered)} section(s) already read",
        findings=len(findings),
        sections=offered,
    )
    messages = load_session_prompt().messages(
        question=run.query,
        findings="\n".join(_finding_line(i, f) for i, f in enumerate(findings, 1)) or "none",
        sections=sections or "none",
        injection_notice=INJECTION_NOTICE,
    )
    run.count_turn(reached=1)
    reply = await run.structured(messages, SessionReply, role="session")
    extra = {
        "session_decision": reply.decision,
        "offered_findings": len(findings),
        "offered_sections": offered,
    }
    if reply.decision == "search":
        return run.result(
            "fail", reason=f"not in the session's material: {reply.missing or 'no reason given'}", extra=extra
        )
    return run.result(
        "answer",
        answer=(reply.answer or "").strip(),
        confidence=reply.confidence,
        sources=sources_from_citations(run.tree, reply.sources),
        extra=extra,
    )
