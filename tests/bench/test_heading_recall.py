"""bench/perf/heading_recall.py: gold headings found by the tree and tree nodes matching no gold heading."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from typer.testing import CliRunner

from bench.perf import heading_recall, outline_recovery
from pageindex.tree import build_tree
from tests.tree.pdf_factory import make_pdf


def _app() -> typer.Typer:
    app = typer.Typer(add_completion=False)
    app.command()(heading_recall.main)
    return app


def _gold(path, rows) -> None:
    path.write_text("".join(json.dumps({"title": t, "page": p, "level": lv}) + "\n" for lv, t, p in rows))


def test_found_and_noise_on_a_small_filing(tmp_path):
    pdfs, gold = tmp_path / "pdfs", tmp_path / "gold"
    pdfs.mkdir()
    gold.mkdir()
    pdf = make_pdf(pdfs / "A.pdf", [["ITEM 1. BUSINESS", "We make things."], ["ITEM 7. MD&A", "Sales rose."]])
    rows = [(1, "Item 1. Business", 1), (1, "Item 7. MD&A", 2), (2, "Liquidity", 2), (3, "Cash", 2)]
    _gold(gold / "A.jsonl", rows)
    tree = build_tree(pdf, use_cache=False, use_outline=False)
    scored = heading_recall.score(tree, heading_recall.read_gold(gold / "A.jsonl"))
    found, total, noise, nodes, missed, noisy = scored
    assert (found, total) == (2, 3) and missed == ["p.2 Liquidity"]  # level 3 is not counted as wanted
    titles = [n.title for n in tree.walk() if n.kind != "window"]
    assert nodes == len(titles) and noise == len(noisy) == sum(1 for t in titles if "item" not in t.lower())
    out = CliRunner().invoke(_app(), [str(gold), str(tmp_path), "-v"], env={"COLUMNS": "200"})
    assert out.exit_code == 0, out.output
    assert "development overall: 2/3 level-1/2 gold headings found (66.7%)" in out.output
    assert "A missed p.2 Liquidity" in out.output


def test_the_hold_out_half_is_left_out_unless_asked(tmp_path, monkeypatch):
    make_pdf(tmp_path / "H.pdf", [["ITEM 1. BUSINESS", "We make things."]])
    _gold(tmp_path / "H.jsonl", [(1, "Item 1. Business", 1)])
    monkeypatch.setattr(heading_recall, "HELD_OUT", frozenset({"H"}))
    runner = CliRunner()
    out = runner.invoke(_app(), [str(tmp_path), str(tmp_path)], env={"COLUMNS": "200"})
    assert out.exit_code == 0 and "overall" not in out.output, out.output
    out = runner.invoke(_app(), [str(tmp_path), str(tmp_path), "--with-holdout"], env={"COLUMNS": "200"})
    assert "hold-out overall: 1/1 level-1/2 gold headings found (100.0%)" in out.output, out.output
    assert "development overall" not in out.output


def test_a_missing_folder_is_one_error_line(tmp_path):
    out = CliRunner().invoke(_app(), [str(tmp_path / "nope"), str(tmp_path)])
    assert out.exit_code == 2 and "Traceback" not in out.output
    assert out.output.strip() == f"error: {tmp_path / 'nope'}: no such folder"


def test_the_second_hold_out_is_reported_apart_and_only_when_asked(tmp_path, monkeypatch):
    # R stands for a second-hold-out filing: also in outline_recovery.HOLDOUT, which keeps X out of every run
    for name, head in [("D", "ITEM 1. BUSINESS"), ("H", "ITEM 2. PROPERTIES"), ("R", "ITEM 3. LEGAL"),
                       ("X", "ITEM 4. MINES")]:
        make_pdf(tmp_path / f"{name}.pdf", [[head, "Some text."]])
        _gold(tmp_path / f"{name}.jsonl", [(1, head.title(), 1), (2, "Never Printed", 1)])
    monkeypatch.setattr(heading_recall, "HELD_OUT", frozenset({"H"}))
    monkeypatch.setattr(heading_recall, "HELD_OUT_2", frozenset({"R"}))
    monkeypatch.setattr(heading_recall, "HOLDOUT", frozenset({"R", "X"}))
    runner = CliRunner()
    out = runner.invoke(_app(), [str(tmp_path), str(tmp_path)], env={"COLUMNS": "200"})
    assert out.exit_code == 0, out.output
    assert "development overall: 1/2 level-1/2 gold headings found (50.0%)" in out.output
    assert "hold-out" not in out.output
    out = runner.invoke(_app(), [str(tmp_path), str(tmp_path), "--with-holdout"], env={"COLUMNS": "200"})
    assert out.exit_code == 0, out.output
    lines = [line for line in out.output.splitlines() if "overall" in line]
    kinds = [line.split(" overall:")[0] for line in lines]
    assert kinds == ["development", "hold-out", "hold-out 2"]
    assert lines[2].startswith("hold-out 2 overall: 1/2 level-1/2 gold headings found (50.0%)")
    assert "│ R " in out.output and "hold-out 2" in out.output and "│ X " not in out.output


def test_the_real_second_hold_out_has_gold_and_stays_out_of_development():
    gold = Path(heading_recall.__file__).parent / "data" / "headings"
    held_2 = heading_recall.HELD_OUT_2
    assert held_2 == {"RIO-TINTO_2023_CLIMATE-CHANGE-REPORT", "SCOR-FUNDS_2020_FUND-ANNUAL-REPORT"}
    assert held_2 <= outline_recovery.HOLDOUT and not held_2 & heading_recall.HELD_OUT
    for name in heading_recall.HELD_OUT_2:
        rows = heading_recall.read_gold(gold / f"{name}.jsonl")
        assert {lv for lv, _, _ in rows} == {1, 2, 3} and all(p >= 1 for _, _, p in rows)
    assert [sum(lv <= 2 for lv, _, _ in heading_recall.read_gold(gold / f"{n}.jsonl")) for n in
            sorted(heading_recall.HELD_OUT_2)] == [37, 54]


def test_verbose_never_lists_a_hold_outs_titles(tmp_path, monkeypatch):
    """``-v --with-holdout`` printed the missed headings and noise titles of the hold-outs too: reading them
    is how a rule gets tuned on a hold-out. A hold-out is read as counts; the development's titles are
    listed."""
    for name, head in [("D", "ITEM 1. BUSINESS"), ("H", "ITEM 2. PROPERTIES"), ("R", "ITEM 3. LEGAL")]:
        make_pdf(tmp_path / f"{name}.pdf", [[head, "Some text."]])
        _gold(tmp_path / f"{name}.jsonl", [(1, head.title(), 1), (2, f"Never Printed {name}", 1)])
    monkeypatch.setattr(heading_recall, "HELD_OUT", frozenset({"H"}))
    monkeypatch.setattr(heading_recall, "HELD_OUT_2", frozenset({"R"}))
    monkeypatch.setattr(heading_recall, "HOLDOUT", frozenset({"R"}))
    args = [str(tmp_path), str(tmp_path), "--with-holdout", "-v"]
    out = CliRunner().invoke(_app(), args, env={"COLUMNS": "200"})
    assert out.exit_code == 0, out.output
    assert "hold-out 2 overall: 1/2 level-1/2 gold headings found (50.0%)" in out.output
    assert "D missed p.1 Never Printed D" in out.output
    assert "Never Printed H" not in out.output and "Never Printed R" not in out.output
    assert "(-v lists the development filings' titles only: a hold-out is read as counts)" in out.output
