"""A disk that fills up during ``bench run`` (ENOSPC on ``samples.jsonl``, then on ``run.json``): the
run stops with one ``error:`` line and exit 4, keeps every finished sample as a whole row (the partial
row cut off again), and a resume once there is room finishes it. The disk is simulated by an
``os.write`` that writes part of a row and then fails, as a full tmpfs does."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bench import rundir as rundir_module
from bench import samples as samples_module
from bench.samples import Sample, SampleStore, load_samples
from pageindex.cli import app

pytestmark = pytest.mark.usefixtures("no_model_env")


def _disk_full_after(monkeypatch, rows: int) -> None:
    """``samples.jsonl`` takes ``rows`` rows; the next write puts 40 bytes down and fails ENOSPC."""
    real_write = os.write
    left = {"rows": rows}

    def write(fd: int, data) -> int:
        if left["rows"] > 0:
            left["rows"] -= 1
            return real_write(fd, data)
        real_write(fd, bytes(data[:40]))
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(samples_module.os, "write", write)


def _run(demo: Path, out: Path, *more: str):
    return CliRunner().invoke(app, [
        "bench", "run", "-d", str(demo), "-r", "extractive", "--judge", "rules", "-c", "1", "-q",
        "--out", str(out), *more,
    ], terminal_width=400)  # fmt: skip


def test_a_failed_append_leaves_whole_rows_only(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "samples.jsonl"
    store = SampleStore(path)
    store.append(Sample(question_id="q1", retriever="bm25", repeat=0, status="answer"))
    _disk_full_after(monkeypatch, 0)
    with pytest.raises(OSError):
        store.append(Sample(question_id="q2", retriever="bm25", repeat=0, status="answer"))
    monkeypatch.undo()
    store.append(Sample(question_id="q3", retriever="bm25", repeat=0, status="answer"))  # room again
    assert [s.question_id for s in load_samples(path)] == ["q1", "q3"]
    assert not store.has(("q2", "bm25", 0))


def test_a_full_disk_stops_the_run_failed_with_exit_4_and_resume_finishes_it(demo, tmp_path, monkeypatch):
    out = tmp_path / "run"
    _disk_full_after(monkeypatch, 3)
    result = _run(demo, out)
    assert result.exit_code == 4, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert errors == [
        f"error: cannot write {out / 'samples.jsonl'} (No space left on device): no new sample started and "
        f"the samples it cut are not recorded; once it can be written, continue with: pageindex bench run "
        f"--resume {out}"
    ], result.output
    assert "internal error" not in result.output and "Traceback" not in result.output
    info = json.loads((out / "run.json").read_text())
    assert info["status"] == "failed"
    assert (out / "samples.jsonl").read_bytes().endswith(b"\n")
    assert len(load_samples(out / "samples.jsonl")) == 3

    monkeypatch.undo()
    resumed = CliRunner().invoke(app, ["bench", "run", "--resume", str(out), "-q"], terminal_width=400)
    assert resumed.exit_code == 0, resumed.output
    assert "partial last line" not in resumed.output
    assert json.loads((out / "run.json").read_text())["status"] == "finished"
    assert len(load_samples(out / "samples.jsonl")) == 18


def test_no_room_for_run_json_either_is_one_line_exit_4_and_keeps_the_samples(demo, tmp_path, monkeypatch):
    out = tmp_path / "run"
    _disk_full_after(monkeypatch, 2)
    real = rundir_module.RunDir.finish

    def finish(self, info, samples, dropped):
        if info.status != "running":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(self, info, samples, dropped)

    monkeypatch.setattr(rundir_module.RunDir, "finish", finish)
    result = _run(demo, out)
    assert result.exit_code == 4, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert errors == [
        f"error: cannot write into {out} (No space left on device): 2 finished samples kept in "
        f"samples.jsonl, the run's status not written (said killed); once it can be written, continue "
        f"with: pageindex bench run --resume {out}"
    ], result.output
    assert len(load_samples(out / "samples.jsonl")) == 2


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
def test_an_events_log_that_cannot_be_written_costs_the_run_nothing(demo, tmp_path, monkeypatch):
    """Every write to ``events.log`` fails ENOSPC (``/dev/full``) while the samples have room: the run
    finishes, exit 0, with one warning. It printed a ``--- Logging error ---`` traceback per log line and
    ended the finished run in ``error: internal error: OSError``, exit 2."""
    import logging

    from bench.runner import Runner

    monkeypatch.setattr(rundir_module.RunDir, "events_path", property(lambda self: Path("/dev/full")))
    one = Runner._one

    async def logging_one(self, *args, **kwargs):
        logging.getLogger("httpx").info("HTTP Request: POST http://127.0.0.1:1/v1/chat/completions 200")
        return await one(self, *args, **kwargs)

    monkeypatch.setattr(Runner, "_one", logging_one)
    out = tmp_path / "run"
    result = _run(demo, out, "--limit", "3")
    assert result.exit_code == 0, result.output
    assert "Logging error" not in result.output and "internal error" not in result.output
    assert (
        "warning: /dev/full could not be written (No space left on device): the run's log lines from then "
        "on are lost (its samples are not)"
    ) in " ".join(result.output.split())
    assert json.loads((out / "run.json").read_text())["status"] == "finished"
    assert len(load_samples(out / "samples.jsonl")) == 3


def test_a_full_disk_stops_a_rejudge_failed_with_exit_4_and_resume_finishes_it(demo, tmp_path, monkeypatch):
    """It was ``error: internal error: OSError``, exit 2, the rejudge's run.json left ``running``."""
    run = tmp_path / "run"
    assert _run(demo, run).exit_code == 0
    out = tmp_path / "rj"
    _disk_full_after(monkeypatch, 4)
    result = CliRunner().invoke(
        app, ["bench", "rejudge", str(run), "--judge", "rules", "-o", str(out)], terminal_width=400
    )
    assert result.exit_code == 4, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith(
        f"error: cannot write {out / 'samples.jsonl'} (No space left on device): the answers it did not "
        "judge are not recorded; once it can be written, continue with: "
    ), result.output  # the command given (here pytest's), with --resume
    assert errors[0].endswith(" --resume")
    assert json.loads((out / "run.json").read_text())["status"] == "failed"
    assert len(load_samples(out / "samples.jsonl")) == 4

    monkeypatch.undo()
    again = ["bench", "rejudge", str(run), "--judge", "rules", "-o", str(out), "--resume"]
    resumed = CliRunner().invoke(app, again, terminal_width=400)
    assert resumed.exit_code == 0, resumed.output
    assert len(load_samples(out / "samples.jsonl")) == 18
