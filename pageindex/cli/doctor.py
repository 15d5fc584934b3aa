"""``pageindex doctor``: what a model endpoint can do, found by a few bounded calls, before a run."""

from __future__ import annotations

import json

import typer
from rich.table import Table

from pageindex.cli._common import (
    console,
    err_console,
    examples,
    fail,
    judge_base_url_option,
    one_line,
    plain,
    timeout_option,
)

EXIT_CODES = (
    "Exit codes: 0 usable; 1 usable with limits (the verdict says which); 2 bad input, unreachable "
    "or unusable (nothing else was run); 130 interrupted."
)
STYLE = {"ok": "green", "warn": "yellow", "fail": "red", "info": "cyan", "skip": "dim"}
MARK = {"ok": "yes", "warn": "limit", "fail": "no", "info": "info", "skip": "skipped"}


def register(app: typer.Typer, bench: typer.Typer) -> None:
    app.command(
        "doctor",
        help="Probe a model endpoint with a few bounded calls (about 1,000 tokens in all) and report "
        "what it can do: OpenAI compatibility, usage, tool calls, JSON mode and schema, max_tokens, "
        "context window, speed and price; then the flags to use or why the LLM retrievers cannot "
        "run. Results are cached per endpoint and model for 7 days (--refresh probes again; "
        "an unusable verdict is not cached).\n\n"
        + EXIT_CODES,
        epilog=examples(
            "pageindex doctor -m openai/gpt-4o-mini",
            "pageindex doctor -m openai/qwen2.5-7b --base-url http://127.0.0.1:8080/v1 --probe-context",
            "pageindex doctor -m ollama/llama3.1 --judge-model ollama/qwen2.5 --json",
        ),
    )(doctor)


def doctor(
    model: str | None = typer.Option(
        None,
        "--model",
        "-m",
        help="Model spec, e.g. openai/<model> or ollama/<model> (default $PAGEINDEX_MODEL).",
    ),
    base_url: str | None = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint of the model."),
    judge_model: str | None = typer.Option(None, "--judge-model", help="Also probe this judge model spec."),
    judge_base_url: str | None = judge_base_url_option(
        help="Endpoint of the judge model (default: --base-url)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the findings as JSON instead of a table."),
    probe_context: bool = typer.Option(
        False, "--probe-context", help="Find a lower bound of the context window (up to 4 more calls)."
    ),
    probe_tool_cap: bool = typer.Option(
        False, "--probe-tool-cap",
        help="Also on a one-at-a-time server, probe max_tokens with a tool offered (a server that "
        "ignores it stays busy to the end of its context: minutes).",
    ),
    refresh: bool = typer.Option(False, "--refresh", help="Probe again even if cached findings are fresh."),
    timeout: float = timeout_option(30.0, help="Seconds each probe call may take."),
) -> None:
    from pageindex.llm import LLMError
    from pageindex.llm.doctor import run_doctor
    from pageindex.llm.spec import MODEL_ENV, model_choice, parse_spec, shared_key_warning
    from pageindex.llm.types import BaseURLError

    wanted, source = model_choice(model)
    if not wanted:
        example = "--model openai/<model> --base-url http://127.0.0.1:8080/v1"
        fail(f"--model is required (e.g. {example}), or ${MODEL_ENV}")
    targets = [("model", wanted, base_url, source)]
    if judge_base_url and not judge_model:
        fail("--judge-base-url is the endpoint of --judge-model: give --judge-model too, or drop it")
    if judge_model:
        targets.append(("judge", judge_model, judge_base_url or base_url, "--judge-model"))
    specs = {}
    for role, text, url, source in targets:
        try:
            spec = parse_spec(text, base_url=url, role=role)
        except BaseURLError as exc:  # it names the URL
            fail(str(exc))
        except LLMError as exc:
            fail(f"{source}: {exc}")
        if spec.base_url is None:
            fail(f"doctor probes a model server; {spec.spec} has none (use openai/<model> or ollama/<model>)")
        specs[role] = spec
    if said := shared_key_warning(specs["model"], [specs["judge"]] if "judge" in specs else []):
        _warn(said)  # before any probe
    reports = {}
    for role, spec in specs.items():
        # the model's findings for the same model at the same endpoint, when sent the same key
        seen = (spec.spec, spec.display_url, spec.api_key)
        same = next((reports[r] for r, s in specs.items()
                     if r in reports and (s.spec, s.display_url, s.api_key) == seen), None)  # fmt: skip
        try:
            reports[role] = same or run_doctor(
                spec, timeout=timeout, probe_context=probe_context, probe_tool_cap=probe_tool_cap,
                refresh=refresh, warn=_warn,
            )
        except LLMError as exc:
            fail(str(exc))
    code = max(r.exit_code for r in reports.values())
    if as_json:
        out = {role: r.model_dump(mode="json") for role, r in reports.items()}
        out.setdefault("judge", None)
        out["exit_code"] = code
        print(json.dumps(out, indent=2))
    else:
        for role, report in reports.items():
            _print(report, role)
    for role, report in reports.items():
        if report.verdict == "unusable":
            # the findings stay on stdout (a table, or JSON a script reads); the one error line a
            # script or a user scanning stderr expects goes to stderr, as every other command's does
            why = "; ".join(report.reasons)
            if report.spec not in why:
                who = "judge model " if role == "judge" else ""
                why = f"{who}{report.spec} at {report.url} is unusable: {why}"
            err_console.print(f"[bold red]error:[/] {plain(one_line(why))}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def _warn(message: str) -> None:
    err_console.print(f"[yellow]warning:[/] {plain(one_line(message))}", highlight=False, soft_wrap=True)


def _print(report, role: str) -> None:  # type: ignore[no-untyped-def]
    when = report.probed_at.strftime("%Y-%m-%d %H:%M UTC")
    source = f"cached from {when}; --refresh probes again" if report.cached else f"probed {when}"
    title = f"{'judge ' if role == 'judge' else ''}{report.spec} at {report.url} ({source})"
    # a model's reply, a URL or a server's words are quoted as written: a Mistral model's `[/INST]` broke
    # the markup, and the table came out with every result as `[green]yes[/]`
    table = Table(title=plain(title), title_justify="left", show_lines=False)
    table.add_column("check")
    table.add_column("result")
    table.add_column("detail", overflow="fold")
    table.add_column("latency", justify="right")
    for check in report.checks:
        style = STYLE[check.status]
        latency = f"{check.latency_s:.2f}s" if check.latency_s is not None else ""
        table.add_row(plain(check.label), f"[{style}]{MARK[check.status]}[/]", plain(check.detail), latency)
    console.print(table)
    if not report.cached and report.calls:  # none counted when the preflight failed (it made some)
        console.print(f"{report.calls} calls, about {report.tokens_used:,} tokens", highlight=False)
    settings = report.settings
    if report.verdict == "unusable":
        why = plain("; ".join(report.reasons))
        console.print(f"[bold red]verdict: unusable[/] -- {why}", highlight=False)
        return
    label = "usable" if report.verdict == "usable" else "usable with limits"
    colour = "green" if report.verdict == "usable" else "yellow"
    console.print(f"[bold {colour}]verdict: {label}[/]; use: {plain(settings.flags())}", highlight=False)
    for reason in report.reasons:
        console.print(f"  limit: {reason}", highlight=False, markup=False)
    if settings.context_budget_tokens is not None:
        console.print(
            f"  context budget: about {settings.context_budget_tokens:,} prompt tokens per call "
            f"(window {settings.context_window:,})",
            highlight=False,
        )
    for note in settings.notes:
        console.print(f"  note: {note}", highlight=False, markup=False)
