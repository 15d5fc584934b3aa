"""What the tree cache folder holds, counted against the builder version that runs now, and the
pruning of what no command reads any more (``pageindex cache stats`` and ``pageindex cache prune``).

Each change to the tree builder's code keys new entries (:func:`pageindex.tree.build.code_version`),
so the entries of older versions are never read again and pile up (a folder used through 21 builder
versions held 974 files, 336 MB, none of them readable). A write killed between its temp file and the
rename leaves a hidden ``.NAME.XXXXXXXX.tmp`` (:func:`pageindex.atomic.write_atomic`), which nothing
reads either.

The names are :class:`pageindex.tree.cache.TreeCache`'s (``<sha256>-v<version>.json``) and those of
the section summaries kept beside the trees (``<sha256>-v<version>.summaries.*.json``,
:mod:`pageindex.analyst.summaries`), which live and die with their tree's version. This module only
reads names; it lives outside ``pageindex/tree/`` so that it is not part of the builder version."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import NamedTuple

from pydantic import BaseModel

__all__ = [
    "TEMP_AGE",
    "PruneIncomplete",
    "TreeCacheStats",
    "VersionFiles",
    "prune_tree_cache",
    "tree_cache_stats",
]

_ENTRY = re.compile(r"^(?P<sha>[0-9a-f]{64})-v(?P<version>.+?)(?:\.summaries\..+)?\.json$")
TEMP_AGE = 3600.0  # seconds: an older temp file is a write that was killed, not one in progress


class VersionFiles(BaseModel):
    """One builder version's files in a tree cache: its trees, all its files (trees and the files keyed
    like them), their size."""

    trees: int = 0
    files: int = 0
    size_bytes: int = 0


class TreeCacheStats(BaseModel):
    """A tree cache folder's files by builder version, the temp files of killed writes, and the files
    the cache did not write (never touched)."""

    directory: Path
    exists: bool
    by_version: dict[str, VersionFiles] = {}
    temp_files: int = 0
    temp_size_bytes: int = 0
    other_files: int = 0

    def total(self, *, but: str | None = None) -> VersionFiles:
        """The files of every builder version, or of all but version ``but``."""
        counts = [files for version, files in self.by_version.items() if version != but]
        return VersionFiles(
            trees=sum(c.trees for c in counts),
            files=sum(c.files for c in counts),
            size_bytes=sum(c.size_bytes for c in counts),
        )


class _Entry(NamedTuple):
    path: Path
    kind: str  # "current", "old", "temp" (a killed write's), "busy" (a write in progress), "other"
    size: int
    version: str | None
    tree: bool


def _entries(directory: Path, version: str | None, now: float) -> list[_Entry]:
    found: list[_Entry] = []
    for path in directory.iterdir():
        try:
            info = path.stat()
        except OSError:  # removed meanwhile
            continue
        if not path.is_file():
            continue
        name = path.name
        if name.startswith(".") and name.endswith(".tmp") and _ENTRY.match(name[1:].rsplit(".", 2)[0]):
            kind = "temp" if now - info.st_mtime > TEMP_AGE else "busy"
            found.append(_Entry(path, kind, info.st_size, None, False))
        elif match := _ENTRY.match(name):
            kind = "current" if match["version"] == version else "old"
            tree = name == f"{match['sha']}-v{match['version']}.json"
            found.append(_Entry(path, kind, info.st_size, match["version"], tree))
        else:
            found.append(_Entry(path, "other", info.st_size, None, False))
    return found


def tree_cache_stats(directory: Path) -> TreeCacheStats:
    """Count what ``directory`` holds, by builder version; a folder that is not there is an empty
    cache. It needs no builder version, so it does not load the builder (and pymupdf: about 1 s)."""
    stats = TreeCacheStats(directory=directory, exists=directory.is_dir())
    if not stats.exists:
        return stats
    for entry in _entries(directory, None, time.time()):
        if entry.kind == "temp":
            stats.temp_files += 1
            stats.temp_size_bytes += entry.size
        elif entry.kind == "other":
            stats.other_files += 1
        elif entry.version is not None:
            files = stats.by_version.setdefault(entry.version, VersionFiles())
            files.trees += entry.tree
            files.files += 1
            files.size_bytes += entry.size
    return stats


class PruneIncomplete(Exception):
    """Some files :func:`prune_tree_cache` was to delete could not be (a read-only folder): how many were
    deleted (``files``, ``size``), how many were not, and the first reason."""

    def __init__(self, files: int, size: int, failed: int, reason: str) -> None:
        super().__init__(f"{failed} files could not be deleted: {reason}")
        self.files, self.size, self.failed, self.reason = files, size, failed, reason


def prune_tree_cache(directory: Path, version: str) -> tuple[int, int]:
    """Delete the entries of builder versions other than ``version`` and the temp files of killed
    writes (one younger than :data:`TEMP_AGE` is a write in progress and stays); return the files and
    bytes deleted. Entries of ``version`` and files the cache did not write stay. A file that cannot
    be deleted does not stop the others: :class:`PruneIncomplete` says, after, how many were and were not
    (the first one used to stop the prune, which said that what could be deleted was deleted)."""
    if not directory.is_dir():
        return 0, 0
    files = size = failed = 0
    reason = ""
    for entry in _entries(directory, version, time.time()):
        if entry.kind in ("old", "temp"):
            try:
                entry.path.unlink()
            except FileNotFoundError:  # another prune got there first
                continue
            except OSError as exc:
                failed += 1
                reason = reason or str(exc.strerror or exc)
                continue
            files += 1
            size += entry.size
    if failed:
        raise PruneIncomplete(files, size, failed, reason)
    return files, size
