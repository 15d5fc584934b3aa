"""``pageindex doctor`` against the fault server lacking one ability at a time (loopback only).

Each case checks the row the missing ability shows in, the verdict, the suggested settings and the
command's exit code; plus the cache (per endpoint and model, 7 days, never a key) and bad input.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from bench.faults import FaultServer
from bench.faults.competent import CompetentPolicy
from bench.faults.limits import ServerLimits
from bench.faults.protocol import Reply
from pageindex.cli import app
from pageindex.llm.doctor import (
    DoctorReport,
    cache_key,
    cached_findings,
    diagnose,
    doctor_defaults,
    run_doctor,
    save_report,
    suggest_settings,
)
from pageindex.llm.spec import parse_spec

MODEL = "openai/fault-model"


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("PAGEINDEX_MODEL", raising=False)


@pytest.fixture(scope="module")
def server():
    with FaultServer(CompetentPolicy()) as srv:
        yield srv


def probe(srv: FaultServer, limits: ServerLimits, **kw) -> DoctorReport:
    srv.set_limits(limits)
    spec = parse_spec(MODEL, base_url=srv.base_url, env={})
    return asyncio.run(diagnose(spec, timeout=10, **kw))


def status(report: DoctorReport, key: str) -> str:
    check = report.check(key)
    assert check is not None, f"no {key} row in {[c.key for c in report.checks]}"
    return check.status


@pytest.fixture
def unused_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cli(*args: str):
    return CliRunner().invoke(app, ["doctor", *args], env={"COLUMNS": "200"})


def test_a_capable_server_is_usable(server):
    report = probe(server, ServerLimits())
    assert report.verdict == "usable" and report.exit_code == 0 and report.reasons == []
    bad = {c.key: c.detail for c in report.checks if c.status in {"warn", "fail"}}
    assert bad == {}
    facts = report.findings
    assert facts.tool_call and facts.tool_result_null and facts.tool_result_empty
    assert facts.parallel_tool_calls and facts.json_mode and facts.json_schema
    assert facts.usage and facts.max_tokens and facts.finish_length and facts.tool_max_tokens
    assert report.check("tool_call").detail == 'record_fruit({"fruit": "plum"})'
    tool_row = report.check("tool_max_tokens").detail
    assert tool_row == "8 completion tokens for max_tokens=8 with a tool offered"
    assert report.check("max_tokens").detail == "8 completion tokens for max_tokens=8"
    assert facts.local and facts.context_window is None and not facts.price_known
    assert facts.prompt_tps and facts.prompt_tps > 0 and facts.generation_tps and facts.generation_tps > 0
    assert report.settings.json_mode is False
    assert report.settings.retrievers == ["agent", "planner", "iterative"]
    assert 0 < report.tokens_used < 3000  # a few thousand tokens at most
    assert report.calls == 13  # the preflight, 10 probes, 2 at once


def test_no_tools_picks_json_mode_and_planner(server):
    report = probe(server, ServerLimits(no_tools=True))
    assert status(report, "tool_call") == "fail"
    assert "no record_fruit call; the reply was text" in report.check("tool_call").detail
    assert report.findings.parallel_tool_calls is False
    assert report.verdict == "limited" and report.exit_code == 1
    assert report.reasons[0].startswith("no tool calls: use --json-mode")
    assert report.settings.json_mode is True
    assert report.settings.retrievers == ["planner"]
    assert report.settings.flags().startswith("--json-mode ")


class _TemplateLeakPolicy(CompetentPolicy):
    """Text replies run on past the turn's end with ChatML's markers written out, as llama-server's chatml
    template over gemma-3-270m (whose vocabulary has no <|im_end|> to stop at) answered every request."""

    def __call__(self, chat):
        reply = super().__call__(chat)
        if reply.content and not reply.tool_calls:
            reply = reply.model_copy(update={"content": reply.content + "<|im_end|>\n<|im_start|>user\nPONG"})
        return reply


def test_chat_template_markers_in_the_reply_are_a_limit():
    """llama-server's plain chat with a template that does not match the model answered 'Reply with
    exactly the word PONG.<|im_end|> <|' (16 of 16 tokens): the doctor said `plain chat │ yes`."""
    with FaultServer(_TemplateLeakPolicy()) as srv:
        report = probe(srv, ServerLimits())
    assert report.findings.template_markers == ["<|im_end|>", "<|im_start|>"]
    chat = report.check("chat")
    assert chat.status == "warn" and "writing out the chat template's <|im_end|>, <|im_start|>" in chat.detail
    assert report.verdict == "limited" and report.exit_code == 1
    assert any(r.startswith("replies write out chat-template markers (<|im_end|>, <|im_start|>)")
               for r in report.reasons), report.reasons


class _LongJSONPolicy(CompetentPolicy):
    """JSON mode answered with an object that keeps adding keys, as llama-server's JSON grammar over
    gemma-3-270m did ('{ "id": "1", "name": "1", "age": "1", "gender":…' at max_tokens=64)."""

    def __call__(self, chat):
        if (chat.response_format or {}).get("type") == "json_object":
            keys = ", ".join(f'"key{i}": "value number {i}"' for i in range(60))
            return Reply(content="{" + keys + "}")
        return super().__call__(chat)


def test_a_json_mode_reply_cut_at_the_cap_is_not_said_ignored():
    """It was `JSON mode (json_object) │ info │ ignored: '{ "id": "1", ...'`: the server had followed JSON
    mode (a grammar) and the reply was cut at the probe's cap."""
    with FaultServer(_LongJSONPolicy()) as srv:
        report = probe(srv, ServerLimits())
    detail = report.check("json_mode").detail
    assert detail.startswith("not measured: the reply was cut at max_tokens=64 before its object closed: ")
    assert "ignored" not in detail and report.findings.json_mode is False
    with FaultServer(_LongJSONPolicy()) as srv:  # text that is no JSON at all is still "ignored"
        report = probe(srv, ServerLimits(no_json_mode=True))
    assert report.check("json_mode").detail.startswith("ignored: ")


def test_no_tools_and_no_json_is_unusable(server):
    report = probe(server, ServerLimits(no_tools=True, no_json_mode=True))
    assert report.findings.json_mode is False and report.findings.json_schema is False
    assert report.check("json_mode").detail.startswith("ignored: ")
    assert report.verdict == "unusable" and report.exit_code == 2
    assert "cannot run the LLM retrievers" in report.reasons[0]
    assert report.settings.retrievers == []


def test_no_json_mode_alone_is_fine_when_tools_work(server):
    report = probe(server, ServerLimits(no_json_mode=True))
    assert report.findings.json_mode is False and report.findings.json_schema is False
    assert report.verdict == "usable" and report.settings.json_mode is False


def test_no_usage(server):
    report = probe(server, ServerLimits(no_usage=True))
    assert status(report, "usage") == "warn"
    assert report.findings.usage is False
    assert report.verdict == "limited"
    assert report.reasons == ["no usage reported: token budgets and costs cannot be counted"]


def test_null_content_rejected(server):
    report = probe(server, ServerLimits(reject_null_content=True))
    assert status(report, "tool_result_null") == "fail"
    assert "assistant message content must be a string, not null" in report.check("tool_result_null").detail
    assert "HTTP 400" in report.check("tool_result_null").detail
    assert status(report, "tool_result_empty") == "ok"
    assert report.verdict == "limited" and report.exit_code == 1
    assert report.reasons[0].startswith("rejects content: null")
    assert report.settings.json_mode is False  # tools still work with content ""


def test_small_context_from_metadata(server):
    report = probe(server, ServerLimits(context_window=4096))
    assert report.findings.context_window == 4096
    assert report.findings.context_source == "metadata"
    assert status(report, "context_window") == "warn"
    assert report.check("context_window").detail.startswith("4,096 tokens (max_model_len in /models)")
    assert report.verdict == "limited"
    assert report.settings.context_window == 4096 and report.settings.context_budget_tokens == 3072


def test_context_probe_takes_the_window_a_refusal_states(server):
    """A refusal that states the window (llama.cpp's "exceed context window of 8192", vLLM's and
    OpenAI's "maximum context length is N") gives the window itself: it was reported as the largest
    accepted prompt, a lower bound (~2,000 for a 3,000-token window), and the runs' prompt budget
    was sized on that (review of the doctor on a real llama.cpp server, session 16)."""
    report = probe(server, ServerLimits(context_window=3000, advertise_context=False), probe_context=True)
    facts = report.findings
    assert (facts.context_window, facts.context_source, facts.context_lower_bound) == (3000, "probe", False)
    detail = report.check("context_probe").detail
    # the refused prompt's size as the server counted it ("your messages resulted in 4112 tokens")
    assert detail.startswith("3,000 tokens, as the refusal states: ") and "; 4,112 refused" in detail
    window = report.check("context_window").detail
    assert window == (
        "3,000 tokens (as the server stated it when refusing a longer prompt): small for index + sections; "
        "runs do not know it: give --context-window 3000"
    )
    assert report.verdict == "limited"
    assert not any("(lower bound)" in r for r in report.reasons)
    assert report.settings.context_window == 3000 and report.settings.context_budget_tokens == 3000 - 1024
    assert report.settings.flags().endswith(" --context-window 3000")


