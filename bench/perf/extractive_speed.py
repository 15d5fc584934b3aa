"""The extractive retriever's time per question, with each question reading its pages afresh (as before)
and with the pages read once per tree (kept with the tree's ranker), as ratios measured in one run.

Usage: ``python bench/perf/extractive_speed.py [DATA_DIR] [--limit N] [--repeats 3]``

For the questions of a FinanceBench-format folder (default FinanceBench, else the demo dataset), trees
from the tree cache (built first when missing), the ``extractive`` retriever's own work is timed
(``extract_answer`` over the top 5 BM25 pages; the ranking index is built before, for both paths):

* **afresh**: the pages a question reads are read again for it (its ranker's kept pages dropped first):
  what every question cost before the pages were kept;
* **first pass**: the questions in dataset order with the pages kept, a page read the first time any
  question of its filing asks for it (a ``bench run`` of the set once);
* **repeated**: the same questions again, every page kept (``--repeats``, a second retriever's or a
  resumed run's questions);
* **one filing**: the questions of the filing with the most of them, afresh vs kept.

The answers of every path are checked to be the same.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import typer

from bench.datasets.financebench import default_financebench_dir, load_financebench
from bench.datasets.models import DatasetError
from bench.perf import dataset_folder
from pageindex.cli._common import CliConsole, fail
from pageindex.retrievers.extractive import extract_answer
from pageindex.retrievers.ranking import Ranker, ranker_for
from pageindex.tree import build_tree

DEMO = Path(__file__).resolve().parents[2] / "datasets" / "demo"


def _answer(ranker: Ranker, query: str) -> tuple[list[dict], float]:
    pages = ranker.top_pages(query, k=5)
    start = time.perf_counter()
    best = extract_answer(ranker, query, pages, top_n=4)
    return [c.model_dump() for c in best], time.perf_counter() - start


def _timed(asked: list[tuple[Ranker, str]], afresh: bool) -> tuple[list[list[dict]], float]:
    answers, seconds = [], 0.0
    for ranker, query in asked:
        if afresh:
            ranker.forget_kept()  # the pages kept with the ranker dropped: read again, as before
        answer, took = _answer(ranker, query)
        answers.append(answer)
        seconds += took
    return answers, seconds


def main(
    data_dir: Path = typer.Argument(None, help="FinanceBench-format directory (default: FinanceBench)."),
    limit: int = typer.Option(None, min=1, help="Only the first N questions."),
    repeats: int = typer.Option(3, min=1, help="Passes of the repeated questions."),
) -> None:
    """Print extractive's time per question, pages read afresh vs kept, and the ratios."""
    say = CliConsole().print
    if data_dir is None:
        data_dir = default_financebench_dir() or DEMO
    else:
        dataset_folder(data_dir)
    try:
        dataset = load_financebench(data_dir)
    except DatasetError as exc:
        fail(str(exc))
    questions = [q for q in dataset.questions if dataset.pdf_path(q.doc_id).exists()][:limit]
    rankers = {}
    for q in questions:  # trees and ranking indexes first: the same for both paths
        if q.doc_id not in rankers:
            rankers[q.doc_id] = ranker_for(build_tree(dataset.pdf_path(q.doc_id)), "page")
    asked = [(rankers[q.doc_id], q.question) for q in questions]
    n = len(asked)
    _timed(asked[:1], afresh=True)  # warm-up: what the first question does once (stop words, regexes)
    before, afresh = _timed(asked, afresh=True)
    for ranker in rankers.values():
        ranker.forget_kept()
    first, first_s = _timed(asked, afresh=False)
    again, again_s = _timed(asked * repeats, afresh=False)
    same = first == before and again == before * repeats
    ms = lambda seconds, count: f"{1000 * seconds / count:.1f} ms"  # noqa: E731
    say(f"{n} questions over {len(rankers)} filings ({dataset.name})", highlight=False)
    say(f"afresh (before): {ms(afresh, n)} a question; first pass with pages kept: {ms(first_s, n)} "
        f"(ratio {first_s / afresh:.2f}); repeated x{repeats}: {ms(again_s, n * repeats)} "
        f"(ratio {again_s / repeats / afresh:.3f}, {afresh * repeats / again_s:.0f}x faster)",
        highlight=False)  # fmt: skip
    doc, count = Counter(q.doc_id for q in questions).most_common(1)[0]
    one = [pair for pair, q in zip(asked, questions, strict=True) if q.doc_id == doc]
    rankers[doc].forget_kept()
    one_before, one_afresh = _timed(one * repeats, afresh=True)
    rankers[doc].forget_kept()
    one_after, one_kept = _timed(one * repeats, afresh=False)
    same = same and one_before == one_after
    say(f"one filing ({doc}, {count} questions x {repeats}): afresh {ms(one_afresh, len(one) * repeats)}, "
        f"kept {ms(one_kept, len(one) * repeats)} a question (ratio {one_kept / one_afresh:.3f}, "
        f"{one_afresh / one_kept:.1f}x faster)", highlight=False)  # fmt: skip
    say(f"answers: {'the same' if same else 'DIFFERENT'} on every path", highlight=False)
    if not same:
        raise typer.Exit(1)


if __name__ == "__main__":
    typer.run(main)
