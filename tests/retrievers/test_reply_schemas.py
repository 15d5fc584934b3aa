"""The JSON schemas models are asked to fill say what to return, nothing else.

pydantic puts a reply model's docstring and field descriptions into the schema instructor sends the
model; a developers' note once written into the LLM judge's docstring reached gemma-3-270m, which copied
it into its reasoning. Every reply model's descriptions are short instructions to the model.
"""

from __future__ import annotations

from typing import Any

import pytest

from bench.judges.llm import LLMVerdictOut
from pageindex.analyst.session_retriever import SessionReply
from pageindex.retrievers.followup import FollowupReply
from pageindex.retrievers.iterative import SynthesisReply
from pageindex.retrievers.planner import ExtractReply, GateReply
from pageindex.retrievers.planner_plan import Plan
from pageindex.retrievers.replies import AnswerWithSources

REPLIES = [AnswerWithSources, FollowupReply, SessionReply, SynthesisReply, Plan, ExtractReply, GateReply,
           LLMVerdictOut]  # fmt: skip


def descriptions(schema: Any) -> list[str]:
    if isinstance(schema, dict):
        own = [schema["description"]] if isinstance(schema.get("description"), str) else []
        return own + [d for value in schema.values() for d in descriptions(value)]
    if isinstance(schema, list):
        return [d for value in schema for d in descriptions(value)]
    return []


@pytest.mark.parametrize("model", REPLIES, ids=lambda m: m.__name__)
def test_a_reply_schema_holds_only_short_instructions(model):
    said = descriptions(model.model_json_schema())
    notes = [d for d in said if len(d) > 120 or "``" in d or "\n" in d]
    assert not notes, f"{model.__name__}'s schema carries notes the model reads: {notes}"
