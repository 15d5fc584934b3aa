"""Another process holding something while a test runs a command: the LLM cache's write lock, a run
folder's claim. Deterministic: the holder says ``held`` once it holds it, and lets go only when the
test's ``with`` block ends (its standard input closed)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# the SQLite write lock on the file argv[1], as a CI job writing into a shared llm.sqlite holds it
SQLITE_WRITE_LOCK = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("held", flush=True)
sys.stdin.read()
conn.execute("ROLLBACK")
"""

# the claim a bench run holds on its folder argv[1] while it writes into it (made if missing, as by a run
# still setting up)
RUN_FOLDER_CLAIM = """
import sys
from pathlib import Path
from bench.rundir import FolderClaim
claim = FolderClaim.take(Path(sys.argv[1]), make=True)
print("held", flush=True)
sys.stdin.read()
"""


@contextmanager
def held_by_another_process(script: str, path: Path) -> Iterator[None]:
    """While the block runs, another process runs ``script`` on ``path`` and holds what it takes."""
    holder = subprocess.Popen([sys.executable, "-c", script, str(path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        yield
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
