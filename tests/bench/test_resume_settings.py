"""``bench run --resume`` goes on with what the run settled when it started, never with what today's
shell would settle: the answering model (also one taken from ``$PAGEINDEX_MODEL``), its judge model
and its retrievers; a different one given is refused like any changed setting, the same one given is
no change (review 16)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bench.runner import demo_dataset_dir
from pageindex.cli import app
from pageindex.cli._common import ExitCode

POLICY = "bench.faults.scripted:policy"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        "OPENAI_API_KEY": "", "PAGEINDEX_MODEL": "", "PAGEINDEX_CACHE_DIR": str(tmp_path / "cache"),
        "PAGEINDEX_SCRIPTED_POLICY": POLICY,
    }  # fmt: skip


def invoke(env: dict[str, str], *args: str, **more_env: str) -> tuple[int, str]:
    out = CliRunner().invoke(app, ["bench", "run", "-q", *args], env={**env, **more_env})
    return out.exit_code, " ".join(out.output.split())


def rows(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines() if line.strip()]


def keep_first_sample(run: Path) -> None:
    """As if the run had stopped after its first sample."""
    first = (run / "samples.jsonl").read_text().splitlines(keepends=True)[0]
    (run / "samples.jsonl").write_text(first)


def started_with_the_model_of_the_environment(env: dict[str, str], run: Path) -> None:
    args = ("--data-dir", str(demo_dataset_dir()), "-r", "iterative", "--limit", "2", "-o", str(run))
    code, output = invoke(env, *args, PAGEINDEX_MODEL="scripted/alpha")
    assert code == 0, output
    keep_first_sample(run)


def test_resume_keeps_the_model_the_run_took_from_the_environment(env, tmp_path):
    run = tmp_path / "run"
    started_with_the_model_of_the_environment(env, run)
    code, output = invoke(env, "--resume", str(run), PAGEINDEX_MODEL="scripted/beta")
    assert code == 0, output
    assert len(rows(run)) == 2
    assert {r["model"] for r in rows(run)} == {"scripted/alpha"}
    assert {r["judge"] for r in rows(run)} == {"llm:scripted/alpha"}
    assert "model scripted/alpha" in output  # the header says which model goes on
    info = json.loads((run / "run.json").read_text())
    assert info["model"] == info["judge_model"] == "scripted/alpha"


def test_resume_needs_no_model_in_the_environment_and_accepts_the_stored_one_given(env, tmp_path):
    run = tmp_path / "run"
    started_with_the_model_of_the_environment(env, run)
    code, output = invoke(env, "--resume", str(run), "--model", "scripted/alpha", "--judge-model",
                          "scripted/alpha", "-r", "iterative")  # fmt: skip
    assert code == 0, output
    assert {r["model"] for r in rows(run)} == {"scripted/alpha"} and len(rows(run)) == 2


def test_resume_refuses_another_model_given(env, tmp_path):
    run = tmp_path / "run"
    started_with_the_model_of_the_environment(env, run)
    before = (run / "samples.jsonl").read_bytes(), (run / "run.json").read_bytes()
    code, output = invoke(env, "--resume", str(run), "--model", "scripted/beta")
    assert code == ExitCode.BAD_INPUT, output
    assert output.startswith("error: ")
    assert "drop --model (stored scripted/alpha, given scripted/beta)" in output
    assert ((run / "samples.jsonl").read_bytes(), (run / "run.json").read_bytes()) == before


def test_a_run_made_without_a_model_resumes_without_one(env, tmp_path):
    """Its default retrievers were extractive alone (the LLM ones skipped for want of a model): a
    model set in the shell since must not add agent, planner and iterative to it."""
    run = tmp_path / "run"
    code, output = invoke(env, "--data-dir", str(demo_dataset_dir()), "--limit", "2", "-o", str(run))
    assert code == 0, output
    keep_first_sample(run)
    code, output = invoke(env, "--resume", str(run), PAGEINDEX_MODEL="scripted")
    assert code == 0, output
    assert {(r["retriever"], r["judge"]) for r in rows(run)} == {("extractive", "rules")}
    assert len(rows(run)) == 2


def test_a_run_json_written_before_the_resolved_settings_were_stored_resumes_with_its_recorded_model(
    env, tmp_path
):
    """Older runs stored the flags only (``model: null`` for a model from the environment): the
    model, judge model and retrievers recorded in run.json stand in for them."""
    run = tmp_path / "run"
    started_with_the_model_of_the_environment(env, run)
    info = json.loads((run / "run.json").read_text())
    info["extra"]["config"].update(model=None, judge=None, judge_model=None, retrievers=[])
    (run / "run.json").write_text(json.dumps(info))
    code, output = invoke(env, "--resume", str(run), "--model", "scripted/alpha",
                          PAGEINDEX_MODEL="scripted/beta")  # fmt: skip
    assert code == 0, output
    assert {r["model"] for r in rows(run)} == {"scripted/alpha"} and len(rows(run)) == 2
    assert {r["judge"] for r in rows(run)} == {"llm:scripted/alpha"}


def test_a_base_url_with_credentials_must_be_given_again_on_resume(env, tmp_path):
    """run.json keeps the URL masked (``http://***@host/v1``): resuming with it sent ``***`` as the
    credentials. The stored form is no URL to call: the resume asks for it again, touching nothing,
    and runs with the URL given (its credentials still never stored)."""
    import base64

    from bench.faults.scripted import policy
    from pageindex.llm.scripted import ScriptedModel
    from pageindex.llm.testing import FakeOpenAIServer

    run = tmp_path / "run"
    with FakeOpenAIServer(ScriptedModel(policy=policy)) as server:
        url = server.base_url.replace("http://", "http://alice:s3cret-pass@")
        code, output = invoke(
            env, "--data-dir", str(demo_dataset_dir()), "-r", "oracle", "-m", "openai/m", "--base-url", url,
            "--judge", "rules", "--limit", "2", "-o", str(run),
        )  # fmt: skip
        assert code == 0, output
        keep_first_sample(run)
        before = {p.name: p.read_bytes() for p in run.iterdir()}
        seen = len(server.exchanges)

        code, output = invoke(env, "--resume", str(run))
        assert code == ExitCode.BAD_INPUT, output
        assert output == (
            f"error: cannot resume {run}: it was started with --base-url http://***@{url.split('@')[1]}, "
            "whose credentials are not stored; give --base-url again, credentials included"
        )
        assert len(server.exchanges) == seen  # nothing sent with *** for credentials
        assert {p.name: p.read_bytes() for p in run.iterdir()} == before

        code, output = invoke(env, "--resume", str(run), "--base-url", url)
        assert code == 0, output
        sent = [e["headers"].get("Authorization", "") for e in server.exchanges[seen:]]
        assert sent and all(base64.b64encode(b"alice:s3cret-pass").decode() in a for a in sent), sent
    assert len(rows(run)) == 2
    assert all("s3cret-pass" not in p.read_text() for p in run.iterdir())


def dataset_in_work(tmp_path: Path) -> Path:
    """A folder ``work`` holding a copy of the demo dataset as ``ds`` (runs started there give ``-d ds``)."""
    import shutil

    work = tmp_path / "work"
    work.mkdir()
    shutil.copytree(demo_dataset_dir(), work / "ds")
    return work


def test_a_run_started_with_a_relative_data_dir_resumes_from_anywhere(env, tmp_path, monkeypatch):
    """The dataset folder is stored absolute; the same folder given again, spelt another way, is no
    change."""
    work = dataset_in_work(tmp_path)
    run = tmp_path / "run"
    monkeypatch.chdir(work)
    args = ("-r", "extractive", "--judge", "rules", "--limit", "3", "-o", str(run))
    code, output = invoke(env, "-d", "ds", *args)
    assert code == 0, output
    info = json.loads((run / "run.json").read_text())
    assert info["extra"]["config"]["data_dir"] == info["dataset"]["path"] == str(work / "ds")

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    for given in ([], ["-d", str(work / "ds")], ["-d", "../work/ds"]):
        keep_first_sample(run)
        code, output = invoke(env, "--resume", str(run), *given)
        assert code == 0, (given, output)
        assert len(rows(run)) == 3
    code, output = invoke(env, "--resume", str(run), "-d", str(demo_dataset_dir()))
    assert code == ExitCode.BAD_INPUT and f"drop --data-dir (stored {work / 'ds'}, given" in output, output


def test_a_new_budget_on_resume_replaces_the_stored_one_whole(env, tmp_path):
    """A budget is tokens or dollars: a new one of the other kind used to leave the stored one in
    force beside it, so the run stopped again at the old limit."""
    run = tmp_path / "run"
    args = ("--data-dir", str(demo_dataset_dir()), "-r", "extractive", "--judge", "rules", "--limit", "2")
    code, output = invoke(env, *args, "--budget", "10k", "-o", str(run))
    assert code == 0, output
    for budget, stored in (("$5", {"usd": 5.0}), ("20k", {"tokens": 20000}), ("$2.50", {"usd": 2.5})):
        keep_first_sample(run)
        code, output = invoke(env, "--resume", str(run), "--budget", budget)
        assert code == 0, output
        info = json.loads((run / "run.json").read_text())
        assert info["budget"] == stored, (budget, info["budget"])
        config = info["extra"]["config"]
        assert (config["budget_tokens"], config["budget_usd"]) == (stored.get("tokens"), stored.get("usd"))


def test_resume_goes_to_the_endpoints_the_run_took_from_the_environment(env, tmp_path):
    """Trial 15: a run whose endpoint came from $OPENAI_BASE_URL stored none, so its resume in a shell
    without the variable went to api.openai.com (or failed to reach it). Review 17: each model keeps
    its own endpoint: a judge of another provider ($OLLAMA_BASE_URL) is not sent to the answering
    model's server on resume."""
    from bench.faults.scripted import policy
    from pageindex.llm.scripted import ScriptedModel
    from pageindex.llm.testing import FakeOpenAIServer

    run = tmp_path / "run"
    with FakeOpenAIServer(ScriptedModel(policy=policy)) as answers, FakeOpenAIServer(
        ScriptedModel(policy=policy)
    ) as judges:
        first = {"OPENAI_BASE_URL": answers.base_url, "OLLAMA_BASE_URL": judges.base_url}
        code, output = invoke(
            env, "--data-dir", str(demo_dataset_dir()), "-r", "oracle", "-m", "openai/m", "--judge", "llm",
            "--judge-model", "ollama/j", "--limit", "2", "-o", str(run), OPENAI_API_KEY="k", **first,
        )  # fmt: skip
        assert code == 0, output
        keep_first_sample(run)
        seen = (len(answers.chat_requests), len(judges.chat_requests))
        gone = {"OPENAI_BASE_URL": "", "OLLAMA_BASE_URL": ""}
        code, output = invoke(env, "--resume", str(run), OPENAI_API_KEY="k", **gone)
        assert code == 0, output
        assert len(answers.chat_requests) > seen[0] and len(judges.chat_requests) > seen[1]
        assert len(rows(run)) == 2
    info = json.loads((run / "run.json").read_text())
    assert info["base_urls"] == {"retriever": answers.base_url, "judge": judges.base_url}
    resolved = {"openai/m": answers.base_url, "ollama/j": judges.base_url}
    assert info["extra"]["config"]["resolved_urls"] == resolved
    assert info["extra"]["config"]["base_url"] is None


def test_the_demo_folder_given_to_a_run_made_without_data_dir_is_no_change(env, tmp_path):
    """Trial 15: a run made without --data-dir (the demo data set) refused its own folder given on resume
    ("stored None, given .../datasets/demo", now "none stored"); another folder is still refused."""
    run = tmp_path / "run"
    code, output = invoke(env, "-r", "extractive", "--judge", "rules", "--limit", "2", "-o", str(run))
    assert code == 0, output
    keep_first_sample(run)
    code, output = invoke(env, "--resume", str(run), "--data-dir", str(tmp_path))
    assert code == ExitCode.BAD_INPUT and "drop --data-dir (none stored, given " in output
    code, output = invoke(env, "--resume", str(run), "--data-dir", str(demo_dataset_dir()))
    assert code == 0, output
    assert len(rows(run)) == 2


@pytest.mark.parametrize(
    ("spec", "variable", "default", "key"),
    [
        ("openai/m", "OPENAI_BASE_URL", "https://api.openai.com/v1", {"OPENAI_API_KEY": "k"}),
        ("ollama/m", "OLLAMA_BASE_URL", "http://localhost:11434/v1", {}),
    ],
)
def test_a_masked_endpoint_from_the_environment_must_still_be_the_environments_on_resume(
    env, tmp_path, spec, variable, default, key
):
    """A run whose $OPENAI_BASE_URL (or, for ``ollama/``, $OLLAMA_BASE_URL) carried credentials stores
    it masked and takes it from the environment again on resume: a shell whose variable names another
    server sent the rest of the run there, exit 0 (left for later in session 14). It is refused,
    touching nothing and naming the variable the model reads (review 19); the same endpoint
    (credentials included) resumes."""
    from bench.faults.scripted import policy
    from pageindex.llm.scripted import ScriptedModel
    from pageindex.llm.testing import FakeOpenAIServer

    run = tmp_path / "run"
    with FakeOpenAIServer(ScriptedModel(policy=policy)) as first, FakeOpenAIServer(
        ScriptedModel(policy=policy)
    ) as other:
        url = first.base_url.replace("http://", "http://alice:s3cret-pass@")
        args = ("--data-dir", str(demo_dataset_dir()), "-r", "oracle", "-m", spec, "--judge", "rules")
        code, output = invoke(env, *args, "--limit", "2", "-o", str(run), **key, **{variable: url})
        assert code == 0, output
        keep_first_sample(run)
        before = {p.name: p.read_bytes() for p in run.iterdir()}
        masked = f"http://***@{url.split('@')[1]}"
        for elsewhere in (other.base_url, ""):
            code, output = invoke(env, "--resume", str(run), **key, **{variable: elsewhere})
            assert code == ExitCode.BAD_INPUT, output
            assert output.startswith(
                f"error: cannot resume {run}: {spec} was called at {masked} (its credentials are not "
                f"stored), but the environment now gives {elsewhere or default}; set ${variable} back"
            ), output
            assert not other.chat_requests and {p.name: p.read_bytes() for p in run.iterdir()} == before
        code, output = invoke(env, "--resume", str(run), **key, **{variable: url})
        assert code == 0, output
    assert len(rows(run)) == 2


def test_a_resume_with_other_versions_is_refused_before_the_trees_in_one_line(env, tmp_path, monkeypatch):
    """It was refused after the preflight and the trees (minutes on a real dataset), under the
    header's notes ("note: resumed with its stored settings", "1 tree ready"): the judge, tree
    builder and dataset versions are known before either, so the refusal is the only line."""
    from bench.runner import Runner

    run = tmp_path / "run"
    code, output = invoke(env, "--data-dir", str(demo_dataset_dir()), "--limit", "2", "-o", str(run))
    assert code == 0, output
    keep_first_sample(run)
    info = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps({**info, "judge_version": "rules-0"}))
    before = {name: (run / name).read_bytes() for name in ("run.json", "samples.jsonl")}

    async def no_trees(*args, **kwargs):
        raise AssertionError("the trees were built before the refusal")

    monkeypatch.setattr(Runner, "_build_trees", no_trees)
    out = CliRunner().invoke(app, ["bench", "run", "--resume", str(run)], env=env)
    assert out.exit_code == ExitCode.BAD_INPUT, out.output
    assert [line for line in out.output.splitlines() if line.strip()] == [
        f"error: cannot resume {run}: its samples were scored with other versions (judge version rules-0 -> "
        f"{info['judge_version']}); finish it with the install that started it, or start a new run "
        "(and bench rejudge the old one)"
    ]
    assert {name: (run / name).read_bytes() for name in before} == before


