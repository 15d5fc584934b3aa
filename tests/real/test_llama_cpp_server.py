"""Conformance against llama.cpp's own server (``llama-server``, C++), gemma-3-270m, 4k context.

llama-cpp-python's server (the rest of this tier) is a Python server over the same library; llama.cpp's
own has its own endpoints and wording: the window in ``/v1/models``' ``meta.n_ctx``, a ``/tokenize``
endpoint, and "request (N tokens) exceeds the available context size (4096 tokens)". These tests assert
what crossed the wire and what was recorded, never the tiny model's accuracy.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from pageindex.llm import ContextLengthError, Message, make_client
from pageindex.retrievers import aretrieve
from pageindex.tree import build_tree

WINDOW = 4096


def run(coro):
    return asyncio.run(coro)


def client(server, **kwargs):
    kwargs.setdefault("timeout", 600)
    kwargs.setdefault("max_retries", 0)
    return make_client(server.spec, base_url=server.base_url, **kwargs)


def test_the_window_and_the_token_counts_are_the_servers(llama_cpp):
    llm = client(llama_cpp)
    assert run(llm.ensure_limits()) == WINDOW and llm.context_window_source == "server metadata"
    text = "Revenue was $1,577 million in 2022, up 4% from 2021. " * 12
    counted = run(llm.count_tokens(text))
    root = llama_cpp.base_url.removesuffix("/v1")
    tokens = httpx.post(f"{root}/tokenize", json={"content": text, "add_special": False}).json()["tokens"]
    assert counted == len(tokens) and llm.tokens.method == "server tokenizer"


def test_a_prompt_past_the_window_is_a_context_length_error_stating_the_servers_window(llama_cpp):
    """Sized for a window the server does not have (given as 32768), the prompt is refused with the
    server's words, and the error names the window to give."""
    llm = client(llama_cpp, context_window=32768)
    with pytest.raises(ContextLengthError) as caught:
        run(llm.chat([Message(role="user", content="word " * 9000)], max_tokens=8))
    message = str(caught.value)
    assert "exceeds the available context size (4096 tokens)" in message
    assert "the server's window is 4096 tokens, not 32768 as assumed (--context-window); give " \
        "--context-window 4096" in message


def test_followup_fits_whole_pages_by_the_servers_count(llama_cpp, fb_pdf, tmp_path):
    tree = build_tree(fb_pdf("3M_2018_10K"), cache_dir=Path(tmp_path) / "trees")
    llm = client(llama_cpp, max_tokens=16)
    question = "What is the FY2018 capital expenditure amount (in USD millions) for 3M?"
    result = run(aretrieve(tree, question, retriever="followup", llm=llm, max_passes=1))
    assert result.error_kind != "context_length", result.error
    assert llm.tokens.method == "server tokenizer"
    lists = [v for e in result.trace for k, v in e.data.items() if k in ("attempts", "http_attempts")]
    attempts = [a for v in lists if isinstance(v, list) for a in v if a.get("usage")]
    assert attempts and all(0 < a["usage"]["prompt_tokens"] <= WINDOW - 16 for a in attempts)


def test_the_doctor_reads_the_window_its_refusal_states(llama_cpp):
    from pageindex.llm.doctor import diagnose
    from pageindex.llm.spec import parse_spec

    spec = parse_spec(llama_cpp.spec, base_url=llama_cpp.base_url, env={})
    report = run(diagnose(spec, timeout=600, probe_context=True))
    probe = report.check("context_probe")
    assert probe is not None and "4,096 tokens, as the refusal states" in probe.detail, probe.detail
    assert report.findings.context_window == WINDOW
    # The GGUF embeds a ChatML template, and gemma's vocabulary has no <|im_end|> to stop at: the reply
    # writes the marker out and runs on (the server's template, not the model's skill); said as a limit.
    assert "<|im_end|>" in report.findings.template_markers, report.check("chat")
    assert report.check("chat").status == "warn" and report.verdict == "limited"
    marked = [r for r in report.reasons if r.startswith("replies write out chat-template markers")]
    assert marked, report.reasons
