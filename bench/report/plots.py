"""The report's figures, drawn with matplotlib and returned as inline SVG text (no files, no network).

Each series is one retriever + model of one run (``"agent / gpt-4o-mini"``, prefixed by the run id
when several runs are shown) and keeps its colour in every figure. Axes are scaled to the data with
a margin (nothing sits half outside the plot), legends sit outside the plotting area, and
distributions of small integers (iterations, tool calls, repeats correct) are drawn as histograms.
Accuracy error bars are the 95% intervals of the summary.
"""

from __future__ import annotations

import functools
import io
import re
from collections.abc import Callable, Sequence

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator, PercentFormatter

from bench.rundir import Run
from bench.summary import samples_frame, summarize_group

# Figures are made with matplotlib's object API (no pyplot, no global backend or state).
STYLE = {"svg.fonttype": "none", "font.size": 9, "axes.spines.top": False, "axes.spines.right": False}
PALETTE = matplotlib.colormaps["tab10"].colors
# a series past the palette's 10 colours takes its colour again with another marker (points), hatch
# (bars) or line style (step histograms): with 11 or more series (two runs of 7 retrievers) two series
# were drawn alike, and the legend could not tell them apart
MARKERS = ("o", "s", "^", "D", "v", "P", "X")
HATCHES = ("", "//", "..", "xx", "\\\\", "++", "--")
LINESTYLES = ("-", "--", ":", "-.")
MAX_INTEGER_BINS = 25  # more distinct values than this: ordinary bins
_DECIMALS = re.compile(r"(\d\.\d\d)\d+")


def styled(fn: Callable[..., str | None]) -> Callable[..., str | None]:
    @functools.wraps(fn)
    def wrapper(*args, **kwargs) -> str | None:
        with matplotlib.rc_context(STYLE):
            return fn(*args, **kwargs)

    return wrapper


