"""The perf scripts the README quotes refuse a wrong folder or argument with one ``error:`` line, exit 2,
before any work: tree_quality.py, table_speed.py and harness_overhead.py ended in a traceback, tree_speed.py
and outline_recovery.py printed a table of zeros and exited 0, tree_changes.py wrote an empty snapshot
and baselines.py's line had no ``error:``."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from bench.perf import (
    baselines,
    extractive_speed,
    harness_overhead,
    ledger_memory,
    outline_recovery,
    page_labels,
    table_speed,
    tree_quality,
    tree_speed,
)
from tests.tree.pdf_factory import make_pdf


def _invoke(main, *args: str):
    app = typer.Typer()
    app.command()(main)
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "300"})


def _said(out) -> str:
    lines = [line for line in out.output.splitlines() if line.strip()]
    assert len(lines) == 1, out.output
    return lines[0]


FOLDER_SCRIPTS = {
    "tree_quality": tree_quality.main,
    "tree_speed": tree_speed.main,
    "outline_recovery": outline_recovery.main,
    "table_speed": table_speed.main,
    "harness_overhead": harness_overhead.main,
    "baselines": baselines.main,
    "ledger_memory": ledger_memory.main,
    "extractive_speed": extractive_speed.main,
    "page_labels": page_labels.main,
}


@pytest.mark.parametrize("script", sorted(FOLDER_SCRIPTS))
def test_a_missing_folder_is_one_error_line(script, tmp_path: Path) -> None:
    out = _invoke(FOLDER_SCRIPTS[script], str(tmp_path / "nope"))
    assert out.exit_code == 2
    assert _said(out).startswith(f"error: {tmp_path / 'nope'}: no such ")


@pytest.mark.parametrize("script", ["tree_speed", "outline_recovery", "table_speed"])
def test_a_folder_without_pdfs_is_one_error_line(script, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("no filings here")
    out = _invoke(FOLDER_SCRIPTS[script], str(tmp_path))
    assert out.exit_code == 2
    said = f"error: {tmp_path}: no PDF in {tmp_path} (give FinanceBench-format folders or folders of PDFs)"
    assert _said(out) == said


def test_a_folder_of_hold_outs_only_says_they_are_left_out(tmp_path: Path) -> None:
    make_pdf(tmp_path / "COSTCO_2024_DEF14A.pdf", [["Proxy", "Vote."]])  # a hold-out's name, never opened
    out = _invoke(tree_speed.main, str(tmp_path))
    assert out.exit_code == 2 and "no PDF but hold-outs, left out without --with-holdout in" in _said(out)


@pytest.mark.parametrize("script", ["tree_quality", "harness_overhead"])
def test_a_folder_without_questions_is_one_error_line(script, tmp_path: Path) -> None:
    out = _invoke(FOLDER_SCRIPTS[script], str(tmp_path))
    assert out.exit_code == 2
    assert _said(out) == (
        f"error: {tmp_path}: no questions.jsonl (give a FinanceBench-format folder: questions.jsonl, pdfs/)"
    )


def test_table_speed_names_a_page_spec_it_cannot_read(tmp_path: Path) -> None:
    make_pdf(tmp_path / "ACME_2023_10K.pdf", [["ITEM 1. BUSINESS", "We make things."]] * 3)
    for spec, said in [
        ("NOPE:1", f"error: 'NOPE:1': no {tmp_path / 'NOPE.pdf'}"),
        ("ACME_2023_10K:4", "error: 'ACME_2023_10K:4': ACME_2023_10K.pdf has 3 pages"),
        ("ACME_2023_10K", f"error: 'ACME_2023_10K': give DOC:PAGE, a PDF's name in {tmp_path} and a 1-based "
                          "page, e.g. 3M_2018_10K:60"),
    ]:
        out = _invoke(table_speed.main, str(tmp_path), spec)
        assert (out.exit_code, _said(out)) == (2, said)


def test_tree_changes_writes_no_snapshot_of_a_missing_folder(tmp_path: Path) -> None:
    from bench.perf import tree_changes

    out = CliRunner().invoke(tree_changes.app, ["snapshot", str(tmp_path / "s.json"), str(tmp_path / "nope")])
    assert out.exit_code == 2 and _said(out).startswith(f"error: {tmp_path / 'nope'}: no such folder")
    assert not (tmp_path / "s.json").exists()


def test_cli_startup_refuses_a_run_folder_that_is_not_one_and_zero_repeats(tmp_path: Path) -> None:
    """``--run /nope`` ended in a FileNotFoundError traceback (copying it as the gate's baseline), and
    ``-n 0`` printed every time as ``inf`` and every ratio as ``nanx``."""
    from bench.perf import cli_startup

    out = _invoke(cli_startup.main, "--run", str(tmp_path / "nope"))
    assert out.exit_code == 2
    nope = tmp_path / "nope"
    said = f"error: --run {nope}: no such folder (give a run folder of pageindex bench run, or no --run)"
    assert _said(out) == said
    out = _invoke(cli_startup.main, "--run", str(tmp_path))
    assert out.exit_code == 2 and "no run.json in it" in _said(out)
    out = _invoke(cli_startup.main, "-n", "0")
    assert out.exit_code == 2 and "inf" not in out.output


def test_llm_overhead_refuses_levels_it_cannot_run_before_starting_its_server(monkeypatch) -> None:
    """``--levels x`` ended in a ValueError traceback and ``--levels 0`` waited for ever."""
    from bench.perf import llm_overhead

    def no_server(delay):
        raise AssertionError("the test server was started")

    monkeypatch.setattr(llm_overhead, "start_server", no_server)
    for given in ("x", "0", "1,,8", "-1"):
        out = _invoke(llm_overhead.main, "--levels", given)
        said = f"error: --levels {given!r}: give whole numbers above 0, comma-separated, e.g. 1,8,32,64"
        assert (out.exit_code, _said(out)) == (2, said)


def test_harness_overhead_names_an_unknown_retriever_before_the_warm_up(monkeypatch, tmp_path: Path) -> None:
    """An unknown --retrievers name ended in a RunSetupError traceback, after the warm-up had built every
    tree of the dataset."""

    class NoRunner:
        def __init__(self, *args, **kwargs):
            raise AssertionError("a run started")

    monkeypatch.setattr(harness_overhead, "Runner", NoRunner)
    monkeypatch.setenv("PAGEINDEX_FINANCEBENCH", str(tmp_path))  # none: the demo dataset
    out = _invoke(harness_overhead.main, "--questions", "2", "--retrievers", "oracle,nope")
    assert out.exit_code == 2
    assert _said(out).startswith("error: --retrievers 'oracle,nope': unknown retriever(s) nope; choose from ")


def test_outline_recovery_only_naming_no_pdf_is_one_error_line(tmp_path: Path) -> None:
    """It printed an empty table and exited 0: read as nothing to recover."""
    make_pdf(tmp_path / "ACME_2023_10K.pdf", [["Item 1. Business", "Text."]])
    out = _invoke(outline_recovery.main, str(tmp_path), "--only", "NOPE")
    assert out.exit_code == 2
    assert _said(out) == "error: --only NOPE names none of the 1 PDFs here (a part of a PDF's name)"


def test_outline_recovery_verbose_never_lists_a_hold_outs_entries(tmp_path: Path, monkeypatch) -> None:
    """``-v --with-holdout`` listed the hold-out's missed outline entries too: a hold-out is counts only."""
    import pymupdf

    from tests.tree.pdf_factory import save_pdf

    for name in ("DEV", "HELD"):
        doc = pymupdf.open()
        for _ in range(6):
            doc.new_page().insert_text((72, 72), "Body text of a page.", fontname="helv", fontsize=10)
        save_pdf(doc, tmp_path / f"{name}.pdf", [[1, f"Entry {name} {i}", i + 1] for i in range(6)])
    monkeypatch.setattr(outline_recovery, "HOLDOUT", frozenset({"HELD"}))
    out = _invoke(outline_recovery.main, str(tmp_path), "--with-holdout", "-v")
    assert out.exit_code == 0, out.output
    assert "hold-out overall: 0/6" in out.output and "development overall: 0/6" in out.output, out.output
    assert "DEV missed" in out.output and "Entry DEV 0" in out.output
    assert "Entry HELD" not in out.output
