"""Printed page labels found per PDF, and what a change to the label reader changed.

Usage::

    python bench/perf/page_labels.py DIR... [--out LABELS.json] [--before BEFORE.json] [-v]

Reads every PDF of the folders (``DIR/pdfs`` when it exists) with the tree builder's reader and its
label reader (:func:`pageindex.tree.labels.page_labels`, no tree built) and prints, per PDF, its pages
and the pages given a printed label. ``--out`` writes ``{pdf: {page: label}}``; ``--before`` compares
with such a file, written on the old code, and adds per PDF the labels gained, lost and changed (with
``-v`` each changed or lost page, and the first gained ones, for checking against the page by eye).
The hold-out PDFs (``outline_recovery.HOLDOUT`` and the heading-recall ``HELD_OUT``) are never read.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import typer
from rich.table import Table

from bench.perf import pdf_folders
from bench.perf.heading_recall import HELD_OUT
from bench.perf.outline_recovery import HOLDOUT
from bench.summary import print_whole
from pageindex.cli._common import CliConsole, fail
from pageindex.tree import PDFError
from pageindex.tree.labels import page_labels
from pageindex.tree.pdf import read_pdf

SKIP = HOLDOUT | HELD_OUT


def main(
    folders: list[Path] = typer.Argument(..., help="FinanceBench-format or PDF folders"),
    out: Path | None = typer.Option(None, "--out", help="write {pdf: {page: label}} here (JSON)"),
    before: Path | None = typer.Option(None, "--before", help="an --out file of the old code to compare"),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="list the pages that changed"),
) -> None:
    console = CliConsole()
    old: dict[str, dict[str, str]] | None = None
    if before is not None:
        try:
            old = json.loads(before.read_text())
        except (OSError, ValueError) as exc:
            fail(f"{before}: not readable as an --out file of this script ({exc})")
    found: dict[str, dict[str, str]] = {}
    compared = ("before", "gained", "lost", "changed") if old is not None else ()
    table = Table("pdf", "pages", "labelled", *compared)
    details: list[str] = []
    totals = [0] * (2 + len(compared))
    for folder in pdf_folders(folders, SKIP):
        for path in sorted(folder.glob("*.pdf")):
            if path.stem in SKIP:
                continue
            try:
                pages = read_pdf(path).pages
            except PDFError as exc:
                console.print(f"[yellow]skipped {path.name}: {exc}[/yellow]")
                continue
            labels = found[path.stem] = page_labels(pages)
            row = [path.stem, str(len(pages)), str(len(labels))]
            if old is not None:
                was = old.get(path.stem, {})
                gained = sorted(set(labels) - set(was), key=int)
                lost = sorted(set(was) - set(labels), key=int)
                changed = sorted((p for p in labels if p in was and was[p] != labels[p]), key=int)
                row += [str(len(was)), str(len(gained)), str(len(lost)), str(len(changed))]
                if verbose:
                    details += [f"{path.stem} p. {p}: {was[p]!r} -> {labels[p]!r}" for p in changed]
                    details += [f"{path.stem} p. {p}: {was[p]!r} lost" for p in lost]
                    details += [f"{path.stem} p. {p}: gained {labels[p]!r}" for p in gained[:5]]
            table.add_row(*row)
            totals = [t + int(c) for t, c in zip(totals, row[1:], strict=True)]
    table.add_row("all", *map(str, totals))
    show = console.print if console.is_terminal else partial(print_whole, console)
    show(table)
    for line in details:
        console.print(line, markup=False, highlight=False)
    if out is not None:
        out.write_text(json.dumps(found, indent=0))


if __name__ == "__main__":
    typer.run(main)