def test_a_probed_window_is_advised_as_the_flag_runs_need(server):
    """A run does not probe: it reads /models metadata, else the known model table. llama-cpp-python
    with gemma-3-270m at --n_ctx 4096: the doctor found 4,096 and a 3,072-token budget, but its
    'use:' line left out --context-window, and runs sized prompts for the table's 32,768 (trial on a
    real server). A window the server's metadata states needs no flag."""
    server.set_limits(ServerLimits(context_window=4096, advertise_context=False))
    spec = parse_spec("openai/gemma-3-270m", base_url=server.base_url, env={})
    report = asyncio.run(diagnose(spec, timeout=10, probe_context=True))
    assert report.settings.context_flag == 4096 and "--context-window 4096" in report.settings.flags()
    assert report.check("context_window").detail.endswith(
        "; runs assume 32,768 tokens (known model table): give --context-window 4096"
    )
    out = cli("-m", "openai/gemma-3-270m", "--base-url", server.base_url, "--probe-context", "--refresh")
    assert re.search(r"use: --concurrency \d+ --timeout \d+ --context-window 4096\n", out.output), out.output
    assert "context budget: about 3,072 prompt tokens per call (window 4,096)" in out.output

    told = probe(server, ServerLimits(context_window=4096), probe_context=True)  # in /models too
    assert told.findings.context_source == "metadata" and told.settings.context_flag is None
    assert "--context-window" not in told.settings.flags() + told.check("context_window").detail


def test_context_probe_finds_a_lower_bound_where_nothing_is_refused(server):
    report = probe(server, ServerLimits(context_window=40000, advertise_context=False), probe_context=True)
    facts = report.findings
    assert facts.context_source == "probe" and facts.context_lower_bound and not facts.context_refused
    assert 7000 < facts.context_window < 9000
    assert report.check("context_probe").detail.startswith(f"at least {facts.context_window:,} tokens: ")
    assert report.check("context_window").detail.endswith("(at least, by probe)")
    assert report.settings.context_budget_tokens is None  # a lower bound sizes no budget


def test_max_tokens_ignored_and_no_model_list(server):
    report = probe(server, ServerLimits(ignore_max_tokens=True, no_models_list=True))
    assert report.findings.max_tokens is False and report.findings.finish_length is False
    assert report.check("model_listed").detail == "the server has no model list"
    assert report.check("openai_compatible").detail == "no /models list; a chat reply came back"
    assert report.reasons == ["max_tokens is ignored: replies are not capped"]


def test_max_tokens_ignored_only_with_tools_offered(server):
    """As llama.cpp's chatml-function-calling: plain replies stop at max_tokens, a reply to a request
    that offers tools does not (a tool loop's turn runs to the end of the context)."""
    report = probe(server, ServerLimits(ignore_tool_max_tokens=True))
    facts = report.findings
    assert facts.max_tokens is True and facts.tool_max_tokens is False
    assert status(report, "tool_max_tokens") == "warn"
    detail = report.check("tool_max_tokens").detail
    assert detail.endswith("completion tokens for max_tokens=8 with a tool offered")
    assert int(detail.split()[0]) > 100
    assert report.verdict == "limited" and report.exit_code == 1
    assert report.reasons == [
        "max_tokens is ignored when tools are offered: each turn of a tool loop (agent, iterative) may "
        "generate to the end of the context window, which is slow (bench run --time-limit bounds a sample); "
        "planner offers no tools"
    ]


def test_a_tool_reply_that_never_comes_is_a_cap_ignored(server, monkeypatch):
    """The doctor waits for the tool-offered reply at most 20 times the plain capped reply (at least
    TOOL_CAP_WAIT_S): a server generating to the end of its context is reported without waiting it out."""
    import pageindex.llm.doctor as doctor

    monkeypatch.setattr(doctor, "TOOL_CAP_WAIT_S", 0.3)
    server.set_limits(ServerLimits())
    server.configure(rate=0.0)
    policy = server.policy

    def slow_when_tools(chat):
        if chat.offers_tools() and "Count from" in str(chat.messages[-1].get("content")):
            import time

            time.sleep(3.0)
        return policy(chat)

    monkeypatch.setattr(server, "policy", slow_when_tools)
    if server._app is not None:
        monkeypatch.setattr(server._app, "policy", slow_when_tools)
    spec = parse_spec(MODEL, base_url=server.base_url, env={})
    report = asyncio.run(diagnose(spec, timeout=10))
    assert report.findings.tool_max_tokens is False
    detail = report.check("tool_max_tokens").detail
    waited = re.match(r"no reply within (\d+(?:\.\d+)?)s for max_tokens=8", detail)
    assert waited, detail
    # at least TOOL_CAP_WAIT_S, and (20 x a fast plain reply on loopback) short of the 3 s reply
    assert 0.3 <= float(waited.group(1)) < 3.0, detail


def test_on_a_one_at_a_time_server_the_tool_cap_is_probed_only_when_asked(tmp_path):
    """A server that answers one request at a time (a policy that blocks the server's loop for 0.1 s per
    request): the tool-offered probe could keep it busy for minutes, so it is a skip row unless
    ``probe_tool_cap``; asked, it runs (and the cache then holds a report that probed it)."""
    import time

    from pageindex.llm.doctor import run_doctor

    inner = CompetentPolicy()

    def one_at_a_time(chat):
        time.sleep(0.1)
        return inner(chat)

    with FaultServer(one_at_a_time) as srv:
        spec = parse_spec(MODEL, base_url=srv.base_url, env={})
        first = run_doctor(spec, timeout=10)
        assert first.findings.serial is True
        row = first.check("tool_max_tokens")
        assert row is not None and row.status == "skip" and "--probe-tool-cap probes it" in row.detail
        assert first.findings.tool_max_tokens is None and first.verdict == "usable"
        asked = run_doctor(spec, timeout=10, probe_tool_cap=True)  # the cached report did not probe it
        assert not asked.cached and asked.check("tool_max_tokens").status == "ok"
        assert asked.findings.tool_max_tokens is True
        assert run_doctor(spec, timeout=10, probe_tool_cap=True).cached  # now it did


def test_cli_table_json_and_exit_codes(server):
    server.set_limits(ServerLimits(no_tools=True))
    result = cli("--model", MODEL, "--base-url", server.base_url)
    assert result.exit_code == 1, result.output
    assert (
        "forced tool call" in result.output
        and "verdict: usable with limits; use: --json-mode" in result.output
    )
    # cached: a second run probes nothing, even though the server changed
    server.set_limits(ServerLimits())
    again = cli("--model", MODEL, "--base-url", server.base_url, "--json")
    data = json.loads(again.output)
    assert again.exit_code == 1 and data["exit_code"] == 1 and data["judge"] is None
    assert data["model"]["cached"] is True and data["model"]["settings"]["json_mode"] is True
    fresh = cli("--model", MODEL, "--base-url", server.base_url, "--json", "--refresh")
    assert fresh.exit_code == 0 and json.loads(fresh.output)["model"]["verdict"] == "usable"


def test_cli_judge_model_is_probed_too(server):
    server.set_limits(ServerLimits())
    result = cli(
        "--model", MODEL, "--judge-model", "openai/judge-model", "--base-url", server.base_url, "--json"
    )
    data = json.loads(result.output)
    assert data["judge"]["spec"] == "openai/judge-model"
    assert data["judge"]["findings"]["model_listed"] is False  # the server lists only fault-model
    assert data["judge"]["verdict"] == "limited" and result.exit_code == 1


def test_unreachable_is_exit_2_with_one_line(unused_port):
    url = f"http://127.0.0.1:{unused_port}/v1"
    result = cli("--model", MODEL, "--base-url", url, "--timeout", "3")
    assert result.exit_code == 2
    assert "verdict: unusable" in result.stdout and "cannot reach" in result.stdout
    # the table is the finding; stderr holds the one error line every command gives
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"error: cannot reach {MODEL} at {url}: ")
    assert "Traceback" not in result.output
    as_json = cli("--model", MODEL, "--base-url", url, "--timeout", "3", "--json")
    assert json.loads(as_json.stdout)["exit_code"] == 2  # stdout stays JSON
    assert as_json.stderr.startswith("error: cannot reach ")


def test_an_unusable_server_gets_an_error_line_naming_it(server):
    server.set_limits(ServerLimits(no_tools=True, no_json_mode=True))
    result = cli("--model", MODEL, "--base-url", server.base_url, "--refresh")
    assert result.exit_code == 2 and "verdict: unusable" in result.stdout
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"error: {MODEL} at {server.base_url} is unusable: ")
    assert "cannot run the LLM retrievers" in line


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "error: --model is required"),
        (["--model", "gpt-4o"], "error: --model: bad model spec 'gpt-4o'"),
        (["--model", "replay/x"], "error: doctor probes a model server; replay/x has none"),
        (["--model", MODEL, "--judge-base-url", "http://127.0.0.1:9/v1"],
         "error: --judge-base-url is the endpoint of --judge-model: give --judge-model too"),
        (
            ["--model", MODEL, "--timeout", "0"],
            "error: Invalid value for '--timeout': 0 is not a number of seconds > 0",
        ),
    ],
)
def test_bad_input_is_one_line_exit_2(args, message):
    result = cli(*args)
    assert result.exit_code == 2
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith(message), result.output


