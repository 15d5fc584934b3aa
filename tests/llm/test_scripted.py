"""The scripted model through the real client: queue, policy, exact usage, tool-call errors."""

from __future__ import annotations

import asyncio
import math

import pytest
from pydantic import BaseModel

from pageindex.llm import (
    LLMCallError,
    LLMTimeout,
    Message,
    OutputTruncated,
    ScriptedExhausted,
    ScriptedModel,
    ToolCallError,
    ToolSpec,
    UsageLedger,
    make_client,
)

FETCH = ToolSpec(
    name="fetch_section",
    description="Return the text of a section.",
    parameters={
        "type": "object",
        "properties": {"node_id": {"type": "string"}, "max_chars": {"type": "integer"}},
        "required": ["node_id"],
    },
)
SECTIONS = {"item_7": "Management's Discussion", "item_8": "Financial Statements"}


class Answer(BaseModel):
    answer: str
    pages: list[int]


def user(text: str) -> list[Message]:
    return [Message(role="system", content="You answer questions."), Message(role="user", content=text)]


def test_queue_replies_in_order_with_exact_usage():
    sm = ScriptedModel(
        replies=[ScriptedModel.call("fetch_section", node_id="item_7"), "Revenue was $1,577 million."]
    )
    client = make_client("scripted", scripted=sm, role="retriever")

    async def run():
        first = await client.chat(user("What was revenue?"), tools=[FETCH], tag={"sample_id": "q1"})
        history = user("What was revenue?") + [
            Message(role="assistant", tool_calls=first.tool_calls),
            Message(role="tool", tool_call_id=first.tool_calls[0].id, content="Revenue: 1,577"),
        ]
        second = await client.chat(history, tools=[FETCH], tag={"sample_id": "q1"})
        return first, second

    first, second = asyncio.run(run())
    assert first.content is None and first.finish_reason == "tool_calls"
    [call] = first.tool_calls
    assert (call.name, call.arguments, call.error) == ("fetch_section", {"node_id": "item_7"}, None)
    assert second.content == "Revenue was $1,577 million." and second.tool_calls == []

    # Token rule: ceil(chars / 4) over message contents (+ tool-call arguments in the prompt).
    prompt_1 = len("You answer questions.") + len("What was revenue?")
    assert first.usage.prompt_tokens == math.ceil(prompt_1 / 4) == sm.requests[0].prompt_tokens
    assert first.usage.completion_tokens == math.ceil(len('{"node_id": "item_7"}') / 4) == 6
    prompt_2 = prompt_1 + len('{"node_id": "item_7"}') + len("Revenue: 1,577")
    assert second.usage.prompt_tokens == math.ceil(prompt_2 / 4) == sm.requests[1].prompt_tokens
    assert second.usage.completion_tokens == math.ceil(len("Revenue was $1,577 million.") / 4)

    # The scripted model saw exactly what the client sent.
    assert [t.name for t in sm.requests[0].tools] == ["fetch_section"]
    assert (
        sm.requests[1].messages[-1].role == "tool" and sm.requests[1].messages[-1].content == "Revenue: 1,577"
    )
    assert sm.requests[1].messages[-2].tool_calls[0].arguments == {"node_id": "item_7"}

    total = client.ledger.total(sample_id="q1")
    assert total.calls == 2
    assert total.prompt_tokens == first.usage.prompt_tokens + second.usage.prompt_tokens
    assert total.cost_usd is None  # "scripted" has no price: unknown, not zero
    assert client.spec == "scripted" and client.role == "retriever"


def test_policy_fetches_matching_section_then_answers():
    def policy(request):
        if not request.tool_results:
            wanted = "item_8" if "balance" in request.last_user.lower() else "item_7"
            return ScriptedModel.call("fetch_section", node_id=wanted)
        return f"Answer from: {request.tool_results[-1].content}"

    sm = ScriptedModel(policy=policy)
    client = make_client("scripted", scripted=sm)

    async def loop(question: str) -> str:
        messages = user(question)
        for _ in range(3):
            reply = await client.chat(messages, tools=[FETCH])
            if not reply.tool_calls:
                return reply.content
            messages.append(Message(role="assistant", tool_calls=reply.tool_calls))
            for call in reply.tool_calls:
                text = SECTIONS[call.arguments["node_id"]]
                messages.append(Message(role="tool", tool_call_id=call.id, content=text))
        raise AssertionError("no answer")

    assert asyncio.run(loop("What does the balance sheet show?")) == "Answer from: Financial Statements"
    assert asyncio.run(loop("Discuss results of operations")) == "Answer from: Management's Discussion"
    assert len(sm.requests) == 4


