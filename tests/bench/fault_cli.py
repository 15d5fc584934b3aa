"""Start ``pageindex bench fault-server`` as a real process (its own interpreter, never PATH)."""

from __future__ import annotations

import os
import sys

import pexpect


def spawn_fault_server(*args: str) -> pexpect.spawn:
    """The server on a free loopback port; read its URL with ``expect(r"listening on (...)")``."""
    return pexpect.spawn(
        sys.executable,
        ["-m", "pageindex.cli", "bench", "fault-server", "--port", "0", *args],
        encoding="utf-8",
        timeout=30,
        env={**os.environ, "COLUMNS": "200", "TERM": "dumb"},
    )