def test_cache_is_per_endpoint_and_model_and_holds_no_key(server, tmp_path):
    server.set_limits(ServerLimits())
    key = "sk-doctor-secret-123456"
    url = server.base_url.replace("http://", "http://user:pw-secret-987@") + "?api-key=qs-secret-555"
    spec = parse_spec(MODEL, base_url=url, api_key=key, env={})
    plain = parse_spec(MODEL, base_url=server.base_url, env={})
    other = parse_spec("openai/other", base_url=server.base_url, env={})
    report = DoctorReport(spec=spec.spec, model=spec.model, url=spec.display_url, probed_at=datetime.now(UTC))
    path = save_report(report, spec, tmp_path)
    text = path.read_text()
    for secret in (key, "pw-secret-987", "qs-secret-555"):
        assert secret not in text and secret not in path.name
    assert cache_key(spec) == cache_key(plain)  # credentials are not part of the key
    assert cache_key(other) != cache_key(plain)
    assert cached_findings(plain, directory=tmp_path).cached is True
    assert cached_findings(other, directory=tmp_path) is None
    later = datetime.now(UTC) + timedelta(days=7, minutes=1)
    assert cached_findings(plain, directory=tmp_path, now=later) is None
    assert cached_findings(plain, directory=tmp_path, now=later - timedelta(minutes=2)) is not None


def test_run_doctor_caches_and_refreshes(server):
    spec = parse_spec(MODEL, base_url=server.base_url, env={})
    server.set_limits(ServerLimits(no_usage=True))
    first = run_doctor(spec, timeout=10)
    assert first.cached is False and first.findings.usage is False
    server.set_limits(ServerLimits())
    assert run_doctor(spec, timeout=10).cached is True
    assert cached_findings(spec).findings.usage is False
    refreshed = run_doctor(spec, timeout=10, refresh=True)
    assert refreshed.cached is False and refreshed.findings.usage is True
    assert cached_findings(spec).findings.usage is True


def test_suggest_settings_from_speed_and_serial_server():
    report = DoctorReport(spec=MODEL, model="m", url="http://127.0.0.1:1/v1", probed_at=datetime.now(UTC))
    facts = report.findings
    facts.chat = facts.tool_call = facts.tool_result_empty = True
    facts.serial, facts.local = True, True
    facts.prompt_tps, facts.generation_tps, facts.latency_s = 200.0, 10.0, 1.0
    settings = suggest_settings(report)
    # 4000/200 + 300/10 + 1 = 51 s; three times that, rounded up to 10 s
    assert settings.timeout_s == 160 and settings.concurrency == 1
    assert settings.retrievers == ["agent", "planner", "iterative"] and not settings.json_mode


def test_the_suggested_timeout_fits_the_largest_prompt_the_window_allows():
    """Retrievers fill the window the client knows, so the timeout is sized on that prompt, not on a
    typical one (against a real llama.cpp server with an 8192-token SmolLM2, a timeout sized on a
    4000-token prompt cut off most agent samples)."""
    now = datetime.now(UTC)
    report = DoctorReport(spec=MODEL, model="smollm2-135m", url="http://127.0.0.1:1/v1", probed_at=now)
    facts = report.findings
    facts.chat = facts.tool_call = facts.tool_result_empty = True
    facts.prompt_tps, facts.generation_tps, facts.latency_s = 200.0, 10.0, 1.0
    # the model table's 8192 (the server did not say): 7168/200 + 300/10 + 1 = 66.84 s; x3 -> 210 s
    settings = suggest_settings(report)
    assert settings.timeout_s == 210
    assert "a 7168-token prompt (a 8192-token window less 1024 for the reply)" in " ".join(settings.notes)
    facts.context_window = 32768  # the server's own window wins: 31744/200 + 31 = 189.72 s; x3 -> 570 s
    assert suggest_settings(report).timeout_s == 570
    # a window smaller than a typical prompt: the prompt is what it allows, not 4,000 tokens (trial 2)
    facts.context_window = 2048  # 1024/200 + 31 = 36.12 s; x3 -> 110 s
    small = suggest_settings(report)
    assert small.timeout_s == 110
    assert "a 1024-token prompt (a 2048-token window less 1024 for the reply)" in " ".join(small.notes)
    # a window the context probe only bounds from below is not sized on (review 10): the model
    # table's 8192 again
    facts.context_lower_bound = True
    assert suggest_settings(report).timeout_s == 210


def test_doctor_defaults_fill_only_what_the_user_did_not_set(server, tmp_path):
    spec = parse_spec(MODEL, base_url=server.base_url, env={})
    assert doctor_defaults(spec, directory=tmp_path) == ({}, [])  # nothing cached: nothing, no call
    report = probe(server, ServerLimits(no_tools=True))
    report.findings.serial = True
    report.settings = suggest_settings(report)
    save_report(report, spec, tmp_path)
    values, notes = doctor_defaults(spec, directory=tmp_path)
    assert values == {"json_mode": True, "concurrency": 1}
    assert notes[0].startswith(f"JSON mode: tool calls do not work at {server.base_url}")
    values, notes = doctor_defaults(spec, given={"json_mode", "concurrency"}, directory=tmp_path)
    assert values == {} and notes == []
    # a report made with credentials in the URL applies to the same server without them, and the note
    # names the URL in use (trial 15: it showed the report's "http://***@...")
    with_user = parse_spec(MODEL, base_url=server.base_url.replace("://", "://bob:pw12345678@"), env={})
    save_report(report.model_copy(update={"url": with_user.display_url}), with_user, tmp_path)
    values, notes = doctor_defaults(spec, directory=tmp_path)
    assert values and notes[0].startswith(f"JSON mode: tool calls do not work at {server.base_url} ")



def test_findings_and_endpoint_of_openais_default_endpoint_need_no_openai_key(server, monkeypatch, tmp_path):
    """Where requests go, and what the doctor found there, do not depend on a key: a judge at OpenAI's
    endpoint with only $PAGEINDEX_JUDGE_API_KEY set resolved to no URL and found no findings, since
    the spec was resolved with $OPENAI_API_KEY, which was not set."""
    from pageindex.llm.doctor import doctor_settings_for
    from pageindex.llm.profile import endpoint_url

    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(tmp_path))
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PAGEINDEX_JUDGE_API_KEY", "sk-judge-own-key")
    openai = parse_spec(MODEL, env={"OPENAI_API_KEY": "sk-when-probed"})
    assert openai.base_url == "https://api.openai.com/v1"
    report = probe(server, ServerLimits(no_tools=True))
    report.settings = suggest_settings(report)
    save_report(report, openai)
    assert endpoint_url(MODEL, None) == "https://api.openai.com/v1"
    values, notes = doctor_settings_for(MODEL, None)
    assert values == {"json_mode": True}
    assert notes[0].startswith("JSON mode: tool calls do not work at https://api.openai.com/v1")

def test_run_config_takes_doctor_findings_below_user_flags(server, monkeypatch, tmp_path):
    from bench.config import RunConfig, apply_doctor_findings

    spec = parse_spec(MODEL, base_url=server.base_url, env={})
    config = RunConfig(model=MODEL, base_url=server.base_url)
    assert apply_doctor_findings(config, MODEL) == (config, [])  # nothing cached yet
    report = probe(server, ServerLimits(no_tools=True))
    report.findings.serial = True
    report.settings = suggest_settings(report)
    save_report(report, spec)
    taken, notes = apply_doctor_findings(config, MODEL)
    assert taken.json_mode is True and taken.concurrency == 1 and len(notes) == 2
    flagged = RunConfig(model=MODEL, base_url=server.base_url, concurrency=6, json_mode=False)
    taken, notes = apply_doctor_findings(flagged, MODEL)
    assert taken.json_mode is True and taken.concurrency == 6  # the user's --concurrency wins
    assert apply_doctor_findings(config, "scripted") == (config, [])


