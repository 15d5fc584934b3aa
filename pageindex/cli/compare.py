"""``pageindex bench compare RUN_A RUN_B``: paired accuracy differences, flips and cost deltas."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import typer

from pageindex.cli._common import console, err_console, fail


def wide_console():
    """The shared console on a terminal; a 200-column one when output is piped (CI logs), so wide
    tables are not squeezed to 80 columns."""
    from rich.console import Console

    return console if console.is_terminal else Console(width=200)


class By(StrEnum):
    retriever = "retriever"
    model = "model"
    question_type = "question_type"
    doc_type = "doc_type"
    overall = "overall"


class Test(StrEnum):
    mcnemar = "mcnemar"
    bootstrap = "bootstrap"


def register(app: typer.Typer, bench: typer.Typer) -> None:
    @bench.command("compare", help="Compare run B against run A on the samples they share (B - A).")
    def compare(
        run_a: Path = typer.Argument(..., help="Run directory A (the reference, e.g. the baseline)."),
        run_b: Path = typer.Argument(..., help="Run directory B (the candidate)."),
        by: By = typer.Option(By.retriever, "--by", help="Group the comparison by this field."),
        test: Test = typer.Option(
            Test.mcnemar,
            "--test",
            help="Paired test: exact McNemar on discordant pairs, or paired bootstrap.",
        ),
        alpha: float = typer.Option(0.05, "--alpha", min=0.0, max=1.0, help="Significance level."),
        as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON instead of tables."),
        max_flips: int = typer.Option(20, "--max-flips", min=0, help="Flipped questions listed per group."),
    ) -> None:
        from bench.compare import NoSharedSamples, compare_runs, print_comparison
        from bench.summary import RunLoadError, load_run

        try:
            a, b = load_run(run_a), load_run(run_b)
        except RunLoadError as exc:
            fail(str(exc))
        for w in a.warnings + b.warnings:
            err_console.print(f"warning: {w}", highlight=False, markup=False, style="yellow")
        try:
            cmp = compare_runs(a, b, by=by.value, method=test.value, alpha=alpha)
        except NoSharedSamples as exc:
            fail(str(exc))
        if as_json:
            for w in cmp.warnings:
                err_console.print(f"WARNING: {w}", highlight=False, markup=False, style="bold red")
            print(cmp.model_dump_json(indent=2))
        else:
            print_comparison(cmp, wide_console(), max_flips=max_flips)
