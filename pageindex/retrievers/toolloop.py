"""The tool-using loop the agent and the iterative extraction agent share: call the model with
``fetch_section`` (the last turn forbids tool calls: it asks for the answer), run the tool calls it
makes, and stop at the first reply that parses into the expected JSON model. A reply that does not
parse is sent back with the parse error and costs a turn. Without a valid reply the loop ends when
its turns run out or when the conversation no longer fits the model's context window;
:func:`run_tool_loop` says which, with the figures.

Pages count as fetched (``pages_fetched``) only once their text reached the model: the pages a tool
round serves are held (:func:`~pageindex.retrievers.tools.holding_pages`) and reported when the next
request, which carries the tool results, is answered (a request that fails shows nothing). A loop
that ends before that (the context is full) never counts them. Tool calls on the last turn (a server
that ignores ``tool_choice: "none"``) are not run at all: no turn is left to send their results to."""

from __future__ import annotations

import json
import math
from collections.abc import Awaitable, Callable
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel

from pageindex.llm.types import ContextLengthError, Message, ToolCall
from pageindex.llm.wire import prompt_chars
from pageindex.retrievers.base import TEMPLATE_TOKENS, QuestionRun
from pageindex.retrievers.replies import ReplyParseError, parse_json_reply
from pageindex.retrievers.tools import FETCH_SECTION_TOOL, PageHold, holding_pages

T = TypeVar("T", bound=BaseModel)
ToolRunner = Callable[[list[ToolCall]], Awaitable[list[Message]]]
REPLY_ROOM = 64  # tokens a known context window must keep free for the reply


class ToolLoopEnd(BaseModel, Generic[T]):
    """How a tool loop ended: its valid reply, or what stopped it without one."""

    reply: T | None = None
    stopped_by: Literal["reply", "max_turns", "context_full"] = "reply"
    turns: int = 0  # model calls this loop made
    malformed: int = 0  # of them, replies that were neither a tool call nor a valid reply
    # Without a reply: what stopped the loop, with its figures, worded to follow "no answer" ("within
    # max_turns=12"; "after 3 turn(s): the conversation no longer fits the model's context (...)").
    reason: str = ""


async def run_tool_loop(
    run: QuestionRun,
    messages: list[Message],
    reply_model: type[T],
    *,
    max_turns: int,
    role: str,
    what: str,
    format_hint: str,
    tag: dict[str, Any] | None = None,
    max_tokens: int | None = None,
    run_tools: ToolRunner | None = None,
) -> ToolLoopEnd[T]:
    """Loop until a valid ``reply_model`` reply or ``max_turns`` model calls (each counted in
    ``run.turns``), or until the conversation no longer fits the model's known context window; the
    end says which. ``what`` names the loop in trace events ("turn 3", "iteration 2");
    ``format_hint`` tells the model what a valid reply looks like; ``run_tools`` replaces the
    default tool runner (``run.run_tool_calls`` with repeats withheld)."""

    async def default_tools(calls: list[ToolCall]) -> list[Message]:
        return await run.run_tool_calls(calls, withhold_repeats=True)

    run_tools = run_tools or default_tools
    unsent = PageHold()  # pages of the last tool round, counted when its results go out
    malformed = 0
    sent: _Sent | None = None  # the last request: its messages and the prompt tokens the server counted

    def context_full(answered: int, turns: int, said: str, **figures: int) -> ToolLoopEnd[T]:
        """The loop's end when the conversation has outgrown the window (``said``: how it shows), after
        ``answered`` replies and ``turns`` model calls; the trace names the pages of tool results that
        never reached the model."""
        reason = f"after {answered} turn(s): the conversation no longer fits the model's context ({said})"
        unread = f"; pages {unsent.pages} of the last tool results never reached it" * bool(unsent.pages)
        run.event("info", f"{what}: stopping {reason}{unread}", **figures, unsent_pages=unsent.pages)
        return ToolLoopEnd(stopped_by="context_full", turns=turns, reason=reason, malformed=malformed)

    for turn in range(1, max_turns + 1):
        room = await _prompt_room(run, messages, sent) if turn > 1 else None
        if room is not None and room.tokens + REPLY_ROOM > room.window:
            said = (f"the next prompt, about {room.tokens:,} tokens, and {REPLY_ROOM} for a reply exceed its "
                    f"{room.window:,}-token window")  # fmt: skip
            figures = {"context_window": room.window, "prompt_tokens": room.tokens}
            return context_full(turn - 1, turn - 1, said, **figures)
        run.count_turn()
        # The last turn forbids tool calls (``tool_choice: "none"``; the tool stays declared, as
        # servers that check a history of tool calls against it want): a tool call there could
        # never be followed by a reply, so the model is asked for its answer. llama-cpp-python's
        # chatml-function-calling handler also keeps to max_tokens only then; in "auto" mode it
        # generates a plain reply to the end of the context.
        last = turn == max_turns
        try:
            resp = await run.chat(
                messages,
                tools=[FETCH_SECTION_TOOL],
                tool_choice="none" if last else "auto",
                role=role,
                tag={**(tag or {}), "turn": turn},
                max_tokens=max_tokens,
            )
        except ContextLengthError as exc:
            if turn == 1:  # the first prompt is the retriever's own sizing: an error
                raise
            # The estimate said the conversation fits and the server said otherwise (no tokenizer to
            # count a table of figures exactly): the loop has outgrown the window as surely as when
            # the estimate says so first, and ends the same way.
            from pageindex.llm.http import shorten  # here: the transport imports httpx2, not needed to start

            refused = f"the server refused the next prompt: {shorten(str(exc), 300)}"
            return context_full(turn - 1, turn, refused)
        unsent.release()  # the request that carried the last tool results was answered
        sent = _Sent(count=len(messages), prompt_tokens=resp.usage.prompt_tokens,
                     completion_tokens=resp.usage.completion_tokens, content=resp.content or "")  # fmt: skip
        if resp.tool_calls and last:
            run.event(
                "info",
                f"{what}: the last turn's reply asks for {len(resp.tool_calls)} tool call(s) despite "
                'tool_choice "none"; not run, as no turn is left to send their results to',
                tool_calls=[c.name for c in resp.tool_calls],
            )
            break
        if resp.tool_calls:
            messages.append(Message(role="assistant", content=resp.content, tool_calls=resp.tool_calls))
            with holding_pages() as unsent:
                messages += await run_tools(resp.tool_calls)
            continue
        try:
            return ToolLoopEnd(reply=parse_json_reply(resp.content, reply_model), turns=turn)
        except ReplyParseError as exc:
            malformed += 1
            run.event("error", f"{what}: malformed {role} reply: {exc}", raw=(resp.content or "")[:500])
            # Echo back only the start of an unusable reply: a rambling one (some servers ignore
            # max_tokens on plain replies) would otherwise fill the context window.
            messages.append(Message(role="assistant", content=_clip(resp.content or "")))
            messages.append(Message(role="user", content=f"Your reply was not valid: {exc}. {format_hint}"))
    return ToolLoopEnd(
        stopped_by="max_turns", turns=max_turns, reason=f"within max_turns={max_turns}", malformed=malformed
    )


