"""Files written all or nothing: a crash or a failed build never leaves a partial file behind."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path


def _read_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _read_umask()  # read once, at import: setting it to read it is not thread-safe


def file_in_the_way(path: str | Path) -> Path | None:
    """The file standing where one of ``path``'s parent folders should be (``tree.pdf`` in
    ``tree.pdf/x.json``), or None: nothing could be written at ``path``."""
    for parent in Path(path).absolute().parents:
        if parent.exists():
            return None if parent.is_dir() else parent
    return None


def same_file(a: str | Path, b: str | Path) -> bool:
    """Whether ``a`` and ``b`` name one file or folder (the same path, a symbolic or hard link to it,
    ``./x`` and ``x``); False when either is not there."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def first_row_has(path: str | Path, keys: Iterable[str]) -> bool:
    """Whether ``path`` is a JSON-lines file whose first row is an object with every one of ``keys``: a
    file a command that writes such rows (a verdicts file, a sweep's outcomes) made and may replace."""
    try:
        with open(path, encoding="utf-8") as fh:
            first = next((text for text in fh if text.strip()), "")
        row = json.loads(first)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    return isinstance(row, dict) and set(keys) <= row.keys()


def missing_folders(*paths: str | Path) -> list[Path]:
    """The folders that do not exist yet among ``paths`` and their parents, deepest first: what making
    them would create (for :func:`remove_empty` to take back)."""
    missing: dict[Path, None] = {}
    for path in paths:
        for folder in (Path(path), *Path(path).parents):
            if not folder.exists():
                missing[folder] = None
    return sorted(missing, key=lambda folder: len(folder.parts), reverse=True)


def remove_empty(folders: list[Path]) -> None:
    """Remove ``folders`` (deepest first, as :func:`missing_folders` lists them) as far as they are
    empty: a folder that holds anything stays, and so do those it lies in."""
    for folder in folders:
        try:
            folder.rmdir()  # only when empty
        except OSError:
            if folder.exists():
                return


def write_atomic(path: str | Path, text: str | bytes) -> None:
    """Write ``text`` (UTF-8; or ``bytes`` as they are) to ``path`` via a temp file + rename: all or
    nothing, and durable: the temp file
    is flushed to disk before the rename, and the folder after it, so a power loss cannot leave the
    new name over data never written (``samples.jsonl`` rewritten by ``--retry-errors`` would be
    empty). The file gets the permissions any new file gets (0666 less the umask), not the temp
    file's owner-only 0600, so other users and CI artifact readers can read run.json and trees like
    samples.jsonl."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~_UMASK)
        with os.fdopen(fd, "wb") as fh:
            fh.write(text if isinstance(text, bytes) else text.encode("utf-8"))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _sync_folder(target.parent)


def _sync_folder(folder: Path) -> None:
    """Flush a folder's entries (a rename) to disk; where a folder cannot be opened for that (some
    file systems, Windows) the rename stands as the system keeps it."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
