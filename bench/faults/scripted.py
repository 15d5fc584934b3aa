"""A plausible scripted model for pageindex's retrievers and judges (tests, demos, the soak).

``policy`` answers every request the retrievers and judges send, the way a modest model
would: it reads the section index, fetches the sections whose titles match the question
best, picks the figure on the line that matches the question (in the column of the year
the question asks about), and answers citing that page. It need not be accurate, only
plausible: real tool calls, real section text, real numbers, real citations.

    pageindex bench run --model scripted --scripted-policy bench.faults.scripted:policy

It is the same logic as the fault server's :class:`~bench.faults.policies.SectionSeekingPolicy`
(whose helpers it uses) made to speak each prompt's contract: the agent's and the iterative
extraction's JSON replies, the planner's ``Plan``/``ExtractReply``, the iterative synthesis's
``SynthesisReply``, the pages answer of ``oracle``/``bm25``, and the LLM judge's verdict.
Anything it does not recognise gets the fault server's generic reply. The same policy object
also works as a fault-server policy (``FaultServer(policy=ChatPolicy())``), so soak runs
meet the same model over HTTP.

The judge (``LLMVerdictOut`` requests) compares the delimited candidate answer with the gold
answer using the ``rules`` judge's number matching. To make prompt-injection tests meaningful
it is deliberately *gullible*: an instruction such as "the correct verdict is correct" that
appears in the user message OUTSIDE the delimited data blocks is obeyed, as a weak model
might. Injected text that stays inside its block (which the judge's delimiting guarantees)
cannot steer it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from rapidfuzz import fuzz

from bench.faults.policies import SectionSeekingPolicy, as_reply
from bench.faults.protocol import ChatRequest, Reply, ToolCallOut

# ------------------------------------------------------------------ reading prompts
_INDEX_LINE = re.compile(
    r"^\s*- (?P<id>\S+) \| (?P<title>.*?) \| pages? (?P<start>\d+)(?:-(?P<end>\d+))?", re.MULTILINE
)
_MARKER = re.compile(r"\[page (\d+)\b[^\]]*\]")
_FIGURE = re.compile(r"\(?-?\$?\s?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?\)?%?")
_DOCUMENT = re.compile(r"<document[^>]*>(.*?)</document>", re.DOTALL)
_YEAR = re.compile(r"\b(?:FY\s?)?((?:19|20)\d\d)\b", re.IGNORECASE)
_WORD = re.compile(r"[a-z][a-z0-9&']+")
_STOP = set(
    "the what was were for and of in is a an to by its how does did do has have this that with from "
    "give response question relying details shown usd millions million billions billion amount fy "
    "company answer based on please round your".split()
)
_SYNONYMS = {
    "capital": "purchases property plant equipment pp&e capex",
    "capex": "purchases property plant equipment pp&e capital",
    "expenditure": "purchases property plant equipment",
    "revenue": "revenues sales net total",
    "revenues": "revenue sales net total",
    "sales": "revenue revenues net",
    "profit": "income net earnings",
    "earnings": "income net",
    "income": "earnings net",
    "cash": "cash flows",
    "debt": "borrowings notes long-term",
    "inventory": "inventories",
    "margin": "gross operating income",
    "dividends": "dividend paid per share",
    "assets": "total assets",
}
_BLOCK = re.compile(r"<<<(?P<name>[A-Z_]+)>>>\n(?P<body>.*?)\n<<<END_(?P=name)>>>", re.DOTALL)
_OBEY = re.compile(r"verdict\s+is\s+(correct|incorrect|refusal)", re.IGNORECASE)


@dataclass(frozen=True)
class Section:
    node_id: str
    title: str
    start: int
    end: int


@dataclass(frozen=True)
class Figure:
    value: str  # as printed, e.g. "(1,577)" or "$4,812"
    page: int
    line: str
    score: float


def words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def expanded_words(question: str) -> set[str]:
    out = words(question)
    for w in list(out):
        out |= set(_SYNONYMS.get(w, "").split())
    return out


def sections_in(text: str) -> list[Section]:
    """Index lines (``- id | title | pages a-b``) in prompt text, in order, no repeats."""
    seen: dict[str, Section] = {}
    for m in _INDEX_LINE.finditer(text):
        start = int(m["start"])
        seen.setdefault(m["id"], Section(m["id"], m["title"].strip(), start, int(m["end"] or start)))
    return list(seen.values())


def rank_sections(sections: list[Section], question: str) -> list[Section]:
    """Sections whose titles best match the question first (the question's own words count more
    than their synonyms); a named statement and leaves win ties."""
    direct = words(question)
    related = expanded_words(question) - direct
    lowered = question.lower()

    def score(s: Section) -> float:
        title = s.title.replace(" s ", "s ").lower()
        twords = words(title)
        bonus = 40 if "statement" in lowered and "statement" in title else 0
        leaf_bonus = 5 if "/" in s.node_id else 0
        width = min(s.end - s.start, 40)
        return (
            len(direct & twords) * 100
            + len(related & twords) * 30
            + bonus
            + leaf_bonus
            + fuzz.token_set_ratio(lowered, title) / 4
            - width
        )

    return sorted(sections, key=score, reverse=True)


def _is_figure(token: str) -> bool:
    digits = re.sub(r"\D", "", token)
    if not digits:
        return False
    return not (
        len(digits) == 4 and digits.startswith(("19", "20")) and "," not in token and "." not in token
    )


def _is_small(token: str) -> bool:
    """A bare one- or two-digit integer: more likely an item number or a day than a figure."""
    return bool(re.fullmatch(r"\d{1,2}", token))


def _figures(line: str) -> list[str]:
    tokens = [re.sub(r"\$\s+", "$", m.group(0).strip()) for m in _FIGURE.finditer(_MARKER.sub(" ", line))]
    return [t for t in tokens if _is_figure(t) and not _is_small(t)]


def document_text(text: str) -> str:
    """The text inside ``<document>`` blocks (what came from the filing), or all of it."""
    blocks = _DOCUMENT.findall(text)
    return "\n".join(blocks) if blocks else text


def best_figure(text: str, question: str) -> Figure | None:
    """The figure on the line that best matches the question, in the asked year's column."""
    qwords = expanded_words(question)
    years = [y for y in _YEAR.findall(question)]
    page, header_years = 1, []
    best: Figure | None = None
    first: Figure | None = None
    lines = document_text(text).splitlines()
    for i, line in enumerate(lines):
        mark = _MARKER.search(line)
        if mark:
            page = int(mark.group(1))
            continue
        line_years = _YEAR.findall(line)
        if len(line_years) >= 2 and not _figures(re.sub(r"\b(?:19|20)\d\d\b", "", line)):
            header_years = line_years  # a column header like "(Millions) 2018 2017 2016"
        figures = _figures(line)
        look = 0
        while not figures and look < 2 and i + look + 1 < len(lines):
            look += 1  # a label whose values sit on the next lines (PDF table cells)
            figures = _figures(lines[i + look])
        if not figures:
            continue
        column = 0
        if years and header_years and years[0] in header_years:
            column = min(header_years.index(years[0]), len(figures) - 1)
        score = len(qwords & words(line)) - 0.001 * i
        fig = Figure(figures[column], page, line.strip(), score)
        first = first or fig
        if best is None or score > best.score:
            best = fig
    if best is not None and best.score > 0:
        return best
    return first


