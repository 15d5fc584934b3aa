"""The repository never holds a copy of the shared data (``../shared/financebench``,
``../shared/filings``): they are used by path. A FinanceBench label file was once committed by
accident beside the code (``labs/labels/``); this test fails on any such copy, whatever its name."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from bench.perf.outline_recovery import HOLDOUT
from tests.conftest import REPO_ROOT, financebench_dir
from tests.tree.conftest import filings_dir

SKIPPED_DIRS = {"results", "__pycache__", "node_modules"}  # run output (git-ignored) and caches
# never opened or measured (README: the layout hold-out PDFs, the two hold-out label files): known by name
HOLD_OUTS = {f"{stem}.pdf" for stem in HOLDOUT} | {
    "gpt-4-1106-preview_closedBook.jsonl", "llama2_sharedStore.jsonl",
}  # fmt: skip


def _files(root: Path, skip_dirs: set[str], skip_names: set[str] = frozenset()) -> list[Path]:
    """The regular files under ``root``, not descending into hidden folders (``.git``, ``.venv``),
    ``skip_dirs`` or ``*.egg-info``; files named in ``skip_names`` are left untouched (not even stat)."""
    out = []
    for top, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not (d.startswith(".") or d in skip_dirs or d.endswith(".egg-info"))]
        out += [
            path
            for name in names
            if name not in skip_names and (path := Path(top) / name).is_file() and not path.is_symlink()
        ]
    return out


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def copies(shared_roots: list[Path], repo: Path) -> list[str]:
    """``repo file = shared file`` for every file of ``repo`` whose bytes are those of a shared file
    (sizes compared first: a digest only where one matches). The hold-outs are never read: a file of
    ``repo`` named as one is reported by its name."""
    by_size: dict[int, list[Path]] = {}
    for root in shared_roots:
        for path in _files(root, set(), HOLD_OUTS):
            if path.stat().st_size > 0:
                by_size.setdefault(path.stat().st_size, []).append(path)
    found = []
    for path in _files(repo, SKIPPED_DIRS):
        if path.name in HOLD_OUTS:
            found.append(f"{path.relative_to(repo)}: the name of a hold-out (never read, so not compared)")
            continue
        if same_size := by_size.get(path.stat().st_size):
            digest = _digest(path)
            found += [f"{path.relative_to(repo)} = {s}" for s in same_size if _digest(s) == digest]
    return found


def test_no_file_of_the_repository_is_a_copy_of_the_shared_data() -> None:
    roots = [root for root in (financebench_dir(), filings_dir()) if root.is_dir()]
    held = sum(len(_files(root, set(), HOLD_OUTS)) for root in roots)
    assert held > 50, "the shared data is needed to check this"
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


def test_the_hold_outs_are_never_measured_or_read(tmp_path: Path, monkeypatch) -> None:
    """Review (rev-day): the walk took the size of every shared file and hashed those of a repository file's
    size, hold-outs included, which are never opened or measured (README: the layout hold-out PDFs and the
    two hold-out label files). They are looked at by name only: a repository file of a hold-out's name is
    reported, unread."""
    shared, repo = tmp_path / "shared", tmp_path / "repo"
    (shared / "labels").mkdir(parents=True)
    (shared / "pdfs").mkdir()
    (repo / "labs").mkdir(parents=True)
    (shared / "labels" / "llama2_sharedStore.jsonl").write_text('{"label": "Correct"}\n')
    (shared / "pdfs" / "COSTCO_2024_DEF14A.pdf").write_text("%PDF-1.7 stand-in\n")
    (shared / "labels" / "dev.jsonl").write_text('{"label": "Wrong"}\n')
    (repo / "labs" / "renamed.jsonl").write_text('{"label": "Correct"}\n')  # a hold-out's bytes, renamed
    (repo / "labs" / "llama2_sharedStore.jsonl").write_text("x\n")  # a hold-out's name
    (repo / "dev copy.jsonl").write_text('{"label": "Wrong"}\n')
    touched: list[Path] = []  # every file the walk took the size of, or opened
    for name in ("stat", "read_bytes", "open"):
        real = getattr(Path, name)

        def spy(self, *args, _real=real, **kwargs):
            touched.append(Path(self))
            return _real(self, *args, **kwargs)

        monkeypatch.setattr(Path, name, spy)
    found = copies([shared], repo)
    monkeypatch.undo()
    held_out = {shared / "labels" / "llama2_sharedStore.jsonl", shared / "pdfs" / "COSTCO_2024_DEF14A.pdf"}
    assert held_out.isdisjoint(touched)
    assert shared / "labels" / "dev.jsonl" in touched  # (the spy sees the walk)
    assert found == [
        f"dev copy.jsonl = {shared / 'labels' / 'dev.jsonl'}",
        "labs/llama2_sharedStore.jsonl: the name of a hold-out (never read, so not compared)",
    ]
