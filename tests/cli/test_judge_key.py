"""A judge's own API key (``$PAGEINDEX_JUDGE_API_KEY``): one ``OPENAI_API_KEY`` went to every
``openai/`` endpoint of a command, so a run answered by OpenAI and judged by a server elsewhere sent
that server the OpenAI key, and a judge server wanting its own token could not sit beside an OpenAI
model. Each fake server below records the ``Authorization`` header of every request it got."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bench.faults.scripted import policy
from bench.runner import demo_dataset_dir
from pageindex.cli import app
from pageindex.llm.scripted import ScriptedModel
from pageindex.llm.spec import parse_spec
from pageindex.llm.testing import FakeOpenAIServer
from tests.cli.clirun import extractive_run

ANSWER_KEY = "sk-answering-KEY-4711abc"
JUDGE_KEY = "judge-token-0815-xyz"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"OPENAI_API_KEY": ANSWER_KEY, "PAGEINDEX_JUDGE_API_KEY": "", "PAGEINDEX_MODEL": "",
            "OPENAI_BASE_URL": "", "PAGEINDEX_CACHE_DIR": str(tmp_path / "cache")}  # fmt: skip


def keys(server: FakeOpenAIServer) -> set[str]:
    """The ``Authorization`` headers of every request ``server`` got."""
    return {e["headers"].get("Authorization", "") for e in server.exchanges}


def everything(output: str, folder: Path) -> str:
    files = [p for p in folder.rglob("*") if p.is_file()] if folder.exists() else []
    return output + "".join(p.read_text(errors="replace") for p in files)


def bench_run(env: dict[str, str], answers: str, judges: str, out: Path, *more: str, **more_env: str):
    args = ["bench", "run", "-q", "--data-dir", str(demo_dataset_dir()), "-r", "iterative", "-m", "openai/m",
            "--base-url", answers, "--judge", "llm", "--judge-model", "openai/j", "--judge-base-url", judges,
            "--limit", "2", "--max-retries", "0", "-o", str(out), *more]  # fmt: skip
    return CliRunner().invoke(app, args, env={**env, **more_env})


def test_the_judge_gets_its_own_key_and_the_answering_model_the_openai_key(env, tmp_path):
    """Before: the judge's server got ``Bearer sk-answering-...`` too. Now each endpoint gets its own,
    and neither key reaches the output, run.json, samples.jsonl or events.log."""
    with FakeOpenAIServer(ScriptedModel(policy=policy)) as answers, \
            FakeOpenAIServer(ScriptedModel(policy=policy)) as judges:  # fmt: skip
        out = bench_run(env, answers.base_url, judges.base_url, tmp_path / "run",
                        PAGEINDEX_JUDGE_API_KEY=JUDGE_KEY)  # fmt: skip
    assert out.exit_code == 0, out.output
    assert answers.chat_requests and judges.chat_requests
    assert keys(answers) == {f"Bearer {ANSWER_KEY}"}
    assert keys(judges) == {f"Bearer {JUDGE_KEY}"}
    said = everything(out.output, tmp_path / "run")
    assert ANSWER_KEY not in said and JUDGE_KEY not in said
    samples = [json.loads(line) for line in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    assert {s["judge"] for s in samples} == {"llm:openai/j"}


def test_without_the_judge_key_the_judge_gets_the_openai_key_as_before(env, tmp_path):
    """Unset (or empty): no set-up breaks; two loopback endpoints need no warning."""
    with FakeOpenAIServer(ScriptedModel(policy=policy)) as answers, \
            FakeOpenAIServer(ScriptedModel(policy=policy)) as judges:  # fmt: skip
        out = bench_run(env, answers.base_url, judges.base_url, tmp_path / "run")
    assert out.exit_code == 0, out.output
    assert keys(answers) == keys(judges) == {f"Bearer {ANSWER_KEY}"}
    assert "warning: OPENAI_API_KEY" not in out.output


def test_the_shared_key_is_warned_of_before_any_call(env, tmp_path, monkeypatch):
    """An answering model not on this machine and a judge elsewhere, both sent the one OPENAI_API_KEY:
    one warning line before the first request (the run goes on). (The answering server is taken for a
    remote one here: the tests reach loopback only.)"""
    import pageindex.llm.profile as profile

    with FakeOpenAIServer(ScriptedModel(policy=policy)) as answers, \
            FakeOpenAIServer(ScriptedModel(policy=policy)) as judges:  # fmt: skip
        real = profile.is_loopback
        monkeypatch.setattr(profile, "is_loopback", lambda url: real(url) and url != answers.base_url)
        out = CliRunner().invoke(
            app, ["bench", "run", "--data-dir", str(demo_dataset_dir()), "-r", "iterative", "-m", "openai/m",
                  "--base-url", answers.base_url, "--judge", "llm", "--judge-model", "openai/j",
                  "--judge-base-url", judges.base_url, "--limit", "1", "-o", str(tmp_path / "run")],
            env=env,
        )  # fmt: skip
        seen_first = answers.exchanges[0]["path"]
    assert out.exit_code == 0, out.output
    line = (
        f"warning: OPENAI_API_KEY is sent to both {answers.base_url} and {judges.base_url} (the judge); "
        "set PAGEINDEX_JUDGE_API_KEY to give the judge its own key"
    )
    lines = out.output.splitlines()
    assert lines.count(line) == 1, out.output
    assert lines.index(line) == 0, out.output  # before the header and any progress
    assert seen_first == "/v1/models"
    assert keys(judges) == {f"Bearer {ANSWER_KEY}"}  # warned, not changed


def test_a_judge_refusing_its_own_key_names_its_variable(env, tmp_path):
    """401 from the judge said ``check OPENAI_API_KEY``: the key came from PAGEINDEX_JUDGE_API_KEY."""
    wants = "the-right-token"
    with FakeOpenAIServer(ScriptedModel(policy=policy)) as answers, \
            FakeOpenAIServer(ScriptedModel(policy=policy), require_key=wants) as judges:  # fmt: skip
        wrong = bench_run(env, answers.base_url, judges.base_url, tmp_path / "wrong",
                          PAGEINDEX_JUDGE_API_KEY=JUDGE_KEY)  # fmt: skip
        right = bench_run(env, answers.base_url, judges.base_url, tmp_path / "right",
                          PAGEINDEX_JUDGE_API_KEY=wants)  # fmt: skip
    assert wrong.exit_code == 2, wrong.output
    assert wrong.output.strip().splitlines()[-1] == (
        f"error: {judges.base_url} rejected the API key for openai/j (HTTP 401); "
        "check PAGEINDEX_JUDGE_API_KEY"
    )
    assert JUDGE_KEY not in wrong.output and not (tmp_path / "wrong").exists()
    assert right.exit_code == 0, right.output
    run_dir = extractive_run(tmp_path)
    with FakeOpenAIServer(ScriptedModel(policy=policy), require_key=wants) as judges:
        keyless = CliRunner().invoke(app, ["bench", "rejudge", str(run_dir), "--judge", "llm",
                                           "--judge-model", "openai/j", "--judge-base-url", judges.base_url,
                                           "-o", str(tmp_path / "re")], env={**env, "OPENAI_API_KEY": ""})
    assert keyless.exit_code == 2, keyless.output  # sent no key: told to set the judge's own
    assert keyless.output.strip().splitlines()[-1].endswith(
        "(HTTP 401) and none was given (PAGEINDEX_JUDGE_API_KEY is not set); "
        "set PAGEINDEX_JUDGE_API_KEY to the server's key"
    )


def test_a_judge_refusing_the_openai_key_names_the_judges_own_variable(env, tmp_path):
    """A judge sent OPENAI_API_KEY (PAGEINDEX_JUDGE_API_KEY unset) that refuses it: the line said only
    ``check OPENAI_API_KEY``, the answering model's key, which the answering server accepted; it now
    names the judge's own variable too. The answering model refusing the key is said as before."""
    with FakeOpenAIServer(ScriptedModel(policy=policy)) as answers, \
            FakeOpenAIServer(ScriptedModel(policy=policy), require_key=JUDGE_KEY) as judges:  # fmt: skip
        out = bench_run(env, answers.base_url, judges.base_url, tmp_path / "run")
    assert out.exit_code == 2, out.output
    assert out.output.strip().splitlines()[-1] == (
        f"error: {judges.base_url} rejected the API key for openai/j (HTTP 401); check OPENAI_API_KEY, "
        "or give the judge its own key in PAGEINDEX_JUDGE_API_KEY"
    )
    assert ANSWER_KEY not in out.output and not (tmp_path / "run").exists()
    with FakeOpenAIServer(ScriptedModel(policy=policy), require_key=JUDGE_KEY) as answers, \
            FakeOpenAIServer(ScriptedModel(policy=policy)) as judges:  # fmt: skip
        out = bench_run(env, answers.base_url, judges.base_url, tmp_path / "run2")
    assert out.exit_code == 2, out.output
    assert out.output.strip().splitlines()[-1] == (
        f"error: {answers.base_url} rejected the API key for openai/m (HTTP 401); check OPENAI_API_KEY"
    )


