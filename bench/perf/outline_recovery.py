"""How much of a PDF's own outline the layout rules find when the outline is ignored.

Usage: ``python bench/perf/outline_recovery.py DIR... [--with-holdout] [--only NAME] [-v]``

For every PDF in the folders (``DIR/pdfs`` when it exists) with a real outline (at least 6
entries left by the rules below), build the tree with ``use_outline=False`` and print, per
document and overall:

* **found**: the share of the outline's level-1/2 entries matched by a node of ours that starts
  on the same physical page with a similar title (lower-cased, punctuation dropped, spaces
  collapsed: one contains the other, or ``difflib`` ratio >= 0.6);
* **noise**: the share of our nodes (page windows left out) that match no outline entry of any
  level by the same rule.

Outline entries pointing outside the document are left out, and so are the wrappers a filings
service or a PDF merger adds: a first "summary" page bookmark, "Table N of M" entries, bookmarks
named after a merged file ("Ex 23 Q4 2022.pdf"), and a single top bookmark holding everything
else (the filing's name): under such a wrapper the outline's levels 2-3 are
the document's levels 1-2. The Mandarine report is printed but left out of the overall figure
(its second-level bookmarks are body sentences). The hold-out PDFs named in the README are left
out unless ``--with-holdout`` is given, and then reported separately.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import pymupdf
import typer
from rich.console import Console
from rich.table import Table

from bench.perf import pdf_folders
from pageindex.tree import PDFError, Tree, build_tree

HOLDOUT = frozenset(
    {
        "COSTCO_2024_DEF14A",
        "BHP_2020_CLIMATE-CHANGE-REPORT",
        "RIO-TINTO_2023_CLIMATE-CHANGE-REPORT",
        "SCOR-FUNDS_2020_FUND-ANNUAL-REPORT",
    }
)
NOISY_OUTLINE = re.compile(r"^MANDARINE", re.IGNORECASE)  # second-level bookmarks are body sentences
_SUMMARY = re.compile(r"^summary\s*page$|^summary$", re.IGNORECASE)
_FILE_NAME = re.compile(r"\.(?:pdf|docx?|htm)$", re.IGNORECASE)  # a merged file's own bookmark
_TABLE_N = re.compile(r"\btable\s+\d+(\s+of\s+\d+)?\s*$", re.IGNORECASE)


def norm(title: str) -> str:
    """Lower case, punctuation dropped, whitespace collapsed."""
    return " ".join(re.sub(r"[^\w\s]|_", " ", title.lower()).split())


def similar(a: str, b: str) -> bool:
    a, b = norm(a), norm(b)
    if not a or not b:
        return False
    if a in b or b in a:
        return True
    return difflib.SequenceMatcher(None, a, b).ratio() >= 0.6


def outline_entries(toc: list[list], page_count: int) -> list[tuple[int, str, int]]:
    """(document level, title, page) rows of the outline, wrappers and outside entries removed."""
    rows = [(int(r[0]), " ".join(str(r[1]).split()), int(r[2])) for r in toc]
    rows = [r for r in rows if r[1] and 1 <= r[2] <= page_count]
    rows = [r for r in rows if not _TABLE_N.search(r[1]) and not _FILE_NAME.search(r[1])]
    if rows and rows[0][0] == 1 and _SUMMARY.match(rows[0][1]) and rows[0][2] == 1:
        rows = rows[1:]
    tops = [r for r in rows if r[0] == min((x[0] for x in rows), default=1)]
    if len(tops) == 1 and len(rows) > 1 and rows[0] is tops[0]:  # one top bookmark holding the rest
        rows = [(level - 1, title, page) for level, title, page in rows[1:]]
    return rows


def score(tree: Tree, entries: list[tuple[int, str, int]]) -> tuple[int, int, int, int, list[str]]:
    """(level-1/2 entries found, level-1/2 entries, noise nodes, nodes, missed entries)."""
    nodes = [n for n in tree.walk() if n.kind != "window"]
    by_page: dict[int, list[str]] = {}
    for n in nodes:
        by_page.setdefault(n.start_page, []).append(n.title)
    wanted = [e for e in entries if e[0] <= 2]
    found = 0
    missed = []
    for _, title, page in wanted:
        if any(similar(title, t) for t in by_page.get(page, [])):
            found += 1
        else:
            missed.append(f"p.{page} {title[:70]}")
    outline_by_page: dict[int, list[str]] = {}
    for _, title, page in entries:
        outline_by_page.setdefault(page, []).append(title)
    noise = sum(
        1 for n in nodes if not any(similar(n.title, t) for t in outline_by_page.get(n.start_page, []))
    )
    return found, len(wanted), noise, len(nodes), missed


def main(
    dirs: list[Path] = typer.Argument(..., help="Folders of PDFs (or FinanceBench-format dirs with pdfs/)."),
    with_holdout: bool = typer.Option(False, "--with-holdout", help="Also build and report the hold-out."),
    only: list[str] = typer.Option([], "--only", help="Only PDFs whose name contains this (repeatable)."),
    verbose: bool = typer.Option(
        False, "-v", "--verbose", help="List the development PDFs' outline entries not found."
    ),
) -> None:
    console = Console(width=160)
    pdfs: list[Path] = []
    for folder in pdf_folders(dirs, () if with_holdout else HOLDOUT):
        pdfs += sorted(folder.glob("*.pdf"))
    if only and not any(any(o.lower() in p.stem.lower() for o in only) for p in pdfs):
        # an empty table and exit 0 read as "nothing to recover" (a name misspelt, or a hold-out's)
        from pageindex.cli._common import fail

        fail(f"--only {', '.join(only)} names none of the {len(pdfs)} PDFs here (a part of a PDF's name)")
    groups: dict[str, list[int]] = {"development": [0, 0, 0, 0], "hold-out": [0, 0, 0, 0]}
    table = Table("pdf", "set", "found", "entries", "found %", "noise %", "nodes", "strategy")
    misses: list[tuple[str, list[str]]] = []
    for path in pdfs:
        name = path.stem
        held = name in HOLDOUT
        if held and not with_holdout or only and not any(o.lower() in name.lower() for o in only):
            continue
        with pymupdf.open(path) as doc:
            entries = outline_entries(doc.get_toc(simple=True), doc.page_count)
        if len(entries) < 6:
            continue
        tree = layout_tree(console, path)
        if tree is None:
            continue
        found, total, noise, nodes, missed = score(tree, entries)
        noisy = bool(NOISY_OUTLINE.search(name))
        kind = "hold-out" if held else ("noisy outline" if noisy else "development")
        if not noisy:
            g = groups[kind]
            g[0] += found
            g[1] += total
            g[2] += noise
            g[3] += nodes
        pct = f"{100 * found / total:.0f}%" if total else "n/a"
        table.add_row(
            name,
            kind,
            str(found),
            str(total),
            pct,
            f"{100 * noise / max(nodes, 1):.0f}%",
            str(nodes),
            tree.strategy,
        )
        if not held:  # a hold-out is read as counts only: its titles would invite tuning on it
            misses.append((name, missed))
    console.print(table)
    print_overall(console, groups, "outline entries")
    if verbose:
        if with_holdout:
            console.print("(-v lists the development PDFs' entries only: a hold-out is read as counts)")
        for name, missed in misses:
            for m in missed:
                console.print(f"  {name} missed {m}", highlight=False, markup=False)


def layout_tree(console: Console, path: Path) -> Tree | None:
    """``path``'s tree built by the layout rules alone (its outline ignored, no cache), or None, said
    as a skipped PDF, when it cannot be read."""
    try:
        return build_tree(path, use_cache=False, use_outline=False)
    except PDFError as exc:
        console.print(f"[red]skip[/] {exc}")
        return None


def print_overall(console: Console, groups: dict[str, list[int]], what: str) -> None:
    """One line per group (development, hold-out) with entries: ``[found, total, noise, nodes]``, the
    found share of its level-1/2 ``what`` and the noise share of its nodes."""
    for kind, (found, total, noise, nodes) in groups.items():
        if total:
            console.print(
                f"{kind} overall: {found}/{total} level-1/2 {what} found ({100 * found / total:.1f}%); "
                f"noise {noise}/{nodes} nodes ({100 * noise / max(nodes, 1):.1f}%)",
                highlight=False,
            )


if __name__ == "__main__":
    typer.run(main)
