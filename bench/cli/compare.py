"""``pageindex bench compare RUN_A RUN_B``: paired accuracy differences, flips and cost deltas."""

from __future__ import annotations

from pathlib import Path

import typer

from pageindex.cli._common import console, err_console, examples, fail

BY = ("retriever", "model", "question_type", "doc_type", "overall")
TESTS = ("mcnemar", "bootstrap")


def register(app: typer.Typer, bench: typer.Typer) -> None:
    @bench.command(
        "compare",
        help="Compare run B against run A on the samples they share (B - A). Runs scored differently "
        "(judge name, version or model, tree builder version, dataset content hash) are refused "
        "unless --allow-changed. Exit codes: 0 compared; 2 bad input or not comparable.",
        epilog=examples(
            "pageindex bench compare results/baseline results/candidate",
            "pageindex bench compare results/baseline results/candidate --by question_type --test bootstrap",
            "pageindex bench compare results/run results/run --retrievers bm25,mine",
        ),
    )
    def compare(
        run_a: Path = typer.Argument(..., help="Run directory A (the reference, e.g. the baseline)."),
        run_b: Path = typer.Argument(..., help="Run directory B (the candidate)."),
        by: str = typer.Option("retriever", "--by", help=f"Group the comparison by: {', '.join(BY)}."),
        test: str = typer.Option(
            "mcnemar",
            "--test",
            help="Paired test: mcnemar (exact, on discordant pairs) or bootstrap (paired).",
        ),
        alpha: str = typer.Option("0.05", "--alpha", help="Significance level (0-1, or a percentage)."),
        as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON instead of tables."),
        max_flips: str = typer.Option("20", "--max-flips", help="Flipped questions listed per group (0+)."),
        allow_changed: bool = typer.Option(
            False,
            "--allow-changed",
            help="Compare even when the judge, tree builder version or dataset differ (warned).",
        ),
        retrievers: str | None = typer.Option(
            None,
            "--retrievers",
            help="OLD,NEW: compare retriever OLD of run A with retriever NEW of run B, question by "
            "question (run B may be run A).",
        ),
    ) -> None:
        from bench.compare import (
            NoSharedSamples,
            NotComparable,
            check_comparable,
            compare_runs,
            print_comparison,
        )
        from bench.rundir import RunLoadError, load_run
        from pageindex.cli._common import parse_fraction

        if by not in BY:
            fail(f"--by must be one of {', '.join(BY)}; got {by!r}")
        if test not in TESTS:
            fail(f"--test must be one of {', '.join(TESTS)}; got {test!r}")
        try:
            level = parse_fraction("--alpha", alpha, significance=True)
        except ValueError as exc:
            fail(str(exc))
        flips = int(max_flips) if max_flips.strip().isdigit() else -1
        if flips < 0:
            fail(f"--max-flips must be a whole number of 0 or more; got {max_flips!r}")
        pair: tuple[str, str] | None = None
        if retrievers is not None:
            names = [n.strip() for n in retrievers.split(",")]
            if len(names) != 2 or not all(names):
                fail(f"--retrievers {retrievers!r}: give two retriever names, OLD,NEW (e.g. bm25,mine)")
            pair = (names[0], names[1])
        try:
            a, b = load_run(run_a), load_run(run_b)
        except RunLoadError as exc:
            fail(str(exc))
        from pageindex.atomic import same_file

        if same_file(a.path, b.path) and (pair is None or pair[0] == pair[1]):  # every difference reads 0
            fail(f"{run_a} and {run_b} are the same run folder: a run compared with itself differs in "
                 "nothing; give the two runs' own folders (or --retrievers OLD,NEW to compare two of "
                 "its retrievers)")  # fmt: skip
        try:
            provenance = check_comparable(a, b, allow_changed=allow_changed)
        except NotComparable as exc:
            fail(str(exc))
        for w in a.warnings + b.warnings + provenance:
            err_console.print(f"warning: {w}", highlight=False, markup=False, style="yellow")
        try:
            cmp = compare_runs(
                a, b, by=by, method=test, alpha=level, allow_changed=allow_changed, retrievers=pair  # type: ignore[arg-type]
            )
        except NoSharedSamples as exc:
            fail(str(exc))
        if as_json:
            for w in cmp.warnings:
                err_console.print(f"WARNING: {w}", highlight=False, markup=False, style="bold red")
            for note in cmp.notes:
                err_console.print(f"note: {note}", highlight=False, markup=False, style="yellow")
            print(cmp.model_dump_json(indent=2))
        else:
            print_comparison(cmp, console, max_flips=flips)
