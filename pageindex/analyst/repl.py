"""The interactive loop of ``pageindex ask FILE.pdf`` (no question): a prompt with history.

Lines are questions, except commands: ``/sources`` (citations of the last answer), ``/trace``
(every step of the last answer), ``/page N`` (the text of PDF page N; ``DOC:N`` with several
filings), ``/tables N`` (the tables on page N read from the PDF as rows and columns; ``DOC:N``
too), ``/session`` (what the session holds), ``/history`` (questions so far), ``/help``,
``/quit`` (or Ctrl-D). Input is read with ``input()`` and GNU readline when available, so
arrow keys recall earlier questions; the history is kept in a file beside the saved session.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path

from rich.console import Console

from pageindex.analyst.engine import Analyst
from pageindex.analyst.render import (
    print_answer,
    print_page,
    print_session,
    print_sources,
    print_tables,
    print_trace,
)

HELP = "Ask a question, or: /sources  /trace  /page N  /tables N  /session  /history  /help  /quit"


def _setup_history(path: Path | None) -> Callable[[], None]:
    try:
        import readline
    except ImportError:  # pragma: no cover - readline is missing on some platforms
        return lambda: None
    if path is None:
        return lambda: None
    with contextlib.suppress(OSError):
        readline.read_history_file(path)
    readline.set_history_length(1000)

    def save() -> None:
        with contextlib.suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True)
            readline.write_history_file(path)

    return save


def run_repl(
    analyst: Analyst,
    *,
    console: Console,
    progress_console: Console,
    save: Callable[[], None] = lambda: None,
    history_file: Path | None = None,
    prompt: str = "ask> ",
    read: Callable[[str], str] = input,
) -> int:
    """Read questions until /quit or end of input; returns the number of questions asked."""
    from pageindex.analyst.progress import RichProgress

    save_history = _setup_history(history_file)
    asked = 0
    console.print(HELP, highlight=False)
    try:
        while True:
            try:
                line = read(prompt).strip()
            except EOFError:
                console.print()
                break
            except KeyboardInterrupt:
                console.print()
                continue
            if not line:
                continue
            command, _, arg = line.partition(" ")
            if command in ("/quit", "/exit", "/q"):
                break
            if command == "/help":
                console.print(HELP, highlight=False)
            elif command == "/sources":
                print_sources(console, analyst.tree, analyst.last)
            elif command == "/trace":
                if analyst.last is None:
                    console.print("No answer yet.")
                else:
                    print_trace(console, analyst.last.result)
            elif command == "/page":
                print_page(console, analyst.tree, arg)
            elif command == "/tables":
                print_tables(console, analyst.tree, arg)
            elif command == "/session":
                print_session(console, analyst.session)
            elif command == "/history":
                for turn in analyst.session.turns:
                    console.print(
                        f"{turn.index:>3}. [{turn.status}] {turn.question}", highlight=False, markup=False
                    )
            elif command.startswith("/"):
                console.print(f"unknown command {command!r}. {HELP}", highlight=False, markup=False)
            else:
                progress = RichProgress(progress_console, analyst.tree)
                analyst.progress = progress
                try:
                    with progress:
                        answer = asyncio.run(analyst.ask(line))
                except KeyboardInterrupt:
                    console.print("[yellow]interrupted[/]")
                    continue
                asked += 1
                print_answer(console, analyst.tree, answer)
                save()
    finally:
        save_history()
        save()
    return asked
