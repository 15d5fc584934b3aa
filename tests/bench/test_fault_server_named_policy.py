"""``--policy`` of the fault server (named policies, module:function, the competent default), its
capability limits (``--lacks``, ``--context-window``) and the faults-by-kind line on exit."""

from __future__ import annotations

import textwrap

import httpx
import openai
import pytest
from typer.testing import CliRunner

from bench.cli.faults import faults_by_kind
from bench.faults import FaultServer, SectionSeekingPolicy
from bench.faults.competent import CompetentPolicy, ScriptedPolicyServer, resolve_policy
from bench.faults.limits import ServerLimits
from bench.faults.protocol import ChatRequest, Reply
from bench.faults.scripted import ChatPolicy
from pageindex.cli import app
from tests.bench.fault_cli import serve_until_ctrl_c

RECORD_TOOL = {
    "type": "function",
    "function": {
        "name": "record_city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
            "required": ["city", "population"],
        },
    },
}


def chat_policy(chat: ChatRequest) -> Reply:
    return Reply(content=f"chat policy saw {len(chat.messages)} message(s)")


def sdk(srv: FaultServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0, timeout=5)


def ask(srv: FaultServer, text: str, **kw):
    return sdk(srv).chat.completions.create(model="m", messages=[{"role": "user", "content": text}], **kw)


# ------------------------------------------------------------------ resolving --policy
def test_named_policies_resolve():
    assert type(resolve_policy(None)) is CompetentPolicy
    assert type(resolve_policy("competent")) is CompetentPolicy
    assert type(resolve_policy("section-seeking")) is SectionSeekingPolicy
    assert type(resolve_policy("scripted")) is ChatPolicy
    with pytest.raises(ValueError, match="unknown policy 'smart'; use one of competent, section-seeking"):
        resolve_policy("smart")


def test_module_function_of_a_chat_request_is_used_directly():
    policy = resolve_policy(f"{__name__}:chat_policy")
    assert policy is chat_policy
    with FaultServer(policy) as srv:
        assert ask(srv, "hi").choices[0].message.content == "chat policy saw 1 message(s)"


def test_a_scripted_policy_file_is_served_over_http(tmp_path):
    path = tmp_path / "mypolicy.py"
    path.write_text(
        textwrap.dedent(
            """
            from pageindex.llm import ScriptedModel

            def policy(req):
                if req.tools:
                    return ScriptedModel.call(req.tools[0].name, city="Oslo", population=700000)
                return "scripted says: " + req.last_user
            """
        )
    )
    policy = resolve_policy(f"{path}:policy")
    assert isinstance(policy, ScriptedPolicyServer)
    with FaultServer(policy) as srv:
        assert ask(srv, "ping").choices[0].message.content == "scripted says: ping"
        call = ask(srv, "record", tools=[RECORD_TOOL]).choices[0].message.tool_calls[0]
    assert call.function.name == "record_city"
    assert call.function.arguments == '{"city": "Oslo", "population": 700000}'


def test_a_missing_module_function_is_a_value_error():
    with pytest.raises(ValueError, match="has no function 'nope'"):
        resolve_policy("bench.faults.scripted:nope")


# ------------------------------------------------------------------ the competent default
def test_competent_policy_answers_a_general_client():
    with FaultServer(CompetentPolicy()) as srv:
        assert ask(srv, "What is 17 * 3?").choices[0].message.content == "51"
        assert ask(srv, "Reply with exactly the word PONG.").choices[0].message.content == "PONG"
        forced = ask(
            srv,
            'Record the city "Lisbon".',
            tools=[RECORD_TOOL],
            tool_choice={"type": "function", "function": {"name": "record_city"}},
        )
        args = forced.choices[0].message.tool_calls[0].function.arguments
        assert args == '{"city": "Lisbon", "population": 0}'
        as_json = ask(srv, "Name a city as JSON.", response_format={"type": "json_object"})
        assert as_json.choices[0].message.content.startswith('{"answer": ')
        both = ask(srv, 'Record "Paris" and "Rome".', tools=[RECORD_TOOL]).choices[0].message.tool_calls
        assert [c.function.arguments for c in both] == [
            '{"city": "Paris", "population": 0}',
            '{"city": "Rome", "population": 0}',
        ]
        one = ask(srv, 'Record "Paris" and "Rome".', tools=[RECORD_TOOL], parallel_tool_calls=False)
        assert len(one.choices[0].message.tool_calls) == 1
        capped = ask(srv, "Count from 1 to 100.", max_tokens=5).choices[0]
        assert capped.finish_reason == "length" and capped.message.content == "1 2 3 4 5 6 7 8 9 10"


