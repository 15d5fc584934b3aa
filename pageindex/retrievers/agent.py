"""The ``agent`` retriever: one tool-using model reads the section index, fetches sections
with ``fetch_section`` and answers with sources, within ``max_turns`` model calls.

A reply that is neither a tool call nor the JSON answer the prompt asks for is sent back
with the parse error and costs a turn; running out of turns, or of context window, ends in
``fail`` with a reason that says which, and with error kind ``invalid_reply`` when every reply was
such a one (the filing was never read: the model's output, not the filing, is what failed).
"""

from __future__ import annotations

from pydantic import Field

from pageindex.retrievers.base import FetchOptions, QuestionRun, register_retriever
from pageindex.retrievers.prompts import INJECTION_NOTICE, load_prompt
from pageindex.retrievers.replies import AnswerWithSources
from pageindex.retrievers.result import RetrievalResult
from pageindex.retrievers.toolloop import run_tool_loop

PROMPT_VERSION = "agent_v1"


class AgentOptions(FetchOptions):
    max_turns: int = Field(12, ge=1, description="model calls at most (each tool round or reply is one)")
    index_depth: int | None = Field(
        None, ge=0, description="deepest tree level shown in the index (None = all)"
    )
    summaries: bool = Field(True, description="show node summaries in the index when the tree has them")


@register_retriever("agent", options=AgentOptions, prompt_version=PROMPT_VERSION)
async def agent(run: QuestionRun, opts: AgentOptions) -> RetrievalResult:
    """One tool-using agent: index in, fetch_section calls, an answer with sources out."""
    prompt = load_prompt(PROMPT_VERSION)
    index = await run.index(max_depth=opts.index_depth, summaries=opts.summaries, role="agent")
    messages = prompt.messages(question=run.query, index=index, injection_notice=INJECTION_NOTICE)
    end = await run_tool_loop(
        run,
        messages,
        AnswerWithSources,
        max_turns=opts.max_turns,
        role="agent",
        what="agent",
        format_hint="Either call fetch_section, or reply with the JSON object only "
        '({"status": "answer", ...} or {"status": "fail", ...}).',
        max_tokens=opts.max_tokens,
    )
    reply = end.reply
    if reply is None:
        reason = f"no answer {end.reason}"
        run.event("decision", reason, stopped_by=end.stopped_by)
        if end.turns and end.malformed == end.turns:
            # Every reply was unusable (no tool call, no valid answer): the filing was never read, so a
            # "not found" would be unfounded; the model's output failed (ask exits 4, a run records the
            # kind), as for iterative's extractions.
            reason = f"{reason}: every reply was malformed"
            return run.result("fail", reason=reason, error_kind="invalid_reply")
        return run.result("fail", reason=reason)
    run.event("decision", f"turn {run.turns}: {reply.status}", reply=reply.model_dump(mode="json"))
    return run.result_from_answer(reply)