def test_bench_run_against_a_toolless_endpoint_picks_json_mode_and_says_so(server, tmp_path):
    server.set_limits(ServerLimits(no_tools=True))
    assert cli("--model", MODEL, "--base-url", server.base_url).exit_code == 1
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app,
        ["bench", "run", "-r", "planner", "--model", MODEL, "--base-url", server.base_url, "--judge", "rules"]
        + ["--limit", "1", "-q", "-o", str(out)],
        env={"COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    assert "settings from pageindex doctor: JSON mode: tool calls do not work at" in result.output
    # said with the header, before the run's results, once (not again among the closing warnings)
    said = result.output.index("note: settings from pageindex doctor: JSON mode")
    assert said < result.output.index("sample written")
    assert result.output.count("settings from pageindex doctor: JSON mode") == 1
    info = json.loads((out / "run.json").read_text())
    assert info["extra"]["config"]["json_mode"] is True
    assert info["extra"]["doctor"][0].startswith("JSON mode: tool calls do not work at")
    sample = json.loads((out / "samples.jsonl").read_text().splitlines()[0])
    assert sample["status"] in {"answer", "fail"}, sample.get("error")


def test_ask_against_a_toolless_endpoint_picks_json_mode_and_says_so(server, tmp_path):
    from tests.tree.pdf_factory import make_pdf

    server.set_limits(ServerLimits(no_tools=True))
    assert cli("--model", MODEL, "--base-url", server.base_url).exit_code == 1
    pdf = make_pdf(
        tmp_path / "acme.pdf",
        [["ACME Corp Annual Report"], ["Item 7. Results", "Revenue was $120 million in 2023."]],
        bold_first=True,
    )
    args = ["ask", str(pdf), "What was revenue in 2023?", "-r", "planner", "--model", MODEL]
    result = CliRunner().invoke(
        app, [*args, "--base-url", server.base_url, "--json"], env={"COLUMNS": "200"}
    )
    assert result.exit_code == 0, result.output
    assert "note: settings from pageindex doctor: JSON mode: tool calls do not work at" in result.output
    assert json.loads(result.stdout)["status"] == "answer"  # the planner's calls went as JSON mode
    # the user's --timeout wins over the doctor's; JSON mode still comes from the doctor
    given = CliRunner().invoke(
        app, [*args, "--base-url", server.base_url, "--timeout", "30", "--json"], env={"COLUMNS": "200"}
    )
    assert "settings from pageindex doctor: JSON mode" in given.output
    assert "settings from pageindex doctor: timeout" not in given.output


def test_tool_loops_against_a_toolless_endpoint_are_warned_before_the_first_sample(server, tmp_path):
    """The doctor found no tool calls (its verdict: run planner); `bench run -r agent,iterative` went on
    in silence, every sample a fail after 12 turns (22,862 and 45,250 tokens a question against the
    fault server), exit 0, and so did `ask -r agent` (fresh-user trial of session 25). Each now says
    before any sample which of its retrievers need tool calls and what the doctor found."""
    from tests.tree.pdf_factory import make_pdf

    server.set_limits(ServerLimits(no_tools=True))
    assert cli("--model", MODEL, "--base-url", server.base_url).exit_code == 1
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app,
        ["bench", "run", "-r", "agent,planner,iterative", "--model", MODEL, "--base-url", server.base_url]
        + ["--judge", "rules", "--limit", "1", "-q", "-o", str(out)],
        env={"COLUMNS": "250"},
    )
    warning = (
        "warning: agent and iterative need tool calls, and pageindex doctor found no tool calls at "
        f"{server.base_url} ("
    )
    assert warning in result.output, result.output
    assert "their samples end without an answer; run planner there" in result.output
    assert result.output.index(warning) < result.output.index("sample")  # before any sample is said
    info = json.loads((out / "run.json").read_text())
    assert any(w.startswith("agent and iterative need tool calls") for w in info["extra"]["doctor_warnings"])

    planner = CliRunner().invoke(
        app,
        ["bench", "run", "-r", "planner", "--model", MODEL, "--base-url", server.base_url]
        + ["--judge", "rules", "--limit", "1", "-q", "-o", str(tmp_path / "planner")],
        env={"COLUMNS": "250"},
    )
    assert planner.exit_code == 0, planner.output
    assert "need tool calls" not in planner.output

    pdf = make_pdf(
        tmp_path / "acme.pdf",
        [["ACME Corp Annual Report"], ["Item 7. Results", "Revenue was $120 million in 2023."]],
        bold_first=True,
    )
    asked = CliRunner().invoke(
        app,
        ["ask", str(pdf), "What was revenue in 2023?", "-r", "agent", "--model", MODEL]
        + ["--base-url", server.base_url],
        env={"COLUMNS": "250"},
    )
    assert (
        "warning: agent needs tool calls, and pageindex doctor found no tool calls at "
        f"{server.base_url} ("
    ) in asked.output, asked.output
    assert "each question ends without an answer; run planner there" in asked.output


def test_doctor_findings_win_over_the_local_server_profile(server, tmp_path):
    """flags > resumed run > doctor > local-server profile > defaults: the fault server is on
    loopback, so its profile (timeout 600 s) would apply; the doctor's measured timeout wins."""
    spec = parse_spec(MODEL, base_url=server.base_url, env={})
    report = probe(server, ServerLimits())
    report.findings.serial = True
    report.findings.prompt_tps, report.findings.generation_tps = 20.0, 4.0
    report.settings = suggest_settings(report)
    assert report.settings.timeout_s > 600
    save_report(report, spec)
    out = tmp_path / "run"
    args = ["bench", "run", "-r", "planner", "--model", MODEL, "--base-url", server.base_url]
    result = CliRunner().invoke(
        app, [*args, "--judge", "rules", "--limit", "1", "-q", "-o", str(out)], env={"COLUMNS": "200"}
    )
    assert result.exit_code == 0, result.output
    assert f"settings from pageindex doctor: timeout {report.settings.timeout_s:g}s" in result.output
    profile_line = next(ln for ln in result.output.splitlines() if ln.startswith("local-server profile"))
    assert "timeout 600s" not in profile_line and "concurrency 1" not in profile_line
    config = json.loads((out / "run.json").read_text())["extra"]["config"]
    assert config["timeout_s"] == report.settings.timeout_s and config["concurrency"] == 1
    # the user's flag still wins over the doctor
    again = CliRunner().invoke(
        app,
        [*args, "--judge", "rules", "--limit", "1", "-q", "-o", str(tmp_path / "r2"), "--timeout", "45"],
        env={"COLUMNS": "200"},
    )
    assert again.exit_code == 0, again.output
    assert json.loads((tmp_path / "r2" / "run.json").read_text())["extra"]["config"]["timeout_s"] == 45


def test_settle_orders_flags_doctor_profile_for_every_caller(server, monkeypatch):
    """One layering for bench run and ask: flag > doctor > local-server profile > default; the
    fake server is on loopback, so without findings the profile decides."""
    from pageindex.cli.ask import _client_settings
    from pageindex.llm.profile import settle

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    spec = parse_spec(MODEL, base_url=server.base_url, env={})
    given = {"concurrency": None, "timeout_s": None, "max_retries": None}
    before = settle(MODEL, server.base_url, given)
    assert before.sources["concurrency"] == "local-server profile" and before.doctor_notes == []
    report = probe(server, ServerLimits(no_tools=True))
    report.findings.serial = True
    report.settings = suggest_settings(report)
    save_report(report, spec)
    after = settle(MODEL, server.base_url, given)
    assert after.sources["concurrency"] == "pageindex doctor" and after.settings["concurrency"] == 1
    assert after.settings["json_mode"] is True and len(after.doctor_notes) == 2
    assert after.sources["timeout_s"] == "local-server profile"  # the doctor did not decide it
    assert "concurrency 1" not in (after.note() or "")  # the header names only what the profile set
    flagged = settle(MODEL, server.base_url, {**given, "concurrency": 3})
    assert (flagged.settings["concurrency"], flagged.sources["concurrency"]) == (3, "flag")
    resumed = settle(MODEL, server.base_url, given, stored={"concurrency": 2})
    assert resumed.sources["concurrency"] == "resumed run" and resumed.doctor_notes == []
    unset = {"timeout": None, "max_retries": None, "concurrency": None, "json_mode": False}
    ask, notes = _client_settings(MODEL, server.base_url, **unset)
    assert len(notes) == 3 and notes[0].startswith("local-server profile for")
    assert notes[1].startswith("note: settings from pageindex doctor: JSON mode")
    assert ask["json_mode"] is True and ask["concurrency"] == 1 and ask["timeout"] == 600.0


def test_the_client_reads_the_window_from_the_preflight_once(server):
    """The preflight's /models entry gives the client its window: discovery asks no second time,
    and the key table is the doctor's (one reader, ``context_window_from_metadata``)."""
    from pageindex.llm import make_client
    from pageindex.llm.tokens import context_window_from_metadata

    server.set_limits(ServerLimits(context_window=4096))
    server.reset_stats()
    client = make_client(MODEL, base_url=server.base_url)
    asyncio.run(client.check())
    listed = server.stats().by_path.get("/v1/models", 0)
    assert listed == 1
    assert asyncio.run(client.ensure_limits()) == 4096 and client.context_window_source == "server metadata"
    assert server.stats().by_path.get("/v1/models", 0) == listed  # not fetched again
    report = probe(server, ServerLimits(context_window=4096))
    assert report.findings.context_window == client.context_window  # the doctor reads it the same way
    read = context_window_from_metadata
    assert read({"id": "m", "meta": {"n_ctx": 2048, "n_ctx_train": 32768}}) == (2048, "n_ctx")
    # the training window is not the server's: taking it would size prompts past what it accepts
    assert read({"id": "m", "meta": {"n_ctx_train": 32768}}) == (None, "")
    assert read({"metadata": {"max_input_tokens": 128000}}) == (128000, "max_input_tokens")


