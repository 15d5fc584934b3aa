"""A model endpoint that goes away mid-run stops the run (``failed``, exit 4) without recording the
samples it cut, and ``--resume --retry-errors`` runs again the samples an earlier run recorded as
``error``. Against the fault server, a real HTTP server on loopback that is really stopped."""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bench.config import RunConfig
from bench.events import EventBus, RunEvent
from bench.faults import FaultServer
from bench.faults.scripted import ChatPolicy
from bench.runner import Runner, RunOutcome, RunSetupError
from bench.samples import load_samples
from pageindex.cli import app

pytestmark = pytest.mark.usefixtures("no_model_env")


def _config(demo: Path, out: Path, base_url: str, **changes) -> RunConfig:
    settings = dict(
        data_dir=demo, out=out, retrievers=["iterative"], model="openai/fault-model", base_url=base_url,
        judge="rules", limit=4, concurrency=1, max_retries=0, timeout_s=5,
        tree_cache_dir=out.parent / "trees",
    )  # fmt: skip
    return RunConfig(**{**settings, **changes})


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _run(runner: Runner) -> RunOutcome:
    return asyncio.run(runner.run())


def _server_gone_after_the_first_sample(port: int) -> tuple[FaultServer, EventBus]:
    """A fault server on ``port``, and events that stop it (its port then refuses connections) once
    the first sample is written."""
    srv = FaultServer(policy=ChatPolicy(), port=port).start()
    events = EventBus()

    def stop_after_the_first(event: RunEvent) -> None:
        if event.kind == "sample_finished" and event.progress.done == 1:
            srv.stop()

    events.subscribe(stop_after_the_first)
    return srv, events


def test_an_endpoint_that_goes_away_stops_the_run_and_resume_finishes_it(demo, tmp_path):
    port = _free_port()
    out = tmp_path / "run"
    srv, events = _server_gone_after_the_first_sample(port)
    try:
        outcome = _run(Runner(_config(demo, out, srv.base_url), events=events))
    finally:
        srv.stop()
    assert outcome.status == "failed"
    assert outcome.stopped_because and "stopped answering" in outcome.stopped_because
    samples = load_samples(out / "samples.jsonl")
    # the sample the dead endpoint cut is not recorded as an error: it is still to do
    assert [s.status for s in samples] == ["answer"]
    info = json.loads((out / "run.json").read_text())
    assert info["status"] == "failed"
    # the run folder says why and how to go on, not only the terminal
    assert info["status_detail"].startswith("the model endpoint stopped answering during the run (")
    assert info["status_detail"].endswith(f"continue with: pageindex bench run --resume {out}")
    summary = CliRunner().invoke(app, ["bench", "summary", str(out)], terminal_width=400)
    assert f"failed: {info['status_detail']}" in summary.output

    with FaultServer(policy=ChatPolicy(), port=port) as back:
        assert back.base_url == srv.base_url
        resumed = _run(Runner(_config(demo, out, back.base_url), resume_dir=out))
    assert resumed.status == "finished" and resumed.samples_skipped == 1 and resumed.samples_written == 3
    samples = load_samples(out / "samples.jsonl")
    assert len(samples) == 4 and all(s.status == "answer" for s in samples)
    assert json.loads((out / "run.json").read_text())["status_detail"] is None


def test_a_judge_endpoint_that_goes_away_stops_the_run_too(demo, tmp_path):
    """The answers come from the scripted model; the judge is an LLM behind a server that goes away.
    The sample whose judge call it cut is not recorded (it would have no verdict), and resume judges it."""
    port = _free_port()
    out = tmp_path / "run"
    srv, events = _server_gone_after_the_first_sample(port)
    config = RunConfig(
        data_dir=demo, out=out, retrievers=["extractive"], judge="llm", judge_model="openai/fault-model",
        judge_base_url=srv.base_url, limit=3, concurrency=1, max_retries=0, timeout_s=5,
        tree_cache_dir=tmp_path / "trees",
    )  # fmt: skip
    try:
        outcome = _run(Runner(config, events=events))
    finally:
        srv.stop()
    assert outcome.status == "failed"
    assert outcome.stopped_because.startswith("the judge model endpoint stopped answering during the run")
    samples = load_samples(out / "samples.jsonl")
    assert len(samples) == 1 and samples[0].verdict is not None and not samples[0].judge_error
    with FaultServer(policy=ChatPolicy(), port=port):
        resumed = _run(Runner(config, resume_dir=out))
    assert resumed.status == "finished" and not resumed.too_many_errors
    samples = load_samples(out / "samples.jsonl")
    assert len(samples) == 3 and all(s.verdict is not None for s in samples)


