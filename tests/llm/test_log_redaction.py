"""Credentials in a base URL never reach a log line, whenever the request is made: the preflight's
``GET /models`` (httpx logs every request's URL, user-info included) runs before any client opens
its session, and used to be logged in clear (``http://bob:pwSECRET@127.0.0.1/v1/models``)."""

from __future__ import annotations

import asyncio
import logging

import pytest

from pageindex.llm.preflight import preflight
from pageindex.llm.redact import LIBRARY_LOGGERS, RedactingFilter
from pageindex.llm.spec import parse_spec

PASSWORD = "pwSECRET123"


@pytest.fixture
def fresh_loggers(monkeypatch):
    """The library loggers as a new process has them: no filter yet (another test in this worker
    may have opened a client session, which attaches one)."""
    for name in LIBRARY_LOGGERS:
        monkeypatch.setattr(logging.getLogger(name), "filters", [])


def _preflight_log(server, url: str, caplog) -> str:
    spec = parse_spec("openai/scripted", base_url=url, api_key="sk-test-123456789")  # the model it lists
    caplog.set_level(logging.INFO)
    result = asyncio.run(preflight(spec))
    assert result.via == "models" and result.url == spec.display_url
    requests = [r.getMessage() for r in caplog.records if r.name == "httpx"]
    assert len(requests) == 1, requests
    assert [e["path"] for e in server.exchanges] == ["/v1/models"]
    return requests[0]


def test_preflight_request_is_logged_with_the_url_masked(serve, caplog, fresh_loggers):
    server = serve()
    logged = _preflight_log(server, server.base_url.replace("://", f"://bob:{PASSWORD}@"), caplog)
    assert logged == f'HTTP Request: GET {server.url.replace("://", "://***@")}/v1/models "HTTP/1.1 200 OK"'
    assert PASSWORD not in caplog.text and "bob" not in caplog.text


def test_preflight_keeps_the_base_urls_query_and_masks_its_credentials(serve, caplog, fresh_loggers):
    """``?api-key=``-style proxies: the path goes before the query (it used to be appended to the
    query, so every such endpoint failed the preflight with HTTP 404), and the value is masked."""
    server = serve()
    logged = _preflight_log(server, server.base_url + "?token=QUERYSECRET99&api-version=2", caplog)
    assert logged.startswith(f"HTTP Request: GET {server.url}/v1/models?token=***&api-version=2 ")
    assert "QUERYSECRET99" not in caplog.text


def test_a_redacting_handler_masks_any_logger(tmp_path):
    """A filter on a logger sees only that logger's records; the project's handlers (the run's
    events.log, ``-v`` on stderr) mask whatever reaches them, from any library."""
    from pageindex.llm.redact import redact_handler

    path = tmp_path / "events.log"
    handler = redact_handler(logging.FileHandler(path, encoding="utf-8"))
    assert any(isinstance(f, RedactingFilter) for f in handler.filters)
    logger = logging.getLogger("some.other.library")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        logger.info("GET %s failed", f"https://alice:{PASSWORD}@proxy.example/v1?sig=ABCDEF12&x=1")
    finally:
        logger.removeHandler(handler)
        handler.close()
    text = path.read_text()
    assert "GET https://***@proxy.example/v1?sig=***&x=1 failed" in text
    assert PASSWORD not in text and "ABCDEF12" not in text
