"""The SQLite reply cache: keys, modes, concurrent writers, stats/clear, cached usage."""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import threading
from pathlib import Path

import pytest
from pydantic import BaseModel

from pageindex.llm import Budget, LLMCache, LLMConfigError, Message, ScriptedModel, ToolSpec, make_client
from pageindex.llm.cache import request_key

Q = [Message(role="user", content="What was FY2018 capex?")]


class Capex(BaseModel):
    capex_musd: float


def test_key_ignores_key_and_base_url_but_not_model_messages_tools_or_sampling(tmp_path):
    cache = LLMCache(tmp_path / "c.sqlite")
    sm = ScriptedModel(replies=["A", "B", "C", "D", "E"])
    a = make_client("openai/m1", scripted=sm, cache=cache, api_key="key-one", base_url="http://a.invalid/v1")
    b = make_client("openai/m1", scripted=sm, cache=cache, api_key="key-two", base_url="http://b.invalid/v1")
    tool = ToolSpec(name="t", description="d", parameters={"type": "object", "properties": {}})

    async def run():
        first = await a.chat(Q)
        same = await b.chat(Q)  # different key and URL: same request -> cache hit
        other_model = await make_client("openai/m2", scripted=sm, cache=cache).chat(Q)
        other_temp = await a.chat(Q, temperature=0.7)
        with_tools = await a.chat(Q, tools=[tool])
        other_text = await a.chat([Message(role="user", content="What was FY2019 capex?")])
        return first, same, other_model, other_temp, with_tools, other_text

    first, same, *misses = asyncio.run(run())
    assert (first.content, same.content) == ("A", "A") and same.usage.cached and not first.usage.cached
    assert [m.content for m in misses] == ["B", "C", "D", "E"] and not any(m.usage.cached for m in misses)
    assert len(sm.requests) == 5 and cache.stats().entries == 5
    k1 = request_key({"kind": "chat", "model": "m1", "messages": [{"role": "user", "content": "x"}]})
    assert k1 == request_key({"messages": [{"content": "x", "role": "user"}], "model": "m1", "kind": "chat"})


def test_structured_key_includes_schema(tmp_path):
    class Capex2(BaseModel):
        capex_musd: float
        year: int = 2018

    cache = LLMCache(tmp_path / "c.sqlite")
    sm = ScriptedModel(replies=[{"capex_musd": 1.0}, {"capex_musd": 2.0}])
    client = make_client("scripted", scripted=sm, cache=cache)
    one = asyncio.run(client.structured(Q, Capex))
    two = asyncio.run(client.structured(Q, Capex2))
    again = asyncio.run(client.structured(Q, Capex))
    assert (one.value.capex_musd, two.value.capex_musd, again.value.capex_musd) == (1.0, 2.0, 1.0)
    assert again.usage.cached and again.attempts == 1 and len(sm.requests) == 2


def test_modes_off_and_replay(tmp_path):
    path = tmp_path / "c.sqlite"
    sm = ScriptedModel(replies=["live-1", "live-2"])
    asyncio.run(make_client("scripted", scripted=sm, cache=LLMCache(path, "rw")).chat(Q))
    off = asyncio.run(make_client("scripted", scripted=sm, cache=LLMCache(path, "off")).chat(Q))
    assert off.content == "live-2" and not off.usage.cached  # off: never read
    replay = LLMCache(path, "replay")
    assert asyncio.run(make_client("scripted", scripted=sm, cache=replay).chat(Q)).content == "live-1"
    assert replay.stats().entries == 1  # replay never writes
    with pytest.raises(LLMConfigError, match="bad cache mode 'sometimes'"):
        LLMCache(path, "sometimes")


