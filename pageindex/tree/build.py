"""Build a section tree from a PDF: choose a strategy, nest sections, split long leaves, name nodes.

Strategies, in order: the SEC structure (Parts, Items, statements, notes) when the filing
has it, merged with a real embedded outline where that adds sections; a real outline
alone; emphasised lines (earnings releases); fixed page windows as the last resort.
Pages before the first section form the ``cover``, which gets children for the blocks SEC
covers print (Section 12(b)/12(g) securities, filer status, shares outstanding, documents
incorporated by reference), its contents pages and front matter (:mod:`pageindex.tree.cover`).
"""

from __future__ import annotations

import logging
import re
from functools import cache
from importlib import metadata
from pathlib import Path

from pageindex.digest import code_digest
from pageindex.tree.cache import TreeCache
from pageindex.tree.cover import add_cover_structure
from pageindex.tree.draft import Draft, nest
from pageindex.tree.errors import PDFUnreadableError
from pageindex.tree.headings import _ITEM, STATEMENT_TITLES, Heading, detect_sec, slug
from pageindex.tree.labels import page_numbers
from pageindex.tree.layout import absorb_row_labels, layout_drafts, with_statements
from pageindex.tree.model import Node, Tree
from pageindex.tree.outline import outline_drafts, real_outline, without_body_sentences
from pageindex.tree.pdf import Page, PdfDocument, UnderlineReader, pdf_sha256, read_pdf
from pageindex.tree.split import SubheadingRules, split_long, subheading_drafts, window_drafts
from pageindex.tree.titles import repair_title, word_counts

log = logging.getLogger(__name__)
BUILDER_VERSION = "2.0"
_READS = 3  # times a PDF that changes while it is read is read again


@cache
def code_version() -> str:
    """``BUILDER_VERSION`` plus a digest of this package's code and the pymupdf release that reads the
    PDFs: any code change invalidates caches (a comment or a docstring does not:
    :func:`pageindex.digest.code_digest`), and so does another pymupdf, whose text and span output
    differ between releases (a tree cached under one was served after an upgrade, and runs on two
    machines were compared as made by the same builder). Taken on first use, not at import: reading
    the code takes about 0.3 s, which a command that only loads a tree JSON never needs."""
    code = code_digest(sorted(Path(__file__).parent.glob("*.py")))
    return f"{BUILDER_VERSION}+{code}-pymupdf{_pymupdf_version()}"


def _pymupdf_version() -> str:
    """The installed pymupdf release (from its package metadata: importing pymupdf costs more)."""
    try:
        return metadata.version("pymupdf")
    except metadata.PackageNotFoundError:  # an unpackaged pymupdf: the version it reports
        import pymupdf

        return str(pymupdf.VersionBind)


def __getattr__(name: str) -> str:
    """``CODE_VERSION`` (:func:`code_version`), computed when first read."""
    if name == "CODE_VERSION":
        return code_version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

_RANK = {
    "part": 1,
    "item": 2,
    "exhibit": 2,
    "financials": 2,
    "back": 2,
    "statement": 3,
    "notes": 3,
    "note": 3,
}


def build_tree(
    path: str | Path,
    *,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    max_leaf_pages: int = 5,
    use_outline: bool = True,
) -> Tree:
    """Turn the PDF at ``path`` into a :class:`Tree` (no LLM calls).

    ``use_outline=False`` ignores the PDF's embedded outline (bookmarks), so the layout
    rules alone build the tree (``pageindex build --no-outline``; how
    ``bench/perf/outline_recovery.py`` measures them against the outline).
    Cached on disk by the PDF's sha256 and the builder version; raises a
    :class:`~pageindex.tree.errors.PDFError` subclass for unusable input.
    """
    p = Path(path)
    sha = pdf_sha256(p)
    cache = TreeCache(cache_dir) if use_cache else None
    version = _version(max_leaf_pages, use_outline)
    if cache is not None:
        cached = cache.get(sha, version)
        if cached is not None:
            return cached.model_copy(update={"doc_id": p.stem, "source": str(p)})
    for _attempt in range(_READS):
        doc = read_pdf(p)
        # hashed again once read: a writer that replaced the file in between had its version cached
        # under the first one's sha256 (any later copy of the first was served the other's pages)
        read = pdf_sha256(p)
        if read == sha:
            break
        sha = read
    else:
        raise PDFUnreadableError(p, f"it changed all {_READS} times it was read (still being written?)")
    if not use_outline:
        doc.toc = []
    tree = tree_from_document(doc, sha256=sha, max_leaf_pages=max_leaf_pages)
    tree.builder_version = version
    if cache is not None:
        try:
            cache.put(tree)
        except OSError as exc:  # the cache only saves time: the tree just built is never lost to it
            log.warning(
                "tree cache %s cannot be written (%s): %s not cached", cache.directory, exc.strerror or exc, p
            )
    return tree


