"""Files written all or nothing keep the permissions of any new file (not mkstemp's 0600)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from pageindex import atomic
from pageindex.atomic import write_atomic


def test_atomic_files_get_the_umask_permissions_not_owner_only(tmp_path: Path) -> None:
    target = tmp_path / "run.json"
    write_atomic(target, "{}")
    assert target.read_text() == "{}"
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~atomic._UMASK
    plain = tmp_path / "plain.txt"
    plain.write_text("x")  # what open() gives a new file under the same umask
    assert stat.S_IMODE(target.stat().st_mode) == stat.S_IMODE(plain.stat().st_mode)
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]
