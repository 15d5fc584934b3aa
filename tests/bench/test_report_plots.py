"""The report's charts say what the data say: tick labels are the values at the ticks, and an axis of
counts never runs below zero (trial 3: two extractive runs, 0 tokens each, drew a token axis from -0.4
to 0.4, and accuracy ticks 2.5 points apart read 8%, 10%, 12%, 15%, 18% -- 7.5 printed as 8, 12.5 as 12)."""

from __future__ import annotations

import re
from pathlib import Path

from bench.report.plots import accuracy_by, accuracy_vs_tokens
from bench.rundir import load_run
from tests.bench.runfactory import outcomes, run_info, write_run


def _run(tmp_path: Path, name: str, pattern: str, **fields) -> object:
    samples = outcomes(pattern, "extractive", **fields)
    return load_run(write_run(tmp_path / name, samples, info=run_info(name)))


def _labels(svg: str) -> list[str]:
    """The texts drawn in the figure (svg.fonttype none: every label is a <text> element)."""
    return [re.sub(r"<[^>]+>", "", t).strip() for t in re.findall(r"<text[^>]*>(.*?)</text>", svg, re.S)]


def _percent_ticks(labels: list[str]) -> list[float]:
    return [float(t[:-1].replace("\u2212", "-")) for t in labels if re.fullmatch(r"\u2212?\d+(\.\d+)?%", t)]


def _evenly_spaced(values: list[float]) -> bool:
    steps = {round(b - a, 6) for a, b in zip(values, values[1:], strict=False)}
    return len(steps) == 1


def test_accuracy_against_tokens_of_runs_that_spent_no_tokens(tmp_path: Path) -> None:
    # 11 of 100 and 15 of 100 correct, no tokens: the runs of the README's compare example
    none = {"retriever_prompt_tokens": 0, "retriever_completion_tokens": 0}
    k1 = _run(tmp_path, "ext_k1", "c" * 11 + "i" * 89, **none)
    k5 = _run(tmp_path, "ext_k5", "c" * 15 + "i" * 85, **none)
    labels = _labels(accuracy_vs_tokens([k1, k5]))
    numbers = [t.replace("\u2212", "-") for t in labels if re.fullmatch(r"\u2212?\d+(\.\d+)?", t)]
    assert numbers and all(float(t) >= 0 for t in numbers), numbers  # no negative token counts
    ticks = _percent_ticks(labels)
    assert len(ticks) >= 3 and _evenly_spaced(ticks), ticks  # each label is the value at its tick


def test_accuracy_ticks_are_evenly_labelled_in_every_accuracy_chart(tmp_path: Path) -> None:
    a = _run(tmp_path, "a", "c" * 11 + "i" * 89)
    b = _run(tmp_path, "b", "c" * 15 + "i" * 85)
    for svg in (accuracy_vs_tokens([a, b]), accuracy_by([a, b], "question_type")):
        ticks = _percent_ticks(_labels(svg))
        assert len(ticks) >= 3 and _evenly_spaced(ticks), ticks


def _series_styles(svg: str) -> list[tuple[str, str]]:
    """(colour, marker shape) of each legend entry's marker: matplotlib draws markers as <use> of a
    <path id=...> in <defs>; the legend's come last, one per series."""
    defs = dict(re.findall(r'<path id="(m[0-9a-f]+)" d="([^"]+)"', svg))
    # an error bar's caps are markers too, open lines ("M 4 0 L -4 0"); a series' marker is a closed
    # shape (z) or a circle (C curves)
    shapes = {ref: d for ref, d in defs.items() if "z" in d or "C" in d}
    uses = re.findall(r'<use xlink:href="#(m[0-9a-f]+)"[^>]*style="[^"]*stroke: (#[0-9a-f]{6})', svg)
    return [(colour, shapes[ref]) for ref, colour in uses if ref in shapes]


def test_more_series_than_colours_are_still_told_apart(tmp_path: Path) -> None:
    """Two runs of 7 retrievers are 14 series, and tab10 has 10 colours: series 11 to 14 were drawn in
    the colours of series 1 to 4 with the same round marker, so the legend could not tell "A: agent"
    from "B: followup" (review rev-report, on the demo dataset). Past ten, the marker changes."""
    retrievers = ["agent", "bm25", "extractive", "followup", "iterative", "oracle", "planner"]
    runs = []
    for name in ("A", "B"):
        samples = [s for k, r in enumerate(retrievers) for s in outcomes("c" * (k + 1) + "i" * 5, r)]
        runs.append(load_run(write_run(tmp_path / name, samples, info=run_info(name, retrievers=retrievers))))
    for svg in (accuracy_vs_tokens(runs), accuracy_by(runs, "question_type")):
        labels = _labels(svg)
        assert sum(label.startswith(("A: ", "B: ")) for label in labels) == 14
        styles = _series_styles(svg)
        legend = styles[-14:]
        assert len(set(legend)) == 14, legend  # no two series drawn alike


def test_consistency_chart_stays_readable_with_many_series(tmp_path: Path) -> None:
    """The share of stable questions of each series was listed in the title, on one line: 7 retrievers
    made the figure 1,150 pt wide and the page shrank the chart to fit. It is in the legend now."""
    from bench.report.plots import consistency

    retrievers = ["agent", "bm25", "extractive", "followup", "iterative", "oracle", "planner"]
    samples = [s for r in retrievers for rep in (0, 1) for s in outcomes("ccii", r, repeat=rep)]
    info = run_info("rep", retrievers=retrievers, repeats=2)
    run = load_run(write_run(tmp_path / "rep", samples, info=info))
    svg = consistency([run])
    width = float(re.search(r'<svg[^>]* width="([\d.]+)pt"', svg).group(1))
    assert width < 700, width
    assert "planner / scripted: 100% stable" in _labels(svg)
