"""On-disk cache of model replies (SQLite), for record / replay.

Key: sha256 over the canonical JSON of the call kind, the request-format version
(``wire.REQUEST_FORMAT``), model name, messages, tools, response schema and sampling
parameters -- never the API key or the base URL, so a call recorded with ``openai/gpt-4o-mini``
is replayed by ``replay/gpt-4o-mini`` (and by the same model behind another URL). Recordings
made with an older request format never match; a replay miss says so (and how to re-record)
when the cache holds such recordings of the model. Modes: ``off`` (never read or write), ``rw``
(read, and write every new reply), ``replay`` (read only; a miss raises :class:`ReplayMiss`).
Rows keep the reply and its original usage, so replayed runs report the same token figures,
marked ``cached``.

Failures: a call's *final* failure (after the retries: HTTP errors, timeouts, malformed replies,
output that never validated) is recorded too, in a separate ``failures`` table: error kind, class,
message, the raw reply (both already free of keys) and any tokens spent. ``replay`` reproduces the
same typed error for the same request key, so a run that ended on (or recovered from) a failed
call replays exactly. ``rw`` never reuses a recorded failure: it calls the model again, and a
success replaces the failure record. ``stats`` counts replies and failures apart.

The database runs in WAL mode: several processes and threads may write at once. Each thread reads
through its own connection (a read takes no lock: in WAL mode it never waits for a writer); this
cache's writes are queued in order and written through one connection by one thread at a time, a
record waiting for another process's lock at most the busy timeout from when it was queued
(:meth:`LLMCache.give_up_waiting` ends the wait: a Ctrl-C at a run's end). A caller on an
event loop (the client: ``bench run``, ``bench judge``, ``rejudge``, ``ask``) queues them
(``wait=False``): a worker thread of the loop writes them, so a write that waits out another process's
lock (up to the busy timeout) holds neither the loop nor the call, and the loop's other coroutines
(the run's other samples, their time limits) go on. Queued replies are served by :meth:`LLMCache.get`
until written; :meth:`LLMCache.flush` waits for them (:func:`run_recording` and ``bench run`` do at their
end, and a Ctrl-C stops that wait; ``asyncio.run`` would at the loop's closing, uncut). A sync caller
(the default, ``wait=True``) blocks until its write is done: it has nothing else running meanwhile.
Default path: ``$PAGEINDEX_CACHE_DIR/llm.sqlite``, else ``~/.cache/pageindex/llm.sqlite``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Coroutine, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel

from pageindex.atomic import file_in_the_way
from pageindex.cachedir import cache_root
from pageindex.llm.types import LLMConfigError

log = logging.getLogger(__name__)

CacheMode = Literal["off", "rw", "replay"]
T = TypeVar("T")
_BUSY_TIMEOUT_S = 30.0  # how long a writer waits for another's lock (SQLite's busy timeout, and set-up)
CACHE_MODES: tuple[CacheMode, ...] = ("off", "rw", "replay")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS replies (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    kind TEXT NOT NULL,
    request TEXT NOT NULL,
    reply TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS replies_model ON replies(model);
CREATE TABLE IF NOT EXISTS failures (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    kind TEXT NOT NULL,
    request TEXT NOT NULL,
    error_kind TEXT NOT NULL,
    failure TEXT NOT NULL,
    created_at REAL NOT NULL
);
"""


_REPLY_COLUMNS = "key, model, kind, request, reply, prompt_tokens, completion_tokens, created_at"
_FAILURE_COLUMNS = "key, model, kind, request, error_kind, failure, created_at"


@dataclass(frozen=True, eq=False)
class _Write:
    """One record to write: its statements, and the reply :meth:`LLMCache.get` serves until it is
    written (None for a failure, which mode ``rw`` never reads)."""

    key: str
    what: str  # the call's kind (chat, structured, tokenize, context_window) or "failure"
    statements: tuple[tuple[str, tuple[Any, ...]], ...]
    reply: dict[str, Any] | None = None
    # when it was queued: it waits for another process's lock the busy timeout from then, not from when
    # the write before it gave up (a run's end would wait one busy timeout per batch queued meanwhile)
    queued_at: float = field(default_factory=time.monotonic)


