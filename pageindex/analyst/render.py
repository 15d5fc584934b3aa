"""What the analyst prints: the answer, its confidence, numbered citations (document, section,
PDF page, printed page, the quoted value and whether it was verified on that page), how much came
from the session, and -- when nothing was found -- "not found in this filing" with what was searched."""

from __future__ import annotations

from typing import NamedTuple

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table as RichTable
from rich.text import Text

from pageindex.analyst.engine import AnalystAnswer, SearchedSummary
from pageindex.analyst.session import AnalystSession
from pageindex.retrievers.result import RetrievalResult, Source
from pageindex.tree.combine import CombinedTree
from pageindex.tree.errors import PDFError
from pageindex.tree.model import Tree
from pageindex.tree.tables import PageTable, page_tables
from pageindex.wording import counted

VERIFIED = {
    True: "[green]verified[/]",
    False: "[bold red]NOT verified[/]",
    None: "[dim]no quote to verify[/]",
}


def citation_line(n: int, s: Source, *, multi_doc: bool) -> str:
    where: list[str] = []
    if multi_doc and s.doc_id:
        where.append(f"[bold]{escape(s.doc_id)}[/]")
    where.append(escape(f"{s.node_id} {s.title}".strip()))
    where.append(f"PDF page {s.page}" + (f", printed {escape(s.page_label)}" if s.page_label else ""))
    line = f"\\[{n}] " + " · ".join(where)
    if s.quote:
        line += f' · "{escape(s.quote)}"'
    return f"  {line} · {VERIFIED[s.verified]}"


def usage_line(result: RetrievalResult) -> str:
    u = result.usage
    by_doc = result.extra.get("pages_by_doc")
    pages = (
        ", ".join(f"{doc} {pages}" for doc, pages in by_doc.items()) or "[]"
        if isinstance(by_doc, dict)
        else str(result.pages_fetched)
    )
    return (
        f"iterations {result.iterations} · turns {result.turns} · tool calls {result.tool_calls} · "
        f"llm calls {u.llm_calls} · tokens {u.prompt_tokens}+{u.completion_tokens} · "
        f"pages {pages} · {result.latency_s:.2f}s"
    )


def searched_line(searched: SearchedSummary) -> str:
    """What a not-found answer searched, after ``Searched:``: the sections and the pages read, each left
    out when there is none, or that nothing was read (it said ``sections none · pages none``)."""
    parts = []
    if searched.sections:
        parts.append(f"sections {', '.join(searched.sections)}")
    if searched.pages:
        parts.append(f"pages {', '.join(map(str, searched.pages))}")
    return " · ".join(parts) or "nothing (no section or page was read)"


def session_line(answer: AnalystAnswer) -> str | None:
    use = answer.use
    if use.mode == "cold":
        return None
    if use.mode == "repeat_failed":
        return (
            f"From the session: {use.cache_hits} cache hit (a search that already failed, not repeated) · "
            f"0 tokens spent · ≈{use.tokens_saved:,} tokens saved"
        )
    if use.mode == "session":
        return (
            f"From the session: {counted(use.cache_hits, 'cache hit')} "
            f"({counted(use.findings_reused, 'finding')}, {counted(use.sections_reused, 'section')} already "
            f"read) · {use.tokens_spent:,} tokens spent · "
            f"≈{use.tokens_saved:,} tokens saved"
        )
    return f"From the session: nothing usable (checked first; {use.tokens_spent:,} tokens in all)"


def print_answer(console: Console, tree: Tree, answer: AnalystAnswer, *, show_trace: bool = False) -> None:
    result = answer.cited
    multi = isinstance(tree, CombinedTree)
    where = "these filings" if multi else "this filing"
    if answer.expired:
        console.print("[yellow]The session had been idle too long and was cleared.[/]")
    if result.status == "answer":
        conf = f"{result.confidence:.2f}" if result.confidence is not None else "-"
        console.print(
            f"[bold green]answer[/] ({result.retriever}, {result.prompt_version or 'no prompt'}) · "
            f"confidence {conf}",
            highlight=False,
        )
        console.print(result.answer, highlight=False, markup=False, soft_wrap=True)
        if result.sources:
            console.print("[bold]Citations[/]")
            for n, source in enumerate(result.sources, 1):
                console.print(citation_line(n, source, multi_doc=multi), highlight=False, soft_wrap=True)
        else:
            console.print("[yellow]No citations: the answer is not anchored to any page.[/]")
    elif result.status == "fail":
        if result.error_kind:  # the model answered unusably: nothing was found to be missing (trial 14)
            kind = escape(result.error_kind)
            head = f"[bold red]No usable answer: the model's output was unusable ({kind}).[/]"
        else:
            head = f"[bold yellow]Not found in {where}.[/]"
        console.print(head, highlight=False, soft_wrap=True)
        console.print(result.reason or "", highlight=False, markup=False, soft_wrap=True)
        searched = answer.searched
        if searched is not None:
            console.print(f"Searched: {escape(searched_line(searched))}", highlight=False, soft_wrap=True)
            for item in searched.failed_searches:
                console.print(f"  - {escape(item)}", highlight=False, soft_wrap=True)
    else:
        console.print(
            f"[bold red]error[/] ({result.retriever}) {escape(result.error or '')}", highlight=False
        )
    line = session_line(answer)
    if line:
        console.print(line, highlight=False, soft_wrap=True)
    console.print(f"[dim]{escape(usage_line(result))}[/]", highlight=False, soft_wrap=True)
    if show_trace:
        print_trace(console, result)


