"""Tree building speed against plain pymupdf text extraction of the same pages.

Usage: ``python bench/perf/tree_speed.py DATA_DIR [--limit N]``

For every PDF under ``DATA_DIR/pdfs`` (or ``DATA_DIR`` itself), in the same run: time
``build_tree(..., use_cache=False)`` and time opening the file and calling ``page.get_text()``
on every page. Prints pages per second for both and the ratio (target: tree <= 2x text).
"""

from __future__ import annotations

import time
from pathlib import Path

import pymupdf
import typer
from rich.console import Console
from rich.table import Table

from pageindex.tree import build_tree


def plain_text_seconds(path: Path) -> tuple[float, int]:
    start = time.perf_counter()
    doc = pymupdf.open(path)
    for page in doc:
        page.get_text()
    n = doc.page_count
    doc.close()
    return time.perf_counter() - start, n


def tree_seconds(path: Path) -> float:
    start = time.perf_counter()
    build_tree(path, use_cache=False)
    return time.perf_counter() - start


def main(
    data_dir: Path = typer.Argument(
        ..., help="FinanceBench-format directory (pdfs/ inside) or a folder of PDFs."
    ),
    limit: int = typer.Option(0, help="Only the first N PDFs (0 = all)."),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="One row per PDF."),
) -> None:
    console = Console()
    folder = data_dir / "pdfs" if (data_dir / "pdfs").is_dir() else data_dir
    pdfs = sorted(folder.glob("*.pdf"))
    if limit:
        pdfs = pdfs[:limit]
    total_pages = 0
    text_s = tree_s = 0.0
    worst = (0.0, "")
    per_file = Table("pdf", "pages", "text s", "tree s", "ratio")
    for path in pdfs:
        t_text, n = plain_text_seconds(path)
        t_tree = tree_seconds(path)
        total_pages += n
        text_s += t_text
        tree_s += t_tree
        worst = max(worst, (t_tree, path.name))
        per_file.add_row(path.name, str(n), f"{t_text:.2f}", f"{t_tree:.2f}", f"{t_tree / t_text:.2f}")
    if verbose:
        console.print(per_file)
    table = Table(title=f"Tree build speed over {len(pdfs)} PDFs, {total_pages} pages (cache off)")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_row("plain get_text pages/s", f"{total_pages / text_s:.0f}" if text_s else "n/a")
    table.add_row("build_tree pages/s", f"{total_pages / tree_s:.0f}" if tree_s else "n/a")
    table.add_row("plain get_text s / 100 pages", f"{100 * text_s / max(total_pages, 1):.2f}")
    table.add_row("build_tree s / 100 pages", f"{100 * tree_s / max(total_pages, 1):.2f}")
    table.add_row("ratio tree / text", f"{tree_s / text_s:.2f}x" if text_s else "n/a")
    table.add_row("slowest tree", f"{worst[1]} {worst[0]:.2f} s")
    console.print(table)


if __name__ == "__main__":
    typer.run(main)
