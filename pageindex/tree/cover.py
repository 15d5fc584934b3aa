"""Structure inside a filing's cover: the blocks every 10-K, 10-Q and 8-K cover prints.

Before the table of contents and the first Part or Item, SEC covers print the same blocks in
the same words: the securities registered under Section 12(b) and 12(g) of the Exchange Act,
the check-mark questions on filer status, the market value held by non-affiliates and the
shares outstanding, and the documents incorporated by reference. They are found by those
phrases at the start of a line, on text with the whitespace removed (renderers split words),
not by emphasis: many covers print them in body type. A table of contents inside the cover
span, and front matter after it (forward-looking statements, defined terms), become children
too, the latter split by its emphasised lines. The title page part stays a ``cover`` leaf.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pageindex.tree.draft import Draft
from pageindex.tree.headings import at_top, is_toc_page
from pageindex.tree.pdf import Page
from pageindex.tree.split import SubheadingRules, attach, subheading_drafts


@dataclass(frozen=True, slots=True)
class CoverBlock:
    """A block every cover prints: ``pattern`` matches the compact text its first line starts with."""

    key: str
    pattern: re.Pattern[str]
    title: str  # display title (printed lines may have split words or run on into the text)


COVER_BLOCKS: tuple[CoverBlock, ...] = (
    CoverBlock(
        "securities_12b",
        re.compile(r"^securitiesregisteredpursuanttosection12\(b\)"),
        "Securities registered pursuant to Section 12(b) of the Act",
    ),
    CoverBlock(
        "securities_12g",
        re.compile(r"^securitiesregisteredpursuanttosection12\(g\)"),
        "Securities registered pursuant to Section 12(g) of the Act",
    ),
    CoverBlock("filer_status", re.compile(r"^indicatebycheckmark"), "Filer status (check marks)"),
    CoverBlock(
        "shares_outstanding",
        re.compile(
            r"^.{0,45}?(?:aggregatemarketvalue|numberofshares|sharesof(?:the)?(?:registrant|common)"
            r"|(?:therewere|registranthad)[\d,.]+(?:million)?(?:ordinary|common)?shares)"
        ),
        "Market value and shares outstanding",
    ),
    CoverBlock(
        "documents_incorporated_by_reference",
        re.compile(r"^documentsincorporatedbyreference"),
        "Documents incorporated by reference",
    ),
)
_CONTENTS_TITLE = re.compile(r"^(?:tableofcontents|contents|index)$")
_NONE = re.compile(r"(?:act|1934):?none\.?$")  # "... 12(g) of the Act: None"
_MAX_LINE = 300  # a block's first line (cover sentences run long); longer lines are merged table text


def add_cover_structure(cover: Draft, pages: list[Page], rules: SubheadingRules) -> None:
    """Give ``cover`` (no children yet) children for its blocks, its contents pages and the
    front matter after them; leave it a single leaf when it prints none of them."""
    subs = cover_children(cover, pages, rules)
    if subs:
        attach(cover, subs)


def cover_children(cover: Draft, pages: list[Page], rules: SubheadingRules) -> list[Draft]:
    """The children of ``cover`` in reading order (end pages not set yet), or ``[]``."""
    first, last = cover.start_page, cover.end_page
    rank = cover.rank + 1
    contents = _contents_start(pages, first, last, rules)
    stop = (contents.start_page, contents.y) if contents else (last, cover.end_y)
    subs = _blocks(pages, first, stop, rank)
    if contents is not None:
        contents.rank = rank
        subs.append(contents)
        subs += _front_matter(pages, contents.start_page, last, cover.end_y, rank, rules)
    if not subs:
        return []
    lead = subs[0]
    if lead.start_page > first or lead.y > 0:
        subs.insert(0, Draft("cover", "title_page", cover.title, first, 0.0, True, rank))
    return subs


def _blocks(pages: list[Page], first: int, stop: tuple[int, float], rank: int) -> list[Draft]:
    """The first line of each known block on pages ``first..`` up to ``stop`` (page, y)."""
    found: list[Draft] = []
    seen: set[str] = set()
    for page in pages[first - 1 : stop[0]]:
        for line in page.lines:
            if (page.number, line.ry) >= stop:
                break
            if len(line.text) > _MAX_LINE:
                continue
            c = line.compact
            for block in COVER_BLOCKS:
                if block.key in seen or not block.pattern.match(c):
                    continue
                seen.add(block.key)
                title = block.title + (": None" if _NONE.search(c) else "")
                found.append(
                    Draft("heading", block.key, title, page.number, line.ry, at_top(page, line), rank)
                )
                break
    return found


def _contents_start(pages: list[Page], first: int, last: int, rules: SubheadingRules) -> Draft | None:
    """The table of contents inside the cover span: a contents page, or a "Table of Contents"
    title that is not a running header. Starts at that title when the page prints one."""
    for page in pages[first - 1 : last]:
        title = next(
            (line for line in page.lines[:6] if _CONTENTS_TITLE.match(line.compact)),
            None,
        )
        standalone = (
            title is not None and title.header_key not in rules.headers and (title.bold or title.caps)
        )
        if not (is_toc_page(page) or standalone):
            continue
        if title is None:
            return Draft("heading", "table_of_contents", "Table of contents", page.number, 0.0, True, 0)
        return Draft(
            "heading",
            "table_of_contents",
            "Table of contents",
            page.number,
            title.ry,
            at_top(page, title),
            0,
        )
    return None


def _front_matter(
    pages: list[Page], contents_page: int, last: int, end_y: float, rank: int, rules: SubheadingRules
) -> list[Draft]:
    """Sections after the contents pages and before the first Part or Item: emphasised
    headings, behind a ``front_matter`` cover leaf when the first page opens without one."""
    end = contents_page
    while end < last and is_toc_page(pages[end]):  # pages[end] is page end + 1
        end += 1
    if end >= last:
        return []
    heads = subheading_drafts(pages, end + 1, last, -1.0, rank, rules, end_y)
    if not heads or heads[0].start_page > end + 1 or not heads[0].at_top:
        heads.insert(0, Draft("cover", "front_matter", "Front matter", end + 1, 0.0, True, rank))
    return heads
