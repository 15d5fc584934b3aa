"""bench/perf/page_labels.py: labels found per PDF, compared with an earlier run; hold-outs never read."""

from __future__ import annotations

import json

import typer
from typer.testing import CliRunner

from bench.perf import page_labels
from tests.tree.pdf_factory import footed_pdf

PROSE = "The committee reviewed the programme during the year and reported its findings to the board."


def _run(*args: str):
    app = typer.Typer()
    app.command()(page_labels.main)
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


def test_labels_are_counted_and_compared_and_hold_outs_left_out(tmp_path):
    bodies = [[PROSE] * 3 for _ in range(4)]
    footed_pdf(tmp_path / "DEV_2023_10K.pdf", bodies, [f"ACME FUNDS {n}" for n in range(3, 7)])
    # a hold-out's name: a stand-in, not the filing
    footed_pdf(tmp_path / "NINTENDO_FY2023H1_EARNINGS-FINANCIAL-HIGHLIGHTS.pdf", bodies, ["1", "2", "3", "4"])
    before = tmp_path / "before.json"
    before.write_text(json.dumps({"DEV_2023_10K": {"1": "3", "2": "9", "9": "1"}}))
    out = _run(str(tmp_path), "--out", str(tmp_path / "after.json"), "--before", str(before), "-v")
    assert out.exit_code == 0, out.output
    assert json.loads((tmp_path / "after.json").read_text()) == {
        "DEV_2023_10K": {"1": "3", "2": "4", "3": "5", "4": "6"}
    }
    row = next(line for line in out.output.splitlines() if "DEV_2023_10K" in line and "│" in line)
    # pages, labelled, before, gained, lost, changed
    assert [c.strip() for c in row.split("│")[2:8]] == ["4", "4", "3", "2", "1", "1"]
    assert "DEV_2023_10K p. 2: '9' -> '4'" in out.output and "DEV_2023_10K p. 9: '1' lost" in out.output
    assert "NINTENDO" not in out.output
