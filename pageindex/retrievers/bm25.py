"""The ``bm25`` baseline: BM25 over pages (or leaf sections), the top pages into one answering call.

What a vector-store pipeline does, without embeddings: rank, take the top ``top_k``, answer.
The ranked pages (with scores) are kept in ``extra["ranked"]`` for retrieval-recall figures.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from pageindex.retrievers.base import ModelCallOptions, QuestionRun, register_retriever
from pageindex.retrievers.pages_answer import ANSWER_PROMPT, answer_from_pages
from pageindex.retrievers.ranking import ranker_for
from pageindex.retrievers.result import RetrievalResult


class BM25Options(ModelCallOptions):
    top_k: int = Field(5, ge=1, le=50, description="pages (unit=page) or sections (unit=section) to take")
    unit: Literal["page", "section"] = Field("page", description="what BM25 ranks: pages or leaf sections")
    max_pages: int = Field(8, ge=1, description="cap on pages shown to the model (sections are unrolled)")
    max_chars_per_page: int | None = Field(None, ge=100, description="truncate each page (None = whole)")


@register_retriever("bm25", options=BM25Options, prompt_version=ANSWER_PROMPT)
async def bm25(run: QuestionRun, opts: BM25Options) -> RetrievalResult:
    """BM25 top-k pages (or sections) into one answering call: a vector-store pipeline without vectors."""
    ranker = ranker_for(run.tree, opts.unit)
    hits = ranker.search(run.query, k=opts.top_k)
    pages: list[int] = []
    for hit in hits:
        pages += [p for p in hit.chunk.pages if p not in pages]
    ranked = [{"key": h.chunk.key, "pages": h.chunk.pages, "score": round(h.score, 4)} for h in hits]
    said = f"bm25 ({opts.unit}) top {len(hits)}: pages {pages}"
    if len(pages) > opts.max_pages:  # "top 5: pages [11, 6, 12]" with max_pages=3 read as if 3 were the top 5
        pages = pages[: opts.max_pages]
        said += f"; the first {len(pages)} shown to the model (max_pages={opts.max_pages}): {pages}"
    run.event("decision", said, ranked=ranked)
    if not pages:
        return run.result("fail", reason="no page matches any word of the question", extra={"ranked": []})
    return await answer_from_pages(
        run,
        pages,
        max_chars_per_page=opts.max_chars_per_page,
        extra={"ranked": ranked, "retrieved_pages": pages},
    )
