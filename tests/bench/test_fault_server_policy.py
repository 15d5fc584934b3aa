"""The default policy: a tool-using exchange over a real section index and fetch tool, and
structured replies that instructor accepts in every mode."""

from __future__ import annotations

import json
from typing import Literal

import instructor
import openai
import pytest
from instructor.core.exceptions import InstructorRetryException
from pydantic import BaseModel, Field, ValidationError

from bench.faults import FaultServer, SectionSeekingPolicy
from bench.faults.policies import index_entries
from bench.faults.protocol import ChatRequest
from bench.faults.schema_fill import Hints, fill_schema, wrong_types
from pageindex.llm.types import ToolCall
from pageindex.retrievers.index import render_index
from pageindex.retrievers.tools import FETCH_SECTION_TOOL, SectionFetcher
from pageindex.tree.model import Node, Tree

PAGES = [
    "ACME CORP\nAnnual Report on Form 10-K for fiscal 2022",
    "Item 1. Business\nAcme makes anvils. We employ 1,200 people in 14 countries.",
    "Item 7. Management's Discussion and Analysis\nOperating margin improved to 18% in 2022.",
    "Note 3. Revenue\nTotal revenue for fiscal 2022 was $4,812 million compared with $4,100 million in 2021.",
]
QUESTION = "What was total revenue in fiscal 2022?"


def make_tree() -> Tree:
    def node(node_id: str, title: str, page: int) -> Node:
        return Node(node_id=node_id, title=title, level=0, kind="item", start_page=page, end_page=page)

    return Tree(
        doc_id="ACME_2022_10K",
        source="acme.pdf",
        sha256="0" * 64,
        page_count=len(PAGES),
        builder_version="test",
        page_labels={"4": "F-7"},
        nodes=[
            node("cover", "Cover page", 1),
            node("item_1", "Item 1. Business", 2),
            node("item_7", "Item 7. Management's Discussion and Analysis", 3),
            node("note_3", "Note 3. Revenue", 4),
        ],
        pages=PAGES,
    )


def tool_param(spec) -> dict:
    return {"type": "function", "function": spec.model_dump()}


def run_exchange(
    srv: FaultServer, tools: list[dict], max_turns: int = 6, after_first_turn=None
) -> tuple[list[dict], list]:
    """A minimal agent loop: the model calls tools, the real SectionFetcher answers them."""
    tree = make_tree()
    fetcher = SectionFetcher(tree)
    api = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0, timeout=5)
    convo: list[dict] = [
        {"role": "system", "content": "Answer from the filing.\n" + render_index(tree)},
        {"role": "user", "content": f"Question: {QUESTION}"},
    ]
    replies = []
    for _ in range(max_turns):
        message = api.chat.completions.create(model="m", messages=convo, tools=tools).choices[0].message
        replies.append(message)
        if after_first_turn is not None and len(replies) == 1:
            after_first_turn()
        convo.append(message.model_dump(exclude_none=True))
        calls = [c for c in message.tool_calls or [] if c.function.name == "fetch_section"]
        if not calls:
            break
        for call in calls:
            tool_message, _ = fetcher.call(
                ToolCall(id=call.id, name="fetch_section", arguments=json.loads(call.function.arguments))
            )
            convo.append({"role": "tool", "tool_call_id": call.id, "content": tool_message.content})
    return convo, replies


def test_two_step_tool_exchange_over_a_real_index():
    with FaultServer() as srv:
        convo, replies = run_exchange(srv, [tool_param(FETCH_SECTION_TOOL)])
        stats = srv.stats()
    assert len(replies) == 2
    first = json.loads(replies[0].tool_calls[0].function.arguments)
    assert first == {"node_id": "note_3"}  # the title that matches the question
    assert "$4,812 million" in convo[3]["content"]  # the fetch tool really served the section
    assert replies[1].content == "The answer is $4,812 (page 4, section note_3)."
    assert "$4,812" in make_tree().page_text(4)
    assert stats.by_fault == {"none": 2} and stats.chat_requests == 2


def test_answer_tool_is_used_when_offered():
    submit = {
        "type": "function",
        "function": {
            "name": "submit_answer",
            "description": "Give the final answer.",
            "parameters": {
                "type": "object",
                "properties": {
                    "answer": {"type": "string"},
                    "pages": {"type": "array", "items": {"type": "integer"}},
                    "node_id": {"type": "string"},
                },
                "required": ["answer", "pages", "node_id"],
            },
        },
    }
    with FaultServer() as srv:
        _, replies = run_exchange(srv, [tool_param(FETCH_SECTION_TOOL), submit])
    final = replies[-1].tool_calls[0]
    assert final.function.name == "submit_answer"
    assert json.loads(final.function.arguments) == {
        "answer": "$4,812",
        "pages": [4],
        "node_id": "note_3",
    }


def test_recovers_from_a_missing_section_through_the_candidates():
    with FaultServer(rate=1.0, faults=["bad_section"]) as srv:
        convo, replies = run_exchange(
            srv, [tool_param(FETCH_SECTION_TOOL)], after_first_turn=lambda: srv.configure(rate=0.0)
        )
        stats = srv.stats()
    asked = [json.loads(r.tool_calls[0].function.arguments)["node_id"] for r in replies if r.tool_calls]
    assert asked[0] == "no_such_section_999"
    assert convo[3]["content"].startswith('No section matches "no_such_section_999"')
    assert asked[1:] == ["note_3"]  # the candidate list and index lead to the right section
    assert replies[-1].content == "The answer is $4,812 (page 4, section note_3)."
    assert stats.by_fault == {"bad_section": 1, "none": 2}


