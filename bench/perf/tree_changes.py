"""What a change to the tree rules changes: every section of every PDF, before and after.

Usage::

    python bench/perf/tree_changes.py snapshot OUT.json DIR... [--no-outline] [--with-holdout]
    python bench/perf/tree_changes.py diff BEFORE.json AFTER.json [-v]

``snapshot`` builds every PDF of the folders (``DIR/pdfs`` when it exists; cache off) and writes each
node's title, pages and depth. Take one on the old code (``git stash`` or a worktree) and one on the new,
then ``diff`` lists, per PDF, the titles that went and came (a node is its title and first page), and
with ``-v`` the nodes kept whose depth or last page moved; the last line gives the totals. The hold-out
PDFs named in the README are left out unless ``--with-holdout`` is given: their trees are not to be read
while rules are written. Each rule change of the tree builder is reported in the README with these counts.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from bench.perf import pdf_folders
from bench.perf.outline_recovery import HOLDOUT
from pageindex.cli._common import CliConsole, fail
from pageindex.tree import Node, PDFError, build_tree

app = typer.Typer(add_completion=False, no_args_is_help=True)
console = CliConsole()


def _pdfs(folders: list[Path], with_holdout: bool) -> list[Path]:
    out: list[Path] = []
    for folder in pdf_folders(folders, () if with_holdout else HOLDOUT):
        out += [p for p in sorted(folder.glob("*.pdf")) if with_holdout or p.stem not in HOLDOUT]
    return out


def rows(nodes: list[Node]) -> list[list]:
    """[title, start page, end page, depth] of every node, in reading order."""
    out: list[list] = []

    def walk(node: Node, depth: int) -> None:
        out.append([node.title, node.start_page, node.end_page, depth])
        for child in node.children:
            walk(child, depth + 1)

    for node in nodes:
        walk(node, 0)
    return out


@app.command()
def snapshot(
    out: Path,
    folders: list[Path],
    no_outline: bool = typer.Option(False, "--no-outline", help="build with the outline ignored"),
    with_holdout: bool = typer.Option(False, "--with-holdout", help="include the README's hold-out PDFs"),
) -> None:
    """Write every PDF's nodes to OUT (JSON)."""
    _new_snapshot(out)  # before the trees (minutes)
    trees: dict[str, list[list]] = {}
    for path in _pdfs(folders, with_holdout):
        try:
            tree = build_tree(path, use_cache=False, use_outline=not no_outline)
        except PDFError as exc:
            console.print(f"[yellow]skipped {path.name}: {exc}[/yellow]")
            continue
        trees[path.stem] = rows(tree.nodes)
    out.write_text(json.dumps(trees))
    console.print(f"{len(trees)} PDFs, {sum(len(r) for r in trees.values())} nodes -> {out}")


def changes(before: list[list], after: list[list]) -> tuple[list[list], list[list], list[tuple[list, list]]]:
    """(nodes gone, nodes new, (before, after) of nodes kept whose depth or last page moved).

    A node is its title and first page, counted as often as it occurs: two "Notes" sections on one
    page and one afterwards is one gone. Nodes of a key pair up in reading order; the surplus goes
    or comes."""
    queues: dict[tuple, list[list]] = {}
    for r in after:
        queues.setdefault((r[0], r[1]), []).append(r)
    gone, moved = [], []
    for r in before:
        partners = queues.get((r[0], r[1]))
        if not partners:
            gone.append(r)
            continue
        s = partners.pop(0)
        if (r[2], r[3]) != (s[2], s[3]):
            moved.append((r, s))
    left = {id(r) for rows in queues.values() for r in rows}
    new = [r for r in after if id(r) in left]
    return gone, new, moved


def _snapshot(path: Path) -> dict | str:
    """The snapshot ``path`` holds, or why it is none."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return str(exc)
    if not isinstance(data, dict) or not all(isinstance(rows, list) for rows in data.values()):
        return "not {PDF name: [nodes]}"
    return data


def _read(path: Path) -> dict:
    data = _snapshot(path)
    if isinstance(data, str):
        fail(f"{path}: not a snapshot of tree_changes.py snapshot ({data})")
    return data


def _new_snapshot(out: Path) -> None:
    """``out`` can take a snapshot: new, or an earlier snapshot (written over); a folder (the arguments
    swapped: ``snapshot DIR OUT.json``) or any other file is refused with one error line, before any tree
    is built (a folder ended in a traceback after every tree; a file was written over)."""
    if out.is_dir():
        fail(f"snapshot {out}: a folder; give the snapshot file first: snapshot OUT.json DIR...")
    if not out.parent.is_dir():
        fail(f"snapshot {out}: no folder {out.parent} to write it in")
    if out.exists() and isinstance(_snapshot(out), str):
        said = "exists and is not a snapshot of tree_changes.py (never written over); give a new file"
        fail(f"snapshot {out}: {said}")


@app.command()
def diff(
    before: Path, after: Path, verbose: bool = typer.Option(False, "-v", help="list moved nodes too")
) -> None:
    """Titles that went and came, per PDF, between two snapshots."""
    a, b = _read(before), _read(after)
    totals = [0, 0, 0]
    for name in sorted(set(a) & set(b)):
        gone, new, moved = changes(a[name], b[name])
        totals = [totals[0] + len(gone), totals[1] + len(new), totals[2] + len(moved)]
        if not (gone or new or (verbose and moved)):
            continue
        console.print(f"[bold]{name}[/bold]: {len(gone)} went, {len(new)} came, {len(moved)} moved")
        for r in gone:
            console.print(f"  - p. {r[1]}  {r[0][:90]}", markup=False, highlight=False)
        for r in new:
            console.print(f"  + p. {r[1]}  {r[0][:90]}", markup=False, highlight=False)
        if verbose:
            for r, s in moved:
                console.print(
                    f"  ~ p. {r[1]}  {r[0][:60]}  depth {r[3]}->{s[3]}, ends p. {r[2]}->{s[2]}",
                    markup=False,
                    highlight=False,
                )
    only = sorted(set(a) ^ set(b))
    if only:
        console.print(f"in one snapshot only: {', '.join(only)}")
    console.print(f"total: {totals[0]} went, {totals[1]} came, {totals[2]} moved")


if __name__ == "__main__":
    app()
