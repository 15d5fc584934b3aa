"""What the analyst prints: the answer, its confidence, numbered citations (document, section,
PDF page, printed page, the quoted value and whether it was verified on that page), how much came
from the session, and -- when nothing was found -- "not found in this filing" with what was searched."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

from pageindex.analyst.engine import AnalystAnswer
from pageindex.analyst.session import AnalystSession
from pageindex.retrievers.result import RetrievalResult, Source
from pageindex.tree.combine import CombinedTree
from pageindex.tree.model import Tree

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
            f"From the session: {use.cache_hits} cache hits ({use.findings_reused} findings, "
            f"{use.sections_reused} section(s) already read) · {use.tokens_spent:,} tokens spent · "
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
        console.print(f"[bold yellow]Not found in {where}.[/]", highlight=False, soft_wrap=True)
        console.print(result.reason or "", highlight=False, markup=False, soft_wrap=True)
        searched = answer.searched
        if searched is not None:
            pages = ", ".join(map(str, searched.pages)) or "none"
            sections = ", ".join(searched.sections) or "none"
            console.print(
                f"Searched: sections {escape(sections)} · pages {pages}", highlight=False, soft_wrap=True
            )
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


def print_page(console: Console, tree: Tree, spec: str) -> None:
    """``/page N`` (a PDF page; with several documents ``DOC:N`` or ``N`` of the combined numbering)."""
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
        text = tree.page_text(page)
    except ValueError:
        console.print(
            f"usage: /page N (a PDF page number), got {spec!r}", highlight=False, markup=False, soft_wrap=True
        )
        return
    except (IndexError, KeyError) as exc:
        console.print(f"no such page: {exc}", highlight=False, markup=False, soft_wrap=True)
        return
    label = tree.page_label(page)
    head = f"page {page}" + (f" (printed {label})" if label else "")
    if isinstance(tree, CombinedTree):
        name, local = tree.locate(page)
        head = f"{name} page {local}" + (f" (printed {label})" if label else "")
    console.rule(head)
    console.print(text, highlight=False, markup=False, soft_wrap=True)
    console.rule()


def print_session(console: Console, session: AnalystSession) -> None:
    console.print(
        f"session {session.name or '(unsaved)'}: {len(session.turns)} questions · "
        f"{len(session.findings)} findings · {len(session.sections)} sections read · "
        f"{len(session.failures)} failed searches · {session.material_chars():,} of "
        f"{session.limits.max_chars:,} chars · {session.evicted} evicted",
        highlight=False,
        soft_wrap=True,
    )