def test_the_cli_says_the_endpoint_went_away_and_exits_4(demo, tmp_path, monkeypatch):
    """The server passes the preflight and is gone before the first sample."""
    out = tmp_path / "run"
    srv = FaultServer(policy=ChatPolicy()).start()
    preflight = Runner._preflight

    async def preflight_then_stop(self, *clients):
        await preflight(self, *clients)
        srv.stop()

    monkeypatch.setattr(Runner, "_preflight", preflight_then_stop)
    try:
        result = CliRunner().invoke(app, [
            "bench", "run", "-d", str(demo), "-r", "iterative", "-m", "openai/fault-model", "--base-url",
            srv.base_url, "--judge", "rules", "--limit", "2", "--max-retries", "0", "-q", "--out", str(out),
        ], terminal_width=400)  # fmt: skip
    finally:
        srv.stop()
    assert result.exit_code == 4, result.output
    last = [line for line in result.output.splitlines() if line.strip()][-1]
    assert last.startswith("error: the model endpoint stopped answering during the run"), result.output
    assert f"continue with: pageindex bench run --resume {out}" in last
    assert load_samples(out / "samples.jsonl") == []
    assert json.loads((out / "run.json").read_text())["status"] == "failed"


def test_retry_errors_runs_the_errored_samples_again_and_keeps_their_records(demo, tmp_path):
    out = tmp_path / "run"
    with FaultServer(policy=ChatPolicy(), rate=1.0, faults="500", retry_after_seconds=0.01) as srv:
        first = _run(Runner(_config(demo, out, srv.base_url, limit=3)))
        assert first.status == "finished" and first.too_many_errors
        assert [s.status for s in load_samples(out / "samples.jsonl")] == ["error"] * 3
        before = (out / "samples.jsonl").read_text()

        srv.configure(rate=0.0)  # the server is healthy again
        plain = _run(Runner(_config(demo, out, srv.base_url), resume_dir=out))
        assert plain.samples_written == 0 and plain.samples_retried == 0  # errors are results of a resume
        retried = _run(Runner(_config(demo, out, srv.base_url), resume_dir=out, retry_errors=True))
    assert retried.status == "finished" and retried.samples_retried == 3 and retried.samples_written == 3
    samples = load_samples(out / "samples.jsonl")
    assert len(samples) == 3 and all(s.status == "answer" for s in samples)
    assert not retried.too_many_errors and retried.summary.overall.errored == 0
    # the earlier attempts are kept, row for row, in retried.jsonl
    assert (out / "retried.jsonl").read_text() == before


@pytest.mark.parametrize(
    ("limit", "said"), [(2, "2 samples that ended in error run"), (1, "1 sample that ended in error runs")]
)
def test_the_cli_says_how_many_errored_samples_run_again(demo, tmp_path, limit, said):
    out = tmp_path / "run"
    with FaultServer(policy=ChatPolicy(), rate=1.0, faults="500", retry_after_seconds=0.01) as srv:
        first = _run(Runner(_config(demo, out, srv.base_url, limit=limit)))
        assert [s.status for s in load_samples(out / "samples.jsonl")] == ["error"] * limit and first
        srv.configure(rate=0.0)
        result = CliRunner().invoke(app, ["bench", "run", "--resume", str(out), "--retry-errors", "-q"],
                                    terminal_width=400)  # fmt: skip
    assert result.exit_code == 0, result.output
    assert (
        f"note: --retry-errors: {said} again (their records moved to {out / 'retried.jsonl'})"
        in result.output
    ), result.output


def test_retry_errors_needs_resume(demo, tmp_path):
    with pytest.raises(RunSetupError, match="--retry-errors"):
        Runner(_config(demo, tmp_path / "x", "http://127.0.0.1:9/v1"), retry_errors=True)
    result = CliRunner().invoke(app, ["bench", "run", "--retry-errors", "--out", str(tmp_path / "y")])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines == ["error: --retry-errors runs again the errored samples of an earlier run: give it with "
                     "--resume RUN"]  # fmt: skip
    assert not (tmp_path / "y").exists()


