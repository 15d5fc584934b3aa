"""A plug-in from outside the package: one retriever, one judge and one model provider, each one
decorated definition. ``PAGEINDEX_PLUGINS=tests.plugin_example pageindex bench run ...`` uses
them; nothing in ``pageindex`` or ``bench`` names them (tests/bench/test_plugins.py).
"""

from __future__ import annotations

from bench.judges.base import JudgeInput, JudgeVerdict, register_judge
from pageindex.llm.providers import CompletionProvider, register_provider
from pageindex.llm.types import Message
from pageindex.retrievers.base import QuestionRun, RetrieverOptions, register_retriever
from pageindex.retrievers.result import RetrievalResult, Source


# -- a retriever ------------------------------------------------------------------------------
class OpeningOptions(RetrieverOptions):
    pages: int = 1


@register_retriever("opening-page", options=OpeningOptions, needs_llm=False)
@register_retriever("ask-opening-page", options=OpeningOptions, needs_llm=True)
async def opening_page(run: QuestionRun, opts: OpeningOptions) -> RetrievalResult:
    """Answers with the first line of the filing's first page (and cites it); asks the model
    instead when there is one."""
    text = run.page_texts(range(1, opts.pages + 1))
    first = next((line for line in run.tree.page_text(1).splitlines() if line.strip()), "")
    answer = first.strip()
    if run.has_llm:
        reply = await run.chat([Message(role="user", content=f"{text}\n\n{run.query}")], role="plugin")
        answer = reply.content or ""
    leaf = run.tree.leaf_for_page(1)
    node_id = leaf.node_id if leaf is not None else "root"
    return run.result("answer", answer=answer, sources=[Source(node_id=node_id, page=1)])


# -- a judge ----------------------------------------------------------------------------------
class GroundedJudge:
    """``correct`` when every cited page was read (``pages_fetched``) and there is at least one."""

    name = "grounded"
    version = "1"

    async def assess(self, inp: JudgeInput) -> JudgeVerdict:
        cited = {s.page for s in inp.sources}
        grounded = bool(cited) and cited <= set(inp.pages_fetched)
        return JudgeVerdict(
            verdict="correct" if grounded else "incorrect",
            reasoning=f"cited pages {sorted(cited)}, read {sorted(inp.pages_fetched)}",
            judge=self.name,
            judge_version=self.version,
        )

    async def judge(self, question: str, gold_answer: str | float | int, answer: str) -> JudgeVerdict:
        return await self.assess(JudgeInput(question=question, gold_answer=gold_answer, answer=answer))


@register_judge("grounded")
def make_grounded(**_: object) -> GroundedJudge:
    return GroundedJudge()


# -- a model provider -------------------------------------------------------------------------
CANNED = "canned answer from the echo provider"


@register_provider("echo")
class Echo(CompletionProvider):
    """``echo/<model>``: answers every chat request in-process with a canned reply."""

    async def complete(self, request: dict) -> dict:
        words = sum(len(str(m.get("content") or "").split()) for m in request.get("messages", []))
        return {
            "id": "echo-1",
            "object": "chat.completion",
            "model": request.get("model"),
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": CANNED}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": words, "completion_tokens": 6, "total_tokens": words + 6},
        }
