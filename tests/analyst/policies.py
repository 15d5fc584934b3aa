"""A scripted "analyst" model for the analyst tests and the pseudo-terminal session.

It plays every role the analyst uses, reading only what it is sent (like a real model):

- extraction (iterative): for a capex question it fetches the cash-flow statement(s) named in the
  index and reports the purchases-of-PP&E line it finds in the text it got back, with the page
  from the ``[page N ...]`` marker above it; for anything else (e.g. bitcoin) it reads the
  risk-factor section and fails;
- synthesis: answers from findings (citing their pages), fails when it only has failed searches;
- session (``SessionReply``): answers when the offered material shows a PP&E purchase, else "search".

Facts it relies on (checked in the tests): 3M_2018_10K's cash-flow statement ``item_8/cash_flows``
is PDF page 60 and shows ``(1,577)``; AMCOR_2023Q4_EARNINGS's ``cash_flows`` is page 9 and shows
``(527)`` for purchases of property, plant, and equipment.
"""

from __future__ import annotations

import json
import re

from pageindex.llm import ScriptedModel, ScriptedRequest

CAPEX_Q = "What was 3M's capital expenditure in FY2018, in USD millions (cash flow statement)?"
FOLLOWUP_Q = "How much did 3M pay for purchases of property, plant and equipment in 2018?"
MISSING_Q = "How many bitcoin did 3M hold at the end of 2018?"
COMPARE_Q = "Compare capital expenditure (purchases of PP&E) of 3M in FY2018 and Amcor in FY2023."

_MARKER = re.compile(r"\[page (\d+)\b[^\]]*\]")
_PPE_LINE = re.compile(r"Purchases? of property,? plant,? (?:and|&) equipment[^\n]*?(\(\d[\d,]*\))", re.I)
_INDEX_LINE = re.compile(r"^\s*- (\S+) \| ([^|]+) \|", re.M)


def _user(req: ScriptedRequest) -> str:
    return "\n".join(m.content or "" for m in req.messages if m.role == "user")


def _question(req: ScriptedRequest) -> str:
    text = _user(req)
    for label in ("Overall question (context only):", "Question:"):
        if label in text:
            return text.split(label, 1)[1].strip().splitlines()[0]
    return text


def ppe_values(text: str) -> list[tuple[int, str]]:
    """(page, value) of every purchases-of-PP&E line in marked text."""
    out: list[tuple[int, str]] = []
    pieces = _MARKER.split(text)
    for i in range(1, len(pieces) - 1, 2):
        page, body = int(pieces[i]), pieces[i + 1]
        out += [(page, m.group(1)) for m in _PPE_LINE.finditer(body)]
    return out


def _cash_flow_ids(index_text: str) -> list[str]:
    """The cash-flow statement of each document in the index (statements before MD&A sections)."""
    rows = [(m.group(1), m.group(2).lower().replace(" ", "")) for m in _INDEX_LINE.finditer(index_text)]
    rows = [(i, t) for i, t in rows if "cashflow" in t]
    rows.sort(key=lambda r: "statement" not in r[1])
    chosen: dict[str, str] = {}
    for node_id, _ in rows:
        chosen.setdefault(node_id.split(":")[0] if ":" in node_id else "", node_id)
    return list(chosen.values())


def _is_capex(question: str) -> bool:
    q = question.lower()
    return any(w in q for w in ("capital expenditure", "capex", "property, plant", "pp&e"))


def _extraction(req: ScriptedRequest):
    question = _question(req)
    if not req.tool_results:
        if _is_capex(question):
            return [ScriptedModel.call("fetch_section", node_id=i) for i in _cash_flow_ids(_user(req))]
        return ScriptedModel.call("fetch_section", node_id="Item 1A. Risk Factors")
    read = "\n".join(m.content or "" for m in req.tool_results)
    found = ppe_values(read) if _is_capex(question) else []
    if not found:
        tried = re.findall(r"^Section (\S+):", read, re.M)
        return json.dumps({"status": "fail", "reason": "the sections read do not mention it", "tried": tried})
    sections = re.findall(r"^Section (\S+):", read, re.M)
    findings = [
        {
            "label": "Purchases of property, plant and equipment",
            "value": value,
            "unit": "USD millions",
            "page": page,
            "section": sections[min(i, len(sections) - 1)] if sections else "",
            "context": "fiscal year",
        }
        for i, (page, value) in enumerate(found)
    ]
    return json.dumps({"status": "found", "findings": findings})


def _synthesis(req: ScriptedRequest) -> dict:
    text = _user(req)
    lines = re.findall(r"^F\d+\. .*?: (\(\d[\d,]*\)).*?\(page (\d+), section", text, re.M)
    if lines:
        answer = "; ".join(f"{v.strip('()')} million (page {p})" for v, p in lines)
        return {
            "decision": "answer",
            "answer": f"Purchases of PP&E: {answer}",
            "pages": [int(p) for _, p in lines],
            "confidence": 0.9,
        }
    return {
        "decision": "fail",
        "reason": "the filing does not report this; the sections searched do not mention it",
    }


def _session(req: ScriptedRequest) -> dict:
    text = _user(req)
    question = _question(req)
    hit = re.search(r"^F\d+\. [^\n]*?: (\(\d[\d,]*\))[^\n]*?\(page (\d+), section (\S+?)[;)]", text, re.M)
    if _is_capex(question) and hit:
        value, page, section = hit.group(1), int(hit.group(2)), hit.group(3)
        return {
            "decision": "answer",
            "answer": f"{value.strip('()')} million USD (purchases of PP&E)",
            "sources": [{"node_id": section, "page": page, "quote": value}],
            "confidence": 0.85,
        }
    return {"decision": "search", "missing": "nothing read so far covers this question"}


def analyst_policy(req: ScriptedRequest):
    if req.response_model == "SessionReply":
        return _session(req)
    if req.response_model == "SynthesisReply":
        return _synthesis(req)
    return _extraction(req)
