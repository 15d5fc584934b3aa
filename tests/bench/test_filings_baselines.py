"""bench/perf/filings_baselines.py: the baselines scored against questions about filings, hold-out apart."""

from __future__ import annotations

import json

import typer
from typer.testing import CliRunner

from bench.perf import filings_baselines
from tests.tree.pdf_factory import make_pdf


def _app() -> typer.Typer:
    app = typer.Typer()
    app.command()(filings_baselines.main)
    return app


def _questions(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_the_shipped_questions_load_and_split_25_18_24():
    lines = filings_baselines.QUESTIONS.read_text(encoding="utf-8").splitlines()
    questions = [filings_baselines.FilingQuestion.model_validate_json(line) for line in lines]
    assert [sum(q.half == h for q in questions) for h in ("dev", "holdout", "holdout2")] == [25, 18, 24]
    assert all(q.gold_figure or q.gold_text for q in questions)
    assert len({q.id for q in questions}) == len(questions)
    second = [q.doc for q in questions if q.half == "holdout2"]
    assert sorted(set(second)) == sorted({q.doc for q in questions if q.half != "holdout2"})
    assert all(second.count(doc) == 2 for doc in second)


def test_a_question_is_scored_on_its_page_and_the_holdout_only_when_asked(tmp_path):
    pages = [["ITEM 1. BUSINESS", "We make widgets in Ohio."],
             ["ITEM 7. RESULTS", "Revenue 2023 2022", "Net revenue 4,250 3,900"]]  # fmt: skip
    make_pdf(tmp_path / "ACME_2023_10-Q.pdf", pages)
    rows = [
        {"id": "a", "doc": "ACME_2023_10-Q", "type": "table",
         "question": "What was Acme's net revenue in 2023?", "answer": "$4,250", "gold_figure": "4250",
         "pages": [2], "half": "dev"},
        {"id": "b", "doc": "ACME_2023_10-Q", "type": "who", "question": "Where does Acme make widgets?",
         "answer": "Ohio", "gold_text": "ohio", "pages": [1], "half": "holdout"},
        {"id": "c", "doc": "ACME_2023_10-Q", "type": "who", "question": "What does Acme make in Ohio?",
         "answer": "widgets", "gold_text": "widgets", "pages": [1], "half": "holdout2"},
    ]  # fmt: skip
    questions = _questions(tmp_path / "q.jsonl", rows)
    args = [str(tmp_path), "--questions", str(questions)]
    out = CliRunner().invoke(_app(), [*args, "-v"], env={"COLUMNS": "250"})
    assert out.exit_code == 0, out.output
    dev = next(line for line in out.output.splitlines() if line.startswith("│ dev "))
    assert [c.strip() for c in dev.split("│")[1:-1]] == ["dev", "1", "1", "1", "1", "1", "1", "1"]
    assert "holdout" not in out.output
    out = CliRunner().invoke(_app(), [*args, "--with-holdout"], env={"COLUMNS": "250"})
    assert out.exit_code == 0 and "│ holdout │" in out.output and "holdout2" not in out.output
    out = CliRunner().invoke(_app(), [*args, "--with-holdout2"], env={"COLUMNS": "250"})
    assert out.exit_code == 0 and "│ holdout2 │" in out.output and "│ holdout │" not in out.output


def test_bad_inputs_are_one_error_line(tmp_path):
    out = CliRunner().invoke(_app(), [str(tmp_path / "nope")])
    assert out.exit_code == 2 and out.stderr.startswith(f"error: {tmp_path / 'nope'}: no such folder")
    gone = {"id": "a", "doc": "GONE", "type": "table", "question": "?", "answer": "1", "gold_figure": "1",
            "pages": [1], "half": "dev"}  # fmt: skip
    questions = _questions(tmp_path / "q.jsonl", [gone])
    out = CliRunner().invoke(_app(), [str(tmp_path), "--questions", str(questions)])
    assert out.exit_code == 2 and out.stderr.strip().startswith(f"error: {tmp_path}: no GONE.pdf")
    (tmp_path / "bad.jsonl").write_text("{not json\n")
    out = CliRunner().invoke(_app(), [str(tmp_path), "--questions", str(tmp_path / "bad.jsonl")])
    assert out.exit_code == 2 and out.stderr.count("\n") == 1 and "not a questions file" in out.stderr
