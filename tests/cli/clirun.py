"""Running the CLI in-process for tests: one invoke, and a finished run to work on."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from bench.runner import demo_dataset_dir
from pageindex.cli import app


def invoke(args: list[str], **env: str) -> tuple[int, str]:
    """Exit code and output of ``pageindex ARGS`` with no model configured from the environment."""
    unset = {"OPENAI_API_KEY": "", "PAGEINDEX_JUDGE_API_KEY": "", "PAGEINDEX_MODEL": ""}
    out = CliRunner().invoke(app, args, env={**unset, **env})
    return out.exit_code, out.output


def extractive_run(tmp_path: Path, limit: int = 3) -> Path:
    """A finished run of ``limit`` demo questions (extractive, rules judge: no model)."""
    run_dir = tmp_path / "run"
    code, output = invoke(
        ["bench", "run", "--data-dir", str(demo_dataset_dir()), "-r", "extractive", "--judge", "rules",
         "--limit", str(limit), "--out", str(run_dir), "-q"]
    )  # fmt: skip
    assert code == 0, output
    return run_dir
