"""A judge model on a server on this machine gets the local-server profile, in ``bench judge``,
``bench rejudge`` and a ``bench run`` whose only model is the judge's, as the answering model's
endpoint does: one request in flight, a 600 s timeout, no retry after a client timeout. Before, those
judges met a one-at-a-time llama.cpp server with the cloud defaults (8 requests at once, 60 s,
timeouts retried): rows timed out while the server went on computing them (`LLMTimeout: ... no reply
within 60s after 4 attempt(s)`, 2 of 16 label rows with gemma-3-270m)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bench.cli.judge import _build_judge
from bench.datasets.demo import write_demo_dataset
from bench.faults import FaultServer
from bench.faults.scripted import ChatPolicy
from pageindex.cli import app

Q = "What is the FY2018 capital expenditure amount (in USD millions) for 3M?"
PROFILE = "1 request in flight, timeout 600s, no retry after a client timeout"


pytestmark = pytest.mark.usefixtures("no_model_env")


@pytest.fixture(scope="module")
def server():
    with FaultServer(policy=ChatPolicy(), rate=0.0) as srv:
        yield srv


def _url(srv: FaultServer) -> str:
    return f"http://127.0.0.1:{srv.port}/v1"


@pytest.mark.parametrize(("name", "models"), [("llm", None), ("hybrid", None), ("panel", "a,b")])
def test_a_local_judge_gets_the_local_server_profile(server, name: str, models: str | None) -> None:
    model = None if models else "openai/fault-model"
    specs = f"openai/fault-model,openai/{models.split(',')[1]}" if models else None
    _, clients = _build_judge(name, model, _url(server), models=specs)
    assert len(clients) == (2 if models else 1)
    for client in clients:
        assert (client.timeout, client.retry_timeouts, client.concurrency) == (600.0, False, 1)


def test_a_remote_judge_keeps_the_defaults(monkeypatch) -> None:
    from bench.cli.judge import _judge_settings

    settings, note = _judge_settings("openai/gpt-4o-mini", "https://api.example.com/v1")
    assert settings == {
        "timeout": 60.0, "max_retries": 3, "retry_timeouts": True, "concurrency": 8, "json_mode": False,
    }  # fmt: skip
    assert note == []


def test_bench_judge_says_the_profile_once_per_endpoint(server, tmp_path: Path) -> None:
    row = {"question": Q, "gold_answer": 1577, "model_answer": "$1,577 million", "label": "Correct Answer"}
    answers = tmp_path / "a.jsonl"
    answers.write_text(json.dumps(row) + "\n")
    res = CliRunner().invoke(app, ["bench", "judge", "-i", str(answers), "-o", str(tmp_path / "v.jsonl"),
                                   "--judge", "panel", "--judge-models", "openai/fault-model,openai/other",
                                   "--judge-base-url", _url(server)])  # fmt: skip
    assert res.exit_code == 0, res.output
    line = f"local-server profile for {_url(server)} (loopback): {PROFILE}"
    assert res.output.count(line) == 1, res.output


def test_a_run_whose_only_model_is_a_local_judge_gets_the_profile(server, tmp_path: Path) -> None:
    demo = tmp_path / "demo"
    write_demo_dataset(demo)
    out = tmp_path / "run"
    res = CliRunner().invoke(app, ["bench", "run", "--data-dir", str(demo), "-r", "extractive", "-n", "2",
                                   "--judge", "llm", "--judge-model", "openai/fault-model",
                                   "--judge-base-url", _url(server), "-o", str(out)])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert f"local-server profile for {_url(server)} (loopback): concurrency 1, {PROFILE}" in res.output
    config = json.loads((out / "run.json").read_text())["extra"]["config"]
    got = {k: config[k] for k in ("concurrency", "llm_concurrency", "timeout_s", "retry_timeouts")}
    assert got == {"concurrency": 1, "llm_concurrency": 1, "timeout_s": 600.0, "retry_timeouts": False}


@pytest.mark.parametrize("command", ["judge", "rejudge"])
def test_a_judge_model_the_server_does_not_list_is_said(server, tmp_path: Path, command: str) -> None:
    """As bench run and ask say it: a llama.cpp server answers any model name with the one it serves, so
    verdicts filed under `llm:openai/gemma-9b` may have been given by another model; bench judge and
    rejudge said nothing."""
    from tests.bench.runfactory import sample, write_run

    if command == "judge":
        row = {"question": Q, "gold_answer": 1577, "model_answer": "$1,577 million"}
        (tmp_path / "a.jsonl").write_text(json.dumps(row) + "\n")
        args = ["judge", "-i", str(tmp_path / "a.jsonl"), "-o", str(tmp_path / "v.jsonl")]
    else:
        args = ["rejudge", str(write_run(tmp_path / "base", [sample("q000")])), "-o", str(tmp_path / "new")]
    res = CliRunner().invoke(app, ["bench", *args, "--judge", "llm", "--judge-model", "openai/gemma-9b",
                                   "--judge-base-url", _url(server)], terminal_width=300)  # fmt: skip
    assert res.exit_code == 0, res.output
    said = f"warning: gemma-9b is not among the models {_url(server)} lists (fault-model)"
    assert said in " ".join(res.output.split()), res.output
    again = [*args[:-1], str(tmp_path / "again")]
    judge = ["--judge", "llm", "--judge-model", "openai/fault-model", "--judge-base-url", _url(server)]
    listed = CliRunner().invoke(app, ["bench", *again, *judge])
    assert listed.exit_code == 0 and "not among the models" not in listed.output, listed.output


def test_errors_before_judging_are_the_one_line_they_were(tmp_path: Path) -> None:
    """The profile's line is said once the endpoint answered, not above an error that no row was judged
    for; a panel of one model is refused before any endpoint is asked (it was a `cannot reach` first)."""
    row = {"question": Q, "gold_answer": 1577, "model_answer": "$1,577 million"}
    (tmp_path / "a.jsonl").write_text(json.dumps(row) + "\n")
    base = ["bench", "judge", "-i", str(tmp_path / "a.jsonl"), "-o", str(tmp_path / "v.jsonl")]
    gone = "http://127.0.0.1:9/v1"
    for args, says in (
        (["--judge", "llm", "--judge-model", "openai/m"], f"error: cannot reach openai/m at {gone}: "),
        (["--judge", "panel", "--judge-models", "openai/m,"], "error: --judge panel needs at least two"),
    ):
        res = CliRunner().invoke(app, [*base, *args, "--judge-base-url", gone])
        assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1, res.output
        assert res.output.startswith(says), res.output


def test_a_judge_endpoint_the_doctor_found_tool_less_is_asked_in_json_mode(tmp_path: Path) -> None:
    """The cached `pageindex doctor` findings are read for a judge's endpoint as for an answering model's:
    on an endpoint without tool calls, `bench judge` and a `bench run` whose only model is the judge's
    take JSON mode and say so. Before, every judge call there failed (`No tool calls or function call
    found in response`), whatever the doctor had found."""
    from bench.faults.competent import CompetentPolicy
    from bench.faults.limits import ServerLimits

    with FaultServer(CompetentPolicy(), limits=ServerLimits(no_tools=True)) as srv:
        url = _url(srv)
        doctor = CliRunner().invoke(app, ["doctor", "--model", "openai/fault-model", "--base-url", url])
        assert doctor.exit_code == 1, doctor.output  # usable with limits: no tool calls
        judge = ["--judge", "llm", "--judge-model", "openai/fault-model", "--judge-base-url", url]
        row = {"question": Q, "gold_answer": 1577, "model_answer": "$1,577 million"}
        (tmp_path / "a.jsonl").write_text(json.dumps(row) + "\n")
        out = tmp_path / "v.jsonl"
        args = ["bench", "judge", "-i", str(tmp_path / "a.jsonl"), "-o", str(out), *judge]
        res = CliRunner().invoke(app, args, terminal_width=300)
        assert res.exit_code == 0, res.output
        assert "note: settings from pageindex doctor: JSON mode: tool calls do not work at" in res.output
        assert json.loads(out.read_text())["status"] == "ok"

        demo = tmp_path / "demo"
        write_demo_dataset(demo)
        run = tmp_path / "run"
        res = CliRunner().invoke(app, ["bench", "run", "--data-dir", str(demo), "-r", "extractive", "-n", "2",
                                       *judge, "-o", str(run)], terminal_width=300)  # fmt: skip
        assert res.exit_code == 0, res.output
        assert json.loads((run / "run.json").read_text())["extra"]["config"]["json_mode"] is True
        samples = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
        assert [s["judge_error"] for s in samples] == [None, None] and all(s["verdict"] for s in samples)


def _record_clients(monkeypatch) -> dict[str, dict]:
    """make_client's keywords per role, as the run made its clients."""
    import pageindex.llm

    made: dict[str, dict] = {}
    real = pageindex.llm.make_client

    def recording(spec, *, role, **kwargs):
        made[role] = {"spec": spec, **kwargs}
        return real(spec, role=role, **kwargs)

    monkeypatch.setattr(pageindex.llm, "make_client", recording)
    return made