def test_an_unusable_verdict_is_not_cached_a_usable_one_is(server):
    """A server fixed (or started on that port) after an unusable verdict is found by the next
    doctor at once, not after the cache expires; a usable verdict is served from the cache."""

    spec = parse_spec(MODEL, base_url=server.base_url, env={})
    server.set_limits(ServerLimits(no_tools=True, no_json_mode=True))
    assert run_doctor(spec, timeout=10).verdict == "unusable"
    assert cached_findings(spec) is None
    server.set_limits(ServerLimits())
    fixed = run_doctor(spec, timeout=10)
    assert fixed.verdict != "unusable" and not fixed.cached
    assert cached_findings(spec) is not None and run_doctor(spec, timeout=10).cached


def test_cached_findings_are_served_only_while_the_endpoint_passes_the_preflight():
    """Findings cached for a server that has since stopped, or that now refuses the key (a LiteLLM proxy
    restarted with a master_key), were served as they were: `pageindex doctor` said `usable with limits`,
    exit 1, of a proxy that was not running (seen: LiteLLM stopped; `bench run` then said `cannot reach`,
    exit 2). Now the preflight runs first; a failed one is the doctor's unusable verdict."""
    srv = FaultServer(CompetentPolicy()).start()
    url = srv.base_url
    try:
        spec = parse_spec(MODEL, base_url=url, env={})
        assert run_doctor(spec, timeout=10).verdict == "usable"
        again = run_doctor(spec, timeout=10)
        assert again.cached and again.verdict == "usable"
        srv.require_key = "sk-the-proxy-key-0123"  # the server now wants a key
        refused = run_doctor(spec, timeout=10)
        assert not refused.cached and refused.verdict == "unusable"
        assert refused.reasons == [
            f"{url} requires an API key for {MODEL} (HTTP 401) and none was given (OPENAI_API_KEY is not "
            "set); set OPENAI_API_KEY to the server's key"
        ]
        srv.require_key = None
    finally:
        srv.stop()
    assert cached_findings(spec) is not None  # still on disk: a restarted server finds them again
    gone = run_doctor(spec, timeout=10)
    assert not gone.cached and gone.verdict == "unusable" and gone.exit_code == 2
    assert gone.check("reachable").status == "fail"
    assert gone.check("reachable").detail == f"cannot reach {MODEL} at {url}: connection refused"
    result = cli("--model", MODEL, "--base-url", url)
    assert result.exit_code == 2 and "cached from" not in result.output, result.output
    assert f"error: cannot reach {MODEL} at {url}: connection refused" in result.output


def test_cached_findings_are_not_served_when_the_server_lists_another_window_now():
    """llama-server restarted with -c 512 after a doctor at -c 4096 lists n_ctx 512: the doctor said the
    cached `4,096 tokens (n_ctx in /models)`. A window the metadata lists differently now probes again."""
    with FaultServer(CompetentPolicy(), limits=ServerLimits(context_window=4096)) as srv:
        spec = parse_spec(MODEL, base_url=srv.base_url, env={})
        first = run_doctor(spec, timeout=10)
        assert first.findings.context_window == 4096 and first.findings.context_source == "metadata"
        assert run_doctor(spec, timeout=10).cached
        srv.set_limits(ServerLimits(context_window=512))
        again = run_doctor(spec, timeout=10)
    assert not again.cached and again.findings.context_window == 512


def test_cached_findings_are_not_served_for_a_proxy_whose_model_server_is_down():
    """A LiteLLM proxy lists its models whatever its model server does: with llama-server killed behind it,
    the cached findings were served after the preflight, `usable with limits`, exit 1 (`--refresh` said
    `unusable`). One token of chat now asks the proxy too. (An imitation on loopback answering the body the
    real proxy, litellm 1.108.7, answered; not the real proxy.)"""
    from aiohttp import web

    from pageindex.llm import wire
    from pageindex.llm.fakeserver import LoopbackServer, openai_app

    said = ("litellm.InternalServerError: InternalServerError: OpenAIException - Connection error.\n\n"
            "LiteLLM: model group 'gemma' failed with the error above. No fallback was attempted.")

    class ProxyWithoutItsServer(LoopbackServer):
        def build_app(self) -> web.Application:
            async def chat(request: web.Request) -> web.Response:
                error = {"message": said, "type": "internal_server_error", "param": None, "code": "500"}
                return web.json_response({"error": error}, status=500)

            return openai_app(chat=chat, models=lambda: [wire.model_entry("fault-model")])

    with FaultServer(CompetentPolicy()) as srv:
        port, spec = srv.port, parse_spec(MODEL, base_url=srv.base_url, env={})
        assert run_doctor(spec, timeout=10).verdict == "usable"
        assert run_doctor(spec, timeout=10).cached
    with ProxyWithoutItsServer(port=port):
        again = run_doctor(spec, timeout=10)
    assert not again.cached and again.verdict == "unusable"
    chat = again.check("chat")
    assert chat is not None and chat.status == "fail" and "OpenAIException - Connection error." in chat.detail


def test_cached_findings_are_not_served_when_the_server_tells_another_window_now():
    """A plain llama-server user's `-m openai/gemma`: the server lists only its model file, so the window
    is the one model's n_ctx, read as a run reads it (context_source "server"). Restarted with -c 512
    after a doctor at -c 4096, the doctor said the cached `4,096 tokens (server metadata)` and its 3,072-token
    context budget. A window the server tells differently probes again."""
    with FaultServer(CompetentPolicy(), limits=ServerLimits(context_window=4096)) as srv:
        spec = parse_spec("openai/gemma", base_url=srv.base_url, env={})
        first = run_doctor(spec, timeout=10)
        assert first.findings.model_listed is False
        assert (first.findings.context_window, first.findings.context_source) == (4096, "server")
        assert run_doctor(spec, timeout=10).cached
        srv.set_limits(ServerLimits(context_window=512))
        again = run_doctor(spec, timeout=10)
    assert not again.cached and again.findings.context_window == 512


def test_cached_findings_of_an_unlisted_model_cost_one_chat_request():
    """Serving cached findings asks the server for one token of chat, to see that a proxy still reaches
    its model server; for a model the server does not list, the preflight's own one-token check already
    asked (and was answered): the check is not sent twice."""
    with FaultServer(CompetentPolicy(), limits=ServerLimits(context_window=4096)) as srv:
        spec = parse_spec("openai/gemma", base_url=srv.base_url, env={})
        assert run_doctor(spec, timeout=10).findings.model_listed is False
        before = srv.stats().chat_requests
        assert run_doctor(spec, timeout=10).cached
        assert srv.stats().chat_requests - before == 1
        listed = parse_spec(MODEL, base_url=srv.base_url, env={})  # listed: no check by the preflight
        assert run_doctor(listed, timeout=10).findings.model_listed is True
        before = srv.stats().chat_requests
        assert run_doctor(listed, timeout=10).cached
        assert srv.stats().chat_requests - before == 1


def test_passing_server_errors_are_tried_again_not_taken_for_limits():
    """A 503 or 429 on a probe's first try is the server's passing trouble: the probe is tried again
    (a run retries such calls too) and its finding is what the server can do (trial 2)."""
    with FaultServer(
        CompetentPolicy(), rate=1.0, faults=["503", "429"], max_faults_per_key=1, retry_after_seconds=0
    ) as srv:
        report = probe(srv, ServerLimits())
        assert report.verdict == "usable" and not report.unsure, report.checks
        assert report.check("server_errors") is None
        assert status(report, "tool_result_empty") == "ok" and status(report, "json_mode") == "ok"


def test_server_errors_on_every_try_make_an_unsure_report_that_is_not_cached():
    with FaultServer(CompetentPolicy(), rates={"503": 0.5}, seed=3, retry_after_seconds=0) as srv:
        spec = parse_spec(MODEL, base_url=srv.base_url, env={})
        for seed in range(3, 40):  # a seed whose faults fall on some probe three times running
            srv.config.seed = seed
            report = run_doctor(spec, timeout=10, refresh=True)
            if report.unsure:
                break
        assert report.unsure, "no seed made a probe fail on every try"
        row = report.check("server_errors")
        assert row is not None and row.status == "warn" and "on all 3 tries" in row.detail
        assert "not cached" in row.detail
        kept = cached_findings(spec)  # an earlier seed's sure report may be there, never this one
        assert kept is None or (not kept.unsure and kept.probed_at != report.probed_at)


