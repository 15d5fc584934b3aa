"""``pageindex bench rejudge RUN --judge NAME --out NEW_RUN``: re-score a stored run's answers with
another or newer judge (no retriever is called) and write them as a new run."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import typer

from bench.cli.judge import CACHE_PATH_HELP, JUDGE_CACHE_HELP, JUDGE_MODEL_HELP
from pageindex.cli._common import (
    ExitCode,
    cache_option,
    cache_path_option,
    command_line,
    concurrency_option,
    console,
    err_console,
    examples,
    fail,
    judge_base_url_option,
    judge_models_option,
    max_error_rate_option,
    out_option,
)
from pageindex.wording import counted


def register(app: typer.Typer, bench: typer.Typer) -> None:
    @bench.command(
        "rejudge",
        help="Re-score RUN's stored answers with --judge (no retriever is called) and write a new run "
        "to --out, e.g. to bring a baseline up to date with the current judge so the gate can compare it. "
        "Exit codes: 0 done; 2 bad input (nothing written); 4 more than --max-error-rate of the "
        "answers got a failed judge call, or the judge endpoint stopped answering (the rejudge stops "
        "'failed'); 130 interrupted (--resume goes on from where it stopped, in both cases).",
        epilog=examples(
            "pageindex bench rejudge results/baseline --judge rules -o results/baseline-rules",
            "pageindex bench rejudge results/baseline --judge llm --judge-model openai/gpt-4o-mini "
            "-o results/baseline-llm",
        ),
    )
    def rejudge(
        run: Path = typer.Argument(..., help="Run directory whose answers are judged again."),
        judge_name: str = typer.Option(..., "--judge", "-j", help="Judge: rules, llm, hybrid or panel."),
        judge_model: str | None = typer.Option(
            None,
            "--judge-model",
            help=JUDGE_MODEL_HELP,
        ),
        judge_models: str | None = judge_models_option(),
        cache: str = cache_option(help=JUDGE_CACHE_HELP),
        cache_path: Path | None = cache_path_option(help=CACHE_PATH_HELP),
        base_url: str | None = judge_base_url_option(
            help="OpenAI-compatible endpoint for the judge model.", old_base_url=True
        ),
        output: Path = out_option(..., help="Run directory to write: new, or without a run's files."),
        resume: bool = typer.Option(
            False, "--resume", help="Continue an interrupted rejudge in --out (same run, same judge options)."
        ),
        concurrency: int = concurrency_option(4, "Answers judged at once (default 4)."),
        max_error_rate: str = max_error_rate_option(),
    ) -> None:
        from bench.cli.judge import _build_judge, say_unwritten_cache
        from bench.config import comma_list
        from bench.judges.base import judge_model_need
        from bench.rejudge import RejudgeError, rejudge_run, resume_command
        from bench.rundir import RunLoadError, load_run
        from bench.samples import above_error_rate
        from bench.summary import unjudged_warning
        from pageindex.llm.cache import run_recording

        rate = float(max_error_rate)
        try:
            source = load_run(run)
        except RunLoadError as exc:
            fail(str(exc))
        # one error line (exit 2) when unusable
        judge, clients = _build_judge(
            judge_name, judge_model, base_url, cache=cache, cache_path=cache_path, models=judge_models
        )
        specs = comma_list(judge_models or judge_model)
        recorded_model = None if judge_model_need(judge_name) == "none" else ",".join(specs) or None
        # stopped as bench run is: SIGTERM (a cancelled CI job) as Ctrl-C (a SIGINT a script's background
        # job inherits ignored is taken back by pageindex.cli.main); both end `interrupted`, exit 130
        signal.signal(signal.SIGTERM, lambda *_: os.kill(os.getpid(), signal.SIGINT))
        try:
            outcome = run_recording(
                rejudge_run(
                    source,
                    output,
                    judge,
                    judge_name=judge_name,
                    judge_model=recorded_model,
                    concurrency=concurrency,
                    command=command_line(),
                    resume=resume,
                    clients=clients,
                ),
                [getattr(client, "cache", None) for client in clients],
            )
        except RejudgeError as exc:  # exit 2, or 4 for a full disk after answers were judged
            fail(str(exc), exc.exit_code)
        except KeyboardInterrupt:
            # secrets are not printed: the line says to give them again where it masks them
            console.print(
                f"interrupted: the answers judged so far are in {output}; to go on: "
                f"{resume_command(command_line())}",
                highlight=False,
                markup=False,
            )
            say_unwritten_cache(clients)
            raise typer.Exit(ExitCode.INTERRUPTED) from None
        for warning in source.warnings:  # a torn last line left out of the new run is said, as summary does
            err_console.print(f"warning: {warning}", style="yellow", markup=False, highlight=False)
        say_unwritten_cache(clients)
        overall = outcome.summary.overall
        accuracy = "-" if overall.accuracy.value is None else f"{100 * overall.accuracy.value:.1f}%"
        earlier = outcome.judged_in_all != outcome.judged
        console.print(
            f"rejudged {counted(outcome.judged, 'answer')}"
            + (f" ({outcome.judged_in_all:,} with the earlier attempts)" if earlier else "")
            + f" of {outcome.source_run_id} with {judge_name} "
            f"(version {outcome.judge_version}): {counted(outcome.changed, 'verdict')} changed, "
            f"{counted(outcome.kept, 'sample')} kept as they were; "
            f"accuracy {accuracy} -> {outcome.run_dir}",
            highlight=False,
            markup=False,
        )
        if source.info.status != "finished":
            # the rejudge scores what the run held when it was read, and keeps its status: a run still
            # going (or killed part-way) was rejudged in silence, its partial accuracy said as a run's
            err_console.print(
                f"note: {source.run_id} is {source.status_text()} with {source.samples_text()}: the "
                "rejudge holds those only and keeps that status; rejudge it again once it has finished",
                highlight=False,
                markup=False,
            )
        if outcome.status != "failed" and (
            unjudged := unjudged_warning(outcome.summary, resume_command(command_line()))
        ):  # answers whose judge call failed, said as bench run says them (it was said only above the rate)
            err_console.print(f"warning: {unjudged}", style="yellow", markup=False, highlight=False)
        if outcome.status == "failed" and outcome.summary.status_detail:  # why and how to go on, as a run
            err_console.print(f"error: {outcome.summary.status_detail}", highlight=False, markup=False)
            raise typer.Exit(ExitCode.ERRORS)
        if above_error_rate(outcome.judge_errors, outcome.judged, rate):
            err_console.print(
                f"judge errors: {outcome.judge_errors:,} of {counted(outcome.judged, 'answer')} "
                f"(more than --max-error-rate {rate:g})",
                highlight=False,
                markup=False,
            )
            raise typer.Exit(ExitCode.ERRORS)