def test_cached_replies_keep_usage_and_do_not_spend_budget(tmp_path):
    cache = LLMCache(tmp_path / "c.sqlite")
    sm = ScriptedModel(
        replies=[ScriptedModel.reply("x", prompt_tokens=1000, completion_tokens=500, cached_tokens=200)]
    )
    asyncio.run(make_client("openai/gpt-4o", scripted=sm, cache=cache).chat(Q))
    budget = Budget(max_tokens=100)
    client = make_client("openai/gpt-4o", scripted=sm, cache=cache, budget=budget)
    for _ in range(3):
        reply = asyncio.run(client.chat(Q))
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens, reply.usage.cached_tokens) == (
        1000,
        500,
        200,
    )
    assert reply.usage.cached and reply.usage.cost_usd == pytest.approx(
        (800 * 2.5 + 200 * 1.25 + 500 * 10) / 1e6
    )
    assert budget.spent_tokens == 0 and not budget.exhausted
    counting = Budget(max_tokens=100, count_cached=True)
    strict = make_client("openai/gpt-4o", scripted=sm, cache=cache, budget=counting)
    asyncio.run(strict.chat(Q))
    assert counting.spent_tokens == 1500 and counting.exhausted


def test_concurrent_async_writers_and_readers(tmp_path):
    cache = LLMCache(tmp_path / "c.sqlite")
    sm = ScriptedModel(policy=lambda req: f"answer to {req.last_user}")
    client = make_client("scripted", scripted=sm, cache=cache, concurrency=16)

    async def run():
        questions = [[Message(role="user", content=f"q{i % 40}")] for i in range(120)]
        return await asyncio.gather(*(client.chat(q) for q in questions))

    replies = asyncio.run(run())
    assert all(r.content == f"answer to q{i % 40}" for i, r in enumerate(replies))
    assert cache.stats().entries == 40


def _write_many(path: str, start: int) -> None:
    cache = LLMCache(Path(path))
    for i in range(start, start + 150):
        cache.put(
            f"k{i}",
            model="m",
            kind="chat",
            request={"i": i},
            reply={"i": i},
            prompt_tokens=i,
            completion_tokens=1,
        )


def test_several_processes_and_threads_write_at_once(tmp_path):
    path = str(tmp_path / "c.sqlite")
    LLMCache(Path(path)).stats()
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_write_many, args=(path, n * 1000)) for n in range(2)]
    threads = [threading.Thread(target=_write_many, args=(path, n * 1000)) for n in range(2, 4)]
    for worker in procs + threads:
        worker.start()
    for worker in procs + threads:
        worker.join(60)
    assert all(p.exitcode == 0 for p in procs)
    stats = LLMCache(Path(path)).stats()
    assert stats.entries == 600 and stats.by_model == {"m": 600}
    assert LLMCache(Path(path)).get("k3149") == {"i": 3149}


def test_stats_and_clear(tmp_path):
    cache = LLMCache(tmp_path / "c.sqlite")
    assert not cache.stats().exists and cache.clear() == 0
    for i, model in enumerate(["a", "a", "b"]):
        cache.put(
            f"k{i}", model=model, kind="chat", request={}, reply={}, prompt_tokens=10, completion_tokens=2
        )
    stats = cache.stats()
    assert (stats.entries, stats.by_model, stats.by_kind, stats.prompt_tokens) == (
        3,
        {"a": 2, "b": 1},
        {"chat": 3},
        30,
    )
    assert cache.clear("a") == 2 and cache.stats().by_model == {"b": 1}
    assert cache.clear() == 1 and cache.stats().entries == 0


def test_default_path_from_env(tmp_path, monkeypatch):
    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(tmp_path / "cachedir"))
    assert LLMCache().path == tmp_path / "cachedir" / "llm.sqlite"
    client = make_client("replay/gpt-4o-mini")
    assert client.cache.path == tmp_path / "cachedir" / "llm.sqlite" and client.cache.mode == "replay"


