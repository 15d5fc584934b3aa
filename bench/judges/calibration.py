"""How well a judge agrees with human labels: accuracy, Cohen's kappa and the confusion matrix.

Human labels come as in FinanceBench (``Correct Answer``, ``Incorrect Answer``, ``Refusal``) or as
verdicts; :func:`normalize_label` maps both onto ``correct`` / ``incorrect`` / ``refusal``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from pydantic import BaseModel

from bench.judges.base import ALL_VERDICTS, VERDICTS, Verdict

_LABELS: dict[str, Verdict] = {
    "correct": "correct",
    "correct answer": "correct",
    "incorrect": "incorrect",
    "incorrect answer": "incorrect",
    "wrong": "incorrect",
    "refusal": "refusal",
    "refused": "refusal",
    "no answer": "refusal",
}


def normalize_label(label: object) -> Verdict | None:
    """``"Correct Answer"`` -> ``"correct"``; None for missing or unknown labels."""
    if not isinstance(label, str):
        return None
    return _LABELS.get(label.strip().lower())


def confusion_matrix(
    human: Sequence[str], judge: Sequence[str], labels: Sequence[str] = VERDICTS
) -> pd.DataFrame:
    """Counts with human labels as rows and judge verdicts as columns, every label present."""
    if len(human) != len(judge):
        raise ValueError(f"{len(human)} human labels but {len(judge)} verdicts")
    frame = pd.crosstab(
        pd.Categorical(list(human), categories=list(labels)),
        pd.Categorical(list(judge), categories=list(labels)),
        dropna=False,
    )
    frame.index = pd.Index(list(labels), name="human")
    frame.columns = pd.Index(list(labels), name="judge")
    return frame.astype(int)


def cohen_kappa(human: Sequence[str], judge: Sequence[str], labels: Sequence[str] = VERDICTS) -> float:
    """Cohen's kappa: (observed agreement - chance agreement) / (1 - chance agreement).

    Chance agreement is the sum over labels of the product of the two raters' marginal shares. When
    chance agreement is 1 (both raters always give the same single label) kappa is 1.0 if they agree.
    """
    matrix = confusion_matrix(human, judge, labels).to_numpy(dtype=float)
    n = matrix.sum()
    if n == 0:
        raise ValueError("no labelled rows")
    observed = np.trace(matrix) / n
    expected = float((matrix.sum(axis=1) / n) @ (matrix.sum(axis=0) / n))
    if np.isclose(expected, 1.0):
        return 1.0 if np.isclose(observed, 1.0) else 0.0
    return float((observed - expected) / (1.0 - expected))


class Agreement(BaseModel):
    """Agreement of a judge with human labels over ``n`` rows."""

    n: int
    accuracy: float
    kappa: float
    per_label_recall: dict[str, float | None]
    confusion: dict[str, dict[str, int]]  # human label -> judge verdict -> count

    def confusion_frame(self) -> pd.DataFrame:
        frame = pd.DataFrame(self.confusion).T.reindex(index=list(VERDICTS), columns=list(VERDICTS))
        frame.index.name, frame.columns.name = "human", "judge"
        return frame.fillna(0).astype(int)


def agreement(human: Sequence[str], judge: Sequence[str]) -> Agreement:
    matrix = confusion_matrix(human, judge)
    n = int(matrix.to_numpy().sum())
    if n == 0:
        raise ValueError("no labelled rows")
    diag = np.diag(matrix.to_numpy())
    row_totals = matrix.sum(axis=1)
    recall = {
        label: (float(diag[i] / row_totals[label]) if row_totals[label] else None)
        for i, label in enumerate(matrix.index)
    }
    return Agreement(
        n=n,
        accuracy=float(diag.sum() / n),
        kappa=cohen_kappa(human, judge),
        per_label_recall=recall,
        confusion={h: {j: int(matrix.loc[h, j]) for j in matrix.columns} for h in matrix.index},
    )


def agreement_by(
    frame: pd.DataFrame, by: str, *, human: str = "label", judge: str = "verdict"
) -> pd.DataFrame:
    """One row per value of ``by``: n, accuracy, kappa (rows lacking a label or verdict are left out)."""
    rows = []
    usable = frame.dropna(subset=[human, judge])
    for key, part in usable.groupby(by, sort=True):
        a = agreement(part[human].tolist(), part[judge].tolist())
        rows.append({by: key, "n": a.n, "accuracy": a.accuracy, "kappa": a.kappa})
    return pd.DataFrame(rows, columns=[by, "n", "accuracy", "kappa"])


# ------------------------------------------------------------------ per label file, with abstentions
class FileAgreement(BaseModel):
    """Agreement on one label file. ``accuracy``/``kappa`` are over the ``decided`` rows (verdict not
    ``uncertain``); None when the judge decided none."""

    file: str
    n: int
    decided: int
    accuracy: float | None
    kappa: float | None

    @property
    def decided_share(self) -> float:
        return self.decided / self.n if self.n else 0.0


class PerFileAgreement(BaseModel):
    """Agreement file by file (each file is one model configuration's answers), their mean and worst,
    the pooled figures, and the confusion matrix summed over files (human label x verdict, with an
    ``uncertain`` column)."""

    files: list[FileAgreement]
    n: int
    decided: int
    accuracy: float | None  # pooled over every decided row
    kappa: float | None
    mean_accuracy: float | None
    worst_accuracy: float | None
    worst_file: str | None
    mean_kappa: float | None
    confusion: dict[str, dict[str, int]]

    @property
    def decided_share(self) -> float:
        return self.decided / self.n if self.n else 0.0

    def confusion_frame(self) -> pd.DataFrame:
        frame = pd.DataFrame(self.confusion).T.reindex(index=list(VERDICTS), columns=list(ALL_VERDICTS))
        frame.index.name, frame.columns.name = "human", "judge"
        return frame.fillna(0).astype(int)


def _decided(human: Sequence[str], judge: Sequence[str]) -> tuple[list[str], list[str]]:
    pairs = [(h, j) for h, j in zip(human, judge, strict=True) if j != "uncertain"]
    return [h for h, _ in pairs], [j for _, j in pairs]


def per_file_agreement(
    frame: pd.DataFrame, *, by: str = "source", human: str = "label", judge: str = "verdict"
) -> PerFileAgreement:
    """Agreement per value of ``by`` (rows lacking a label or verdict are left out); see
    :class:`PerFileAgreement`."""
    usable = frame.dropna(subset=[human, judge])
    if usable.empty:
        raise ValueError("no labelled rows")
    files: list[FileAgreement] = []
    for key, part in usable.groupby(by, sort=True):
        h, j = _decided(part[human].tolist(), part[judge].tolist())
        a = agreement(h, j) if h else None
        files.append(
            FileAgreement(
                file=str(key),
                n=len(part),
                decided=len(h),
                accuracy=a.accuracy if a else None,
                kappa=a.kappa if a else None,
            )
        )
    h, j = _decided(usable[human].tolist(), usable[judge].tolist())
    pooled = agreement(h, j) if h else None
    scored = [f for f in files if f.accuracy is not None]
    worst = min(scored, key=lambda f: (f.accuracy, f.file)) if scored else None
    matrix = pd.crosstab(
        pd.Categorical(usable[human].tolist(), categories=list(VERDICTS)),
        pd.Categorical(usable[judge].tolist(), categories=list(ALL_VERDICTS)),
        dropna=False,
    )
    confusion = {
        str(hl): {str(jl): int(matrix.loc[hl, jl]) for jl in ALL_VERDICTS} for hl in VERDICTS
    }
    return PerFileAgreement(
        files=files,
        n=len(usable),
        decided=len(h),
        accuracy=pooled.accuracy if pooled else None,
        kappa=pooled.kappa if pooled else None,
        mean_accuracy=float(np.mean([f.accuracy for f in scored])) if scored else None,
        worst_accuracy=worst.accuracy if worst else None,
        worst_file=worst.file if worst else None,
        mean_kappa=float(np.mean([f.kappa for f in scored])) if scored else None,
        confusion=confusion,
    )