def test_a_local_judge_of_a_remote_answering_model_gets_its_own_settings(server, tmp_path, monkeypatch):
    """The answering model (scripted here: not on this machine) keeps the run's defaults, and the judge
    model on a llama.cpp-like server on this machine gets that endpoint's local-server profile, said in
    the header, stored in run.json and kept by a resume (a --timeout given then applies to both). Before,
    a run with both models used the answering model's settings for both: a one-at-a-time judge met 8
    requests at once, a 60 s timeout and timeouts retried."""
    made = _record_clients(monkeypatch)
    demo = tmp_path / "demo"
    write_demo_dataset(demo)
    out = tmp_path / "run"
    res = CliRunner().invoke(app, ["bench", "run", "--data-dir", str(demo), "-r", "iterative", "-n", "2",
                                   "--model", "scripted", "--scripted-policy", "bench.faults.scripted:policy",
                                   "--judge", "llm", "--judge-model", "openai/fault-model",
                                   "--judge-base-url", _url(server), "-o", str(out)])  # fmt: skip
    assert res.exit_code == 0, res.output
    header = f"local-server profile for {_url(server)} (loopback): {PROFILE} (the judge model's endpoint"
    assert header in res.output
    assert (made["retriever"]["timeout"], made["retriever"]["retry_timeouts"]) == (60.0, True)
    assert made["retriever"]["concurrency"] == 8  # 2 x 4 samples in flight
    judge = made["judge"]
    assert (judge["timeout"], judge["retry_timeouts"], judge["concurrency"]) == (600.0, False, 1)
    config = json.loads((out / "run.json").read_text())["extra"]["config"]
    assert (config["timeout_s"], config["concurrency"], config["llm_concurrency"]) == (60.0, 4, None)
    assert config["judge_clients"]["openai/fault-model"] == {
        "timeout_s": 600.0, "max_retries": 3, "retry_timeouts": False, "llm_concurrency": 1,
        "json_mode": False, "context_window": None,
    }  # fmt: skip
    made.clear()
    res = CliRunner().invoke(app, ["bench", "run", "--resume", str(out), "--timeout", "90"])
    assert res.exit_code == 0, res.output
    if made:  # every sample finished: a resume may make no client at all
        assert made["judge"]["timeout"] == 90.0 and made["judge"]["concurrency"] == 1
    config = json.loads((out / "run.json").read_text())["extra"]["config"]
    assert (config["timeout_s"], config["judge_clients"]["openai/fault-model"]["timeout_s"]) == (90.0, 90.0)


