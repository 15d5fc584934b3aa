"""The interactive loop of ``pageindex ask FILE.pdf`` (no question): a prompt with history.

A line is a command when it starts with ``/`` or is exactly a command word (``help``, ``clear``,
``quit``, ``sources`` ...; ``page 60`` too, since a command word is followed only by its argument);
anything else is a question for the model. :func:`parse_line` decides; :data:`COMMANDS` lists the
commands with what they do and an example, which ``/help`` prints. Input is read with ``input()``
and GNU readline when available, so arrow keys recall earlier questions; the history is kept in a
file beside the saved session.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Literal, NamedTuple

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


class Command(NamedTuple):
    name: str
    usage: str
    does: str
    example: str
    aliases: tuple[str, ...] = ()
    needs_arg: bool = False


COMMANDS: tuple[Command, ...] = (
    Command("sources", "/sources", "the citations of the last answer, with their pages", "/sources"),
    Command("trace", "/trace", "every step the last answer took (searches, sections read)", "/trace"),
    Command(
        "page",
        "/page N",
        "the text of PDF page N (DOC:N with several filings)",
        "/page 60",
        needs_arg=True,
    ),
    Command(
        "tables",
        "/tables N",
        "the tables on PDF page N as rows and columns (DOC:N too)",
        "/tables 60",
        needs_arg=True,
    ),
    Command("session", "/session", "what this session holds: questions, findings, sections", "/session"),
    Command("history", "/history", "the questions asked so far in this session", "/history"),
    Command(
        "clear",
        "/clear",
        "forget what this session read and found; the next question starts cold",
        "/clear",
    ),
    Command("help", "/help", "this list", "/help", aliases=("?",)),
    Command("quit", "/quit", "leave (Ctrl-D too); a named session is saved", "/quit", aliases=("exit", "q")),
)
_BY_NAME = {name: c for c in COMMANDS for name in (c.name, *c.aliases)}
BANNER = "Ask a question, or a command: " + "  ".join(c.usage for c in COMMANDS) + "  (/help explains each)"


def help_text() -> str:
    width = max(len(c.usage) for c in COMMANDS)
    lines = ["Type a question in plain words, or one of these commands (the / is optional):"]
    for c in COMMANDS:
        alias = f" (also {', '.join('/' + a for a in c.aliases)})" if c.aliases else ""
        lines.append(f"  {c.usage:<{width}}  {c.does}{alias}. Example: {c.example}")
    lines.append("Anything else is sent to the model as a question.")
    return "\n".join(lines)


class Parsed(NamedTuple):
    """One input line: a ``question``, a known ``command`` (``name`` and ``arg``), an ``unknown``
    command (``name`` as typed) or ``empty``."""

    kind: Literal["question", "command", "unknown", "empty"]
    name: str = ""
    arg: str = ""
    text: str = ""


_WORD_ARG = re.compile(r"^[\w.-]*:?\d+$")  # what may follow a bare "page" / "tables": 60, DOC:60


def parse_line(line: str) -> Parsed:
    """Decide whether ``line`` is a command or a question.

    - starts with ``/``: always a command (unknown ones are reported, never asked);
    - exactly a command word (any case, e.g. ``clear``, ``Help``, ``quit``): a command;
    - a command word taking an argument followed by one page-like argument (``page 60``,
      ``tables 10K:4``): a command;
    - anything else: a question.
    """
    text = line.strip()
    if not text:
        return Parsed("empty")
    if text.startswith("/"):
        word, _, arg = text[1:].partition(" ")
        cmd = _BY_NAME.get(word.lower())
        if cmd is None:
            return Parsed("unknown", "/" + word, arg.strip(), text)
        return Parsed("command", cmd.name, arg.strip(), text)
    word, _, arg = text.partition(" ")
    cmd = _BY_NAME.get(word.lower().rstrip("?") if word != "?" else word)
    if cmd is not None:
        arg = arg.strip()
        if not arg:
            return Parsed("command", cmd.name, "", text)
        if cmd.needs_arg and _WORD_ARG.match(arg):
            return Parsed("command", cmd.name, arg, text)
    return Parsed("question", text=text)


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


def _clear_session(analyst: Analyst) -> str:
    s = analyst.session
    what = s.contents()
    s.clear()
    analyst.last = None
    return f"session cleared (forgot {what}); the next question starts cold"


def run_command(analyst: Analyst, parsed: Parsed, console: Console) -> bool:
    """Run one command; False when it is ``quit``."""
    name, arg = parsed.name, parsed.arg
    cmd = _BY_NAME[name]
    if cmd.needs_arg and not arg:
        console.print(f"usage: {cmd.usage}, e.g. {cmd.example}", highlight=False, markup=False)
        return True
    if name == "quit":
        return False
    if name == "help":
        console.print(help_text(), highlight=False, markup=False)
    elif name == "sources":
        print_sources(console, analyst.tree, analyst.last_answer())
    elif name == "trace":
        if analyst.last is not None:
            print_trace(console, analyst.last.result)
        elif analyst.session.turns:
            console.print(
                f"The last answer (question {analyst.session.turns[-1].index}) was given before this "
                "session was reopened; its steps are not saved with the session. Ask again to see them."
            )
        else:
            console.print("No answer yet.")
    elif name == "page":
        print_page(console, analyst.tree, arg)
    elif name == "tables":
        print_tables(console, analyst.tree, arg)
    elif name == "session":
        print_session(console, analyst.session)
    elif name == "history":
        if not analyst.session.turns:
            console.print("No questions yet.")
        for turn in analyst.session.turns:
            console.print(f"{turn.index:>3}. [{turn.status}] {turn.question}", highlight=False, markup=False)
    elif name == "clear":
        console.print(_clear_session(analyst), highlight=False, markup=False)
    return True


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
    console.print(BANNER, highlight=False, markup=False)
    try:
        while True:
            try:
                line = read(prompt)
            except EOFError:
                console.print()
                break
            except KeyboardInterrupt:
                console.print()
                continue
            parsed = parse_line(line)
            if parsed.kind == "empty":
                continue
            if parsed.kind == "unknown":
                console.print(
                    f"unknown command {parsed.name}; /help lists the commands (nothing was asked)",
                    highlight=False,
                    markup=False,
                )
                continue
            if parsed.kind == "command":
                if not run_command(analyst, parsed, console):
                    break
                continue
            turns_before = len(analyst.session.turns)
            progress = RichProgress(progress_console, analyst.tree)
            analyst.progress = progress
            answer = None
            try:
                with progress:
                    answer = asyncio.run(analyst.ask(parsed.text))
            except KeyboardInterrupt:
                # Ctrl-C just as the answer came back: the turn is recorded, so show it.
                last = analyst.last
                if last is not None and len(analyst.session.turns) > turns_before:
                    answer = last
                else:
                    console.print("[yellow]interrupted[/] (nothing recorded; ask again)")
                    continue
            asked += 1
            print_answer(console, analyst.tree, answer)
            save()
    finally:
        save_history()
        save()
    return asked
