"""The tree cache's leftovers: entries of older builder versions and temp files of killed writes, counted
by ``pageindex cache stats`` and deleted by ``pageindex cache prune``; this version's trees, their
summaries and files the cache did not write stay."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pageindex.analyst.summaries import summary_path
from pageindex.cacheprune import TEMP_AGE, PruneIncomplete, prune_tree_cache, tree_cache_stats
from pageindex.cli import app
from pageindex.tree import build_tree
from pageindex.tree.cache import TreeCache
from tests.tree.pdf_factory import make_pdf

PAGES = [["ACME CORP FORM 10-K", "cover"], ["Item 1. Business", "We make anvils."]]


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """A tree cache holding: this version's tree and a summary file of it; the same PDF's tree and a
    summary under an older builder version, and another older version's tree; a killed write's temp
    file (two hours old) and one in progress (new); a file of the user's own."""
    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(tmp_path / "root"))
    monkeypatch.setenv("COLUMNS", "300")
    folder = tmp_path / "root" / "trees"
    tree = build_tree(make_pdf(tmp_path / "acme.pdf", PAGES))
    assert (folder / f"{tree.sha256}-v{tree.builder_version}.json").is_file()  # TreeCache's name
    summary_path(tree, "gpt-4o-mini", folder).write_text("{}")
    cache = TreeCache(folder)
    for old in ("2.0+0000000001-pymupdf1.26", "1.9+0000000002"):
        cache.put(tree.model_copy(update={"builder_version": old}))
    summary_path(tree.model_copy(update={"builder_version": "1.9+0000000002"}), "m", folder).write_text("{}")
    killed = folder / f".{tree.sha256}-v1.9+0000000002.json.k1ll3d_x.tmp"
    killed.write_text("half a tree")
    two_hours_ago = time.time() - 2 * TEMP_AGE
    os.utime(killed, (two_hours_ago, two_hours_ago))
    (folder / f".{tree.sha256}-v{tree.builder_version}.json.inflight.tmp").write_text("being written")
    (folder / "notes.txt").write_text("mine")
    return folder, tree.builder_version


def test_stats_tell_this_versions_entries_from_older_ones_and_temp_files(cache_dir):
    folder, version = cache_dir
    stats = tree_cache_stats(folder)
    assert (stats.by_version[version].trees, stats.by_version[version].files) == (1, 2)
    assert (stats.by_version["1.9+0000000002"].trees, stats.by_version["1.9+0000000002"].files) == (1, 2)
    assert len(stats.by_version) == 3
    old = stats.total(but=version)
    assert (old.trees, old.files) == (2, 3) and (stats.total().trees, stats.total().files) == (3, 5)
    assert (stats.temp_files, stats.temp_size_bytes) == (1, len("half a tree"))
    assert stats.other_files == 1


def test_prune_deletes_older_versions_and_killed_writes_only(cache_dir):
    folder, version = cache_dir
    before = {p.name for p in folder.iterdir()}
    files, _ = prune_tree_cache(folder, version)
    after = {p.name for p in folder.iterdir()}
    assert files == 4 and len(before - after) == 4
    assert all("1.9+" in name or "pymupdf1.26" in name for name in before - after)
    assert sum(1 for name in after if name.endswith(".tmp")) == 1  # the write in progress
    assert "notes.txt" in after and sum(1 for name in after if version in name) == 3
    assert prune_tree_cache(folder, version) == (0, 0)


def test_cache_stats_and_prune_commands(cache_dir):
    folder, version = cache_dir
    runner = CliRunner()
    stats = runner.invoke(app, ["cache", "stats"])
    assert stats.exit_code == 0, stats.output
    assert f"trees {folder}: 5 files (3 trees, 2 summary files)" in stats.output
    assert "of 3 builder versions" in stats.output and "`pageindex cache prune` deletes" in stats.output
    assert "1 temp file of killed writes" in stats.output and "1 other file" in stats.output

    declined = runner.invoke(app, ["cache", "prune"], input="n\n")
    assert declined.exit_code == 0 and "cancelled: nothing deleted from" in declined.output
    assert f"this builder version ({version}) has 2 files (1 tree, 1 summary file)" in declined.output
    assert "other versions have 3 files (2 trees, 1 summary file)" in declined.output
    assert "Delete 4 files" in declined.output
    assert len(list(folder.iterdir())) == 8
    done = runner.invoke(app, ["cache", "prune", "--yes"])
    assert done.exit_code == 0 and f"deleted 4 files (0.0 MB) from {folder}" in done.output
    again = runner.invoke(app, ["cache", "prune", "-y"])
    assert again.exit_code == 0 and f"nothing to delete from {folder}" in again.output