def _version(max_leaf_pages: int, use_outline: bool = True) -> str:
    code = code_version()
    version = code if max_leaf_pages == 5 else f"{code}-leaf{max_leaf_pages}"
    return version if use_outline else f"{version}-nooutline"


def load_tree(json_path: str | Path) -> Tree:
    """Read a tree written by ``pageindex build -o``.

    A missing or unreadable file raises the ``OSError`` Python gives (``FileNotFoundError``,
    ``IsADirectoryError``), not a PDF error: a tree file is no PDF. A file that is not a tree raises
    pydantic's ``ValidationError`` (a ``ValueError``)."""
    return Tree.model_validate_json(Path(json_path).read_text(encoding="utf-8"))


def is_tree_file(path: str | Path) -> bool:
    """Whether ``path`` holds a tree JSON (what ``pageindex build -o`` may replace)."""
    try:
        load_tree(path)
    except (OSError, ValueError):
        return False
    return True


def tree_from_document(doc: PdfDocument, *, sha256: str = "", max_leaf_pages: int = 5) -> Tree:
    pages = doc.pages
    n = len(pages)
    numbers = page_numbers(pages)  # read once: the labels, and the running lines no heading is
    rules = SubheadingRules.for_pages(pages, numbers)
    drafts, strategy, outline = _structure(doc, rules)
    roots = nest(drafts, 1, n) if drafts else []
    if roots:
        first = roots[0]
        if first.start_page > 1 or not first.at_top:
            cover_end = first.start_page - 1 if first.at_top else first.start_page
            cover = Draft(
                "cover", "cover", _cover_title(pages[0]), 1, 0.0, True, 1, end_page=max(1, cover_end)
            )
            if strategy == "layout" and pages[0].lines:
                # no SEC cover here: the lead is the document's headline (the first of the largest
                # worded lines at the top of page 1, not a document code or a year) and opening text
                top = [line for line in pages[0].lines[:12] if sum(ch.isalpha() for ch in line.text) >= 2]
                lead = max(top, key=lambda line: round(line.size, 1)) if top else pages[0].lines[0]
                headline = lead.text[:120]
                cover = Draft("heading", "opening", headline, 1, 0.0, True, 1, end_page=cover.end_page)
            if not first.at_top:
                cover.end_y = first.y  # the cover ends where the first section starts on that page
            roots.insert(0, cover)
        for root in roots:
            if root.kind == "cover" and not root.children and strategy != "layout":
                add_cover_structure(root, pages, rules)
    else:
        roots = window_drafts(1, n, max_leaf_pages, 1)

    underline = UnderlineReader(pages)
    for root in roots:
        split_long(
            root,
            pages,
            max_leaf_pages,
            rules,
            outline,
            use_subheadings=strategy != "windows",
            underline=underline,
        )
    absorb_row_labels(roots, pages, max_leaf_pages)
    texts = [page.text for page in pages]
    _repair_titles(roots, texts)
    nodes = _to_nodes(roots)
    return Tree(
        doc_id=doc.path.stem,
        source=str(doc.path),
        sha256=sha256,
        page_count=n,
        builder_version=BUILDER_VERSION,
        page_labels=numbers.labels,
        nodes=nodes,
        pages=texts,
        strategy=strategy,
        warnings=_warnings(doc, texts),
    )