def test_async_policy_and_parallel_tool_calls():
    async def policy(request):
        await asyncio.sleep(0)
        return [
            ScriptedModel.call("fetch_section", node_id="item_7"),
            ScriptedModel.call("fetch_section", node_id="item_8"),
        ]

    client = make_client("scripted", scripted=ScriptedModel(policy=policy))
    reply = asyncio.run(client.chat(user("q"), tools=[FETCH]))
    assert [c.arguments["node_id"] for c in reply.tool_calls] == ["item_7", "item_8"]
    assert len({c.id for c in reply.tool_calls}) == 2


def test_structured_from_instance_and_dict_and_json_mode():
    sm = ScriptedModel(replies=[Answer(answer="42", pages=[3]), {"answer": "7", "pages": [1, 2]}])
    client = make_client("scripted", scripted=sm)
    first = asyncio.run(client.structured(user("q"), Answer))
    second = asyncio.run(client.structured(user("q"), Answer))
    assert first.value == Answer(answer="42", pages=[3]) and first.attempts == 1
    assert second.value.pages == [1, 2]
    assert sm.requests[0].response_model == "Answer" and not sm.requests[0].json_mode
    assert first.usage.completion_tokens == math.ceil(
        len(Answer(answer="42", pages=[3]).model_dump_json()) / 4
    )

    json_sm = ScriptedModel(replies=[{"answer": "9", "pages": []}])
    json_client = make_client("scripted", scripted=json_sm, json_mode=True)
    out = asyncio.run(json_client.structured(user("q"), Answer))
    assert out.value.answer == "9"
    assert json_sm.requests[0].json_mode and json_sm.requests[0].response_model == "Answer"
    assert json_sm.requests[0].tools == []  # JSON mode sends no tools


def test_malformed_unknown_and_mistyped_tool_calls_are_flagged_not_raised():
    sm = ScriptedModel(
        replies=[
            [
                ScriptedModel.malformed_call("fetch_section", '{"node_id": "item_7"'),
                ScriptedModel.call("delete_everything", node_id="x"),
                ScriptedModel.call("fetch_section", node_id=7),
                ScriptedModel.call("fetch_section", node_id="item_8", max_chars=100),
            ],
        ]
    )
    client = make_client("scripted", scripted=sm)
    reply = asyncio.run(client.chat(user("q"), tools=[FETCH]))
    malformed, unknown, mistyped, good = reply.tool_calls
    assert malformed.raw_arguments == '{"node_id": "item_7"' and malformed.arguments == {}
    assert "malformed JSON" in malformed.error
    assert "unknown tool 'delete_everything'" in unknown.error
    assert "node_id" in mistyped.error and "string" in mistyped.error
    assert good.ok and good.arguments == {"node_id": "item_8", "max_chars": 100}
    assert reply.bad_tool_calls == [malformed, unknown, mistyped]
    assert reply.usage.error == "bad_tool_call"
    assert client.ledger.records()[0].error == "bad_tool_call"
    with pytest.raises(ToolCallError) as info:
        malformed.raise_for_error()
    assert info.value.raw == '{"node_id": "item_7"'


def test_exception_replies_and_exhaustion():
    sm = ScriptedModel(replies=[LLMCallError("server on fire"), ValueError("weird")])
    client = make_client("scripted", scripted=sm)
    with pytest.raises(LLMCallError, match="server on fire"):
        asyncio.run(client.chat(user("q")))
    with pytest.raises(ValueError, match="weird"):
        asyncio.run(client.chat(user("q")))
    with pytest.raises(ScriptedExhausted, match="no reply left for request #2"):
        asyncio.run(client.chat(user("q")))
    assert len(client.ledger) == 0  # nothing was spent


def test_scripted_http_errors_go_through_sdk_retries():
    sm = ScriptedModel(
        replies=[
            ScriptedModel.http_error(429, retry_after=0.01),
            ScriptedModel.http_error(503),
            "fine",
            ScriptedModel.timeout(),
            ScriptedModel.timeout(),
        ]
    )
    client = make_client("scripted", scripted=sm, max_retries=2, timeout=0.05)
    reply = asyncio.run(client.chat(user("q")))
    assert reply.content == "fine" and len(sm.requests) == 3
    client_once = make_client("scripted", scripted=sm, max_retries=1, timeout=0.05)
    with pytest.raises(LLMTimeout, match="no reply within 0.05s after 2 attempt"):
        asyncio.run(client_once.chat(user("q")))
    assert len(sm.requests) == 5


