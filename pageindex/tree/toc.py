"""A tree as an indented, human-readable table of contents with page spans."""

from __future__ import annotations

from pageindex.tree.model import Node, Tree
from pageindex.wording import counted


def _span(tree: Tree, node: Node) -> str:
    pages = (
        f"p. {node.start_page}"
        if node.start_page == node.end_page
        else f"pp. {node.start_page}-{node.end_page}"
    )
    first, last = tree.page_label(node.start_page), tree.page_label(node.end_page)
    if first and last:  # "printed 129-160", or nothing when either end prints no number
        printed = first if first == last else f"{first}-{last}"
        pages += f" (printed {printed})"
    return pages


def render_toc(tree: Tree, depth: int = 0) -> str:
    """One line per node: indentation by level, title, page span, node id."""
    pages = counted(tree.page_count, "page")
    lines = [f"{tree.doc_id}  ({pages}, strategy: {tree.strategy})"]
    for node in tree.walk():
        if depth and node.level > depth:
            continue
        indent = "  " * (node.level - 1)
        lines.append(f"{indent}{node.title}  [{_span(tree, node)}]  {node.node_id}")
    return "\n".join(lines)
