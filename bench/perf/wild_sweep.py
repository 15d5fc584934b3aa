"""The tree builder on PDFs it was not written for: every PDF under a folder, each in its own processes.

Usage: ``python bench/perf/wild_sweep.py PDF_DIR [--timeout 60] [--max-rss-mb 2048] [--jobs 1] [--out FILE]``

For every ``*.pdf`` under ``PDF_DIR`` (sub-folders included; say, the test files of PDF libraries' source
packages, unpacked), with a private tree cache made for the sweep: ``pageindex build PDF -o TREE.json``,
``pageindex tree PDF``, then, in a third process, the tree's own invariants and the offline retrievers
(``bm25`` with the scripted model of the soak, ``extractive``) on one question. Each process runs under
``/usr/bin/time -v`` (peak RSS) and a ``--timeout``. Each PDF ends in one class:

- ``built``: both commands exit 0, standard error holds only one-line ``warning:`` lines, the tree keeps
  its invariants (pages within 1..page_count, children inside their parents one level down, leaves
  covering every page in order, unique ids, titles neither empty nor more than one line) and both
  retrievers return without ``error``;
- ``refused``: both commands exit 2 with the same single ``error:`` line and nothing else;
- ``WRONG: ...`` anything else: a traceback or ``internal error``, a hang past the timeout, a peak RSS over
  ``--max-rss-mb``, another exit code, a broken invariant, a warning or error that is not one line, a
  retrieval ending in ``error``, ``build`` and ``tree`` disagreeing.

Prints the count per class and a line per WRONG file; ``--out`` also writes every PDF's outcome as JSON
lines. Nothing is downloaded: the PDFs are the caller's.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Annotated, Any

import typer

from pageindex.atomic import first_row_has

ROOT = Path(__file__).resolve().parents[2]
QUESTION = "What was total revenue?"
RETRIEVERS = ("bm25", "extractive")

# run in its own process: load the tree JSON, check its invariants, run the offline retrievers on it
CHECK = r"""
import json, sys
from bench.faults.scripted import policy
from pageindex import retrieve
from pageindex.llm import ScriptedModel, make_client
from pageindex.tree.model import Tree

tree = Tree.model_validate_json(open(sys.argv[1], encoding="utf-8").read())
problems = []
n = tree.page_count
if n < 1 or len(tree.pages) != n:
    problems.append(f"page_count {n} but {len(tree.pages)} pages of text")
ids = [node.node_id for node in tree.walk()]
if len(ids) != len(set(ids)):
    problems.append("node ids repeat")
for node in tree.walk():
    if not 1 <= node.start_page <= node.end_page <= n:
        problems.append(f"{node.node_id}: pages {node.start_page}-{node.end_page} outside 1..{n}")
    if not node.title.strip():
        problems.append(f"{node.node_id}: empty title")
    elif len(node.title.splitlines()) > 1 or any(ord(c) < 32 for c in node.title):
        problems.append(f"{node.node_id}: title of more than one line {node.title!r}")
    for child in node.children:
        if not node.start_page <= child.start_page <= child.end_page <= node.end_page:
            problems.append(f"{child.node_id} ({child.start_page}-{child.end_page}) outside its parent"
                            f" {node.node_id} ({node.start_page}-{node.end_page})")
        if child.level != node.level + 1:
            problems.append(f"{child.node_id}: level {child.level} under level {node.level}")
leaves = tree.leaves()
if not leaves or leaves[0].start_page != 1 or leaves[-1].end_page != n:
    problems.append("the leaves do not cover the first and last page")
for prev, nxt in zip(leaves, leaves[1:]):
    if nxt.start_page not in (prev.end_page, prev.end_page + 1):
        problems.append(f"leaves {prev.node_id} -> {nxt.node_id} skip or go back")
retrieval = {}
for name in sys.argv[2].split(","):
    llm = make_client("scripted", scripted=ScriptedModel(policy=policy, keep_requests=False))
    result = retrieve(tree, sys.argv[3], retriever=name, llm=llm)
    retrieval[name] = result.status if result.status != "error" else f"error: {result.error}"
