"""``pageindex bench report RUN [RUN ...]`` (HTML or Markdown) and ``pageindex bench summary RUN``."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import typer

from pageindex.cli._common import console, err_console, examples, fail, out_option, output_file


class Format(StrEnum):
    html = "html"
    md = "md"


def _load(paths: list[Path]):
    from bench.rundir import RunLoadError, load_run

    runs = []
    for p in paths:
        try:
            run = load_run(p)
        except RunLoadError as exc:
            fail(str(exc))
        for w in run.warnings:
            err_console.print(f"warning: {w}", style="yellow", markup=False, highlight=False)
        runs.append(run)
    return runs


def register(app: typer.Typer, bench: typer.Typer) -> None:
    @bench.command(
        "report",
        help="Write a self-contained HTML report (or Markdown tables) for one or more runs.",
        epilog=examples(
            "pageindex bench report results/RUN_ID",
            "pageindex bench report results/baseline results/candidate -o report.html",
            "pageindex bench report results/RUN_ID --format md -o -",
        ),
    )
    def report(
        runs: list[Path] = typer.Argument(..., help="Run directories to report on."),
        output: Path | None = out_option(
            help="File to write ('-' = standard output). Default: report.html / report.md in the first run."
        ),
        fmt: Format | None = typer.Option(
            None, "--format", help="html (charts + tables) or md (tables); default: --out's, else html."
        ),
        title: str | None = typer.Option(None, "--title", help="Title of the HTML report."),
    ) -> None:
        # the runs first: a RUN that is no run folder is said as such, not as a default --out under it
        # (`bench report RUN/run.json` said "--out RUN/run.json/report.html: ... is a file")
        loaded = _load(runs)
        from pageindex.atomic import same_file

        for i, later in enumerate(runs):  # as compare and the gate refuse it (it was labelled "(2)")
            if earlier := next((r for r in runs[:i] if same_file(r, later)), None):
                fail(f"{earlier} and {later} are the same run folder: each run is reported once; give "
                     "each run's own folder")  # fmt: skip
        path = None
        if output is None or str(output) != "-":
            from bench.report import is_report_file
            from bench.rundir import run_file_of

            name = f"report.{(fmt or Format.html).value}"
            path = output or runs[0] / name
            if (owner := run_file_of(path)) is not None:
                fail(f"--out {path}: is a file of run {owner}; write the report to another file")
            output_file("--out", path, replaces=is_report_file, kind="a report", example=name)
        fmt = _format(output, fmt)
        if fmt == Format.md:
            from bench.report.markdown import render_markdown

            text = render_markdown(loaded)
        else:
            from bench.report.html import render_html

            text = render_html(loaded, title)
        if path is None:
            print(text)
            return
        from pageindex.atomic import write_atomic

        try:
            write_atomic(path, text)  # all or nothing: an earlier report is never half replaced
        except OSError as exc:
            fail(f"--out {path}: cannot write ({exc.strerror or exc})")
        console.print(f"report written to {path}", highlight=False, markup=False)  # a path as written: [x]

    _SUFFIXES = {".html": Format.html, ".htm": Format.html, ".md": Format.md, ".markdown": Format.md}

    def _format(output: Path | None, given: Format | None) -> Format:
        """The report's format: ``--format``, else the one the ``--out`` suffix names (.html/.htm, .md/
        .markdown), else html; a suffix of neither, or one that contradicts ``--format``, is refused (a
        report written as HTML into "report.pdf" or "report.md" opens as garbage)."""
        if output is None or str(output) == "-":
            return given or Format.html
        suffix = output.suffix.lower()
        named = _SUFFIXES.get(suffix)
        if named is None:
            fail(f"--out {output}: a report is HTML (.html) or Markdown (.md); name the file with either")
        if given is not None and given != named:
            fail(f"--out {output} names a {named.value} file but --format is {given.value}; make them agree")
        return named

    @bench.command(
        "summary",
        help="Print the summary tables of a run (recomputed from its samples).",
        epilog=examples(
            "pageindex bench summary results/RUN_ID", "pageindex bench summary results/RUN_ID --json"
        ),
    )
    def summary(
        run: Path = typer.Argument(..., help="Run directory."),
        as_json: bool = typer.Option(
            False, "--json", help="Print the summary as JSON (summary.json format)."
        ),
        write: bool = typer.Option(
            False, "--write", help="Also (re)write summary.json in the run directory."
        ),
    ) -> None:

        from bench.rundir import FolderClaim, FolderInUse, RunDir
        from bench.runinfo import rejudge_command, spend_notes
        from bench.summary import print_summary

        claim = None
        if write and run.is_dir():
            # held as a run holds it, before the samples are read: a run still writing into the folder
            # writes its own summary.json when it ends, which one of its first samples must not replace
            try:
                claim = FolderClaim.take(run)
            except FolderInUse:
                fail(
                    f"--write: {run} is still running (a bench run or rejudge is writing into it now); it "
                    "writes its summary.json when it ends: leave out --write to print the figures so far"
                )
        try:
            (loaded,) = _load([run])
            if write:
                rundir = RunDir(run)  # the run folder's owner names its summary file
                try:
                    rundir.write_summary(loaded.summary)
                except OSError as exc:  # a read-only run folder, a summary.json that is a folder
                    fail(f"--write: cannot write {rundir.summary_path} ({exc.strerror or exc})")
        finally:
            if claim is not None:
                claim.release()
        if as_json:
            print(loaded.summary.model_dump_json(indent=2))
        else:
            # piped: each table whole (print_summary)
            print_summary(
                loaded.summary,
                console,
                rejudge=rejudge_command(run, loaded.info),
                unfinished=loaded.unfinished_note(),
            )
            info = loaded.info  # what was spent beside the samples' figures, over all the run's sessions
            for note in spend_notes(info.unrecorded_usage, info.sent_usage, info.cached_usage):
                console.print(f"note: {note}", highlight=False, markup=False)