def test_a_passing_connection_error_is_recorded_when_the_endpoint_answers_again(demo, tmp_path):
    """The probe after a ``connection`` error decides: the endpoint answers, so the sample is kept as
    the error it was and the run goes on."""
    from bench.samples import Sample

    class Answers:
        calls = 0

        async def check(self) -> None:
            Answers.calls += 1

    runner = Runner(_config(demo, tmp_path / "run", "http://127.0.0.1:9/v1"))
    sample = Sample(question_id="q", retriever="iterative", repeat=0, status="error", error_kind="connection",
                    error="cannot connect", question="?", gold_answer="1", doc_name="d")  # fmt: skip
    assert asyncio.run(runner._endpoint_gone(sample, Answers(), None)) is False
    assert Answers.calls == 1 and runner.stop_reason is None
    timeout = sample.model_copy(update={"error_kind": "timeout"})
    assert asyncio.run(runner._endpoint_gone(timeout, Answers(), Answers())) is False
    assert Answers.calls == 1  # only a connection error makes it ask
    update = {"status": "answer", "error_kind": None, "judge_error": "timeout: slow"}
    judged = sample.model_copy(update=update)
    assert asyncio.run(runner._endpoint_gone(judged, Answers(), Answers())) is False
    assert Answers.calls == 1


def test_after_a_timeout_the_next_sample_waits_for_a_local_server_to_be_idle(demo, tmp_path, monkeypatch):
    """A one-at-a-time server (a policy that blocks the server's loop: nothing else is answered) still
    computing the first sample's abandoned request: the next sample waits for it instead of timing out
    behind it, so the timeout is charged to the sample that had it, and only to that one. The wait is
    said, naming the sample (on llama-cpp-python a cut agent turn went on for minutes in silence)."""
    import time

    import bench.runner as runner_module

    monkeypatch.setattr(runner_module, "PREFLIGHT_NOTICE_S", 0.3)
    said: list[str] = []
    events = EventBus()
    events.subscribe(lambda event: said.append(event.message) if event.kind == "waiting" else None)
    inner = ChatPolicy()
    calls = {"n": 0}

    def slow_first(chat):
        calls["n"] += 1
        if calls["n"] == 1:
            time.sleep(2.5)  # the server computes on after the client gave up at 1 s
        return inner(chat)

    with FaultServer(policy=slow_first) as srv:
        config = _config(demo, tmp_path / "run", srv.base_url, retrievers=["oracle"], limit=2, timeout_s=1.0)
        outcome = _run(Runner(config, events=events))
    samples = load_samples(tmp_path / "run" / "samples.jsonl")
    assert [(s.status, s.error_kind) for s in samples] == [("error", "timeout"), ("answer", None)]
    assert outcome.status == "finished"
    assert len(said) == 1 and said[0].startswith("waiting for openai/fault-model at ")
    first = samples[0].question_id
    assert f"it may still be computing the request sample {first} gave up on (timeout)" in said[0]


def test_a_sample_past_its_time_limit_is_an_error_and_the_run_goes_on(demo, tmp_path):
    """``--time-limit``: a retrieval whose calls together take longer ends as an error of kind
    ``time_limit`` (the calls that finished are counted), the run goes on, and the limit is stored
    with the run; ``--resume --retry-errors`` may lift it."""
    import time

    inner = ChatPolicy()

    def slow(chat):
        time.sleep(0.5)  # every call: the iterative retriever's several calls outlast 1.2 s
        return inner(chat)

    out = tmp_path / "run"
    with FaultServer(policy=slow) as srv:
        config = _config(demo, out, srv.base_url, limit=2, time_limit_s=1.2)
        outcome = _run(Runner(config))
        samples = load_samples(out / "samples.jsonl")
        assert [(s.status, s.error_kind) for s in samples] == [("error", "time_limit")] * 2
        assert all(s.error.endswith("did not finish within its time limit of 1.2s") for s in samples)
        assert all(s.latency_s >= 1.2 for s in samples), samples
        assert sum(s.llm_calls for s in samples) >= 1, [(s.llm_calls, s.trace) for s in samples]
        assert outcome.status == "finished" and outcome.too_many_errors
        assert json.loads((out / "run.json").read_text())["extra"]["config"]["time_limit_s"] == 1.2
        longer = CliRunner().invoke(
            app, ["bench", "run", "--resume", str(out), "--time-limit", "120", "-q"], terminal_width=400
        )
        assert longer.exit_code == 4 and "time limit 120s per sample" in longer.output, longer.output
        assert json.loads((out / "run.json").read_text())["extra"]["config"]["time_limit_s"] == 120
        # "none" lifts the stored limit (review 11: a limit, once stored, could only be changed)
        result = CliRunner().invoke(
            app, ["bench", "run", "--resume", str(out), "--retry-errors", "--time-limit", "none", "-q"],
            terminal_width=400,
        )
    assert result.exit_code == 0, result.output
    assert "time limit" not in result.output
    assert [s.status for s in load_samples(out / "samples.jsonl")] == ["answer"] * 2
    assert json.loads((out / "run.json").read_text())["extra"]["config"]["time_limit_s"] is None


