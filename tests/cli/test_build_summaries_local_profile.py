"""`pageindex build --summaries` against a server on this machine gets the local-server profile, as
`ask` and `bench run` do (fresh-user trial): it sent every section's request at once with the cloud
defaults (8 in flight, 60 s, timeouts retried), so a one-request-at-a-time llama.cpp server timed out
the sections queued behind the first ones, went on computing them, and was sent them again (6
sections of a Kroger release with gemma-3-270m: 12 calls, 2 min 49 s; with the profile 6 calls)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pymupdf
import pytest
from typer.testing import CliRunner

from pageindex.cli import app
from pageindex.llm.testing import FakeOpenAIServer

PROFILE = "1 request in flight, timeout 600s, no retry after a client timeout"


class CountingServer(FakeOpenAIServer):
    """Counts the chat requests it is computing at once."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.now = 0
        self.most = 0

    async def _chat(self, request: Any) -> Any:
        self.now += 1
        self.most = max(self.most, self.now)
        try:
            await asyncio.sleep(0.05)
            return await super()._chat(request)
        finally:
            self.now -= 1


pytestmark = pytest.mark.usefixtures("no_model_env")


def _filing(path: Path) -> Path:
    doc = pymupdf.open()
    titles = ["Item 1. Business", "Item 1A. Risk Factors", "Item 2. Properties", "Item 3. Legal Proceedings"]
    for n, title in enumerate(titles, 1):
        page = doc.new_page()
        page.insert_text((72, 72), title.upper(), fontname="hebo", fontsize=14)
        for k in range(12):
            page.insert_text((72, 110 + 18 * k), f"Section {n} line {k}: revenue was ${n * 100 + k} million.")
    doc.save(path)
    return path


def test_summaries_for_a_local_server_are_sent_one_at_a_time_with_the_profile(tmp_path: Path) -> None:
    pdf = _filing(tmp_path / "ACME_2023_10K.pdf")
    with CountingServer() as srv:
        res = CliRunner().invoke(
            app, ["build", str(pdf), "--summaries", "-m", "openai/scripted", "--base-url", srv.base_url]
        )
    assert res.exit_code == 0, res.output
    sections = len(srv.chat_requests)
    assert sections >= 3, res.output
    assert srv.most == 1, f"{srv.most} requests at once"
    assert f"local-server profile for {srv.base_url} (loopback): {PROFILE}" in res.output
    assert f"in {sections} calls" in res.output


def test_summaries_for_a_remote_endpoint_keep_the_defaults(monkeypatch) -> None:
    from pageindex.cli._summaries import _client_settings

    settings, notes = _client_settings("openai/gpt-4o-mini", "https://api.example.com/v1")
    assert settings == {
        "timeout": 60.0, "max_retries": 3, "retry_timeouts": True, "concurrency": 8, "json_mode": False,
    }  # fmt: skip
    assert notes == []
