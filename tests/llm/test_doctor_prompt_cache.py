"""The doctor's prompt-speed probe is not served from the server's prompt cache (fresh-user trial).

llama.cpp's `llama-server` keeps the computed prefixes of earlier prompts and computes only what is
new. The probe sent the same filler every run, so `pageindex doctor --refresh` against gemma-3-270m read
7,806 tokens/s where the first run had read 383, and advised `--timeout 40` instead of 60 from it. The
server below imitates that cache: a prompt costs time only for what follows its longest prefix shared
with a prompt it has seen."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from pageindex.llm.doctor import diagnose
from pageindex.llm.spec import parse_spec
from pageindex.llm.testing import FakeOpenAIServer

SECONDS_PER_CHAR = 0.0002  # 1,600 characters (the probe's ~400 tokens) take about 0.3 s


class PromptCachingServer(FakeOpenAIServer):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.seen: list[str] = []

    def _uncached(self, text: str) -> int:
        shared = 0
        for old in self.seen:
            n = 0
            for a, b in zip(old, text, strict=False):
                if a != b:
                    break
                n += 1
            shared = max(shared, n)
        return len(text) - shared

    async def _chat(self, request: Any) -> Any:
        body = await request.json()
        text = json.dumps(body.get("messages"))
        await asyncio.sleep(self._uncached(text) * SECONDS_PER_CHAR)
        self.seen.append(text)
        return await super()._chat(request)


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(tmp_path / "cache"))


def test_a_second_doctor_run_measures_the_prompt_speed_again_not_the_servers_cache() -> None:
    with PromptCachingServer() as srv:
        spec = parse_spec("openai/m", base_url=srv.base_url, env={})
        first = asyncio.run(diagnose(spec, timeout=10)).findings.prompt_tps
        again = asyncio.run(diagnose(spec, timeout=10)).findings.prompt_tps
    assert first and again
    # both computed the whole ~400-token prompt: about 1 / (4 * SECONDS_PER_CHAR) = 1,250 tokens/s
    assert 0.5 < again / first < 2, (first, again)
    assert again < 3000, again
