"""Summaries of a run: per retriever, model, question type and document type.

``summarize(samples, run_info, dropped)`` turns the rows of ``samples.jsonl`` into a :class:`Summary`
(what ``summary.json`` holds); ``print_summary`` shows it as rich tables. Reading and writing run
directories belongs to :mod:`bench.rundir`.

Definitions (one place, used by compare, gate and report too):

- *correct*: ``verdict == "correct"``. Accuracy over all samples counts errors as not correct;
  ``accuracy_no_errors`` leaves samples with ``status == "error"`` out. An ``uncertain`` verdict (a
  judge that abstained) is not correct and is counted in its own column.
- *answered rate*: share of samples whose status is ``answer`` (neither ``fail`` nor ``error``).
- *tokens per question*: retriever prompt + completion tokens of one sample (judge tokens apart).
- *evidence-hit rate*: over samples whose dataset gives evidence pages (``evidence_hit`` not None).
- *cost*: None when any sample in the group has an unknown cost.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, Field

from bench.datasets.models import DroppedQuestion
from bench.runinfo import RunInfo
from bench.samples import Sample, question_unit
from bench.stats import Proportion, accuracy_interval, cluster_bootstrap_interval
from pageindex.wording import counted

log = logging.getLogger(__name__)

GroupBy = Literal["retriever", "model", "question_type", "doc_type", "retriever_model"]
GROUPINGS: tuple[GroupBy, ...] = ("retriever", "model", "question_type", "doc_type", "retriever_model")
NO_VALUE = "-"


def _as_dropped(row: Any) -> DroppedQuestion:
    """A ``dropped.jsonl`` row from the model itself or a plain dict (hand-made runs)."""
    return (
        row
        if isinstance(row, DroppedQuestion)
        else DroppedQuestion.model_validate(
            row.model_dump(mode="json") if isinstance(row, BaseModel) else dict(row)
        )
    )


class Stat(BaseModel):
    """Mean, median and 90th percentile of a per-sample figure (None when there are no samples)."""

    mean: float | None = None
    median: float | None = None
    p90: float | None = None

    @classmethod
    def of(cls, values: Iterable[float]) -> Stat:
        arr = np.asarray([v for v in values if v is not None and not pd.isna(v)], dtype=float)
        if arr.size == 0:
            return cls()
        return cls(mean=float(arr.mean()), median=float(np.median(arr)), p90=float(np.percentile(arr, 90)))


class RepeatAgreement(BaseModel):
    """How often repeats of the same question (same retriever and model) got the same verdict."""

    questions: int  # questions with two or more repeats
    unanimous: int  # of those, all repeats agree
    unanimous_rate: float | None
    mean_pairwise: float | None  # share of agreeing repeat pairs, averaged over questions
    unstable: list[str] = Field(default_factory=list)  # question ids whose verdicts differ


class GroupSummary(BaseModel):
    by: str  # overall | retriever | model | question_type | doc_type | retriever_model
    group: str  # the value, e.g. "agent" or "agent / gpt-4o-mini"
    keys: dict[str, str] = Field(default_factory=dict)
    n: int
    questions: int
    correct: int
    incorrect: int
    refusals: int
    uncertain: int = 0  # verdicts a judge left undecided (rules --abstain); not correct
    unjudged: int = 0  # answers whose judge call failed (no verdict; not correct): bench rejudge RUN
    failed: int
    errored: int
    dropped: int
    accuracy: Proportion  # over all samples (errors count as not correct), Wilson 95%
    accuracy_no_errors: Proportion  # over samples without errors, Wilson 95%
    accuracy_by_doc: Proportion  # bootstrap clustered by document (Wilson when one document)
    answered_rate: float | None
    evidence_hit_rate: float | None
    evidence_n: int  # samples with evidence pages
    tokens_per_question: Stat
    judge_tokens_per_question: Stat
    llm_calls: Stat
    iterations: Stat
    tool_calls: Stat
    latency_s: Stat
    cost_usd: float | None  # total; None = unknown
    cost_per_question: float | None
    repeat_agreement: RepeatAgreement | None = None


class Summary(BaseModel):
    run_id: str
    status: str = ""
    status_detail: str | None = None  # why a run that is not finished stopped (run.json's)
    dataset: str = ""
    dataset_sha256: str = ""
    model: str | None = None
    judge: str = ""
    judge_model: str | None = None
    judge_prompt_version: str | None = None
    n_samples: int
    n_dropped: int
    dropped_reasons: dict[str, int] = Field(default_factory=dict)
    overall: GroupSummary
    by_retriever: list[GroupSummary] = Field(default_factory=list)
    by_model: list[GroupSummary] = Field(default_factory=list)
    by_question_type: list[GroupSummary] = Field(default_factory=list)
    by_doc_type: list[GroupSummary] = Field(default_factory=list)
    by_retriever_model: list[GroupSummary] = Field(default_factory=list)

    def groups(self, by: GroupBy) -> list[GroupSummary]:
        return list(getattr(self, f"by_{by}"))

    def group(self, by: GroupBy, value: str) -> GroupSummary | None:
        return next((g for g in self.groups(by) if g.group == value), None)


# ----------------------------------------------------------------------------- frame
_EMPTY_COLUMNS = (
    "question_id retriever repeat model status verdict correct evidence_hit question_type doc_id doc_type "
    "tokens judge_tokens llm_calls iterations tool_calls latency_s cost_usd"
).split()


def samples_frame(samples: Sequence[Sample], default_model: str | None = None) -> pd.DataFrame:
    """One row per sample with the columns summaries are computed from."""
    rows = [
        {
            "question_id": s.question_id,
            "retriever": s.retriever,
            "repeat": s.repeat,
            "model": s.model or default_model or NO_VALUE,
            "status": s.status,
            "verdict": s.verdict,
            "correct": s.verdict == "correct",
            "evidence_hit": s.evidence_hit,
            "question_type": s.question_type or NO_VALUE,
            "doc_id": s.doc_id or NO_VALUE,
            "doc_type": s.doc_type or NO_VALUE,
            "tokens": s.tokens,
            "judge_tokens": s.judge_prompt_tokens + s.judge_completion_tokens,
            "llm_calls": s.llm_calls,
            "iterations": s.iterations,
            "tool_calls": s.tool_calls,
            "latency_s": s.latency_s,
            "cost_usd": s.cost_usd,
        }
        for s in samples
    ]
    frame = pd.DataFrame(rows, columns=list(_EMPTY_COLUMNS))
    frame["retriever_model"] = frame["retriever"].where(
        frame["model"] == NO_VALUE, frame["retriever"] + " / " + frame["model"]
    )
    return frame


# ----------------------------------------------------------------------------- summarize
def _repeat_agreement(frame: pd.DataFrame) -> RepeatAgreement | None:
    """How often the repeats of a question (one retriever and model) agree. Counted in one pass over
    the rows, in plain Python: a pandas groupby with a Series per question took about 1 ms a question,
    14 times over for the groupings of a summary (15 s for `bench summary` of 8,000 samples)."""
    if frame.empty or frame["repeat"].nunique() < 2:
        return None
    verdicts_of: dict[tuple[str, str, str], Counter[str]] = {}
    keys = zip(frame["question_id"], frame["retriever"], frame["model"], strict=True)
    for key, verdict in zip(keys, frame["verdict"], strict=True):
        verdicts_of.setdefault(key, Counter())[verdict if isinstance(verdict, str) else "error"] += 1
    questions = unanimous = 0
    pairwise: list[float] = []
    unstable: dict[str, None] = {}  # in question order, each once
    for (qid, _r, _m), counts in sorted(verdicts_of.items()):
        k = sum(counts.values())
        if k < 2:
            continue
        questions += 1
        pairwise.append(sum(c * (c - 1) for c in counts.values()) / (k * (k - 1)))
        if len(counts) == 1:
            unanimous += 1
        else:
            unstable[str(qid)] = None
    if questions == 0:
        return None
    return RepeatAgreement(
        questions=questions,
        unanimous=unanimous,
        unanimous_rate=unanimous / questions,
        mean_pairwise=float(np.mean(pairwise)),
        unstable=list(unstable),
    )


def _accuracy_interval(frame: pd.DataFrame) -> Proportion:
    """:func:`bench.stats.accuracy_interval` with a question run by one retriever as the unit."""
    units = [question_unit(q, r) for q, r in zip(frame["question_id"], frame["retriever"], strict=True)]
    return accuracy_interval(frame["correct"].astype(float).tolist(), units)


def summarize_group(
    frame: pd.DataFrame, by: str, group: str, keys: dict[str, str] | None = None, dropped: int = 0
) -> GroupSummary:
    """Figures of one group of samples (rows of :func:`samples_frame`)."""
    n = len(frame)
    correct = int(frame["correct"].sum())
    errored = int((frame["status"] == "error").sum())
    no_err = frame[frame["status"] != "error"]
    evidence = frame["evidence_hit"].dropna()
    costs = frame["cost_usd"]
    cost_known = n > 0 and not costs.isna().any()
    total_cost = float(costs.sum()) if cost_known else None
    return GroupSummary(
        by=by,
        group=group,
        keys=keys or {},
        n=n,
        questions=int(frame["question_id"].nunique()),
        correct=correct,
        incorrect=int((frame["verdict"] == "incorrect").sum()),
        refusals=int((frame["verdict"] == "refusal").sum()),
        uncertain=int((frame["verdict"] == "uncertain").sum()),
        unjudged=int(((frame["status"] == "answer") & frame["verdict"].isna()).sum()),
        failed=int((frame["status"] == "fail").sum()),
        errored=errored,
        dropped=dropped,
        accuracy=_accuracy_interval(frame),
        accuracy_no_errors=_accuracy_interval(no_err),
        accuracy_by_doc=cluster_bootstrap_interval(
            frame["correct"].astype(float).tolist(), frame["doc_id"].tolist()
        ),
        answered_rate=float((frame["status"] == "answer").mean()) if n else None,
        evidence_hit_rate=float(evidence.astype(bool).mean()) if len(evidence) else None,
        evidence_n=len(evidence),
        tokens_per_question=Stat.of(frame["tokens"]),
        judge_tokens_per_question=Stat.of(frame["judge_tokens"]),
        llm_calls=Stat.of(frame["llm_calls"]),
        iterations=Stat.of(frame["iterations"]),
        tool_calls=Stat.of(frame["tool_calls"]),
        latency_s=Stat.of(frame["latency_s"]),
        cost_usd=total_cost,
        cost_per_question=total_cost / n if total_cost is not None and n else None,
        repeat_agreement=_repeat_agreement(frame),
    )


def _dropped_in(dropped: Sequence[DroppedQuestion], by: str, value: str) -> int:
    """Dropped questions count against every retriever and model; by question or document type only
    when the dropped row names its type."""
    if by in ("question_type", "doc_type"):
        return sum(1 for d in dropped if (getattr(d, by) or NO_VALUE) == value)
    return len(dropped)


def group_summaries(
    frame: pd.DataFrame, by: GroupBy, dropped: Sequence[DroppedQuestion] = ()
) -> list[GroupSummary]:
    out: list[GroupSummary] = []
    if frame.empty:
        return out
    for value, grp in frame.groupby(by, sort=True):
        keys = {by: str(value)}
        if by == "retriever_model":
            keys = {"retriever": str(grp["retriever"].iloc[0]), "model": str(grp["model"].iloc[0])}
        out.append(summarize_group(grp, by, str(value), keys, _dropped_in(dropped, by, str(value))))
    return out


def summarize(samples: Sequence[Sample], run_info: RunInfo, dropped: Sequence[Any] = ()) -> Summary:
    """The :class:`Summary` of a run (what ``summary.json`` holds)."""
    frame = samples_frame(samples, default_model=run_info.model)
    dropped = [_as_dropped(d) for d in dropped]
    reasons: dict[str, int] = {}
    for d in dropped:
        key = d.reason.split(":", 1)[0].strip() or d.reason
        reasons[key] = reasons.get(key, 0) + 1
    return Summary(
        run_id=run_info.run_id,
        status=run_info.status,
        status_detail=run_info.status_detail,
        dataset=run_info.dataset.name,
        dataset_sha256=run_info.dataset.sha256,
        model=run_info.model,
        judge=run_info.judge,
        judge_model=run_info.judge_model,
        judge_prompt_version=run_info.judge_prompt_version,
        n_samples=len(frame),
        n_dropped=len(dropped),
        dropped_reasons=reasons,
        overall=summarize_group(frame, "overall", "all", {}, len(dropped)),
        **{f"by_{by}": group_summaries(frame, by, dropped) for by in GROUPINGS},
    )


# ----------------------------------------------------------------------------- tables
def _num(x: float | None, digits: int = 1) -> str:
    return NO_VALUE if x is None else f"{x:,.{digits}f}"


def _pct(x: float | None) -> str:
    return NO_VALUE if x is None else f"{100 * x:.1f}%"


def ci_text(p: Proportion) -> str:
    """``'38.9% [20.3, 61.4]'``: a proportion with its 95% interval (``-`` when undefined)."""
    if p.value is None:
        return NO_VALUE
    return f"{100 * p.value:.1f}% [{100 * p.low:.1f}, {100 * p.high:.1f}]"


def _cost(x: float | None) -> str:
    return "unknown" if x is None else f"${x:,.4f}"


def summary_rows(groups: Sequence[GroupSummary]) -> list[dict[str, Any]]:
    """Display rows (strings) for a table of groups: shared by the console, HTML and Markdown output."""
    rows = []
    show_uncertain = any(g.uncertain for g in groups)
    show_unjudged = any(g.unjudged for g in groups)
    for g in groups:
        rows.append(
            {
                g.by if g.by != "overall" else "group": g.group,
                "n": str(g.n),
                "accuracy (95% CI)": ci_text(g.accuracy),
                "acc. w/o errors": ci_text(g.accuracy_no_errors),
                **({"uncertain": str(g.uncertain)} if show_uncertain else {}),
                **({"unjudged": str(g.unjudged)} if show_unjudged else {}),
                "answered": _pct(g.answered_rate),
                "tokens/q mean": _num(g.tokens_per_question.mean, 0),
                "median": _num(g.tokens_per_question.median, 0),
                "p90": _num(g.tokens_per_question.p90, 0),
                "LLM calls": _num(g.llm_calls.mean),
                "iterations": _num(g.iterations.mean),
                "tool calls": _num(g.tool_calls.mean),
                "latency s": _num(g.latency_s.mean, 2),
                "cost total": _cost(g.cost_usd),  # the group's, beside per-question means
                "evidence hit": _pct(g.evidence_hit_rate),
                "dropped/failed/errored": f"{g.dropped}/{g.failed}/{g.errored}",
                **(
                    {"repeat agreement": _pct(g.repeat_agreement.unanimous_rate)}
                    if g.repeat_agreement is not None
                    else {}
                ),
            }
        )
    return rows


def summary_table_frame(groups: Sequence[GroupSummary]) -> pd.DataFrame:
    return pd.DataFrame(summary_rows(groups)).fillna(NO_VALUE)


def unjudged_warning(summary: Summary, rejudge: str | None = None) -> str | None:
    """What the summary and the report say of answers without a verdict (their judge call failed),
    with the command that judges them (``rejudge``: :func:`bench.runinfo.rejudge_command`); None when
    every answer has one."""
    if not (unjudged := summary.overall.unjudged):
        return None
    again = rejudge or f"pageindex bench rejudge RUN --judge {summary.judge} -o NEW_RUN"
    return (
        f"{counted(unjudged, 'answer')} without a verdict (a failed judge call) "
        f"{'counts' if unjudged == 1 else 'count'} as not correct; "
        f"judge them again with: {again}"
    )


def print_summary(
    summary: Summary,
    console: Any = None,
    by: Sequence[GroupBy] = GROUPINGS,
    *,
    rejudge: str | None = None,
    unfinished: str | None = None,
) -> None:
    """Print the summary as rich tables, one per grouping that has more than one group
    (the per-retriever table always). ``rejudge`` is the run's own rejudge command
    (:func:`bench.runinfo.rejudge_command`), said when answers have no verdict; ``unfinished`` what
    :meth:`bench.rundir.Run.unfinished_note` says of a run that did not finish."""
    from rich import box
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = console or Console()
    head = (
        f"[bold]{escape(summary.run_id)}[/]  status={summary.status}  "
        f"dataset={escape(summary.dataset or NO_VALUE)}  "
        f"judge={escape(summary.judge)}{'/' + escape(summary.judge_model) if summary.judge_model else ''}  "
        f"samples={summary.n_samples}  dropped={summary.n_dropped}"
    )
    console.print(head, highlight=False)
    if unfinished:
        console.print(f"note: {unfinished}", highlight=False, markup=False)
    if summary.status_detail:
        console.print(f"{summary.status}: {summary.status_detail}", highlight=False, markup=False)
    if summary.dropped_reasons:
        reasons = ", ".join(f"{k}: {v}" for k, v in sorted(summary.dropped_reasons.items()))
        console.print(f"dropped questions by reason: {reasons}", highlight=False, markup=False)
    if unjudged := unjudged_warning(summary, rejudge):
        console.print(f"warning: {unjudged}", highlight=False, markup=False)
    for grouping in by:
        groups = summary.groups(grouping)
        if not groups or (grouping != "retriever" and len(groups) < 2):
            continue
        frame = summary_table_frame(groups)
        # A terminal gets tables that fit its width; a log or pipe gets each table whole, as wide
        # as it needs (nothing split into panels, nothing cut).
        wide = not console.is_terminal
        chunks = [list(frame.columns)] if wide else _column_chunks(frame, console.width)
        for k, cols in enumerate(chunks):
            title = f"by {grouping.replace('_', ' ')}" + (
                f" ({k + 1}/{len(chunks)})" if len(chunks) > 1 else ""
            )
            table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAVY, pad_edge=False)
            for i, col in enumerate(cols):
                table.add_column(col, justify="left" if i == 0 else "right", no_wrap=True)
            for row in frame[cols].itertuples(index=False):
                table.add_row(*[escape(str(v)) for v in row])
            print_whole(console, table) if wide else console.print(table)


def print_whole(console: Any, renderable: Any) -> None:
    """Print ``renderable`` at its natural width whatever the console's width (a log or a pipe:
    rich would otherwise crop or wrap to 80 columns), with no trailing blanks on any line."""
    from rich.measure import Measurement

    need = Measurement.get(console, console.options.update_width(100_000), renderable).maximum
    before = console._width  # None: the width is read when printing; restoring ``console.width`` fixed it
    console.width = need
    try:
        with console.capture() as captured:
            console.print(renderable)
        # titles are padded to the full width: drop trailing blanks so logs carry none
        text = "\n".join(line.rstrip() for line in captured.get().splitlines())
        console.print(text, markup=False, highlight=False, soft_wrap=True, emoji=False)
    finally:
        console._width = before


def _column_chunks(frame: pd.DataFrame, width: int) -> list[list[str]]:
    """Split the columns into tables that fit ``width``; each starts with the group column."""
    cols = list(frame.columns)
    need = {c: max([len(str(c)), *(len(str(v)) for v in frame[c])]) + 3 for c in cols}
    first, rest = cols[0], cols[1:]
    chunks: list[list[str]] = []
    current, used = [first], need[first]
    for c in rest:
        if used + need[c] > width and len(current) > 1:
            chunks.append(current)
            current, used = [first], need[first]
        current.append(c)
        used += need[c]
    chunks.append(current)
    return chunks