def test_a_remote_judge_of_a_local_answering_model_keeps_the_defaults() -> None:
    """The other way round: the answering model on this machine gets the profile (the run's settings),
    a judge model elsewhere the cloud defaults; a judge at the answering model's endpoint shares the
    run's settings; flags apply to both."""
    from bench.cli.run import _judge_clients

    local = "http://127.0.0.1:8080/v1"
    given = {"timeout_s": None, "max_retries": None, "json_mode": None}
    chosen, lines, notes = _judge_clients(
        "openai/gemma3", local, ["openai/gpt-4o"], "https://api.example.com/v1", given, None
    )
    assert list(chosen) == ["openai/gpt-4o"] and (lines, notes) == ([], [])
    assert chosen["openai/gpt-4o"].model_dump() == {
        "timeout_s": 60.0, "max_retries": 3, "retry_timeouts": True, "llm_concurrency": None,
        "json_mode": False, "context_window": None,
    }  # fmt: skip
    assert _judge_clients("openai/gemma3", local, ["openai/judge"], None, given, None) == ({}, [], [])
    flags = {"timeout_s": 30.0, "max_retries": 1, "json_mode": True}
    remote = "https://api.example.com/v1"
    chosen, lines, _ = _judge_clients("openai/gpt-4o", remote, ["openai/g"], local, flags, None)
    settings = chosen["openai/g"]
    assert lines == [  # the flags decided all the profile would have but this
        f"local-server profile for {local} (loopback): 1 request in flight (the judge model's endpoint; "
        "flags override it: --timeout, --max-retries)"
    ]
    assert (settings.timeout_s, settings.max_retries, settings.retry_timeouts, settings.json_mode) == (
        30.0, 1, True, True)  # fmt: skip
    assert settings.llm_concurrency == 1  # not a flag of a client: the profile's


