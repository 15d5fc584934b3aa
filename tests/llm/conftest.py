"""Fixtures shared by the LLM client tests."""

from __future__ import annotations

import pytest

from pageindex.llm.scripted import ScriptedModel
from pageindex.llm.testing import FakeOpenAIServer


@pytest.fixture
def serve():
    """``serve(*replies, scripted=..., **server_kwargs)``: a real loopback OpenAI-compatible server
    answering the queued replies (or a given ScriptedModel); stopped after the test."""
    servers: list[FakeOpenAIServer] = []

    def start(*replies, **kwargs) -> FakeOpenAIServer:
        scripted = kwargs.pop("scripted", None) or ScriptedModel(replies=list(replies))
        server = FakeOpenAIServer(scripted, **kwargs).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()
