"""The section tree: the data shape every retriever reads.

Pages are always 1-based physical PDF pages, inclusive. Printed page numbers (what the
filing itself prints) live in ``Tree.page_labels`` and are called *page labels*.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Literal

from pydantic import BaseModel, Field

NodeKind = Literal["part", "item", "statement", "note", "heading", "outline", "cover", "window"]


class Node(BaseModel):
    """One section of a document. ``children`` are sub-sections in reading order."""

    node_id: str
    title: str
    level: int = Field(ge=0)
    kind: NodeKind
    start_page: int = Field(ge=1)
    end_page: int = Field(ge=1)
    children: list[Node] = Field(default_factory=list)
    summary: str | None = None

    @property
    def is_leaf(self) -> bool:
        return not self.children

    @property
    def page_count(self) -> int:
        return self.end_page - self.start_page + 1

    def pages(self) -> range:
        return range(self.start_page, self.end_page + 1)

    def walk(self) -> Iterator[Node]:
        """This node, then its descendants, depth first in reading order."""
        yield self
        for child in self.children:
            yield from child.walk()


class Tree(BaseModel):
    """A document turned into a section tree plus the text of every page."""

    doc_id: str
    source: str
    sha256: str
    page_count: int = Field(ge=0)
    builder_version: str
    page_labels: dict[str, str] = Field(default_factory=dict)
    nodes: list[Node] = Field(default_factory=list)
    pages: list[str] = Field(default_factory=list, description="text of PDF page n at index n-1")
    strategy: str = ""
    # what the builder could not read, said to the user (``build``, ``tree`` and ``ask`` print them):
    # a damaged file the reader repaired, pages without a text layer
    warnings: list[str] = Field(default_factory=list)

    # -- lookup -----------------------------------------------------------------
    def walk(self) -> Iterator[Node]:
        for node in self.nodes:
            yield from node.walk()

    def leaves(self) -> list[Node]:
        return [n for n in self.walk() if n.is_leaf]

    def get(self, node_id: str) -> Node:
        """The node with this id; ``KeyError`` if there is none."""
        index = self.__dict__.get("_index")
        if index is None:
            index = {n.node_id: n for n in self.walk()}
            object.__setattr__(self, "_index", index)
        return index[node_id]

    def __contains__(self, node_id: object) -> bool:
        try:
            self.get(str(node_id))
        except KeyError:
            return False
        return True

    def parent_of(self, node_id: str) -> Node | None:
        for node in self.walk():
            if any(c.node_id == node_id for c in node.children):
                return node
        return None

    def leaf_for_page(self, page: int, quote: str | Sequence[str] | None = None) -> Node | None:
        """The first leaf whose span contains ``page``; with a ``quote`` found on that page (or the
        first of several quotes that is found there), the leaf it sits under: of the leaves on the
        page, the one whose title is printed last before the quote, or where it begins (the one carried
        over from an earlier page when no title on the page precedes it).
        Sections share pages, so the first leaf of a page is often not where a line of it belongs
        (trial 11: 3M's capex figure under "Free Cash Flow" was cited as "Cash Flows from Financing
        Activities", the first leaf on that page)."""
        covering = [leaf for leaf in self.leaves() if leaf.start_page <= page <= leaf.end_page]
        if not covering:
            return None
        if quote and 1 <= page <= self.page_count:
            text = _squeeze(self.page_text(page))
            quotes = [quote] if isinstance(quote, str) else quote
            at = next((i for i in (text.find(_squeeze(q)) for q in quotes if q.strip()) if i >= 0), -1)
            if at >= 0:
                under = [leaf for leaf in covering if leaf.start_page < page]
                best = (under[-1] if under else None, -1)
                for leaf in covering:
                    title = _squeeze(leaf.title)
                    # printed before the quote, or where the quote begins (a quote of the title's line)
                    where = text.rfind(title, 0, at + len(title)) if leaf.start_page == page and title else -1
                    if where > best[1]:
                        best = (leaf, where)
                if best[0] is not None:
                    return best[0]
        return covering[0]

    def section_for_page(self, page: int, node_id: str = "", quote: str | None = None) -> Node | None:
        """The section to cite for ``page``: ``node_id``'s when it holds the page, else the leaf that
        does (:meth:`leaf_for_page`, by the quote); None for a page outside the document."""
        if not 1 <= page <= self.page_count:
            return None
        if node_id in self:
            node = self.get(node_id)
            if node.start_page <= page <= node.end_page:
                return node
        return self.leaf_for_page(page, quote)

    # -- text -------------------------------------------------------------------
    def page_text(self, page: int) -> str:
        """Text of 1-based PDF page ``page``."""
        if not 1 <= page <= self.page_count:
            raise IndexError(f"page {page} is outside 1..{self.page_count} of {self.doc_id}")
        return self.pages[page - 1] if page - 1 < len(self.pages) else ""

    def page_label(self, page: int) -> str | None:
        """The page number printed on PDF page ``page``, when the filing prints one; None otherwise,
        a page outside the document included (:meth:`page_text` raises for that page)."""
        return self.page_labels.get(str(page))

    def node_text(self, node_id: str) -> str:
        node = self.get(node_id)
        return "\n".join(self.page_text(p) for p in node.pages())


def _squeeze(text: str) -> str:
    """Lower case, one space between words: how a title and a quote are found in a page's text."""
    return " ".join(text.split()).lower()