# ------------------------------------------------------------------ structured replies
class Finding(BaseModel):
    label: str
    value: str
    unit: str | None = None
    page: int = Field(ge=1)
    section: str
    context: str = Field(min_length=5)


class Extraction(BaseModel):
    findings: list[Finding] = Field(min_length=1)
    tried: list[str] = Field(default_factory=list)


class Decision(BaseModel):
    kind: Literal["answer", "needs", "fail"]
    answer: str | None
    pages: list[int]
    confidence: float = Field(ge=0, le=1)
    need: str | None = None


STRUCTURED_PROMPT = [
    {"role": "system", "content": "Extract figures."},
    {"role": "user", "content": f"Question: {QUESTION}\n[page 4 | printed F-7]\n{PAGES[3]}"},
]


@pytest.mark.parametrize(
    "mode",
    [instructor.Mode.TOOLS, instructor.Mode.JSON, instructor.Mode.JSON_SCHEMA, instructor.Mode.MD_JSON],
)
def test_instructor_gets_valid_objects_in_every_mode(mode):
    with FaultServer() as srv:
        api = instructor.from_openai(
            openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0), mode=mode
        )
        extraction = api.chat.completions.create(
            model="m", response_model=Extraction, messages=STRUCTURED_PROMPT, max_retries=0
        )
        decision = api.chat.completions.create(
            model="m", response_model=Decision, messages=STRUCTURED_PROMPT, max_retries=0
        )
    finding = extraction.findings[0]
    assert (finding.value, finding.page) == ("$4,812", 4)
    assert decision.kind == "answer" and decision.answer == "$4,812" and decision.pages == [4]


def test_needs_more_fault_chooses_the_needs_branch():
    with FaultServer(rate=1.0, faults=["needs_more"]) as srv:
        api = instructor.from_openai(openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0))
        for _ in range(3):
            decision = api.chat.completions.create(
                model="m", response_model=Decision, messages=STRUCTURED_PROMPT, max_retries=0
            )
            assert decision.kind == "needs"


def test_bad_args_fault_fails_validation_and_instructor_retries_are_counted():
    with FaultServer(rate=1.0, faults=["bad_args"]) as srv:
        api = instructor.from_openai(openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0))
        with pytest.raises(InstructorRetryException):
            api.chat.completions.create(
                model="m", response_model=Decision, messages=STRUCTURED_PROMPT, max_retries=2
            )
        stats = srv.stats()
    assert stats.by_fault == {"bad_args": 3} and stats.chat_requests == 3


# ------------------------------------------------------------------ schema filling and index parsing
class Source(BaseModel):
    node_id: str
    page: int


class Answer(BaseModel):
    kind: Literal["answer"]
    text: str = Field(min_length=3, max_length=40)
    sources: list[Source] = Field(min_length=2)


class Failure(BaseModel):
    kind: Literal["fail"]
    reason: str


class Outcome(BaseModel):
    result: Answer | Failure
    count: int = Field(ge=3, le=9)
    flag: bool
    note: str | None


@pytest.mark.parametrize("model", [Finding, Extraction, Decision, Outcome, Source])
def test_filled_objects_validate_and_wrong_types_do_not(model: type[BaseModel]):
    schema = model.model_json_schema()
    value = fill_schema(schema, Hints(answer="7", page=3, node_id="item_8"))
    model.model_validate(value)
    with pytest.raises(ValidationError):
        model.model_validate(wrong_types(value))


def test_fill_prefers_the_hinted_branch():
    schema = Outcome.model_json_schema()
    assert fill_schema(schema, Hints(choice="fail"))["result"]["kind"] == "fail"
    answer = fill_schema(schema, Hints(choice="answer", node_id="item_8", page=9))["result"]
    assert answer["kind"] == "answer" and answer["sources"] == [{"node_id": "item_8", "page": 9}] * 2


def test_index_entries_from_several_formats():
    tree = make_tree()
    rendered = ChatRequest(messages=[{"role": "system", "content": render_index(tree)}])
    assert [(e.node_id, e.title) for e in index_entries(rendered)] == [
        ("cover", "Cover page"),
        ("item_1", "Item 1. Business"),
        ("item_7", "Item 7. Management's Discussion and Analysis"),
        ("note_3", "Note 3. Revenue"),
    ][1:]  # "cover" has no digit, underscore or dot: not recognisable as an id in free text
    other = ChatRequest(
        messages=[
            {
                "role": "system",
                "content": '[{"node_id": "0007", "title": "Liquidity", "start_page": 40}]',
            },
            {"role": "user", "content": "[1.2] Segment results (pp. 3-5)\nid=n42 title=Risk Factors"},
        ]
    )
    assert [(e.node_id, e.title) for e in index_entries(other)] == [
        ("0007", "Liquidity"),
        ("1.2", "Segment results"),
        ("n42", "Risk Factors"),
    ]


def test_policy_is_pluggable():
    seen: list[ChatRequest] = []

    def policy(request: ChatRequest) -> str:
        seen.append(request)
        return f"echo: {request.messages[-1]['content']}"

    with FaultServer(policy=policy) as srv:
        api = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0)
        reply = api.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], temperature=0
        )
    assert reply.choices[0].message.content == "echo: hi"
    assert len(seen) == 1 and seen[0].model == "m"
    assert isinstance(SectionSeekingPolicy()(seen[0]).content, str)


def test_a_failing_policy_is_a_counted_500():
    def policy(request: ChatRequest) -> str:
        raise RuntimeError("policy bug")

    with FaultServer(policy=policy) as srv:
        api = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0)
        with pytest.raises(openai.InternalServerError, match="policy bug"):
            api.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        assert srv.stats().by_fault == {"policy_error": 1}