def test_problem_names_what_makes_a_cache_unusable_and_writes_nothing(tmp_path):
    good = tmp_path / "good.sqlite"
    cache = LLMCache(good)
    cache.put("k", model="m", kind="chat", request={}, reply={"content": "x"}, prompt_tokens=1,
              completion_tokens=1)  # fmt: skip
    cache.close()
    before = good.read_bytes()
    assert LLMCache(good, mode="rw").problem() is None
    assert LLMCache(good, mode="replay").problem() is None
    assert LLMCache(tmp_path / "new" / "llm.sqlite", mode="rw").problem() is None
    assert LLMCache(tmp_path / "missing.sqlite", mode="replay").problem() is None
    assert not (tmp_path / "new").exists() and not (tmp_path / "missing.sqlite").exists()
    assert good.read_bytes() == before

    garbage = tmp_path / "garbage.sqlite"
    garbage.write_text("garbage\n")
    assert LLMCache(garbage, mode="rw").problem() == "file is not a database"
    assert LLMCache(garbage, mode="off").problem() is None  # off never opens it
    assert garbage.read_text() == "garbage\n"
    assert LLMCache(tmp_path, mode="replay").problem() == "it is a directory, not a file"
    assert LLMCache(garbage / "llm.sqlite", mode="rw").problem() == f"{garbage} is not a directory"


def test_opening_retries_a_database_that_is_locked_during_set_up(tmp_path, monkeypatch):
    """Setting a connection up (WAL mode, the schema) can meet "database is locked" at once, without
    SQLite's busy handler, while another process opens or checkpoints the file; seen once in CI as a
    writer thread's failure. The cache retries the set-up instead of failing its caller."""
    import sqlite3

    real_connect = sqlite3.connect
    failures = {"left": 2}

    class Flaky:
        def __init__(self, conn):
            self.conn = conn

        def execute(self, sql, *args):
            if sql.startswith("PRAGMA journal_mode") and failures["left"]:
                failures["left"] -= 1
                raise sqlite3.OperationalError("database is locked")
            return self.conn.execute(sql, *args)

        def __getattr__(self, name):
            return getattr(self.conn, name)

    monkeypatch.setattr(sqlite3, "connect", lambda *a, **k: Flaky(real_connect(*a, **k)))
    cache = LLMCache(tmp_path / "c.sqlite")
    cache.put("k", model="m", kind="chat", request={}, reply={"ok": 1}, prompt_tokens=1, completion_tokens=1)
    assert failures["left"] == 0 and cache.get("k") == {"ok": 1}


@pytest.mark.parametrize("command", ["stats", "clear"])
def test_cache_commands_name_a_folder_or_another_file_as_no_cache(tmp_path, command):
    """Trial 11: ``cache stats --cache-path SOMEDIR`` said "unable to open database file"."""
    from typer.testing import CliRunner

    from pageindex.cli import app

    folder = tmp_path / "adir.pdf"
    folder.mkdir()
    other = tmp_path / "notes.txt"
    other.write_text("not a database, not to be touched\n" * 40)
    for path, why in ((folder, "it is a directory, not a file"), (other, "file is not a database")):
        args = ["cache", command, "--cache-path", str(path)] + (["--yes"] if command == "clear" else [])
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert lines == [f"error: --cache-path {path} is not an LLM cache: {why}"], result.output
    assert other.read_text().startswith("not a database")


@pytest.mark.parametrize("command", ["stats", "clear"])
def test_cache_commands_name_a_cache_dir_that_is_a_file(tmp_path, monkeypatch, command):
    """Review faults: with $PAGEINDEX_CACHE_DIR a regular file, ``cache stats`` said "empty (no file
    yet)" of a cache that can never be written there (``bench run --cache rw`` refuses it)."""
    from typer.testing import CliRunner

    from pageindex.cli import app
    from pageindex.llm.cache import open_cache
    from pageindex.llm.types import LLMConfigError

    a_file = tmp_path / "cache"
    a_file.write_text("a file, not a folder\n")
    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(a_file))
    result = CliRunner().invoke(app, ["cache", command] + (["--yes"] if command == "clear" else []))
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines == [
        f"error: the cache (under $PAGEINDEX_CACHE_DIR) {a_file / 'llm.sqlite'} is not an LLM cache: no file "
        f"can be there ({a_file} is a file, not a folder)"
    ], result.output
    given = a_file / "sub" / "c.sqlite"
    args = ["cache", command, "--cache-path", str(given)] + (["--yes"] if command == "clear" else [])
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and f"error: --cache-path {given} is not an LLM cache" in result.output
    with pytest.raises(LLMConfigError, match="no file can be there"):  # replay read none: every call missed
        open_cache("replay", None)
    assert a_file.read_text() == "a file, not a folder\n"


