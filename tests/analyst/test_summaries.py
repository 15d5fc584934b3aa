"""Section summaries: estimated before, recorded after, cached beside the tree, shown in the index."""

from __future__ import annotations

import asyncio

from pageindex.llm import ScriptedModel, ScriptedRequest, make_client
from pageindex.retrievers.index import render_index
from pageindex.tree.summaries import (
    PROMPT_VERSION,
    apply_cached_summaries,
    estimate_summaries,
    summarize_tree,
    summary_path,
)


def summary_policy(req: ScriptedRequest) -> str:
    section = req.last_user.split(":", 1)[0].removeprefix("Section ")
    return f"What {section} says, in one line."


def test_summaries_are_estimated_recorded_cached_and_indexed(analyst_tree, tmp_path):
    tree = analyst_tree("AMCOR_2022_8K_dated-2022-07-01")
    nodes = [n.node_id for n in tree.walk()]
    sm = ScriptedModel(policy=summary_policy)
    llm = make_client("openai/gpt-4o-mini", scripted=sm)  # priced model, scripted replies

    estimate = estimate_summaries(tree, llm.spec)
    out = asyncio.run(summarize_tree(tree, llm, cache_dir=tmp_path))
    assert len(sm.requests) == estimate.sections == len(nodes)
    assert out.summaries["exhibit_4_6"] == "What exhibit_4_6 says, in one line."
    assert set(out.summaries) == set(nodes) and out.prompt_version == PROMPT_VERSION
    # the estimate's prompt tokens are exact (same count as the model's); the cost is recorded
    assert estimate.prompt_tokens == out.usage.prompt_tokens == sum(r.prompt_tokens for r in sm.requests)
    assert out.usage.completion_tokens == sum(r.completion_tokens for r in sm.requests)
    assert out.usage.cost_usd is not None and 0 < out.usage.cost_usd < estimate.cost_usd
    path = summary_path(tree, llm.spec, tmp_path)
    assert path.exists() and tree.sha256 in path.name and "gpt-4o-mini" in path.name

    again = asyncio.run(summarize_tree(tree, llm, cache_dir=tmp_path))  # cached: no call
    assert len(sm.requests) == len(nodes) and again.summaries == out.summaries

    assert tree.get("exhibit_4_6").summary is None  # the cached tree is untouched
    index = render_index(apply_cached_summaries(tree, tmp_path))
    assert "- exhibit_4_6 | Exhibit 4.6 | pages 4-6 | What exhibit_4_6 says, in one line." in index
    assert apply_cached_summaries(tree, tmp_path / "empty") is tree


def test_build_summaries_cli_prints_estimate_then_actual(fb_pdf, analyst_tree, tmp_path, monkeypatch):
    from pathlib import Path

    from typer.testing import CliRunner

    from pageindex.cli import app

    sections = len(list(analyst_tree("AMCOR_2022_8K_dated-2022-07-01").walk()))  # one call per node
    monkeypatch.delenv("PAGEINDEX_SCRIPTED_POLICY", raising=False)
    args = [
        "build",
        str(fb_pdf("AMCOR_2022_8K_dated-2022-07-01")),
        "--cache-dir",
        str(tmp_path),
        "--summaries",
        "--scripted-policy",  # the flag, as in ask and bench run (before: only the environment variable)
        f"{Path(__file__)}:summary_policy",
    ]
    runner = CliRunner()
    out = runner.invoke(
        app, [*args, "-m", "scripted", "-o", str(tmp_path / "t.json")], env={"COLUMNS": "300"}
    )
    assert out.exit_code == 0, out.output
    first, second = out.output.splitlines()[:2]
    assert first.startswith(f"summaries: {sections} sections with scripted: estimated ")
    assert second.startswith(f"summaries: {sections} written to ") and f"in {sections} calls" in second
    assert first.split("estimated ")[1].split(" prompt")[0] == second.split("actual ")[1].split("+")[0]
    assert "What exhibit_4_7 says, in one line." in (tmp_path / "t.json").read_text()
    again = runner.invoke(app, [*args, "-m", "scripted"], env={"COLUMNS": "300"})
    assert f"summaries: {sections} cached in " in again.output and "(no model calls)" in again.output
    missing = runner.invoke(app, args)
    assert missing.exit_code == 2 and "--summaries needs --model" in missing.output
