"""bench/perf/tree_changes.py: snapshots of every node, and what went, came and moved between two."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from bench.perf.tree_changes import app, changes
from tests.tree.pdf_factory import make_pdf


def test_changes_are_keyed_by_title_and_first_page():
    before = [["Item 8", 40, 90, 0], ["Current assets", 52, 52, 1], ["Balance Sheets", 52, 52, 1]]
    after = [["Item 8", 40, 90, 0], ["Balance Sheets", 52, 53, 1], ["Notes", 55, 90, 1]]
    gone, new, moved = changes(before, after)
    assert gone == [["Current assets", 52, 52, 1]]
    assert new == [["Notes", 55, 90, 1]]
    assert moved == [(["Balance Sheets", 52, 52, 1], ["Balance Sheets", 52, 53, 1])]


def test_a_node_that_occurs_twice_is_counted_twice():
    """Review 12: keyed by (title, first page) in a set, a second "Notes" on the same page going away
    read as a moved node."""
    gone, new, moved = changes([["Notes", 1, 3, 1], ["Notes", 1, 3, 2]], [["Notes", 1, 3, 1]])
    assert (gone, new, moved) == ([["Notes", 1, 3, 2]], [], [])
    gone, new, moved = changes([["A", 1, 1, 0] for _ in range(2)], [["A", 1, 1, 0] for _ in range(3)])
    assert (gone, new, moved) == ([], [["A", 1, 1, 0]], [])


def test_snapshot_then_diff(tmp_path):
    folder = tmp_path / "pdfs"
    folder.mkdir()
    make_pdf(folder / "A.pdf", [["ITEM 1. BUSINESS", "We make things."], ["ITEM 7. MD&A", "Sales rose."]])
    runner = CliRunner()
    first = runner.invoke(app, ["snapshot", str(tmp_path / "a.json"), str(tmp_path)])
    assert first.exit_code == 0, first.output
    snap = json.loads((tmp_path / "a.json").read_text())
    assert list(snap) == ["A"] and all(len(row) == 4 for row in snap["A"])
    edited = {"A": [row for row in snap["A"] if row[1] != 2] + [["Extra", 2, 2, 0]]}
    (tmp_path / "b.json").write_text(json.dumps(edited))
    out = runner.invoke(app, ["diff", str(tmp_path / "a.json"), str(tmp_path / "b.json")])
    gone = sum(1 for row in snap["A"] if row[1] == 2)
    assert out.exit_code == 0 and f"total: {gone} went, 1 came" in out.output, out.output
    assert "+ p. 2  Extra" in out.output
    missing = runner.invoke(app, ["diff", str(tmp_path / "a.json"), str(tmp_path / "none.json")])
    assert missing.exit_code == 2 and "Traceback" not in missing.output
    assert missing.output.startswith(f"error: {tmp_path / 'none.json'}: not a snapshot")


def test_snapshot_refuses_a_folder_or_a_file_of_the_users_before_building_any_tree(tmp_path, monkeypatch):
    """``snapshot DIR OUT.json`` (arguments swapped) built every tree, then ended in IsADirectoryError;
    an existing file that is no snapshot (a PDF, questions.jsonl) was written over with the JSON."""
    from bench.perf import tree_changes

    def no_tree(*args, **kwargs):
        raise AssertionError("a tree was built")

    monkeypatch.setattr(tree_changes, "build_tree", no_tree)
    folder = tmp_path / "pdfs"
    folder.mkdir()
    make_pdf(folder / "A.pdf", [["ITEM 1. BUSINESS", "We make things."]])
    runner = CliRunner()
    swapped = runner.invoke(app, ["snapshot", str(tmp_path), str(tmp_path / "a.json")])
    assert swapped.exit_code == 2
    assert swapped.output.strip() == (
        f"error: snapshot {tmp_path}: a folder; give the snapshot file first: snapshot OUT.json DIR..."
    )
    mine = tmp_path / "questions.jsonl"
    mine.write_text('{"financebench_id": "q1"}\n')
    over = runner.invoke(app, ["snapshot", str(mine), str(tmp_path)])
    assert over.exit_code == 2 and "exists and is not a snapshot of tree_changes.py" in over.output
    assert mine.read_text() == '{"financebench_id": "q1"}\n'
    other = tmp_path / "list.json"
    other.write_text("[1, 2]")
    listed = runner.invoke(app, ["diff", str(other), str(other)])
    assert listed.exit_code == 2 and listed.output.startswith(f"error: {other}: not a snapshot")
