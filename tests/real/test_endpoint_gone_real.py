"""A real llama.cpp server killed during ``bench run``: the run stops (``failed``, exit 4) without
recording the samples the dead server cut, and ``--resume`` on a restarted server finishes it.
Before, every remaining sample was recorded as an ``error`` within seconds and the run said
``finished``; a later ``--resume`` could not run them again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from bench.datasets.demo import write_demo_dataset
from bench.samples import load_samples
from tests.real.conftest import free_port, start_server, stop_server

LIMIT = 2


def _bench_run(*args: str, cwd: Path) -> subprocess.Popen[str]:
    unset = ("OPENAI_API_KEY", "PAGEINDEX_MODEL", "OPENAI_BASE_URL")
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env.update(COLUMNS="400", TERM="dumb", PAGEINDEX_CACHE_DIR=str(cwd / "cache"))
    return subprocess.Popen(
        [sys.executable, "-m", "pageindex.cli", "bench", "run", *args, "-q"],
        cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip


def test_a_killed_server_stops_the_run_and_resume_finishes_it(server_env: Path, tmp_path: Path) -> None:
    data = tmp_path / "demo"
    write_demo_dataset(data)
    out = tmp_path / "run"
    port = free_port()
    server = start_server(server_env, "smollm2", tmp_path, port=port)
    try:
        run = _bench_run(
            "-d", str(data), "-r", "oracle", "-m", server.spec, "--base-url", server.base_url,
            "--judge", "rules", "--limit", str(LIMIT), "--max-retries", "0", "--out", str(out), cwd=tmp_path,
        )  # fmt: skip
        samples = out / "samples.jsonl"
        deadline = time.monotonic() + 900
        while time.monotonic() < deadline and run.poll() is None:
            if samples.exists() and samples.read_text().count("\n") >= 1:
                break
            time.sleep(0.2)
        assert run.poll() is None, run.communicate()[0]
        stop_server(server)  # the server goes away after the first sample, mid-run
        output = run.communicate(timeout=600)[0]
    finally:
        stop_server(server)
    assert run.returncode == 4, output
    last = [line for line in output.splitlines() if line.strip()][-1]
    assert last.startswith("error: the model endpoint stopped answering during the run"), output
    assert f"pageindex bench run --resume {out}" in last
    kept = load_samples(out / "samples.jsonl")
    assert 1 <= len(kept) < LIMIT and all(s.status != "error" for s in kept), [s.error for s in kept]
    assert json.loads((out / "run.json").read_text())["status"] == "failed"

    back = start_server(server_env, "smollm2", tmp_path, port=port)
    try:
        resumed = _bench_run("--resume", str(out), cwd=tmp_path)
        output = resumed.communicate(timeout=1500)[0]
    finally:
        stop_server(back)
    assert resumed.returncode == 0, output
    final = load_samples(out / "samples.jsonl")
    assert len(final) == LIMIT and all(s.status != "error" for s in final), [s.error for s in final]
    assert json.loads((out / "run.json").read_text())["status"] == "finished"