def to_svg(fig: Figure) -> str:
    """The figure as an ``<svg>`` element (XML prologue removed) and close it."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buf.getvalue()
    text = text[text.index("<svg") :]
    # smaller, same picture: no metadata, one short font list, no null rotations, no indentation
    text = re.sub(r"<metadata>.*?</metadata>\s*", "", text, flags=re.S)
    text = re.sub(r"font-family: [^;\"]*", "font-family: system-ui, sans-serif", text)
    text = re.sub(r' transform="rotate\(-?0 [\d. -]+\)"', "", text)
    text = re.sub(r"\n\s+", "\n", text)
    return _DECIMALS.sub(r"\1", text)


def series_frames(runs: Sequence[Run]) -> list[tuple[str, pd.DataFrame]]:
    """(label, samples frame) per retriever + model of each run, in a stable order (colour index)."""
    several = len(runs) > 1
    out = []
    for run in runs:
        frame = samples_frame(run.samples, run.info.model)
        for rm, grp in frame.groupby("retriever_model", sort=True):
            out.append((f"{run.run_id}: {rm}" if several else str(rm), grp))
    return out


def _colour(i: int) -> tuple[float, float, float]:
    return PALETTE[i % len(PALETTE)]


def _round(i: int, styles: Sequence[str]) -> str:
    """The style of series ``i`` among ``styles``: the first for the first 10 series (one colour each),
    the next for the 10 after them, and so on."""
    return styles[(i // len(PALETTE)) % len(styles)]


def padded(
    lo: float, hi: float, frac: float = 0.08, minimum: float = 1.0, floor: float | None = None
) -> tuple[float, float]:
    """Axis limits around data from ``lo`` to ``hi`` with a margin on both sides. A range shorter
    than ``minimum`` is widened around its middle, but not below ``floor`` (a count is never
    negative: tokens of runs that spent none were drawn from -0.4 to 0.4)."""
    span = max(hi - lo, minimum)
    pad = frac * span
    if hi - lo < minimum:
        start = (hi + lo) / 2 - span / 2
        if floor is not None and lo >= floor:
            start = max(start, floor)
        return start - pad, start + span + pad
    return lo - pad, hi + pad


def _percent_axis(axis) -> None:
    """Whole percentages at ticks of 1, 2 or 5 times a power of ten: the default also steps by 2.5,
    whose ticks printed without decimals read 8%, 10%, 12%, 15%, 18% (7.5 as 8, 12.5 as 12)."""
    axis.set_major_locator(MaxNLocator(steps=[1, 2, 5, 10]))
    axis.set_major_formatter(PercentFormatter(decimals=0))


def _legend_outside(ax: Axes) -> None:
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0)


def pareto_front(points: Sequence[tuple[float, float]]) -> list[int]:
    """Indices of the points no other point beats (fewer or equal tokens and higher accuracy, or
    fewer tokens and equal accuracy), ordered by tokens."""
    order = sorted(range(len(points)), key=lambda i: (points[i][0], -points[i][1]))
    front: list[int] = []
    best = -np.inf
    for i in order:
        if points[i][1] > best:
            front.append(i)
            best = points[i][1]
    return front


@styled
def accuracy_vs_tokens(runs: Sequence[Run]) -> str | None:
    """Accuracy (95% CI) against mean retriever tokens per question, one point per retriever
    + model of each run; the Pareto front (no point is both cheaper and more accurate) is joined.
    None when no run has a sample (an empty plot with made-up axes says nothing)."""
    if not any(run.samples for run in runs):
        return None
    fig = Figure(figsize=(6.4, 3.8))
    ax = fig.subplots()
    points: list[tuple[float, float]] = []
    lows: list[float] = []
    highs: list[float] = []
    labels: list[str] = []
    for i, (label, grp) in enumerate(series_frames(runs)):
        g = summarize_group(grp, "retriever_model", label)
        if g.accuracy.value is None:
            continue
        x, y = g.tokens_per_question.mean or 0.0, 100 * g.accuracy.value
        lo, hi = 100 * (g.accuracy.low or 0.0), 100 * (g.accuracy.high or 0.0)
        ax.errorbar(
            [x], [y], yerr=[[y - lo], [hi - y]], fmt=_round(i, MARKERS), capsize=4, markersize=7,
            color=_colour(i), label=label, clip_on=False,
        )  # fmt: skip
        points.append((x, y))
        lows.append(lo)
        highs.append(hi)
        labels.append(label)
    if points:
        front = pareto_front(points)
        fx, fy = [points[i][0] for i in front], [points[i][1] for i in front]
        ax.plot(fx, fy, "--", color="#555", lw=1, zorder=0, label="Pareto front")
        ax.scatter(fx, fy, s=180, facecolors="none", edgecolors="#555", lw=1, zorder=3)
        xs = [p[0] for p in points]
        ax.set_xlim(*padded(min(xs), max(xs), minimum=max(1.0, 0.2 * max(xs)), floor=0.0))
        ax.set_ylim(*padded(min(lows), max(highs), minimum=5.0))
    ax.set_xlabel("retriever tokens per question (mean)")
    ax.set_ylabel("accuracy, % (95% CI)")
    _percent_axis(ax.yaxis)
    ax.grid(alpha=0.3)
    _legend_outside(ax)
    ax.set_title("Accuracy against tokens per question (circled: Pareto front)")
    return to_svg(fig)


@styled
def accuracy_by(runs: Sequence[Run], field: str) -> str | None:
    """Accuracy per ``field`` value (question_type or doc_type) with 95% intervals: one row
    per value, one dot and interval per retriever + model (of each run). None without samples."""
    if not any(run.samples for run in runs):
        return None
    rows = []
    for i, (label, frame) in enumerate(series_frames(runs)):
        for value, grp in frame.groupby(field, sort=True):
            g = summarize_group(grp, field, str(value))
            if g.accuracy.value is None:
                continue
            rows.append(
                {
                    "series": label,
                    "colour": i,
                    "value": str(value),
                    "acc": 100 * g.accuracy.value,
                    "lo": 100 * (g.accuracy.low or 0.0),
                    "hi": 100 * (g.accuracy.high or 0.0),
                    "n": g.n,
                }
            )
    data = pd.DataFrame(rows, columns=["series", "colour", "value", "acc", "lo", "hi", "n"])
    values = sorted(data["value"].unique(), reverse=True) or ["-"]
    series = list(dict.fromkeys(data["series"]))
    fig = Figure(figsize=(6.4, max(2.2, 0.35 * len(values) * max(1, len(series)) ** 0.6 + 1.2)))
    ax = fig.subplots()
    step = 0.7 / max(1, len(series))
    for k, s in enumerate(series):
        part = data[data["series"] == s]
        ys = [values.index(v) - (k - (len(series) - 1) / 2) * step for v in part["value"]]  # legend order
        i = int(part["colour"].iloc[0])
        ax.errorbar(
            part["acc"], ys, xerr=[part["acc"] - part["lo"], part["hi"] - part["acc"]],
            fmt=_round(i, MARKERS), capsize=3, markersize=5, color=_colour(i), label=s, clip_on=False,
        )  # fmt: skip
    ax.set_yticks(range(len(values)), values)
    ax.set_ylim(-0.6, len(values) - 0.4)
    if not data.empty:
        ax.set_xlim(*padded(float(data["lo"].min()), float(data["hi"].max()), minimum=5.0))
    _percent_axis(ax.xaxis)
    ax.set_xlabel("accuracy, % (95% CI)")
    ax.grid(axis="x", alpha=0.3)
    _legend_outside(ax)
    ax.set_title(f"Accuracy by {field.replace('_', ' ')}")
    return to_svg(fig)


def _integer_histogram(ax: Axes, series: list[tuple[int, str, list[float]]], what: str) -> None:
    """Grouped bars: share of samples at each integer value, one bar per series
    (``(colour index, label, values)``)."""
    values = sorted({int(v) for _, _, vs in series for v in vs})
    if len(values) > MAX_INTEGER_BINS:
        for i, label, vs in series:
            ax.hist(
                vs, bins=20, histtype="step", lw=1.5, color=_colour(i), label=label,
                linestyle=_round(i, LINESTYLES), weights=np.full(len(vs), 100 / max(1, len(vs))),
            )  # fmt: skip
    else:
        x = np.arange(len(values))
        width = 0.8 / max(1, len(series))
        for k, (i, label, vs) in enumerate(series):
            counts = pd.Series([int(v) for v in vs]).value_counts()
            share = [100 * counts.get(v, 0) / max(1, len(vs)) for v in values]
            ax.bar(
                x + (k - (len(series) - 1) / 2) * width, share, width, color=_colour(i), label=label,
                hatch=_round(i, HATCHES) or None, edgecolor="white" if _round(i, HATCHES) else None,
            )  # fmt: skip
        ax.set_xticks(x, [str(v) for v in values])
    ax.set_xlabel(what)
    ax.set_ylabel("share of samples")
    _percent_axis(ax.yaxis)
    ax.grid(axis="y", alpha=0.3)


@styled
def effort_distribution(runs: Sequence[Run]) -> str | None:
    """Histograms of iterations and tool calls per sample (share of samples at each count), one bar
    per retriever + model (of each run). None without samples."""
    frames = series_frames(runs)
    if not frames:
        return None
    fig = Figure(figsize=(8.4, 3.0))
    axes = fig.subplots(1, 2)
    for ax, column, name in ((axes[0], "iterations", "iterations"), (axes[1], "tool_calls", "tool calls")):
        data = [(i, label, f[column].astype(float).tolist()) for i, (label, f) in enumerate(frames)]
        _integer_histogram(ax, data, name)
        ax.set_title(f"{name} per sample")
    _legend_outside(axes[1])
    return to_svg(fig)


@styled
def consistency(runs: Sequence[Run]) -> str | None:
    """Where questions were repeated: how many of a question's repeats were judged correct, as the
    share of questions (0 of K = always wrong, K of K = always right; between = unstable).
    None when no run has repeats."""
    series = []
    kmax = 0
    for i, (label, frame) in enumerate(series_frames(runs)):
        if frame["repeat"].nunique() < 2:
            continue
        per_q = frame.groupby("question_id")["correct"].agg(["sum", "count"])
        per_q = per_q[per_q["count"] >= 2]
        if per_q.empty:
            continue
        kmax = max(kmax, int(per_q["count"].max()))
        # each series' share of stable questions goes in its legend entry: listed in the title, one line
        # for all series, it made the figure as wide as the list (7 retrievers: 1,150 pt) and the
        # page scaled the chart down to unreadable
        stable = 100 * ((per_q["sum"] == 0) | (per_q["sum"] == per_q["count"])).mean()
        series.append((i, f"{label}: {stable:.0f}% stable", per_q["sum"].astype(float).tolist()))
    if not series:
        return None
    fig = Figure(figsize=(6.4, 3.0))
    ax = fig.subplots()
    _integer_histogram(ax, series, f"repeats judged correct (of {kmax})")
    ax.set_ylabel("share of questions")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title("Per-question consistency across repeats (stable: all repeats correct, or none)", fontsize=9)
    _legend_outside(ax)
    return to_svg(fig)
