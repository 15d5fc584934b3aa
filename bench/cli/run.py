"""``pageindex bench run``: the benchmark itself (see ``bench/runner.py``)."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from bench.config import comma_list, configured_model
from pageindex.cli._common import (
    NO_LIMIT,
    SCRIPTED_POLICY_ENV,
    ExitCode,
    cache_option,
    cache_path_option,
    checked_model,
    command_line,
    concurrency_option,
    console,
    err_console,
    examples,
    fail,
    judge_base_url_option,
    judge_models_option,
    max_error_rate_option,
    opt_option,
    out_option,
    plain,
    scripted_policy_option,
    setup_logging,
    split_retriever_option,
    time_limit_option,
    timeout_option,
    validation_message,
)
from pageindex.wording import counted

if TYPE_CHECKING:
    from pageindex.llm.profile import ClientSettings

EXIT_BUDGET = ExitCode.BUDGET
HOW_TO_MODEL = (
    "Set OPENAI_API_KEY (OpenAI), or pass --model ollama/<model> (local Ollama) or --model openai/<model> "
    "--base-url URL (any OpenAI-compatible server: vLLM, llama.cpp, LiteLLM)."
)
EXIT_INTERRUPTED = ExitCode.INTERRUPTED
# RunConfig field -> the option that sets it (for one-line errors about bad values)
OPTION_NAMES = {
    "data_dir": "--data-dir",
    "retrievers": "--retrievers",
    "judge": "--judge",
    "limit": "--limit",
    "concurrency": "--concurrency",
    "budget_tokens": "--budget",
    "budget_usd": "--budget",
    "repeats": "--repeats",
    "cache": "--cache",
    "timeout_s": "--timeout",
    "time_limit_s": "--time-limit",
    "max_retries": "--max-retries",
    "max_error_rate": "--max-error-rate",
    "context_window": "--context-window",
}


def register(app: typer.Typer, bench: typer.Typer) -> None:
    @bench.command(
        "run",
        epilog=examples(
            "pageindex bench run --limit 5 -o results/smoke",
            "pageindex bench run -d datasets/demo -r agent,iterative -m openai/gpt-4o-mini "
            "--opt agent.max_turns=8 --budget '$2' --cache rw",
            "pageindex bench run --resume results/RUN_ID --budget '$5'",
        ),
    )
    def run(
        data_dir: Path = typer.Option(
            None,
            "--data-dir",
            "-d",
            help="FinanceBench-format directory (questions.jsonl, documents.jsonl, pdfs/). "
            "Default: the generated demo dataset.",
        ),
        retrievers: str = typer.Option(
            None,
            "--retrievers",
            "-r",
            help="Comma-separated retrievers. Default: agent,planner,iterative,extractive with a model; "
            "extractive without one.",
        ),
        model: str = typer.Option(
            None,
            "--model",
            "-m",
            help="Answering model: openai/<model>, ollama/<model>, replay/<model>, scripted. Default: "
            "$PAGEINDEX_MODEL, or openai/gpt-4o-mini when OPENAI_API_KEY is set, else none (offline).",
        ),
        base_url: str = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint for the model."),
        judge: str = typer.Option(
            None,
            "--judge",
            "-j",
            help="llm | rules | hybrid | panel. Default: panel with --judge-models, llm with a model or "
            "--judge-model, rules without.",
        ),
        judge_model: str = typer.Option(None, "--judge-model", help="Judge model spec (default: --model)."),
        judge_models: str = judge_models_option(),
        judge_base_url: str = judge_base_url_option(
            help="Endpoint for the judge model (default: --base-url)."
        ),
        limit: int = typer.Option(None, "--limit", "-n", help="Run at most N questions (after validation)."),
        question_type: list[str] = typer.Option(
            [], "--question-type", "-t", help="Only questions of this type (repeatable)."
        ),
        question_id: list[str] = typer.Option(
            [], "--question-id", help="Only this question id (repeatable)."
        ),
        concurrency: int = concurrency_option(None, "Samples in flight at once (default 4)."),
        budget: str = typer.Option(
            None,
            "--budget",
            help="Stop starting samples once spent: tokens (200000, 200k) or dollars ($2.50).",
        ),
        repeats: int = typer.Option(1, "--repeats", "-k", help="Run every question K times per retriever."),
        out: Path = out_option(help="Run directory (default: results/<RUN_ID>)."),
        resume: Path = typer.Option(
            None,
            "--resume",
            help="Continue this run directory with its stored settings; skips finished samples.",
        ),
        retry_errors: bool = typer.Option(
            False,
            "--retry-errors",
            help="With --resume: run again the samples that ended in error (timeouts, a server that was "
            "down); their earlier records move to RUN/retried.jsonl.",
        ),
        cache: str = cache_option(
            None, help="LLM cache: off (default) | rw (record and reuse) | replay (cache only, no network)."
        ),
        cache_path: Path = cache_path_option(
            help="LLM cache file (default: $PAGEINDEX_CACHE_DIR/llm.sqlite or ~/.cache/pageindex/llm.sqlite)."
        ),
        opt: list[str] = opt_option(
            help="Retriever option RETRIEVER.NAME=VALUE, repeatable (e.g. --opt agent.max_turns=8); "
            "NAME=VALUE when --retrievers names one retriever."
        ),
        timeout: float = timeout_option(help="Seconds per model call before it is retried (default 60)."),
        time_limit: str = time_limit_option(
            help="Seconds one sample's retrieval may take, all its model calls (default: none, no "
            "limit); past it the sample ends as an error of kind time_limit and the run goes on."
        ),
        max_retries: int = typer.Option(
            None, "--max-retries", help="Retries per model call: 429, 5xx, timeouts (default 3)."
        ),
        scripted_policy: str = scripted_policy_option(),
        json_mode: bool = typer.Option(
            False, "--json-mode", help="Structured outputs as JSON content, for servers without tool calls."
        ),
        max_error_rate: str = max_error_rate_option(None),
        context_window: int = typer.Option(
            None, "--context-window", help="The model's context window in tokens (default: the "
            "server's metadata or a known table); indexes are sized to fit it.",
        ),
        quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
        verbose: bool = typer.Option(
            False, "--verbose", "-v", help="Also show library log lines (always in the run's events.log)."
        ),
    ) -> None:
        """Run a dataset through retrievers, judge every answer, write results/RUN_ID/."""
        from rich.markup import escape

        from bench.config import (
            RESUME_OVERRIDES,
            RunConfig,
            parse_budget,
            parse_option,
            resumable_options_text,
        )
        from bench.events import EventBus, RunEvent
        from bench.progress import ProgressView
        from bench.rundir import resume_run_command
        from bench.runinfo import spend_notes
        from bench.runner import Runner, RunSetupError, RunWriteError, SetupInterrupted, calls_answering_model
        from bench.summary import print_summary
        from pageindex.llm.types import LLMError
        from pageindex.retrievers.base import RetrieverConfigError

        setup_logging(verbose)
        if retry_errors and resume is None:
            fail("--retry-errors runs again the errored samples of an earlier run: give it with --resume RUN")
        if resume is None:
            _refuse_unused(retrievers, model, judge_model, judge_models, scripted_policy, json_mode)
        if scripted_policy is None and os.environ.get(SCRIPTED_POLICY_ENV):
            scripted_policy = os.environ[SCRIPTED_POLICY_ENV]
        try:
            options: dict[str, dict[str, object]] = {}
            chosen = comma_list(retrievers) if retrievers else None
            if retrievers is not None and not chosen:
                from pageindex.retrievers.base import available_retrievers

                fail(
                    f"--retrievers {retrievers!r} names no retriever; choose from "
                    f"{', '.join(sorted(available_retrievers()))} (leave it out for the defaults)"
                )
            for text in opt:
                name, key, raw = split_retriever_option(text, chosen)
                _, _, value = parse_option(f"{name}.{key}={raw}")
                options.setdefault(name, {})[key] = value
            budget_tokens, budget_usd = parse_budget(budget) if budget else (None, None)
            # What a resumed run may change; everything else comes from its run.json.
            given_settings = {
                "concurrency": concurrency,
                "timeout_s": timeout,
                "time_limit_s": None if time_limit == NO_LIMIT else time_limit,
                "max_retries": max_retries,
                "cache": cache,
                "cache_path": cache_path,
                "scripted_policy": scripted_policy,
                "base_url": base_url,
                "judge_base_url": judge_base_url,
                "max_error_rate": max_error_rate,
                **({"budget_tokens": budget_tokens, "budget_usd": budget_usd} if budget else {}),
            }
            operational = {k: v for k, v in given_settings.items() if k in RESUME_OVERRIDES}
            overrides = {k: v for k, v in operational.items() if v is not None}
            if time_limit == NO_LIMIT:  # said outright: no limit, also over a resumed run's stored one
                overrides["time_limit_s"] = None
            if budget:  # a new budget replaces a resumed run's whole: tokens or dollars, not both
                overrides.update(budget_tokens=budget_tokens, budget_usd=budget_usd)
            profile, profile_line = _local_profile(
                model, base_url, concurrency, timeout, max_retries, resume,
                judge_model=judge_model or next(iter(comma_list(judge_models)), None),
                judge_base_url=judge_base_url,
            )  # fmt: skip
            overrides.update(profile)
            judge_clients, judge_lines, judge_notes = _judge_clients(
                model, base_url, [judge_model] if judge_model else comma_list(judge_models), judge_base_url,
                {"timeout_s": timeout, "max_retries": max_retries, "json_mode": True if json_mode else None},
                resume,
            )  # fmt: skip
            if judge_clients:
                overrides["judge_clients"] = judge_clients
            if resume is not None:
                # option: (value given now, the RunConfig field it sets, that value as stored)
                fixed = {
                    "--data-dir": (data_dir, "data_dir", data_dir),
                    "--retrievers": (retrievers, "retrievers", comma_list(retrievers)),
                    "--model": (model, "model", model),
                    "--judge": (judge, "judge", judge),
                    "--judge-model": (judge_model, "judge_model", judge_model),
                    "--judge-models": (judge_models, "judge_models", comma_list(judge_models)),
                    "--limit": (limit, "limit", limit),
                    "--question-type": (question_type, "question_types", question_type),
                    "--question-id": (question_id, "question_ids", question_id),
                    "--repeats": (None if repeats == 1 else repeats, "repeats", repeats),
                    "--out": (out, "out", out),
                    "--opt": (opt, "retriever_options", options),
                    "--json-mode": (json_mode, "json_mode", json_mode),
                    # sizes the section indexes the model is shown: it changes what a sample means
                    "--context-window": (context_window, "context_window", context_window),
                }
                changed = _changed_on_resume(resume, {k: v for k, v in fixed.items() if v[0]})
                if changed:
                    fail(
                        f"--resume continues the run with its stored settings; drop {', '.join(changed)} "
                        f"(only {resumable_options_text()} may change)"
                    )
            config = RunConfig(
                data_dir=data_dir,
                retrievers=retrievers or [],
                model=model,
                judge=judge,
                judge_model=judge_model,
                judge_models=judge_models or [],
                limit=limit,
                question_types=question_type,
                question_ids=question_id,
                budget_tokens=budget_tokens,
                budget_usd=budget_usd,
                repeats=repeats,
                out=out,
                retriever_options=options,
                json_mode=json_mode,
                context_window=context_window,
                **{k: v for k, v in overrides.items() if k not in {"budget_tokens", "budget_usd"}},
            )
        except ValueError as exc:
            fail(validation_message(exc, OPTION_NAMES))
        if resume is None:  # a bad spec named by where it came from (resumes: stored); its API key only
            # when the run calls it (an extractive run judged by rules says an unused model in a note)
            checked_model(model, base_url, None, key=calls_answering_model(config))
        events = EventBus()
        runner = Runner(
            config, resume_dir=resume, events=events, resume_overrides=overrides if resume else None,
            retry_errors=retry_errors, command=command_line(),
        )
        runner.setting_notes += judge_notes  # said with the header and recorded in run.json
        # The header (the local-server profile, settings from the doctor) is said once the run starts
        # (trees or samples), i.e. after the endpoint's preflight passed: a server that is no OpenAI
        # API stays one error line.
        said = {"header": False, "notes": 0}

        def _say_header(event: RunEvent) -> None:
            # the header once; a note the runner adds later (--retry-errors, once the run's records
            # are open) at the next event. A wait during the preflight is no start: it is said on its
            # own, even with --quiet (a silent wait for a busy server was trial 11's complaint).
            if event.kind == "waiting":
                if quiet:
                    err_console.print(event.message, highlight=False, markup=False)
                return
            if event.kind == "warning":  # before any call, even with --quiet
                err_console.print(f"[yellow]warning:[/] {plain(event.message)}", highlight=False)
                return
            if not said["header"]:
                for line in [*([profile_line] if profile_line else []), *judge_lines]:
                    err_console.print(f"[dim]{line}[/]", highlight=False)
            said["header"] = True
            for note in runner.setting_notes[said["notes"] :]:
                err_console.print(f"[yellow]note:[/] {plain(note)}", highlight=False)
            said["notes"] = len(runner.setting_notes)

        events.subscribe(_say_header)

        async def _main():
            loop = asyncio.get_running_loop()
            presses = 0

            def _interrupt(name: str) -> None:
                nonlocal presses
                presses += 1
                if presses == 1:
                    how = "" if name == "SIGINT" else f" ({name})"
                    again = "Ctrl-C" if name == "SIGINT" else name
                    err_console.print(
                        f"\n[yellow]interrupted{how}:[/] no new samples start; writing the summary of what "
                        f"finished ({again} again to quit at once)"
                        if runner.sampling
                        else f"\n[yellow]interrupted{how}:[/] stopping before the first sample; nothing is "
                        f"written ({again} again to quit at once)"
                    )
                    runner.request_stop("interrupted")
                else:
                    runner.remove_unused_folders()  # before the first sample: no empty folder left behind
                    os._exit(EXIT_INTERRUPTED)  # samples.jsonl: a torn line is dropped on resume

            # SIGTERM and SIGHUP (a cancelled CI job, `timeout`, `docker stop`, a closed terminal) stop
            # the run as Ctrl-C does: it ends `interrupted` with its summary, never left "running"
            # (SIGHUP only when not ignored: a run under `nohup` goes on when its terminal closes)
            stops = [signal.SIGINT, signal.SIGTERM]
            if signal.getsignal(signal.SIGHUP) is not signal.SIG_IGN:
                stops.append(signal.SIGHUP)
            for sig in stops:
                loop.add_signal_handler(sig, _interrupt, sig.name)
            try:
                return await runner.run()
            finally:
                for sig in stops:
                    loop.remove_signal_handler(sig)

        try:
            if quiet:
                outcome = asyncio.run(_main())
            else:
                with ProgressView(console=console) as view:
                    events.subscribe(view.on_event)
                    outcome = asyncio.run(_main())
        except SetupInterrupted as exc:
            err_console.print(f"interrupted {exc}", highlight=False, markup=False)
            raise typer.Exit(EXIT_INTERRUPTED) from None
        except RunWriteError as exc:  # samples ran: not "nothing was run" (2), a failed run (4)
            fail(str(exc), ExitCode.ERRORS)
        except (RunSetupError, RetrieverConfigError, LLMError) as exc:
            fail(str(exc))
        except Exception as exc:  # dataset errors and the like: one clear line
            from bench.datasets.models import DatasetError

            if isinstance(exc, DatasetError | FileNotFoundError):
                fail(str(exc))
            raise

        for warning in outcome.warnings:
            err_console.print(f"[yellow]warning:[/] {plain(warning)}", highlight=False)
        print_summary(outcome.summary, console=console, rejudge=_rejudge_hint(outcome.run_dir))
        if outcome.skipped_retrievers:
            skipped = outcome.skipped_retrievers
            from pageindex.retrievers.base import plugin_model_hint

            no_model = all("needs a model" in why for why in skipped.values())
            hints = "".join(plugin_model_hint(name) for name in skipped)
            console.print(
                f"[yellow]skipped retrievers {', '.join(skipped)}:[/] no model is configured. {HOW_TO_MODEL}"
                f"{escape(hints)}"
                if no_model
                else "; ".join(f"skipped retriever {k}: {escape(v)}" for k, v in skipped.items()),
                highlight=False,
            )
        console.print(
            f"run {outcome.run_id}: {outcome.status}; {counted(outcome.samples_written, 'sample')} written"
            f"{f', {outcome.samples_skipped} already done' if outcome.samples_skipped else ''}; "
            f"{counted(len(outcome.dropped), 'question')} dropped (see dropped.jsonl) -> {outcome.run_dir}",
            highlight=False,
            markup=False,  # the run's name and folder as written: `-o '[draft] run'` printed ` run`
        )
        for note in spend_notes(outcome.unrecorded, outcome.sent, outcome.cached):
            err_console.print(f"note: {note}", highlight=False, markup=False)
        if outcome.status == "aborted_due_to_budget":
            # a resume without --budget spends the stored one again: where no sample fitted in it, it stops
            # at the same samples, writes nothing and is paid for again
            none_fit = (
                "; no sample finished within it, so the same budget stops at the same samples again"
                if outcome.samples_written == 0
                else ""
            )
            err_console.print(
                f"[yellow]budget spent:[/] the run stopped early; continue with: "
                f"{escape(resume_run_command(outcome.run_dir))} with a new --budget{none_fit}",
                highlight=False,
            )
            raise typer.Exit(EXIT_BUDGET)
        if outcome.status == "interrupted":
            err_console.print(f"interrupted; continue with: {escape(resume_run_command(outcome.run_dir))}")
            raise typer.Exit(EXIT_INTERRUPTED)
        if outcome.status == "failed":  # why, and how to go on, as run.json records it
            err_console.print(f"error: {outcome.summary.status_detail}", highlight=False, markup=False)
            raise typer.Exit(ExitCode.ERRORS)
        if outcome.too_many_errors:
            # the cause, which the samples' errors say (`give --context-window 4096`) and the summary does not
            from rich.markup import escape

            most = f"most often {escape(outcome.commonest_error)}; " if outcome.commonest_error else ""
            err_console.print(
                f"[bold red]too many errors:[/] {outcome.samples_errored} of {outcome.samples_total} samples "
                f"ended in error or a failed judge call ({outcome.error_rate:.0%}, above --max-error-rate "
                f"{outcome.max_error_rate:g}); {most}see {plain(outcome.run_dir / 'samples.jsonl')}",
                highlight=False,
            )
            raise typer.Exit(ExitCode.ERRORS)


def _rejudge_hint(run_dir: Path) -> str | None:
    """The run's own rejudge command, for answers left without a verdict."""
    from bench.rundir import RunDir, RunLoadError
    from bench.runinfo import rejudge_command

    try:
        return rejudge_command(run_dir, RunDir(run_dir).read_info())
    except (RunLoadError, OSError):
        return None