def test_a_resume_over_a_changed_dataset_says_what_changed_and_what_to_do(env, tmp_path):
    """A filing deleted (or replaced, or a fetch re-run) since the run started was refused as "its
    samples were scored with other versions (dataset content hash <64 hex> -> <64 hex>); finish it with
    the install that started it": the advice for a new install, not for a changed dataset."""
    import shutil

    data = tmp_path / "data"
    shutil.copytree(demo_dataset_dir(), data)
    run = tmp_path / "run"
    code, output = invoke(env, "--data-dir", str(data), "--limit", "2", "-o", str(run))
    assert code == 0, output
    keep_first_sample(run)
    before = {name: (run / name).read_bytes() for name in ("run.json", "samples.jsonl")}
    pdf = data / "pdfs" / "GRANITEPEAK_2023_10K.pdf"
    kept = pdf.read_bytes()
    pdf.unlink()
    code, output = invoke(env, "--resume", str(run))
    assert code == ExitCode.BAD_INPUT
    assert output.startswith(f"error: cannot resume {run}: its dataset {data} changed since the run started "
                             "(a PDF in pdfs/ was added, removed or changed size; content hash ")
    assert output.endswith("): put the dataset back as it was to finish the run, or start a new run "
                           "(and bench rejudge the old one)")
    assert "other versions" not in output and "install" not in output
    assert {name: (run / name).read_bytes() for name in before} == before

    pdf.write_bytes(kept)
    questions = data / "questions.jsonl"
    questions.write_bytes(questions.read_bytes() + b"\n")
    code, output = invoke(env, "--resume", str(run))
    assert code == ExitCode.BAD_INPUT and "(questions.jsonl or documents.jsonl; content hash " in output
    questions.write_bytes(questions.read_bytes()[:-1])  # as it was: the run finishes
    code, output = invoke(env, "--resume", str(run))
    assert code == 0, output
    assert len(rows(run)) == 2


