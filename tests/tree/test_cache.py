"""The on-disk tree cache: keyed by sha256 + builder version, atomic, and actually used."""

from __future__ import annotations

import json

import pytest

from pageindex.tree import PDFUnreadableError, build_tree, default_cache_dir
from pageindex.tree import build as build_module
from pageindex.tree.cache import TreeCache, file_sha256
from tests.tree.pdf_factory import make_pdf

PAGES = [
    ["ACME CORP FORM 10-K", "cover text"],
    ["PART I", "Item 1. Business", "We make anvils."],
    ["Item 1A. Risk Factors", "Anvils fall."],
    ["PART II", "Item 7. Management's Discussion and Analysis", "Sales rose."],
    ["Item 8. Financial Statements and Supplementary Data", "Consolidated Balance Sheets", "Cash 10 12"],
]


@pytest.fixture
def small_pdf(tmp_path):
    return make_pdf(tmp_path / "acme.pdf", PAGES)


def test_second_build_reads_the_cache(small_pdf, tmp_path, monkeypatch):
    cache_dir = tmp_path / "cache"
    first = build_tree(small_pdf, cache_dir=cache_dir)
    entries = list(cache_dir.iterdir())
    assert [e.name for e in entries] == [f"{file_sha256(small_pdf)}-v{first.builder_version}.json"]

    def no_parse(path):
        raise AssertionError("the PDF was parsed again instead of read from the cache")

    monkeypatch.setattr(build_module, "read_pdf", no_parse)
    second = build_tree(small_pdf, cache_dir=cache_dir)
    assert second == first


def test_another_pymupdf_release_misses_the_cache(small_pdf, tmp_path, monkeypatch):
    """pymupdf's text and spans differ between releases: a tree cached under one is not served after an
    upgrade, and the builder version runs record names the release."""
    from importlib import metadata

    cache_dir = tmp_path / "cache"
    first = build_tree(small_pdf, cache_dir=cache_dir)
    installed = metadata.version
    monkeypatch.setattr(
        metadata, "version", lambda name: "0.0.1" if name.lower() == "pymupdf" else installed(name)
    )
    build_module.code_version.cache_clear()
    try:
        parsed = []
        real_read = build_module.read_pdf
        monkeypatch.setattr(
            build_module, "read_pdf", lambda path, *data: parsed.append(path) or real_read(path, *data)
        )
        second = build_tree(small_pdf, cache_dir=cache_dir)
    finally:
        build_module.code_version.cache_clear()
    assert parsed == [small_pdf] and len(list(cache_dir.iterdir())) == 2
    assert second.builder_version != first.builder_version and "pymupdf0.0.1" in second.builder_version


def test_no_cache_neither_reads_nor_writes(small_pdf, tmp_path):
    cache_dir = tmp_path / "cache"
    build_tree(small_pdf, cache_dir=cache_dir, use_cache=False)
    assert not cache_dir.exists()


def test_cache_leaves_no_temp_files_and_survives_a_corrupt_entry(small_pdf, tmp_path):
    cache_dir = tmp_path / "cache"
    tree = build_tree(small_pdf, cache_dir=cache_dir)
    entry = TreeCache(cache_dir).path_for(tree.sha256, tree.builder_version)
    entry.write_text('{"doc_id": "half a tree')
    again = build_tree(small_pdf, cache_dir=cache_dir)
    assert again.nodes == tree.nodes
    assert json.loads(entry.read_text())["sha256"] == tree.sha256
    assert sorted(p.name for p in cache_dir.iterdir()) == [entry.name]


def test_copy_under_another_name_reuses_entry_with_its_own_name(small_pdf, tmp_path):
    cache_dir = tmp_path / "cache"
    build_tree(small_pdf, cache_dir=cache_dir)
    copy = tmp_path / "renamed.pdf"
    copy.write_bytes(small_pdf.read_bytes())
    tree = build_tree(copy, cache_dir=cache_dir)
    assert tree.doc_id == "renamed" and tree.source == str(copy)
    assert len(list(cache_dir.iterdir())) == 1


def test_leaf_limit_is_part_of_the_key(small_pdf, tmp_path):
    cache_dir = tmp_path / "cache"
    build_tree(small_pdf, cache_dir=cache_dir, max_leaf_pages=5)
    build_tree(small_pdf, cache_dir=cache_dir, max_leaf_pages=1)
    assert len(list(cache_dir.iterdir())) == 2


