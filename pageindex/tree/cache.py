"""On-disk tree cache keyed by the PDF's sha256 and the builder version.

Entries are written to a temporary file in the cache directory and renamed into place,
so a reader never sees a partial entry and a crash leaves none behind.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from pageindex.atomic import write_atomic
from pageindex.cachedir import cache_root
from pageindex.tree.model import Tree

__all__ = ["TreeCache", "default_cache_dir", "file_sha256", "write_atomic"]


def default_cache_dir() -> Path:
    return cache_root() / "trees"


def file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with Path(path).open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


class TreeCache:
    """Trees stored as ``<sha256>-v<builder version>.json`` under ``directory``."""

    def __init__(self, directory: str | Path | None = None) -> None:
        self.directory = Path(directory) if directory is not None else default_cache_dir()

    def path_for(self, sha256: str, builder_version: str) -> Path:
        return self.directory / f"{sha256}-v{builder_version}.json"

    def get(self, sha256: str, builder_version: str) -> Tree | None:
        path = self.path_for(sha256, builder_version)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError:
            return None
        try:
            return Tree.model_validate_json(text)
        except ValueError:
            path.unlink(missing_ok=True)  # an unreadable entry is rebuilt, never trusted
            return None

    def put(self, tree: Tree) -> Path:
        path = self.path_for(tree.sha256, tree.builder_version)
        write_atomic(path, tree.model_dump_json())
        return path