@pytest.mark.parametrize("value", ["0", "-3", "inf", "nan", "soon"])
def test_a_time_limit_must_be_a_finite_number_of_seconds(demo, tmp_path, value):
    result = CliRunner().invoke(
        app, ["bench", "run", "--data-dir", str(demo), "--out", str(tmp_path / "r"), "--time-limit", value]
    )
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: Invalid value for '--time-limit'"), lines
    assert not (tmp_path / "r").exists()


def test_after_the_last_sample_nothing_waits_for_its_abandoned_request(demo, tmp_path):
    """Measured on llama-cpp-python: the run waited up to three call timeouts after its last sample
    for a request nobody would send after. The wait now comes before a next sample only."""
    import time

    inner = ChatPolicy()

    def slow(chat):
        time.sleep(6)  # the server computes on after the client gave up at 1 s
        return inner(chat)

    with FaultServer(policy=slow) as srv:
        config = _config(demo, tmp_path / "run", srv.base_url, retrievers=["oracle"], limit=1, timeout_s=1.0)
        started = time.monotonic()
        outcome = _run(Runner(config))
        took = time.monotonic() - started
    samples = load_samples(tmp_path / "run" / "samples.jsonl")
    assert [(s.status, s.error_kind) for s in samples] == [("error", "timeout")]
    assert outcome.status == "finished" and took < 4.5, took


def test_a_server_killed_mid_answer_is_said_so_and_its_sample_runs_on_resume(demo, tmp_path, monkeypatch):
    """The server takes the second sample's request and dies before it replies (its connection reset, as
    a SIGKILLed llama.cpp server's), so the retries are refused. The run says that, in one line, rather
    than only "cannot connect" or the probe's "cannot reach" as if the server had never been there."""
    import threading

    import bench.faults.server as fault_server

    port = _free_port()
    out = tmp_path / "run"
    srv = FaultServer(policy=ChatPolicy(), port=port, seed=1).start()
    reset = fault_server._reset

    def reset_then_die(request) -> None:
        reset(request)
        threading.Thread(target=srv.stop).start()

    monkeypatch.setattr(fault_server, "_reset", reset_then_die)
    events = EventBus()

    def die_in_the_next_call(event: RunEvent) -> None:
        if event.kind == "sample_finished" and event.progress.done == 1:
            srv.configure(rate=1.0, faults="reset")

    events.subscribe(die_in_the_next_call)
    try:
        outcome = _run(Runner(_config(demo, out, srv.base_url, max_retries=2), events=events))
    finally:
        srv.stop()
    assert outcome.status == "failed"
    assert outcome.stopped_because == (
        f"the model endpoint stopped answering during the run (openai/fault-model at {srv.base_url}: the "
        "server reset the connection before its reply was complete (attempt 1), then connection refused "
        "(attempts 2-3): the server went away during the call; a probe after it: connection refused)"
    )
    assert [s.status for s in load_samples(out / "samples.jsonl")] == ["answer"]
    with FaultServer(policy=ChatPolicy(), port=port) as back:
        resumed = _run(Runner(_config(demo, out, back.base_url), resume_dir=out))
    assert resumed.status == "finished" and resumed.samples_skipped == 1 and resumed.samples_written == 3


