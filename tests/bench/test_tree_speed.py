"""bench/perf/tree_speed.py: the README's hold-out PDFs are not built unless asked for."""

from __future__ import annotations

import typer
from typer.testing import CliRunner

from bench.perf import tree_speed
from tests.tree.pdf_factory import make_pdf


def _app() -> typer.Typer:
    app = typer.Typer()
    app.command()(tree_speed.main)
    return app


def test_holdout_pdfs_are_left_out_unless_asked_for(tmp_path, monkeypatch):
    pages = [["ITEM 1. BUSINESS", "We make things."], ["ITEM 7. MD&A", "Sales rose."]]
    make_pdf(tmp_path / "DEV_2023_10K.pdf", pages)
    make_pdf(tmp_path / "COSTCO_2024_DEF14A.pdf", pages)  # a hold-out name: a stand-in, not the filing
    built: list[str] = []
    real = tree_speed.tree_seconds
    monkeypatch.setattr(tree_speed, "tree_seconds", lambda path: (built.append(path.stem), real(path))[1])
    runner = CliRunner()
    out = runner.invoke(_app(), [str(tmp_path), "-v"], env={"COLUMNS": "200"})
    assert out.exit_code == 0, out.output
    assert built == ["DEV_2023_10K"]
    assert "COSTCO_2024_DEF14A" not in out.output
    built.clear()
    out = runner.invoke(_app(), [str(tmp_path), "--with-holdout"])
    assert out.exit_code == 0, out.output
    assert built == ["COSTCO_2024_DEF14A", "DEV_2023_10K"]


def test_the_table_is_printed_whole_to_a_pipe(tmp_path, monkeypatch):
    """Its 11 columns need more than 200 characters with a long filing name (the prospectus's), and the
    slowest tree's name came out cut in a log: "JPMORGAN-INVESTMENT-FUNDS_2025-12_… 1.75 s"."""
    name = "JPMORGAN-INVESTMENT-FUNDS_2025-12_PROSPECTUS-WITH-A-LONG-NAME"
    make_pdf(tmp_path / f"{name}.pdf", [["ITEM 1. BUSINESS", "We make things."]])
    monkeypatch.delenv("COLUMNS", raising=False)
    out = CliRunner().invoke(_app(), [str(tmp_path)])
    assert out.exit_code == 0, out.output
    assert f"{name}.pdf" in out.output and "…" not in out.output
