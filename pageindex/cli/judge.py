"""``pageindex bench judge``: judge answers that already exist, and measure agreement with human labels."""

from __future__ import annotations

from pathlib import Path

import typer

from pageindex.cli._common import console, fail, model_client


def register(app: typer.Typer, bench: typer.Typer) -> None:
    bench.command(
        "judge",
        help="Judge existing answers (JSONL with question, gold_answer, model_answer[, label, id]) and "
        "write one verdict per row; prints agreement with human labels where rows have them.",
    )(judge)


def judge(
    input: Path = typer.Option(
        ..., "--input", "-i", help="ANSWERS.jsonl: question, gold_answer, model_answer."
    ),
    judge_name: str = typer.Option("rules", "--judge", help="Judge: rules, llm, hybrid or panel."),
    judge_model: str | None = typer.Option(
        None,
        "--judge-model",
        help="Judge model spec, e.g. openai/gpt-4o-mini (llm, hybrid); comma-separated specs for panel.",
    ),
    base_url: str | None = typer.Option(
        None, "--base-url", help="OpenAI-compatible endpoint for the judge model."
    ),
    output: Path = typer.Option(..., "--output", "-o", help="VERDICTS.jsonl to write (same order and ids)."),
    concurrency: int = typer.Option(8, "--concurrency", min=1, help="Rows judged at once."),
    by: str | None = typer.Option(
        None,
        "--by",
        help="Also print agreement per value of this input field (default: model_name if present).",
    ),
) -> None:
    import asyncio

    from bench.judges.batch import judge_rows, read_answer_rows, write_verdict_rows
    from bench.judges.report import print_agreement

    if not input.is_file():
        fail(f"{input}: no such file")
    judge_obj = _build_judge(judge_name, judge_model, base_url)
    try:
        parsed = read_answer_rows(input)
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"{input}: cannot read ({exc})")
    if not parsed:
        fail(f"{input}: no rows")
    rows = asyncio.run(judge_rows(judge_obj, parsed, concurrency=concurrency))
    try:
        write_verdict_rows(output, rows)
    except OSError as exc:
        fail(f"{output}: cannot write ({exc.strerror or exc})")
    errors = [r for r in rows if r.status == "error"]
    console.print(
        f"{len(rows)} rows judged by {judge_name} -> {output}"
        + (f"; {len(errors)} rows with errors" if errors else ""),
        highlight=False,
    )
    for r in errors[:10]:
        console.print(f"  [red]line {r.line}[/] ({r.id or 'no id'}): {r.error}", highlight=False)
    print_agreement(console, rows, by=by)


def _build_judge(name: str, model: str | None, base_url: str | None):
    from bench.judges.base import judge_names, make_judge

    if name not in judge_names():
        fail(f"unknown judge {name!r}; choose one of {', '.join(judge_names())}")
    if name == "rules":
        return make_judge("rules")
    if not model:
        fail(f"--judge {name} needs --judge-model (e.g. openai/gpt-4o-mini or ollama/llama3.1)")
    specs = [s.strip() for s in model.split(",") if s.strip()]
    # one clear line (exit 2) for a bad spec, a missing key or an unreachable server
    clients = [model_client(s, role="judge", base_url=base_url) for s in specs]
    if name == "panel":
        if len(clients) < 2:
            fail("--judge panel needs at least two comma-separated --judge-model specs")
        return make_judge("panel", model_client=clients)
    return make_judge(name, model_client=clients[0])
