"""``pageindex bench judge``: judge answers that already exist, and measure agreement with human labels."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from pageindex.cli._common import (
    ExitCode,
    cache_option,
    cache_path_option,
    concurrency_option,
    console,
    err_console,
    examples,
    fail,
    judge_base_url_option,
    judge_models_option,
    max_error_rate_option,
    model_client,
    out_option,
    output_file,
    plain,
)
from pageindex.wording import counted

# Help of the judge options bench judge and bench rejudge share (bench run's judge defaults to --model).
JUDGE_MODEL_HELP = "Judge model spec for llm and hybrid, e.g. openai/gpt-4o-mini."
JUDGE_CACHE_HELP = (
    "LLM cache for the judge model: off (default) | rw (record and reuse) | replay (cache only, no "
    "network; what a replay/MODEL judge reads)."
)
CACHE_PATH_HELP = "LLM cache file (default: $PAGEINDEX_CACHE_DIR/llm.sqlite)."


def _check_label_file(option: str, name: str, files: list[Path], labels: Path, after: str = "") -> None:
    """``name`` (of ``--exclude`` or ``--holdout``) is one of ``files``' names or stems, as written, or one
    ``error:`` line naming the label files (and the name meant, where only the case differs). Matched
    exactly, case included, as every enumerated option (``--retrievers``, ``--judge``, ``--test``,
    ``--by``) and the file system are; it named no label file, so ``--holdout GPT-4_oracle`` said
    nothing of ``gpt-4_oracle``."""
    from pageindex.wording import shortened

    names = [n for p in files for n in (p.name, p.stem)]
    if name in names:
        return
    meant = next((n for n in names if n.casefold() == name.casefold()), None)
    hint = f" (names match as written: did you mean {meant!r}?)" if meant else ""
    listed = shortened(sorted(p.stem for p in files), 12) or "none"
    fail(f"{option} {name!r}: not a label file in {labels}{after}{hint}; the label files: {listed}")


def register(app: typer.Typer, bench: typer.Typer) -> None:
    bench.command(
        "judge",
        help="Judge existing answers (JSONL with question, gold_answer, model_answer[, label, id], or a "
        "FinanceBench labels folder) and write one verdict per row; prints agreement with human labels "
        "where rows have them. Exit codes: 0 done; 2 bad input (nothing judged or written); 4 more than "
        "--max-error-rate of the rows got no verdict (a failed judge call or a malformed row); 130 "
        "interrupted.",
        epilog=examples(
            "pageindex bench judge -i answers.jsonl -o verdicts.jsonl",
            "pageindex bench judge --labels ../shared/financebench --per-file --abstain",
            "pageindex bench judge -i answers.jsonl -o verdicts.jsonl --judge llm "
            "--judge-model ollama/llama3.1 --judge-base-url http://127.0.0.1:11434/v1",
        ),
    )(judge)


def judge(
    input: Path | None = typer.Option(
        None, "--input", "-i", help="ANSWERS.jsonl: question, gold_answer, model_answer."
    ),
    labels: Path | None = typer.Option(
        None,
        "--labels",
        help="Instead of --input: a FinanceBench-format directory (DIR/labels/*.jsonl) or a folder of "
        "label files; every file is read and tagged with its name.",
    ),
    judge_name: str = typer.Option("rules", "--judge", "-j", help="Judge: rules, llm, hybrid or panel."),
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
    output: Path | None = out_option(
        help="VERDICTS.jsonl to write (same order and ids); required with --input."
    ),
    concurrency: int = concurrency_option(8, "Rows judged at once (default 8)."),
    max_error_rate: str = max_error_rate_option(of="rows"),
    by: str | None = typer.Option(
        None,
        "--by",
        help="Also print agreement per value of this field: model_name (the default, if present), "
        "source (the label file), decided_by or judge_version.",
    ),
    per_file: bool = typer.Option(
        False,
        "--per-file",
        help="Agreement per label file (three-class agreement, Cohen's kappa; mean and worst file) and "
        "the confusion matrix summed over files.",
    ),
    abstain: bool = typer.Option(
        False,
        "--abstain",
        help="rules judge: say 'uncertain' where the rules do not settle an answer (hybrid always does "
        "and sends those to the LLM judge); agreement is then over the decided rows.",
    ),
    exclude: list[str] = typer.Option(
        [], "--exclude", help="With --labels: leave this label file (name or stem) out; repeatable."
    ),
    holdout: list[str] = typer.Option(
        [],
        "--holdout",
        help="With --labels --per-file: report this label file (name or stem) in a separate hold-out "
        "table; repeatable.",
    ),
) -> None:
    from bench.datasets.models import DatasetError
    from bench.judges.batch import (
        is_verdicts_file,
        judge_rows,
        label_files,
        read_answer_rows,
        read_label_dir,
        write_verdict_rows,
    )
    from bench.judges.calibration import normalize_label
    from bench.judges.report import GROUP_FIELDS, print_agreement, print_label_report
    from bench.samples import above_error_rate
    from pageindex.llm.cache import run_recording

    if by is not None and by not in GROUP_FIELDS:
        fail(f"--by {by}: agreement can be grouped by {', '.join(GROUP_FIELDS)}")
    if (input is None) == (labels is None):
        fail("give exactly one of --input ANSWERS.jsonl or --labels DIR")
    if input is not None and output is None:
        fail("--out is required with --input (the VERDICTS.jsonl to write)")
    if (exclude or holdout) and labels is None:
        fail("--exclude and --holdout need --labels DIR")
    if holdout and not per_file:
        fail("--holdout needs --per-file (the hold-out files get their own table)")
    if abstain and judge_name not in ("rules", "hybrid"):
        fail(f"--abstain applies to --judge rules (hybrid always abstains inside), not {judge_name!r}")
    if labels is not None:
        if not labels.is_dir():
            fail(f"--labels {labels}: no such directory")
        every = label_files(labels)
        for name in exclude:
            _check_label_file("--exclude", name, every, labels)
        files = label_files(labels, exclude=set(exclude))
        for name in holdout:
            _check_label_file("--holdout", name, files, labels, " after --exclude" if exclude else "")
        if not files:
            where = f"{labels}/labels" if (labels / "labels").is_dir() else str(labels)
            after = " (after --exclude)" if exclude else ""
            fail(
                f"--labels {labels}: no *.jsonl label files in {where}{after}; a FinanceBench folder keeps "
                "them in labels/"
            )
    elif input is not None and not input.is_file():
        what = "is a directory" if input.is_dir() else "no such file"
        fail(f"--input {input}: {what}; give an answers JSONL file")
    if output is not None:
        read = [input] if input is not None else label_files(labels)  # type: ignore[arg-type]
        output_file(
            "--out", output, inputs=read, replaces=is_verdicts_file, kind="a verdicts file (VERDICTS.jsonl)"
        )
    judge_obj, clients = _build_judge(
        judge_name, judge_model, base_url, abstain=abstain, cache=cache, cache_path=cache_path,
        models=judge_models,
    )  # fmt: skip
    source = labels if labels is not None else input
    try:
        if labels is not None:
            parsed = read_label_dir(labels, exclude=set(exclude))
        else:
            parsed = read_answer_rows(source)
    except DatasetError as exc:  # names the file and why (a UTF-16 file that is not UTF-16 text)
        fail(str(exc))
    except OSError as exc:
        fail(f"{source}: cannot read ({exc})")
    if not parsed:
        fail(f"{source}: no rows")
    if all(p.error for p in parsed):  # not an answers file at all: say so, write nothing
        first = parsed[0]
        fail(
            f"{source}: no row is a JSON object with question, gold_answer and model_answer "
            f"(line {first.line}: {first.error})"
        )
    unknown = [p.row.label for p in parsed if p.row and p.row.label and normalize_label(p.row.label) is None]
    if unknown:
        # Never dropped in silence: the agreement below is over fewer rows than were read.
        err_console.print(
            f"[yellow]warning:[/] {len(unknown)} rows have a label that is none of correct, incorrect or "
            f"refusal (e.g. {unknown[0]!r}): they are judged but left out of the agreement",
            highlight=False,
        )
    try:
        caches = [getattr(client, "cache", None) for client in clients]
        rows = run_recording(judge_rows(judge_obj, parsed, concurrency=concurrency), caches)
    except KeyboardInterrupt:
        # nothing is written half-way; what a model judge already answered is kept only by the cache
        kept = ""
        # a model judge (a plug-in judge calls none of ours) whose replies were all recorded (those not
        # recorded, another process holding the file, are said by say_unwritten_cache below)
        if (judge_model or judge_models) and not any(cache and cache.unwritten for cache in caches):
            kept = ("; the judge model's replies received so far are kept in the cache: the same command "
                    "again reuses them" if cache == "rw" else "; give --cache rw to keep the judge model's "
                    "replies, so that a rerun reuses those already received")  # fmt: skip
        untouched = f" ({output} untouched)" if output else ""
        err_console.print(f"interrupted: nothing written{untouched}{kept}", highlight=False, markup=False)
        say_unwritten_cache(clients)
        raise typer.Exit(ExitCode.INTERRUPTED) from None
    if output is not None:
        try:
            write_verdict_rows(output, rows)
        except OSError as exc:
            fail(f"{output}: cannot write ({exc.strerror or exc})")
    errors = [r for r in rows if r.status == "error"]
    version = getattr(judge_obj, "version", None)
    unread = sum(p.row is None for p in parsed)  # malformed rows: never sent to the judge
    judged = f"{len(rows) - unread:,} of {counted(len(rows), 'row')}" if unread else counted(len(rows), "row")
    console.print(
        f"{judged} judged by {judge_obj.name}"
        + (f" (version {version})" if version else "")
        + (f" -> {output}" if output else "")
        + (f"; {counted(len(errors), 'row')} with errors" if errors else ""),
        highlight=False,
        markup=False,
    )
    for r in errors[:10]:
        row = f"({plain(r.id or 'no id')}): {plain(r.error)}"
        console.print(f"  [red]{plain(r.where)}[/] {row}", highlight=False)
    say_unwritten_cache(clients)
    if per_file:
        print_label_report(console, rows, holdout=set(holdout))
    else:
        print_agreement(console, rows, by=by)
    # Rows that got no verdict: the judge failed on them, or they were malformed (listed above). Too
    # many, and the verdicts file and the agreement above say little: exit 4 (the file is written).
    failed = [r for r in rows if r.status == "error"]
    malformed = sum(p.row is None for p in parsed)
    rate = float(max_error_rate)  # the option's callback made it a fraction
    if above_error_rate(len(failed), len(rows), rate):
        why = [
            counted(n, noun)
            for n, noun in ((malformed, "malformed row"), (len(failed) - malformed, "failed judge call"))
            if n
        ]
        err_console.print(
            f"[bold red]judge errors:[/] {len(failed)} of {len(rows)} rows got no verdict "
            f"({', '.join(why)}; more than --max-error-rate {rate:g}); "
            f"first: {plain(failed[0].where)}: {plain(failed[0].error)}",
            highlight=False,
        )
        raise typer.Exit(ExitCode.ERRORS)


def say_unwritten_cache(clients: list) -> None:
    """Warn of the judge model's replies its LLM cache could not record (another process held the file
    past the busy timeout), as ``bench run`` does: the verdicts stand, a replay of them would miss. Called
    after ``run_recording``: the judge calls queued their recordings (the loop went on judging while one
    waited for the file), and it waited for them, or gave up at a Ctrl-C; ``unwritten_note`` flushes
    again (a blocking wait, with nothing else running here)."""
    caches = {id(c.cache): c.cache for c in clients if getattr(c, "cache", None) is not None}
    for cache in caches.values():
        if note := cache.unwritten_note():
            err_console.print(f"warning: {note}", style="yellow", markup=False, highlight=False)


def _build_judge(
    name: str, model: str | None, base_url: str | None, *, abstain: bool = False, cache: str = "off",
    cache_path: Path | None = None, models: str | None = None,
):
    """The judge ``name`` with its model (``--judge-model``) or panel (``--judge-models``), as in
    ``bench run``, and the model clients it calls (none for ``rules``); an option the judge would not
    use is one ``error:`` line."""
    from bench.config import comma_list
    from bench.judges.base import KIND, judge_model_need, judge_names, make_judge
    from pageindex import registry
    from pageindex.llm.cache import CACHE_MODES, open_cache
    from pageindex.llm.types import LLMConfigError

    if name not in judge_names():
        fail(f"unknown judge {name!r}; choose one of {', '.join(judge_names())}{registry.missing_hint(KIND)}")
    if cache not in CACHE_MODES:
        fail(f"--cache {cache!r}: must be {', '.join(CACHE_MODES)}")
    need = judge_model_need(name)
    if need == "none":
        unused = [opt for opt, value in (("--judge-model", model), ("--judge-models", models),
                  ("--judge-base-url", base_url), ("--cache", cache != "off"), ("--cache-path", cache_path))
                  if value]  # fmt: skip
        if unused:
            fail(f"--judge {name} takes no model: {', '.join(unused)} would not be used; drop them")
        return make_judge(name, **({"abstain": abstain} if abstain else {})), []
    if need == "panel":
        if model:
            fail("--judge panel takes --judge-models a,b: --judge-model would not be used")
        if not models:
            fail("--judge panel needs --judge-models a,b (two or more model specs)")
        model = models
    elif models:
        fail(f"--judge {name} takes one model (--judge-model): --judge-models would not be used")
    elif not model:
        fail(f"--judge {name} needs --judge-model (e.g. openai/gpt-4o-mini or ollama/llama3.1)")
    elif "," in model:
        panel = "--judge panel --judge-models"
        fail(f"--judge-model {model!r}: --judge {name} takes one model (for a panel: {panel})")
    try:
        replies = open_cache(cache, cache_path)  # type: ignore[arg-type]
    except LLMConfigError as exc:
        fail(str(exc))
    specs = comma_list(model)
    # one clear line (exit 2) for a bad spec, a missing key or an unreachable server
    if need == "panel" and len(specs) < 2:  # said before any endpoint is asked
        fail("--judge panel needs at least two comma-separated --judge-models specs")
    settled = [_judge_settings(s, base_url) for s in specs]
    option = "--judge-models" if need == "panel" else "--judge-model"
    clients = [
        model_client(s, role="judge", base_url=base_url, cache=replies, option=option, policy_flag=False,
                     **settings)
        for s, (settings, _) in zip(specs, settled, strict=True)
    ]
    for note in dict.fromkeys(n for _, notes in settled for n in notes):  # once each, once it answered
        err_console.print(f"[dim]{note}[/]", highlight=False)
    for client in clients:  # a llama.cpp server answers any name: the verdicts would carry a wrong one
        found = getattr(client, "preflight_result", None)
        if found is not None and (said := found.unlisted(client.model)):
            err_console.print(f"[yellow]warning:[/] {plain(said)}", highlight=False)
    if need == "panel":
        return make_judge(name, model_client=clients), clients
    return make_judge(name, model_client=clients[0]), clients


def _judge_settings(spec: str, base_url: str | None) -> tuple[dict[str, Any], list[str]]:
    """The judge client's settings as ``bench run`` settles them (``pageindex.llm.profile.settle``),
    and the header lines that say where they came from: the cached ``pageindex doctor`` findings
    (JSON mode where tool calls fail, a longer timeout, one request at a time), else, for a server
    on this machine, the local-server profile (one request in flight, a 600 s timeout, no retry
    after a client timeout), else the defaults. The cloud defaults (8 rows' requests at once, 60 s,
    timeouts retried) made a one-at-a-time llama.cpp judge time out rows that it went on computing,
    and a judge endpoint without tool calls failed every row whatever the doctor had found."""
    from pageindex.llm.profile import settle_client

    if spec.split("/", 1)[0] == "scripted":
        return {}, []
    given = {"timeout_s": None, "max_retries": None}
    found, note, doctor_notes = settle_client(
        spec, base_url, given, overrides="as in bench run; a pageindex doctor finding wins"
    )
    notes = [f"note: settings from pageindex doctor: {n}" for n in doctor_notes]
    return found.client_kwargs(8), [*([note] if note else []), *notes]
