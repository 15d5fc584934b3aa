"""A structured reply cut at max_tokens is not asked again; one that does not validate is.

Asked again with the same cap, a model that ran out of room runs out again: gemma-3-270m on llama.cpp
rambled to 1,024 tokens three times (450 s) before the session retriever met the error it met at once.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from aiohttp import web
from pydantic import BaseModel

from pageindex.llm import make_client, wire
from pageindex.llm.fakeserver import LoopbackServer, openai_app
from pageindex.llm.types import Message, OutputTruncated, StructuredOutputError


class Answer(BaseModel):
    answer: str
    pages: list[int]


class Replies(LoopbackServer):
    """Answers every chat request with ``content`` and ``completion_tokens``, finish_reason ``stop``
    (llama.cpp servers say so of a JSON reply cut at the cap, or ``tool_calls`` of a cut tool call)."""

    shutdown_timeout = 0.1

    def __init__(self, content: str, completion_tokens: int) -> None:
        super().__init__()
        self.content, self.completion_tokens, self.requests = content, completion_tokens, 0

    def build_app(self) -> web.Application:
        async def chat(request: web.Request) -> web.Response:
            self.requests += 1
            body = await request.json()
            return web.json_response(wire.completion_body(
                model=body["model"], content=self.content, prompt_tokens=30,
                completion_tokens=self.completion_tokens, finish_reason="stop",
            ))  # fmt: skip

        return openai_app(chat=chat, models=lambda: [wire.model_entry("m")])


QUESTION = [Message(role="user", content="What was the revenue?")]


def test_a_reply_cut_at_the_cap_is_not_asked_again():
    rambling = '{"answer": "' + "very " * 200
    with Replies(rambling, completion_tokens=64) as server:
        client = make_client("openai/m", base_url=server.base_url, json_mode=True, max_retries=0)
        with pytest.raises(OutputTruncated, match="cut at max_tokens=64"):
            asyncio.run(client.structured(QUESTION, Answer, max_tokens=64, max_retries=2))
    assert server.requests == 1


def test_a_reply_that_does_not_validate_is_asked_again_up_to_max_retries():
    wrong = json.dumps({"answer": "1,577"})  # whole JSON, no pages: a re-ask may mend it
    with Replies(wrong, completion_tokens=9) as server:
        client = make_client("openai/m", base_url=server.base_url, json_mode=True, max_retries=0)
        with pytest.raises(StructuredOutputError, match="after 3 attempt"):
            asyncio.run(client.structured(QUESTION, Answer, max_tokens=64, max_retries=2))
    assert server.requests == 3
