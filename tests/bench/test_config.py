"""RunConfig, the settings of a run (stored in run.json for --resume): a key it does not have is an error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from bench.config import RunConfig
from pageindex.cli import app


def test_a_setting_runconfig_does_not_have_is_refused() -> None:
    """``RunConfig(retriever=["bm25"])`` (for retrievers) ran the default retrievers without a word."""
    with pytest.raises(ValidationError, match="retriever\\n  Extra inputs are not permitted"):
        RunConfig(retriever=["bm25"])
    assert RunConfig(retrievers="bm25, extractive").retrievers == ["bm25", "extractive"]


def test_a_stored_setting_this_version_does_not_know_is_refused_on_resume(tmp_path: Path) -> None:
    """A run.json whose stored settings hold a key this install does not have (written by a newer one, or
    edited) resumed with that setting dropped; now the resume is one line naming it, files untouched."""
    env = {"OPENAI_API_KEY": "", "PAGEINDEX_MODEL": "", "PAGEINDEX_CACHE_DIR": str(tmp_path / "cache")}
    run = tmp_path / "run"
    args = ["bench", "run", "-q", "-r", "extractive", "--judge", "rules", "--limit", "1", "-o", str(run)]
    assert CliRunner().invoke(app, args, env=env).exit_code == 0
    info = json.loads((run / "run.json").read_text())
    info["status"] = "interrupted"
    info["extra"]["config"]["max_cost_per_sample"] = 0.5
    (run / "run.json").write_text(json.dumps(info))
    before = (run / "samples.jsonl").read_text()
    res = CliRunner().invoke(app, ["bench", "run", "--resume", str(run)], env=env)
    assert res.exit_code == 2, res.output
    assert res.output.strip() == (
        f"error: cannot resume {run}: its stored settings: max_cost_per_sample 0.5 is not a known key"
    )
    assert (run / "samples.jsonl").read_text() == before


@pytest.mark.parametrize("value", ["abc", "-5", "1.5.5k", "$2.5.0", "1,5.0.0"])
def test_a_budget_that_is_no_amount_is_one_line_naming_the_option(tmp_path: Path, value: str) -> None:
    """`--budget 1.5.5k` said only `error: could not convert string to float: '1.5.5'` (no option, nothing
    about what is allowed), and `--budget abc` named `budget`, not the option (fresh-user trial)."""
    env = {"OPENAI_API_KEY": "", "PAGEINDEX_MODEL": "", "PAGEINDEX_CACHE_DIR": str(tmp_path / "cache")}
    args = ["bench", "run", "-q", "-r", "extractive", "--judge", "rules", "--budget", value]
    args += ["-o", str(tmp_path / "r")]
    out = CliRunner().invoke(app, args, env=env)
    assert out.exit_code == 2
    assert out.output.strip() == (
        f"error: --budget {value!r}: write a token count like 200000 or 200k, or dollars like $2.50"
    )
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    ("value", "taken"),
    [
        ("$1,5", None), ("2,5k", None), ("1,50", None), ("$1,500", (None, 1500.0)),
        ("200,000", (200_000, None)), ("1,000.5usd", (None, 1000.5)), ("1,250k", (1_250_000, None)),
    ],
)
def test_a_decimal_comma_in_a_budget_is_refused_not_read_as_thousands(value: str, taken) -> None:
    """`--budget '$1,5'` (a decimal comma: $1.50) was taken as $15, ten times the budget meant."""
    from bench.config import parse_budget

    if taken is None:
        said = "a comma only groups thousands, as in 1,500; a decimal is written 1.50"
        with pytest.raises(ValueError, match=said):
            parse_budget(value)
    else:
        assert parse_budget(value) == taken
