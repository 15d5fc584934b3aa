"""Agreement of a judge with FinanceBench's human labels, label file by label file.

Usage: ``python bench/perf/judge_agreement.py DATA_DIR [--abstain] [--run-golds] [--exclude NAME]...
[--holdout NAME]...``

Judges every row of ``DATA_DIR/labels/*.jsonl`` (whatever files the folder holds; each is one model
configuration's answers) with the ``rules`` judge and prints, per file, three-class agreement and
Cohen's kappa (over the decided rows when ``--abstain`` lets the judge say ``uncertain``, with the
share decided), the mean and the worst file, and the confusion matrix summed over files. Files named
with ``--holdout`` are reported in a table of their own; ``--exclude`` leaves files out entirely (how
the rules were developed without reading the hold-out). ``--run-golds`` judges each row with its gold as
``DATA_DIR/questions.jsonl`` writes it (``"$1577.00"`` where the label file has ``1577``), as ``bench run``
judges. No model is called. The same report:
``pageindex bench judge --labels DATA_DIR --per-file``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import typer
from rich.console import Console

from bench.datasets.financebench import load_financebench
from bench.judges.batch import judge_rows, label_files, read_label_dir
from bench.judges.report import print_label_report
from bench.judges.rules import RulesJudge

console = Console(width=140)


def main(
    data_dir: Path = typer.Argument(..., help="FinanceBench-format directory (or a folder of label files)."),
    abstain: bool = typer.Option(False, "--abstain", help="Let the rules say 'uncertain'."),
    exclude: list[str] = typer.Option([], "--exclude", help="Label file (name or stem) to leave out."),
    holdout: list[str] = typer.Option([], "--holdout", help="Label file reported in its own table."),
    run_golds: bool = typer.Option(
        False, "--run-golds", help="Judge with the golds as questions.jsonl writes them (as a run does)."
    ),
) -> None:
    errors = Console(stderr=True)
    if not data_dir.is_dir():
        errors.print(f"error: DATA_DIR {data_dir}: no such directory", highlight=False, markup=False)
        raise typer.Exit(2)
    if not label_files(data_dir, exclude=set(exclude)):
        errors.print(f"error: DATA_DIR {data_dir}: no *.jsonl label files", highlight=False, markup=False)
        raise typer.Exit(2)
    judge = RulesJudge(abstain=abstain)
    parsed = read_label_dir(data_dir, exclude=set(exclude))
    if run_golds:  # as the dataset loader reads them for a run
        golds = {q.question_id: q.gold_answer for q in load_financebench(data_dir).questions}
        for p in parsed:
            if p.row is not None and p.row.financebench_id in golds:
                p.row.gold_answer = golds[p.row.financebench_id]
    rows = asyncio.run(judge_rows(judge, parsed))
    console.print(f"judge {judge.name} version {judge.version}", highlight=False, markup=False)
    print_label_report(console, rows, holdout=set(holdout))


if __name__ == "__main__":
    typer.run(main)
