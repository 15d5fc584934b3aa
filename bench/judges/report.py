"""Print a judge's agreement with human labels as rich tables."""

from __future__ import annotations

import pandas as pd
from rich.console import Console
from rich.table import Table

from bench.judges.base import VERDICTS
from bench.judges.batch import VerdictRow
from bench.judges.calibration import agreement, agreement_by


def labelled_frame(rows: list[VerdictRow]) -> pd.DataFrame:
    frame = pd.DataFrame([r.model_dump() for r in rows])
    if frame.empty:
        return frame
    return frame[(frame["status"] == "ok") & frame["label"].notna() & frame["verdict"].notna()]


def print_agreement(console: Console, rows: list[VerdictRow], *, by: str | None = None) -> None:
    """Accuracy, kappa and confusion matrix against the human labels; nothing when no row has one."""
    frame = labelled_frame(rows)
    if frame.empty:
        console.print("no human labels in the input: agreement not computed", highlight=False)
        return
    a = agreement(frame["label"].tolist(), frame["verdict"].tolist())
    summary = Table(title="Agreement with human labels")
    for col in ("rows", "accuracy", "Cohen's kappa", *(f"recall {v}" for v in VERDICTS)):
        summary.add_column(col, justify="right")
    recalls = [("-" if a.per_label_recall[v] is None else f"{a.per_label_recall[v]:.1%}") for v in VERDICTS]
    summary.add_row(str(a.n), f"{a.accuracy:.1%}", f"{a.kappa:.3f}", *recalls)
    console.print(summary)

    matrix = a.confusion_frame()
    confusion = Table(title="Confusion matrix (rows: human label, columns: judge verdict)")
    confusion.add_column("human \\ judge")
    for v in VERDICTS:
        confusion.add_column(v, justify="right")
    for human in VERDICTS:
        confusion.add_row(human, *(str(int(matrix.loc[human, j])) for j in VERDICTS))
    console.print(confusion)

    group = by or ("model_name" if frame["model_name"].notna().any() else None)
    if group and group in frame.columns and frame[group].notna().any():
        per = agreement_by(frame, group)
        table = Table(title=f"Agreement by {group}")
        for col in (group, "rows", "accuracy", "kappa"):
            table.add_column(col, justify="right" if col != group else "left")
        for rec in per.itertuples(index=False):
            table.add_row(str(rec[0]), str(rec.n), f"{rec.accuracy:.1%}", f"{rec.kappa:.3f}")
        console.print(table)
