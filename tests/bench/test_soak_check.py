"""The soak's run check reads the run folder through the folder's owner (``bench.rundir``,
``bench.samples``): it counted well-formed JSON lines of its own and skipped any malformed one, so a
soak could pass on a folder that ``bench summary`` refuses (review 18)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bench.config import RunConfig
from bench.events import EventBus
from bench.faults.soak import check_run
from bench.runner import Runner


@pytest.fixture
def run_dir(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "run"
    config = RunConfig(retrievers=["extractive"], judge="rules", out=out, limit=3)
    outcome = asyncio.run(Runner(config, events=EventBus(), command=["pageindex", "bench", "run"]).run())
    assert outcome.samples_written == 3
    return out


def test_a_finished_run_checks_ok_and_a_repeated_row_is_counted(run_dir: Path) -> None:
    check = check_run(run_dir)
    assert check.ok and check.samples == check.expected == 3, check
    samples = run_dir / "samples.jsonl"
    first = samples.read_text().splitlines()[0]
    samples.write_text(samples.read_text() + first + "\n")
    check = check_run(run_dir)
    assert check.samples == 4 and len(check.duplicated) == 1 and not check.ok


def test_a_malformed_line_inside_the_file_fails_the_check_as_it_fails_bench_summary(run_dir: Path) -> None:
    samples = run_dir / "samples.jsonl"
    lines = samples.read_text().splitlines()
    samples.write_text("\n".join([lines[0], '{"question_id": "cut', *lines[1:]]) + "\n")
    with pytest.raises(ValueError, match=r"line 2 is not a valid sample"):
        check_run(run_dir)


def test_a_torn_last_line_is_left_out_as_a_resume_leaves_it_out(run_dir: Path) -> None:
    samples = run_dir / "samples.jsonl"
    samples.write_text(samples.read_text() + '{"question_id": "cut')
    check = check_run(run_dir)
    assert check.samples == 3 and check.ok, check
