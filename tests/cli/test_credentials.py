"""Credentials never reach a line, a result file or the cache, whatever shape they were given in
(review rev-secrets): a base URL typed without its ``http://`` (``bob:KEY@host/v1``), a user name
holding an ``@``, a password with a space, the key of a plug-in provider from its own variable."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest
from aiohttp import web
from typer.testing import CliRunner

from pageindex.cli import app
from pageindex.llm.fakeserver import LoopbackServer
from pageindex.llm.providers import CompletionProvider, Provider, register_provider
from tests.cli.clirun import extractive_run

PASSWORD = "pwSECRET4711"


def _everything(out, folder: Path) -> str:
    """The command's output and every file it wrote under ``folder``."""
    files = [p for p in folder.rglob("*") if p.is_file()] if folder.exists() else []
    return out.output + "".join(p.read_text(errors="replace") for p in files)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (f"bob:{PASSWORD}@127.0.0.1:9/v1", "***@127.0.0.1:9/v1"),
        (f"http:/bob:{PASSWORD}@127.0.0.1:9/v1", "http:/***@127.0.0.1:9/v1"),
        (f"http//bob:{PASSWORD}@127.0.0.1:9/v1?api-key=QKEY12345", "***@127.0.0.1:9/v1?api-key=***"),
    ],
)
def test_a_base_url_without_its_scheme_is_refused_with_its_credentials_masked(
    url, shown, tmp_path, quiet_env
):
    """``--base-url bob:KEY@host/v1`` (the ``http://`` forgotten) was refused naming the URL in clear:
    ``error: base URL bob:pwSECRET4711@127.0.0.1:9/v1 of openai/x is not usable``; urlsplit reads
    the user name as a scheme there, so no host part held the credentials to mask."""
    out = CliRunner().invoke(
        app, ["bench", "run", "-r", "iterative", "-m", "openai/x", "--base-url", url, "-q",
              "--out", str(tmp_path / "run")],
    )  # fmt: skip
    assert out.exit_code == 2, out.output
    assert f"error: base URL {shown} of openai/x is not usable: " in out.output
    assert PASSWORD not in out.output and "QKEY12345" not in out.output
    assert not (tmp_path / "run").exists()


def test_a_dataset_mirror_without_its_scheme_is_refused_with_its_credentials_masked(tmp_path, quiet_env):
    """``bench datasets fetch --base-url mirror:TOKEN@host/fb`` named the URL in clear the same way
    (``error: --base-url mirror:pwSECRET4711@127.0.0.1:9/fb: it must start with http://``)."""
    out = CliRunner().invoke(
        app, ["bench", "datasets", "fetch", "financebench", str(tmp_path / "fb"),
              "--base-url", f"mirror:{PASSWORD}@127.0.0.1:9/fb"],
    )  # fmt: skip
    assert out.exit_code == 2, out.output
    assert "error: --base-url ***@127.0.0.1:9/fb: it must start with http:// or https://" in out.output
    assert PASSWORD not in out.output


@pytest.mark.parametrize(
    "userinfo",
    [f"bob@{PASSWORD}", f"bob:pw {PASSWORD}"],
    ids=["user-with-at", "password-with-space"],
)
def test_the_stored_command_masks_credentials_of_any_shape(userinfo, tmp_path, quiet_env, monkeypatch):
    """run.json's ``command`` masked URL user-info by its shape only, up to the first ``@`` and the
    first space: ``http://bob@pw@host`` was stored as ``http://***@pwSECRET4711@host`` and
    ``http://bob:pw pwSECRET4711@host`` in clear, while the request went out with them all."""
    from bench.faults import FaultServer

    with FaultServer(rate=0.0) as srv:
        url = srv.base_url.replace("://", f"://{userinfo}@")
        args = ["bench", "run", "-r", "iterative", "-m", "openai/x", f"--base-url={url}", "--judge", "rules",
                "--limit", "1", "-q", "--out", str(tmp_path / "run")]  # fmt: skip
        monkeypatch.setattr("sys.argv", ["pageindex", *args])  # the command run.json stores
        out = CliRunner().invoke(app, args)
    assert out.exit_code == 0, out.output
    assert PASSWORD not in _everything(out, tmp_path / "run")
    masked = srv.base_url.replace("://", "://***@")
    assert f"--base-url={masked}" in json.loads((tmp_path / "run" / "run.json").read_text())["command"]


# -- a plug-in provider's own key ---------------------------------------------------------------
PLUGIN_KEY = "AIzaTESTSECRET4711x"  # the shape of a Google key: nothing masks it by its shape
KEY_VAR = "LEAKYKEY_API_KEY"


