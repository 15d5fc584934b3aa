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
