"""A digest of Python source that changes when the code does, not when its comments or docstrings do.

The tree builder's version (``pageindex.tree.build.code_version``) and the rules judge's
(``bench.judges.rules.rules_source_hash``) carry one: trees are cached under it, and runs whose trees or
verdicts came from different code are not compared. Hashing the bytes made a comment or a reworded
docstring a "different builder", so a CI gate refused to compare a pull request that only touched one.
What is hashed is each file's name and its source text with comments, docstrings, blank lines and
trailing spaces taken out, found by their positions (``tokenize`` for comments and literals, ``ast`` for
docstrings), not ``ast.dump``, whose output changes between Python versions. The positions are the same
on Python 3.12's tokenizer, which reads f-strings in pieces (handled), by the language's definition;
only 3.11 is installed here, so that is not measured.
"""

from __future__ import annotations

import ast
import hashlib
import io
import tokenize
from collections.abc import Iterable
from pathlib import Path

_WITH_DOCSTRING = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
_Span = tuple[int, int, int, int]  # first line, first column, last line, end column (lines 1-based)
_FSTRING_START = getattr(tokenize, "FSTRING_START", None)  # Python 3.12+: f-strings come in pieces
_FSTRING_END = getattr(tokenize, "FSTRING_END", None)


def _char_column(line: str, byte_column: int) -> int:
    """``ast`` counts columns in UTF-8 bytes; a ``str`` is sliced in characters."""
    return len(line.encode("utf-8")[:byte_column].decode("utf-8", "ignore"))


def code_text(source: str) -> str:
    """``source`` without comments, docstrings, blank lines and trailing spaces (what the digest hashes).

    Lines are what Python counts as lines (``\\n``, ``\\r\\n``, ``\\r``; a form feed or a line separator
    inside a line stays in it). The text of a string literal is kept exactly, its blank lines and
    trailing spaces included: only code around it is tidied."""
    source = source.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    lines = source.split("\n")
    spans: list[_Span] = []
    # lines a multi-line string literal runs on from (all but its last, where code may follow its quotes):
    # kept as they are
    literal_lines: set[int] = set()
    open_fstrings: list[int] = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            spans.append((tok.start[0], tok.start[1], tok.end[0], tok.end[1]))
        elif tok.type == tokenize.STRING:
            literal_lines.update(range(tok.start[0], tok.end[0]))
        elif tok.type == _FSTRING_START:
            open_fstrings.append(tok.start[0])
        elif tok.type == _FSTRING_END and open_fstrings:
            first = open_fstrings.pop()
            literal_lines.update(range(first, tok.end[0]))
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        if not isinstance(node, _WITH_DOCSTRING) or not body:
            continue
        first = body[0]
        value = first.value if isinstance(first, ast.Expr) else None
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            assert first.end_lineno is not None and first.end_col_offset is not None
            start = _char_column(lines[first.lineno - 1], first.col_offset)
            end = _char_column(lines[first.end_lineno - 1], first.end_col_offset)
            spans.append((first.lineno, start, first.end_lineno, end))
            literal_lines.difference_update(range(first.lineno, first.end_lineno + 1))
    for first, start, last, end in sorted(spans, reverse=True):  # from the end: earlier columns hold
        if first == last:
            lines[first - 1] = lines[first - 1][:start] + lines[first - 1][end:]
        else:  # the line count stays, so the literal lines keep their numbers
            inside = [""] * (last - first - 1)
            lines[first - 1 : last] = [lines[first - 1][:start], *inside, lines[last - 1][end:]]
    kept = [line if number in literal_lines else line.rstrip() for number, line in enumerate(lines, 1)]
    return "\n".join(line for number, line in enumerate(kept, 1) if number in literal_lines or line.strip())


def code_digest(files: Iterable[str | Path], length: int = 10) -> str:
    """The first ``length`` hex digits of sha256 over each file's name and :func:`code_text` (read as
    Python reads a source file: UTF-8, a byte-order mark allowed)."""
    digest = hashlib.sha256()
    for path in files:
        path = Path(path)
        digest.update(path.name.encode())
        digest.update(code_text(path.read_text(encoding="utf-8-sig")).encode())
    return digest.hexdigest()[:length]
