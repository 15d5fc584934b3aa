"""``pageindex bench gate RUN``: exit 0 when every rule holds, 1 when one fails, 2 on unusable input."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import typer

from pageindex.cli._common import console, err_console, fail


class Test(StrEnum):
    mcnemar = "mcnemar"
    bootstrap = "bootstrap"


def register(app: typer.Typer, bench: typer.Typer) -> None:
    @bench.command(
        "gate",
        help="Check a run against rules for CI. Exit 0: all rules hold; 1: a rule fails; 2: unusable input.",
    )
    def gate(
        run: Path = typer.Argument(..., help="Run directory to check."),
        min_accuracy: float | None = typer.Option(
            None, "--min-accuracy", min=0.0, max=1.0, help="Lowest accuracy allowed (fraction, e.g. 0.6)."
        ),
        baseline: Path | None = typer.Option(
            None, "--baseline", help="Baseline run directory; its shared samples are paired with RUN's."
        ),
        max_drop: float | None = typer.Option(
            None,
            "--max-drop",
            min=0.0,
            max=1.0,
            help="Largest accuracy drop vs --baseline allowed (fraction; default 0). A larger drop fails "
            "only when the paired test says it is significant at --alpha.",
        ),
        max_tokens_per_question: float | None = typer.Option(
            None, "--max-tokens-per-question", min=0.0, help="Highest mean retriever tokens per question."
        ),
        min_answered: float | None = typer.Option(
            None, "--min-answered", min=0.0, max=1.0, help="Lowest share of answered samples (fraction)."
        ),
        retriever: str | None = typer.Option(
            None, "--retriever", help="Check only this retriever (default: each retriever of the run)."
        ),
        alpha: float = typer.Option(0.05, "--alpha", min=0.0, max=1.0, help="Significance level for drops."),
        test: Test = typer.Option(Test.mcnemar, "--test", help="Paired test for --max-drop."),
        junit: Path | None = typer.Option(None, "--junit", help="Also write the outcome as JUnit XML here."),
    ) -> None:
        from rich.text import Text

        from bench.gate import EXIT_UNUSABLE, GateInputError, GateRules, evaluate_gate, write_junit
        from bench.summary import RunLoadError, load_run

        rules = GateRules(
            min_accuracy=min_accuracy,
            max_drop=max_drop,
            max_tokens_per_question=max_tokens_per_question,
            min_answered=min_answered,
            retriever=retriever,
            alpha=alpha,
            method=test.value,
        )
        try:
            current = load_run(run)
            base = load_run(baseline) if baseline is not None else None
            result = evaluate_gate(current, rules, base)
        except (RunLoadError, GateInputError) as exc:
            if junit is not None:
                write_junit(junit, None, error=str(exc))
            fail(str(exc), EXIT_UNUSABLE)
        for w in result.warnings:
            err_console.print(Text.assemble(("WARNING: ", "bold red"), w), highlight=False)
        for line in result.lines():
            style = "green" if line.startswith("PASS") else "bold red"
            console.print(Text.assemble((line[:4], style), line[4:]), highlight=False, soft_wrap=True)
        held = sum(r.passed for r in result.rules)
        console.print(
            f"gate {'passed' if result.passed else 'FAILED'}: {held}/{len(result.rules)} rules hold",
            highlight=False,
        )
        if junit is not None:
            write_junit(junit, result)
            console.print(f"JUnit XML written to {junit}", highlight=False)
        raise typer.Exit(result.exit_code)
