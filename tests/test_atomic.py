"""Files written all or nothing keep the permissions of any new file (not mkstemp's 0600)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from pageindex import atomic
from pageindex.atomic import missing_folders, remove_empty, write_atomic


def test_atomic_files_get_the_umask_permissions_not_owner_only(tmp_path: Path) -> None:
    target = tmp_path / "run.json"
    write_atomic(target, "{}")
    assert target.read_text() == "{}"
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~atomic._UMASK
    plain = tmp_path / "plain.txt"
    plain.write_text("x")  # what open() gives a new file under the same umask
    assert stat.S_IMODE(target.stat().st_mode) == stat.S_IMODE(plain.stat().st_mode)
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_the_data_is_on_disk_before_the_rename_and_the_folder_after(tmp_path: Path, monkeypatch) -> None:
    """Review 13: the temp file was renamed over samples.jsonl without an fsync, so a power loss could
    leave the new name over data never written. The order of the calls is what makes it durable."""
    calls: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        calls.append("fsync folder" if stat.S_ISDIR(os.fstat(fd).st_mode) else "fsync file")
        real_fsync(fd)

    def replace(src, dst) -> None:
        calls.append("rename")
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    write_atomic(tmp_path / "samples.jsonl", '{"a": 1}\n')
    assert calls == ["fsync file", "rename", "fsync folder"]
    assert (tmp_path / "samples.jsonl").read_text() == '{"a": 1}\n'


def test_the_folders_a_command_made_are_taken_back_as_far_as_they_are_empty(tmp_path: Path) -> None:
    made = missing_folders(tmp_path / "a" / "b" / "raw", tmp_path / "a" / "b" / "pdfs")
    assert made[-1] == tmp_path / "a" and set(made[:2]) == {tmp_path / "a/b/raw", tmp_path / "a/b/pdfs"}
    for folder in made[:2]:
        folder.mkdir(parents=True)
    (tmp_path / "a" / "b" / "pdfs" / "x.pdf").write_bytes(b"%PDF-")
    remove_empty(made)  # pdfs/ holds a file: it stays, and so do b and a
    assert sorted(p.name for p in (tmp_path / "a" / "b").iterdir()) == ["pdfs"]
    (tmp_path / "a" / "b" / "pdfs" / "x.pdf").unlink()
    remove_empty(made)
    assert list(tmp_path.iterdir()) == []