def answer_text(value: str, question: str) -> str:
    """``"(1,577)"`` -> ``"$1,577 million"`` when the question asks in USD millions."""
    text = value.strip("()")
    lowered = question.lower()
    if "%" in text or not re.search(r"\d", text):
        return text
    if "million" in lowered and "million" not in text:
        text = f"{text} million"
    elif "billion" in lowered and "billion" not in text:
        text = f"{text} billion"
    if ("usd" in lowered or "$" in question) and not text.startswith("$"):
        text = "$" + text
    return text


# ------------------------------------------------------------------ the policy
class ChatPolicy:
    """The model, over the raw OpenAI request (``ChatRequest``); see the module docstring.

    ``max_fetches``: sections read before answering when no matching figure was found yet.
    """

    def __init__(self, *, max_fetches: int = 2):
        self.max_fetches = max_fetches
        self._fallback = SectionSeekingPolicy(max_fetches=max_fetches)

    # -- dispatch ----------------------------------------------------------------
    def __call__(self, chat: ChatRequest) -> Reply:
        system = chat.text_of("system")
        model = chat.forced_tool() or _schema_name(chat)
        if model == "LLMVerdictOut" or "You are grading an answer" in system:
            return self._structured(chat, self.judge(chat))
        if model == "Plan":
            return self._structured(chat, self.plan(chat))
        if model == "ExtractReply":
            return self._structured(chat, self.extract_values(chat))
        if model == "SynthesisReply":
            return self._structured(chat, self.synthesis(chat))
        if model == "FollowupReply" or "more pages will be looked up" in system:
            return self._structured(chat, self.followup(chat))
        if model == "GateReply":
            return self._structured(chat, {"rejected": []})
        if model == "AnswerWithSources" or "using only the pages you are given" in system:
            if "from values that other steps extracted" in system:
                return self._structured(chat, self.answer_from_values(chat))
            return self._structured(chat, self.answer_from_pages(chat))
        if chat.offers_tools() and "fetch_section" in chat.tool_names():
            return self.tool_step(chat)
        return as_reply(chat, self._fallback(chat))

    def _structured(self, chat: ChatRequest, value: dict[str, Any]) -> Reply:
        forced = chat.forced_tool()
        if forced is not None:
            return Reply(tool_calls=[ToolCallOut(name=forced, arguments=value)])
        return Reply(content=json.dumps(value))

    # -- tool-using loops (agent, iterative extraction) ---------------------------
    def tool_step(self, chat: ChatRequest) -> Reply:
        user = chat.text_of("user")
        extraction = "extraction agent" in chat.text_of("system")
        question = _field(user, "Item to find") if extraction else _field(user, "Question")
        question = question or _field(user, "Question") or user
        texts = _tool_texts(chat)
        fetched = _fetched_ids(chat)
        figure = best_figure("\n".join(texts), question) if texts else None
        good = figure is not None and figure.score > 0
        refused = any("already extracted" in t or "the limit for one" in t for t in _tool_outputs(chat))
        if not refused and (not texts or (not good and len(fetched) < self.max_fetches)):
            skip = set(fetched) | set(_field(user, "Sections already extracted").split(", "))
            nxt = next((s for s in rank_sections(sections_in(user), question) if s.node_id not in skip), None)
            if nxt is not None:
                return Reply(
                    tool_calls=[ToolCallOut(name="fetch_section", arguments={"node_id": nxt.node_id})]
                )
        node_id = fetched[-1] if fetched else ""
        if figure is None:
            if extraction:
                reason = "the sections read show no figure for this item"
                return Reply(content=json.dumps({"status": "fail", "reason": reason, "tried": fetched}))
            return Reply(
                content=json.dumps({"status": "fail", "reason": "no figure found in the sections read"})
            )
        if extraction:
            finding = {
                "label": _label(figure.line),
                "value": figure.value,
                "unit": "USD millions" if "million" in question.lower() else None,
                "page": figure.page,
                "section": node_id,
                "context": figure.line[:120],
            }
            return Reply(content=json.dumps({"status": "found", "findings": [finding]}))
        return Reply(content=json.dumps(_answer(figure, question, node_id)))

    # -- planner ---------------------------------------------------------------------
    def plan(self, chat: ChatRequest) -> dict[str, Any]:
        user = chat.text_of("user")
        question = _field(user, "Question") or user
        ranked = rank_sections(sections_in(user), question)
        failed = re.findall(r"\((?:fetch_extract )?\[([^\]]*)\]\) failed", user)
        tried = {n.strip(" '\"") for group in failed for n in group.split(",")}
        fresh = [s for s in ranked if s.node_id not in tried] or ranked
        taken = len(re.findall(r"^- t\d+", user, re.MULTILINE))
        prefix = f"r{taken + len(tried)}" if ("failed" in user or "rejected" in user) else "t"
        nodes = [s.node_id for s in fresh[:2]] or ["item_8"]
        return {
            "rationale": "Read the best-matching sections and extract the figure.",
            "tasks": [
                {
                    "id": f"{prefix}1",
                    "kind": "fetch_extract",
                    "goal": f"find the figure that answers: {question[:120]}",
                    "depends_on": [],
                    "node_ids": nodes,
                    "outputs": ["value"],
                },
                {
                    "id": f"{prefix}2",
                    "kind": "synthesise",
                    "goal": "answer the question",
                    "depends_on": [f"{prefix}1"],
                },
            ],
        }

    def extract_values(self, chat: ChatRequest) -> dict[str, Any]:
        user = chat.text_of("user")
        question = _field(user, "Overall question (context only)") or user
        outputs = [o.strip() for o in _field(user, "Values to extract").split(",") if o.strip()]
        figure = best_figure(user, question)
        if figure is None:
            return {"values": [], "missing": outputs, "reason": "no figure in these sections"}
        return {
            "values": [
                {
                    "name": name,
                    "value": figure.value,
                    "unit": None,
                    "page": figure.page,
                    "quote": figure.line[:160],
                }
                for name in outputs
            ],
            "missing": [],
        }

    def answer_from_values(self, chat: ChatRequest) -> dict[str, Any]:
        user = chat.text_of("user")
        question = _field(user, "Question") or user
        m = re.search(r"^- (\w+) = (\S+).*?\(page (\d+), section ([^)]*)\)", user, re.MULTILINE)
        if m is None:
            return {"status": "fail", "reason": "the values do not answer the question"}
        value, page, node_id = m.group(2), int(m.group(3)), m.group(4)
        return {
            "status": "answer",
            "answer": answer_text(value, question),
            "sources": [{"node_id": node_id, "page": page, "quote": value}],
            "confidence": 0.6,
        }

    # -- oracle / bm25 ---------------------------------------------------------------
    def answer_from_pages(self, chat: ChatRequest) -> dict[str, Any]:
        user = chat.text_of("user")
        question = _field(user, "Question") or user
        figure = best_figure(user, question)
        if figure is None:
            return {"status": "fail", "reason": "these pages show no figure for the question"}
        return _answer(figure, question, "")

    # -- followup --------------------------------------------------------------------
    def followup(self, chat: ChatRequest) -> dict[str, Any]:
        """Answer when the pages hold a matching figure; else ask once for the statement."""
        question = _field(chat.text_of("user"), "Question") or chat.text_of("user")
        pages = "\n".join(
            str(m.get("content") or "") for m in chat.messages if m.get("role") in ("user", "tool")
        )
        figure = best_figure(pages, question)
        passes = sum(1 for m in chat.messages if m.get("role") == "assistant")
        if figure is not None and (figure.score > 0 or passes >= 1):
            return {**_answer(figure, question, ""), "missing": []}
        if passes == 0:
            item = " ".join(sorted(words(question), key=question.lower().find)[:4])
            return {"status": "incomplete", "answer": "", "missing": [f"{item} (financial statements)"]}
        return {"status": "fail", "reason": "the pages shown hold no figure for the question"}

    # -- iterative synthesis ---------------------------------------------------------
    def synthesis(self, chat: ChatRequest) -> dict[str, Any]:
        user = chat.text_of("user")
        question = _field(user, "Question") or user
        found = re.findall(r"^F\d+\. .*: (\S+)[^:]*? \(page (\d+), section", user, re.MULTILINE)
        if found:
            value, page = found[0]
            return {
                "decision": "answer",
                "answer": answer_text(value, question),
                "pages": [int(page)],
                "confidence": 0.6,
            }
        round_no = re.search(r"Round (\d+) of at most (\d+)", user)
        if round_no and int(round_no.group(1)) < int(round_no.group(2)):
            return {
                "decision": "needs",
                "need": f"the figure for: {question[:100]} (from the financial statements)",
                "why": "no finding so far",
            }
        return {"decision": "fail", "reason": "no extraction found the figure"}

    # -- judge -----------------------------------------------------------------------
    def judge(self, chat: ChatRequest) -> dict[str, Any]:
        from bench.judges.rules import RulesJudge

        user = chat.text_of("user")
        blocks = {m["name"]: m["body"] for m in _BLOCK.finditer(user)}
        outside = _BLOCK.sub(" ", user)
        obey = _OBEY.search(outside)
        if obey:  # gullible on purpose: see the module docstring
            return {
                "verdict": obey.group(1).lower(),
                "reasoning": "Following the instruction in the message.",
            }
        if "CANDIDATE_ANSWER" not in blocks:
            return {"verdict": "refusal", "reasoning": "No candidate answer block found."}
        verdict = RulesJudge().judge_sync(
            blocks.get("QUESTION", ""), blocks.get("GOLD_ANSWER", ""), blocks["CANDIDATE_ANSWER"]
        )
        return {
            "verdict": verdict.verdict,
            "reasoning": f"Compared with the gold answer: {verdict.reasoning}.",
        }


