"""The ``oracle`` baseline: one answering call over the gold evidence pages only.

The upper bound of what retrieval can reach: the model sees exactly the pages the dataset
marks as evidence (``QuestionContext.evidence_pages``, or the ``pages`` option), nothing else.
Without gold pages the retrieval ends in ``error`` (kind ``no_evidence``): there is nothing
to be an oracle about (``ask``, whose question has no gold pages, exits 2: give ``--opt pages=``).
Pages outside the filing are dropped (a trace event says so); a ``pages`` option naming no page
the filing has ends in ``error`` of kind ``bad_input`` (``ask`` exits 2), and gold pages none of
which the filing has in ``no_evidence`` saying so.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from pageindex.retrievers.base import ModelCallOptions, QuestionRun, register_retriever
from pageindex.retrievers.pages_answer import ANSWER_PROMPT, answer_from_pages
from pageindex.retrievers.result import RetrievalResult


class OracleOptions(ModelCallOptions):
    pages: list[int] | None = Field(
        None, description="evidence pages (1-based PDF) to use instead of the question's gold pages"
    )
    @field_validator("pages", mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:
        """``--opt pages=56,60`` on the command line arrives as the text "56,60"."""
        if isinstance(value, str):
            parts = [p for p in value.replace(" ", "").split(",") if p]
            if not all(p.isdigit() for p in parts):
                raise ValueError(f"expected page numbers separated by commas (e.g. 56,60), got {value!r}")
            return [int(p) for p in parts]
        if isinstance(value, int) and not isinstance(value, bool):
            return [value]
        return value

    max_chars_per_page: int | None = Field(None, ge=100, description="truncate each page (None = whole)")


@register_retriever("oracle", options=OracleOptions, prompt_version=ANSWER_PROMPT)
async def oracle(run: QuestionRun, opts: OracleOptions) -> RetrievalResult:
    """Answer from the gold evidence pages only: the ceiling for every retriever."""
    pages = opts.pages if opts.pages is not None else run.context.evidence_pages
    outside = [p for p in pages if not 1 <= p <= run.tree.page_count]
    if outside and len(outside) == len(pages) and opts.pages is not None:
        # the caller's own pages, none of them in the filing: bad input, said as such
        reason = f"pages option {outside}: outside this filing's pages 1-{run.tree.page_count}"
        run.event("error", reason)
        return run.result("error", error=reason, error_kind="bad_input")
    if outside:
        run.event("error", f"evidence pages {outside} are outside 1..{run.tree.page_count}")
    pages = [p for p in pages if 1 <= p <= run.tree.page_count]
    if not pages and outside:  # it was "no gold evidence pages for this question", of pages it was given
        reason = (
            f"the question's evidence pages {outside} are all outside this filing's pages "
            f"1-{run.tree.page_count} (pages of another filing?)"
        )
        run.event("error", reason)
        return run.result("error", error=reason, error_kind="no_evidence")
    if not pages:
        reason = (
            "no gold evidence pages for this question: give the pages option (on the command line "
            "--opt pages=N,M) or the question's evidence pages"
        )
        run.event("error", reason)
        return run.result("error", error=reason, error_kind="no_evidence")
    run.event("decision", f"answering from gold pages {pages}", pages=pages)
    return await answer_from_pages(
        run, pages, max_chars_per_page=opts.max_chars_per_page, extra={"evidence_pages": pages}
    )