@pytest.mark.parametrize(
    ("replies", "calls", "unsure"),
    [
        ([(500, "tools param requires --jinja flag")] * 3, 2, False),  # the same 500 twice: the answer
        ([(503, "overloaded")] * 3, 3, True),  # passing trouble on every try
        ([(500, "worker crashed"), (500, "out of memory"), (500, "worker crashed")], 3, True),
        ([(429, "slow down"), (200, "")], 2, False),  # tried again, then answered
    ],
)
def test_which_server_errors_are_tried_again(replies, calls, unsure, monkeypatch):
    """Review 10: llama.cpp answers every request with tools and no --jinja flag with the same 500;
    that is what the server does, not passing trouble (which is tried again, and said unsure)."""
    import httpx

    from pageindex.llm import doctor

    monkeypatch.setattr(doctor, "_TRANSIENT_PAUSE_S", (0.0, 0.0))
    seen: list[int] = []

    def reply(request: httpx.Request) -> httpx.Response:
        status, message = replies[len(seen)]
        seen.append(status)
        if status == 200:
            message = {"role": "assistant", "content": "PONG"}
            return httpx.Response(200, json={"choices": [{"message": message}]})
        return httpx.Response(status, json={"error": {"message": message}})

    spec = parse_spec(MODEL, base_url="http://127.0.0.1:9/v1", env={})
    prober = doctor._Prober(spec, 5, httpx.MockTransport(reply))
    answer = asyncio.run(prober.chat([{"role": "user", "content": "hi"}]))
    assert len(seen) == calls and bool(prober.transient) is unsure
    assert answer.ok is (replies[calls - 1][0] == 200)


def _busy_server(while_busy: Callable[[], Any]) -> Any:
    """A doctor prober against a server that answers one request in 0.1 s, and a request that comes
    while it is busy with ``while_busy()`` (a response, or an exception it raises)."""
    import httpx

    from pageindex.llm import doctor

    busy: list[bool] = [False]

    async def reply(request: httpx.Request) -> httpx.Response:
        if busy[0]:
            return while_busy()
        busy[0] = True
        await asyncio.sleep(0.1)
        busy[0] = False
        return httpx.Response(200, json={"choices": [{"message": {"role": "assistant", "content": "1 2"}}]})

    spec = parse_spec(MODEL, base_url="http://127.0.0.1:9/v1", env={})
    return doctor._Prober(spec, 5, httpx.MockTransport(reply))


def test_a_server_that_refuses_a_second_request_while_busy_serves_one_at_a_time():
    """Review 10: the refused request used to be retried after the first finished, and the pair then
    looked side by side."""
    import httpx

    from pageindex.llm import doctor

    prober = _busy_server(lambda: httpx.Response(503, json={"error": {"message": "busy"}}))
    serial, detail = asyncio.run(doctor._concurrency(prober))
    assert serial is True and "one was refused (HTTP 503" in detail and detail.endswith("one at a time")
    assert prober.calls == 2 and not prober.transient


def _answer(latency: float, tokens: int):
    from pageindex.llm import doctor

    usage = {"prompt_tokens": 20, "completion_tokens": tokens}
    data = {"choices": [{"message": {"role": "assistant", "content": "1 2 3"}}], "usage": usage}
    return doctor._Answer(status=200, data=data, latency_s=latency)


@pytest.mark.parametrize(
    ("first", "later", "serial"),
    [
        ((1.0, 16), (2.0, 16), True),  # the later reply waited for the earlier one
        ((1.0, 16), (1.1, 16), False),  # both at once, a little slower together
        # trial 11: the later reply generated fewer tokens, so "1.25x the faster" was read as side by
        # side; per generated token it took as long as both together
        ((1.0, 16), (1.25, 4), True),
        ((1.0, 4), (1.1, 16), False),  # fewer tokens first: the later one's own time explains it all
    ],
)
def test_a_pair_is_read_per_generated_token(first, later, serial):
    from pageindex.llm import doctor

    reading = doctor._pair_reading([_answer(*first), _answer(*later)])
    assert (reading >= 0.5) is serial, reading


def test_an_unclear_pair_is_sent_again_and_read_as_one_at_a_time_if_still_unclear(monkeypatch):
    """Halfway between "its own time" and "both together", one pair does not decide: a second pair
    is sent, and if it is as unclear, the safe reading is taken (concurrency 1, no tool-cap probe)."""
    import contextvars
    from types import SimpleNamespace

    import httpx

    from pageindex.llm import doctor

    # each pair: the later reply 1.41x the earlier, same tokens (the middle of the unclear band, 1.27x
    # to 1.57x). The latencies are the prober's clock: a request's handler runs in its task, and moves
    # that task's clock on by its delay (real sleeps of 0.4 s and 0.566 s read 1.6x on a loaded machine)
    delays = iter([0.4, 0.566, 0.4, 0.566])
    waited = contextvars.ContextVar("waited", default=0.0)
    monkeypatch.setattr(doctor, "time", SimpleNamespace(perf_counter=lambda: 1000.0 + waited.get()))

    async def reply(request: httpx.Request) -> httpx.Response:
        delay = next(delays)
        await asyncio.sleep(delay / 10)  # the earlier one answers first
        waited.set(waited.get() + delay)
        message = {"role": "assistant", "content": "1 2 3"}
        usage = {"prompt_tokens": 20, "completion_tokens": 16}
        return httpx.Response(200, json={"choices": [{"message": message}], "usage": usage})

    spec = parse_spec(MODEL, base_url="http://127.0.0.1:9/v1", env={})
    prober = doctor._Prober(spec, 5, httpx.MockTransport(reply))
    serial, detail = asyncio.run(doctor._concurrency(prober))
    assert prober.calls == 4 and serial is True
    measured = "(the slower took 1.4× and 1.4× the faster)"
    assert detail.startswith("2 pairs served one after the other " + measured), detail
    assert detail.endswith(": unclear, taken as one at a time (the safe reading)")


def test_a_pair_with_a_failed_request_is_said_and_a_local_server_is_advised_one_at_a_time():
    """Trial: against the fault server (30% faults) one request of the pair failed, the row was left
    out, and the loopback server was advised --concurrency 2. The row now says the pair was not
    measured, and a server on this machine of unknown concurrency is advised 1 (the safe reading)."""
    import httpx

    from pageindex.llm import doctor

    def drops_the_second() -> httpx.Response:
        raise httpx.RemoteProtocolError("Server disconnected without sending a response.")

    prober = _busy_server(drops_the_second)
    serial, detail = asyncio.run(doctor._concurrency(prober))
    assert serial is None and prober.calls == 2
    assert detail.startswith("not measured: 2 requests sent at once, one of them failed ("), detail

    def fails(request: httpx.Request) -> httpx.Response:
        return httpx.Response(400, json={"error": {"message": "bad request"}})

    prober = doctor._Prober(prober.spec, 5, httpx.MockTransport(fails))
    serial, detail = asyncio.run(doctor._concurrency(prober))
    assert serial is None and detail.startswith("not measured: 2 requests sent at once, both failed (")

    now = datetime.now(UTC)
    report = doctor.DoctorReport(spec=MODEL, model="m", url="http://127.0.0.1:9/v1", probed_at=now)
    report.findings.local, report.findings.serial = True, None
    assert doctor.suggest_settings(report).concurrency == 1
    report.findings.serial = False
    assert doctor.suggest_settings(report).concurrency == 2


class SaysNothing:
    """A model like gemma-3-270m behind llama-cpp-python (review of ask and doctor on a real server):
    every free reply is an empty message (0 completion tokens), while a forced tool call and JSON mode,
    which the server's grammar shapes, come back as asked. The server rejects content: null."""

    def __init__(self) -> None:
        self.capable = CompetentPolicy()

    def __call__(self, chat):
        from bench.faults.protocol import Reply

        if chat.forced_tool() or chat.response_format:
            return self.capable(chat)
        return Reply(content="", finish_reason="stop")


def test_a_model_that_says_nothing_is_not_taken_for_a_server_that_rejects_tool_results():
    """The doctor said 'tool result (content "") no: an empty reply' and then 'tool results are
    rejected: use --json-mode ... run planner' of a server that accepted them; 'plain chat yes:
    replied ''', and 'generation speed 0.0 tokens/s (0 tokens)', which left the timeout at 60 s for
    a server whose 400-token prompt took 7 s."""
    with FaultServer(SaysNothing(), limits=ServerLimits(reject_null_content=True)) as srv:
        spec = parse_spec(MODEL, base_url=srv.base_url, env={})
        report = asyncio.run(diagnose(spec, timeout=10))
    facts = report.findings
    assert facts.chat and facts.chat_empty and status(report, "chat") == "warn"
    assert report.check("chat").detail == "an empty reply: the server answered, but the model said nothing"
    assert facts.tool_call and facts.tool_result_empty and facts.tools_usable
    assert status(report, "tool_result_empty") == "info"
    assert report.check("tool_result_empty").detail.startswith("accepted; the reply was empty")
    assert status(report, "tool_result_null") == "fail"  # HTTP 400: this one is a rejection
    assert report.verdict == "limited"
    assert report.reasons[0].startswith("rejects content: null")
    assert "the model answered a plain request with an empty message: its answers may be empty too" in (
        report.reasons
    )
    assert not any("tool results are rejected" in r for r in report.reasons)
    assert report.settings.json_mode is False
    assert report.settings.retrievers == ["agent", "planner", "iterative"]
    # the generation speed comes from a reply that generated tokens (the forced tool call's)
    assert facts.generation_tps and facts.generation_tps > 0
    assert "the longest reply of the probes" in report.check("generation_speed").detail


