"""The section index a model reads to choose what to fetch: one line per node.

Sized to the model: with ``max_tokens``, the index never exceeds that many tokens (as ``count``
counts them). Shallower levels go in first: the deepest level that fits with summaries, else
without them, else as many top-level lines as fit; a shortened index ends with a note telling
the model that deeper sections exist and how to reach them (``fetch_section`` on a listed
section shows its sub-sections' ids).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from pageindex.tree.model import Node, Tree

SHORTENED_NOTE = (
    "(Index shortened to fit the model's context: only levels {levels} are listed. Deeper "
    "sections exist: fetch_section on a listed section shows the ids of its sub-sections, "
    "which you can fetch too.)"
)


def page_span(tree: Tree, start: int, end: int) -> str:
    """``"pages 45-47 (printed 43-45)"``; printed labels only when the filing prints them."""
    span = f"page {start}" if start == end else f"pages {start}-{end}"
    first, last = tree.page_label(start), tree.page_label(end)
    if first and last:
        span += f" (printed {first})" if start == end else f" (printed {first}-{last})"
    return span


def index_line(tree: Tree, node: Node, *, summaries: bool = True, max_summary_chars: int = 200) -> str:
    """``"  - item_7 | Item 7. MD&A | pages 20-45 (printed 18-43) | summary"``, indented by level."""
    parts = [
        node.node_id,
        node.title.strip() or "(untitled)",
        page_span(tree, node.start_page, node.end_page),
    ]
    if summaries and node.summary:
        summary = " ".join(node.summary.split())
        if len(summary) > max_summary_chars:
            summary = summary[: max_summary_chars - 1].rstrip() + "…"
        parts.append(summary)
    return "  " * node.level + "- " + " | ".join(parts)


def render_index(
    tree: Tree,
    *,
    max_depth: int | None = None,
    summaries: bool = True,
    max_summary_chars: int = 200,
    max_tokens: int | None = None,
    count: Callable[[str], int] | None = None,
) -> str:
    """The tree as an indented list, ids first (what ``fetch_section`` takes).

    ``max_depth`` keeps nodes with ``level <= max_depth`` (None = all); ``summaries``
    adds each node's summary when the tree has one; ``max_tokens`` caps the size (see the
    module docstring), counted by ``count`` (default: characters / 4).
    """
    count = count or (lambda text: math.ceil(len(text) / 4))
    header = f"Document {tree.doc_id}: {tree.page_count} pages. Sections (id | title | pages | summary):"
    nodes = [n for n in tree.walk() if max_depth is None or n.level <= max_depth]

    def render(depth: int | None, with_summaries: bool, note: str | None) -> str:
        lines = [header] + [
            index_line(tree, n, summaries=with_summaries, max_summary_chars=max_summary_chars)
            for n in nodes
            if depth is None or n.level <= depth
        ]
        return "\n".join(lines + ([note] if note else []))

    full = render(None, summaries, None)
    if max_tokens is None or count(full) <= max_tokens:
        return full
    levels = sorted({n.level for n in nodes})
    deepest = levels[-1] if levels else 0
    if summaries:
        text = render(None, False, None)
        if count(text) <= max_tokens:
            return text
    for depth in reversed(levels[:-1]):
        note = SHORTENED_NOTE.format(levels=f"{levels[0]}-{depth}" if depth > levels[0] else str(depth))
        for with_summaries in ([True, False] if summaries else [False]):
            text = render(depth, with_summaries, note)
            if count(text) <= max_tokens:
                return text
    # Not even the top level fits: as many of its lines as do.
    top = levels[0] if levels else 0
    note = SHORTENED_NOTE.format(levels=str(top)) + (
        " Some top-level sections are left out too."
        if deepest >= top
        else ""
    )
    lines = [header]
    for n in nodes:
        if n.level != top:
            continue
        candidate = "\n".join(lines + [index_line(tree, n, summaries=False), note])
        if count(candidate) > max_tokens:
            break
        lines.append(index_line(tree, n, summaries=False))
    return "\n".join(lines + [note])