ECHO_CHARS = 1200  # of an unusable reply sent back with the parse error


def _clip(text: str) -> str:
    if len(text) <= ECHO_CHARS:
        return text
    return text[:ECHO_CHARS].rsplit(" ", 1)[0] + " …"


class _Room(BaseModel):
    tokens: int  # the next prompt, by the client's calibrated estimate
    window: int  # the model's context window


class _Sent(BaseModel):
    count: int  # messages the request carried
    prompt_tokens: int  # as the server counted them
    completion_tokens: int  # of its reply
    content: str  # the reply's text


async def _prompt_room(run: QuestionRun, messages: list[Message], sent: _Sent | None) -> _Room | None:
    """The next call's prompt size against a known context window (None: the window is unknown,
    so the conversation is taken to fit): the prompt tokens the server counted for the last request,
    plus the messages added since (the reply echoed back at the tokens per character its reply was
    generated with, the others counted as the index is, each with its chat-template tokens). A
    characters-per-token estimate of the whole conversation fell short on a real llama.cpp server:
    gemma-3-270m's rambling replies, echoed back, made more tokens per character than the index, and a
    prompt estimated to fit a 2,048-token window was 2,061 tokens (HTTP 400). Without a usable count of
    the last request, the estimate is what is left."""
    llm = run.llm
    window = getattr(llm, "context_window", None)
    tokens = getattr(llm, "tokens", None)
    if not window or tokens is None:
        return None
    if sent is None or sent.prompt_tokens <= 0 or sent.count > len(messages):
        return _Room(tokens=tokens.fitting_estimate(prompt_chars(messages)), window=window)
    total = sent.prompt_tokens
    others: list[Message] = []
    for message in messages[sent.count:]:
        echoed = message.role == "assistant" and not message.tool_calls and message.content
        if echoed and sent.content and sent.completion_tokens > 0:
            per_char = sent.completion_tokens / len(sent.content)
            total += math.ceil(len(message.content or "") * per_char) + TEMPLATE_TOKENS
        else:
            others.append(message)
    if others:
        total += await llm.count_tokens(_text(others)) + TEMPLATE_TOKENS * len(others)
    return _Room(tokens=total, window=window)


def _text(messages: list[Message]) -> str:
    """The text of messages as a prompt carries it: contents and tool-call arguments."""
    parts = []
    for message in messages:
        parts.append(message.content or "")
        parts += [call.raw_arguments or json.dumps(call.arguments) for call in message.tool_calls or []]
    return "\n".join(parts)
