"""``pageindex cache stats|clear``."""

from __future__ import annotations

from typer.testing import CliRunner

from pageindex.cli import app
from pageindex.llm import LLMCache


def test_cache_stats_and_clear(tmp_path, monkeypatch):
    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "200")
    runner = CliRunner()
    empty = runner.invoke(app, ["cache", "stats"])
    assert empty.exit_code == 0 and "empty (no file yet)" in empty.output

    cache = LLMCache()
    for i, model in enumerate(["gpt-4o-mini", "gpt-4o-mini", "llama3.1"]):
        cache.put(
            f"k{i}", model=model, kind="chat", request={}, reply={}, prompt_tokens=1200, completion_tokens=5
        )
    cache.put_failure(
        "k9", model="llama3.1", kind="chat", request={}, failure={"kind": "timeout", "message": "timed out"}
    )
    stats = runner.invoke(app, ["cache", "stats"])
    assert stats.exit_code == 0
    assert "recorded failures: 1 (timeout 1)" in stats.output
    assert "3 replies" in stats.output and "3,600 prompt + 15 completion tokens" in stats.output
    assert "gpt-4o-mini" in stats.output and "llama3.1" in stats.output

    refused = runner.invoke(app, ["cache", "clear"], input="n\n")
    assert refused.exit_code == 0 and cache.stats().entries == 3
    assert "cancelled: nothing deleted from" in refused.output
    one = runner.invoke(app, ["cache", "clear", "--model", "llama3.1", "--yes"])
    assert one.exit_code == 0 and "deleted 2 replies and failures" in one.output
    other = tmp_path / "elsewhere.sqlite"
    assert "empty" in runner.invoke(app, ["cache", "stats", "--path", str(other)]).output
    everything = runner.invoke(app, ["cache", "clear", "-y"])
    assert "deleted 2 replies and failures" in everything.output and cache.stats().entries == 0


def test_clearing_an_empty_file_leaves_it_as_it_is(tmp_path):
    """``cache clear --cache-path empty.pdf --yes`` turned a 0-byte file into a 24 KB SQLite database
    (an empty file is a valid empty SQLite file; clearing it opened it to write and made the tables)."""
    empty = tmp_path / "empty.pdf"
    empty.write_bytes(b"")
    out = CliRunner().invoke(app, ["cache", "clear", "--cache-path", str(empty), "--yes"])
    assert out.exit_code == 0 and "deleted 0 replies and failures" in out.output
    assert empty.read_bytes() == b""


def test_cache_stats_says_which_replies_were_recorded_in_an_older_request_format(tmp_path, monkeypatch):
    """Upgrade review: a cache recorded by pageindex-bench b58837b or d685f97 (before request format 3)
    showed `cache stats: 103 replies ...` as a usable recording, and every `--cache replay` of it then
    missed. Stats now says how many replies no replay of this version matches, and what to do."""
    import asyncio
    import json

    from pageindex.llm import Message, ScriptedModel, make_client

    monkeypatch.setenv("COLUMNS", "200")
    path = tmp_path / "llm.sqlite"
    cache = LLMCache(path, "rw")
    asyncio.run(
        make_client("scripted", scripted=ScriptedModel(replies=["today"]), cache=cache).chat(
            [Message(role="user", content="hi")]
        )
    )
    for i in range(2):  # as the older installs recorded a request: no "format" field
        request = {"kind": "chat", "model": "fake", "messages": [{"role": "user", "content": f"q{i}"}]}
        cache.put(f"old{i}", model="fake", kind="chat", request=json.loads(json.dumps(request)), reply={},
                  prompt_tokens=10, completion_tokens=1)  # fmt: skip
    cache.close()
    out = CliRunner().invoke(app, ["cache", "stats", "--cache-path", str(path)])
    assert out.exit_code == 0, out.output
    assert "3 replies" in out.output
    assert (
        "note: 2 replies recorded with an older request format (before v3, an earlier pageindex-bench): no "
        "--cache replay of this version matches them; record them again with --cache rw"
    ) in " ".join(out.output.split())
    assert LLMCache(path, "replay").stats().older_format == 2
