"""Saved analyst sessions: one JSON file per name under ``$PAGEINDEX_CACHE_DIR/sessions``
(default ``~/.cache/pageindex/sessions``), written atomically."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import TextIO

from pydantic import BaseModel, ValidationError

from pageindex.analyst.session import AnalystSession
from pageindex.atomic import write_atomic
from pageindex.cachedir import cache_root
from pageindex.wording import first_error

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


def default_sessions_dir() -> Path:
    return cache_root() / "sessions"


class SessionNameError(ValueError):
    """A session name that cannot be a file name."""


class SessionElsewhereError(ValueError):
    """A saved session of that name is about other filings (a fresh one saved would replace it)."""


class SessionInUseError(ValueError):
    """The session is open in another process: the one that saved last would replace the other's answers."""


class SessionUnreadableError(ValueError):
    """A saved session file that cannot be read (torn, not JSON, not a session of this version): a fresh
    session saved under its name would replace it, and with it the answers it may still hold."""


class Opened(BaseModel):
    """What :meth:`SessionStore.open` found."""

    session: AnalystSession
    status: str  # "new", "reopened", "expired" (found idle too long), "rebuilt" (found with trees by
    # another builder version); an expired or rebuilt one is replaced by a fresh session
    idle_s: float = 0.0
    # where the saved session an expired or rebuilt one replaces was moved, its answers whole (None: none)
    kept: Path | None = None


_HELD: dict[Path, TextIO] = {}  # the session locks this process holds, by lock file


class SessionStore:
    def __init__(self, directory: str | Path | None = None) -> None:
        self.directory = Path(directory) if directory is not None else default_sessions_dir()

    def path_for(self, name: str) -> Path:
        if not _NAME.match(name):
            raise SessionNameError(
                f"session name {name!r} must be 1-100 letters, digits, '.', '_' or '-', "
                "starting with a letter or digit"
            )
        return self.directory / f"{name}.json"

    def lock(self, name: str) -> None:
        """Hold the session ``name`` for this process until :meth:`unlock` or the process ends (an
        advisory lock on ``NAME.lock``, which the system drops with the process, however it ends; taken
        again by the process that holds it, it is held still).
        Raises :class:`SessionInUseError` when another process holds it: two processes saving one
        session each saved what it had read, and the one that saved last replaced the other's answers.
        Where no lock can be taken (a read-only folder, no ``fcntl``) nothing is held: saving says
        whether it could write."""
        path = self.path_for(name).with_suffix(".lock")
        if path in _HELD:
            return
        try:
            import fcntl

            path.parent.mkdir(parents=True, exist_ok=True)
            handle = path.open("a+", encoding="utf-8")
        except (ImportError, OSError):
            return
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.seek(0)
            holder = handle.read().strip()
            handle.close()
            by = f" (process {holder})" if holder.isdigit() else ""
            raise SessionInUseError(
                f"session {name!r} is open in another pageindex ask{by}: give another --session name, or "
                "end that one first"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        _HELD[path] = handle

    def unlock(self, name: str) -> None:
        if (handle := _HELD.pop(self.path_for(name).with_suffix(".lock"), None)) is not None:
            handle.close()

    def history_path(self, name: str) -> Path:
        return self.path_for(name).with_suffix(".history")

    def load(self, name: str) -> AnalystSession | None:
        """The session saved as ``name``, or None when there is none. A file that is there but cannot be
        read as a session raises :class:`SessionUnreadableError`: it was started afresh in silence, and
        the fresh session saved over it (a torn file, one hand-edited, one of another version)."""
        path = self.path_for(name)
        try:
            text = path.read_text(encoding="utf-8")
        except (FileNotFoundError, NotADirectoryError):  # no such file (a file where the folder would be)
            return None
        except (OSError, UnicodeDecodeError) as exc:
            raise self._unreadable(name, getattr(exc, "strerror", None) or str(exc)) from None
        try:
            session = AnalystSession.model_validate_json(text)
        except ValidationError as exc:
            why = first_error(exc)
            if not why.startswith("not JSON"):
                why = f"not a session this version of pageindex saves: {why}"
            raise self._unreadable(name, why) from None
        if not session.documents:  # "{}" validates: a session about no filing was never saved
            raise self._unreadable(name, "it names no filing")
        return session

    def _unreadable(self, name: str, why: str) -> SessionUnreadableError:
        path = self.path_for(name)
        return SessionUnreadableError(
            f"session {name!r} cannot be read ({why}): give another --session name, or move {path} away "
            "to start it afresh"
        )

    def save(self, session: AnalystSession) -> Path:
        if not session.name:
            raise SessionNameError("only a named session can be saved")
        path = self.path_for(session.name)
        write_atomic(path, session.model_dump_json(indent=1))
        return path

    def delete(self, name: str) -> bool:
        path = self.path_for(name)
        existed = path.exists()
        path.unlink(missing_ok=True)
        return existed

    def names(self) -> list[str]:
        return sorted(p.stem for p in self.directory.glob("*.json")) if self.directory.exists() else []

    def open(self, name: str, fresh: AnalystSession, *, now: float) -> Opened:
        """The saved session ``name`` if it exists, is about the same documents and has not
        expired under ``fresh.limits``; otherwise ``fresh`` (named ``name``)."""
        fresh.name = name
        old = self.load(name)
        if old is None:
            return Opened(session=fresh, status="new")
        if not old.same_documents(fresh):  # saving the fresh one would replace it: refused
            was, now_ = (", ".join(d.doc_id for d in s.documents) for s in (old, fresh))
            what = f"is about {was}, not {now_}"
            if was == now_:  # the same names: a filing's bytes changed since the session was saved
                pairs = zip(fresh.documents, old.documents, strict=True)
                changed = [d.source for d, e in pairs if d.sha256 != e.sha256]
                what = f"was saved about another version of {was} ({', '.join(changed)} changed since)"
            raise SessionElsewhereError(
                f"session {name!r} {what}: give another --session name, or delete {self.path_for(name)} to "
                "reuse this one"
            )
        old.limits = fresh.limits  # the limits asked for now apply, also to the expiry check
        idle = old.idle_for(now)
        for status, replaced in (("expired", old.is_expired(now)), ("rebuilt", not old.same_build(fresh))):
            if replaced:
                return Opened(session=fresh, status=status, idle_s=idle, kept=self._keep(name, status, now))
        return Opened(session=old, status="reopened", idle_s=idle)

    def _keep(self, name: str, status: str, now: float) -> Path | None:
        """Move the saved session ``name`` aside, as ``NAME.json.STATUS-YYYYmmddTHHMMSS`` (no session
        name lists or opens it), before a fresh one is saved in its place: its answers were lost (every
        upgrade of the tree builder started each saved session afresh). None when it cannot be moved
        (a read-only folder): the fresh one then cannot be saved either."""
        path = self.path_for(name)
        kept = path.with_name(f"{path.name}.{status}-{time.strftime('%Y%m%dT%H%M%S', time.localtime(now))}")
        try:
            os.replace(path, kept)
        except OSError:
            return None
        return kept