def test_each_panel_model_at_another_endpoint_gets_its_own_settings(monkeypatch) -> None:
    """A panel's models may be at several endpoints (openai/ at OpenAI, ollama/ on this machine): each is
    settled for its own. Only the panel's first model was: with it at the answering model's endpoint, the
    local Ollama judge met the cloud defaults (60 s, 8 requests at once, timeouts retried); with it on this
    machine, the remote judge was sent one request at a time."""
    from bench.cli.run import _judge_clients

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OLLAMA_BASE_URL", "http://127.0.0.1:11434")
    given = {"timeout_s": None, "max_retries": None, "json_mode": None}
    for panel in (["openai/gpt-4o-mini", "ollama/llama3"], ["ollama/llama3", "openai/gpt-4o-mini"]):
        chosen, lines, _ = _judge_clients("openai/gpt-4o", None, panel, None, given, None)
        assert list(chosen) == ["ollama/llama3"], panel  # the other judge shares the answering model's
        own = chosen["ollama/llama3"]
        assert (own.timeout_s, own.retry_timeouts, own.llm_concurrency) == (600.0, False, 1)
        assert len(lines) == 1 and lines[0].startswith("local-server profile for http://127.0.0.1:11434")


def test_the_runner_gives_each_judge_model_its_own_settings(tmp_path, monkeypatch) -> None:
    """run.json's judge_clients names the judge models it settles; the others use the run's settings."""
    from bench.config import RunConfig
    from bench.runner import Runner
    from pageindex.llm.profile import ClientSettings

    made = _record_clients_by_spec(monkeypatch)
    local = ClientSettings(timeout_s=600.0, max_retries=3, retry_timeouts=False, llm_concurrency=1)
    config = RunConfig(data_dir=tmp_path, retrievers=["extractive"], judge="panel",
                       judge_models=["scripted/a", "scripted/b"], judge_clients={"scripted/b": local},
                       scripted_policy="bench.faults.scripted:policy")  # fmt: skip
    Runner(config)._make_clients(None)
    assert (made["scripted/a"]["timeout"], made["scripted/a"]["retry_timeouts"]) == (60.0, True)
    assert (made["scripted/b"]["timeout"], made["scripted/b"]["concurrency"]) == (600.0, 1)


def _record_clients_by_spec(monkeypatch) -> dict[str, dict]:
    import pageindex.llm

    made: dict[str, dict] = {}
    real = pageindex.llm.make_client

    def recording(spec, role=None, **kwargs):
        made[spec] = {"role": role, **kwargs}
        return real(spec, role=role, **kwargs)

    monkeypatch.setattr(pageindex.llm, "make_client", recording)
    return made
