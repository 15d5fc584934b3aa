"""A run folder a user broke (an edited sample row, an unreadable file, a read-only disk): every command
that reads or writes it says so in one line naming the file and what is wrong, with the exit code of
the README's table, and the samples already written stay as they were."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pageindex.cli import app
from tests.bench.runfactory import outcomes, write_run


def invoke(args: list[str]) -> tuple[int, str]:
    out = CliRunner().invoke(app, args, env={"OPENAI_API_KEY": "", "PAGEINDEX_MODEL": ""})
    return out.exit_code, out.output


def one_error_line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1, output
    assert lines[0].startswith("error: ") and "internal error" not in lines[0], output
    return lines[0]


@pytest.mark.parametrize("command", ["summary", "gate", "compare", "report", "rejudge"])
def test_an_edited_sample_row_is_named_by_its_field_and_what_is_allowed(tmp_path: Path, command: str) -> None:
    run = write_run(tmp_path / "r", outcomes("cc"))
    rows = (run / "samples.jsonl").read_text().splitlines()
    first = json.loads(rows[0])
    first["latency_s"] = "fast"
    (run / "samples.jsonl").write_text("\n".join([json.dumps(first), *rows[1:]]) + "\n")
    args = {
        "summary": ["bench", "summary", str(run)],
        "gate": ["bench", "gate", str(run), "--min-accuracy", "0.5"],
        "compare": ["bench", "compare", str(run), str(run)],
        "report": ["bench", "report", str(run), "-o", str(tmp_path / "r.html")],
        "rejudge": ["bench", "rejudge", str(run), "--judge", "rules", "-o", str(tmp_path / "new")],
    }[command]
    code, output = invoke(args)
    assert code == 2, output
    line = one_error_line(output)
    # the row and the field, and what the field takes (not pydantic's "1 validation error for Sample")
    assert "samples.jsonl: line 1 is not a valid sample: latency_s: must be a number" in line, line
    assert "validation error" not in line
