"""``pageindex build`` / ``pageindex tree``: output files, the printed TOC, and bad input."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from pageindex.cli import app
from tests.tree.pdf_factory import encrypted_pdf, make_pdf, scanned_pdf, zero_page_pdf

runner = CliRunner()
FILING = "FOOTLOCKER_2022_8K_dated-2022-05-20"


def test_build_writes_tree_json_and_reuses_cache(fb_pdf, tmp_path):
    out = tmp_path / "tree.json"
    cache = tmp_path / "cache"
    result = runner.invoke(app, ["build", str(fb_pdf(FILING)), "-o", str(out), "--cache-dir", str(cache)])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["doc_id"] == FILING and data["page_count"] == 4
    assert {"item_5_07", "item_9_01"} <= {n["node_id"] for n in data["nodes"]}
    assert "4 pages" in result.output and "strategy sec" in result.output
    assert len(list(cache.iterdir())) == 1
    again = runner.invoke(app, ["build", str(fb_pdf(FILING)), "--cache-dir", str(cache)])
    assert again.exit_code == 0 and len(list(cache.iterdir())) == 1


def test_tree_prints_indented_toc_from_json_and_pdf(fb_pdf, tmp_path):
    out = tmp_path / "tree.json"
    runner.invoke(app, ["build", str(fb_pdf(FILING)), "-o", str(out), "--no-cache"])
    from_json = runner.invoke(app, ["tree", str(out)])
    assert from_json.exit_code == 0, from_json.output
    lines = from_json.output.splitlines()
    assert lines[0].startswith(FILING) and "strategy: sec" in lines[0]
    item = next(line for line in lines if "item_5_07" in line)
    assert "Item 5.07" in item and "[p. 2" in item
    from_pdf = runner.invoke(app, ["tree", str(fb_pdf(FILING)), "--no-cache"])
    assert from_pdf.exit_code == 0 and from_pdf.output == from_json.output


def test_max_leaf_pages_option_splits_further(fb_pdf, tmp_path):
    out = tmp_path / "tree.json"
    result = runner.invoke(
        app, ["build", str(fb_pdf("AMAZON_2019_10K")), "-o", str(out), "--no-cache", "--max-leaf-pages", "2"]
    )
    assert result.exit_code == 0, result.output

    def leaves(nodes):
        for n in nodes:
            yield from leaves(n["children"]) if n["children"] else [n]

    assert max(n["end_page"] - n["start_page"] + 1 for n in leaves(json.loads(out.read_text())["nodes"])) <= 2


def _not_pdf(path):
    path.write_text("hello")
    return path


def _truncated(path):
    good = make_pdf(path.with_name("whole.pdf"), [["Item 1. Business"], ["Item 2. Properties"]])
    path.write_bytes(good.read_bytes()[:300])
    return path


@pytest.mark.parametrize(
    ("name", "make", "words"),
    [
        ("missing.pdf", lambda p: p, "file not found"),
        ("text.pdf", _not_pdf, "not a PDF"),
        ("cut.pdf", _truncated, "corrupt or truncated"),
        ("locked.pdf", encrypted_pdf, "encrypted"),
        ("empty.pdf", zero_page_pdf, "no pages"),
        ("scan.pdf", scanned_pdf, "no text layer"),
    ],
)
def test_bad_input_one_line_exit_2_no_output(tmp_path, name, make, words):
    path = make(tmp_path / name)
    out = tmp_path / "tree.json"
    cache = tmp_path / "cache"
    for args in (
        ["build", str(path), "-o", str(out), "--cache-dir", str(cache)],
        ["tree", str(path), "--no-cache"],
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 2
        text = result.output.strip()
        assert len(text.splitlines()) == 1 and name in text and words in text
        assert "Traceback" not in text
    assert not out.exists()
    assert not cache.exists() or not any(cache.iterdir())


def test_tree_rejects_a_json_that_is_not_a_tree(tmp_path):
    bad = tmp_path / "other.json"
    bad.write_text('{"hello": 1}')
    result = runner.invoke(app, ["tree", str(bad)])
    assert result.exit_code == 2 and "not a tree JSON" in result.output


def test_help_on_both_commands():
    for cmd in ("build", "tree"):
        result = runner.invoke(app, [cmd, "--help"])
        assert result.exit_code == 0 and "--no-cache" in result.output


def test_build_of_a_directory_says_it_is_a_directory(tmp_path):
    result = CliRunner().invoke(app, ["build", str(tmp_path)])
    assert result.exit_code == 2
    assert f"error: {tmp_path}: not a PDF file (a directory: give one filing's PDF)" in result.output
    assert "file not found" not in result.output


@pytest.mark.parametrize("command", ["build", "tree"])
def test_an_empty_cache_dir_is_refused_not_the_current_folder(command, tmp_path, monkeypatch):
    """``--cache-dir "$UNSET"`` used to cache trees in the current folder."""
    (tmp_path / "in").mkdir()
    filing = make_pdf(tmp_path / "in" / "x.pdf", [["ACME Annual Report"], ["Item 1. Business", "We sell."]])
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    result = CliRunner().invoke(app, [command, str(filing), "--cache-dir", ""])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines == [
        "error: --cache-dir '': give a folder for the tree cache (--cache-dir . for the current one)"
    ]
    assert list((tmp_path / "cwd").iterdir()) == []


def test_an_empty_out_is_named_as_the_current_folder(tmp_path, monkeypatch):
    """``-o "$UNSET"`` reaches the command as ``.``: the error says that this is the current folder."""
    filing = make_pdf(tmp_path / "x.pdf", [["ACME Annual Report"], ["Item 1. Business", "We sell."]])
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["build", str(filing), "-o", "", "--cache-dir", str(tmp_path / "c")])
    assert result.exit_code == 2, result.output
    assert "error: --out . (the current folder): is a directory; give a file path (e.g. out)" in result.output


def test_names_in_square_brackets_are_printed_as_written(tmp_path):
    """A file name such as "[draft] 10-K.pdf" was read as markup: `build` printed ": 1 page, ..." and
    "-> .json" (the bracketed parts dropped), and `cache stats` the same of its path."""
    pdf = make_pdf(tmp_path / "[draft] acme.pdf", [["Item 1. Business", "We make anvils."]])
    out = tmp_path / "[red]tree.json"
    result = runner.invoke(app, ["build", str(pdf), "-o", str(out), "--no-cache"])
    assert result.exit_code == 0, result.output
    assert result.output == f"[draft] acme: 1 page, 1 section, 1 leaf, strategy sec -> {out}\n"
    path, trees = tmp_path / "[b]llm.sqlite", tmp_path / "[t]trees"
    stats = runner.invoke(app, ["cache", "stats", "--cache-path", str(path), "--tree-cache-dir", str(trees)])
    assert stats.exit_code == 0
    assert stats.output == f"cache {path}: empty (no file yet)\ntrees {trees}: empty (no folder yet)\n"
    cleared = runner.invoke(app, ["cache", "clear", "--cache-path", str(path), "--yes"])
    assert cleared.exit_code == 0 and cleared.output == f"deleted 0 replies and failures from {path}\n"
    from pageindex.llm import LLMCache

    cache = LLMCache(path, mode="rw")
    cache.put("k", model="[m]x", kind="chat", request={}, reply={}, prompt_tokens=1, completion_tokens=1)
    cache.close()
    stats = runner.invoke(app, ["cache", "stats", "--cache-path", str(path)], env={"COLUMNS": "200"})
    assert stats.exit_code == 0 and stats.output.startswith(f"cache {path}: 1 reply, ")
    assert "[m]x" in stats.output


def test_a_pdf_under_a_json_name_is_said_to_be_a_pdf(tmp_path):
    """`tree x.json` and `ask x.json` read the file as a tree JSON: a filing saved under that name was
    "not a tree JSON ('utf-8' codec can't decode byte 0xda in position 729: ...)"."""
    pdf = make_pdf(tmp_path / "filing.pdf", [["Item 1. Business", "We make anvils."]])
    named = tmp_path / "filing.json"
    for tail in (bytes(range(128, 256)), b""):  # binary, as most filings are, and plain ASCII
        named.write_bytes(pdf.read_bytes() + tail)
        for args in (["tree", str(named)], ["ask", str(named), "Revenue?", "-r", "extractive"]):
            result = runner.invoke(app, args)
            assert result.exit_code == 2, result.output
            assert result.output == (
                f"error: {named}: not a tree JSON (it is a PDF file: give it a .pdf name to build its tree)\n"
            )


def test_an_encrypted_pdf_says_how_to_get_a_readable_one(tmp_path):
    """"PDF is encrypted (password protected)" said what was wrong but not what to do, as the scan's
    "OCR it first" does: nothing here takes a password, so the line says how to decrypt it."""
    locked = encrypted_pdf(tmp_path / "locked.pdf")
    result = runner.invoke(app, ["build", str(locked)])
    assert result.exit_code == 2
    assert result.output == (
        f"error: {locked}: PDF is encrypted (password protected); decrypt it first "
        "(qpdf --decrypt --password=PW in.pdf out.pdf)\n"
    )


def test_a_file_named_like_an_option_is_told_how_to_give(tmp_path, monkeypatch):
    """`pageindex build -annual.pdf` read the name as options: "No such option: -a", no word of the
    file of that name there."""
    monkeypatch.chdir(tmp_path)
    make_pdf(tmp_path / "-annual.pdf", [["Item 1. Business", "We make anvils."]])
    for args in (["build", "-annual.pdf"], ["ask", "-annual.pdf", "Revenue?", "-r", "extractive"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2
        assert result.output.startswith("error: No such option: -a")
        assert "-annual.pdf is a file: write ./-annual.pdf (or put -- before it)" in result.output
    result = runner.invoke(app, ["build", "--", "-annual.pdf"])
    assert result.exit_code == 0 and result.output.startswith("-annual: 1 page")
    result = runner.invoke(app, ["build", "-zzz.pdf"])  # no such file: click's line alone
    assert result.exit_code == 2 and "is a file" not in result.output
