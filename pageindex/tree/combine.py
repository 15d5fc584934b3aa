"""Several filings as one tree, so any retriever can work across documents unchanged.

:func:`combine_trees` returns a :class:`CombinedTree` (a :class:`Tree`): one top-level node per
document (``node_id`` = the document's id, e.g. ``3M_2018_10K``) whose children are that
document's sections with every id prefixed by the document (``3M_2018_10K:item_8/note_3``).
Pages are laid end to end: page 1 of the second document is page ``1 + pages of the first``
of the combined tree, and its printed page labels move with it. :meth:`CombinedTree.locate`
maps a combined page back to ``(doc_id, page in that document)`` (the analyst uses it to make
citations name their document, ``Source.doc_id``).
"""

from __future__ import annotations

import hashlib

from pydantic import BaseModel

from pageindex.tree.model import Node, Tree

SEPARATOR = ":"


class DocumentPart(BaseModel):
    """Where one document sits inside the combined tree."""

    doc_id: str
    source: str
    sha256: str
    first_page: int  # combined page number of this document's page 1
    page_count: int

    @property
    def last_page(self) -> int:
        return self.first_page + self.page_count - 1


class CombinedTree(Tree):
    """A tree made of several documents (see the module docstring)."""

    parts: list[DocumentPart] = []

    def part_for_page(self, page: int) -> DocumentPart | None:
        return next((p for p in self.parts if p.first_page <= page <= p.last_page), None)

    def locate(self, page: int) -> tuple[str | None, int]:
        """Combined page -> (doc_id, page within that document); (None, page) outside all."""
        part = self.part_for_page(page)
        if part is None:
            return None, page
        return part.doc_id, page - part.first_page + 1

    def global_page(self, doc_id: str, page: int) -> int:
        """(doc_id, page within that document) -> combined page."""
        for part in self.parts:
            if part.doc_id == doc_id:
                if not 1 <= page <= part.page_count:
                    raise IndexError(f"page {page} is outside 1..{part.page_count} of {doc_id}")
                return part.first_page + page - 1
        raise KeyError(f"no document {doc_id!r} in this combined tree")

    @staticmethod
    def split_id(node_id: str) -> tuple[str | None, str]:
        """``"3M_2018_10K:item_7"`` -> ``("3M_2018_10K", "item_7")``."""
        doc, sep, rest = node_id.partition(SEPARATOR)
        return (doc, rest) if sep else (None, node_id)


def _shift(node: Node, doc_id: str, offset: int, level_shift: int) -> Node:
    return Node(
        node_id=f"{doc_id}{SEPARATOR}{node.node_id}",
        title=node.title,
        level=node.level + level_shift,
        kind=node.kind,
        start_page=node.start_page + offset,
        end_page=node.end_page + offset,
        children=[_shift(c, doc_id, offset, level_shift) for c in node.children],
        summary=node.summary,
    )


def combine_trees(trees: list[Tree]) -> CombinedTree:
    """One tree over ``trees`` in the given order; document ids must be distinct."""
    if not trees:
        raise ValueError("combine_trees needs at least one tree")
    ids = [t.doc_id for t in trees]
    if len(set(ids)) != len(ids):
        raise ValueError(f"documents must be distinct, got {ids}")
    nodes: list[Node] = []
    pages: list[str] = []
    labels: dict[str, str] = {}
    parts: list[DocumentPart] = []
    for tree in trees:
        offset = len(pages)
        count = tree.page_count
        doc_pages = list(tree.pages) + [""] * max(0, count - len(tree.pages))
        pages += doc_pages[:count]
        for key, label in tree.page_labels.items():
            labels[str(int(key) + offset)] = label
        parts.append(
            DocumentPart(
                doc_id=tree.doc_id,
                source=tree.source,
                sha256=tree.sha256,
                first_page=offset + 1,
                page_count=count,
            )
        )
        nodes.append(
            Node(
                node_id=tree.doc_id,
                title=f"Document {tree.doc_id}",
                level=0,
                kind="part",
                start_page=offset + 1,
                end_page=offset + max(count, 1),
                children=[_shift(n, tree.doc_id, offset, 1) for n in tree.nodes],
            )
        )
    digest = hashlib.sha256("+".join(t.sha256 for t in trees).encode()).hexdigest()
    return CombinedTree(
        doc_id="+".join(ids),
        source=" + ".join(t.source for t in trees),
        sha256=digest,
        page_count=len(pages),
        builder_version="+".join(dict.fromkeys(t.builder_version for t in trees)),
        page_labels=labels,
        nodes=nodes,
        pages=pages,
        strategy="combined",
        parts=parts,
    )