def test_the_timeout_counts_a_whole_capped_reply_where_replies_run_past_the_turns_end():
    """Fresh-user trial of session 26: llama-server over gemma-3-270m with its GGUF's ChatML template (the
    doctor's limit: replies write out <|im_end|> and run to max_tokens) was advised `--timeout 80`, sized on
    a 300-token reply at 16 tokens/s; every reply of the `ask` that followed ran to its 1,024-token cap (64 s
    of generation alone), and its fifth call timed out after 80 s. Such a reply is sized at the cap."""
    report = DoctorReport(spec=MODEL, model="m", url="http://127.0.0.1:1/v1", probed_at=datetime.now(UTC))
    facts = report.findings
    facts.chat, facts.json_schema = True, True
    facts.context_window = 4096
    facts.prompt_tps, facts.generation_tps, facts.latency_s = 495.0, 16.0, 1.0
    # 3072/495 + 300/16 + 1 = 25.95 s; x3 -> 80 s, where the markers are not seen
    assert suggest_settings(report).timeout_s == 80
    facts.template_markers = ["<|im_end|>"]
    settings = suggest_settings(report)
    # 3072/495 + 1024/16 + 1 = 71.2 s; x3 -> 220 s
    assert settings.timeout_s == 220
    assert (
        "timeout 220s: a 3072-token prompt (a 4096-token window less 1024 for the reply) and a 1024-token "
        "reply (replies run to their cap: the chat template does not end the turn) take about 71s here"
    ) in settings.notes


def test_the_timeout_is_sized_from_the_prompt_speed_when_no_token_was_generated():
    report = DoctorReport(spec=MODEL, model="m", url="http://127.0.0.1:1/v1", probed_at=datetime.now(UTC))
    facts = report.findings
    facts.chat = facts.tool_call = facts.tool_result_empty = True
    facts.prompt_tps, facts.generation_tps, facts.latency_s = 53.0, None, 0.4
    settings = suggest_settings(report)
    # 4000/53 + 0.4 = 75.9 s; three times that, rounded up to 10 s (it was the default 60)
    assert settings.timeout_s == 230
    assert "the reply's time is not counted: the model generated no tokens to measure" in settings.notes[-1]


def test_a_plain_chat_that_times_out_says_to_give_a_larger_timeout():
    with FaultServer(CompetentPolicy(), rate=1.0, faults=["stall"], stall_seconds=5) as srv:
        spec = parse_spec(MODEL, base_url=srv.base_url, env={})
        report = asyncio.run(diagnose(spec, timeout=1))
    assert report.verdict == "unusable"
    assert report.check("chat").detail == (
        "POST /chat/completions: no answer within 1s (a server that is slow, or busy with another "
        "request, needs a larger --timeout)"
    )


def test_an_unknown_window_says_what_runs_will_assume(server):
    spec = parse_spec("openai/gemma-3-270m", base_url=server.base_url, env={})
    report = asyncio.run(diagnose(spec, timeout=10))
    assert report.check("context_window").detail == (
        "unknown: the server does not say (--probe-context probes it); runs assume 32,768 "
        "tokens (known model table): a server started with a smaller context refuses their longer "
        "prompts, give --context-window N"
    )


def test_a_failed_preflight_counts_no_calls_it_did_not_count(unused_port):
    out = cli("-m", MODEL, "--base-url", f"http://127.0.0.1:{unused_port}/v1")
    assert out.exit_code == 2
    assert "0 calls" not in out.output  # the preflight tried; '0 calls, about 0 tokens' said otherwise


def test_a_report_cached_before_empty_replies_were_told_from_rejections_is_not_used(server):
    spec = parse_spec(MODEL, base_url=server.base_url, env={})
    report = probe(server, ServerLimits())
    path = save_report(report, spec)
    old = json.loads(path.read_text())
    old["version"] = 1  # its tool_result_empty may be an empty reply read as a rejection
    path.write_text(json.dumps(old))
    assert cached_findings(spec) is None
    assert doctor_defaults(spec) == ({}, [])


def test_a_bad_model_in_the_variable_is_said_as_the_variable(monkeypatch):
    """A bad spec from ``$PAGEINDEX_MODEL`` was said as ``--model: bad model spec ...``, an option the
    user never typed."""
    monkeypatch.setenv("PAGEINDEX_MODEL", "gpt-4o")
    result = cli()
    assert result.exit_code == 2
    assert result.output.strip().startswith("error: $PAGEINDEX_MODEL: bad model spec 'gpt-4o'"), result.output
    assert cli("--model", "bad/x").output.startswith("error: --model: bad model spec 'bad/x'")