def test_a_tree_cache_path_that_is_a_file_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "300")
    a_file = tmp_path / "trees.json"
    a_file.write_text("{}")
    out = CliRunner().invoke(app, ["cache", "prune", "--tree-cache-dir", str(a_file), "-y"])
    assert out.exit_code == 2
    assert f"error: --tree-cache-dir {a_file}: is a file; give a folder for the tree cache" in out.output
    assert a_file.read_text() == "{}"
    missing = CliRunner().invoke(app, ["cache", "stats"])
    assert missing.exit_code == 0 and "trees " in missing.output and "empty (no folder yet)" in missing.output


@pytest.mark.parametrize("command", ["stats", "prune"])
def test_an_empty_or_dangling_tree_cache_dir_is_refused_before_any_output(tmp_path, monkeypatch, command):
    """`--tree-cache-dir "$UNSET"` was the current folder (`trees .: ... 367 other files`) and a symbolic
    link to a moved folder an empty cache, exit 0; both are refused as `build --cache-dir` refuses them,
    `cache stats` before it prints the LLM cache's line."""
    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "300")
    monkeypatch.chdir(tmp_path)
    empty = CliRunner().invoke(app, ["cache", command, "--tree-cache-dir", ""])
    assert empty.exit_code == 2
    assert empty.output.strip() == (
        "error: --tree-cache-dir '': give a folder for the tree cache "
        "(--tree-cache-dir . for the current one)"
    )
    link = tmp_path / "moved"
    link.symlink_to(tmp_path / "nowhere")
    dangling = CliRunner().invoke(app, ["cache", command, "--tree-cache-dir", str(link)])
    assert dangling.exit_code == 2
    assert dangling.output.strip() == (
        f"error: --tree-cache-dir {link}: a symbolic link to {tmp_path / 'nowhere'}, which does not exist; "
        "give a folder for the tree cache"
    )


def test_files_prune_cannot_delete_do_not_stop_the_others_and_are_counted(cache_dir, monkeypatch):
    """In a folder where some files cannot be deleted (a read-only folder; here the older version
    1.9's), the prune stopped at the first and said `Permission denied (what could be deleted was
    deleted)` whatever it had deleted; now it deletes the rest and says how many were not."""
    folder, version = cache_dir
    unlink = Path.unlink

    def refuse_1_9(path: Path, missing_ok: bool = False) -> None:
        if "1.9+" in path.name:
            raise PermissionError(13, "Permission denied", str(path))
        unlink(path, missing_ok=missing_ok)

    monkeypatch.setattr(Path, "unlink", refuse_1_9)
    with pytest.raises(PruneIncomplete) as raised:
        prune_tree_cache(folder, version)
    assert (raised.value.files, raised.value.failed, raised.value.reason) == (1, 3, "Permission denied")
    left = {p.name for p in folder.iterdir()}
    assert not any("pymupdf1.26" in name for name in left)  # the other old version's tree went
    assert sum(1 for name in left if "1.9+" in name) == 3
    out = CliRunner().invoke(app, ["cache", "prune", "-y"])
    assert out.exit_code == 2
    said = f"{folder}: 3 of 3 files could not be deleted (Permission denied); nothing deleted"
    assert f"error: the tree cache (under $PAGEINDEX_CACHE_DIR) {said}" in out.output


def test_the_cache_root_given_as_the_tree_cache_points_at_its_trees_folder(tmp_path, monkeypatch):
    """`--tree-cache-dir $PAGEINDEX_CACHE_DIR` (the folder of llm.sqlite, not of the trees) was `0 files
    (0 trees), 0.0 MB, of 0 builder versions` and `nothing to delete`, with no word of where the trees
    are; both commands now name the trees folder, and leave the LLM cache alone."""
    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(tmp_path / "elsewhere"))  # the LLM cache stats reads
    monkeypatch.setenv("COLUMNS", "300")
    (tmp_path / "trees").mkdir()
    (tmp_path / "llm.sqlite").write_bytes(b"not touched")
    pointer = f"the tree cache is its folder trees (--tree-cache-dir {tmp_path / 'trees'})"
    stats = CliRunner().invoke(app, ["cache", "stats", "--tree-cache-dir", str(tmp_path)])
    assert stats.exit_code == 0, stats.output
    assert stats.output.splitlines()[-1] == (
        f"trees {tmp_path}: no trees; {pointer}; 1 other file (not the cache's; left alone)"
    )
    prune = CliRunner().invoke(app, ["cache", "prune", "--tree-cache-dir", str(tmp_path), "-y"])
    assert prune.exit_code == 0, prune.output
    assert f"other versions have none; {pointer}; 1 other file" in prune.output
    assert f"nothing to delete from {tmp_path}" in prune.output
    assert (tmp_path / "llm.sqlite").read_bytes() == b"not touched"