def test_reply_token_overrides_and_pricing_of_named_model():
    ledger = UsageLedger()
    sm = ScriptedModel(
        replies=[
            ScriptedModel.reply(
                "x", prompt_tokens=1_000_000, completion_tokens=1_000_000, cached_tokens=400_000
            )
        ]
    )
    client = make_client("openai/gpt-4o-mini", scripted=sm, ledger=ledger, role="judge")
    reply = asyncio.run(client.chat(user("q")))
    # gpt-4o-mini: $0.15 input, $0.075 cached input, $0.60 output per 1M tokens
    assert reply.usage.cost_usd == pytest.approx(0.6 * 0.15 + 0.4 * 0.075 + 0.60)
    assert reply.usage.cached_tokens == 400_000 and reply.usage.role == "judge"
    assert ledger.total(role="judge").cost_usd == pytest.approx(0.72)
    assert sm.requests[0].body["model"] == "gpt-4o-mini" and sm.requests[0].temperature == 0.0


def test_bind_adds_tag():
    client = make_client("scripted", scripted=ScriptedModel(replies=["a", "b"]), tag={"retriever": "agent"})
    sample = client.bind(sample_id="s1")
    asyncio.run(sample.chat(user("q"), tag={"iteration": 0}))
    asyncio.run(client.chat(user("q")))
    assert client.ledger is sample.ledger
    assert client.ledger.records()[0].tag == {"retriever": "agent", "sample_id": "s1", "iteration": 0}
    assert client.ledger.by("sample_id").keys() == {"s1", None}
    assert client.ledger.total(retriever="agent").calls == 2


def test_truncated_structured_reply_is_a_typed_recorded_error():
    class Small(BaseModel):
        x: int

    sm = ScriptedModel(
        replies=[ScriptedModel.reply(value='{"x": 1', finish_reason="length", completion_tokens=3)]
    )
    client = make_client("scripted", scripted=sm)
    with pytest.raises(OutputTruncated, match="finish_reason: length") as info:
        asyncio.run(client.structured(user("q"), Small, max_tokens=3))
    assert "max_tokens=3" in str(info.value) and info.value.kind == "output_truncated"
    assert info.value.usage.completion_tokens == 3
    assert client.ledger.records()[0].error == "output_truncated"
    assert sm.requests[0].max_tokens == 3


def test_a_scripted_policy_given_by_name_keeps_no_request_but_counts_them(tmp_path):
    """Scale review: `--model scripted` kept every request it answered (its messages, tools and raw
    JSON: some 28 KB a sample), which no one reads; a run of 8,000 samples peaked at 756 MB. The model
    `bench run` and the CLI commands make of a policy function now only counts them; a ScriptedModel
    made in code keeps them, as tests read them."""
    from bench.config import RunConfig
    from bench.runner import Runner
    from pageindex.cli._common import scripted_client

    seen: list[int] = []

    def policy(request):
        seen.append(request.index)
        return "ok"

    config = RunConfig(data_dir=tmp_path, out=tmp_path / "run", model="scripted", scripted_policy="x:y")
    run_model = Runner(config, scripted=policy, command=["pageindex"])._scripted_for("scripted")
    for _ in range(3):
        assert asyncio.run(make_client("scripted", scripted=run_model).chat(user("hi"))).content == "ok"
    assert run_model.request_count == 3 and run_model.requests == [] and seen == [0, 1, 2]

    cli = scripted_client("bench.faults.scripted:policy")
    asyncio.run(cli.chat(user("What was revenue in FY2022?")))
    assert cli.scripted.request_count == 1 and cli.scripted.requests == []

    kept = ScriptedModel(policy=policy)
    asyncio.run(make_client("scripted", scripted=kept).chat(user("hi")))
    assert kept.request_count == 1 and [r.index for r in kept.requests] == [0]


def test_a_policy_that_raises_is_named_not_a_connection_error() -> None:
    """Session 24's trial: a --scripted-policy with a bug (it raised, or named a class, not a function) was
    `scripted (scripted): no reply: Connection error. (after 4 attempt(s))`, kind `connection`, and its
    exception was nowhere, not even in events.log; a plug-in provider's `complete()` is named so already."""

    def policy(request: object) -> str:
        raise ValueError("no rule for this prompt")

    client = make_client("scripted", scripted=ScriptedModel(policy=policy), max_retries=1)
    with pytest.raises(LLMCallError) as caught:
        asyncio.run(client.chat([Message(role="user", content="hi")]))
    assert caught.value.kind == "provider_error"
    assert str(caught.value) == (
        "scripted (scripted): the scripted model's policy raised ValueError: no rule for this prompt "
        "(after 2 attempt(s))"
    )
