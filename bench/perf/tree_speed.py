"""Tree building speed against plain pymupdf text extraction of the same pages.

Usage: ``python bench/perf/tree_speed.py DATA_DIR... [--limit N] [--with-holdout] [-v]``

For every PDF under each ``DATA_DIR/pdfs`` (or ``DATA_DIR`` itself), in the same run: time
``build_tree(..., use_cache=False)`` and time opening the file and calling ``page.get_text()``
on every page. Prints seconds per 100 pages for both and the ratio per folder and over all
folders (target: tree <= 1.5x text, summed over all pages), by wall clock and by this
process's CPU time: on a shared, loaded machine the wall-clock ratio moves with the load of
other processes, the CPU-time ratio much less.

The last column is the floor under that ratio: the ``get_text("dict")`` pass alone (with the
builder's flags, no Python work on its output), as a ratio to plain ``get_text()`` in the same
run. Headings need each span's font, size and weight, which plain text does not give, so no
builder reading them from pymupdf can be faster than this pass.

The hold-out PDFs named in the README are left out unless ``--with-holdout`` is given, as in
``outline_recovery.py`` and ``tree_changes.py``: timing them builds their trees.
"""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path

import pymupdf
import typer
from rich.table import Table

from bench.perf import pdf_folders
from bench.perf.outline_recovery import HOLDOUT
from bench.summary import print_whole
from pageindex.cli._common import CliConsole
from pageindex.tree import build_tree
from pageindex.tree.pdf import LAYOUT_TEXT_FLAGS


def plain_text_seconds(path: Path) -> tuple[float, float, int]:
    """(wall s, CPU s, pages) of opening ``path`` and ``get_text()`` of every page."""
    start, cpu = time.perf_counter(), time.process_time()
    doc = pymupdf.open(path)
    for page in doc:
        page.get_text()
    n = doc.page_count
    doc.close()
    return time.perf_counter() - start, time.process_time() - cpu, n


def dict_pass_cpu(path: Path) -> float:
    """CPU s of opening ``path`` and the builder's ``get_text("dict")`` of every page, nothing else."""
    cpu = time.process_time()
    doc = pymupdf.open(path)
    for page in doc:
        page.get_text("dict", flags=LAYOUT_TEXT_FLAGS)
    doc.close()
    return time.process_time() - cpu


def tree_seconds(path: Path) -> tuple[float, float]:
    """(wall s, CPU s) of building the tree, cache off."""
    start, cpu = time.perf_counter(), time.process_time()
    build_tree(path, use_cache=False)
    return time.perf_counter() - start, time.process_time() - cpu


def main(
    data_dirs: list[Path] = typer.Argument(
        ..., help="FinanceBench-format directories (pdfs/ inside) or folders of PDFs."
    ),
    limit: int = typer.Option(0, help="Only the first N PDFs of each folder (0 = all)."),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="One row per PDF."),
    with_holdout: bool = typer.Option(False, "--with-holdout", help="include the README's hold-out PDFs"),
) -> None:
    console = CliConsole()
    per_file = Table("pdf", "pages", "text s", "tree s", "ratio", "CPU ratio")
    table = Table(title="Tree build speed (cache off), plain get_text() of the same pages in the same run")
    columns = ("folder", "PDFs", "pages", "text s/100 p", "tree s/100 p", "ratio tree/text")
    extra = ("CPU text s/100 p", "CPU tree s/100 p", "CPU ratio", "slowest tree", "floor: dict pass CPU")
    for col in (*columns, *extra):
        table.add_column(col, justify="right" if col != "folder" else "left")
    pdf_folders(data_dirs, () if with_holdout else HOLDOUT)  # before any work
    all_pages = 0
    all_text = all_tree = all_text_cpu = all_tree_cpu = all_dict_cpu = 0.0
    for data_dir in data_dirs:
        folder = data_dir / "pdfs" if (data_dir / "pdfs").is_dir() else data_dir
        pdfs = [p for p in sorted(folder.glob("*.pdf")) if with_holdout or p.stem not in HOLDOUT]
        if limit:
            pdfs = pdfs[:limit]
        total_pages = 0
        text_s = tree_s = text_cpu = tree_cpu = dict_cpu = 0.0
        worst = (0.0, "")
        for path in pdfs:
            t_text, c_text, n = plain_text_seconds(path)
            t_tree, c_tree = tree_seconds(path)
            dict_cpu += dict_pass_cpu(path)
            total_pages += n
            text_s += t_text
            tree_s += t_tree
            text_cpu += c_text
            tree_cpu += c_tree
            worst = max(worst, (t_tree, path.name))
            per_file.add_row(
                path.name,
                str(n),
                f"{t_text:.2f}",
                f"{t_tree:.2f}",
                f"{t_tree / t_text:.2f}",
                f"{c_tree / max(c_text, 1e-9):.2f}",
            )
        all_pages += total_pages
        all_text += text_s
        all_tree += tree_s
        all_text_cpu += text_cpu
        all_tree_cpu += tree_cpu
        all_dict_cpu += dict_cpu
        table.add_row(
            *_row(str(data_dir), len(pdfs), total_pages, text_s, tree_s),
            *_row("", 0, total_pages, text_cpu, tree_cpu)[3:],
            f"{worst[1]} {worst[0]:.2f} s",
            f"{dict_cpu / max(text_cpu, 1e-9):.2f}x",
        )
    if len(data_dirs) > 1:
        table.add_row(
            *_row("all", 0, all_pages, all_text, all_tree),
            *_row("", 0, all_pages, all_text_cpu, all_tree_cpu)[3:],
            "",
            f"{all_dict_cpu / max(all_text_cpu, 1e-9):.2f}x",
        )
    # whole in a log or a pipe: the table is wider than 200 columns with a long filing name
    show = console.print if console.is_terminal else partial(print_whole, console)
    if verbose:
        show(per_file)
    show(table)


def _row(name: str, pdfs: int, pages: int, text_s: float, tree_s: float) -> list[str]:
    return [
        name,
        str(pdfs) if pdfs else "",
        str(pages),
        f"{100 * text_s / max(pages, 1):.2f}",
        f"{100 * tree_s / max(pages, 1):.2f}",
        f"{tree_s / text_s:.2f}x" if text_s else "n/a",
    ]


if __name__ == "__main__":
    typer.run(main)
