"""Draft sections: headings turned into nested page spans before ids are assigned."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class Draft:
    kind: str
    key: str
    title: str
    start_page: int
    y: float
    at_top: bool
    rank: int  # nesting rank: smaller ranks contain larger ones
    end_page: int = 0
    end_y: float = float("inf")  # on a shared end page, where the next section's heading sits
    children: list[Draft] = field(default_factory=list)

    @property
    def page_count(self) -> int:
        return self.end_page - self.start_page + 1

    def walk(self):
        yield self
        for child in self.children:
            yield from child.walk()


def nest(flat: list[Draft], first_page: int, last_page: int) -> list[Draft]:
    """Nest ``flat`` (reading order) by rank, set end pages, and fill uncovered pages.

    A section ends on the page where the next section of the same or a smaller rank starts,
    or on the page before when that section starts at the top of its page.
    """
    flat = sorted(flat, key=lambda d: (d.start_page, d.y, d.rank))
    for i, d in enumerate(flat):
        end = last_page
        for nxt in flat[i + 1 :]:
            if nxt.rank <= d.rank:
                end = nxt.start_page - 1 if nxt.at_top else nxt.start_page
                if not nxt.at_top:
                    d.end_y = nxt.y
                break
        d.end_page = max(d.start_page, min(end, last_page))
    roots: list[Draft] = []
    stack: list[Draft] = []
    for d in flat:
        while stack and stack[-1].rank >= d.rank:
            stack.pop()
        if stack:
            parent = stack[-1]
            if d.end_page >= parent.end_page:
                d.end_page, d.end_y = parent.end_page, min(d.end_y, parent.end_y)
            parent.children.append(d)
        else:
            roots.append(d)
        stack.append(d)
    for root in roots:
        fill_intros(root)
    return roots


def intro_for(node: Draft, first: Draft) -> Draft | None:
    """The opening child of ``node`` when its first child ``first`` starts on a later page: it runs
    from the node's start to the page before ``first`` (or into ``first``'s page when ``first`` does
    not start at the top of it)."""
    if first.start_page <= node.start_page:
        return None
    shared = not first.at_top
    end = first.start_page if shared else first.start_page - 1
    return Draft(
        "heading",
        "intro",
        node.title,
        node.start_page,
        node.y,
        node.at_top,
        node.rank + 1,
        end_page=max(node.start_page, end),
        end_y=first.y if shared else float("inf"),
    )


def fill_intros(node: Draft) -> None:
    """Give ``node`` an opening child when its first child starts on a later page."""
    for child in node.children:
        fill_intros(child)
    if not node.children:
        return
    intro = intro_for(node, node.children[0])
    if intro is not None:
        node.children.insert(0, intro)
    last = node.children[-1]
    if last.end_page < node.end_page:  # cannot happen with nest(); kept for split results
        last.end_page = node.end_page
