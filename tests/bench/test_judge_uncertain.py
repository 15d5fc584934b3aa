"""An ``uncertain`` verdict (a judge that abstained) in a run: not correct, its own column in the
accuracy tables, and left out of paired comparisons."""

from __future__ import annotations

from pathlib import Path

from bench.compare import compare_runs
from bench.rundir import load_run
from bench.summary import summarize, summary_rows
from tests.bench.runfactory import run_info, sample, write_run


def _samples(verdicts: str) -> list:
    kinds = {"c": "correct", "i": "incorrect", "u": "uncertain"}
    return [
        sample(f"q{i:03d}", verdict=kinds[v], status="answer", doc_id=f"DOC_{i % 3}")
        for i, v in enumerate(verdicts)
    ]


def test_uncertain_is_not_correct_and_has_its_own_column() -> None:
    summary = summarize(_samples("ccuui"), run_info())
    overall = summary.overall
    assert (overall.n, overall.correct, overall.incorrect, overall.uncertain) == (5, 2, 1, 2)
    assert overall.accuracy.value == 0.4  # 2 of 5: uncertain counts as not correct
    (row,) = summary_rows([overall])
    assert row["uncertain"] == "2"
    # Runs without uncertain verdicts keep their table as before.
    (plain,) = summary_rows([summarize(_samples("cci"), run_info()).overall])
    assert "uncertain" not in plain


def test_paired_comparison_drops_pairs_with_an_uncertain_side(tmp_path: Path) -> None:
    a = load_run(write_run(tmp_path / "A", _samples("iiuucc")))
    b = load_run(write_run(tmp_path / "B", _samples("cucicc"), info=run_info("B")))
    (group,) = compare_runs(a, b).groups
    # q001 (B uncertain), q002 and q003 (A uncertain) are left out: 3 pairs remain.
    assert group.test.n == 3
    assert [f.question_id for f in group.improved] == ["q000"] and group.regressed == []
    # the pairs left out are said beside the shared count (mutation test: left_out = 0 survived)
    cmp = compare_runs(a, b)
    assert (cmp.shared, cmp.overall.n_pairs) == (6, 3)
    assert cmp.shared_text == "6 shared samples (3 left out of the paired figures: uncertain on one side)"


def test_an_abstaining_verdict_is_never_confident() -> None:
    """A plug-in judge's ``uncertain`` with ``confident`` left at its default was written as
    ``confident: true`` in bench judge's output; the rules judge's abstention said false."""
    from bench.judges.base import JudgeVerdict

    assert JudgeVerdict(verdict="uncertain", judge="mine").confident is False
    assert JudgeVerdict(verdict="uncertain", judge="mine", confident=True).confident is False
    assert JudgeVerdict(verdict="correct", judge="mine").confident is True