def test_cache_stats_reads_a_missing_file_in_a_read_only_folder_as_empty(tmp_path, monkeypatch):
    """Review 11: the check refused a missing file where ``rw`` could not create one; stats only reads."""
    import os

    from typer.testing import CliRunner

    from pageindex.cli import app

    monkeypatch.setattr(os, "access", lambda *args, **kwargs: False)
    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(tmp_path))
    path = tmp_path / "x.sqlite"
    result = CliRunner().invoke(app, ["cache", "stats", "--cache-path", str(path)])
    assert result.exit_code == 0
    trees = f"trees {tmp_path / 'trees'}: empty (no folder yet)"
    assert result.output.splitlines() == [f"cache {path}: empty (no file yet)", trees]


def test_replay_opens_the_file_read_only_and_an_empty_file_is_an_empty_cache(tmp_path, monkeypatch):
    """Trial 13: replay gave "unable to open database file" for a cache on a read-only volume (checked by
    hand on a read-only bind mount: it now replays), and wrote a schema into a 0-byte file. Replay opens
    the file read-only; where SQLite cannot (a WAL file whose -shm cannot be made), as immutable."""
    import sqlite3

    path = tmp_path / "c.sqlite"
    sm = ScriptedModel(replies=["live-1"])
    recorder = LLMCache(path, "rw")
    asyncio.run(make_client("scripted", scripted=sm, cache=recorder).chat(Q))
    recorder.close()  # the last connection closed: the WAL is written back into the file
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    replay = LLMCache(empty, "replay")
    assert replay.problem() is None and replay.get("any") is None and replay.get_failure("any") is None
    assert empty.read_bytes() == b""  # nothing written: an empty file stays empty
    real_connect, opened = sqlite3.connect, []

    def read_only_storage(target, *args, **kwargs):
        opened.append(str(target))
        if kwargs.get("uri") and "immutable=1" not in str(target):
            raise sqlite3.OperationalError("unable to open database file")
        assert kwargs.get("uri"), f"replay opened {target} for writing"
        return real_connect(target, *args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", read_only_storage)
    replay = LLMCache(path, "replay")
    assert replay.problem() is None
    reply = asyncio.run(make_client("scripted", scripted=sm, cache=replay).chat(Q))
    assert reply.content == "live-1" and reply.usage.cached
    assert all("mode=ro" in target for target in opened)
    # review 14: replies still in a -wal file are not read by an immutable open: say so, never miss silently
    (tmp_path / "c.sqlite-wal").write_bytes(b"\0" * 4096)
    problem = LLMCache(path, "replay").problem()
    assert problem is not None and "c.sqlite-wal holds replies not yet written back" in problem


def test_a_cache_in_a_folder_the_user_may_not_write_into_replays_and_is_counted(tmp_path, monkeypatch):
    """A WAL-mode cache in a folder this user may not write into (another user's shared cache, a
    read-only folder) cannot get its -shm; SQLite says "attempt to write a readonly database"
    (SQLITE_READONLY_DIRECTORY, seen as a second user), and `cache stats` and `--cache replay` said `is
    not an LLM cache` / `is not a usable LLM cache` of it. It is read as on read-only storage now."""
    import sqlite3

    from typer.testing import CliRunner

    from pageindex.cli import app

    path = tmp_path / "c.sqlite"
    sm = ScriptedModel(replies=["live-1"])
    recorder = LLMCache(path, "rw")
    asyncio.run(make_client("scripted", scripted=sm, cache=recorder).chat(Q))
    recorder.close()
    real_connect = sqlite3.connect

    def unwritable_folder(target, *args, **kwargs):
        if kwargs.get("uri") and "immutable=1" not in str(target):
            raise sqlite3.OperationalError("attempt to write a readonly database")
        return real_connect(target, *args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", unwritable_folder)
    replay = LLMCache(path, "replay")
    assert replay.problem() is None
    reply = asyncio.run(make_client("scripted", scripted=sm, cache=replay).chat(Q))
    assert reply.content == "live-1" and reply.usage.cached
    monkeypatch.setenv("COLUMNS", "300")
    stats = CliRunner().invoke(app, ["cache", "stats", "--cache-path", str(path)])
    assert stats.exit_code == 0, stats.output
    assert stats.output.startswith(f"cache {path}: 1 reply, ")


def test_stats_size_counts_the_cache_and_its_sqlite_files_only(tmp_path):
    """A backup beside the cache (``llm.sqlite.bak``) is not part of its size, and a name with glob
    characters counts its own file (both were read through a glob of the name)."""
    for name in ("llm.sqlite", "llm[1].sqlite"):
        cache = LLMCache(tmp_path / name)
        cache.put("k", model="m", kind="chat", request={}, reply={"x": "y" * 5000}, prompt_tokens=1,
                  completion_tokens=1)  # fmt: skip
        own = sum((tmp_path / f"{name}{end}").stat().st_size for end in ("", "-wal", "-shm")
                  if (tmp_path / f"{name}{end}").exists())  # fmt: skip
        (tmp_path / f"{name}.bak").write_bytes(b"\0" * 1_000_000)
        (tmp_path / f"{name}-old.sqlite").write_bytes(b"\0" * 1_000_000)
        assert own > 0 and cache.stats().size_bytes == own
        cache.close()


def test_stats_writes_nothing_to_the_cache(tmp_path):
    """``pageindex cache stats`` reports: it does not turn an empty file into a database (it opened the
    file for writing and added the schema), and it reads a cache as it is."""
    empty = tmp_path / "empty.sqlite"
    empty.touch()
    stats = LLMCache(empty).stats()
    assert (stats.exists, stats.entries, stats.size_bytes) == (True, 0, 0)
    assert empty.read_bytes() == b"" and sorted(p.name for p in tmp_path.iterdir()) == ["empty.sqlite"]
    full = tmp_path / "full.sqlite"
    writer = LLMCache(full)
    writer.put("k", model="m", kind="chat", request={}, reply={}, prompt_tokens=3, completion_tokens=1)
    writer.close()
    stats = LLMCache(full).stats()
    assert (stats.entries, stats.by_model, stats.prompt_tokens, stats.failures) == (1, {"m": 1}, 3, 0)


def test_cache_clear_takes_a_model_spec_as_a_run_does(tmp_path):
    """The cache stores a model by its name without the provider; ``clear --model openai/gpt-4o-mini``
    deleted 0 rows and said nothing more (review 18)."""
    from typer.testing import CliRunner

    from pageindex.cli import app

    path = tmp_path / "c.sqlite"
    cache = LLMCache(path)
    for i, model in enumerate(["gpt-4o-mini", "gpt-4o-mini", "meta-llama/Llama-3", "qwen"]):
        cache.put(f"k{i}", model=model, kind="chat", request={}, reply={}, prompt_tokens=1,
                  completion_tokens=1)  # fmt: skip

    def clear(model: str) -> str:
        args = ["cache", "clear", "--cache-path", str(path), "--model", model, "-y"]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        return " ".join(result.output.split())

    assert clear("openai/gpt-4o-mini") == f"deleted 2 replies and failures from {path}"
    assert clear("meta-llama/Llama-3") == f"deleted 1 reply or failure from {path}"  # a slash of its own
    said = clear("ollama/llama3.1")
    assert said == f"nothing deleted: {path} holds no replies of ollama/llama3.1 (it holds qwen)"
    assert LLMCache(path).stats().by_model == {"qwen": 1}


@pytest.mark.parametrize("given", ["", " "])
def test_cache_clear_with_an_empty_model_is_refused_and_deletes_nothing(tmp_path, given):
    """``cache clear --model "$UNSET" -y`` deleted every model's replies (an empty name was taken as no
    --model at all); before the spec change it deleted none. It is bad input: exit 2, nothing deleted."""
    from typer.testing import CliRunner

    from pageindex.cli import app

    path = tmp_path / "c.sqlite"
    cache = LLMCache(path)
    cache.put("k", model="qwen", kind="chat", request={}, reply={}, prompt_tokens=1, completion_tokens=1)
    cache.close()
    result = CliRunner().invoke(app, ["cache", "clear", "--cache-path", str(path), "--model", given, "-y"])
    assert result.exit_code == 2, result.output
    assert " ".join(result.output.split()).startswith("error: --model is empty; give a model name")
    assert LLMCache(path).stats().by_model == {"qwen": 1}


def test_cache_stats_says_one_reply_in_the_singular(tmp_path):
    """Trial 2 (Nov 27): a cache of one reply was '1 replies'."""
    from typer.testing import CliRunner

    from pageindex.cli import app

    path = tmp_path / "c.sqlite"
    cache = LLMCache(path)
    cache.put("k", model="m", kind="chat", request={}, reply={}, prompt_tokens=3, completion_tokens=1)
    cache.close()
    res = CliRunner().invoke(app, ["cache", "stats", "--cache-path", str(path)], terminal_width=250)
    assert res.exit_code == 0, res.output
    assert res.output.startswith(f"cache {path}: 1 reply, "), res.output


def test_a_cache_on_read_only_storage_is_said_to_be_there(tmp_path, monkeypatch):
    """SQLite says only "unable to open database file" where a cache folder is mounted read-only
    (`cache clear`, `--cache rw`): the message says why (trial 18)."""
    import os
    import sqlite3

    from pageindex.llm import LLMError
    from pageindex.llm import cache as cache_module

    class ReadOnly:
        f_flag = os.ST_RDONLY

    def refuse(*args, **kwargs):
        raise sqlite3.OperationalError("unable to open database file")

    path = tmp_path / "c.sqlite"
    LLMCache(path).put("k", model="m", kind="chat", request={}, reply={}, prompt_tokens=1,
                       completion_tokens=1)  # fmt: skip
    monkeypatch.setattr(cache_module.sqlite3, "connect", refuse)
    monkeypatch.setattr(cache_module.os, "statvfs", lambda path: ReadOnly())
    with pytest.raises(LLMError) as refused:
        LLMCache(path).clear()
    assert str(refused.value).endswith(
        "unable to open database file (it is on a read-only file system; --cache replay reads it there)"
    )


def test_replay_of_a_cache_recorded_before_failures_were_kept(tmp_path):
    """Upgrade review: a cache recorded by pageindex-bench d685f97 (2026-11-22) has a ``replies`` table
    and no ``failures`` table; ``bench run -m replay/MODEL --cache replay`` on it stopped with ``error:
    internal error: OperationalError: no such table: failures`` (JSON-mode detection counted both
    tables). Replay reads it as a cache without failures and adds nothing to the file."""
    import sqlite3

    from bench.config import RunConfig, apply_recording_settings

    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE replies (key TEXT PRIMARY KEY, model TEXT NOT NULL, kind TEXT NOT NULL, "
        "request TEXT NOT NULL, reply TEXT NOT NULL, prompt_tokens INTEGER NOT NULL, "
        "completion_tokens INTEGER NOT NULL, created_at REAL NOT NULL)"
    )
    rows = [("k1", "json"), ("k2", "json")]
    for key, mode in rows:
        conn.execute(
            "INSERT INTO replies VALUES (?, 'gemma', 'structured', ?, '{}', 10, 2, 1.0)",
            (key, f'{{"mode": "{mode}"}}'),
        )
    conn.commit()
    conn.close()
    before = path.read_bytes()
    cache = LLMCache(path, "replay")
    assert cache.problem() is None
    assert cache.structured_mode_count("gemma", "json") == 2
    assert cache.structured_mode_count("gemma", "tools") == 0
    assert cache.get_failure("k1") is None
    config, notes = apply_recording_settings(
        RunConfig(cache="replay", cache_path=path, model="replay/gemma"), "replay/gemma"
    )
    assert config.json_mode is True and notes and "made its 2 structured calls of gemma" in notes[0]
    cache.close()
    assert path.read_bytes() == before


def test_cache_clear_of_a_file_another_process_holds_is_one_line_and_deletes_nothing(tmp_path, monkeypatch):
    """Another process holding the cache past the busy timeout (a clear vacuuming a large file, a
    ``sqlite3`` shell inside a transaction): ``cache clear`` said ``error: internal error:
    OperationalError: database is locked`` and, had only its second DELETE been refused, it would have
    deleted the replies and kept the failures. Now: one line, exit 2, nothing deleted."""
    from typer.testing import CliRunner

    import pageindex.llm.cache as cache_module
    from pageindex.cli import app
    from tests.held import SQLITE_WRITE_LOCK, held_by_another_process

    path = tmp_path / "c.sqlite"
    cache = LLMCache(path)
    for i in range(2):
        cache.put(f"k{i}", model="m", kind="chat", request={}, reply={}, prompt_tokens=1, completion_tokens=1)
    cache.close()
    monkeypatch.setattr(cache_module, "_BUSY_TIMEOUT_S", 0.2)  # SQLite's wait, 30 s in use
    with held_by_another_process(SQLITE_WRITE_LOCK, path):
        result = CliRunner().invoke(app, ["cache", "clear", "--cache-path", str(path), "-y"])
    assert result.exit_code == 2, result.output
    assert " ".join(result.output.split()) == (
        f"error: the LLM cache {path} is in use by another process (database is locked: it held the file "
        "for more than 0.2s): nothing deleted; run it again once that process is done"
    )
    assert LLMCache(path).stats().entries == 2
    result = CliRunner().invoke(app, ["cache", "clear", "--cache-path", str(path), "-y"])
    assert result.exit_code == 0 and LLMCache(path).stats().entries == 0, result.output


def test_cache_clear_that_cannot_compact_the_file_says_so_and_keeps_what_it_deleted(tmp_path, monkeypatch):
    """The rows are deleted and committed first; another process taking the file before the VACUUM
    leaves it its size, said in a note (it was an internal error after the rows were gone)."""
    import sqlite3

    from typer.testing import CliRunner

    from pageindex.cli import app

    path = tmp_path / "c.sqlite"
    LLMCache(path).put("k", model="m", kind="chat", request={}, reply={}, prompt_tokens=1,
                       completion_tokens=1)  # fmt: skip
    real_connect = sqlite3.connect

    class Busy:
        def __init__(self, conn):
            self.conn = conn

        def execute(self, sql, *args):
            if sql == "VACUUM":
                raise sqlite3.OperationalError("database is locked")
            return self.conn.execute(sql, *args)

        def __getattr__(self, name):
            return getattr(self.conn, name)

    monkeypatch.setattr(sqlite3, "connect", lambda *a, **k: Busy(real_connect(*a, **k)))
    result = CliRunner().invoke(app, ["cache", "clear", "--cache-path", str(path), "-y"])
    assert result.exit_code == 0, result.output
    assert " ".join(result.output.split()) == (
        f"deleted 1 reply or failure from {path} note: {path} keeps its size: another process was using it "
        "when it was to be compacted (database is locked); `pageindex cache clear` again later compacts it"
    )
    monkeypatch.undo()
    assert LLMCache(path).stats().entries == 0


def test_a_call_on_an_event_loop_does_not_wait_for_its_recording_and_a_queued_reply_is_served(tmp_path):
    """The client queues its recordings (``put(..., wait=False)``): a call whose write waits for a lock
    another process holds returns at once, the reply is served from the queue to an identical call
    meanwhile (not sent again), and it is written once the file is free. Before, the call itself waited
    (up to the 30 s busy timeout), holding the event loop."""
    from tests.held import SQLITE_WRITE_LOCK, held_by_another_process

    path = tmp_path / "c.sqlite"
    LLMCache(path).put("seed", model="m", kind="chat", request={}, reply={}, prompt_tokens=0,
                       completion_tokens=0)  # fmt: skip
    cache = LLMCache(path)
    sm = ScriptedModel(replies=["live-1", "live-2"])
    client = make_client("scripted", scripted=sm, cache=cache)
    seen: dict[str, object] = {}

    async def go(held: contextlib.ExitStack):
        first = await client.chat(Q)
        seen["while held"] = (cache.writes, cache.unwritten, LLMCache(path).stats().entries)
        again = await client.chat(Q)
        held.close()  # the other process lets go: the queued write goes in
        return first, again

    with contextlib.ExitStack() as held:
        held.enter_context(held_by_another_process(SQLITE_WRITE_LOCK, path))
        first, again = asyncio.run(go(held))
    assert seen["while held"] == (0, 0, 1)  # the call returned with its write still waiting
    assert (first.content, first.usage.cached) == ("live-1", False)
    assert (again.content, again.usage.cached) == ("live-1", True) and sm.request_count == 1
    assert (cache.writes, cache.unwritten, cache.unwritten_note()) == (1, 0, None)
    assert LLMCache(path).stats().entries == 2  # the seed and the reply


def test_queued_writes_keep_their_order(tmp_path):
    """A reply recorded after a failure of the same request drops the failure, and a failure queued
    after a reply is not recorded over it: the queue is written in the order it was filled."""
    cache = LLMCache(tmp_path / "c.sqlite")

    async def go():
        cache.put_failure("a", model="m", kind="chat", request={}, failure={"kind": "timeout"}, wait=False)
        cache.put("a", model="m", kind="chat", request={}, reply={"n": 1}, prompt_tokens=1,
                  completion_tokens=1, wait=False)  # fmt: skip
        cache.put("b", model="m", kind="chat", request={}, reply={"n": 2}, prompt_tokens=1,
                  completion_tokens=1, wait=False)  # fmt: skip
        cache.put_failure("b", model="m", kind="chat", request={}, failure={"kind": "timeout"}, wait=False)

    asyncio.run(go())
    stats = cache.stats()
    assert (stats.entries, stats.failures) == (2, 0)
    assert (cache.writes, cache.failure_writes, cache.unwritten) == (2, 2, 0)


def test_a_flush_waits_for_what_was_queued_before_it_not_for_an_empty_queue(tmp_path, monkeypatch):
    """Another thread's event loop queuing a recording during every write never leaves the queue empty
    (a run recording faster than a slow disk takes it): a ``flush()`` (and ``close()``) that waited for
    an empty queue waited as long as that went on. It waits for the records queued before it, all
    written when it returns."""
    import time

    cache = LLMCache(tmp_path / "c.sqlite")
    stop, need_one, queued_one = threading.Event(), threading.Event(), threading.Event()
    write = LLMCache._write

    def written_while_another_is_queued(self, batch):
        if not stop.is_set():
            queued_one.clear()
            need_one.set()
            queued_one.wait(timeout=30)
        write(self, batch)

    monkeypatch.setattr(LLMCache, "_write", written_while_another_is_queued)

    def put(n):
        cache.put(f"k{n}", model="m", kind="chat", request={}, reply={"n": n}, prompt_tokens=1,
                  completion_tokens=1, wait=False)  # fmt: skip

    async def produce():
        n = 0
        put(n)  # the loop's worker thread starts writing
        while not stop.is_set():  # this loop only produces: it may block
            if need_one.wait(timeout=0.01):
                need_one.clear()
                n += 1
                put(n)
                queued_one.set()

    producer = threading.Thread(target=asyncio.run, args=(produce(),))
    producer.start()
    try:
        while cache.writes < 20:
            assert producer.is_alive()
            time.sleep(0.01)
        flushed = threading.Event()
        threading.Thread(target=lambda: (cache.flush(), flushed.set()), daemon=True).start()
        # a liveness bound, not a speed figure: the old flush waited until the producer stopped
        assert flushed.wait(timeout=30), "flush() waited for a queue another loop keeps filling"
        assert cache.writes >= 20 and cache.unwritten == 0
    finally:
        stop.set()
        queued_one.set()
        producer.join(timeout=60)
    cache.close()
    assert cache.stats().entries == cache.writes and cache.unwritten == 0
