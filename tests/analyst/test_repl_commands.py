"""What the interactive ``ask`` takes as a command and what as a question; /help; /clear; the
internal failure note kept out of what the user sees."""

from __future__ import annotations

import asyncio
import io

import pytest
from rich.console import Console

from pageindex.analyst.repl import COMMANDS, Parsed, help_text, parse_line, run_repl
from tests.analyst.policies import MISSING_Q
from tests.analyst.test_session_flow import make_analyst

NOTE = "Searches that already came back empty"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("/help", Parsed("command", "help", "", "/help")),
        ("help", Parsed("command", "help", "", "help")),
        ("  Clear  ", Parsed("command", "clear", "", "Clear")),
        ("quit", Parsed("command", "quit", "", "quit")),
        ("exit", Parsed("command", "quit", "", "exit")),
        ("/q", Parsed("command", "quit", "", "/q")),
        ("?", Parsed("command", "help", "", "?")),
        ("sources", Parsed("command", "sources", "", "sources")),
        ("/page 60", Parsed("command", "page", "60", "/page 60")),
        ("page 60", Parsed("command", "page", "60", "page 60")),
        ("tables 3M_2018_10K:60", Parsed("command", "tables", "3M_2018_10K:60", "tables 3M_2018_10K:60")),
        ("/page", Parsed("command", "page", "", "/page")),
        ("/nope 3", Parsed("unknown", "/nope", "3", "/nope 3")),
        ("/", Parsed("unknown", "/", "", "/")),
        ("", Parsed("empty")),
        ("   ", Parsed("empty")),
        # questions: words that only start like a command
        ("clear the capex figure for 2018", Parsed("question", text="clear the capex figure for 2018")),
        ("history of dividends?", Parsed("question", text="history of dividends?")),
        ("page count of the filing?", Parsed("question", text="page count of the filing?")),
        ("What was 3M's capex in 2018?", Parsed("question", text="What was 3M's capex in 2018?")),
    ],
)
def test_parse_line(line: str, expected: Parsed) -> None:
    assert parse_line(line) == expected


def test_help_explains_every_command_with_an_example() -> None:
    text = help_text()
    for c in COMMANDS:
        line = next(row for row in text.splitlines() if row.strip().startswith(c.usage + " "))
        assert c.does in line and f"Example: {c.example}" in line
    assert "Example: /page 60" in text and "Example: /tables 60" in text


class FakeAnalyst:
    """Records questions; commands must never reach ``ask``."""

    def __init__(self) -> None:
        from pageindex.analyst.session import AnalystSession

        self.asked: list[str] = []
        self.session = AnalystSession()
        self.last = None
        self.tree = None
        self.progress = None

    async def ask(self, question: str):  # pragma: no cover - reached only on a parsing bug
        self.asked.append(question)
        raise AssertionError(f"asked {question!r}")


def _drive(lines: list[str]) -> tuple[FakeAnalyst, str]:
    analyst = FakeAnalyst()
    feed = iter(lines)

    def read(_prompt: str) -> str:
        try:
            return next(feed)
        except StopIteration:
            raise EOFError from None

    out = io.StringIO()
    console = Console(file=out, width=200)
    asked = run_repl(analyst, console=console, progress_console=console, read=read)  # type: ignore[arg-type]
    assert asked == 0
    return analyst, out.getvalue()


def test_command_words_are_never_sent_as_questions() -> None:
    analyst, out = _drive(["clear", "help", "/history", "history", "/bogus", "page", "quit", "never read"])
    assert analyst.asked == []
    assert "session cleared (forgot 0 questions, 0 findings, 0 sections read)" in out
    assert out.count("Example: /page 60") == 1  # "help" printed the help once
    assert out.count("No questions yet.") == 2
    assert "unknown command /bogus; /help lists the commands (nothing was asked)" in out
    assert "usage: /page N, e.g. /page 60" in out
    # "quit" ended the loop: the line after it was never read
    assert "never read" not in out


def test_failure_note_is_not_shown_to_the_user(analyst_tree) -> None:
    tree = analyst_tree("3M_2018_10K")
    analyst, sm = make_analyst(tree)
    asyncio.run(analyst.ask(MISSING_Q))
    before = len(sm.requests)
    other = asyncio.run(analyst.ask("How many bitcoin did 3M hold at the end of 2017?"))
    # the retriever was told (the note reached the model) ...
    assert any(NOTE in m.content for r in sm.requests[before:] for m in r.messages if m.content)
    # ... but nothing the user sees carries it
    assert other.result.query == "How many bitcoin did 3M hold at the end of 2017?"
    assert NOTE not in other.result.model_dump_json()
    assert other.searched is not None
    assert all(NOTE not in item for item in other.searched.failed_searches)
    assert all(NOTE not in f.search.item for f in analyst.session.failures)
    out = io.StringIO()
    from pageindex.analyst.render import print_answer

    print_answer(Console(file=out, width=200), tree, other, show_trace=True)
    assert NOTE not in out.getvalue() and "Searched:" in out.getvalue()
