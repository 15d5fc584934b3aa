"""Peak memory of building a tree and of a benchmark run, as ratios measured in the same run.

Usage: ``python bench/perf/memory.py DATA_DIR... [--repeats K] [--with-holdout]``

Every figure is measured in a fresh child process, so no measurement's memory counts in another's,
and is read against a floor measured in the same run (this machine is shared; absolute megabytes
move with the Python build and the libraries, ratios much less):

* **text**: open the largest PDF of the folders (most pages; hold-outs left out) and keep
  ``page.get_text()`` of every page: what holding the filing's text costs.
* **tree**: ``build_tree(pdf, use_cache=False)`` of that PDF, the tree kept (it holds the page
  text too). Both are the rise of the process's peak resident set above where it stood after its
  imports (Linux: the peak is reset through ``/proc/self/clear_refs`` once pymupdf, which maps
  about 130 MB, is imported). The ratio tree / text is what building costs over the bare text the
  tree keeps; target <= 4 (the builder reads every span's font and position, one page at a time).
* **run**: ``pageindex bench run -r extractive`` over the first folder that holds a
  ``questions.jsonl`` (trees from the cache, warmed first), once with ``--repeats 1`` and once with
  ``--repeats K`` (default 5): the same questions and documents, K times the samples. The growth of
  the run's peak (``ru_maxrss``) per extra sample is what a finished sample leaves behind in the
  process (a leak grows it with every sample); target < 20 KB a sample, against the floor of the
  run with one repeat.

The hold-out PDFs named in the README are left out unless ``--with-holdout`` is given, as in
``tree_speed.py``: measuring them builds their trees.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

import pymupdf
import typer
from rich.table import Table

from bench.perf.outline_recovery import HOLDOUT
from bench.summary import print_whole
from pageindex.cli._common import CliConsole, fail, plain
from pageindex.wording import counted

BUILD_RATIO_TARGET = 4.0
KB_PER_SAMPLE_TARGET = 20.0

# Each child imports what it needs, then resets its peak resident set (Linux: "5" to
# /proc/self/clear_refs) so the peak it prints (VmHWM, KB) counts only the work after the imports
# (importing pymupdf alone maps ~130 MB), and prints the resident set it started the work from.
_START = (
    "import re, sys, pymupdf, pageindex.tree\nfrom pathlib import Path\n"
    "def kb(field):\n"
    "    return int(re.search(field + r':\\s+(\\d+)', open('/proc/self/status').read()).group(1))\n"
    "open('/proc/self/clear_refs', 'w').write('5'); start = kb('VmRSS')\n"
)
_END = "print(start, kb('VmHWM'))"
_CHILD = {
    "text": _START + "doc = pymupdf.open(sys.argv[1]); kept = [page.get_text() for page in doc]\n" + _END,
    "tree": _START + "tree = pageindex.tree.build_tree(Path(sys.argv[1]), use_cache=False)\n" + _END,
}


def pdfs_of(folder: Path, with_holdout: bool) -> list[Path]:
    """The PDFs of ``folder/pdfs`` (or ``folder``), hold-outs left out unless asked for."""
    where = folder / "pdfs" if (folder / "pdfs").is_dir() else folder
    return [p for p in sorted(where.glob("*.pdf")) if with_holdout or p.stem not in HOLDOUT]


def child_peak_kb(kind: str, *args: str) -> int:
    """How far (KB) a fresh Python's resident set rose above where it stood after its imports, at its
    peak, while it ran the ``kind`` measurement."""
    done = subprocess.run(
        [sys.executable, "-c", _CHILD[kind], *args], capture_output=True, text=True, check=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    start, peak = (int(x) for x in done.stdout.strip().splitlines()[-1].split())
    return peak - start


class RunPeak(NamedTuple):
    peak_kb: int  # the run process's peak resident set (ru_maxrss)
    samples: int
    documents: int  # distinct documents the samples are about (their trees are held by the run)


def run_peak(data_dir: Path, out: Path, *options: str) -> RunPeak:
    """The peak of ``bench run -r extractive OPTIONS`` on ``data_dir`` in a fresh process (a wrapper
    reads it: ``bench run`` prints no memory figure), with what the run wrote."""
    code = (
        "import runpy, sys, resource\n"
        "sys.argv = ['pageindex'] + sys.argv[1:]\n"
        "try:\n    runpy.run_module('pageindex.cli', run_name='__main__')\n"
        "except SystemExit as exc:\n"
        "    if exc.code not in (0, None): raise\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    )
    args = ["bench", "run", "--data-dir", str(data_dir), "-r", "extractive", "--out", str(out), "--quiet",
            *options]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=False,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), "COLUMNS": "200"},
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"bench run {' '.join(options)} exited {done.returncode}: {last}")
    rows = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines() if line.strip()]
    return RunPeak(int(done.stdout.strip().splitlines()[-1]), len(rows), len({r["doc_id"] for r in rows}))


def main(
    data_dirs: list[Path] = typer.Argument(
        ..., help="FinanceBench-format directories (pdfs/ inside) or folders of PDFs."
    ),
    repeats: int = typer.Option(5, "--repeats", "-k", min=2, help="Repeats of the larger run."),
    limit: int = typer.Option(10, "--limit", "-n", min=1, help="Questions of the smaller run."),
    with_holdout: bool = typer.Option(False, "--with-holdout", help="include the README's hold-out PDFs"),
) -> None:
    console = CliConsole()
    for folder in data_dirs:
        if not folder.is_dir():
            fail(f"{folder}: no such folder (give FinanceBench-format or PDF folders)")
    pdfs = [p for folder in data_dirs for p in pdfs_of(folder, with_holdout)]
    if not pdfs:
        fail("no PDF in the folders given (DATA_DIR/pdfs/*.pdf or DATA_DIR/*.pdf)")
    pages = {p: pymupdf.open(p).page_count for p in pdfs}
    largest = max(pdfs, key=lambda p: (pages[p], p.name))

    text = child_peak_kb("text", str(largest))
    tree = child_peak_kb("tree", str(largest))
    ratio = tree / max(text, 1)
    console.print(f"largest PDF: {plain(largest.stem)}, {counted(pages[largest], 'page')}")
    table = Table(title="Peak memory above the imports (a fresh process each)")
    for col in ("measurement", "peak MB", "ratio", "target"):
        table.add_column(col, justify="left" if col == "measurement" else "right")
    table.add_row("text: open, get_text() of every page, kept", f"{text / 1024:.1f}", "1.00", "-")
    table.add_row("tree: build_tree(use_cache=False), kept", f"{tree / 1024:.1f}", f"{ratio:.2f}",
                  f"<= {BUILD_RATIO_TARGET:g}")  # fmt: skip
    print_whole(console, table)

    data = next((d for d in data_dirs if (d / "questions.jsonl").is_file()), None)
    if data is None:
        console.print("no folder with a questions.jsonl given: the run's memory is not measured")
        return
    with tempfile.TemporaryDirectory(prefix="pageindex-memory-") as tmp:
        run_peak(data, Path(tmp) / "warm")  # trees into the cache: the runs below read them from it
        few = run_peak(data, Path(tmp) / "few", "--limit", str(limit))
        one = run_peak(data, Path(tmp) / "one")
        many = run_peak(data, Path(tmp) / "many", "--repeats", str(repeats))
    per_sample = (many.peak_kb - one.peak_kb) / max(many.samples - one.samples, 1)
    per_document = (one.peak_kb - few.peak_kb) / max(one.documents - few.documents, 1)
    run_table = Table(title=f"bench run -r extractive over {data.name} (trees cached), fresh process peaks")
    for col in ("run", "samples", "documents", "peak MB", "growth", "target"):
        run_table.add_column(col, justify="left" if col == "run" else "right")
    run_table.add_row(f"--limit {limit}", str(few.samples), str(few.documents), f"{few.peak_kb / 1024:.1f}",
                      "-", "-")  # fmt: skip
    run_table.add_row("all questions", str(one.samples), str(one.documents), f"{one.peak_kb / 1024:.1f}",
                      f"{per_document / 1024:.2f} MB per extra document", "-")  # fmt: skip
    run_table.add_row(f"--repeats {repeats}", str(many.samples), str(many.documents),
                      f"{many.peak_kb / 1024:.1f}", f"{per_sample:.1f} KB per extra sample",
                      f"< {KB_PER_SAMPLE_TARGET:g} KB")  # fmt: skip
    print_whole(console, run_table)
    console.print(json.dumps({"pdf": largest.name, "pages": pages[largest], "build_ratio": round(ratio, 2),
                              "run_mb_per_document": round(per_document / 1024, 2),
                              "run_kb_per_sample": round(per_sample, 1)}))  # fmt: skip


if __name__ == "__main__":
    typer.run(main)