def test_resume_takes_the_judge_key_from_the_environment_again(env, tmp_path):
    """Nothing of the key is stored: a resumed run sends the key of the shell it resumes in."""
    run = tmp_path / "run"
    with FakeOpenAIServer(ScriptedModel(policy=policy)) as answers, \
            FakeOpenAIServer(ScriptedModel(policy=policy)) as judges:  # fmt: skip
        out = bench_run(env, answers.base_url, judges.base_url, run, PAGEINDEX_JUDGE_API_KEY=JUDGE_KEY)
        assert out.exit_code == 0, out.output
        assert JUDGE_KEY not in everything("", run)
        first = (run / "samples.jsonl").read_text().splitlines(keepends=True)[0]
        (run / "samples.jsonl").write_text(first)
        before = len(judges.exchanges)
        out = CliRunner().invoke(app, ["bench", "run", "-q", "--resume", str(run)],
                                 env={**env, "PAGEINDEX_JUDGE_API_KEY": "judge-token-NEW-2222"})  # fmt: skip
        assert out.exit_code == 0, out.output
        later = {e["headers"].get("Authorization") for e in judges.exchanges[before:]}
    assert later == {"Bearer judge-token-NEW-2222"}
    assert len((run / "samples.jsonl").read_text().splitlines()) == 2
    assert JUDGE_KEY not in everything(out.output, run) and "judge-token-NEW-2222" not in everything("", run)


