"""A digest of Python source that changes when the code does, not when its comments or docstrings do.

The tree builder's version (``pageindex.tree.build.CODE_VERSION``) and the rules judge's
(``bench.judges.rules.rules_source_hash``) carry one: trees are cached under it, and runs whose trees or
verdicts came from different code are not compared. Hashing the bytes made a comment or a reworded
docstring a "different builder", so a CI gate refused to compare a pull request that only touched one.
What is hashed is each file's name and its source with comments, docstrings, blank lines and trailing
spaces taken out: positions found with ``tokenize`` (comments) and ``ast`` (docstrings), which read the
same on every supported Python, unlike ``ast.dump``, whose output changes between Python versions.
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


def code_text(source: str) -> str:
    """``source`` without comments, docstrings, blank lines and trailing spaces (what the digest hashes)."""
    spans: list[_Span] = [
        (tok.start[0], tok.start[1], tok.end[0], tok.end[1])
        for tok in tokenize.generate_tokens(io.StringIO(source).readline)
        if tok.type == tokenize.COMMENT
    ]
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        if not isinstance(node, _WITH_DOCSTRING) or not body:
            continue
        first = body[0]
        value = first.value if isinstance(first, ast.Expr) else None
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            assert first.end_lineno is not None and first.end_col_offset is not None
            spans.append((first.lineno, first.col_offset, first.end_lineno, first.end_col_offset))
    lines = source.splitlines()
    for start_line, start_col, end_line, end_col in sorted(spans, reverse=True):  # from the end: offsets hold
        head, tail = lines[start_line - 1][:start_col], lines[end_line - 1][end_col:]
        lines[start_line - 1 : end_line] = [head + tail]
    return "\n".join(line.rstrip() for line in lines if line.strip())


def code_digest(files: Iterable[str | Path], length: int = 10) -> str:
    """The first ``length`` hex digits of sha256 over each file's name and :func:`code_text`."""
    digest = hashlib.sha256()
    for path in files:
        path = Path(path)
        digest.update(path.name.encode())
        digest.update(code_text(path.read_text(encoding="utf-8")).encode())
    return digest.hexdigest()[:length]
