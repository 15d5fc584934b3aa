"""Start ``pageindex bench fault-server`` as a real process (its own interpreter, never PATH)."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable

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


def serve_until_ctrl_c(
    args: list[str], ready: str, work: Callable[[str], None], *, stop: int | None = None
) -> tuple[str, int | None]:
    """Start the server with ``args``, wait for its URL and for ``ready`` in its output, call ``work``
    with the URL, then Ctrl-C it (or send it the signal ``stop``): (what it printed after ``ready``,
    whitespace folded; its exit status)."""
    child = spawn_fault_server(*args)
    try:
        child.expect(r"listening on (http://127\.0\.0\.1:\d+/v1)")
        base_url = child.match.group(1)
        child.expect(ready)
        work(base_url)
        if stop is None:
            child.sendintr()
        else:
            child.kill(stop)
        child.expect(pexpect.EOF)
        tail = re.sub(r"\s+", " ", child.before)
    finally:
        child.close(force=True)
    return tail, child.exitstatus
