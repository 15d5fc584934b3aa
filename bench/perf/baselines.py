"""Retrieval recall of the BM25 baselines, and the extractive baseline's answers, on a dataset.

Usage: ``python bench/perf/baselines.py DATA_DIR [--limit N] [--answers/--no-answers]``

For every question of a FinanceBench-format directory: build the filing's tree, run the
``extractive`` retriever (no model at all) and the ``bm25`` retriever over pages and over
leaf sections (a scripted model stands in for bm25's one answering call, so nothing leaves
the machine). Prints, per question type, the share of questions whose gold evidence page
(``evidence_page_num`` + 1) is among the first k retrieved pages for k = 1, 3, 5, then the
extractive answers beside the gold answers. "number hit" is a crude check: the first number
of the gold answer appears (within 1%) in the extractive answer.
"""

from __future__ import annotations

import time
from collections import defaultdict
from pathlib import Path

import typer
from rich.table import Table

from bench.datasets.financebench import load_financebench
from bench.datasets.models import DatasetError, Question
from pageindex.cli._common import CliConsole, fail
from pageindex.llm import ScriptedModel, make_client
from pageindex.retrievers import retrieve
from pageindex.retrievers.numbers import find_numbers
from pageindex.tree import build_tree

KS = (1, 3, 5)
STAND_IN = {"status": "answer", "answer": "(scripted stand-in: no model was called)", "sources": []}
console = CliConsole()


def recall_row(hits: list[dict[int, bool]]) -> list[str]:
    n = len(hits)
    return [f"{sum(h[k] for h in hits) / n:.0%}" if n else "-" for k in KS]


def number_hit(gold: str, answer: str) -> bool:
    gold_numbers = [abs(n.value) for n in find_numbers(gold)]
    if not gold_numbers:
        return False
    target = gold_numbers[0]
    return any(abs(abs(n.value) - target) <= 0.01 * max(1.0, target) for n in find_numbers(answer))


def main(
    data_dir: Path = typer.Argument(..., help="FinanceBench-format directory (questions.jsonl, pdfs/)"),
    limit: int | None = typer.Option(None, help="only the first N questions"),
    answers: bool = typer.Option(True, help="print the extractive answer of every question"),
) -> None:
    try:
        dataset = load_financebench(data_dir)
    except DatasetError as exc:
        fail(str(exc))
    questions: list[Question] = dataset.questions[:limit] if limit else dataset.questions
    sm = ScriptedModel(policy=lambda req: STAND_IN)
    llm = make_client("scripted", scripted=sm)
    systems = ("bm25 (pages)", "bm25 (sections)", "extractive")
    hits: dict[str, dict[str, list[dict[int, bool]]]] = {s: defaultdict(list) for s in systems}
    rows = []
    skipped: list[str] = []
    extractive_s = 0.0
    prompt_tokens: dict[str, list[int]] = defaultdict(list)
    for q in questions:
        pdf = dataset.pdf_path(q.doc_id)
        if not pdf.exists() or not q.evidence_pages:
            skipped.append(f"{q.question_id}: {'no PDF' if not pdf.exists() else 'no gold pages'}")
            continue
        tree = build_tree(pdf)
        gold = set(q.evidence_pages)
        for name, unit in (("bm25 (pages)", "page"), ("bm25 (sections)", "section")):
            before = len(sm.requests)
            res = retrieve(tree, q.question, retriever="bm25", llm=llm, unit=unit, top_k=5, max_pages=5)
            pages = res.extra.get("retrieved_pages", [])
            prompt_tokens[name] += [r.prompt_tokens for r in sm.requests[before:]]
            hits[name][q.question_type].append({k: bool(gold & set(pages[:k])) for k in KS})
        start = time.perf_counter()
        res = retrieve(tree, q.question, retriever="extractive", top_k=5)
        extractive_s += time.perf_counter() - start
        pages = res.extra.get("retrieved_pages", [])
        hits["extractive"][q.question_type].append({k: bool(gold & set(pages[:k])) for k in KS})
        page = res.sources[0].page if res.sources else None
        rows.append((q, res.answer if res.status == "answer" else f"({res.status}: {res.reason})", page,
                     page in gold, number_hit(q.gold_answer, res.answer)))

    n = len(rows)
    table = Table(title=f"Gold evidence page among the top-k retrieved pages ({dataset.name}, {n} questions)")
    table.add_column("retriever")
    table.add_column("question type")
    table.add_column("n", justify="right")
    for k in KS:
        table.add_column(f"k={k}", justify="right")
    for system in systems:
        types = sorted(hits[system])
        for qtype in types:
            table.add_row(system, qtype, str(len(hits[system][qtype])), *recall_row(hits[system][qtype]))
        every = [h for t in types for h in hits[system][t]]
        table.add_row(f"[bold]{system}[/bold]", "[bold]all[/bold]", str(len(every)), *recall_row(every),
                      end_section=True)
    console.print(table)
    for name, tokens in prompt_tokens.items():
        if tokens:
            console.print(f"{name}: answering prompt {sum(tokens) / len(tokens):,.0f} tokens on average "
                          "(scripted count: characters / 4)")
    if n:
        console.print(
            f"extractive: answer page is a gold page {sum(r[3] for r in rows)}/{n}, "
            f"number hit {sum(r[4] for r in rows)}/{n}, {1000 * extractive_s / n:.0f} ms per question"
        )
    if skipped:
        console.print(f"skipped {len(skipped)}: " + "; ".join(skipped))
    if answers and rows:
        out = Table(title="Extractive answers")
        columns = ("id", "type", "gold answer", "extractive answer", "page", "gold pages", "page ok", "num")
        for col in columns:
            out.add_column(col, overflow="fold")
        for q, answer, page, page_ok, num_ok in rows:
            out.add_row(q.question_id.replace("financebench_id_", ""), q.question_type, _short(q.gold_answer),
                        _short(answer), str(page or "-"), ",".join(map(str, q.evidence_pages)),
                        "yes" if page_ok else "", "yes" if num_ok else "")
        console.print(out)


def _short(text: str, n: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


if __name__ == "__main__":
    typer.run(main)