class _LeakyKey(CompletionProvider):
    """A plug-in provider that reads its key from its own variable and fails quoting it, as SDKs'
    authentication errors do."""

    async def complete(self, request: dict) -> dict:
        raise RuntimeError(f"401 Unauthorized: invalid api key '{os.environ[KEY_VAR]}'")


class _LeakyResolve(Provider):
    """A plug-in provider whose ``resolve`` has a bug that quotes its key."""

    @classmethod
    def resolve(cls, text, model, *, base_url=None, api_key=None, env=None):  # type: ignore[override]
        return {}["no-such-" + os.environ[KEY_VAR]]


register_provider("leakykey")(_LeakyKey)
register_provider("leakyresolve")(_LeakyResolve)


@pytest.fixture
def plugin_key(quiet_env, monkeypatch):
    monkeypatch.setenv(KEY_VAR, PLUGIN_KEY)


def test_ask_with_a_plugin_providers_failing_key_never_shows_or_stores_it(plugin_key, tmp_path, demo):
    """``ask -m leakykey/x`` printed the provider's error with its key in clear and stored it in the
    session file (``complete() raised RuntimeError: 401 Unauthorized: invalid api key
    'AIzaTESTSECRET4711x'``): the LLM layer masked only the spec's own key and key-shaped text, and the
    environment's credentials only ``bench run`` masked, in its samples."""
    out = CliRunner().invoke(
        app, ["ask", str(demo / "pdfs" / "BLUEFIN_2022_10K.pdf"), "What was revenue?", "-m", "leakykey/x",
              "--max-retries", "0", "--session", "s1", "--json"],
    )  # fmt: skip
    assert out.exit_code == 4, out.output
    assert "complete() raised RuntimeError: 401 Unauthorized: invalid api key '***'" in out.output
    cache = Path(os.environ["PAGEINDEX_CACHE_DIR"])
    assert (cache / "sessions" / "s1.json").is_file()
    assert PLUGIN_KEY not in _everything(out, cache)


def test_rejudge_with_a_plugin_providers_failing_key_never_stores_it(plugin_key, tmp_path):
    """``bench rejudge --judge-model leakykey/x`` wrote the key into the new run's samples.jsonl
    (the judge's error) and its summary of errors; ``bench run`` scrubbed its samples, rejudge did not."""
    run_dir = extractive_run(tmp_path, limit=2)
    out = CliRunner().invoke(
        app, ["bench", "rejudge", str(run_dir), "--judge", "llm", "--judge-model", "leakykey/x",
              "-o", str(tmp_path / "rejudged")],
    )  # fmt: skip
    assert out.exit_code == 4, out.output
    samples = (tmp_path / "rejudged" / "samples.jsonl").read_text()
    assert "invalid api key '***'" in samples
    assert PLUGIN_KEY not in _everything(out, tmp_path / "rejudged")


def test_an_internal_error_quoting_a_key_is_said_masked(plugin_key, tmp_path, demo, monkeypatch):
    """The one line of an unexpected exception printed its text as it was: a plug-in's bug quoting
    its key showed it (``internal error: KeyError: 'no-such-AIzaTESTSECRET4711x'``)."""
    monkeypatch.delenv("PAGEINDEX_DEBUG", raising=False)
    out = CliRunner().invoke(
        app, ["ask", str(demo / "pdfs" / "BLUEFIN_2022_10K.pdf"), "What was revenue?", "-m", "leakyresolve/x"]
    )
    assert out.exit_code == 2, out.output
    assert "error: internal error: KeyError: 'no-such-***' (set PAGEINDEX_DEBUG=1" in out.output
    assert PLUGIN_KEY not in out.output


def test_a_recorded_failure_holds_no_plugin_key(plugin_key, tmp_path):
    """``bench run --cache rw`` records a call's final failure in the cache's ``failures`` table;
    the run scrubbed its samples, but the cache kept the provider's key in the failure's text."""
    import sqlite3

    from bench.runner import demo_dataset_dir

    cache = tmp_path / "llm.sqlite"
    out = CliRunner().invoke(
        app, ["bench", "run", "-d", str(demo_dataset_dir()), "-m", "leakykey/x", "-r", "planner",
              "--limit", "1", "--max-retries", "0", "--cache", "rw", "--cache-path", str(cache), "-q",
              "-o", str(tmp_path / "run")],
    )  # fmt: skip
    assert out.exit_code == 4, out.output
    with sqlite3.connect(cache) as conn:
        failures = [row[0] for row in conn.execute("SELECT failure FROM failures")]
    assert failures and all("invalid api key '***'" in failure for failure in failures)
    assert PLUGIN_KEY not in "".join(failures) and PLUGIN_KEY.encode() not in cache.read_bytes()
    assert PLUGIN_KEY not in _everything(out, tmp_path / "run")


