"""Per-page cost of reading tables: pdfplumber, pymupdf, and ``page_tables`` (which picks one).

Usage: ``python bench/perf/table_speed.py DATA_DIR [DOC:PAGE ...]``

For each FinanceBench page (default: the statement pages the tests and notes use), time
pdfplumber ``find_tables()`` + ``extract()`` on that page alone, pymupdf ``find_tables()`` on
that page alone, and :func:`pageindex.tree.tables.page_tables` (opening the file each time, as
``/tables`` does). Prints seconds per page and the method ``page_tables`` chose. Target: well
under 2 s per page, which is why tables are read per page on demand, never per document.
"""

from __future__ import annotations

import time
from pathlib import Path

import pdfplumber
import pymupdf
import typer
from rich.table import Table

from bench.perf import pdf_folders
from pageindex.cli._common import CliConsole, fail
from pageindex.tree.tables import is_fragmented, page_tables

DEFAULT_PAGES = [
    "3M_2018_10K:60",
    "COSTCO_2021_10K:40",
    "COCACOLA_2017_10K:84",
    "CORNING_2020_10K:73",
    "BOEING_2018_10K:53",
    "KRAFTHEINZ_2019_10K:54",
    "ADOBE_2015_10K:63",
    "AMAZON_2017_10K:42",
    "3M_2018_10K:5",
]


def _seconds(fn, *args) -> tuple[float, object]:
    start = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - start, out


def _plumber(path: Path, page: int) -> list:
    with pdfplumber.open(path, pages=[page]) as pdf:
        return [t.extract() for t in pdf.pages[0].find_tables()]


def _mupdf(path: Path, page: int) -> list:
    with pymupdf.open(path) as doc:
        return doc[page - 1].find_tables().tables


def _page(folder: Path, spec: str) -> tuple[Path, int]:
    """The PDF and 1-based page a ``DOC:PAGE`` spec names, or exit 2 with one error line."""
    doc, _, num = spec.rpartition(":")
    path = folder / f"{doc}.pdf"
    if not doc or not num.isdigit() or int(num) < 1:
        fail(f"{spec!r}: give DOC:PAGE, a PDF's name in {folder} and a 1-based page, e.g. 3M_2018_10K:60")
    if not path.is_file():
        fail(f"{spec!r}: no {path}")
    with pymupdf.open(path) as pdf:
        pages = pdf.page_count
    if int(num) > pages:
        fail(f"{spec!r}: {path.name} has {pages} pages")
    return path, int(num)


def main(
    data_dir: Path = typer.Argument(..., help="FinanceBench directory (holds pdfs/)"),
    pages: list[str] = typer.Argument(None, help="DOC:PAGE specs, e.g. 3M_2018_10K:60"),
) -> None:
    console = CliConsole(width=max(CliConsole().width, 120))
    table = Table("page", "pdfplumber s", "tables (rows)", "pymupdf s", "tables", "page_tables s", "chose")
    [folder] = pdf_folders([data_dir])
    for spec in pages or DEFAULT_PAGES:
        path, page = _page(folder, spec)
        t_pl, pl = _seconds(_plumber, path, page)
        t_mu, mu = _seconds(_mupdf, path, page)
        t_pt, pt = _seconds(page_tables, path, page)
        shape = f"{len(pl)} ({sum(len(t) for t in pl)})" + (" fragmented" if is_fragmented(pl) else "")
        chose = ", ".join(sorted({t.method for t in pt})) or "none"
        table.add_row(spec, f"{t_pl:.2f}", shape, f"{t_mu:.2f}", str(len(mu)), f"{t_pt:.2f}", chose)
    console.print(table)


if __name__ == "__main__":
    typer.run(main)