def as_an_old_install_stored_it(run: Path, data_dir: str, out: str | None) -> None:
    """run.json as installs before the paths were stored absolute wrote it: --data-dir and --out as
    given, and the dataset path recorded as the loader was given it (relative too)."""
    info = json.loads((run / "run.json").read_text())
    info["extra"]["config"].update(data_dir=data_dir, out=out)
    info["dataset"]["path"] = data_dir
    (run / "run.json").write_text(json.dumps(info))
    keep_first_sample(run)


@pytest.mark.parametrize("out", ["runs/r1", None])
def test_a_real_old_run_with_relative_paths_resumes_from_anywhere(env, tmp_path, monkeypatch, out):
    """Such a run recorded its dataset path relative too, so the recorded dataset path could not say
    where it was started: from another folder its resume
    said `error: ds: no such dataset directory`. The run folder resumed can: it is the stored --out
    (or results/RUN_ID) as given, under the folder the run was started in."""
    work = dataset_in_work(tmp_path)
    monkeypatch.chdir(work)
    code, output = invoke(env, "-d", "ds", "-r", "extractive", "--judge", "rules", "--limit", "3",
                          *(["-o", out] if out else []))  # fmt: skip
    assert code == 0, output
    run = work / out if out else next((work / "results").iterdir())
    as_an_old_install_stored_it(run, "ds", out)

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    code, output = invoke(env, "--resume", os.path.relpath(run))
    assert code == 0, output
    assert len(rows(run)) == 3
    config = json.loads((run / "run.json").read_text())["extra"]["config"]
    assert (config["data_dir"], config["out"]) == (str(work / "ds"), str(run) if out else None)


