"""bench/perf/memory.py: peaks measured above the imports, hold-outs left out, one-line errors."""

from __future__ import annotations

import typer
from typer.testing import CliRunner

from bench.perf import memory
from tests.tree.pdf_factory import make_pdf


def _app() -> typer.Typer:
    app = typer.Typer()
    app.command()(memory.main)
    return app


def test_a_tree_costs_more_than_its_text_and_both_are_measured_above_the_imports(tmp_path):
    pages = [["ITEM 1. BUSINESS", "We make things. " * 200]] * 40
    make_pdf(tmp_path / "BIG_2023_10K.pdf", pages)
    text, tree = memory.child_peak_kb("text", str(tmp_path / "BIG_2023_10K.pdf")), memory.child_peak_kb(
        "tree", str(tmp_path / "BIG_2023_10K.pdf"))
    assert 0 < text < tree < 100 * 1024  # KB: not the ~140 MB pymupdf maps when imported


def test_the_largest_non_holdout_pdf_is_measured_and_a_folder_without_questions_runs_nothing(tmp_path):
    make_pdf(tmp_path / "SMALL_2023_10K.pdf", [["ITEM 1. BUSINESS", "We make things."]])
    make_pdf(tmp_path / "COSTCO_2024_DEF14A.pdf", [["Proxy", "Vote."]] * 5)  # a hold-out's name: left out
    out = CliRunner().invoke(_app(), [str(tmp_path)], env={"COLUMNS": "200"})
    assert out.exit_code == 0, out.output
    assert "largest PDF: SMALL_2023_10K, 1 page\n" in out.output and "COSTCO" not in out.output
    assert "no folder with a questions.jsonl given" in out.output


def test_a_missing_folder_is_one_error_line(tmp_path):
    out = CliRunner().invoke(_app(), [str(tmp_path / "nope")])
    assert out.exit_code == 2
    said = f"error: {tmp_path / 'nope'}: no such folder (give FinanceBench-format or PDF folders)"
    assert out.stderr.strip() == said
