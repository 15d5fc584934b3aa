"""Ctrl-C wins over every other stop: after the budget stopped a run (which lets the samples in
flight run on), a Ctrl-C still cancels them, and the run ends ``interrupted`` with exit 130 (130
takes precedence over 3), not after the slowest sample, as ``aborted_due_to_budget`` (review 16)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from bench.runner import demo_dataset_dir

PLUGIN = '''
import asyncio, itertools, os
from pathlib import Path
from pageindex.llm.types import BudgetExceeded
from pageindex.retrievers.base import register_retriever

_calls = itertools.count()

@register_retriever("spender", needs_llm=False)
async def spender(run, opts):
    if next(_calls) == 0:  # the first sample spends the budget...
        await asyncio.sleep(0.3)
        Path(os.environ["SPENT_MARKER"]).touch()
        raise BudgetExceeded("token budget of 1 spent")
    await asyncio.sleep(60)  # ...while the other waits on a slow model call
    return run.result("answer", answer="42")
'''


def test_ctrl_c_after_a_budget_stop_cancels_the_samples_in_flight_and_exits_130(tmp_path: Path) -> None:
    (tmp_path / "spender_plugin.py").write_text(PLUGIN)
    marker = tmp_path / "spent"
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "PAGEINDEX_MODEL")}
    env.update(
        PYTHONPATH=os.pathsep.join(p for p in (str(tmp_path), env.get("PYTHONPATH", "")) if p),
        PAGEINDEX_PLUGINS="spender_plugin", PAGEINDEX_CACHE_DIR=str(tmp_path / "cache"),
        SPENT_MARKER=str(marker),
    )  # fmt: skip
    out = tmp_path / "run"
    command = [
        sys.executable, "-c", "from pageindex.cli import main; main()", "bench", "run", "-q",
        "--data-dir", str(demo_dataset_dir()), "-r", "spender", "--judge", "rules", "--limit", "2",
        "--concurrency", "2", "-o", str(out),
    ]  # fmt: skip
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.05)
        time.sleep(0.5)  # the budget stop is in force; the other sample is still running
        assert proc.poll() is None
        proc.send_signal(signal.SIGINT)
        started = time.monotonic()
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert time.monotonic() - started < 15  # not after the 60 s sample
    assert proc.returncode == 130, stderr
    assert f"interrupted; continue with: pageindex bench run --resume {out}" in " ".join(stderr.split())
    info = json.loads((out / "run.json").read_text())
    assert info["status"] == "interrupted"
    assert (out / "samples.jsonl").read_text() == ""  # the cancelled sample runs again on resume
