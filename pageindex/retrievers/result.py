"""What every retriever returns: :class:`RetrievalResult` and its parts."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

Status = Literal["answer", "fail", "error"]


class Source(BaseModel):
    """A page the answer rests on."""

    node_id: str
    title: str = ""
    page: int  # 1-based PDF page
    page_label: str | None = None  # printed page number, where the filing prints one
    doc_id: str | None = None  # set when several documents are open at once
    quote: str | None = None  # value or phrase the answer takes from this page
    verified: bool | None = None  # quote found on the page? None when there is no quote


class Finding(BaseModel):
    """A structured fact extracted from a page (iterative retriever and friends)."""

    label: str
    value: str
    unit: str | None = None
    page: int
    section: str = ""  # node_id
    context: str = ""
    doc_id: str | None = None
    verified: bool | None = None


class FailedSearch(BaseModel):
    item: str
    reason: str
    tried: list[str] = Field(default_factory=list)  # node_ids or queries tried


class TraceEvent(BaseModel):
    """One readable step: a model call, a tool call or a decision."""

    kind: Literal["model_call", "tool_call", "decision", "error", "info"]
    message: str
    data: dict[str, Any] = Field(default_factory=dict)
    t: float = 0.0  # seconds since the retrieval started


class RoleUsage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    calls: int = 0


class ResultUsage(BaseModel):
    """Usage of one retrieval, by role."""

    by_role: dict[str, RoleUsage] = Field(default_factory=dict)
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cost_usd: float | None = 0.0  # None = unknown

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class RetrievalResult(BaseModel):
    retriever: str
    query: str
    status: Status
    answer: str = ""
    reason: str | None = None  # why it failed (status == "fail")
    error: str | None = None  # what went wrong (status == "error")
    error_kind: str | None = None  # machine-readable kind of error: budget, timeout, invalid_output, ...
    confidence: float | None = None
    sources: list[Source] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)
    failed_searches: list[FailedSearch] = Field(default_factory=list)
    iterations: int = 0
    turns: int = 0
    tool_calls: int = 0
    pages_fetched: list[int] = Field(default_factory=list)  # every PDF page shown to a model
    usage: ResultUsage = Field(default_factory=ResultUsage)
    latency_s: float = 0.0
    prompt_version: str = ""
    options: dict[str, Any] = Field(default_factory=dict)
    trace: list[TraceEvent] = Field(default_factory=list)
    extra: dict[str, Any] = Field(default_factory=dict)  # retriever-specific records

    @property
    def answered(self) -> bool:
        return self.status == "answer"
