"""The repository never holds a copy of the shared data (``../shared/financebench``,
``../shared/filings``): they are used by path. A FinanceBench label file was once committed by
accident beside the code (``labs/labels/``); this test fails on any such copy, whatever its name."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from tests.conftest import REPO_ROOT, financebench_dir
from tests.tree.conftest import filings_dir

SKIPPED_DIRS = {"results", "__pycache__", "node_modules"}  # run output (git-ignored) and caches


def _files(root: Path, skip_dirs: set[str]) -> list[Path]:
    """The regular files under ``root``, not descending into hidden folders (``.git``, ``.venv``),
    ``skip_dirs`` or ``*.egg-info``."""
    out = []
    for top, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not (d.startswith(".") or d in skip_dirs or d.endswith(".egg-info"))]
        out += [path for name in names if (path := Path(top) / name).is_file() and not path.is_symlink()]
    return out


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def copies(shared_roots: list[Path], repo: Path) -> list[str]:
    """``repo file = shared file`` for every file of ``repo`` whose bytes are those of a shared file
    (sizes compared first: a digest only where one matches)."""
    by_size: dict[int, list[Path]] = {}
    for root in shared_roots:
        for path in _files(root, set()):
            if path.stat().st_size > 0:
                by_size.setdefault(path.stat().st_size, []).append(path)
    found = []
    for path in _files(repo, SKIPPED_DIRS):
        if same_size := by_size.get(path.stat().st_size):
            digest = _digest(path)
            found += [f"{path.relative_to(repo)} = {s}" for s in same_size if _digest(s) == digest]
    return found


def test_no_file_of_the_repository_is_a_copy_of_the_shared_data() -> None:
    roots = [root for root in (financebench_dir(), filings_dir()) if root.is_dir()]
    assert sum(len(_files(root, set())) for root in roots) > 50, "the shared data is needed to check this"
    assert copies(roots, REPO_ROOT) == []


def test_a_copy_under_another_name_is_found(tmp_path: Path) -> None:
    shared, repo = tmp_path / "shared", tmp_path / "repo"
    (shared / "labels").mkdir(parents=True)
    (repo / "labs").mkdir(parents=True)
    (repo / "results").mkdir()
    (shared / "labels" / "a.jsonl").write_text('{"label": "Correct"}\n')
    (repo / "labs" / "renamed.txt").write_text('{"label": "Correct"}\n')
    (repo / "results" / "run.jsonl").write_text('{"label": "Correct"}\n')  # run output: not the repo's
    (repo / "other.txt").write_text('{"label": "Wrong!!"}\n')  # the same size, other bytes
    assert copies([shared], repo) == [f"labs/renamed.txt = {shared / 'labels' / 'a.jsonl'}"]