print(json.dumps({"problems": problems[:5], "retrieval": retrieval}))
"""


def timed(cmd: list[str], timeout: float, env: dict[str, str]) -> dict[str, Any]:
    """Run ``cmd`` under ``/usr/bin/time -v`` and ``timeout``: exit code, output, peak RSS (MB), hang."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as stats:
        proc = subprocess.run(
            ["/usr/bin/time", "-v", "-o", stats.name, "timeout", "-k", "5", str(timeout), *cmd],
            capture_output=True, text=True, errors="replace", env=env, stdin=subprocess.DEVNULL,
        )
        found = re.search(r"Maximum resident set size \(kbytes\): (\d+)", Path(stats.name).read_text())
    return {
        "rc": proc.returncode,
        "stdout": proc.stdout,
        "stderr": proc.stderr,
        "rss_mb": round(int(found.group(1)) / 1024, 1) if found else None,
        "hang": proc.returncode in (124, 137),
    }


def command_outcome(run: dict[str, Any], max_rss_mb: float) -> str:
    """``ok``, ``refused`` or what is WRONG with one command's run."""
    lines = [line for line in run["stderr"].splitlines() if line.strip()]
    if run["hang"]:
        return "hang past the timeout"
    if run["rss_mb"] and run["rss_mb"] > max_rss_mb:
        return f"peak RSS {run['rss_mb']:.0f} MB"
    if "Traceback" in run["stderr"] or "internal error" in run["stderr"]:
        return "traceback or internal error"
    if run["rc"] == 0:
        if any(not line.startswith("warning: ") for line in lines):
            return "standard error holds more than one-line warnings"
        return "ok"
    if run["rc"] == 2:
        if len(lines) == 1 and lines[0].startswith("error: "):
            return "refused"
        return "exit 2 without one error line"
    return f"exit {run['rc']}"


def sweep_one(pdf: Path, work: Path, cache: Path, timeout: float, max_rss_mb: float) -> dict[str, Any]:
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path, "PAGEINDEX_CACHE_DIR": str(cache)}
    cli = [sys.executable, "-m", "pageindex.cli"]
    trees = ["--cache-dir", str(cache / "trees")]
    out = Path(tempfile.mkdtemp(dir=work)) / "tree.json"
    build = timed([*cli, "build", str(pdf), "-o", str(out), *trees], timeout, env)
    tree = timed([*cli, "tree", str(pdf), *trees], timeout, env)
    row: dict[str, Any] = {
        "pdf": str(pdf),
        "rss_mb": max(r["rss_mb"] or 0 for r in (build, tree)),
        "stderr": build["stderr"].strip()[-400:],
    }
    outcomes = {command_outcome(build, max_rss_mb), command_outcome(tree, max_rss_mb)}
    wrong = sorted(o for o in outcomes if o not in ("ok", "refused"))
    if wrong:
        row["class"] = "WRONG: " + wrong[0]
    elif outcomes == {"refused"}:
        same = build["stderr"].strip() == tree["stderr"].strip()
        row["class"] = "refused" if same else "WRONG: build and tree refuse differently"
    elif outcomes != {"ok"}:
        row["class"] = "WRONG: build and tree disagree"
    else:
        check = timed([sys.executable, "-c", CHECK, str(out), ",".join(RETRIEVERS), QUESTION], timeout, env)
        row["rss_mb"] = max(row["rss_mb"], check["rss_mb"] or 0)
        try:
            found = json.loads(check["stdout"].strip().splitlines()[-1])
        except (IndexError, ValueError):
            found = None
        row["warnings"] = sum(1 for line in build["stderr"].splitlines() if line.startswith("warning: "))
        if check["hang"]:
            row["class"] = "WRONG: retrieval hangs past the timeout"
        elif found is None or check["rc"] != 0:
            row["class"] = "WRONG: the check crashed"
            row["stderr"] = check["stderr"].strip()[-400:]
        elif found["problems"]:
            row["class"] = "WRONG: tree invariant broken"
            row["problems"] = found["problems"]
        elif any(str(s).startswith("error") for s in found["retrieval"].values()):
            row["class"] = "WRONG: retrieval error"
            row["retrieval"] = found["retrieval"]
        else:
            row["class"] = "built"
    shutil.rmtree(out.parent, ignore_errors=True)
    return row