def _changed_on_resume(resume: Path, given: dict[str, tuple[object, str, object]]) -> list[str]:
    """The options of ``given`` whose value differs from the one the run stored, each said with both
    values ("--model (stored openai/a, given openai/b)"). Repeating the run's own command line with
    ``--resume`` appended is no change; a run.json that cannot be read makes every given option one."""
    from bench.rundir import RunDir, RunLoadError
    from bench.runinfo import stored_config

    try:  # with the model, judge and retrievers the run resolved (the ones it goes on with)
        stored = stored_config(RunDir(resume).read_info(), resume)
    except (RunLoadError, OSError):
        stored = {}
    changed = []
    for option, (_, field, value) in given.items():
        before = stored.get(field, _MISSING)
        if field == "out":  # the folder resumed is the run's, whatever path reached it
            same = Path(str(value)).resolve() == Path(resume).resolve()
        elif field == "data_dir" and before is not _MISSING and value is not None:
            # a run made without --data-dir ran on the demo data set: that folder given is no change
            from bench.runner import demo_dataset_dir

            stored_dir = demo_dataset_dir() if before is None else Path(str(before))
            same = stored_dir.resolve() == Path(str(value)).resolve()
        elif field in ("retrievers", "question_types", "question_ids") and isinstance(before, list):
            same = sorted(before) == sorted(value or [])  # the order runs samples, it means nothing
        else:
            same = before == (list(value) if isinstance(value, tuple) else value)
        if not same:
            was = f"stored {before}" if before is not None else "none stored"
            was = "not stored" if before is _MISSING else was
            changed.append(f"{option} ({was}, given {value})")
    return changed


