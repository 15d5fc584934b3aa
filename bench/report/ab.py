"""Tables shared by the HTML and Markdown reports: the combined summary (runs x retrievers) and the
A-vs-B comparison of each later run against the first on the samples they share, with the exact McNemar
test (p) and a paired bootstrap resampling whole documents (the CI of the difference). The figures come
from :func:`bench.compare.compare_runs` and :func:`bench.summary.summary_rows`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from bench.compare import (
    Comparison,
    NoSharedSamples,
    comparability,
    compare_runs,
    diff_interval,
    run_differences,
    signed,
    unfinished_warning,
)
from bench.rundir import Run
from bench.runinfo import rejudge_command, spend_notes, stored_config
from bench.samples import over_error_rate
from bench.summary import NO_VALUE, GroupSummary, ci_text, summary_rows, unjudged_warning

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
# the summary's columns the combined table keeps: with the failed and errored counts (an answered share
# of 0% said nothing of whether the model gave up or the server timed out) and tool calls beside the
# iterations (the agent's work is in tool calls: its iterations read 0.0, as if it had done nothing)
SUMMARY_COLUMNS = {
    "n": "n",
    "accuracy (95% CI)": "accuracy (95% CI)",
    "answered": "answered",
    "tokens/q mean": "tokens/q (mean)",
    "iterations": "iterations (mean)",
    "tool calls": "tool calls (mean)",
    "cost total": "cost (total)",
    "evidence hit": "evidence hit",
    "dropped/failed/errored": "dropped / failed / errored",
}


class ABSection(BaseModel):
    """One later run compared with the first: McNemar (p) and paired bootstrap (CI of the difference)."""

    mcnemar: Comparison
    bootstrap: Comparison


def report_warnings(runs: Sequence[Run]) -> list[str]:
    """What the report says to read with care, once each: how each later run differs from the first
    (:func:`bench.compare.run_differences`, as ``bench compare`` says it), each run's load warnings,
    answers without a verdict (counted as not correct: ``bench summary`` and ``bench compare`` warn of
    them with the command that judges them), what a run spent beside its samples' figures (calls of
    samples a stop cut, calls the cache answered: ``bench summary`` says them too) and retrievers a run
    skipped. A run written before provenance was recorded is said to be compared unchecked, as ``bench
    compare`` and ``bench gate`` say it (a report of an old baseline showed its accuracy beside today's
    with no word that its judge and tree builder versions could not be checked)."""
    items = [
        w
        for other in runs[1:]
        for w in [*comparability(runs[0], other).unrecorded, *run_differences(runs[0], other)]
    ]
    for run in runs:
        # a report of one run said nothing of its being unfinished (only a pair's differences did)
        items += [w for w in [unfinished_warning(run)] if w]
        # nor of a finished run's exit 4 (too many errors), which its record lets us say again
        rate = stored_config(run.info).get("max_error_rate") if run.info.status == "finished" else None
        if too_many := over_error_rate(run.samples, rate):
            items.append(f"{run.run_id}: {too_many}")
        items += [f"{run.run_id}: {w}" for w in run.warnings]
        if unjudged := unjudged_warning(run.summary, rejudge_command(run.path, run.info)):
            items.append(f"{run.run_id}: {unjudged}")
        spent = spend_notes(run.info.unrecorded_usage, run.info.sent_usage, run.info.cached_usage)
        items += [f"{run.run_id}: {note}" for note in spent]
        items += [f"{run.run_id}: skipped {k}: {v}" for k, v in run.info.skipped_retrievers.items()]
    return list(dict.fromkeys(items))


def letters_of(runs: Sequence[Run]) -> dict[str, str]:
    """A, B, C ... for the runs in the order given (A is the baseline)."""
    return {r.run_id: LETTERS[i % 26] + ("" if i < 26 else str(i // 26)) for i, r in enumerate(runs)}


def comparisons(runs: Sequence[Run]) -> list[ABSection | str]:
    """Each later run against the first (a message instead where they share no samples)."""
    out: list[ABSection | str] = []
    for b in runs[1:]:
        try:
            out.append(
                ABSection(
                    mcnemar=compare_runs(runs[0], b, by="retriever", method="mcnemar"),
                    bootstrap=compare_runs(runs[0], b, by="retriever", method="bootstrap"),
                )
            )
        except NoSharedSamples as exc:
            out.append(str(exc))
    return out


def ab_rows(item: ABSection, la: str, lb: str) -> list[dict[str, Any]]:
    """Display rows: one per retriever and one for all shared samples."""
    m, b = item.mcnemar, item.bootstrap
    boot = {g.group: g for g in b.groups} | {"ALL": b.overall}
    rows = []
    for g in [*m.groups, m.overall]:
        name = "ALL" if g is m.overall else g.group
        rows.append(
            {
                "retriever": name,
                "pairs": g.n_pairs,
                f"{la}: {m.run_a}": ci_text(g.accuracy_a),
                f"{lb}: {m.run_b}": ci_text(g.accuracy_b),
                f"difference {lb} − {la}": signed(g.diff, pct=True),
                # no interval from under two documents (the bootstrap resamples documents)
                "95% CI (paired bootstrap)": diff_interval(boot[name].test),
                "McNemar p": f"{g.test.p_value:.3g}",
                f"only {lb} correct / only {la} correct": f"{len(g.improved)} / {len(g.regressed)}",
            }
        )
    return rows


def combined_rows(runs: Sequence[Run], by: str = "retriever_model") -> list[dict[str, Any]]:
    """One display row per run x group (``retriever_model``, ``question_type`` or ``doc_type``)."""
    every: list[tuple[Run, GroupSummary]] = []
    for run in runs:
        # a run without samples has no group: one row says so (it said "all", n 0)
        none = run.summary.overall.model_copy(update={"group": "(no samples)"})
        groups: list[GroupSummary] = run.summary.groups(by) or [none]  # type: ignore[arg-type]
        every += [(run, g) for g in groups]
    # the uncertain and unjudged columns of summary_rows, where any run has such answers (trial 14: the
    # report's tables had no uncertain column while the summary's did)
    shown = summary_rows([g for _, g in every])
    columns: dict[str, str] = {}
    for old, new in SUMMARY_COLUMNS.items():
        columns[old] = new
        if old == "accuracy (95% CI)":  # where summary_rows puts them: after the accuracy
            columns |= {c: c for c in ("uncertain", "unjudged") if shown and c in shown[0]}
    label = "retriever / model" if by == "retriever_model" else by.replace("_", " ")
    rows = []
    for (run, g), row in zip(every, shown, strict=True):
        out: dict[str, Any] = {"run": run.run_id, label: g.group}
        out.update({new: row.get(old, NO_VALUE) for old, new in columns.items()})
        rows.append(out)
    return rows