def is_sweep_file(path: Path) -> bool:
    """Whether ``path`` holds this sweep's ``--out`` rows (what a later sweep may replace): its first row
    has a swept PDF's ``pdf`` and ``class``."""
    return first_row_has(path, ("pdf", "class"))


def main(
    pdf_dir: Annotated[Path, typer.Argument(help="A folder holding PDFs (sub-folders included).")],
    timeout: Annotated[float, typer.Option(min=1, help="Seconds each process may take.")] = 60,
    max_rss_mb: Annotated[float, typer.Option(min=1, help="Peak RSS above this is WRONG.")] = 2048,
    jobs: Annotated[int, typer.Option(min=1, help="PDFs swept at once.")] = 1,
    out: Annotated[Path | None, typer.Option(help="Write each PDF's outcome here (JSON lines).")] = None,
) -> None:
    from pageindex.atomic import write_atomic
    from pageindex.cli._common import fail, output_file

    if not pdf_dir.is_dir():
        fail(f"{pdf_dir}: {'a file' if pdf_dir.exists() else 'no such folder'} (give a folder of PDFs)")
    pdfs = sorted(p for p in pdf_dir.rglob("*") if p.suffix.lower() == ".pdf" and p.is_file())
    if not pdfs:
        fail(f"{pdf_dir}: no PDF in it or its sub-folders (give a folder of PDFs)")
    if shutil.which("/usr/bin/time") is None or shutil.which("timeout") is None:
        fail("this sweep needs /usr/bin/time (GNU time, for peak RSS) and timeout (coreutils)")
    if out is not None:  # before any work: never one of the PDFs swept, nor a file the sweep did not write
        if not out.is_dir() and not out.parent.is_dir():
            fail(f"--out {out}: no folder {out.parent} to write it in")
        output_file("--out", out, inputs=pdfs, replaces=is_sweep_file, kind="a wild sweep's outcomes file",
                    example="sweep.jsonl")
    with tempfile.TemporaryDirectory(prefix="wild-sweep-") as scratch:
        work, cache = Path(scratch) / "work", Path(scratch) / "cache"
        work.mkdir()
        done = Counter[str]()

        def one(pdf: Path) -> dict[str, Any]:
            row = sweep_one(pdf, work, cache, timeout, max_rss_mb)
            done["n"] += 1
            print(f"[{done['n']}/{len(pdfs)}] {row['class']}: {pdf}", file=sys.stderr, flush=True)
            return row

        with ThreadPoolExecutor(jobs) as pool:
            rows = list(pool.map(one, pdfs))
    counts = Counter(row["class"] for row in rows)
    print(f"{len(rows)} PDFs under {pdf_dir}")
    for name, count in sorted(counts.items(), key=lambda kv: (kv[0].startswith("WRONG"), kv[0])):
        print(f"  {count:4d}  {name}")
    warned = sum(1 for row in rows if row.get("warnings"))
    print(f"  built with a warning line: {warned}; peak RSS max {max(r['rss_mb'] for r in rows):.0f} MB")
    for row in rows:
        if row["class"].startswith("WRONG"):
            print(f"{row['class']}: {row['pdf']}")
            detail = row.get("problems") or row.get("retrieval") or row["stderr"].splitlines()[-1:]
            print(f"    {detail}")
    if out is not None:
        write_atomic(out, "".join(json.dumps(row) + "\n" for row in rows))


if __name__ == "__main__":
    typer.run(main)