_MISSING = object()


def _refuse_unused(
    retrievers: str | None, model: str | None, judge_model: str | None, judge_models: str | None,
    scripted_policy: str | None, json_mode: bool,
) -> None:
    """Options a new run would not use, or empty ones, refused before any work (one line, exit 2)."""
    given = (("--model", model), ("--judge-model", judge_model), ("--judge-models", judge_models))
    for option, value in given:
        if value is not None and not value.strip(" ,"):
            fail(f"{option} {value!r}: give a model spec (e.g. openai/gpt-4o-mini), or leave the option out")
    names = comma_list(retrievers)
    if twice := sorted({r for r in names if names.count(r) > 1}):
        fail(f"--retrievers names {twice[0]} more than once; each retriever runs once per question")
    specs = comma_list(",".join([configured_model(model) or "", judge_model or "", judge_models or ""]))
    if scripted_policy is not None and "scripted" not in specs:
        fail("--scripted-policy answers --model scripted (or a scripted --judge-model): no such model here")
    if json_mode and not specs:
        fail("--json-mode shapes a model's structured outputs: this run calls no model (give --model)")


def _judge_clients(
    model: str | None, base_url: str | None, judge_specs: list[str], judge_base_url: str | None,
    given: dict[str, object], resume: Path | None,
) -> tuple[dict[str, ClientSettings], list[str], list[str]]:
    """Each judge model's own client settings when its endpoint is not the answering model's (a remote
    answering model judged by a llama.cpp server on this machine, or the other way round; each model of a
    panel, whose models may be at several endpoints, for its own), settled for that endpoint as the
    answering model's are for its own: the flags (``--timeout``, ``--max-retries``, ``--json-mode`` apply
    to both), the doctor's cached findings for the judge model, the local-server profile, the defaults;
    with the header lines of their profiles and the doctor's notes. A judge model not in the mapping
    shares the run's settings (the same endpoint, no answering model, or a resumed run, which keeps the
    settings it stored)."""
    from pageindex.llm.profile import endpoint_url, settle_client

    answering = configured_model(model)
    if resume is not None or not answering:
        return {}, [], []
    judge_url = judge_base_url or base_url
    overrides = "the judge model's endpoint; flags override it: --timeout, --max-retries"
    chosen: dict[str, ClientSettings] = {}
    lines: list[str] = []
    said: list[str] = []
    for spec in judge_specs:
        if spec in chosen or spec.split("/", 1)[0] == "scripted":
            continue
        if endpoint_url(spec, judge_url) == endpoint_url(answering, base_url):
            continue
        chosen[spec], line, notes = settle_client(spec, judge_url, given, overrides=overrides)
        lines += [line] if line and line not in lines else []
        said += [f"settings from pageindex doctor for the judge: {note}" for note in notes]
    return chosen, lines, list(dict.fromkeys(said))


