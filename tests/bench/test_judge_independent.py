"""The independent answer set (bench/perf/data/independent_answers.jsonl): it joins with the dataset's
questions, and the rules judge keeps the agreement measured on it (README, "Judges")."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

from bench.judges.batch import judge_rows
from bench.judges.calibration import agreement, normalize_label
from bench.judges.rules import RulesJudge
from bench.perf.judge_independent import independent_rows

# Measured with rules 3+5c19afc166 (deciding every answer): development half 92.7%, hold-out half 84.6%.
FLOOR_DEV = 0.90
FLOOR_HOLD = 0.82


def test_independent_answers_join_and_keep_their_agreement(fb_dir: Path) -> None:
    parsed = independent_rows(fb_dir)
    rows = [p.row for p in parsed if p.row is not None]
    assert len(rows) == len(parsed) == 160
    assert Counter(r.source for r in rows) == {"independent-dev": 82, "independent-hold": 78}
    assert Counter(normalize_label(r.label) for r in rows) == {"correct": 72, "incorrect": 48, "refusal": 40}
    verdicts = asyncio.run(judge_rows(RulesJudge(), parsed))
    for half, floor in (("independent-dev", FLOOR_DEV), ("independent-hold", FLOOR_HOLD)):
        mine = [v for v in verdicts if v.source == half]
        measured = agreement([v.label for v in mine], [v.verdict for v in mine]).accuracy
        assert measured >= floor, (half, measured)
