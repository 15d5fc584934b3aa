"""``pageindex bench datasets``: fetch FinanceBench, write the demo (or bad-filing) dataset, validate."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from pageindex.cli._common import (
    ExitCode,
    console,
    err_console,
    examples,
    fail,
    out_option,
    output_dir,
    plain,
    timeout_option,
)

if TYPE_CHECKING:
    from bench.datasets.validation import ValidationResult

datasets_app = typer.Typer(
    name="datasets",
    help="Get, generate and check FinanceBench-format datasets (questions.jsonl, documents.jsonl, pdfs/).",
    epilog=examples(
        "pageindex bench datasets fetch financebench --out datasets/financebench",
        "pageindex bench datasets demo --out datasets/demo",
        "pageindex bench datasets validate datasets/financebench --strict",
    ),
    no_args_is_help=True,
)


def register(app: typer.Typer, bench: typer.Typer) -> None:
    bench.add_typer(datasets_app, name="datasets")


@datasets_app.command(
    "fetch",
    help="Download a public dataset into DIR, resuming partial files and verifying finished ones. "
    "Re-run the same command to resume after an interruption. Exit codes: 0 every file fetched or "
    "verified; 2 bad input, or the source unreachable or not the dataset (nothing fetched); 4 some files "
    "failed (the rest kept; the last line says whether a re-run resumes them); 130 interrupted.",
    epilog=examples(
        "pageindex bench datasets fetch financebench --out datasets/financebench",
        "pageindex bench datasets fetch financebench -o datasets/fb --retries 5 --timeout 120",
    ),
)
def fetch(
    dataset: str = typer.Argument(..., help="Which dataset: financebench."),
    out_dir: Path = typer.Argument(None, help="Directory to write (same as --out; kept for old scripts)."),
    out: Path = out_option(help="Directory to write (created if needed)."),
    base_url: str | None = typer.Option(
        None,
        "--base-url",
        help="Where the files are: BASE/data/financebench_open_source.jsonl, "
        "BASE/data/financebench_document_information.jsonl, BASE/pdfs/{doc_name}.pdf "
        "(default: the patronus-ai/financebench GitHub repository).",
    ),
    retries: int = typer.Option(
        3, "--retries", min=0, help="Retries per file (each resumes where it stopped)."
    ),
    timeout: float = timeout_option(60.0, help="Seconds to wait for the server per read."),
) -> None:
    from bench.datasets.fetch import DEFAULT_BASE_URL, FetchError, FetchEvent, fetch_financebench
    from pageindex.wording import counted

    if dataset.lower() != "financebench":
        fail(f"unknown dataset {dataset!r}; available: financebench")
    if base_url is not None:  # tried four times, with back-off, as if the server were down
        from pageindex.llm.redact import redact_url
        from pageindex.llm.spec import base_url_problem

        if problem := base_url_problem(base_url):
            fail(f"--base-url {redact_url(base_url)}: {problem} (the default is {DEFAULT_BASE_URL})")
    out_dir = _dataset_folder(output_dir(out_dir, out), "datasets/financebench")
    _never_over_what_fetch_did_not_write(out_dir)

    failed: list[FetchEvent] = []  # listed after the run: a fetch that cannot start is one error line
    done: list[FetchEvent] = []

    def show(event: FetchEvent) -> None:
        if event.status == "failed":
            failed.append(event)
            return
        done.append(event)
        style = {"skipped": "dim", "replaced": "yellow", "resumed": "cyan"}.get(event.status, "green")
        size = f"{event.size / 1e6:.1f} MB" if event.size else ""
        said = plain(f"{event.path} {size} {event.detail}")
        console.print(f"[{style}]{event.status:>10}[/] {said}", highlight=False)

    try:
        report = fetch_financebench(
            out_dir, base_url=base_url or DEFAULT_BASE_URL, retries=retries, timeout=timeout, progress=show
        )
    except FetchError as exc:  # unreachable or not a dataset: nothing was fetched
        fail(str(exc), code=ExitCode.BAD_INPUT)
    except KeyboardInterrupt:  # it was the bare "interrupted": the help's "re-run to resume" was not said
        parts = sorted(p.name for p in (out_dir / "pdfs").glob("*.part"))  # none: no folder either
        kept = f"; {parts[0]} is kept and resumed" if parts else ""
        files = counted(len(done), "file")
        err_console.print(
            plain(f"interrupted{kept}: run the same command again to go on ({files} done)"),
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(ExitCode.INTERRUPTED) from None
    except OSError as exc:
        fail(f"{out_dir}: cannot write ({exc.strerror or exc})")
    for event in failed:
        console.print(f"[red]{event.status:>10}[/] {plain(f'{event.path} {event.detail}')}", highlight=False)
    counts = ", ".join(
        f"{report.count(s)} {s}"
        for s in ("downloaded", "resumed", "replaced", "skipped", "failed")
        if report.count(s)
    )
    console.print(
        f"{out_dir}: {report.questions} questions over {report.documents} filings; files: {counts}",
        markup=False,
        soft_wrap=True,
    )
    if report.failed:
        fail(_failed_files(report.failed), code=ExitCode.ERRORS)


def _failed_files(failed: list) -> str:
    """The last line of a fetch where files failed: a re-run resumes a download that broke off, but not
    a file the source refused (HTTP 4xx: not there, or not allowed), which it said to re-run all the
    same."""
    import re

    refused = [e for e in failed if re.search(r": HTTP 4\d\d$", e.detail)]
    said = f"{len(failed)} file(s) failed"
    if not refused:
        return f"{said}; run the same command again to resume"
    first = refused[0].detail.rsplit(": ", 1)[-1]
    which = f"{refused[0].path}" + (f" and {len(refused) - 1} more" if len(refused) > 1 else "")
    fix = "check --base-url, or run the same command again once the source has them"
    if len(refused) == len(failed):
        return f"{said}: the source refused them ({first}: {which}); {fix}"
    rest = len(failed) - len(refused)
    resume = "run the same command again to resume"
    return f"{said}: {rest} broke off ({resume}), {len(refused)} the source refused ({first}: {which}; {fix})"


def _dataset_folder(out_dir: Path, example: str) -> Path:
    """``out_dir``, unless it names no folder of its own: ``-o ''`` (an unset variable) is ``.``, and
    wrote the dataset's files among whatever the current folder holds; ``-o "$PWD"``, ``-o ~`` when
    there, or any folder the current one lies in, did the same by another name; a folder that holds a
    run got the dataset's files among the run's."""
    if out_dir.name in {"", ".", ".."} or Path.cwd().is_relative_to(out_dir.expanduser().resolve()):
        fail(f"--out {str(out_dir)!r}: give the dataset a folder of its own, e.g. {example}")
    from bench.rundir import RunDir

    if held := RunDir(out_dir).held_run():  # a run's folder (as bench run -o refuses it)
        fail(f"--out {out_dir}: {held}; give the dataset a folder of its own, e.g. {example}")
    return out_dir


def _never_over_what_fetch_did_not_write(out_dir: Path) -> None:
    """A folder holding a dataset (``questions.jsonl``, ``documents.jsonl`` or a PDF in ``pdfs/``) with
    no ``manifest.json`` was not written by fetch: its files would be written over (a dataset of the
    user's own, its PDFs "replaced")."""
    from bench.datasets.fetch import MANIFEST_FILE
    from bench.datasets.financebench import DOCUMENTS_FILE, PDF_DIR, QUESTIONS_FILE

    if (out_dir / MANIFEST_FILE).exists():
        return  # an earlier fetch: resumed and verified
    held = [name for name in (QUESTIONS_FILE, DOCUMENTS_FILE) if (out_dir / name).exists()]
    if (out_dir / PDF_DIR).is_dir() and any((out_dir / PDF_DIR).glob("*.pdf")):
        held.append(f"{PDF_DIR}/*.pdf")
    if held:
        fail(
            f"--out {out_dir}: holds a dataset that fetch did not write ({', '.join(held)}, and no "
            f"{MANIFEST_FILE}); choose another folder"
        )


def _demo_filings(out_dir: Path) -> set[str]:
    """The filings of the demo dataset ``out_dir`` holds (none if it holds none): a demo written over
    a ``--bad`` one removes the bad filings, which were left in pdfs/ and changed the dataset's
    content hash (so runs over it and over a fresh demo did not compare)."""
    from bench.datasets.financebench import QUESTIONS_FILE, load_documents

    if not (out_dir / QUESTIONS_FILE).exists():
        return set()
    return set(load_documents(out_dir))


def _never_over_a_real_dataset(out_dir: Path) -> None:
    """A folder that holds a dataset other than a demo one (its ``dataset.json`` does not name a
    ``demo`` dataset, or there is none beside ``questions.jsonl``) is never written over."""
    import json

    if not (out_dir / "questions.jsonl").exists():
        return
    try:
        name = str(json.loads((out_dir / "dataset.json").read_text(encoding="utf-8")).get("name", ""))
    except (OSError, ValueError, AttributeError):
        name = ""
    if not name.startswith("demo"):
        what = "holds a dataset that is not a demo one (questions.jsonl)"
        fail(f"--out {out_dir}: {what}; choose another folder")


@datasets_app.command(
    "demo",
    help="Write the generated demo dataset (3 synthetic 10-K filings, 18 questions).",
    epilog=examples(
        "pageindex bench datasets demo --out datasets/demo",
        "pageindex bench datasets demo -o datasets/hostile --hostile --seed 7",
        "pageindex bench datasets demo -o datasets/bad --bad",
    ),
)
def demo(
    out_dir: Path = typer.Argument(None, help="Directory to write (same as --out; kept for old scripts)."),
    out: Path = out_option(help="Directory to write (created if needed)."),
    hostile: bool = typer.Option(
        False, "--hostile", help="Add pages with prompt-injection text (for injection tests)."
    ),
    bad: bool = typer.Option(
        False,
        "--bad",
        help="Also add bad filings (corrupt, truncated, encrypted, empty, scanned, huge, missing).",
    ),
    seed: int = typer.Option(0, "--seed", help="Seed for the generated numbers (same seed, same files)."),
) -> None:
    from bench.datasets.badfiles import write_bad_dataset
    from bench.datasets.demo import write_demo_dataset

    out_dir = _dataset_folder(output_dir(out_dir, out), "datasets/demo")
    _never_over_a_real_dataset(out_dir)
    earlier = _demo_filings(out_dir)
    try:
        ds = (write_bad_dataset if bad else write_demo_dataset)(out_dir, hostile=hostile, seed=seed)
        for doc_id in sorted(earlier - set(ds.documents)):  # the earlier demo's own: --bad's filings
            ds.pdf_path(doc_id).unlink(missing_ok=True)
    except OSError as exc:
        fail(f"{out_dir}: cannot write ({exc.strerror or exc})")
    console.print(
        f"wrote {ds.name} dataset to {out_dir}: {len(ds.questions)} questions over "
        f"{len(ds.documents)} filings (sha256 {ds.sha256[:12]})",
        markup=False,
        soft_wrap=True,
    )


@datasets_app.command(
    "validate",
    help="Load DIR and list the questions validation would drop, with reasons.",
    epilog=examples(
        "pageindex bench datasets validate datasets/financebench",
        "pageindex bench datasets validate datasets/financebench --max-pages 400 --strict",
    ),
)
def validate(
    data_dir: Path = typer.Argument(..., help="A FinanceBench-format directory."),
    threshold: float = typer.Option(
        0.92, "--similarity-threshold", min=0.0, max=1.0, help="Near-duplicate question similarity threshold."
    ),
    max_pages: int = typer.Option(
        1000, "--max-pages", min=0, help="Drop filings with more pages (0: no limit)."
    ),
    strict: bool = typer.Option(False, "--strict", help="Exit with status 1 if any question is dropped."),
) -> None:
    from rich.table import Table

    from bench.datasets import DatasetError, load_financebench, validate_dataset

    try:
        ds = load_financebench(data_dir)
    except DatasetError as exc:
        fail(str(exc))
    result = validate_dataset(ds, similarity_threshold=threshold, max_pages=max_pages or None)
    console.print(
        f"{ds.name}: {len(ds.questions) + len(ds.malformed)} questions, {len(result.kept)} kept, "
        f"{len(result.dropped)} dropped; {len(result.pdfs)} filings checked{_unusable(result)} "
        f"(sha256 {ds.sha256[:12]})",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
    for problem in ds.problems:  # drops no question, but a summary by doc type would be wrong
        err_console.print(f"[yellow]warning:[/] {plain(problem)}", highlight=False)
    if result.dropped:
        table = Table("question", "reason", "detail", title="Dropped questions")
        for d in result.dropped:
            table.add_row(plain(d.question_id), d.reason, plain(d.detail))  # "[draft] x.pdf" as written
        console.print(table)
    if not result.kept:  # as `bench run` refuses it: exit 2 with or without --strict
        total = len(ds.questions) + len(ds.malformed)
        dropped = f"{len(result.dropped)} of {total} dropped"
        what = f"no usable question ({dropped})" if total else "no questions"
        fail(f"{data_dir}: the dataset has {what}")
    if result.dropped and strict:
        raise typer.Exit(ExitCode.CHECK_FAILED)


def _unusable(result: ValidationResult) -> str:
    """", 1 unusable" after the filings checked: a missing, unreadable or too large PDF is counted there."""
    bad = sum(not check.ok for check in result.pdfs.values())
    return f", {bad} unusable" if bad else ""
