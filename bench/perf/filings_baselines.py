"""The BM25 and extractive baselines on filings they were not developed on (not 10-Ks).

Usage: ``python bench/perf/filings_baselines.py PDF_DIR [--questions FILE] [--with-holdout]
[--with-holdout2] [-v]``
(``python bench/perf/filings_baselines.py ../shared/filings``)

``bench/perf/baselines.py`` measures the baselines on FinanceBench, the 10-Ks they were developed on.
This script measures them on 67 questions written by hand about 12 non-hold-out filings of
``../shared/filings`` (earnings releases, an 8-K, 10-Qs, a 20-F, a proxy statement, compensation,
business and fund reports): ``bench/perf/data/filings_questions.jsonl``, one JSON object per line with
``id``, ``doc`` (the PDF's name without ``.pdf``), ``type`` (table, prose, yesno, who), ``question``,
``answer``, ``gold_figure`` (the figure the answer must hold, separators dropped) or ``gold_text`` (a
word it must hold, lower case), ``pages`` (the physical pages that answer it) and ``half``. The
questions were written from the pages' text before any retriever ran on them, and split by a hash of
the question text into ``dev`` (25) and ``holdout`` (18); the hold-out half is measured only with
``--with-holdout`` and reported apart. Its misses were read (French numbers, table-of-contents lines, a
20-F's US$ column), so it no longer is a clean one: 24 more questions (2 a filing, ``holdout2``) were written
the same way, from the pages' text before any retriever ran on them, and are measured only with
``--with-holdout2`` (measure them once, when a change is done, not while making it).

For every question: ``bm25`` over pages (a scripted model stands in for its one answering call, as in
``baselines.py``: nothing leaves the machine) -- is a gold page among the first k retrieved, k = 1, 3,
5 -- and ``extractive`` (no model): is its cited page a gold page, does its answer hold the gold, and
is the value or sentence it quotes the gold one (the strictest).
"""

from __future__ import annotations

import re
from pathlib import Path

import typer
from pydantic import BaseModel
from rich.table import Table

from bench.perf.baselines import KS, STAND_IN
from pageindex.cli._common import CliConsole, fail
from pageindex.llm import ScriptedModel, make_client
from pageindex.retrievers import retrieve
from pageindex.tree import Tree, build_tree

QUESTIONS = Path(__file__).parent / "data" / "filings_questions.jsonl"


class FilingQuestion(BaseModel):
    id: str
    doc: str
    type: str
    question: str
    answer: str
    gold_figure: str | None = None
    gold_text: str | None = None
    pages: list[int]
    half: str


def holds_gold(question: FilingQuestion, text: str) -> bool:
    """The gold figure as a whole number of the text (thousands separators dropped), else the gold word."""
    if question.gold_figure:
        figure = question.gold_figure.replace(",", "")
        return re.search(rf"(?<![\d.]){re.escape(figure)}(?!\d)", text.replace(",", "")) is not None
    return (question.gold_text or question.answer).lower() in text.lower()


def measure(question: FilingQuestion, tree: Tree, llm: object) -> dict[str, bool]:
    gold = set(question.pages)
    found = retrieve(tree, question.question, retriever="bm25", llm=llm, unit="page", top_k=5, max_pages=5)
    pages = found.extra.get("retrieved_pages", [])
    answer = retrieve(tree, question.question, retriever="extractive", top_k=5)
    cited = answer.sources[0].page if answer.sources else None
    said = answer.answer if answer.status == "answer" else ""
    quote = answer.sources[0].quote if answer.sources else ""
    return {
        **{f"k{k}": bool(gold & set(pages[:k])) for k in KS},
        "page": cited in gold,
        "holds": holds_gold(question, said or ""),
        "quote": holds_gold(question, quote or ""),
    }


def main(
    pdf_dir: Path = typer.Argument(..., help="The folder of the filings (../shared/filings)."),
    questions_file: Path = typer.Option(QUESTIONS, "--questions", help="The questions (JSONL)."),
    with_holdout: bool = typer.Option(False, "--with-holdout", help="also measure the hold-out half"),
    with_holdout2: bool = typer.Option(False, "--with-holdout2", help="also measure the second hold-out"),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="One row per question."),
) -> None:
    console = CliConsole()
    if not pdf_dir.is_dir():
        fail(f"{pdf_dir}: no such folder (give the folder of the filings' PDFs)")
    try:
        lines = questions_file.read_text(encoding="utf-8").splitlines()
        questions = [FilingQuestion.model_validate_json(line) for line in lines if line.strip()]
    except (OSError, ValueError) as exc:
        fail(f"{questions_file}: not a questions file ({str(exc).splitlines()[0]})")
    halves = ("dev", *(("holdout",) if with_holdout else ()), *(("holdout2",) if with_holdout2 else ()))
    docs = {q.doc for q in questions if q.half in halves}
    missing = sorted(doc for doc in docs if not (pdf_dir / f"{doc}.pdf").is_file())
    if missing:
        fail(f"{pdf_dir}: no {missing[0]}.pdf (the questions' filings must be there)")
    llm = make_client("scripted", scripted=ScriptedModel(policy=lambda request: STAND_IN))
    trees: dict[str, Tree] = {}
    per_question = Table("id", "half", "doc", "type", *(f"bm25 k={k}" for k in KS), "page", "holds", "quote")
    table = Table(title="bm25 and extractive on filings they were not developed on")
    for col in ("half", "questions", *(f"bm25 page k={k}" for k in KS), "extractive page gold",
                "answer holds gold", "quoted value is gold"):  # fmt: skip
        table.add_column(col, justify="left" if col == "half" else "right")
    keys = (*(f"k{k}" for k in KS), "page", "holds", "quote")
    for half in halves:
        rows = []
        for question in (q for q in questions if q.half == half):
            if question.doc not in trees:
                trees[question.doc] = build_tree(pdf_dir / f"{question.doc}.pdf")
            row = measure(question, trees[question.doc], llm)
            rows.append(row)
            per_question.add_row(question.id, half, question.doc[:24], question.type,
                                 *("yes" if row[key] else "" for key in keys))
        table.add_row(half, str(len(rows)), *(str(sum(r[key] for r in rows)) for key in keys))
    if verbose:
        console.print(per_question)
    console.print(table)


if __name__ == "__main__":
    typer.run(main)