# -- a proxy quoting the request's Authorization header -----------------------------------------
class _QuotingProxy(LoopbackServer):
    """A proxy whose error pages quote the request's ``Authorization`` header, as some do; with
    ``html_models`` its model list is such a page too (200, HTML), else a JSON list."""

    def __init__(self, *, html_models: bool) -> None:
        super().__init__()
        self.html_models = html_models

    def build_app(self) -> web.Application:
        def page(request: web.Request, status: int) -> web.Response:
            said = request.headers.get("Authorization", "")
            return web.Response(status=status, text=f"<html><body>denied for {said}</body></html>",
                                content_type="text/html")  # fmt: skip

        async def chat(request: web.Request) -> web.Response:
            return page(request, 500)

        async def models(request: web.Request) -> web.Response:
            if self.html_models:
                return page(request, 200)
            return web.json_response({"object": "list", "data": [{"id": "m", "object": "model"}]})

        app = web.Application()
        app.router.add_post("/v1/chat/completions", chat)
        app.router.add_get("/v1/models", models)
        return app


BASIC = base64.b64encode(f"bob:{PASSWORD}".encode()).decode()  # what the HTTP client sends


def test_the_basic_credentials_a_proxy_quotes_are_masked(tmp_path, quiet_env):
    """A base URL's user-info goes to the server as ``Authorization: Basic base64(user:password)``;
    a proxy's error page quoting it put that base64, which decodes to the password, into the error
    line, samples.jsonl and events.log (``HTTP 500 ...: <html><body>denied for Basic
    Ym9iOnB3U0VDUkVUNDcxMQ==``): only the user-info as typed was masked."""
    with _QuotingProxy(html_models=False) as srv:
        url = srv.base_url.replace("://", f"://bob:{PASSWORD}@")
        out = CliRunner().invoke(
            app, ["bench", "run", "-r", "planner", "-m", "openai/m", "--base-url", url, "--limit", "1",
                  "--max-retries", "0", "--judge", "rules", "-q", "--out", str(tmp_path / "run")],
        )  # fmt: skip
    assert out.exit_code == 4, out.output
    samples = (tmp_path / "run" / "samples.jsonl").read_text()
    assert "HTTP 500" in samples and "denied for Basic ***" in samples
    everything = _everything(out, tmp_path / "run")
    assert BASIC not in everything and PASSWORD not in everything


def test_the_basic_credentials_an_html_model_list_quotes_are_masked(tmp_path, quiet_env):
    """The preflight's refusal of an HTML page quotes the page's first words: the proxy's quoted
    ``Basic ...`` header was shown in it (``GET /models answered HTTP 200 with an HTML page ("denied
    for Basic Ym9i…")``)."""
    with _QuotingProxy(html_models=True) as srv:
        url = srv.base_url.replace("://", f"://bob:{PASSWORD}@")
        out = CliRunner().invoke(
            app, ["bench", "run", "-r", "planner", "-m", "openai/m", "--base-url", url, "-q",
                  "--out", str(tmp_path / "run")],
        )  # fmt: skip
    assert out.exit_code == 2, out.output
    assert 'answered HTTP 200 with an HTML page ("denied for Basic ***")' in out.output
    assert BASIC[:12] not in out.output


def test_the_debug_traceback_of_an_internal_error_masks_a_key(plugin_key, demo, monkeypatch):
    """``PAGEINDEX_DEBUG=1`` lets Python print the traceback, whose last line quoted the key in clear
    (``KeyError: 'no-such-AIzaTESTSECRET4711x'``) where the one-line error masks it."""
    import traceback

    monkeypatch.setenv("PAGEINDEX_DEBUG", "1")
    out = CliRunner().invoke(
        app, ["ask", str(demo / "pdfs" / "BLUEFIN_2022_10K.pdf"), "What was revenue?", "-m", "leakyresolve/x"]
    )
    assert isinstance(out.exception, KeyError), out.output
    printed = "".join(traceback.format_exception(out.exception))
    assert printed.rstrip().endswith("KeyError: 'no-such-***'") and PLUGIN_KEY not in printed
