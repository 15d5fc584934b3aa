"""extractive reads a page's rows and sentences, and their words, once per tree: they are kept with the
tree's ranker (``ranker_for``'s cache), not read again for every question (which was 80% of its time:
167 ms a question on a 260-page 10-K, 42 ms with the pages read once). Its answers are the same."""

from __future__ import annotations

import pytest

from pageindex.retrievers import extractive, ranking, retrieve
from pageindex.retrievers.extractive import extract_answer
from pageindex.retrievers.ranking import Ranker, ranker_for

QUESTIONS = (
    "What is the FY2018 capital expenditure amount (in USD millions) for 3M?",
    "What was 3M's net income in 2018?",
    "What is the total amount of cash dividends paid to shareholders by 3M in 2018?",
    "How much did 3M spend on research and development in 2018?",
)


class Counting:
    """``page_candidates`` and ``tokenize`` as extractive calls them, with their calls counted."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.pages: list[int] = []
        self.tokenized = 0
        read, words = extractive.page_candidates, extractive.tokenize

        def page_candidates(text: str, page: int):
            self.pages.append(page)
            return read(text, page)

        def tokenize(text: str):
            self.tokenized += 1
            return words(text)

        monkeypatch.setattr(extractive, "page_candidates", page_candidates)
        monkeypatch.setattr(extractive, "tokenize", tokenize)


def _answers(ranker: Ranker, query: str) -> list[dict]:
    pages = ranker.top_pages(query, k=5)
    return [c.model_dump() for c in extract_answer(ranker, query, pages, top_n=4)]


def test_a_page_is_read_once_per_tree_and_every_answer_is_as_read_afresh(
    tree_3m, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the answers as every question read its pages afresh (a ranker of its own, nothing kept)
    fresh = {q: _answers(Ranker(tree_3m, "page"), q) for q in QUESTIONS}
    assert all(fresh.values()) and len({a[0]["answer"] for a in fresh.values()}) == len(QUESTIONS)
    monkeypatch.setattr(ranking, "_RANKERS", {})
    counting = Counting(monkeypatch)
    ranker = ranker_for(tree_3m, "page")
    asked = [q for _ in range(3) for q in QUESTIONS]  # each question three times, in turn
    answers = [_answers(ranker, q) for q in asked]
    assert answers == [fresh[q] for q in asked]  # no question's scores or answers left on a kept page
    read = [p for q in QUESTIONS for p in ranker.top_pages(q, k=5)]
    assert sorted(counting.pages) == sorted(set(read))  # each page read once, the first time it was asked
    assert len(counting.pages) < len(read) < len(asked) * 5
    # the words of every row and sentence were tokenized once too: later questions tokenize only themselves
    first = counting.tokenized
    _answers(ranker, QUESTIONS[0])
    assert counting.tokenized - first == 2  # the question, and the question with its synonyms


def test_the_pages_kept_go_with_the_tree_s_ranker(tree_3m, monkeypatch: pytest.MonkeyPatch) -> None:
    """Kept where the ranking index is (``ranker_for`` keeps 64 trees' rankers): a ranker made afresh reads
    its pages afresh, and nothing else holds them."""
    monkeypatch.setattr(ranking, "_RANKERS", {})
    counting = Counting(monkeypatch)
    retrieve(tree_3m, QUESTIONS[0], retriever="extractive")
    once = len(counting.pages)
    assert once == 5
    retrieve(tree_3m, QUESTIONS[0], retriever="extractive")
    assert len(counting.pages) == once
    ranking._RANKERS.clear()  # the tree's ranker let go: its pages with it
    retrieve(tree_3m, QUESTIONS[0], retriever="extractive")
    assert len(counting.pages) == 2 * once


def test_a_ranker_forgets_what_it_kept_when_told(tree_3m, monkeypatch: pytest.MonkeyPatch) -> None:
    """``forget_kept`` (how ``bench/perf/extractive_speed.py`` times the path without kept pages) drops
    the pages read; the same ranker then reads them again, once."""
    monkeypatch.setattr(ranking, "_RANKERS", {})
    counting = Counting(monkeypatch)
    retrieve(tree_3m, QUESTIONS[0], retriever="extractive")
    once = len(counting.pages)
    ranker = next(iter(ranking._RANKERS.values()))
    ranker.forget_kept()
    retrieve(tree_3m, QUESTIONS[0], retriever="extractive")
    retrieve(tree_3m, QUESTIONS[0], retriever="extractive")
    assert len(counting.pages) == 2 * once and len(ranking._RANKERS) == 1