def test_rejudge_and_judge_send_the_judge_key(env, tmp_path):
    """``bench rejudge`` and ``bench judge`` build their judge model the same way."""
    run_dir = extractive_run(tmp_path, limit=2)
    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps({"question": "What was revenue in FY2022?", "model_answer": "$1.2 billion",
                                   "gold_answer": "$1.2 billion"}) + "\n")  # fmt: skip
    with FakeOpenAIServer(ScriptedModel(policy=policy)) as judges:
        judge = ["--judge", "llm", "--judge-model", "openai/j", "--judge-base-url", judges.base_url]
        rejudge = ["bench", "rejudge", str(run_dir), *judge, "-o", str(tmp_path / "re")]
        again = CliRunner().invoke(app, rejudge, env={**env, "PAGEINDEX_JUDGE_API_KEY": JUDGE_KEY})
        after_rejudge = keys(judges)
        judged = CliRunner().invoke(app, ["bench", "judge", "--input", str(answers), *judge,
                                          "-o", str(tmp_path / "verdicts.jsonl")],
                                    env={**env, "PAGEINDEX_JUDGE_API_KEY": JUDGE_KEY})  # fmt: skip
    assert again.exit_code == 0, again.output
    assert judged.exit_code == 0, judged.output
    assert after_rejudge == keys(judges) == {f"Bearer {JUDGE_KEY}"}
    assert JUDGE_KEY not in everything(again.output + judged.output, tmp_path / "re")


def test_doctor_probes_the_judge_with_its_own_key(env, tmp_path):
    with FakeOpenAIServer(ScriptedModel(policy=policy)) as answers, \
            FakeOpenAIServer(ScriptedModel(policy=policy)) as judges:  # fmt: skip
        out = CliRunner().invoke(
            app, ["doctor", "-m", "openai/m", "--base-url", answers.base_url, "--judge-model", "openai/m",
                  "--judge-base-url", judges.base_url, "--json", "--timeout", "5"],
            env={**env, "PAGEINDEX_JUDGE_API_KEY": JUDGE_KEY},
        )  # fmt: skip
    assert answers.exchanges and judges.exchanges, out.output
    assert keys(answers) == {f"Bearer {ANSWER_KEY}"}
    assert keys(judges) == {f"Bearer {JUDGE_KEY}"}
    assert JUDGE_KEY not in out.output and ANSWER_KEY not in out.output


# -- which commands warn: the rule alone ---------------------------------------------------------
OPENAI = {"OPENAI_API_KEY": ANSWER_KEY}


def spec(url: str, role: str | None = None, env: dict[str, str] = OPENAI):  # type: ignore[no-untyped-def]
    return parse_spec("openai/m", base_url=url, env=env, role=role)


