"""One answering call over given pages: what the oracle and bm25 baselines share.

The pages' text goes into ``prompts/answer_from_pages_v1.md`` (recorded as shown to the
model); the reply is the shared :class:`AnswerWithSources`, validated by the LLM layer
(malformed replies are sent back up to ``max_retries`` times, then the retrieval ends in
``error`` with kind ``invalid_output``).
"""

from __future__ import annotations

from typing import Any

from pageindex.retrievers.base import QuestionRun
from pageindex.retrievers.prompts import INJECTION_NOTICE, load_prompt
from pageindex.retrievers.replies import AnswerWithSources
from pageindex.retrievers.result import RetrievalResult
from pageindex.retrievers.tools import holding_pages

ANSWER_PROMPT = "answer_from_pages_v1"


async def answer_from_pages(
    run: QuestionRun,
    pages: list[int],
    *,
    role: str = "answer",
    max_chars_per_page: int | None = None,
    max_retries: int = 2,
    **fields: Any,
) -> RetrievalResult:
    """Ask the model to answer ``run.query`` from ``pages`` (1-based PDF pages, in this order)."""
    valid = [p for p in dict.fromkeys(pages) if 1 <= p <= run.tree.page_count]
    if not valid:
        run.event("decision", "no pages to answer from")
        return run.result("fail", reason="no pages to answer from", **fields)
    prompt = load_prompt(ANSWER_PROMPT)
    # The pages' text fits the model's known context window (cut or left out where it does not, said in
    # the trace); they count as shown once the request carrying them is answered.
    with holding_pages() as unsent:
        messages = await run.fitted_pages(valid, lambda text, shown: prompt.messages(
            question=run.query,
            injection_notice=INJECTION_NOTICE,
            page_list=", ".join(str(p) for p in shown),
            pages=text,
        ), role=role, reply=AnswerWithSources, max_chars_per_page=max_chars_per_page)  # fmt: skip
    assert messages is not None  # required: no room at all is a ContextLengthError
    run.count_turn()
    reply = await run.structured(
        messages, AnswerWithSources, role=role, max_retries=max_retries, shows=unsent
    )
    run.event("decision", f"{role}: {reply.status}", reply=reply.model_dump(mode="json"))
    return run.result_from_answer(reply, **fields)
