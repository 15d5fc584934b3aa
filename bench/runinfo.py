"""``run.json``: everything needed to reproduce a run, and its final state."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

RunStatus = Literal["running", "finished", "aborted_due_to_budget", "interrupted", "failed"]


class DatasetInfo(BaseModel):
    name: str = ""  # financebench, demo, ...
    path: str = ""
    sha256: str = ""  # hash of the questions and documents files
    questions: int = 0  # questions kept after validation
    dropped: int = 0


class RunInfo(BaseModel):
    run_id: str
    command: list[str] = Field(default_factory=list)
    package_version: str = ""
    git_commit: str | None = None
    dataset: DatasetInfo = Field(default_factory=DatasetInfo)
    retrievers: list[str] = Field(default_factory=list)
    retriever_options: dict[str, dict[str, Any]] = Field(default_factory=dict)
    prompt_versions: dict[str, str] = Field(default_factory=dict)  # retriever or judge -> version
    model: str | None = None  # answering model spec
    judge: str = "rules"  # llm | rules | hybrid | panel
    judge_model: str | None = None
    judge_prompt_version: str | None = None
    base_urls: dict[str, str] = Field(default_factory=dict)  # role -> URL; never keys
    repeats: int = 1
    concurrency: int = 1
    budget: dict[str, float] | None = None
    cache_mode: str = "off"
    started_at: str = ""
    ended_at: str | None = None
    status: RunStatus = "running"
    skipped_retrievers: dict[str, str] = Field(default_factory=dict)  # name -> why
    extra: dict[str, Any] = Field(default_factory=dict)