def _local_profile(
    model: str | None,
    base_url: str | None,
    concurrency: int | None,
    timeout: float | None,
    max_retries: int | None,
    resume: Path | None,
    *,
    judge_model: str | None = None,
    judge_base_url: str | None = None,
) -> tuple[dict[str, object], str | None]:
    """Settings of the local-server profile for a loopback base URL that the user did not give
    (a resumed run keeps its stored ones), and the header line that says so (None: none apply).
    The endpoint is the answering model's; in a run with none (``-r extractive --judge llm``) it is
    the judge model's, whose calls a one-at-a-time server otherwise met with the cloud defaults."""
    from pageindex.llm.profile import settle

    given = {"concurrency": concurrency, "timeout_s": timeout, "max_retries": max_retries}
    if resume is not None:  # the stored settings win over the profile; flags still win
        return ({"retry_timeouts": True} if max_retries is not None else {}), None
    # The cached `pageindex doctor` findings win over the profile (the runner applies them, with
    # their notes): the settings they decide are left out of the profile and of its header line.
    spec, url = configured_model(model), base_url
    if spec is None and judge_model:
        spec, url = judge_model, judge_base_url or base_url
    settled = settle(spec, url, given)
    settings, sources = settled.settings, settled.sources
    out: dict[str, object] = {
        name: settings[name] for name, source in sources.items() if source == "local-server profile"
    }
    if max_retries is not None:
        out["retry_timeouts"] = True
    return out, settled.note()