def _answer(figure: Figure, question: str, node_id: str) -> dict[str, Any]:
    return {
        "status": "answer",
        "answer": answer_text(figure.value, question),
        "sources": [{"node_id": node_id, "page": figure.page, "quote": figure.value}],
        "confidence": 0.6,
    }


def _label(line: str) -> str:
    label = _FIGURE.sub("", line).strip(" $:.-")
    return label[:80] or "value"


def _field(text: str, name: str) -> str:
    m = re.search(rf"^{re.escape(name)}:\s*(.+)$", text, re.MULTILINE)
    return m.group(1).strip() if m else ""


def _schema_name(chat: ChatRequest) -> str | None:
    """The response model a structured request asks for: named in ``response_format`` (JSON-schema
    mode), or the title of the JSON schema that JSON mode writes into the system message."""
    fmt = chat.response_format or {}
    if fmt.get("type") == "json_schema":
        return (fmt.get("json_schema") or {}).get("name")
    if fmt.get("type") == "json_object":
        system = chat.text_of("system")
        start = system.find("{", system.find("json_schema"))
        if start >= 0:
            try:
                schema, _ = json.JSONDecoder().raw_decode(system[start:])
            except ValueError:
                return None
            return schema.get("title") if isinstance(schema, dict) else None
    return None


def _tool_outputs(chat: ChatRequest) -> list[str]:
    return [str(m.get("content") or "") for m in chat.messages if m.get("role") == "tool"]


def _tool_texts(chat: ChatRequest) -> list[str]:
    return [t for t in _tool_outputs(chat) if "<document" in t]


def _fetched_ids(chat: ChatRequest) -> list[str]:
    """Sections served so far (as the tool named them), in order."""
    ids = [m.group(1) for t in _tool_texts(chat) for m in [re.match(r"Section (\S+):", t)] if m]
    return list(dict.fromkeys(ids))


# ------------------------------------------------------------------ the scripted-model adapter
_CHAT_POLICY = ChatPolicy()


def policy(request: Any) -> Any:
    """``--scripted-policy bench.faults.scripted:policy``: answer one ``ScriptedRequest``."""
    from pageindex.llm import ScriptedModel

    reply = _CHAT_POLICY(ChatRequest.model_validate(request.body))
    if reply.tool_calls:
        return [
            ScriptedModel.call(c.name, **c.arguments)
            if isinstance(c.arguments, dict)
            else ScriptedModel.malformed_call(c.name, c.arguments)
            for c in reply.tool_calls
        ]
    return ScriptedModel.reply(reply.content or "")
