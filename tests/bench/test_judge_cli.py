"""``pageindex bench judge`` end to end on a small answers file (rules judge, no model)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from pageindex.cli import app

Q = "What is the FY2018 capital expenditure amount (in USD millions) for 3M?"


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_judge_command_writes_one_verdict_per_row_and_prints_agreement(tmp_path: Path) -> None:
    rows = [
        {
            "financebench_id": "a",
            "question": Q,
            "gold_answer": 1577,
            "model_answer": "$1,577 million",
            "label": "Correct Answer",
            "model_name": "m1",
        },
        {
            "financebench_id": "b",
            "question": Q,
            "gold_answer": 1577,
            "model_answer": "$1,390 million",
            "label": "Incorrect Answer",
            "model_name": "m1",
        },
        "{not json",
        {"id": 7, "question": Q, "gold_answer": 1577, "label": "Refusal"},  # no model_answer
        {
            "financebench_id": "e",
            "question": Q,
            "gold_answer": 1577,
            "model_answer": "I'm sorry, but the context does not include capex.",
            "label": "Refusal",
            "model_name": "m2",
        },
    ]
    src = _write(tmp_path / "answers.jsonl", [r if isinstance(r, str) else json.dumps(r) for r in rows])
    out = tmp_path / "verdicts.jsonl"
    result = CliRunner().invoke(
        app, ["bench", "judge", "--input", str(src), "--judge", "rules", "--output", str(out)]
    )
    assert result.exit_code == 0, result.output
    got = [json.loads(line) for line in out.read_text().splitlines()]
    assert [g["id"] for g in got] == ["a", "b", None, "7", "e"]
    assert [g["line"] for g in got] == [1, 2, 3, 4, 5]
    assert [g["status"] for g in got] == ["ok", "ok", "error", "error", "ok"]
    assert [g["verdict"] for g in got] == ["correct", "incorrect", None, None, "refusal"]
    assert "not JSON" in got[2]["error"] and "model_answer" in got[3]["error"]
    text = " ".join(result.output.split())  # rich wraps long lines
    assert "2 rows with errors" in text
    assert "Agreement with human labels" in text and "100.0%" in text
    assert "Confusion matrix" in text and "Agreement by model_name" in text


def test_judge_command_errors_are_one_clear_line(tmp_path: Path) -> None:
    src = _write(tmp_path / "a.jsonl", [json.dumps({"question": Q, "gold_answer": 1, "model_answer": "1"})])
    runner = CliRunner()
    missing = runner.invoke(
        app, ["bench", "judge", "-i", str(tmp_path / "nope.jsonl"), "-o", str(tmp_path / "v")]
    )
    assert missing.exit_code == 2 and "no such file" in " ".join(missing.output.split())
    no_model = runner.invoke(
        app, ["bench", "judge", "-i", str(src), "--judge", "llm", "-o", str(tmp_path / "v")]
    )
    assert no_model.exit_code == 2 and "--judge-model" in no_model.output
    unknown = runner.invoke(
        app, ["bench", "judge", "-i", str(src), "--judge", "oracle", "-o", str(tmp_path / "v")]
    )
    assert unknown.exit_code == 2 and "unknown judge" in unknown.output
    ok = runner.invoke(app, ["bench", "judge", "-i", str(src), "-o", str(tmp_path / "v.jsonl")])
    assert ok.exit_code == 0 and "no human labels" in " ".join(ok.output.split())
