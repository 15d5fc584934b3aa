"""Validation messages in the words of what is allowed.

pydantic (behind typer's option parsing, the run settings and retriever options) says what it
expected in its own phrasing: "Input should be greater than or equal to 1", "Input should be a valid
integer, unable to parse string as an integer". Every user-facing error names the input and what is
allowed, so those phrases are said once here, plainly: "must be at least 1", "must be a whole number".
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

_PHRASES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"^Value error, "), ""),
    (re.compile(r"Input should be a valid integer(?:, [^;]*)?"), "must be a whole number"),
    (re.compile(r"Input should be a finite number"), "must be a finite number"),
    (re.compile(r"Input should be a valid number(?:, [^;]*)?"), "must be a number"),
    (re.compile(r"Input should be a valid boolean(?:, [^;]*)?"), "must be true or false"),
    (re.compile(r"Input should be greater than or equal to "), "must be at least "),
    (re.compile(r"Input should be greater than "), "must be more than "),
    (re.compile(r"Input should be less than or equal to "), "must be at most "),
    (re.compile(r"Input should be less than "), "must be less than "),
    (re.compile(r"Input should be "), "must be "),
    (re.compile(r"^Extra inputs are not permitted$"), "is not a known key"),
]


def plainly(message: str) -> str:
    """``message`` with pydantic's phrases said as what is allowed; other text unchanged."""
    for pattern, plain in _PHRASES:
        message = pattern.sub(plain, message)
    return message


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun``, in the plural unless ``n`` is 1: "1 sample", "3 samples", "1,392 samples"."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def shortened(items: Iterable[str], most: int) -> str:
    """``items`` joined by commas, the first ``most`` of them and how many more: "a, b and 3 more";
    "" for none. One way to shorten a list in a message, whatever lists it."""
    items = list(items)
    shown = ", ".join(items[:most])
    return f"{shown} and {len(items) - most:,} more" if len(items) > most else shown


def error_text(exc: BaseException, kind: str | None = None) -> str:
    """One line for a failure a message or a record states: its ``kind`` (else its class name) and
    its message, folded onto one line. A pydantic ``ValidationError`` says its model and first problem
    (``ValidationError: JudgeVerdict judge: Field required``), not its multi-line dump with a link."""
    from pydantic import ValidationError

    message = str(exc)
    if isinstance(exc, ValidationError):
        message = f"{exc.title} {first_error(exc)}"
        if (more := exc.error_count() - 1) > 0:
            message += f" (and {counted(more, 'more problem')})"
    return f"{kind or type(exc).__name__}: {' '.join(message.split())}"


def first_error(exc: Any) -> str:
    """A pydantic ``ValidationError``'s first problem, named by its field ("run_id: Field required")
    and said plainly; a text that is no JSON at all says so ("not JSON: EOF while parsing an object
    at line 2 column 0")."""
    err = exc.errors()[0]
    message = plainly(str(err.get("msg", "invalid")))
    if err.get("type") == "json_invalid":
        return f"not JSON: {message.removeprefix('Invalid JSON: ')}"
    where = ".".join(str(p) for p in err.get("loc", ()))
    return f"{where}: {message}" if where else message