def print_trace(console: Console, result: RetrievalResult) -> None:
    for e in result.trace:
        console.print(f"{e.t:7.3f}s {e.kind:<10} {e.message}", highlight=False, markup=False, soft_wrap=True)


def print_sources(console: Console, tree: Tree, answer: AnalystAnswer | None) -> None:
    if answer is None:
        console.print("No answer yet.")
        return
    if not answer.cited.sources:
        console.print("The last answer cites no sources.")
        return
    for n, source in enumerate(answer.cited.sources, 1):
        console.print(
            citation_line(n, source, multi_doc=isinstance(tree, CombinedTree)),
            highlight=False,
            soft_wrap=True,
        )


class PageRef(NamedTuple):
    """A page the user named: its number in ``tree``, and the filing and page it is in that filing."""

    page: int
    source: str
    local: int
    heading: str


def resolve_page(tree: Tree, spec: str, command: str = "/page") -> PageRef | str:
    """``N`` or ``DOC:N`` -> a :class:`PageRef`, or the message to print when it names no page."""
    spec = spec.strip()
    doc, _, num = spec.rpartition(":") if ":" in spec else ("", "", spec)
    doc = doc.strip()
    try:
        page = int(num)
        if doc:
            if not isinstance(tree, CombinedTree):
                if doc != tree.doc_id:
                    raise KeyError(doc)
            else:
                page = tree.global_page(doc, page)
        tree.page_text(page)
    except ValueError:
        return f"usage: {command} N (a PDF page number), got {spec!r}"
    except KeyError:  # a document name that is not open: name the ones that are
        docs = [part.doc_id for part in tree.parts] if isinstance(tree, CombinedTree) else [tree.doc_id]
        return f"no such page: no document {doc!r} is open; the documents are {', '.join(docs)}"
    except IndexError as exc:
        return f"no such page: {exc}"
    label = tree.page_label(page)
    printed = f" (printed {label})" if label else ""
    if isinstance(tree, CombinedTree):
        name, local = tree.locate(page)
        part = tree.part_for_page(page)
        source = part.source if part is not None else tree.source
        return PageRef(page, source, local, f"{name} page {local}{printed}")
    return PageRef(page, tree.source, page, f"page {page}{printed}")


def print_page(console: Console, tree: Tree, spec: str) -> None:
    """``/page N`` (a PDF page; with several documents ``DOC:N`` or ``N`` of the combined numbering)."""
    ref = resolve_page(tree, spec)
    if isinstance(ref, str):
        console.print(ref, highlight=False, markup=False, soft_wrap=True)
        return
    console.rule(ref.heading)
    console.print(tree.page_text(ref.page), highlight=False, markup=False, soft_wrap=True)
    console.rule()


def table_view(table: PageTable, title: str) -> RichTable:
    """A page table as a rich Table: first column the row labels, the others right-aligned values."""
    view = RichTable(title=title, title_justify="left", show_header=False, box=box.SIMPLE_HEAD)
    for j in range(table.n_cols):
        if j == 0:
            view.add_column(overflow="fold")
        else:
            view.add_column(justify="right", no_wrap=True)
    for row in table.rows:
        view.add_row(*(Text(cell) for cell in row + [""] * (table.n_cols - len(row))))
    return view


def print_tables(console: Console, tree: Tree, spec: str) -> None:
    """``/tables N``: every table on that page, read from the PDF (pdfplumber, or pymupdf when
    pdfplumber fragments it); ``DOC:N`` with several documents, as for ``/page``."""
    ref = resolve_page(tree, spec, "/tables")
    if isinstance(ref, str):
        console.print(ref, highlight=False, markup=False, soft_wrap=True)
        return
    try:
        with console.status(f"reading tables on {ref.heading}"):
            tables = page_tables(ref.source, ref.local)
    except (PDFError, ValueError) as exc:
        console.print(f"cannot read tables: {exc}", highlight=False, markup=False, soft_wrap=True)
        return
    if not tables:
        console.print(
            f"no tables found on {ref.heading}; /page {spec.strip()} shows its text",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
        return
    for t in tables:
        title = f"{ref.heading} · table {t.index + 1} of {len(tables)} · {t.method}"
        console.print(table_view(t, title))


def print_session(console: Console, session: AnalystSession) -> None:
    console.print(
        f"session {session.name or '(unsaved)'}: {session.contents(' · ')} · "
        f"{counted(len(session.failures), 'failed search', 'failed searches')} · "
        f"{session.material_chars():,} of "
        f"{session.limits.max_chars:,} chars · {session.evicted} evicted",
        highlight=False,
        soft_wrap=True,
    )
