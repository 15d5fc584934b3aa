"""Agreement with human labels: accuracy, Cohen's kappa, confusion matrix."""

from __future__ import annotations

import pandas as pd
import pytest

from bench.judges.calibration import agreement, agreement_by, cohen_kappa, confusion_matrix, normalize_label


def test_kappa_textbook_example() -> None:
    # Two raters, 50 items: both yes 20, yes/no 5, no/yes 10, both no 15 -> po 0.7, pe 0.5, kappa 0.4.
    a = ["correct"] * 25 + ["incorrect"] * 25
    b = ["correct"] * 20 + ["incorrect"] * 5 + ["correct"] * 10 + ["incorrect"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)


def test_kappa_edges() -> None:
    same = ["correct", "refusal", "incorrect"]
    assert cohen_kappa(same, same) == pytest.approx(1.0)
    assert cohen_kappa(["correct"] * 4, ["correct"] * 4) == 1.0
    # Systematic disagreement is worse than chance.
    assert cohen_kappa(["correct", "incorrect"] * 5, ["incorrect", "correct"] * 5) == pytest.approx(-1.0)
    with pytest.raises(ValueError):
        cohen_kappa([], [])


def test_confusion_matrix_has_every_label() -> None:
    m = confusion_matrix(["correct", "correct", "refusal"], ["correct", "incorrect", "refusal"])
    assert isinstance(m, pd.DataFrame)
    assert list(m.index) == list(m.columns) == ["correct", "incorrect", "refusal"]
    assert m.loc["correct", "incorrect"] == 1 and m.loc["refusal", "refusal"] == 1 and m.to_numpy().sum() == 3
    with pytest.raises(ValueError):
        confusion_matrix(["correct"], [])


def test_agreement_and_grouping() -> None:
    human = ["correct", "incorrect", "refusal", "correct"]
    judge = ["correct", "correct", "refusal", "correct"]
    a = agreement(human, judge)
    assert a.n == 4 and a.accuracy == 0.75 and a.kappa == pytest.approx(0.5556, abs=1e-4)
    assert a.per_label_recall == {"correct": 1.0, "incorrect": 0.0, "refusal": 1.0}
    assert a.confusion_frame().loc["incorrect", "correct"] == 1
    frame = pd.DataFrame({"label": human, "verdict": judge, "model": ["x", "x", "y", "y"]})
    per = agreement_by(frame, "model")
    assert per["accuracy"].tolist() == [0.5, 1.0] and per["n"].tolist() == [2, 2]


def test_normalize_label() -> None:
    assert normalize_label("Correct Answer") == "correct"
    assert normalize_label(" Incorrect Answer") == "incorrect"
    assert normalize_label("Refusal") == "refusal"
    assert normalize_label("maybe") is None and normalize_label(None) is None
