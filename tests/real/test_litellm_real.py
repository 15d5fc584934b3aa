"""A real LiteLLM proxy in front of llama.cpp's ``llama-server``: what the proxy answers when something is
wrong is said as what it is (the unit tests replay these answers on loopback imitations:
``tests/llm/test_litellm_proxy.py``, ``tests/bench/test_endpoint_gone.py``)."""

from __future__ import annotations

import asyncio

import pytest

from pageindex.llm import LLMCallError, LLMConfigError, Message, check_reachable, make_client, parse_spec
from pageindex.llm.preflight import check_upstream
from pageindex.llm.types import EndpointUnreachableError
from tests.real.conftest import LiteLLMProxy


def test_a_litellm_proxy_says_what_is_wrong(litellm_proxy: LiteLLMProxy) -> None:
    url, key = litellm_proxy.base_url, litellm_proxy.master_key
    # its model, with its master key: a chat reply with usage
    model = f"openai/{litellm_proxy.model}"
    client = make_client(model, base_url=url, api_key=key, max_retries=0, timeout=120)
    asyncio.run(client.check())
    assert client.preflight_result is not None and client.preflight_result.models == ["gemma", "gone"]
    reply = asyncio.run(client.chat([Message(role="user", content="Say PONG")], max_tokens=4))
    assert reply.usage.prompt_tokens > 0 and 0 < reply.usage.completion_tokens <= 4
    # a model it does not serve: refused before any work
    with pytest.raises(LLMConfigError) as unknown:
        check_reachable(parse_spec("openai/nope", base_url=url, api_key=key), timeout=30)
    assert "is not served there: GET /models lists gemma, gone" in str(unknown.value)
    assert "Invalid model name passed in model=nope" in str(unknown.value)
    # another key than the master key, the proxy having no database: the key's line
    with pytest.raises(LLMConfigError) as refused:
        check_reachable(parse_spec("openai/gemma", base_url=url, api_key="sk-wrong-0123456789"), timeout=30)
    assert str(refused.value).startswith(f"{url} rejected the API key for openai/gemma (HTTP 400); check ")
    assert 'the LiteLLM proxy answered "No connected db."' in str(refused.value)
    # a model whose server is down: a connection failure, and the probe after it says so too
    gone = make_client(f"openai/{litellm_proxy.gone}", base_url=url, api_key=key, max_retries=0, timeout=120)
    with pytest.raises(LLMCallError) as failed:
        asyncio.run(gone.chat([Message(role="user", content="Say PONG")], max_tokens=4))
    assert failed.value.kind == "connection", failed.value
    assert "the proxy could not reach the model server behind it (HTTP 500" in str(failed.value)
    with pytest.raises(EndpointUnreachableError) as probed:
        asyncio.run(check_upstream(gone.model_spec, timeout=120))
    assert probed.value.reason == "the proxy could not reach the model server behind it (HTTP 500)"
