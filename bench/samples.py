"""One scored sample (question x retriever x repeat) as it is written to ``samples.jsonl``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from pageindex.retrievers.result import FailedSearch, Finding, Source, Status

Verdict = Literal["correct", "incorrect", "refusal"]


class Sample(BaseModel):
    run_id: str = ""
    question_id: str
    retriever: str
    repeat: int = 0
    model: str = ""
    status: Status
    verdict: Verdict | None = None  # None for status == "error" (counted apart)
    evidence_hit: bool | None = None  # None when the dataset gives no evidence pages
    question: str = ""
    question_type: str = ""
    doc_id: str = ""
    doc_type: str = ""
    gold_answer: str = ""
    evidence_pages: list[int] = Field(default_factory=list)  # 1-based PDF pages
    answer: str = ""
    reason: str | None = None
    error: str | None = None
    confidence: float | None = None
    sources: list[Source] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)
    failed_searches: list[FailedSearch] = Field(default_factory=list)
    pages_fetched: list[int] = Field(default_factory=list)
    judge: str | None = None  # which judge decided: rules, llm, llm:<model>, panel
    judge_reasoning: str = ""
    retriever_prompt_tokens: int = 0
    retriever_completion_tokens: int = 0
    judge_prompt_tokens: int = 0
    judge_completion_tokens: int = 0
    llm_calls: int = 0
    iterations: int = 0
    turns: int = 0
    tool_calls: int = 0
    latency_s: float = 0.0
    cost_usd: float | None = 0.0  # retriever + judge; None = unknown
    trace: list[dict[str, Any]] = Field(default_factory=list)
    extra: dict[str, Any] = Field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str, int]:
        """What identifies a sample within a run (and pairs samples across runs)."""
        return (self.question_id, self.retriever, self.repeat)

    @property
    def tokens(self) -> int:
        """Retriever tokens (what 'tokens per question' counts)."""
        return self.retriever_prompt_tokens + self.retriever_completion_tokens