@pytest.mark.parametrize(
    ("answering", "judge", "env", "warned"),
    [
        ("https://api.openai.com/v1", "http://10.0.0.5:8000/v1", OPENAI, True),
        ("https://api.openai.com/v1", "http://127.0.0.1:8080/v1", OPENAI, True),  # one not loopback
        ("http://127.0.0.1:8080/v1", "http://localhost:8081/v1", OPENAI, False),  # both on this machine
        ("https://api.openai.com/v1", "https://API.openai.com:443/v2", OPENAI, False),  # one origin
        ("https://api.openai.com/v1", "http://api.openai.com/v1", OPENAI, True),  # another scheme
        ("https://api.openai.com/v1", "http://bob:pw@10.0.0.5/v1", OPENAI, False),  # user-info sent instead
        ("https://api.openai.com/v1", "http://10.0.0.5:8000/v1", {**OPENAI, "PAGEINDEX_JUDGE_API_KEY": "own"},
         False),
        ("http://10.0.0.6/v1", "http://10.0.0.5:8000/v1", {"OPENAI_API_KEY": ""}, False),  # no key at all
    ],
)
def test_the_shared_key_warning_rule(answering, judge, env, warned):
    from pageindex.llm.spec import shared_key_warning

    said = shared_key_warning(spec(answering, env=env), [spec(judge, "judge", env)], env)
    assert (said is not None) == warned, said
    if warned:
        assert said == (f"OPENAI_API_KEY is sent to both {answering} and {judge} (the judge); "
                        "set PAGEINDEX_JUDGE_API_KEY to give the judge its own key")  # fmt: skip


def test_only_a_judges_openai_spec_takes_the_judge_key():
    env = {**OPENAI, "PAGEINDEX_JUDGE_API_KEY": JUDGE_KEY}
    assert parse_spec("openai/j", env=env, role="judge").api_key.get_secret_value() == JUDGE_KEY
    assert parse_spec("openai/j", env=env, role="judge").key_env == "PAGEINDEX_JUDGE_API_KEY"
    assert parse_spec("openai/m", env=env).api_key.get_secret_value() == ANSWER_KEY
    assert parse_spec("openai/m", env=env, role="retriever").key_env == "OPENAI_API_KEY"
    assert parse_spec("ollama/j", env=env, role="judge").api_key.get_secret_value() == "ollama"
    # a key given in code wins (it is no variable's)
    given = parse_spec("openai/j", env=env, role="judge", api_key="given")
    assert given.api_key.get_secret_value() == "given"


def test_doctor_warns_of_the_shared_key_before_probing(env, monkeypatch):
    import pageindex.llm.profile as profile

    with FakeOpenAIServer(ScriptedModel(policy=policy)) as answers, \
            FakeOpenAIServer(ScriptedModel(policy=policy)) as judges:  # fmt: skip
        real = profile.is_loopback
        monkeypatch.setattr(profile, "is_loopback", lambda url: real(url) and url != answers.base_url)
        out = CliRunner().invoke(
            app, ["doctor", "-m", "openai/m", "--base-url", answers.base_url, "--judge-model", "openai/j",
                  "--judge-base-url", judges.base_url, "--json", "--timeout", "5"],
            env=env,
        )  # fmt: skip
    line = (
        f"warning: OPENAI_API_KEY is sent to both {answers.base_url} and {judges.base_url} (the judge); "
        "set PAGEINDEX_JUDGE_API_KEY to give the judge its own key"
    )
    assert out.output.splitlines().count(line) == 1, out.output
    assert keys(judges) == {f"Bearer {ANSWER_KEY}"}


def test_a_judge_key_the_server_echoes_never_reaches_the_results(env, tmp_path):
    """The fault server's ``--echo-key`` quotes the bearer token it got in its 500s: the judge's key
    (no ``sk-`` shape to mask it by) is masked in the judge's errors in samples.jsonl, run.json,
    events.log and the output, as OPENAI_API_KEY is."""
    from bench.faults import FaultServer

    run = tmp_path / "run"
    with FaultServer(rate=1.0, faults="500", echo_api_key=True, retry_after_seconds=0.01) as judges:
        out = CliRunner().invoke(
            app, ["bench", "run", "--data-dir", str(demo_dataset_dir()), "-r", "iterative", "-m", "scripted",
                  "--scripted-policy", "bench.faults.scripted:policy", "--judge", "llm", "--judge-model",
                  "openai/fault-model", "--judge-base-url", judges.base_url, "--max-retries", "0",
                  "--limit", "2", "-o", str(run)],
            env={**env, "OPENAI_API_KEY": "", "PAGEINDEX_JUDGE_API_KEY": JUDGE_KEY},
        )  # fmt: skip
    samples = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    # (the key was sent: without it the judge sends the placeholder, which is no secret and is quoted)
    assert [s["verdict"] for s in samples] == [None, None], out.output
    assert all("HTTP 500" in s["judge_error"] and "for API key ***" in s["judge_error"] for s in samples)
    assert JUDGE_KEY not in everything(out.output, run) and (run / "events.log").exists()
