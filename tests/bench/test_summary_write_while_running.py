"""``bench summary RUN --write`` while another process writes into RUN (a run or a resume of it still
going, a rejudge into it): it is refused, one line, exit 2, and summary.json is left to the run, which
writes it when it ends. Before, it wrote the summary of the samples it read then into the running
run's folder: a summary.json of 1 of 18 samples beside ``status: running``, and, read just before the
run ended and written just after it, one that replaced the finished run's own."""

from __future__ import annotations

import json
from pathlib import Path

from tests.bench.runfactory import outcomes, write_run
from tests.cli.clirun import invoke
from tests.held import RUN_FOLDER_CLAIM, held_by_another_process


def test_summary_write_is_refused_while_another_process_writes_the_run(tmp_path: Path) -> None:
    run = write_run(tmp_path / "r", outcomes("cic"), write_summary_file=False)
    samples = (run / "samples.jsonl").read_bytes()
    with held_by_another_process(RUN_FOLDER_CLAIM, run):
        code, output = invoke(["bench", "summary", str(run), "--write"])
        assert code == 2, output
        lines = [line for line in output.splitlines() if line.strip()]
        assert lines == [
            f"error: --write: {run} is still running (a bench run or rejudge is writing into it now); it "
            "writes its summary.json when it ends: leave out --write to print the figures so far"
        ], output
        assert not (run / "summary.json").exists()
        # without --write it reads the run as ever: the figures so far
        code, output = invoke(["bench", "summary", str(run), "--json"])
        assert code == 0 and json.loads(output)["n_samples"] == 3, output

    # the run ended: its folder is free, and --write writes the summary of every sample
    code, output = invoke(["bench", "summary", str(run), "--write", "--json"])
    assert code == 0, output
    assert json.loads((run / "summary.json").read_text())["n_samples"] == 3
    assert (run / "samples.jsonl").read_bytes() == samples
