"""Hand-made run directories for tests of summary, compare, gate and report.

``sample(...)`` builds one :class:`~bench.samples.Sample` with plausible figures; ``write_run(...)``
writes ``run.json``, ``samples.jsonl``, ``dropped.jsonl`` (and optionally a torn last line) the way
the runner does, so tests read them back through :func:`bench.rundir.load_run`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from bench.runinfo import DatasetInfo, RunInfo
from bench.samples import Sample
from pageindex.retrievers.result import Source


def sample(
    question_id: str,
    retriever: str = "agent",
    verdict: str | None = "correct",
    *,
    repeat: int = 0,
    status: str | None = None,
    doc_id: str = "DOC_A",
    **fields: Any,
) -> Sample:
    """A sample; ``status`` follows the verdict unless given (refusal -> fail, None -> error)."""
    if status is None:
        status = {"correct": "answer", "incorrect": "answer", "refusal": "fail", None: "error"}[verdict]
    base: dict[str, Any] = {
        "run_id": "run",
        "question_id": question_id,
        "retriever": retriever,
        "repeat": repeat,
        "model": "scripted",
        "status": status,
        "verdict": verdict,
        "evidence_hit": verdict == "correct",
        "question": f"What is the value asked by question {question_id}?",
        "question_type": "metrics-generated",
        "doc_id": doc_id,
        "doc_type": "10k",
        "gold_answer": "$1,577 million",
        "evidence_pages": [12],
        "answer": "$1,577 million" if verdict == "correct" else "I could not find it.",
        "judge": "rules",
        "judge_reasoning": f"rules judge: {verdict}",
        "retriever_prompt_tokens": 1000,
        "retriever_completion_tokens": 100,
        "llm_calls": 2,
        "iterations": 2,
        "turns": 3,
        "tool_calls": 1,
        "latency_s": 1.5,
        "cost_usd": 0.001,
        "sources": [Source(node_id="item_7", title="Item 7. MD&A", page=12, quote="1,577", verified=True)],
        "pages_fetched": [12],
        "trace": [{"kind": "tool_call", "message": "fetch_section item_7", "data": {}, "t": 0.4}],
    }
    base.update(fields)
    return Sample(**base)


def run_info(run_id: str = "run", **fields: Any) -> RunInfo:
    base: dict[str, Any] = {
        "run_id": run_id,
        "command": ["pageindex", "bench", "run"],
        "package_version": "0.1.0",
        # no question count: the gate checks a finished run holds questions x retrievers x repeats
        # samples, and hand-made runs hold any number (a test that wants the check gives questions=N)
        "dataset": DatasetInfo(
            name="handmade", path="/data/handmade", sha256="abc123", content_sha256="c0ffee"
        ),
        "retrievers": ["agent"],
        "model": "scripted",
        "builder_version": "1.0+handmade",
        "judge": "rules",
        "judge_version": "rules-handmade",
        "judge_prompt_version": None,
        "started_at": "2026-01-01T00:00:00Z",
        "ended_at": "2026-01-01T00:10:00Z",
        "status": "finished",
    }
    base.update(fields)
    return RunInfo(**base)


def write_run(
    directory: Path,
    samples: Iterable[Sample],
    *,
    info: RunInfo | None = None,
    dropped: Sequence[dict[str, Any]] = (),
    torn_tail: str | None = None,
    write_summary_file: bool = True,
) -> Path:
    """Write a run directory; ``torn_tail`` appends a partial line as a crash mid-write would."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    info = info or run_info(directory.name)
    samples = [s.model_copy(update={"run_id": info.run_id}) for s in samples]
    (directory / "run.json").write_text(info.model_dump_json(indent=2), encoding="utf-8")
    with (directory / "samples.jsonl").open("w", encoding="utf-8") as fh:
        for s in samples:
            fh.write(s.model_dump_json() + "\n")
        if torn_tail is not None:
            fh.write(torn_tail)
    if dropped:
        import json

        (directory / "dropped.jsonl").write_text(
            "".join(json.dumps(d) + "\n" for d in dropped), encoding="utf-8"
        )
    if write_summary_file:
        from bench.datasets.models import DroppedQuestion
        from bench.rundir import write_summary
        from bench.summary import summarize

        write_summary(directory, summarize(samples, info, [DroppedQuestion(**d) for d in dropped]))
    return directory


def outcomes(
    pattern: str, retriever: str = "agent", prefix: str = "q", docs: int = 4, **fields: Any
) -> list[Sample]:
    """Samples from a compact pattern: ``c`` correct, ``i`` incorrect, ``r`` refusal (fail), ``e`` error.
    Question ``k`` is ``f"{prefix}{k:03d}"`` on document ``DOC_{k % docs}``."""
    code = {"c": "correct", "i": "incorrect", "r": "refusal", "e": None}
    return [
        sample(f"{prefix}{k:03d}", retriever, code[ch], doc_id=f"DOC_{k % docs}", **fields)
        for k, ch in enumerate(pattern)
    ]
