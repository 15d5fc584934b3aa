"""Section summaries: estimated before, recorded after, cached beside the tree, shown in the index."""

from __future__ import annotations

import asyncio

import pytest

from pageindex.analyst.summaries import (
    PROMPT_VERSION,
    apply_cached_summaries,
    estimate_summaries,
    summarize_tree,
    summary_path,
)
from pageindex.llm import ScriptedModel, ScriptedRequest, make_client
from pageindex.retrievers.index import render_index


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


def rambling_policy(req: ScriptedRequest):
    """gemma-3-270m on llama.cpp: every reply ran to the cap or wrote out its template's markers, but
    the exhibit sections, which get a summary."""
    section = req.last_user.split(":", 1)[0].removeprefix("Section ")
    if section.startswith("exhibit"):
        return f"What {section} says, in one line."
    if section.endswith("1"):
        return "<|im_end|>user <document node_id=... <|im_end|>"
    return ScriptedModel.reply('<document node_id="x"> <document ' * 40, finish_reason="length")


def everything_rambles(req: ScriptedRequest):
    return ScriptedModel.reply("<document " * 200, finish_reason="length")


def test_replies_that_are_no_summary_are_left_out_and_none_usable_writes_nothing(analyst_tree, tmp_path):
    """Replies cut at max_tokens or full of chat-template markers were stored as the summaries, and ask
    then showed them in every later section index, whatever model asked."""
    from pageindex.analyst.summaries import UnusableSummaries, unusable_reason

    assert unusable_reason("Cash flows for 2016-2018.", "stop") is None
    assert unusable_reason("Cash flows for", "length") == "cut at max_tokens"
    assert unusable_reason("Cash flows<|im_end|>", "stop") == "chat-template markers (<|im_end|>)"
    tree = analyst_tree("AMCOR_2022_8K_dated-2022-07-01")
    nodes = [n.node_id for n in tree.walk()]
    llm = make_client("scripted", scripted=ScriptedModel(policy=rambling_policy))
    out = asyncio.run(summarize_tree(tree, llm, cache_dir=tmp_path))
    assert set(out.summaries) == {n for n in nodes if n.startswith("exhibit")} and out.summaries
    assert set(out.left_out) == {n for n in nodes if not n.startswith("exhibit")} and out.left_out
    assert not any("<" in text for text in out.summaries.values())
    llm = make_client("scripted/other", scripted=ScriptedModel(policy=everything_rambles))
    with pytest.raises(UnusableSummaries) as caught:
        asyncio.run(summarize_tree(tree, llm, cache_dir=tmp_path))
    n = len(nodes)
    said = f"no reply of {n} was a usable summary ({n} cut at max_tokens); nothing written"
    assert str(caught.value) == said
    assert not summary_path(tree, llm.spec, tmp_path).exists()
    applied = {node.node_id: node.summary for node in apply_cached_summaries(tree, tmp_path).walk()}
    assert applied == {node: out.summaries.get(node) for node in nodes}  # the first model's, usable ones only


def test_build_summaries_cli_exits_4_when_no_reply_is_a_summary(fb_pdf, tmp_path, monkeypatch):
    from pathlib import Path

    from typer.testing import CliRunner

    from pageindex.cli import app

    monkeypatch.delenv("PAGEINDEX_SCRIPTED_POLICY", raising=False)
    pdf = str(fb_pdf("AMCOR_2022_8K_dated-2022-07-01"))
    base = ["build", pdf, "--cache-dir", str(tmp_path), "--summaries", "-m", "scripted", "--scripted-policy"]
    out = CliRunner().invoke(app, [*base, f"{Path(__file__)}:everything_rambles"], env={"COLUMNS": "300"})
    assert out.exit_code == 4, out.output
    assert "error: model scripted: summaries failed (no reply of" in out.output
    assert not list(tmp_path.glob("*.summaries.*.json"))
    some = CliRunner().invoke(app, [*base, f"{Path(__file__)}:rambling_policy"], env={"COLUMNS": "300"})
    assert some.exit_code == 0, some.output
    said = " ".join(some.output.split())
    assert "sections have no summary: the model's reply was no summary (chat-template markers; cut at" in said


def empty_replies(req: ScriptedRequest):
    """A reasoning model whose whole reply went into its reasoning: the content is empty."""
    section = req.last_user.split(":", 1)[0].removeprefix("Section ")
    return f"What {section} says, in one line." if section.startswith("exhibit") else "  \n "


def test_an_empty_reply_is_left_out_and_counted_and_all_empty_writes_nothing(analyst_tree, tmp_path):
    """An empty reply was neither a summary nor left out: the warning's 'N of M sections' missed it, and
    every section's empty reply wrote a sidecar of no summaries, exit 0 ('summaries: 0 written')."""
    from pageindex.analyst.summaries import UnusableSummaries, unusable_reason

    assert unusable_reason("", "stop") == "empty" and unusable_reason(None, "stop") == "empty"
    tree = analyst_tree("AMCOR_2022_8K_dated-2022-07-01")
    nodes = [n.node_id for n in tree.walk()]
    llm = make_client("scripted", scripted=ScriptedModel(policy=empty_replies))
    out = asyncio.run(summarize_tree(tree, llm, cache_dir=tmp_path))
    assert set(out.summaries) == {n for n in nodes if n.startswith("exhibit")} and out.summaries
    assert out.left_out == {n: "empty" for n in nodes if not n.startswith("exhibit")} and out.left_out
    llm = make_client("scripted/other", scripted=ScriptedModel(policy=lambda req: ""))
    with pytest.raises(UnusableSummaries) as caught:
        asyncio.run(summarize_tree(tree, llm, cache_dir=tmp_path))
    n = len(nodes)
    assert str(caught.value) == f"no reply of {n} was a usable summary ({n} empty); nothing written"
    assert not summary_path(tree, llm.spec, tmp_path).exists()
