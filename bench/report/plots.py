"""The report's figures, drawn with matplotlib and returned as inline SVG text (no files, no network).

Each series is one retriever + model of one run (``"agent / gpt-4o-mini"``, prefixed by the run id
when several runs are shown). Accuracy error bars are the Wilson 95% intervals of the summary.
"""

from __future__ import annotations

import functools
import io
from collections.abc import Callable, Sequence

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from bench.summary import GroupSummary, Run, samples_frame, summarize_group

# Figures are made with matplotlib's object API (no pyplot, no global backend or state).
STYLE = {"svg.fonttype": "none", "font.size": 9, "axes.spines.top": False, "axes.spines.right": False}


def styled(fn: Callable[..., str]) -> Callable[..., str]:
    @functools.wraps(fn)
    def wrapper(*args, **kwargs) -> str:
        with matplotlib.rc_context(STYLE):
            return fn(*args, **kwargs)

    return wrapper


def to_svg(fig: Figure) -> str:
    """The figure as an ``<svg>`` element (XML prologue removed) and close it."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    text = buf.getvalue()
    return text[text.index("<svg") :]


def series_label(run: Run, group: GroupSummary, several_runs: bool) -> str:
    label = group.group
    return f"{run.run_id}: {label}" if several_runs else label


def _yerr(groups: Sequence[GroupSummary]) -> np.ndarray:
    lows = [(g.accuracy.value - g.accuracy.low) if g.accuracy.value is not None else 0 for g in groups]
    highs = [(g.accuracy.high - g.accuracy.value) if g.accuracy.value is not None else 0 for g in groups]
    return 100 * np.array([lows, highs])


@styled
def accuracy_vs_tokens(runs: Sequence[Run]) -> str:
    """Scatter of accuracy (Wilson 95% CI error bars) against mean tokens per question,
    one point per retriever + model of each run."""
    fig = Figure(figsize=(6.4, 4.2))
    ax = fig.subplots()
    several = len(runs) > 1
    for run in runs:
        for g in run.summary.by_retriever_model:
            if g.accuracy.value is None:
                continue
            x = g.tokens_per_question.mean or 0.0
            ax.errorbar(
                [x],
                [100 * g.accuracy.value],
                yerr=_yerr([g]),
                fmt="o",
                capsize=4,
                markersize=7,
                label=series_label(run, g, several),
            )
    ax.set_xlabel("retriever tokens per question (mean)")
    ax.set_ylabel("accuracy, % (95% CI)")
    ax.set_ylim(0, 105)
    ax.set_xlim(left=0)
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, loc="best", frameon=False)
    ax.set_title("Accuracy against tokens per question")
    return to_svg(fig)


@styled
def accuracy_by(runs: Sequence[Run], field: str) -> str:
    """Grouped bars: accuracy per ``field`` value (question_type or doc_type), one bar per
    retriever + model (of each run), with Wilson 95% error bars."""
    several = len(runs) > 1
    rows = []
    for run in runs:
        frame = samples_frame(run.samples, run.info.model)
        for (rm, value), grp in frame.groupby(["retriever_model", field], sort=True):
            g = summarize_group(grp, field, str(value))
            rows.append(
                {
                    "series": f"{run.run_id}: {rm}" if several else rm,
                    "value": str(value),
                    "acc": 100 * (g.accuracy.value or 0.0),
                    "lo": 100 * ((g.accuracy.value or 0.0) - (g.accuracy.low or 0.0)),
                    "hi": 100 * ((g.accuracy.high or 0.0) - (g.accuracy.value or 0.0)),
                    "n": g.n,
                }
            )
    data = pd.DataFrame(rows, columns=["series", "value", "acc", "lo", "hi", "n"])
    values = sorted(data["value"].unique()) or ["-"]
    series = list(dict.fromkeys(data["series"]))
    fig = Figure(figsize=(max(5.0, 1.3 * len(values) * max(1, len(series)) ** 0.5 + 2), 3.8))
    ax = fig.subplots()
    width = 0.8 / max(1, len(series))
    x = np.arange(len(values))
    for i, s in enumerate(series):
        part = data[data["series"] == s].set_index("value").reindex(values)
        ax.bar(
            x + (i - (len(series) - 1) / 2) * width,
            part["acc"].fillna(0),
            width,
            yerr=[part["lo"].fillna(0), part["hi"].fillna(0)],
            capsize=3,
            label=s,
        )
    ax.set_xticks(x, values, rotation=15 if len(values) > 3 else 0)
    ax.set_ylabel("accuracy, % (95% CI)")
    ax.set_ylim(0, 105)
    ax.grid(axis="y", alpha=0.3)
    if series:
        ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1, 1))
    ax.set_title(f"Accuracy by {field.replace('_', ' ')}")
    return to_svg(fig)


@styled
def effort_distribution(runs: Sequence[Run]) -> str:
    """Box plots of iterations and tool calls per sample, one box per retriever + model (of each run)."""
    several = len(runs) > 1
    labels: list[str] = []
    iterations: list[list[float]] = []
    tool_calls: list[list[float]] = []
    for run in runs:
        frame = samples_frame(run.samples, run.info.model)
        for rm, grp in frame.groupby("retriever_model", sort=True):
            labels.append(f"{run.run_id}: {rm}" if several else str(rm))
            iterations.append(grp["iterations"].astype(float).tolist())
            tool_calls.append(grp["tool_calls"].astype(float).tolist())
    fig = Figure(figsize=(max(6.4, 1.2 * len(labels) * 2 + 2), 3.6))
    axes = fig.subplots(1, 2)
    for ax, data, name in ((axes[0], iterations, "iterations"), (axes[1], tool_calls, "tool calls")):
        if data:
            ax.boxplot(data, tick_labels=labels, showmeans=True)
            ax.tick_params(axis="x", rotation=20 if len(labels) > 2 else 0)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_title(f"{name} per sample")
        ax.grid(axis="y", alpha=0.3)
    return to_svg(fig)
