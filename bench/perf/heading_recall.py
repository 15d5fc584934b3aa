"""How many of a filing's headings the layout rules find, on PDFs that have no outline to compare with.

Usage: ``python bench/perf/heading_recall.py GOLD_DIR PDF_DIR... [--with-holdout] [--only NAME] [-v]``
(``python bench/perf/heading_recall.py bench/perf/data/headings ../shared/filings``)

``outline_recovery.py`` measures the layout rules against a PDF's own outline, so only on PDFs that have
one. This script measures them against headings written by hand. ``GOLD_DIR`` holds one ``NAME.jsonl``
per filing, ``NAME.pdf`` being looked up in the ``PDF_DIR`` folders (``DIR/pdfs`` when it exists). Each
line is ``{"title": "Item 2. Management's Discussion ...", "page": 25, "level": 2}``: the heading as printed,
its physical 1-based page, and its level, 1 (Parts, Items, the headed blocks of a release, exhibits),
2 (statements, notes, the sub-sections of an Item or block) or 3 (finer headings: a note's sub-headings).
The gold files of the eight outline-less filings of ``../shared/filings`` are ``bench/perf/data/headings/``
(their README gives the conventions and the split): written from each page's text (pymupdf
``get_text("dict")`` spans: bold, size, indent; the filing's printed table of contents) before any tree of
those filings was built. For every gold file the
tree is built with the outline ignored (none of these PDFs has one) and the script prints, per PDF and
overall:

* **found**: the share of level-1/2 gold headings matched by a node of ours that starts on the same
  page with a similar title (``outline_recovery.similar``: lower-cased, punctuation dropped, one
  containing the other or ``difflib`` ratio >= 0.6);
* **noise**: the share of our nodes (page windows left out) that match no gold heading of any level by
  the same rule.

Gold files named in ``HELD_OUT`` are the hold-out half of the first six, those in ``HELD_OUT_2`` a second
hold-out (two filings of kinds no rule was developed on): both are left out unless ``--with-holdout`` is
given, and then reported apart ("hold-out", "hold-out 2"). The other hold-out PDFs of the README
(``outline_recovery.HOLDOUT``, which holds ``HELD_OUT_2`` too) are never built.
A missing folder is refused with one ``error:`` line, exit 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.table import Table

from bench.perf.outline_recovery import HOLDOUT, layout_tree, print_overall, similar
from pageindex.cli._common import CliConsole, fail
from pageindex.tree import Tree

# The gold hold-out: of the six gold files, the two whose sha256 of "NAME.pdf" is lowest (fixed before any
# of their trees was built; an even/odd first byte split them 3/3).
HELD_OUT = frozenset({"NINTENDO_FY2023H1_EARNINGS-FINANCIAL-HIGHLIGHTS", "MICROSOFT_FY2025Q4_8-K-EARNINGS"})
# The second hold-out: two filings of kinds no rule was developed on (a glossy ESG report, a fund's annual
# report), labelled 2026-11-28 before any tree of them was built. They stay in outline_recovery.HOLDOUT, so no
# development measure builds them; here they are built only with --with-holdout and reported apart.
HELD_OUT_2 = frozenset({"RIO-TINTO_2023_CLIMATE-CHANGE-REPORT", "SCOR-FUNDS_2020_FUND-ANNUAL-REPORT"})

console = CliConsole()


def read_gold(path: Path) -> list[tuple[int, str, int]]:
    """(level, title, page) rows of one gold file."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            rows.append((int(row["level"]), str(row["title"]), int(row["page"])))
    return rows


def score(tree: Tree, gold: list[tuple[int, str, int]]) -> tuple[int, int, int, int, list[str], list[str]]:
    """(level-1/2 headings found, level-1/2 headings, noise nodes, nodes, missed headings, noise titles)."""
    nodes = [n for n in tree.walk() if n.kind != "window"]
    by_page: dict[int, list[str]] = {}
    for n in nodes:
        by_page.setdefault(n.start_page, []).append(n.title)
    wanted = [g for g in gold if g[0] <= 2]
    missed = [f"p.{page} {title[:70]}" for _, title, page in wanted
              if not any(similar(title, t) for t in by_page.get(page, []))]
    gold_by_page: dict[int, list[str]] = {}
    for _, title, page in gold:
        gold_by_page.setdefault(page, []).append(title)
    noise = [f"p.{n.start_page} {n.title[:70]}" for n in nodes
             if not any(similar(n.title, t) for t in gold_by_page.get(n.start_page, []))]
    return len(wanted) - len(missed), len(wanted), len(noise), len(nodes), missed, noise


def main(
    gold_dir: Path = typer.Argument(..., help="Folder of NAME.jsonl gold heading files."),
    dirs: list[Path] = typer.Argument(..., help="Folders of PDFs (or FinanceBench-format dirs with pdfs/)."),
    with_holdout: bool = typer.Option(False, "--with-holdout", help="Also build and report the hold-out."),
    only: list[str] = typer.Option([], "--only", help="Only PDFs whose name contains this (repeatable)."),
    verbose: bool = typer.Option(
        False, "-v", "--verbose", help="List the development filings' headings missed and their noise."
    ),
) -> None:
    for d in [gold_dir, *dirs]:
        if not d.is_dir():
            fail(f"{d}: no such folder")
    folders = [d / "pdfs" if (d / "pdfs").is_dir() else d for d in dirs]
    groups: dict[str, list[int]] = {k: [0, 0, 0, 0] for k in ("development", "hold-out", "hold-out 2")}
    table = Table("pdf", "set", "found", "headings", "found %", "noise %", "nodes", "strategy")
    details: list[tuple[str, list[str], list[str]]] = []
    for gold_path in sorted(gold_dir.glob("*.jsonl")):
        name = gold_path.stem
        kind = "hold-out" if name in HELD_OUT else "hold-out 2" if name in HELD_OUT_2 else "development"
        if name in HOLDOUT and name not in HELD_OUT_2 or kind != "development" and not with_holdout:
            continue
        if only and not any(o.lower() in name.lower() for o in only):
            continue
        pdf = next((f / f"{name}.pdf" for f in folders if (f / f"{name}.pdf").is_file()), None)
        if pdf is None:
            console.print(f"[yellow]skip[/] {name}: no {name}.pdf in the PDF folders")
            continue
        tree = layout_tree(console, pdf)
        if tree is None:
            continue
        found, total, noise, nodes, missed, noisy = score(tree, read_gold(gold_path))
        g = groups[kind]
        g[0], g[1], g[2], g[3] = g[0] + found, g[1] + total, g[2] + noise, g[3] + nodes
        pct = f"{100 * found / total:.0f}%" if total else "n/a"
        noise_pct = f"{100 * noise / max(nodes, 1):.0f}%"
        table.add_row(name, kind, str(found), str(total), pct, noise_pct, str(nodes), tree.strategy)
        if kind == "development":  # a hold-out is read as counts only: its titles would invite tuning on it
            details.append((name, missed, noisy))
    console.print(table)
    print_overall(console, groups, "gold headings")
    if verbose:
        if with_holdout:
            console.print("(-v lists the development filings' titles only: a hold-out is read as counts)")
        for name, missed, noisy in details:
            for m in missed:
                console.print(f"  {name} missed {m}", highlight=False, markup=False)
            for m in noisy:
                console.print(f"  {name} noise {m}", highlight=False, markup=False)


if __name__ == "__main__":
    typer.run(main)