def test_a_server_restarted_with_a_smaller_context_is_advised_restarted_on_resume(demo, tmp_path):
    """A llama.cpp server restarted with --n_ctx 2048 under a run made with --context-window 4096: the
    resumed samples' errors said `give --context-window 2048`, which a resume refuses (exit 2)."""
    from bench.faults.limits import ServerLimits

    out, port = tmp_path / "run", _free_port()
    events = EventBus()
    with FaultServer(policy=ChatPolicy(), port=port) as srv:
        runner = Runner(_config(demo, out, srv.base_url, limit=2, context_window=4096), events=events)
        events.subscribe(lambda e: e.kind == "sample_finished" and runner.request_stop("interrupted"))
        first = _run(runner)
    assert first.status == "interrupted" and first.samples_written == 1
    with FaultServer(policy=ChatPolicy(), port=port, limits=ServerLimits(context_window=64)) as small:
        config = _config(demo, out, small.base_url, limit=2, context_window=4096)
        resumed = _run(Runner(config, resume_dir=out))
    assert resumed.samples_written == 1
    cut = load_samples(out / "samples.jsonl")[-1]
    assert cut.status == "error" and cut.error_kind == "context_length"
    assert (
        "the server's window is 64 tokens, not 4096 as assumed (--context-window); a --resume keeps the "
        "window the run started with: restart the server with a context of at least 4096 tokens, or start "
        "a new run with --context-window 64: HTTP 400" in cut.error
    ), cut.error
    assert "give --context-window" not in cut.error


def test_a_local_server_that_hangs_stops_the_run_instead_of_timing_out_every_sample(demo, tmp_path):
    """A one-at-a-time server that stops answering altogether (a SIGSTOPped llama.cpp: a policy that
    blocks the server's loop past the three call timeouts of the wait). The run used to go on: every
    sample left waited three call timeouts, then timed out in its turn, all recorded as errors. Now it
    stops ``failed`` after the first, saying why, and the samples left run on resume."""
    out, port = tmp_path / "run", _free_port()
    with FaultServer(policy=_slow_once(4), port=port) as srv:  # nothing answered meanwhile, not even /models
        config = _config(demo, out, srv.base_url, retrievers=["oracle"], limit=3, timeout_s=0.5)
        outcome = _run(Runner(config))
    assert outcome.status == "failed"
    assert [(s.status, s.error_kind) for s in load_samples(out / "samples.jsonl")] == [("error", "timeout")]
    first = load_samples(out / "samples.jsonl")[0].question_id
    assert outcome.stopped_because.startswith(
        f"the model endpoint stopped answering during the run (sample {first}'s call was abandoned "
        "(timeout), and then the server answered none of 3 probes in "
    ), outcome.stopped_because
    assert outcome.stopped_because.endswith(
        "s: it hangs, or is still computing that request; restart it if it does not recover)"
    )
    with FaultServer(policy=ChatPolicy(), port=port) as back:
        again = _config(demo, out, back.base_url, retrievers=["oracle"], limit=3)
        resumed = _run(Runner(again, resume_dir=out))
    assert resumed.status == "finished" and resumed.samples_written == 2


def test_a_local_server_that_goes_away_during_the_wait_is_said_gone_not_hung(demo, tmp_path, monkeypatch):
    """Killed while the run waited for it to finish an abandoned request (seen: SIGKILL of llama.cpp
    after an agent sample hit its --time-limit): the probes are refused, and the run says it went away."""
    import threading

    import bench.runner as runner_module

    monkeypatch.setattr(runner_module, "PREFLIGHT_NOTICE_S", 0.2)
    out = tmp_path / "run"
    srv = FaultServer(policy=_slow_once(1.5)).start()
    events = EventBus()
    events.subscribe(lambda e: e.kind == "waiting" and threading.Thread(target=srv.stop).start())
    try:
        config = _config(demo, out, srv.base_url, retrievers=["oracle"], limit=3, timeout_s=0.5)
        outcome = _run(Runner(config, events=events))
    finally:
        srv.stop()
    first = load_samples(out / "samples.jsonl")[0].question_id
    assert outcome.status == "failed"
    assert outcome.stopped_because == (
        f"the model endpoint stopped answering during the run (sample {first}'s call was abandoned "
        "(timeout), and then it went away; a probe after it: connection refused)"
    )


def test_a_local_server_that_answers_the_wait_with_an_error_is_not_said_gone(demo, tmp_path, monkeypatch):
    """After an abandoned request the wait's probes got an HTTP error at once (a server there, answering
    ``GET /models`` with 503): three instant failures stopped the run ``failed``, "it went away". A probe
    the server answered, even with an error, says it is neither busy nor gone: the run goes on."""
    from pageindex.llm.types import LLMConfigError

    probes = {"n": 0}
    real = Runner._answered

    async def answered(self, client, why, *, say=True):
        probes["n"] += 1
        if probes["n"] == 1:  # the preflight
            return await real(self, client, why, say=say)
        raise LLMConfigError(f"openai/m at {client.base_url} failed the preflight: GET /models answered 503")

    monkeypatch.setattr(Runner, "_answered", answered)
    out = tmp_path / "run"
    with FaultServer(policy=_slow_once(1.5)) as srv:
        config = _config(demo, out, srv.base_url, retrievers=["oracle"], limit=3, timeout_s=0.5)
        outcome = _run(Runner(config))
    assert outcome.status != "failed", outcome.stopped_because
    assert len(load_samples(out / "samples.jsonl")) == 3 and probes["n"] >= 2  # the wait did probe


