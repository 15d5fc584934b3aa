"""A scripted judge model with no policy is one line naming the option that gave it and a way to give a
policy that the command takes: `bench judge` and `bench rejudge` have no `--scripted-policy` (only the
variable), and the model came from `--judge-model(s)`, not `--model` (fresh-user trial: the line told
them to pass `--model scripted ... --scripted-policy`, neither of which these commands take)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pageindex.cli import app

Q = "What is the FY2018 capital expenditure amount (in USD millions) for 3M?"


pytestmark = pytest.mark.usefixtures("no_model_env")


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["--judge", "llm", "--judge-model", "scripted"], "--judge-model"),
        (["--judge", "hybrid", "--judge-model", "scripted"], "--judge-model"),
        (["--judge", "panel", "--judge-models", "scripted,scripted"], "--judge-models"),
    ],
)
def test_bench_judge_names_its_own_option_and_the_variable(
    tmp_path: Path, args: list[str], option: str
) -> None:
    row = {"question": Q, "gold_answer": 1577, "model_answer": "$1,577 million"}
    (tmp_path / "a.jsonl").write_text(json.dumps(row) + "\n")
    out = tmp_path / "v.jsonl"
    res = CliRunner().invoke(app, ["bench", "judge", "-i", str(tmp_path / "a.jsonl"), "-o", str(out), *args])
    assert res.exit_code == 2, res.output
    assert res.output.strip() == (
        f"error: {option} scripted needs a policy: set $PAGEINDEX_SCRIPTED_POLICY=module:function "
        "(this command takes no --scripted-policy)"
    )
    assert not out.exists()
    # the flag the old line advised is not one of the command's
    said = CliRunner().invoke(app, ["bench", "judge", "--help"]).output
    assert "--scripted-policy" not in said


def test_ask_still_names_model_and_its_flag(tmp_path: Path) -> None:
    pdf = tmp_path / "f.pdf"
    import pymupdf

    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "Item 7. Capital expenditure was $1,577 million in 2018.")
    doc.save(pdf)
    res = CliRunner().invoke(app, ["ask", str(pdf), "What was capex?", "-m", "scripted"])
    assert res.exit_code == 2, res.output
    assert res.output.strip().splitlines()[-1] == (
        "error: --model scripted needs --scripted-policy module:function (or $PAGEINDEX_SCRIPTED_POLICY)"
    )


def test_bench_rejudge_names_its_own_option_and_the_variable(tmp_path: Path) -> None:
    from tests.bench.runfactory import outcomes, run_info, write_run

    run = write_run(tmp_path / "run", outcomes("ci"), info=run_info("run"))
    out = tmp_path / "rj"
    res = CliRunner().invoke(
        app, ["bench", "rejudge", str(run), "--judge", "llm", "--judge-model", "scripted", "-o", str(out)]
    )
    assert res.exit_code == 2, res.output
    assert res.output.strip() == (
        "error: --judge-model scripted needs a policy: set $PAGEINDEX_SCRIPTED_POLICY=module:function "
        "(this command takes no --scripted-policy)"
    )
    assert not (out / "samples.jsonl").exists()
    assert "--scripted-policy" not in CliRunner().invoke(app, ["bench", "rejudge", "--help"]).output