def _warnings(doc: PdfDocument, texts: list[str]) -> list[str]:
    """What the tree lacks because the PDF could not be read whole: a file the reader had to repair
    (cut short, or a broken cross-reference table), and pages without a text layer when they are at
    least two and a fifth of the document (a scan; a blank page or two is normal)."""
    out = []
    if doc.repaired:
        out.append("the PDF is damaged (the reader rebuilt its cross-reference table): pages may lack text")
    # a page image under a scanner's stamp or a page number has no text layer either
    pages = zip(doc.pages, texts, strict=True)
    empty = [page.number for page, text in pages if page.scanned or not text.strip()]
    if len(empty) >= 2 and len(empty) >= 0.2 * len(texts):
        why = (
            "lost with the damaged part of the file (OCR cannot bring it back; get the file again)"
            if doc.repaired
            else "scanned images? Their content is not in the tree; OCR the PDF first"
        )
        out.append(f"{len(empty)} of {len(texts)} pages have no text layer ({_page_list(empty)}): {why}")
    return out


def _page_list(pages: list[int]) -> str:
    """"pages 2-15, 18" from [2, 3, ..., 15, 18]."""
    runs: list[list[int]] = []
    for p in pages:
        if runs and p == runs[-1][-1] + 1:
            runs[-1].append(p)
        else:
            runs.append([p])
    parts = [f"{r[0]}-{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs]
    return ("pages " if len(pages) > 1 else "page ") + ", ".join(parts)


_FORM = re.compile(r"^form(\d{1,2}-[a-z]{1,2}(?:/a)?|def14a)$")


def _cover_title(page: Page) -> str:
    """ "Form 10-Q cover page" when the first page prints the form's name on a line of its
    own (emphasised or centred), else "Cover page"."""
    for line in page.lines[:20]:
        if (line.bold or line.caps or line.centred) and len(line.text) < 20:
            m = _FORM.match(line.compact)
            if m:
                return f"Form {m.group(1).upper()} cover page"
    return "Cover page"


def _repair_titles(roots: list[Draft], texts: list[str]) -> None:
    """Re-join renderer-split words in titles, and in the ids made from titles
    (``item_7/overview``, not ``item_7/overvi_ew``); numbered ids (``item_7``) never change."""
    drafts = [d for r in roots for d in r.walk() if d.kind != "window"]
    counts = word_counts([d.title for d in drafts], texts)
    for d in drafts:
        repaired = repair_title(d.title, counts)
        head = d.title.split(" — ")[0]  # a heading merged with the sub-heading under it
        if repaired != d.title and d.key == slug(head):
            d.key = slug(repaired.split(" — ")[0])
        d.title = repaired


def _structure(doc: PdfDocument, rules: SubheadingRules) -> tuple[list[Draft], str, list[Draft]]:
    """(section drafts, strategy name, outline drafts usable as sub-headings)."""
    pages = doc.pages
    sec = detect_sec(pages)
    items = [h for h in sec if h.kind == "item"]
    statements = [h for h in sec if h.kind == "statement"]
    rows = without_body_sentences(real_outline(doc.toc, len(pages)), pages)
    outline = outline_drafts(rows, pages) if rows else []
    outline_items = sum(1 for d in outline if d.kind == "item")
    # The filer's own outline leads when it holds more Items than the detections found, or as many
    # with sections nested inside them (three levels or more) and the Items at the top two levels
    # (under Parts at most): then it names what the detections miss, MD&A's sub-sections sharing a
    # page (trial 11: Alphabet's 10-Q). A two-level outline of Parts and Items adds nothing the
    # detections lack (they also nest the statements and notes in Item 8), and one that wraps the Items
    # deeper, under a document-title root, would bury the cover and the Parts under that root.
    nested = len({level for level, _, _ in rows}) >= 3
    items_on_top = all(level <= 2 for level, title, _ in rows if _ITEM.match(title.strip()))
    tie = nested and items_on_top and outline_items >= max(1, len(items))
    if outline and (outline_items > max(1, len(items)) or tie):
        return _with_unlisted_statements(outline, statements, pages, rules), "outline", outline
    if items:  # Item headings need strong emphasis; one is enough (an 8-K may have a single Item)
        return [_from_heading(h) for h in sec], "sec", outline
    if outline:
        return _with_unlisted_statements(outline, statements, pages, rules), "outline", outline
    layout = layout_drafts(pages, rules.headers)
    if statements:
        drafts = [_from_heading(h) for h in sec if h.kind in ("statement", "notes", "note")]
        notes = [d for d in drafts if d.kind != "statement"]
        if (
            notes and len(statements) >= 2
        ):  # a full set of statements with notes: the SEC ranks, layout headings before them
            first = min(drafts, key=lambda d: (d.start_page, d.y))
            before = [d for d in layout if (d.start_page, d.y) < (first.start_page, first.y)]
            for d in before:
                d.rank = min(d.rank, _RANK["statement"])
            return drafts + before, "sec", outline
        drafts = [d for d in drafts if d.kind == "statement"]
        return with_statements(drafts, layout, pages), "layout", outline
    if len(layout) >= 2:
        return layout, "layout", outline
    return [], "windows", outline


_FINANCIALS_ENTRY = re.compile(r"financial\s+(?:statements|information|section)|\baccounts\b", re.IGNORECASE)


def _with_unlisted_statements(
    outline: list[Draft], statements: list[Heading], pages: list[Page], rules: SubheadingRules
) -> list[Draft]:
    """The outline, and the financial statements printed after its last entry when it lists none.

    Some outlines cover only the front of a document (a Japanese business report's bookmarks stop
    at its compensation policy; its statements and auditor's reports follow for 19 pages): then
    the statements the SEC rules detect after the last entry, and the sub-headings from the first
    of them on (as a long section is split), are sections at the outline's top level (placed as
    :func:`with_statements` places them: a statement's row labels stay in it) rather than
    sub-sections of that last entry. An outline with an entry for the statements (a statement,
    notes, "Financial Statements", "Financial Information", "Accounts") is taken to hold them.
    """
    if not statements or any(
        d.kind in ("statement", "notes", "note", "financials") or _FINANCIALS_ENTRY.search(d.title)
        for d in outline
    ):
        return outline
    last = max(d.start_page for d in outline)
    tail = [_from_heading(h) for h in statements if h.page > last]
    if not tail:
        return outline
    start = min(tail, key=lambda d: (d.start_page, d.y))
    subs = subheading_drafts(pages, start.start_page, len(pages), start.y, start.rank, rules)
    placed = with_statements(tail, subs, pages)
    if not placed or not any(d.kind == "statement" for d in placed):
        return outline  # no statement there labels a table: the rules found none, after all
    shift = min(d.rank for d in outline) - min(d.rank for d in placed)
    for d in placed:
        d.rank += shift
    return outline + placed


def _from_heading(h: Heading) -> Draft:
    title = h.title
    if h.kind == "statement" and len(title) < 4:
        title = STATEMENT_TITLES.get(h.key.split("_")[0], title)
    return Draft(h.kind, h.key, title, h.page, h.y, h.at_top, _RANK.get(h.kind, 4))


def _to_nodes(roots: list[Draft]) -> list[Node]:
    """Readable ids: ``item_7``, ``item_8/note_3``; Parts stay out of paths unless needed."""
    ids: dict[int, str] = {}
    parents: dict[int, Draft | None] = {}

    def visit(d: Draft, parent: Draft | None) -> None:
        parents[id(d)] = parent
        for c in d.children:
            visit(c, d)

    for r in roots:
        visit(r, None)
    all_drafts = [d for r in roots for d in r.walk()]

    def path(d: Draft, with_parts: bool) -> str:
        parent = parents[id(d)]
        if parent is None:
            return d.key
        if parent.kind == "part" and not with_parts:
            return d.key
        return f"{path(parent, with_parts)}/{d.key}"

    plain = [path(d, False) for d in all_drafts]
    dup = {x for x in plain if plain.count(x) > 1}
    with_parts = any(
        parents[id(d)] is not None and parents[id(d)].kind == "part" and p in dup
        for d, p in zip(all_drafts, plain, strict=True)
    )
    seen: dict[str, int] = {}
    for d in all_drafts:
        base = path(d, with_parts)
        parent = parents[id(d)]
        if parent is not None and id(parent) in ids:
            prefix = ids[id(parent)]
            if parent.kind == "part" and not with_parts:
                base = d.key
            else:
                base = f"{prefix}/{d.key}"
        count = seen.get(base, 0) + 1
        seen[base] = count
        ids[id(d)] = base if count == 1 else f"{base}_{count}"

    def convert(d: Draft, level: int) -> Node:
        return Node(
            node_id=ids[id(d)],
            title=d.title,
            level=level,
            kind=d.kind if d.kind in _KINDS else "heading",
            start_page=d.start_page,
            end_page=d.end_page,
            children=[convert(c, level + 1) for c in d.children],
        )

    return [convert(r, 1) for r in roots]


_KINDS = {"part", "item", "statement", "note", "heading", "outline", "cover", "window"}