def _refusing_over_4000_tokens(said: str):
    """A loopback OpenAI-compatible server of model ``gemma`` that refuses a prompt of more than about 4,000
    tokens (4 characters a token) with HTTP 400 and ``said`` as its error message, and answers "OK" below."""
    from aiohttp import web

    from pageindex.llm import wire
    from pageindex.llm.fakeserver import LoopbackServer, openai_app

    class Refusing(LoopbackServer):
        def build_app(self) -> web.Application:
            async def chat(request: web.Request) -> web.Response:
                body = await request.json()
                chars = sum(len(m.get("content") or "") for m in body["messages"])
                if chars // 4 > 4000:
                    error = {"message": said, "type": "invalid_request_error", "param": None, "code": "400"}
                    return web.json_response({"error": error}, status=400)
                reply = wire.completion_body(
                    model=body["model"], content="OK", prompt_tokens=chars // 4, completion_tokens=1)
                return web.json_response(reply)

            return openai_app(chat=chat, models=lambda: [wire.model_entry("gemma")])

    return Refusing()


def test_the_context_probe_reads_the_window_a_proxy_wraps_in_its_own_words():
    """LiteLLM's proxy (seen for real in front of llama-server) wraps the server's refusal in its own
    words, and the figure came after the one-line gist the probe read: "at least 3,561 tokens" and a
    --context-window 3561 to give, where the refusal said 4096."""
    said = ("litellm.ContextWindowExceededError: litellm.BadRequestError: ContextWindowExceededError: "
            "OpenAIException - request (7090 tokens) exceeds the available context size (4096 tokens), try "
            "increasing it\nmodel=gemma. context_window_fallbacks=None. fallbacks=None.")  # fmt: skip

    with _refusing_over_4000_tokens(said) as proxy:
        spec = parse_spec("openai/gemma", base_url=proxy.base_url, env={})
        report = asyncio.run(diagnose(spec, timeout=10, probe_context=True))
    probe = report.check("context_probe")
    assert probe is not None and probe.detail.startswith("4,096 tokens, as the refusal states"), probe.detail
    assert report.findings.context_window == 4096 and not report.findings.context_lower_bound


def test_the_window_the_context_probe_found_is_taken_by_runs_that_give_none(server, tmp_path):
    """The verdict said `use: --context-window 4096` and runs went on sizing prompts for the known table's
    window until the user typed it: the cached findings now give it as the other settings, below the
    user's flag, and only to the answering model."""
    from bench.config import RunConfig, apply_doctor_findings

    model = "openai/gemma-3-270m"  # runs assume the known table's 32,768
    spec = parse_spec(model, base_url=server.base_url, env={})
    server.set_limits(ServerLimits(context_window=4096, advertise_context=False))
    report = asyncio.run(diagnose(spec, timeout=10, probe_context=True))
    assert report.settings.context_flag == 4096  # stated refusing the probe's longer prompt
    save_report(report, spec, tmp_path)
    values, notes = doctor_defaults(spec, directory=tmp_path)
    assert values["context_window"] == 4096
    said = "context window 4,096 tokens: the server stated it when refusing a longer prompt"
    assert any(n.startswith(said) for n in notes)
    assert "context_window" not in doctor_defaults(spec, given={"context_window"}, directory=tmp_path)[0]
    save_report(report, spec)  # where runs read it ($PAGEINDEX_CACHE_DIR, a temporary folder in tests)
    taken, _ = apply_doctor_findings(RunConfig(model=model, base_url=server.base_url), model)
    assert taken.context_window == 4096
    # as `bench run` builds it: --context-window not given is passed as None, which counted as given, so
    # the CLI never took the window (seen through a LiteLLM proxy: `ask` took it, `bench run` did not)
    as_cli = RunConfig(model=model, base_url=server.base_url, context_window=None, json_mode=False)
    assert apply_doctor_findings(as_cli, model)[0].context_window == 4096
    from bench.runner import demo_dataset_dir

    out = tmp_path / "run"
    run = CliRunner().invoke(app, [
        "bench", "run", "-d", str(demo_dataset_dir()), "-r", "planner", "--judge", "rules", "-n", "1",
        "-m", model, "--base-url", server.base_url, "-o", str(out), "-q",
    ])  # fmt: skip
    assert run.exit_code in (0, 4), run.output
    assert f"note: settings from pageindex doctor: {said}" in " ".join(run.output.split()), run.output
    assert json.loads((out / "run.json").read_text())["extra"]["config"]["context_window"] == 4096
    flagged = RunConfig(model=model, base_url=server.base_url, context_window=2048)
    assert apply_doctor_findings(flagged, model)[0].context_window == 2048  # the user's flag wins
    judged = RunConfig(judge_model=model, base_url=server.base_url)
    assert apply_doctor_findings(judged, model, answering=False)[0].context_window is None
    # bench judge / rejudge: the judge model's own endpoint, whose note said the window and did not apply it
    from bench.cli.judge import _judge_settings

    settings, notes = _judge_settings(model, server.base_url)
    assert settings["context_window"] == 4096 and any("context window 4,096 tokens" in n for n in notes)


def test_a_window_from_the_doctors_probe_is_named_so_where_a_prompt_outgrows_it(server, tmp_path):
    """A server restarted with a smaller context than the doctor's probe found: the errors of `bench run`
    and `ask` said the window was "as assumed (--context-window)" -- a flag the user never gave."""
    from bench.runner import demo_dataset_dir
    from bench.samples import load_samples

    model = "openai/gemma-3-270m"
    spec = parse_spec(model, base_url=server.base_url, env={})
    server.set_limits(ServerLimits(context_window=4096, advertise_context=False))
    save_report(asyncio.run(diagnose(spec, timeout=10, probe_context=True)), spec)
    server.set_limits(ServerLimits(context_window=300, advertise_context=False))  # restarted smaller
    said = "the server's window is 300 tokens, not 4096 as assumed (pageindex doctor --probe-context); give "
    demo = demo_dataset_dir()
    run = CliRunner().invoke(app, [
        "bench", "run", "-d", str(demo), "-r", "planner", "--judge", "rules", "-n", "1",
        "-m", model, "--base-url", server.base_url, "-o", str(tmp_path / "run"), "-q",
    ])  # fmt: skip
    assert run.exit_code == 4, run.output
    [sample] = load_samples(tmp_path / "run" / "samples.jsonl")
    assert sample.error_kind == "context_length" and said in (sample.error or ""), sample.error
    pdf = sorted((demo / "pdfs").glob("*.pdf"))[0]
    asked = CliRunner().invoke(app, [
        "ask", str(pdf), "What was revenue?", "-r", "planner", "-m", model, "--base-url", server.base_url,
    ], env={"COLUMNS": "400"})  # fmt: skip
    assert asked.exit_code == 4 and said in " ".join(asked.output.split()), asked.output
    # the flag is still named as the flag
    flagged = CliRunner().invoke(app, [
        "bench", "run", "-d", str(demo), "-r", "planner", "--judge", "rules", "-n", "1", "-m", model,
        "--base-url", server.base_url, "--context-window", "2048", "-o", str(tmp_path / "flagged"), "-q",
    ])  # fmt: skip
    assert flagged.exit_code == 4, flagged.output
    [sample] = load_samples(tmp_path / "flagged" / "samples.jsonl")
    assert "not 2048 as assumed (--context-window)" in (sample.error or ""), sample.error


def test_a_cache_that_cannot_be_written_loses_no_findings(server, tmp_path, monkeypatch):
    """``PAGEINDEX_CACHE_DIR`` a regular file (or a full disk): the findings are printed, the exit code
    is the verdict's, and one warning says they were not kept. It was ``error: internal error:
    NotADirectoryError``, exit 2, the probes' findings lost."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(blocker))
    server.set_limits(ServerLimits())
    result = cli("--model", MODEL, "--base-url", server.base_url)
    assert result.exit_code == 0, result.output
    assert "verdict: usable" in result.output and "internal error" not in result.output
    spec = parse_spec(MODEL, base_url=server.base_url, env={})
    warning = (
        f"warning: the findings are not cached: cannot write {blocker}/doctor/{cache_key(spec)} (Not a "
        "directory); bench run and ask will not take their settings from them"
    )
    assert warning in result.output.replace("\n", " ").replace("  ", " ")
    assert blocker.read_text() == "x"


def test_a_report_that_cannot_be_saved_leaves_no_temp_file(tmp_path, monkeypatch):
    report = DoctorReport(spec=MODEL, model="m", url="http://127.0.0.1:1/v1", probed_at=datetime.now(UTC))
    spec = parse_spec(MODEL, base_url="http://127.0.0.1:1/v1", env={})

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("os.fsync", full)  # the temp file's data met a full disk
    with pytest.raises(OSError):
        save_report(report, spec, directory=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_cached_report_is_read_as_utf8_whatever_the_locale(tmp_path):
    """Reports are written UTF-8 ("1.5×", "…" in the reasons) and were read in the locale's encoding:
    under an ASCII locale every report holding such a character was a cache miss, probed again; under
    Latin-1 its reasons came back as mojibake ("1.5Ã\\x97")."""
    import subprocess
    import sys

    spec = parse_spec(MODEL, base_url="http://127.0.0.1:9/v1", env={})
    reason = "tool calls 1.5× slower than plain replies…"
    report = DoctorReport(
        spec=spec.spec, model=spec.model, url=spec.display_url, probed_at=datetime.now(UTC), reasons=[reason]
    )
    save_report(report, spec, tmp_path)
    script = (
        "import sys\n"
        "from pageindex.llm.doctor import cached_findings\n"
        "from pageindex.llm.spec import parse_spec\n"
        f"spec = parse_spec({MODEL!r}, base_url='http://127.0.0.1:9/v1', env={{}})\n"
        f"found = cached_findings(spec, directory=__import__('pathlib').Path({str(tmp_path)!r}))\n"
        "sys.stdout.write(ascii(found and found.reasons))\n"
    )
    repo = str(Path(__file__).resolve().parents[2])
    for locale_env in ({"LC_ALL": "C", "PYTHONUTF8": "0"}, {"LC_ALL": "C.UTF-8"}):
        done = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": repo, **locale_env},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert done.stdout == ascii([reason]), locale_env


def test_a_reply_with_square_brackets_is_quoted_as_written(tmp_path, monkeypatch):
    """A Mistral model on a server whose template does not end its turn writes `[/INST]`: rich read it
    as a closing tag, the table was printed again without markup, and every result read `[green]yes[/]`;
    a `[b]` in a reply was dropped."""
    from pageindex.llm.scripted import ScriptedModel
    from pageindex.llm.testing import FakeOpenAIServer

    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(tmp_path))
    reply = "PONG [/INST] [b]bold[/b] [INST] again"
    with FakeOpenAIServer(ScriptedModel(policy=lambda request: reply, name="mistral")) as srv:
        result = cli("--model", "openai/mistral", "--base-url", srv.base_url)
    assert result.exit_code == 2, result.output
    assert "[green]" not in result.output and "[/]" not in result.output
    rows = [line for line in result.output.splitlines() if line.startswith("│ plain chat ")]
    assert len(rows) == 1 and f"│ yes    │ replied '{reply}'" in rows[0], result.output


@pytest.mark.parametrize(
    ("said", "count"),
    [
        # llama-server behind LiteLLM (the fresh-user trial's), llama-server itself, OpenAI and the fault
        # server, vLLM (the messages' count, not the one with the completion), llama-cpp-python
        ("OpenAIException - request (7090 tokens) exceeds the available context size (4096 tokens), try "
         "increasing it", 7090),
        ("request (7090 tokens) exceeds the available context size (4096 tokens)", 7090),
        ("This model's maximum context length is 4096 tokens. However, your messages resulted in 7,090 "
         "tokens. Please reduce the length of the messages.", 7090),
        ("This model's maximum context length is 4096 tokens. However, you requested 7091 tokens (7090 in "
         "the messages, 1 in the completion). Please reduce the length of the messages or completion.", 7090),
        ("Requested tokens (7090) exceed context window of 4096", 7090),
        # no count of the request's own: the probe's estimate of its filler, said as one
        ("the prompt is too long for the context window of 4096", None),
    ],
)
def test_the_context_probe_says_the_servers_count_of_a_refused_prompt(said: str, count: int | None) -> None:
    """Session 26's fresh-user trial: the probe's row said `~8,192 refused` (its own estimate of the
    filler) where the server's refusal said the request was 7,090 tokens: the row says the server's
    count where the refusal gives one (its estimate, with `~`, where it gives none)."""
    with _refusing_over_4000_tokens(said) as proxy:
        spec = parse_spec("openai/gemma", base_url=proxy.base_url, env={})
        report = asyncio.run(diagnose(spec, timeout=10, probe_context=True))
    probe = report.check("context_probe")
    assert probe is not None, report
    refused = f"{count:,}" if count else "~4,096"
    assert f"; 2,056 ok; {refused} refused (HTTP 400" in probe.detail, probe.detail
    assert probe.detail.startswith("4,096 tokens, as the refusal states: ")