def test_default_cache_dir_follows_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(tmp_path / "pi"))
    assert default_cache_dir() == tmp_path / "pi" / "trees"
    monkeypatch.delenv("PAGEINDEX_CACHE_DIR")
    assert default_cache_dir().parts[-3:] == (".cache", "pageindex", "trees")


def test_a_cache_that_cannot_be_written_never_costs_the_tree(small_pdf, tmp_path, caplog):
    """The cache only saves time: a cache folder that cannot be created (a file stands there) still
    gives the tree, with a warning; the command line refuses such a --cache-dir before any work."""
    from typer.testing import CliRunner

    from pageindex.cli import app

    blocker = tmp_path / "not_a_folder"
    blocker.write_text("x")
    with caplog.at_level("WARNING", logger="pageindex.tree.build"):
        tree = build_tree(small_pdf, cache_dir=blocker / "trees")
    assert tree.page_count > 0 and tree.nodes
    assert "cannot be written" in caplog.text and "not cached" in caplog.text
    args = ["build", str(small_pdf), "--cache-dir", str(blocker), "-o", str(tmp_path / "t.json")]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2
    assert res.output.strip() == f"error: --cache-dir {blocker}: is a file; give a folder for the tree cache"
    assert not (tmp_path / "t.json").exists()
    loop, gone = tmp_path / "loop", tmp_path / "gone"
    loop.symlink_to(loop)
    gone.symlink_to(tmp_path / "moved")
    said = {loop: "a loop of symbolic links", gone: f"a symbolic link to {tmp_path / 'moved'}, which"}
    for link, what in said.items():
        res = CliRunner().invoke(app, [*args[:3], str(link), *args[4:]])  # cached nothing, said nothing
        assert res.exit_code == 2 and res.output.startswith(f"error: --cache-dir {link}: {what}"), res.output
    assert not (tmp_path / "t.json").exists()


def test_a_pdf_changed_on_disk_is_rebuilt_not_served_stale(tmp_path):
    """The same path with other content between two builds: the second build is the new file's tree."""
    path = make_pdf(tmp_path / "x.pdf", [["Item 1. Business", "ALPHA text"]])
    first = build_tree(path, cache_dir=tmp_path / "cache")
    make_pdf(path, [["Item 1. Business", "BRAVO text"]])
    second = build_tree(path, cache_dir=tmp_path / "cache")
    assert "ALPHA" in first.page_text(1) and "BRAVO" in second.page_text(1)
    assert second.sha256 == file_sha256(path) != first.sha256


def test_a_pdf_rewritten_while_it_is_built_never_files_one_version_under_the_other(tmp_path, monkeypatch):
    """The file was hashed, then read to build: a writer finishing another version in between had that
    version's tree cached under the first version's sha256, and every later build of the first version
    (any copy of it) was served the other's pages. Now it is hashed again once read and, changed, read
    again; one that never stops changing is an error, and nothing is cached."""
    alpha = make_pdf(tmp_path / "alpha.pdf", [["Item 1. Business", "ALPHA text"]])
    bravo = make_pdf(tmp_path / "bravo.pdf", [["Item 1. Business", "BRAVO text"]])
    path = tmp_path / "filing.pdf"
    path.write_bytes(alpha.read_bytes())
    real_read = build_module.read_pdf

    def read_while_rewritten(p, *args, **kwargs):
        path.write_bytes(bravo.read_bytes())  # the writer finishes its new version now
        return real_read(p, *args, **kwargs)

    monkeypatch.setattr(build_module, "read_pdf", read_while_rewritten)
    tree = build_tree(path, cache_dir=tmp_path / "cache")
    assert tree.sha256 == file_sha256(bravo) and "BRAVO" in tree.page_text(1)
    monkeypatch.setattr(build_module, "read_pdf", real_read)
    again = build_tree(alpha, cache_dir=tmp_path / "cache")  # the first version: not the other's tree
    assert again.sha256 == file_sha256(alpha) and "ALPHA" in again.page_text(1)

    versions = iter(range(100))

    def never_done(p, *args, **kwargs):
        make_pdf(path, [["Item 1. Business", f"version {next(versions)}"]])
        return real_read(p, *args, **kwargs)

    make_pdf(path, [["Item 1. Business", "a version not cached yet"]])
    monkeypatch.setattr(build_module, "read_pdf", never_done)
    cached = sorted((tmp_path / "cache").iterdir())
    changing = r"filing\.pdf: cannot be opened \(it changed all 3 times it was read \(still being"
    with pytest.raises(PDFUnreadableError, match=changing):
        build_tree(path, cache_dir=tmp_path / "cache")
    assert sorted((tmp_path / "cache").iterdir()) == cached
