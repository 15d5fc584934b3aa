"""How well section trees fit FinanceBench evidence pages.

Usage: ``python bench/perf/tree_quality.py DATA_DIR [--max-leaf-pages 5] [--no-cache] [-v]``

Builds the tree of every filing in a FinanceBench-format directory (``questions.jsonl`` +
``pdfs/``) and prints, over all gold evidence pages (``evidence_page_num`` is zero-based,
so +1): the share inside a leaf of at most 3 and at most 5 pages, the share whose leaf is a
named section (not a page window, not the cover), the share under any named section, and
the median and worst leaf size. Targets: 100% named, >= 80% in a leaf of <= 3 pages.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import jsonlines
import typer
from rich.table import Table

from bench.perf import dataset_folder
from pageindex.cli._common import CliConsole
from pageindex.tree import PDFError, Tree, build_tree

_UNNAMED = {"window", "cover"}


def evidence_pages(data_dir: Path) -> list[tuple[str, str, int]]:
    """(question id, doc name, 1-based PDF page) for every gold evidence item."""
    out = []
    with jsonlines.open(data_dir / "questions.jsonl") as reader:
        for q in reader:
            for ev in q.get("evidence", []):
                out.append(
                    (
                        q["financebench_id"],
                        ev.get("doc_name", q["doc_name"]),
                        int(ev["evidence_page_num"]) + 1,
                    )
                )
    return out


def leaf_for(tree: Tree, page: int):
    """The smallest leaf containing ``page``; among equally small ones a named one.

    A page shared at section boundaries belongs to every leaf that starts or ends on it (a
    10-K cover page holds the title page, the Section 12(b) securities, the filer status...):
    an agent fetching any of them reads the page.
    """
    found = [leaf for leaf in tree.leaves() if leaf.start_page <= page <= leaf.end_page]
    return min(found, key=lambda n: (n.page_count, n.kind in _UNNAMED)) if found else None


def named_path(tree: Tree, node_id: str) -> bool:
    """True when the node or one of its ancestors is a named (non-window, non-cover) section."""
    parts = node_id.split("/")
    for i in range(len(parts), 0, -1):
        nid = "/".join(parts[:i])
        if nid in tree and tree.get(nid).kind not in _UNNAMED:
            return True
    return False


def main(
    data_dir: Path = typer.Argument(..., help="FinanceBench-format directory (questions.jsonl, pdfs/)."),
    max_leaf_pages: int = typer.Option(5, help="Leaf size limit passed to build_tree."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Rebuild every tree."),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="List evidence pages that miss a target."),
) -> None:
    console = CliConsole()
    rows = evidence_pages(dataset_folder(data_dir))
    trees: dict[str, Tree] = {}
    for doc in sorted({d for _, d, _ in rows}):
        try:
            trees[doc] = build_tree(
                data_dir / "pdfs" / f"{doc}.pdf", use_cache=not no_cache, max_leaf_pages=max_leaf_pages
            )
        except PDFError as exc:
            console.print(f"[red]skip[/] {exc}")
    le3 = le5 = named_leaf = named_any = total = 0
    misses = []
    for qid, doc, page in rows:
        tree = trees.get(doc)
        if tree is None:
            continue
        total += 1
        leaf = leaf_for(tree, page)
        if leaf is None:
            misses.append((qid, doc, page, "no leaf"))
            continue
        le3 += leaf.page_count <= 3
        le5 += leaf.page_count <= 5
        named_leaf += leaf.kind not in _UNNAMED
        named_any += named_path(tree, leaf.node_id)
        if leaf.page_count > 3 or leaf.kind in _UNNAMED:
            misses.append(
                (qid, doc, page, f"{leaf.node_id} [{leaf.kind}] pp.{leaf.start_page}-{leaf.end_page}")
            )
    sizes = [leaf.page_count for t in trees.values() for leaf in t.leaves()]
    strategies: dict[str, int] = {}
    for t in trees.values():
        strategies[t.strategy] = strategies.get(t.strategy, 0) + 1
    table = Table(title=f"Tree quality over {total} evidence pages in {len(trees)} filings")
    table.add_column("measure")
    table.add_column("value", justify="right")
    pct = (lambda k: f"{100 * k / total:.1f}%") if total else (lambda k: "n/a")
    table.add_row("evidence in leaf <= 3 pages", pct(le3))
    table.add_row("evidence in leaf <= 5 pages", pct(le5))
    table.add_row("evidence leaf is named (not window/cover)", pct(named_leaf))
    table.add_row("evidence under a named section", pct(named_any))
    table.add_row("median leaf pages", f"{statistics.median(sizes):g}" if sizes else "n/a")
    table.add_row("worst leaf pages", str(max(sizes)) if sizes else "n/a")
    table.add_row("leaves", str(len(sizes)))
    table.add_row("strategies", ", ".join(f"{k} {v}" for k, v in sorted(strategies.items())))
    console.print(table)
    if verbose:
        for qid, doc, page, where in misses:
            console.print(f"  {qid} {doc} p.{page}: {where}", highlight=False)


if __name__ == "__main__":
    typer.run(main)
    sys.exit(0)
