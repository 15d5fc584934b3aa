"""The ``pageindex`` command. Thin: parse options, call the library, print with rich.

Every module in this package that defines ``register(app, bench)`` adds its commands;
``app`` is the top-level command and ``bench`` the ``pageindex bench`` group. Adding a
command means adding a module, nothing else. Commands from outside the package (the ``bench``
harness's, or a plug-in's) are components of kind ``"command"`` in :mod:`pageindex.registry`,
found through the ``pageindex.commands`` entry points and ``PAGEINDEX_PLUGINS``: this package
never imports ``bench``.
"""

from __future__ import annotations

import sys
from typing import Any

# What ``pageindex.cli`` offers; the app is built (every command mounted, plug-ins loaded) when one of
# these is first used. Importing ``pageindex.cli._common`` (as every command module, ``bench``'s too,
# does) must not build it: a ``bench.cli`` module imported first would otherwise be half-imported
# while the plug-ins are mounted, and its commands (and those after it) would be missing.
_APP_NAMES = frozenset({"app", "bench", "AliasedCommand", "OneLineErrors", "DEBUG_ENV"})

INTERRUPTED = 130  # ExitCode.INTERRUPTED, said here without importing the app


def main() -> None:
    """The ``pageindex`` command. Building the app (its commands and plug-ins load for a second or so)
    happens in here, so that a Ctrl-C then, or as the command exits, is the one line ``interrupted`` and
    exit 130 as during the command (it was a traceback and a death by SIGINT).

    A command that a script started in the background inherits SIGINT ignored (POSIX shells do that
    without job control): every command takes it back, so ``kill -INT`` stops it as Ctrl-C does."""
    import signal

    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        from pageindex.cli import _app

        _app.main()
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        raise SystemExit(INTERRUPTED) from None


def __getattr__(name: str) -> Any:
    if name in _APP_NAMES:
        from pageindex.cli import _app

        return getattr(_app, name)
    raise AttributeError(f"module 'pageindex.cli' has no attribute {name!r}")
