"""The independent answer sets (bench/perf/data/independent_answers.jsonl): they join with the dataset's
questions, and the rules judge keeps the agreement measured on each half (README, "Judges")."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

from bench.judges.batch import judge_rows
from bench.judges.calibration import agreement, normalize_label
from bench.judges.rules import RulesJudge
from bench.perf.judge_independent import independent_rows

# Measured with rules 5 (deciding every answer; README, "Judges"): set 1 development / hold-out half 92.7% /
# 84.6%; set 2 94.9% / 89.2%; set 3 (development, whole) 83.5%; set 4 (hold-out, whole) 83.0%; set 5 83.8% /
# 84.2%. Floors sit a little below.
FLOORS = {
    "set1-dev": 0.90, "set1-hold": 0.82, "set2-dev": 0.92, "set2-hold": 0.87, "set3-dev": 0.80,
    "set4-hold": 0.79, "set5-dev": 0.81, "set5-hold": 0.82,
}


def test_independent_answers_join_and_keep_their_agreement(fb_dir: Path) -> None:
    parsed = independent_rows(fb_dir)
    rows = [p.row for p in parsed if p.row is not None]
    assert len(rows) == len(parsed) == 960
    halves = {
        "set1-dev": 82, "set1-hold": 78, "set2-dev": 98, "set2-hold": 102, "set3-dev": 200, "set4-hold": 200,
        "set5-dev": 99, "set5-hold": 101,
    }
    assert Counter(r.source for r in rows) == halves
    labels = {"correct": 553, "incorrect": 189, "refusal": 218}
    assert Counter(normalize_label(r.label) for r in rows) == labels
    verdicts = asyncio.run(judge_rows(RulesJudge(), parsed))
    for half, floor in FLOORS.items():
        mine = [v for v in verdicts if v.source == half]
        measured = agreement([v.label for v in mine], [v.verdict for v in mine]).accuracy
        assert measured >= floor, (half, measured)
