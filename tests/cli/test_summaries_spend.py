"""``build --summaries`` that fails part way (one section's call still refused after its retries) writes
nothing, yet the calls made before were paid for: its error line says what they cost. Before, a build
against a server that answered 43 sections ($22.32 at the test's prices) said only `summaries failed`."""

from __future__ import annotations

import json
import re

from bench.faults import FaultServer
from bench.runner import demo_dataset_dir
from pageindex.cli._common import ExitCode
from tests.cli.clirun import invoke


def test_a_failed_summaries_build_says_what_its_calls_cost(tmp_path, quiet_env, monkeypatch):
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"models": {"openai/fault-model": {"input": 1000, "output": 2000}}}))
    monkeypatch.setenv("PAGEINDEX_PRICING", str(prices))
    filing = sorted((demo_dataset_dir() / "pdfs").glob("*.pdf"))[0]
    with FaultServer(rate=0.6, faults=["500"], seed=1, retry_after_seconds=0) as srv:
        code, output = invoke(
            ["build", str(filing), "--summaries", "--model", "openai/fault-model", "--base-url", srv.base_url,
             "--cache-dir", str(tmp_path / "trees"), "-o", str(tmp_path / "tree.json")]
        )  # fmt: skip
        last = " ".join(output.strip().splitlines()[-1:])
        spent = re.search(r"; spent ([\d,]+)\+([\d,]+) tokens in (\d+) calls, \$([\d.]+)$", last)
        assert spent is not None, output
        # the sections still in flight when one failed were cancelled: a request written just before
        # is counted by the server's thread a moment later (61 said vs 60 counted at once: twice under
        # make test-lowest, session 24)
        srv.wait_for(lambda: srv.stats().chat_requests >= int(spent[3]))
        stats = srv.stats()
    assert code == ExitCode.ERRORS, output
    assert last.startswith("error: model openai/fault-model: summaries failed ("), output
    assert "HTTP 500" in last, output
    prompt, completion = (int(spent[i].replace(",", "")) for i in (1, 2))
    assert prompt > 0 and completion > 0
    assert int(spent[3]) == stats.chat_requests  # every request the server answered, the refused ones too
    assert float(spent[4]) == round((prompt * 1000 + completion * 2000) / 1e6, 4)
    assert not (tmp_path / "tree.json").exists()