def test_an_old_relative_run_moved_elsewhere_says_where_to_resume_it(env, tmp_path, monkeypatch):
    """Where neither the dataset path nor the run folder says where the run was started (the folder
    was moved), the refusal says the stored path is relative, in one line, files untouched."""
    work = dataset_in_work(tmp_path)
    monkeypatch.chdir(work)
    code, output = invoke(env, "-d", "ds", "-r", "extractive", "--judge", "rules", "--limit", "2", "-o", "r1")
    assert code == 0, output
    as_an_old_install_stored_it(work / "r1", "ds", "r1")
    moved = tmp_path / "moved"
    (work / "r1").rename(moved)
    before = {p.name: p.read_bytes() for p in moved.iterdir()}
    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(app, ["bench", "run", "-q", "--resume", "moved"], env=env)
    assert out.exit_code == ExitCode.BAD_INPUT, out.output
    assert [line for line in out.output.splitlines() if line.strip()] == [
        "error: cannot resume moved: its stored --data-dir ds is relative to the folder it was started in "
        "(a run made before paths were stored absolute); resume it from that folder"
    ]
    assert {p.name: p.read_bytes() for p in moved.iterdir()} == before


def test_a_run_that_recorded_no_versions_keeps_them_unrecorded_on_resume(env, tmp_path):
    """Upgrade review: a run written by pageindex-bench b58837b or d685f97 (2026-11-22/23) has no
    ``judge_version``, ``builder_version`` or ``dataset.content_sha256`` in its run.json, so a resume
    cannot check them; it went on and stamped today's versions on the run, earlier samples included, and
    ``bench compare``/``gate`` then checked them as if every sample were scored by this install. They
    stay unrecorded now (compare and gate warn that they are not checked), and the resume says so."""
    run = tmp_path / "old"
    args = ("--data-dir", str(demo_dataset_dir()), "-r", "extractive", "--judge", "rules", "--limit", "3")
    code, output = invoke(env, *args, "-o", str(run))
    assert code == 0, output
    info = json.loads((run / "run.json").read_text())
    for key in ("format_version", "builder_version", "judge_version", "judge_code", "retriever_code"):
        info.pop(key, None)  # as the older installs wrote run.json: no such keys
    info["dataset"].pop("content_sha256")
    info["status"] = "interrupted"
    (run / "run.json").write_text(json.dumps(info))
    keep_first_sample(run)

    code, output = invoke(env, "--resume", str(run))
    assert code == 0, output
    assert len(rows(run)) == 3
    assert (
        f"note: {run} does not record its judge version, tree builder version, dataset content hash "
        "(written by an older pageindex-bench)" in output
    )
    resumed = json.loads((run / "run.json").read_text())
    assert resumed["status"] == "finished" and resumed["format_version"] == 1
    assert (resumed["judge_version"], resumed["builder_version"], resumed["dataset"]["content_sha256"]) == (
        None, None, "",
    )  # fmt: skip
    new = tmp_path / "new"
    code, output = invoke(env, *args, "-o", str(new))
    assert code == 0, output
    out = CliRunner().invoke(app, ["bench", "compare", str(run), str(new)], env=env)
    assert out.exit_code == 0, out.output
    assert (
        "warning: run old does not record its judge version, tree builder version, dataset content hash "
        "(written before provenance was recorded): not checked" in " ".join(out.output.split())
    )