# ------------------------------------------------------------------ limits over HTTP
def test_limits_change_what_comes_back():
    limits = ServerLimits(no_tools=True, no_usage=True, ignore_max_tokens=True)
    with FaultServer(CompetentPolicy(), limits=limits) as srv:
        forced = ask(
            srv,
            "Record it.",
            tools=[RECORD_TOOL],
            tool_choice={"type": "function", "function": {"name": "record_city"}},
        )
        assert forced.choices[0].message.tool_calls is None and forced.usage is None
        long = ask(srv, "Count from 1 to 100.", max_tokens=5).choices[0]
        assert long.finish_reason == "stop" and long.message.content.endswith("99 100")


def test_null_content_and_context_window_are_refused_with_400():
    limits = ServerLimits(reject_null_content=True, context_window=64)
    call = {"id": "c1", "type": "function", "function": {"name": "record_city", "arguments": "{}"}}
    with FaultServer(CompetentPolicy(), limits=limits) as srv:
        models = httpx.get(f"{srv.base_url}/models").json()
        assert models["data"][0]["max_model_len"] == 64
        body = {
            "model": "m",
            "messages": [
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "c1", "content": "done"},
            ],
        }
        refused = httpx.post(f"{srv.base_url}/chat/completions", json=body)
        assert refused.status_code == 400
        assert refused.json()["error"]["message"] == (
            "messages[1]: assistant message content must be a string, not null"
        )
        body["messages"][1]["content"] = ""
        assert httpx.post(f"{srv.base_url}/chat/completions", json=body).status_code == 200
        too_long = httpx.post(
            f"{srv.base_url}/chat/completions",
            json={"model": "m", "messages": [{"role": "user", "content": "x" * 400}]},
        )
        assert too_long.status_code == 400 and too_long.json()["error"]["code"] == "context_length_exceeded"
        assert srv.stats().by_fault == {"bad_request": 2, "none": 1}


def test_limits_parse_names():
    limits = ServerLimits.parse("tools, usage", context_window=2048)
    assert limits.no_tools and limits.no_usage and not limits.no_json_mode
    assert limits.describe() == "lacks tools, usage; context window 2048 tokens"
    with pytest.raises(ValueError, match="unknown ability 'teapot' for --lacks"):
        ServerLimits.parse("teapot")


def test_faults_by_kind_line():
    assert (
        faults_by_kind({"none": 7, "429": 2, "503": 1}) == "faults by kind: 429 2, 503 1 (normal answers 7)"
    )
    assert faults_by_kind({}) == "faults by kind: none (normal answers 0)"


# ------------------------------------------------------------------ the command
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--policy", "smart"], "error: --policy: unknown policy 'smart'"),
        (["--policy", "nosuchmodule_xyz:fn"], "error: --policy: scripted policy 'nosuchmodule_xyz:fn'"),
        (["--lacks", "teapot"], "error: unknown ability 'teapot' for --lacks"),
        (["--context-window", "3"], "error: --context-window must be at least 16 tokens"),
    ],
)
def test_bad_policy_or_limits_is_one_line_exit_2(args, message):
    result = CliRunner().invoke(app, ["bench", "fault-server", "--port", "0", *args])
    assert result.exit_code == 2
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith(message), result.output


def test_default_policy_answers_and_exit_prints_faults_by_kind():
    def work(base_url: str) -> None:
        body = {"model": "any", "messages": [{"role": "user", "content": "What is 40 + 2?"}]}
        reply = httpx.post(f"{base_url}/chat/completions", json=body).json()
        assert reply["choices"][0]["message"]["content"] == "42"

    tail, status = serve_until_ctrl_c(["--rate", "0"], "policy competent; model fully capable", work)
    assert "faults by kind: none (normal answers 1)" in tail
    assert status == 0
