"""The section index a model reads to choose what to fetch: one line per node."""

from __future__ import annotations

from pageindex.tree.model import Node, Tree


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
) -> str:
    """The whole tree as an indented list, ids first (what ``fetch_section`` takes).

    ``max_depth`` keeps nodes with ``level <= max_depth`` (None = all); ``summaries``
    adds each node's summary when the tree has one.
    """
    lines = [f"Document {tree.doc_id}: {tree.page_count} pages. Sections (id | title | pages | summary):"]
    for node in tree.walk():
        if max_depth is not None and node.level > max_depth:
            continue
        lines.append(index_line(tree, node, summaries=summaries, max_summary_chars=max_summary_chars))
    return "\n".join(lines)