def _slow_once(seconds: float):
    """A chat policy whose first call takes ``seconds`` (the server answers nothing meanwhile: a one-at-a-
    time local server computing an abandoned request), then answers as ChatPolicy does."""
    import time

    inner, left = ChatPolicy(), [1]

    def policy(chat):
        if left[0]:
            left[0] -= 1
            time.sleep(seconds)
        return inner(chat)

    return policy


# What a LiteLLM proxy (litellm[proxy] 1.108.7, captured before llama-server on 2026-11-28) answers a chat
# request when its model server is down: HTTP 500 after its own retries. Its GET /v1/models lists the models
# of its config all the same.
LITELLM_UPSTREAM_GONE = {
    "error": {
        "message": "litellm.InternalServerError: InternalServerError: OpenAIException - Connection error.\n\n"
        "LiteLLM: model group 'gemma' failed with the error above. No fallback was attempted.",
        "type": "internal_server_error",
        "param": None,
        "code": "500",
    }
}


class LiteLLMProxyImitation:
    """A loopback imitation of a LiteLLM proxy (not the real one) in front of ``upstream``: chat requests
    are forwarded, and answered with the captured HTTP 500 when the upstream cannot be reached."""

    def __init__(self, upstream: str) -> None:
        from aiohttp import ClientError, ClientSession, web

        from pageindex.llm import wire
        from pageindex.llm.fakeserver import LoopbackServer, openai_app

        class Proxy(LoopbackServer):
            def build_app(self) -> web.Application:
                async def chat(request: web.Request) -> web.Response:
                    body = await request.json()
                    try:
                        async with ClientSession() as http:
                            async with http.post(f"{upstream}/chat/completions", json=body) as answer:
                                return web.json_response(await answer.json(), status=answer.status)
                    except ClientError:
                        return web.json_response(LITELLM_UPSTREAM_GONE, status=500)

                return openai_app(chat=chat, models=lambda: [wire.model_entry("fault-model")])

        self.server = Proxy().start()
        self.base_url = self.server.base_url


def test_a_proxy_whose_model_server_goes_away_stops_the_run_and_resume_finishes_it(demo, tmp_path):
    """Through a LiteLLM proxy, a model server killed mid-run (or down before it) made every later sample an
    `error` of kind http_500 (`litellm.InternalServerError: ... Connection error.`), the run `finished`, exit
    4, with its errors recorded (direct, the same kill stops the run `failed` and `--resume` finishes it).
    The proxy still lists its models, so the probe after such a failure asks it for one token too."""
    port = _free_port()
    out = tmp_path / "run"
    upstream, events = _server_gone_after_the_first_sample(port)
    proxy = LiteLLMProxyImitation(upstream.base_url)
    try:
        outcome = _run(Runner(_config(demo, out, proxy.base_url, max_retries=1), events=events))
        assert outcome.status == "failed", outcome
        assert outcome.stopped_because.startswith("the model endpoint stopped answering during the run (")
        assert outcome.stopped_because.endswith(
            ": the proxy could not reach the model server behind it (HTTP 500 after 2 attempt(s)): "
            "litellm.InternalServerError: InternalServerError: OpenAIException - Connection error. LiteLLM: "
            "model group 'gemma' failed with the error above. No fallback was attempted.; a probe after it: "
            "the proxy could not reach the model server behind it (HTTP 500))"
        ), outcome.stopped_because
        assert [s.status for s in load_samples(out / "samples.jsonl")] == ["answer"]
        with FaultServer(policy=ChatPolicy(), port=port):
            resumed = _run(Runner(_config(demo, out, proxy.base_url, max_retries=1), resume_dir=out))
        assert resumed.status == "finished" and resumed.samples_written == 3
        assert [s.status for s in load_samples(out / "samples.jsonl")] == ["answer"] * 4
    finally:
        upstream.stop()
        proxy.server.stop()
