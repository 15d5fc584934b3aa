"""Print a judge's agreement with human labels as rich tables."""

from __future__ import annotations

import pandas as pd
from rich.console import Console
from rich.table import Table

from bench.judges.base import ALL_VERDICTS, VERDICTS
from bench.judges.batch import VerdictRow
from bench.judges.calibration import PerFileAgreement, agreement, agreement_by, per_file_agreement

# The verdict row fields agreement can be grouped by (``bench judge --by``).
GROUP_FIELDS = ("model_name", "source", "decided_by", "judge_version")


def labelled_frame(rows: list[VerdictRow]) -> pd.DataFrame:
    frame = pd.DataFrame([r.model_dump() for r in rows])
    if frame.empty:
        return frame
    return frame[(frame["status"] == "ok") & frame["label"].notna() & frame["verdict"].notna()]


def print_agreement(console: Console, rows: list[VerdictRow], *, by: str | None = None) -> None:
    """Accuracy, kappa and confusion matrix against the human labels; nothing when no row has one."""
    frame = labelled_frame(rows)
    if frame.empty:
        why = (
            "no row has both a human label and a verdict"
            if any(r.label for r in rows)
            else "no human labels in the input"
        )
        console.print(f"{why}: agreement not computed", highlight=False)
        return
    undecided = int((frame["verdict"] == "uncertain").sum())
    if undecided:
        console.print(
            f"{undecided} of {len(frame)} rows judged uncertain (the judge abstained): agreement below "
            f"is over the {len(frame) - undecided} decided rows",
            highlight=False,
        )
        frame = frame[frame["verdict"] != "uncertain"]
        if frame.empty:
            return
    a = agreement(frame["label"].tolist(), frame["verdict"].tolist())
    summary = Table(title="Agreement with human labels")
    for col in ("rows", "agreement", "Cohen's kappa", *(f"recall {v}" for v in VERDICTS)):
        summary.add_column(col, justify="right")
    recalls = [("-" if a.per_label_recall[v] is None else f"{a.per_label_recall[v]:.1%}") for v in VERDICTS]
    summary.add_row(str(a.n), f"{a.accuracy:.1%}", f"{a.kappa:.3f}", *recalls)
    console.print(summary)

    console.print(_confusion_table(a.confusion_frame(), list(VERDICTS), "Confusion matrix"))

    group = by or ("model_name" if frame["model_name"].notna().any() else None)
    if by and not (by in frame.columns and frame[by].notna().any()):
        console.print(f"--by {by}: no judged row has a value for it, so no table by {by}", highlight=False)
    if group and group in frame.columns and frame[group].notna().any():
        per = agreement_by(frame, group)
        table = Table(title=f"Agreement by {group}")
        for col in (group, "rows", "agreement", "Cohen's kappa"):
            table.add_column(col, justify="right" if col != group else "left")
        for rec in per.itertuples(index=False):
            table.add_row(str(rec[0]), str(rec.n), f"{rec.accuracy:.1%}", f"{rec.kappa:.3f}")
        console.print(table)


def _confusion_table(matrix: pd.DataFrame, columns: list[str], title: str) -> Table:
    """Counts of human label (rows) x judge verdict (``columns``)."""
    table = Table(title=f"{title} (rows: human label, columns: judge verdict)")
    table.add_column("human \\ judge")
    for v in columns:
        table.add_column(v, justify="right")
    for human in VERDICTS:
        table.add_row(human, *(str(int(matrix.loc[human, j])) for j in columns))
    return table


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}"


def _kappa(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def per_file(rows: list[VerdictRow]) -> PerFileAgreement | None:
    """Agreement per label file (``source``, else ``model_name``); None without labelled rows."""
    frame = labelled_frame(rows)
    if frame.empty:
        return None
    by = "source" if frame["source"].notna().any() else "model_name"
    if not frame[by].notna().any():
        frame = frame.assign(source="(input)")
        by = "source"
    return per_file_agreement(frame.fillna({by: "(none)"}), by=by)


def print_per_file(
    console: Console, report: PerFileAgreement, *, title: str = "Agreement per label file"
) -> None:
    """The per-file table (rows, decided share, three-class agreement and kappa on decided rows),
    mean and worst file, pooled figures, and the confusion matrix summed over files."""
    abstains = report.decided < report.n

    def share(text: str) -> list[str]:
        return [text] if abstains else []

    table = Table(title=title)
    cols = ["label file", "rows", *share("decided"), "agreement", "Cohen's kappa"]
    for col in cols:
        table.add_column(col, justify="left" if col == "label file" else "right")
    for f in report.files:
        table.add_row(f.file, str(f.n), *share(_pct(f.decided_share)), _pct(f.accuracy), _kappa(f.kappa))
    table.add_section()
    table.add_row("mean of files", "", *share(""), _pct(report.mean_accuracy), _kappa(report.mean_kappa))
    table.add_row(f"worst: {report.worst_file or '-'}", "", *share(""), _pct(report.worst_accuracy), "")
    pooled = (_pct(report.accuracy), _kappa(report.kappa))
    table.add_row("all rows pooled", str(report.n), *share(_pct(report.decided_share)), *pooled)
    console.print(table)
    matrix = report.confusion_frame()
    columns = list(ALL_VERDICTS) if abstains or matrix["uncertain"].sum() else list(VERDICTS)
    console.print(_confusion_table(matrix, columns, "Confusion matrix summed over files"))


def print_label_report(console: Console, rows: list[VerdictRow], *, holdout: set[str] | None = None) -> None:
    """The per-file report; files named in ``holdout`` (name or stem) get their own table, after the
    development files'."""
    holdout = holdout or set()

    def held(row: VerdictRow) -> bool:
        name = row.source or ""
        return name in holdout or f"{name}.jsonl" in holdout

    groups = [("Agreement per label file", [r for r in rows if not held(r)])]
    if holdout:
        groups = [
            ("Development label files", groups[0][1]),
            ("Hold-out label files (not read while the rules were developed)", [r for r in rows if held(r)]),
        ]
    for title, part in groups:
        report = per_file(part)
        if report is None:
            console.print(f"{title}: no labelled rows", highlight=False)
            continue
        print_per_file(console, report, title=title)