def _cannot_create(path: Path) -> str | None:
    """Why ``path`` (which does not exist) cannot be created, or None."""
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        return f"{parent} is not a directory"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"cannot create it: no permission to write in {parent}"
    return None


def default_cache_path() -> Path:
    return cache_root() / "llm.sqlite"


def request_key(request: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of a request (sorted keys, no whitespace)."""
    text = json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


class CacheStats(BaseModel):
    path: str
    exists: bool
    entries: int = 0
    size_bytes: int = 0
    by_model: dict[str, int] = {}
    by_kind: dict[str, int] = {}
    prompt_tokens: int = 0
    completion_tokens: int = 0
    oldest: float | None = None
    newest: float | None = None
    failures: int = 0  # recorded final failures (replayed as the same typed error in mode replay)
    failures_by_kind: dict[str, int] = {}  # error kind -> count (timeout, call_failed, ...)
    failures_by_model: dict[str, int] = {}
    # replies recorded with an older request format (``wire.REQUEST_FORMAT``): no replay of today matches them
    older_format: int = 0


class LLMCache:
    def __init__(self, path: str | Path | None = None, mode: CacheMode = "rw") -> None:
        if mode not in CACHE_MODES:
            raise LLMConfigError(f"bad cache mode {mode!r}: expected one of {', '.join(CACHE_MODES)}")
        self.path = Path(path) if path is not None else default_cache_path()
        self.mode: CacheMode = mode
        self._local = threading.local()  # this thread's connection (conn, tables, generation)
        self._lock = threading.Lock()  # the counts below; never held while SQLite waits for the file
        # every connection opened, whichever thread it serves (a loop's worker thread writes): close()
        # closes them all, and a thread's connection of an older generation is not used again
        self._conns: list[sqlite3.Connection] = []
        self._generation = 0
        self._write_conn: tuple[sqlite3.Connection, int] | None = None  # see _writer
        # writes (see the module's docstring): queued in order, written by one thread at a time
        self._write_lock = threading.Lock()
        self._queued = threading.Condition()  # guards the queue, the pending replies and _draining
        self._queue: list[_Write] = []
        self._pending: dict[str, _Write] = {}  # key -> the queued reply get() serves until it is written
        self._draining = False  # a worker thread of an event loop is writing the queue
        # records queued so far, and records written or given up so far: flush() waits for the ones
        # queued before it (an empty queue would never come while another loop queues without pause)
        self._queued_count = 0
        self._done_count = 0
        self._give_up = threading.Event()  # see give_up_waiting
        self.hits = 0
        self.misses = 0
        self.writes = 0
        self.failure_hits = 0  # recorded failures served (mode replay)
        self.failure_writes = 0
        # replies and failures that could not be written (another process held the file past the busy
        # timeout, a full disk): the call keeps its reply, only the recording is lost; the first reason
        self.unwritten = 0
        self.unwritten_reason: str | None = None
        self.not_compacted: str | None = None  # why the last clear() left the file its size, if it did
        # the counts a replay miss reports, per query: each reads every recording of the model (the
        # request text, which no index covers), so a replay that missed a thousand calls of a 100k-entry
        # cache read it a thousand times (0.5 s a miss); a replay writes nothing, so they hold
        self._miss_counts: dict[tuple[str, ...], int] = {}

    def __repr__(self) -> str:
        return f"LLMCache({str(self.path)!r}, mode={self.mode!r})"

    # ------------------------------------------------------------------ connection
    def _connect(self, create: bool = True) -> sqlite3.Connection | None:
        conn = getattr(self._local, "conn", None)
        if conn is not None and getattr(self._local, "generation", None) == self._generation:
            return conn
        if not create and not self.path.exists():
            return None
        if self.mode == "replay":
            return self._connect_read_only()
        conn = self._open()
        self._keep(conn)
        return conn

    def _writer(self) -> sqlite3.Connection:
        """The connection this cache's writes go through: one, used under ``_write_lock`` by whichever
        thread writes (a loop's worker thread, a sync caller), so a worker thread leaves none behind."""
        if self._write_conn is None or self._write_conn[1] != self._generation:
            conn = self._open()
            with self._lock:
                self._conns.append(conn)
            self._write_conn = (conn, self._generation)
        return self._write_conn[0]

    def _open(self) -> sqlite3.Connection:
        """A new read-write connection to the file (made if missing), in WAL mode, with the schema."""
        # Setting up a connection (WAL mode, the schema) can meet "database is locked" at once, without
        # SQLite's busy handler, while another process opens or checkpoints the same file: retry it with
        # a growing pause, for as long as the busy timeout, rather than fail the caller.
        deadline = time.monotonic() + _BUSY_TIMEOUT_S
        pause = 0.02
        while True:
            conn = None
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(
                    self.path, timeout=_BUSY_TIMEOUT_S, check_same_thread=False, isolation_level=None
                )
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.executescript(_SCHEMA)
                break
            except (sqlite3.Error, OSError) as exc:
                if conn is not None:
                    conn.close()
                why = str(exc)
                locked = isinstance(exc, sqlite3.OperationalError) and ("locked" in why or "busy" in why)
                if not locked or time.monotonic() > deadline:
                    raise LLMConfigError(
                        f"cannot open the LLM cache {self.path}: {exc}{_read_only_note(self.path)}"
                    ) from None
                time.sleep(pause)
                pause = min(pause * 2, 0.5)
        return conn

    def _connect_read_only(self) -> sqlite3.Connection | None:
        """Mode ``replay`` reads and never writes: the file is opened read-only (on read-only storage too,
        a cache volume mounted read-only in CI), no schema is added, and a file without a ``replies``
        table (an empty file) is an empty cache: None, every call a miss."""
        try:
            conn = _open_read_only(self.path)
        except sqlite3.Error as exc:
            raise LLMConfigError(f"cannot open the LLM cache {self.path}: {exc}") from None
        tables = _tables(conn)
        if "replies" not in tables:
            conn.close()
            return None
        self._keep(conn)
        self._local.tables = tables
        return conn

    def _keep(self, conn: sqlite3.Connection) -> None:
        """``conn`` is this thread's connection from now on (and one :meth:`close` closes)."""
        self._local.conn, self._local.generation = conn, self._generation
        with self._lock:
            self._conns.append(conn)

    def problem(self, *, missing_ok: bool = False) -> str | None:
        """Why this cache cannot be used, or None: a directory, a file that is not SQLite, a
        SQLite file of something else, a place where mode ``rw`` cannot create the file. Callers
        check before any work (a run would otherwise record every model call as an error). The
        check writes nothing: an existing file is opened read-only, a missing one is not created
        (``replay`` leaves it missing: every call is then a miss; ``missing_ok`` says the same for a
        caller that only reports on the file or empties it, ``pageindex cache``). ``off`` checks
        nothing."""
        if self.mode == "off":
            return None
        if self.path.is_dir():
            return "it is a directory, not a file"
        if not self.path.exists():
            if self.mode == "rw" and not missing_ok:
                return _cannot_create(self.path)
            # no mode has a cache under a file: said, where "missing" would read as an empty cache
            blocked = file_in_the_way(self.path)
            return None if blocked is None else f"no file can be there ({blocked} is a file, not a folder)"
        try:
            conn = _open_read_only(self.path)
        except sqlite3.Error as exc:
            return str(exc)
        try:
            tables = _tables(conn)
            if tables and "replies" not in tables:
                return f"a SQLite file with other tables ({', '.join(sorted(tables))}), not an LLM cache"
            if "replies" in tables:
                conn.execute(f"SELECT {_REPLY_COLUMNS} FROM replies LIMIT 0")
            if "failures" in tables:
                conn.execute(f"SELECT {_FAILURE_COLUMNS} FROM failures LIMIT 0")
        except sqlite3.Error as exc:
            if str(exc).startswith("no such column"):
                return f"a SQLite file whose tables are not an LLM cache's ({exc})"
            return str(exc)
        finally:
            conn.close()
        return None

    def close(self) -> None:
        """Close every connection the cache opened (each reading thread's, and the one its writes go
        through), once the queued writes are written (:meth:`flush`): the last connection to the file
        closed writes the ``-wal`` file back into it. A later call opens new ones."""
        self.flush()
        with self._lock:
            conns, self._conns = self._conns, []
            self._generation += 1
        for conn in conns:
            conn.close()

    # ------------------------------------------------------------------ read / write
    @property
    def readable(self) -> bool:
        return self.mode in ("rw", "replay")

    @property
    def writable(self) -> bool:
        return self.mode == "rw"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored reply for ``key``, or None (always None in mode ``off``)."""
        if not self.readable:
            return None
        if self.writable:
            with self._queued:
                queued = self._pending.get(key)
            if queued is not None and queued.reply is not None:
                self.hits += 1
                return queued.reply
        conn = self._connect(create=self.mode == "rw")
        if conn is None:
            self.misses += 1
            return None
        row = conn.execute("SELECT reply FROM replies WHERE key = ?", (key,)).fetchone()
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        return json.loads(row[0])

    def put(
        self,
        key: str,
        *,
        model: str,
        kind: str,
        request: dict[str, Any],
        reply: dict[str, Any],
        prompt_tokens: int,
        completion_tokens: int,
        replace: bool = False,
        wait: bool = True,
    ) -> None:
        """Store a reply (only in mode ``rw``; first writer wins on a duplicate key, the latest with
        ``replace``: a fact about the server, such as its context window, that may have changed) and
        drop any failure recorded for the same key. ``wait=False`` (a caller on an event loop) queues
        it and returns at once (see the module's docstring); the default writes it before returning."""
        if not self.writable:
            return
        row = (
            key,
            model,
            kind,
            json.dumps(request, default=str),
            json.dumps(reply, default=str),
            prompt_tokens,
            completion_tokens,
            time.time(),
        )
        verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
        statements = (
            (f"{verb} INTO replies VALUES (?, ?, ?, ?, ?, ?, ?, ?)", row),
            ("DELETE FROM failures WHERE key = ?", (key,)),
        )
        self._record(_Write(key, kind, statements, reply), wait=wait, replace=replace)

    def unwritten_note(self) -> str | None:
        """What a command says after its calls when some of them could not be recorded (None when all
        were): how many, why, and what a replay of them will meet. Waits for the queued writes first
        (:meth:`flush`): a caller on an event loop awaits ``asyncio.to_thread(cache.flush)`` before."""
        self.flush()
        if not self.unwritten:
            return None
        why = self.unwritten_reason or "unknown"
        if "locked" in why or "busy" in why:
            why += f": another process held the file for more than {_BUSY_TIMEOUT_S:g}s"
        from pageindex.wording import counted

        return (
            f"{counted(self.unwritten, 'record')} (model replies, token counts or failed calls) could not "
            f"be written to the LLM cache {self.path} ({why}); the calls kept their replies, but a --cache "
            "replay of them will miss: record them again with --cache rw"
        )

    def get_failure(self, key: str) -> dict[str, Any] | None:
        """The recorded final failure for ``key`` (``kind``, ``type``, ``message``, ``raw``,
        ``usage``), or None. Only mode ``replay`` reads failures: ``rw`` retries them live."""
        if self.mode != "replay":
            return None
        conn = self._connect(create=False)
        if conn is None or "failures" not in getattr(self._local, "tables", {"failures"}):
            return None
        row = conn.execute("SELECT failure FROM failures WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        self.failure_hits += 1
        return json.loads(row[0])

    def put_failure(
        self,
        key: str,
        *,
        model: str,
        kind: str,
        request: dict[str, Any],
        failure: dict[str, Any],
        wait: bool = True,
    ) -> None:
        """Record a call's final failure (only in mode ``rw``; the latest one wins; never over a
        stored reply). ``failure`` must already be free of keys. ``wait`` as in :meth:`put`."""
        if not self.writable:
            return
        row = (
            key,
            model,
            kind,
            json.dumps(request, default=str),
            str(failure.get("kind", "llm_error")),
            json.dumps(failure, default=str),
            time.time(),
            key,
        )

        statement = (
            "INSERT OR REPLACE INTO failures SELECT ?, ?, ?, ?, ?, ?, ? "
            "WHERE NOT EXISTS (SELECT 1 FROM replies WHERE key = ?)"
        )
        self._record(_Write(key, "failure", ((statement, row),)), wait=wait)

    def _record(self, item: _Write, *, wait: bool, replace: bool = False) -> None:
        """Queue ``item`` after the writes before it; with ``wait``, or off an event loop, write the
        queue here and now, else hand it to a worker thread of the running loop (one at a time: the
        writes stay in order, and a write waiting for the file holds one thread, not the loop)."""
        loop = None
        if not wait:
            with contextlib.suppress(RuntimeError):
                loop = asyncio.get_running_loop()
        with self._queued:
            self._queue.append(item)
            self._queued_count += 1
            if item.reply is not None and (replace or item.key not in self._pending):
                self._pending[item.key] = item
            start = loop is not None and not self._draining
            if start:
                self._draining = True
        if loop is None:
            self._drain()
            return
        if start:
            try:
                loop.run_in_executor(None, self._drain, True)
            except RuntimeError:  # the loop is closing and takes no more work: written here
                with self._queued:
                    self._draining = False
                self._drain()

    def _drain(self, worker: bool = False) -> None:
        """Write everything queued, in order, a batch (what was queued meanwhile) per transaction, until
        the queue is empty. ``worker``: the loop's worker thread, which says when it is done (in the same
        look that finds the queue empty, so a write queued meanwhile is never left without one)."""
        try:
            with self._write_lock:
                while True:
                    with self._queued:
                        if not self._queue:
                            if worker:
                                self._draining = False
                            self._queued.notify_all()
                            return
                        batch, self._queue = self._queue, []
                    self._write(batch)
        except BaseException:  # a Ctrl-C in a sync caller: whoever waits is woken
            with self._queued:
                if worker:
                    self._draining = False
                self._queued.notify_all()
            raise

    def flush(self) -> None:
        """Wait until every write queued with ``wait=False`` before this call is written or counted in
        :attr:`unwritten` (at most the busy timeout per batch, while another process holds the file); not
        for the ones queued after it, which another loop may go on queuing. Blocking: an event loop calls
        it in a thread (``await asyncio.to_thread(cache.flush)``)."""
        with self._queued:
            target = self._queued_count
            while self._done_count < target:
                self._queued.wait()

    def _write(self, batch: list[_Write]) -> None:
        """Write ``batch`` in one transaction, waiting for another process's lock no longer than the busy
        timeout since its oldest record was queued. A write SQLite refuses (the file held by another process
        past the busy timeout: "database is locked"; a full disk) costs the recordings only, never the
        calls whose replies they keep: they are counted in :attr:`unwritten` and logged (it was raised
        into the call, which a run recorded as an error after the model had answered)."""
        failed: Exception | None = None
        try:
            conn = self._writer()
            self._begin(conn, min(item.queued_at for item in batch) + _BUSY_TIMEOUT_S)
            with _committed(conn):
                for item in batch:
                    for sql, args in item.statements:
                        conn.execute(sql, args)
        except Exception as exc:  # noqa: BLE001 - whatever refused it, the calls keep their replies
            failed = exc
        except BaseException as exc:  # a Ctrl-C in a sync caller: the batch is lost; a flush waits no more
            self._settle(batch, sqlite3.OperationalError(f"interrupted ({type(exc).__name__})"))
            raise
        self._settle(batch, failed)
        if failed is not None:
            from pageindex.wording import counted

            whats = ", ".join(sorted({item.what for item in batch}))
            log.warning("could not record %s (%s) in the LLM cache %s (%s); the calls go on without them",
                        counted(len(batch), "record"), whats, self.path, failed)  # fmt: skip

    def _settle(self, batch: list[_Write], failed: Exception | None) -> None:
        """Count ``batch`` written (``failed`` None) or unwritten, then say it is done: a :meth:`flush`
        waiting for it returns with the counts already right."""
        failures = sum(item.what == "failure" for item in batch)
        with self._lock:
            if failed is None:
                self.writes += len(batch) - failures
                self.failure_writes += failures
            else:
                self.unwritten += len(batch)
                if self.unwritten_reason is None:
                    self.unwritten_reason = str(failed)
        with self._queued:
            for item in batch:
                if self._pending.get(item.key) is item:
                    del self._pending[item.key]
            self._done_count += len(batch)
            self._queued.notify_all()

    def _begin(self, conn: sqlite3.Connection, deadline: float) -> None:
        """``BEGIN IMMEDIATE`` (this cache's write lock on the file), waiting for another process's lock
        until ``deadline`` (``time.monotonic()``) or :meth:`give_up_waiting`, in pauses growing to 0.1 s as
        SQLite's own busy handler does (which no one could cut short: a Ctrl-C waited it out)."""
        conn.execute("PRAGMA busy_timeout = 0")  # the wait is this loop's
        pause = 0.001
        while True:
            try:
                conn.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                why = str(exc)
                if "locked" not in why and "busy" not in why:
                    raise
                if self._give_up.is_set():
                    raise sqlite3.OperationalError(
                        "another process held the file, and the wait for it was cut short (Ctrl-C)"
                    ) from None
                left = deadline - time.monotonic()
                if left <= 0:
                    raise
            self._give_up.wait(min(pause, left))
            pause = min(pause * 2, 0.1)

    def give_up_waiting(self) -> None:
        """Stop waiting for another process's lock on the file (a Ctrl-C at a run's end): the queued
        records that meet it are counted in :attr:`unwritten` at once; those that find the file free are
        still written."""
        self._give_up.set()

    def wait_again(self) -> None:
        """Undo :meth:`give_up_waiting`, for the calls of what comes next (the next question of an ``ask``
        session after a Ctrl-C)."""
        self._give_up.clear()

    def older_format_count(self, model: str | None, request_format: int) -> int:
        """Recorded replies of ``model`` (of every model: None) whose request was made with an older
        request format (no ``"format"`` field, or another one): they can never match today's keys."""
        memo = ("older", model or "", str(request_format))
        return self._count_once(memo, lambda conn: _older_format(conn, model, request_format))

    def structured_mode_count(self, model: str, mode: str) -> int:
        """Recorded structured calls of ``model`` (replies and final failures) made in ``mode``
        (``"json"`` or ``"tools"``): a replay in the other mode matches none of them. A cache recorded
        before failures were kept has no ``failures`` table (opened read-only in mode ``replay``, none is
        added): it holds none of them (it was ``no such table: failures``, an internal error)."""
        where = "WHERE model = ? AND kind = 'structured' AND json_extract(request, '$.mode') = ?"

        def count(conn: sqlite3.Connection) -> int:
            tables = _tables(conn)
            return sum(
                int(conn.execute(f"SELECT COUNT(*) FROM {table} {where}", (model, mode)).fetchone()[0])
                for table in ("replies", "failures")
                if table in tables
            )

        return self._count_once(("mode", model, mode), count)

    def _count_once(self, memo: tuple[str, ...], count: Callable[[sqlite3.Connection], int]) -> int:
        """``count``'s figure, read once per cache in mode replay (which writes nothing, so it holds): a
        replay miss says these counts, and each read scans every recording's request."""
        conn = self._connect(create=False)
        if conn is None:
            return 0
        with self._lock:
            if memo in self._miss_counts:
                return self._miss_counts[memo]
            n = count(conn)
            if not self.writable:
                self._miss_counts[memo] = n
            return n

    # ------------------------------------------------------------------ maintenance
    def stats(self) -> CacheStats:
        """What the cache holds, read without writing to it (opened read-only: a report never adds a
        schema to the file, so an empty file stays empty, and a cache on read-only storage is read)."""
        self.flush()  # this process's queued writes are in the file
        if not self.path.exists():
            return CacheStats(path=str(self.path), exists=False)
        try:
            conn = _open_read_only(self.path)
        except sqlite3.Error as exc:
            raise LLMConfigError(f"cannot open the LLM cache {self.path}: {exc}") from None
        try:
            tables = _tables(conn)
            if "replies" not in tables:  # an empty file: an empty cache
                size = sum(p.stat().st_size for p in self.files() if p.is_file())
                return CacheStats(path=str(self.path), exists=True, size_bytes=size)
            if "failures" not in tables:
                conn.execute("CREATE TEMP TABLE failures (model TEXT, error_kind TEXT)")
            return self._stats(conn)
        finally:
            conn.close()

    def _stats(self, conn: sqlite3.Connection) -> CacheStats:
        with self._lock:
            entries, prompt, completion, oldest, newest = conn.execute(
                "SELECT COUNT(*), COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0), "
                "MIN(created_at), MAX(created_at) FROM replies"
            ).fetchone()
            by_model = dict(conn.execute("SELECT model, COUNT(*) FROM replies GROUP BY model ORDER BY model"))
            by_kind = dict(conn.execute("SELECT kind, COUNT(*) FROM replies GROUP BY kind ORDER BY kind"))
            failures = conn.execute("SELECT COUNT(*) FROM failures").fetchone()[0]
            failures_by_kind = dict(
                conn.execute(
                    "SELECT error_kind, COUNT(*) FROM failures GROUP BY error_kind ORDER BY error_kind"
                )
            )
            failures_by_model = dict(
                conn.execute("SELECT model, COUNT(*) FROM failures GROUP BY model ORDER BY model")
            )
            from pageindex.llm.wire import REQUEST_FORMAT

            older = _older_format(conn, None, REQUEST_FORMAT)
        size = sum(p.stat().st_size for p in self.files() if p.is_file())
        return CacheStats(
            path=str(self.path),
            exists=True,
            entries=entries,
            size_bytes=size,
            by_model=by_model,
            by_kind=by_kind,
            prompt_tokens=prompt,
            completion_tokens=completion,
            oldest=oldest,
            newest=newest,
            failures=failures,
            failures_by_kind=failures_by_kind,
            failures_by_model=failures_by_model,
            older_format=older,
        )

    def files(self) -> list[Path]:
        """The cache file and SQLite's own files beside it (``-wal``, ``-shm``): what its size counts.
        Not a glob of the name: that counted any ``llm.sqlite.bak`` or ``llm.sqlite-old`` beside it, and
        read a name with ``[`` or ``*`` in it as a pattern."""
        return [self.path, *(self.path.with_name(self.path.name + end) for end in ("-wal", "-shm"))]

    def clear(self, *models: str) -> int:
        """Delete every row (or only those of ``models``), recorded failures included, at once (all or
        nothing), then compact the file; returns how many replies and failures were deleted. A missing or
        empty file (``--cache-path empty.pdf``) has nothing to delete and is left as it is: opening it to
        write made an empty file a 24 KB SQLite database. Another process holding the file past the busy
        timeout raises :class:`LLMConfigError`, nothing deleted (it was an internal error,
        ``OperationalError: database is locked``); one that holds it only when the file is compacted
        leaves the rows deleted and the file its size, said in :attr:`not_compacted`."""
        self.not_compacted = None
        self.flush()
        if not self.path.exists() or self.path.stat().st_size == 0:
            return 0
        with self._write_lock:
            conn = self._writer()
            conn.execute(f"PRAGMA busy_timeout = {round(_BUSY_TIMEOUT_S * 1000)}")
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                raise LLMConfigError(
                    f"the LLM cache {self.path} is in use by another process ({exc}: it held the file for "
                    f"more than {_BUSY_TIMEOUT_S:g}s): nothing deleted; run it again once that process is "
                    "done"
                ) from None
            deleted = 0
            with _committed(conn):
                for table in ("replies", "failures"):
                    if not models:
                        deleted += conn.execute(f"DELETE FROM {table}").rowcount
                    for model in models:
                        deleted += conn.execute(f"DELETE FROM {table} WHERE model = ?", (model,)).rowcount
            try:
                conn.execute("VACUUM")
            except sqlite3.OperationalError as exc:
                self.not_compacted = str(exc)
        return deleted


@contextlib.contextmanager
def _committed(conn: sqlite3.Connection) -> Iterator[None]:
    """The block's statements, in the transaction the caller began (``BEGIN IMMEDIATE``), committed when
    it ends; rolled back when it or the COMMIT fails (the connection's next write must not start inside
    a transaction left open)."""
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
        raise


def _read_only_note(path: Path) -> str:
    """Why SQLite could not open ``path`` for writing where its own words ("unable to open database
    file") do not say: the file's folder is on read-only storage."""
    try:
        read_only = os.statvfs(path.parent).f_flag & os.ST_RDONLY
    except (OSError, AttributeError):  # no statvfs (Windows), or no such folder
        return ""
    return " (it is on a read-only file system; --cache replay reads it there)" if read_only else ""


def _open_read_only(path: Path) -> sqlite3.Connection:
    """``path`` opened read-only. A cache recorded in WAL mode needs a ``-shm`` file, which read-only
    storage does not let SQLite create ("unable to open database file"), nor a folder the user may not
    write into ("attempt to write a readonly database"); there, and only when no
    ``-wal`` file holds replies not yet written back into the file, it is opened as immutable (an
    immutable open would not read them: every recorded call would silently miss). Any other error (a
    locked file included) is raised as it is."""
    uri = path.resolve().as_uri()
    options = {"uri": True, "timeout": _BUSY_TIMEOUT_S, "check_same_thread": False, "isolation_level": None}
    conn = None
    try:
        conn = sqlite3.connect(f"{uri}?mode=ro", **options)
        _tables(conn)
        return conn
    except sqlite3.OperationalError as exc:
        if conn is not None:
            conn.close()
        # read-only storage: "unable to open database file"; a folder the user may not write into (a
        # cache of another user's, a read-only folder): "attempt to write a readonly database"
        # (SQLITE_READONLY_DIRECTORY), which stats and replay gave as "not an LLM cache"
        if "unable to open" not in str(exc) and "readonly database" not in str(exc):
            raise
        wal = path.with_name(path.name + "-wal")
        if wal.exists() and wal.stat().st_size:
            raise sqlite3.OperationalError(
                f"{exc}: it cannot be read on read-only storage while {wal.name} holds replies not yet "
                "written back (open it once with --cache rw, or copy it with its -wal file to a writable "
                "folder)"
            ) from None
    conn = sqlite3.connect(f"{uri}?mode=ro&immutable=1", **options)
    try:
        _tables(conn)
    except sqlite3.Error:
        conn.close()
        raise
    return conn


def _older_format(conn: sqlite3.Connection, model: str | None, request_format: int) -> int:
    """Replies (of ``model``, or all) recorded with another request format than ``request_format``."""
    marker = f'%"format": {int(request_format)},%'
    where, args = ("AND model = ?", (marker, model)) if model is not None else ("", (marker,))
    row = conn.execute(f"SELECT COUNT(*) FROM replies WHERE request NOT LIKE ? {where}", args).fetchone()
    return int(row[0])


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def open_cache(mode: CacheMode, path: Path | None = None) -> LLMCache | None:
    """The LLM cache a command asked for (``--cache MODE``, ``--cache-path PATH``), checked before any
    work; None for ``off``. Raises :class:`LLMConfigError` with one line when it cannot be used: a
    file that is not an LLM cache, a folder, a place ``rw`` cannot create, or a path given with
    ``off`` (it would be silently unused, and a ``replay/MODEL`` would read the default file)."""
    if mode == "off":
        if path is not None:
            raise LLMConfigError(
                f"--cache-path {path} is read only with --cache rw or --cache replay (without them a "
                "replay/MODEL reads the default cache file); add one of them, or drop --cache-path"
            )
        return None
    cache = LLMCache(path=path, mode=mode)
    if problem := cache.problem():
        where = f"--cache-path {cache.path}" if path is not None else f"--cache-path (default {cache.path})"
        raise LLMConfigError(
            f"{where} is not a usable LLM cache: {problem}; give a cache file written by --cache rw, "
            "or a new file name"
        )
    return cache


def run_recording(main: Coroutine[Any, Any, T], caches: Iterable[LLMCache | None]) -> T:
    """``asyncio.run(main)`` for a command whose model calls queue their recordings into ``caches`` (``bench
    judge``, ``bench rejudge``, ``ask``): once ``main`` is done it waits for them inside the loop, and a
    Ctrl-C, before or meanwhile, stops waiting for another process that holds a cache file (the records it
    holds back are counted in :attr:`LLMCache.unwritten`). Before, the wait was the loop's closing, which
    waited for its worker thread whatever came: a Ctrl-C waited out the busy timeout (30 s). ``bench run``
    does the same with its own stop (``Runner._recorded``)."""
    held = [cache for cache in dict.fromkeys(caches) if cache is not None]
    for cache in held:
        cache.wait_again()

    async def recorded() -> T:
        try:
            result = await main
            for cache in held:
                await asyncio.to_thread(cache.flush)
            return result
        except asyncio.CancelledError:  # asyncio.run's answer to a Ctrl-C
            for cache in held:
                cache.give_up_waiting()
            raise

    return asyncio.run(recorded())