def test_a_tree_cache_no_folder_can_be_is_refused_not_said_empty(tmp_path, monkeypatch):
    """With `PAGEINDEX_CACHE_DIR` a regular file, `cache stats` refused the LLM cache under it but `cache
    prune` said `trees F/trees: empty (no folder yet)`, `nothing to delete`, exit 0; so did a
    `--tree-cache-dir` under a file. Both are refused as the LLM cache's path is."""
    a_file = tmp_path / "cache-root"
    a_file.write_text("x")
    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(a_file))
    monkeypatch.setenv("COLUMNS", "300")
    out = CliRunner().invoke(app, ["cache", "prune", "-y"])
    assert out.exit_code == 2
    assert out.output.strip() == (
        f"error: the tree cache (under $PAGEINDEX_CACHE_DIR) {a_file / 'trees'} is not a folder: no folder "
        f"can be there ({a_file} is a file, not a folder)"
    )
    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(tmp_path / "root"))
    under = CliRunner().invoke(app, ["cache", "stats", "--tree-cache-dir", str(a_file / "trees")])
    assert under.exit_code == 2
    assert under.output.strip() == (
        f"error: --tree-cache-dir {a_file / 'trees'} is not a folder: no folder can be there ({a_file} is "
        "a file, not a folder)"
    )
    assert a_file.read_text() == "x"


def test_stats_of_one_older_builder_versions_trees_points_at_prune(tmp_path, monkeypatch):
    """After an upgrade every tree in the cache may be of one older builder version: `cache stats` said
    `3 files (3 trees), 0.0 MB, of 1 builder version` and nothing more (it names no version as the
    running one), so the README's *After an upgrade* advice had no echo in the command; now it points
    at `cache prune` whenever the folder holds trees, which deletes them all."""
    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "300")
    tree = build_tree(make_pdf(tmp_path / "acme.pdf", PAGES), use_cache=False)
    folder = tmp_path / "trees"
    TreeCache(folder).put(tree.model_copy(update={"builder_version": "2.0+0000000001-pymupdf1.26"}))
    stats = CliRunner().invoke(app, ["cache", "stats"])
    assert stats.exit_code == 0, stats.output
    assert stats.output.splitlines()[-1].startswith(f"trees {folder}: 1 file (1 tree), ")
    assert stats.output.splitlines()[-1].endswith(
        "of 1 builder version; `pageindex cache prune` deletes the files of builder versions other than the "
        "running one and those of killed writes"
    )
    done = CliRunner().invoke(app, ["cache", "prune", "-y"])
    assert done.exit_code == 0 and f"deleted 1 file (0.0 MB) from {folder}" in done.output


def test_prune_does_not_say_other_versions_trees_are_never_read(cache_dir):
    """Two installs of other versions may share one tree cache (two checkouts, another pymupdf
    release); `cache prune` said the other version's trees were `never read again`, and deleting them
    made the other install build them again. It now says this version never reads them, and what a
    prune costs an install that does."""
    folder, version = cache_dir
    out = CliRunner().invoke(app, ["cache", "prune"], input="n\n")
    assert out.exit_code == 0, out.output
    assert "never read again" not in out.output
    assert (
        "other versions have 3 files (2 trees, 1 summary file), 0.0 MB, which this version never reads (an "
        "install of another version that shares this folder would build its trees again)"
    ) in out.output


def test_tree_cache_dir_help_names_a_path(monkeypatch):
    """--tree-cache-dir is read as text (to refuse an empty one) and still shown as a path in help."""
    monkeypatch.setenv("COLUMNS", "120")
    for command in ("stats", "prune"):
        out = CliRunner().invoke(app, ["cache", command, "--help"])
        line = next(line for line in out.output.splitlines() if "--tree-cache-dir" in line)
        assert "<path>" in line and "<str>" not in line
