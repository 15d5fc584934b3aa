"""``pageindex bench gate RUN``: exit 0 when every check holds, 1 when one fails, 2 on unusable
input (a bad option value, a run that cannot be read, runs that are not comparable)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import NoReturn

import typer

from pageindex.cli._common import (
    FRACTION_HELP,
    console,
    err_console,
    examples,
    fail,
    given_value,
    on_usage_error,
    output_file,
    parse_fraction,
    plain,
)

TESTS = ("mcnemar", "bootstrap")
EXIT_CODES_HELP = (
    "Exit codes: 0 every check holds; 1 a check failed (the output names it); "
    "2 bad input, or runs that are not comparable (nothing was checked)."
)


def parse_count(option: str, raw: str) -> float:
    """A number of tokens >= 0 (``1200``, ``1,200``, ``1.2e3``, or ``1.2k`` as ``--budget`` takes it);
    else ``ValueError`` naming the option."""
    from bench.config import parse_budget

    try:
        value = float(raw.strip().replace(",", "").replace("_", ""))
    except ValueError:
        try:
            tokens, _ = parse_budget(raw)
        except ValueError:
            tokens = None
        value = math.nan if tokens is None else float(tokens)
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{option} must be a number of tokens >= 0 (e.g. 1200 or 1.2k); got {raw!r}")
    return value


def parse_max_drop(raw: str) -> float:
    """``--max-drop`` as :func:`parse_fraction` reads it, but a bare ``1`` is refused: read as the
    fraction it allows a drop of 100 points (the check can never fail), where a CI script that wrote it
    meant one point as likely (``--max-drop 2`` is refused as 200%, ``1`` was silently 100%)."""
    value = parse_fraction("--max-drop", raw)
    if value == 1 and not raw.strip().endswith("%"):
        raise ValueError(
            f"--max-drop {raw.strip()} is ambiguous: write 1% for a drop of one point, or 100% to allow "
            "any drop"
        )
    return value


def junit_on_usage_error(args: list[str], message: str) -> None:
    """A command line that did not parse (a misspelt option, a missing RUN: exit 2 before any option
    is read) is written as the report to the ``--junit`` file it names, one test case with an error
    ``UsageError``: the file of an earlier run stayed, and a CI step reading it saw that run's verdict.
    A file that is not JUnit XML is left alone (no command writes over a file it did not make)."""
    from bench.gate import is_junit_file, write_junit
    from pageindex.atomic import file_in_the_way

    raw = given_value(args, ["--junit"])
    if not raw:
        return
    path = Path(raw)
    if path.is_dir() or file_in_the_way(path):
        return
    if path.is_file() and path.stat().st_size and not is_junit_file(path):
        return
    try:
        write_junit(path, None, error=message, error_type="UsageError")
    except OSError as exc:
        said = f"--junit {path}: cannot write the usage error there ({exc.strerror or exc})"
        err_console.print(f"[bold red]error:[/] {plain(said)}", highlight=False, soft_wrap=True)


def register(app: typer.Typer, bench: typer.Typer) -> None:
    on_usage_error("bench gate", junit_on_usage_error)

    @bench.command(
        "gate",
        help="Check a run against rules for CI: coverage of the baseline, errors, accuracy, drop vs "
        "baseline, tokens and answered share; one PASS/FAIL line per check and retriever. " + EXIT_CODES_HELP,
        epilog=examples(
            "pageindex bench gate results/candidate --min-accuracy 60%",
            "pageindex bench gate results/candidate --baseline results/baseline --max-drop 0.05",
            "pageindex bench gate results/candidate --baseline results/baseline --junit gate.xml",
        ),
    )
    def gate(
        run: Path = typer.Argument(..., help="Run directory to check."),
        min_accuracy: str | None = typer.Option(
            None, "--min-accuracy", help=f"Lowest accuracy allowed: {FRACTION_HELP}."
        ),
        baseline: Path | None = typer.Option(
            None,
            "--baseline",
            help="Baseline run directory. RUN must hold all its (question, retriever, repeat) "
            "samples (see --allow-partial) and be scored alike (see --allow-changed).",
        ),
        max_drop: str | None = typer.Option(
            None,
            "--max-drop",
            help=f"Largest accuracy drop vs --baseline allowed: {FRACTION_HELP} (a bare 1 is refused: "
            "write 1% or 100%); default 0. A larger drop fails when the paired test says it is significant "
            "at --alpha, or when the test could not call any drop significant (5 or fewer questions or "
            "documents at 0.05).",
        ),
        max_tokens_per_question: str | None = typer.Option(
            None, "--max-tokens-per-question", help="Highest mean retriever tokens per question."
        ),
        min_answered: str | None = typer.Option(
            None,
            "--min-answered",
            help=f"Lowest share of answered samples ({FRACTION_HELP}); errors, replay misses and "
            "fails count against it. Default with --baseline: 0.9 x the baseline's answered share.",
        ),
        retriever: str | None = typer.Option(
            None, "--retriever", help="Check only this retriever (default: each retriever of the runs)."
        ),
        alpha: str = typer.Option("0.05", "--alpha", help=f"Significance level for drops: {FRACTION_HELP}."),
        test: str = typer.Option(
            "mcnemar", "--test", help="Paired test for --max-drop: mcnemar or bootstrap."
        ),
        allow_partial: bool = typer.Option(
            False,
            "--allow-partial",
            help="Judge an unfinished RUN (interrupted, budget-stopped), or a finished RUN that lost samples "
            "since, on the samples it has; with "
            "--baseline, let RUN miss baseline samples: the checks then use the samples both runs share.",
        ),
        allow_changed: bool = typer.Option(
            False,
            "--allow-changed",
            help="Compare even when the judge, tree builder version or dataset differ (warned).",
        ),
        junit: Path | None = typer.Option(None, "--junit", help="Also write the outcome as JUnit XML here."),
    ) -> None:
        from rich.text import Text

        from bench.gate import (
            EXIT_UNUSABLE,
            GateInputError,
            GateRules,
            evaluate_gate,
            is_junit_file,
            printable,
            write_junit,
        )
        from bench.rundir import RunLoadError, load_run

        if junit is not None:
            output_file("--junit", junit, replaces=is_junit_file, kind="JUnit XML", example="gate.xml")

        def write(result=None, error: str | None = None) -> None:
            try:
                write_junit(junit, result, error=error)
            except OSError as exc:
                fail(f"--junit {junit}: cannot write ({exc.strerror or exc})", EXIT_UNUSABLE)

        def unusable(message: str) -> NoReturn:
            if junit is not None:
                write(error=message)
            fail(message, EXIT_UNUSABLE)

        def fraction(option: str, raw: str | None) -> float | None:
            return None if raw is None else parse_fraction(option, raw)

        try:
            if test not in TESTS:
                raise ValueError(f"--test must be one of {', '.join(TESTS)}; got {test!r}")
            rules = GateRules(
                min_accuracy=fraction("--min-accuracy", min_accuracy),
                max_drop=None if max_drop is None else parse_max_drop(max_drop),
                max_tokens_per_question=None
                if max_tokens_per_question is None
                else parse_count("--max-tokens-per-question", max_tokens_per_question),
                min_answered=fraction("--min-answered", min_answered),
                retriever=retriever,
                alpha=parse_fraction("--alpha", alpha, significance=True),
                method=test,
                allow_partial=allow_partial,
                allow_changed=allow_changed,
            )
        except ValueError as exc:
            unusable(str(exc))
        try:
            current = load_run(run)
            base = load_run(baseline) if baseline is not None else None
            result = evaluate_gate(current, rules, base)
        except (RunLoadError, GateInputError) as exc:
            unusable(str(exc))
        if junit is not None:  # written first: a file that cannot be written never follows a verdict
            write(result)
        for w in result.warnings:
            err_console.print(Text.assemble(("WARNING: ", "bold red"), printable(w)), highlight=False)
        for line in result.lines():
            style = "green" if line.startswith("PASS") else "bold red"
            console.print(Text.assemble((line[:4], style), line[4:]), highlight=False, soft_wrap=True)
        console.print(result.verdict_line(), highlight=False, markup=False)
        if junit is not None:
            console.print(f"JUnit XML written to {junit}", highlight=False, markup=False)
        raise typer.Exit(result.exit_code)
