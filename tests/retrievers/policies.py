"""Scripted-model policies and helpers shared by the agent/iterative/CLI tests.

Facts about ``3M_2018_10K`` they rely on (checked in test_tools.py): the cash-flow statement is
``item_8/cash_flows`` on PDF page 60 (printed 60) and shows ``(1,577)`` for 2018 purchases of
property, plant and equipment.
"""

from __future__ import annotations

import json
import re

from pageindex.llm import ScriptedModel, ScriptedRequest

CAPEX_Q = (
    "What is the FY2018 capital expenditure amount (in USD millions) for 3M? Give a response to the "
    "question by relying on the details shown in the cash flow statement."
)
CASH_FLOWS = "item_8/cash_flows"
CASH_FLOWS_PAGE = 60
_MARKER = re.compile(r"\[page (\d+)\b")


def shown_pages(sm: ScriptedModel) -> list[int]:
    """Every PDF page whose marked text appeared in a tool/user message the model was sent."""
    pages: set[int] = set()
    for req in sm.requests:
        for m in req.messages:
            if m.role in ("tool", "user") and m.content:
                pages.update(int(p) for p in _MARKER.findall(m.content))
    return sorted(pages)


def usage_of(sm: ScriptedModel, predicate=lambda r: True) -> tuple[int, int, int]:
    reqs = [r for r in sm.requests if predicate(r)]
    return sum(r.prompt_tokens for r in reqs), sum(r.completion_tokens for r in reqs), len(reqs)


def answer_json(
    answer: str, page: int, quote: str, node_id: str = CASH_FLOWS, confidence: float = 0.9
) -> str:
    return json.dumps(
        {
            "status": "answer",
            "answer": answer,
            "sources": [{"node_id": node_id, "page": page, "quote": quote}],
            "confidence": confidence,
        }
    )


def agent_capex_policy(req: ScriptedRequest):
    """Fetch the cash-flow statement (by its title, fuzzily), then answer citing page 60."""
    if not req.tool_results:
        return ScriptedModel.call("fetch_section", node_id="Consolidated Statement of Cash Flows")
    return answer_json("$1,577 million (purchases of PP&E, 2018)", CASH_FLOWS_PAGE, "(1,577)")


CAPEX_FINDING = {
    "label": "Purchases of property, plant and equipment (PP&E)",
    "value": "(1,577)",
    "unit": "USD millions",
    "page": CASH_FLOWS_PAGE,
    "section": CASH_FLOWS,
    "context": "year ended December 31, 2018",
}


def iterative_capex_policy(req: ScriptedRequest):
    """Extraction: fetch the cash-flow statement, report the PP&E line; synthesis: answer."""
    if req.response_model == "SynthesisReply":
        return {
            "decision": "answer",
            "answer": "$1,577 million",
            "pages": [CASH_FLOWS_PAGE],
            "confidence": 0.9,
        }
    if not req.tool_results:
        return ScriptedModel.call("fetch_section", node_id=CASH_FLOWS)
    return json.dumps({"status": "found", "findings": [CAPEX_FINDING]})


def never_valid_policy(request):
    """Answers every call with prose, never the JSON object asked for (an unusable model)."""
    return "The answer is somewhere in the filing."
