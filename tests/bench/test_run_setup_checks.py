"""``pageindex bench run`` refuses bad input before any work (exit 2, one ``error:`` line, nothing
run, finished files untouched): an LLM cache file it cannot use, a resumed directory whose
samples came from another run, an option that would change what a resumed run's samples mean."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bench.runner import demo_dataset_dir
from pageindex.cli import app
from pageindex.cli._common import ExitCode

SCRIPTED = ["--model", "scripted", "--scripted-policy", "bench.faults.scripted:policy"]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"OPENAI_API_KEY": "", "PAGEINDEX_MODEL": "", "PAGEINDEX_CACHE_DIR": str(tmp_path / "cache")}


def invoke(env: dict[str, str], *args: str) -> tuple[int, str]:
    out = CliRunner().invoke(app, ["bench", "run", "-q", *args], env=env)
    return out.exit_code, out.output


def one_error_line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), output
    return lines[0]


def fingerprint(run_dir: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(run_dir.iterdir())}


def extractive_run(env: dict[str, str], out: Path, *extra: str) -> Path:
    code, output = invoke(
        env, "--data-dir", str(demo_dataset_dir()), "-r", "extractive", "--judge", "rules", "--limit", "2",
        "--out", str(out), *extra,
    )  # fmt: skip
    assert code == 0, output
    return out


def _not_a_database(path: Path) -> Path:
    path.write_text("garbage\n")
    return path


def _a_directory(path: Path) -> Path:
    path.mkdir()
    return path


def _another_sqlite_file(path: Path) -> Path:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE replies (x)")
    return path


def _an_app_database(path: Path) -> Path:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE users (name)")
    return path


def _under_a_file(path: Path) -> Path:
    path.parent.joinpath("plain").write_text("not a folder")
    return path.parent / "plain" / "llm.sqlite"


_UNUSABLE = [
    ("garbage", _not_a_database, "file is not a database"),
    ("directory", _a_directory, "it is a directory, not a file"),
    (
        "other-sqlite",
        _another_sqlite_file,
        "a SQLite file whose tables are not an LLM cache's (no such column: key)",
    ),
    ("app-database", _an_app_database, "a SQLite file with other tables (users), not an LLM cache"),
    ("under-a-file", _under_a_file, "plain is not a directory"),
]


@pytest.mark.parametrize(
    ("make", "says", "mode"),
    [
        pytest.param(make, says, mode, id=f"{name}-{mode}")
        for name, make, says in _UNUSABLE
        for mode in ("rw", "replay")
        if not (make is _under_a_file and mode == "replay")  # replay never creates the file: a miss
    ],
)
def test_an_unusable_cache_path_is_refused_before_any_work(env, tmp_path, make, says, mode):
    """It was found only by the model calls: every sample recorded as an error, exit 4, and the
    errors counted as done on resume, so the run could not be repaired. The check writes nothing."""
    cache = make(tmp_path / "llm.sqlite")
    before = cache.read_bytes() if cache.is_file() else None
    code, output = invoke(
        env, "-r", "iterative", *SCRIPTED, "--judge", "rules", "--limit", "2", "--cache", mode,
        "--cache-path", str(cache), "--out", str(tmp_path / "run"),
    )  # fmt: skip
    assert code == ExitCode.BAD_INPUT, output
    line = one_error_line(output)
    assert line.startswith(f"error: --cache-path {cache} is not a usable LLM cache: ") and says in line, line
    assert "give a cache file written by --cache rw, or a new file name" in line
    assert not (tmp_path / "run").exists()  # nothing run, no run directory
    assert not (tmp_path / "cache" / "trees").exists()  # not even a tree built
    if before is not None:
        assert cache.read_bytes() == before


def test_a_new_cache_path_and_a_good_cache_pass_the_check(env, tmp_path):
    """A cache file that does not exist yet (in a folder that does not either) is made by the run;
    the file it made is then good for replay."""
    cache = tmp_path / "sub" / "llm.sqlite"
    common = ["--data-dir", str(demo_dataset_dir()), "-r", "iterative", "--judge", "rules", "--limit", "1"]
    code, output = invoke(env, *common, *SCRIPTED, "--cache", "rw", "--cache-path", str(cache),
                          "--out", str(tmp_path / "rw"))  # fmt: skip
    assert code == 0, output
    assert cache.is_file()
    code, output = invoke(env, *common, "--model", "replay/scripted", "--cache", "replay",
                          "--cache-path", str(cache), "--out", str(tmp_path / "replay"))  # fmt: skip
    assert code == 0, output
    recorded, replayed = (
        [json.loads(line) for line in (tmp_path / run / "samples.jsonl").read_text().splitlines()]
        for run in ("rw", "replay")
    )
    assert [r["answer"] for r in replayed] == [r["answer"] for r in recorded] and recorded[0]["answer"]


def test_resume_with_an_unusable_cache_path_leaves_the_run_as_it_was(env, tmp_path):
    run = extractive_run(env, tmp_path / "run")
    before = fingerprint(run)
    garbage = _not_a_database(tmp_path / "garbage.sqlite")
    code, output = invoke(env, "--resume", str(run), "--cache", "rw", "--cache-path", str(garbage))
    assert code == ExitCode.BAD_INPUT, output
    assert f"--cache-path {garbage} is not a usable LLM cache" in one_error_line(output)
    assert fingerprint(run) == before


def test_resume_refuses_samples_of_another_run(env, tmp_path):
    """run.json of one run, samples.jsonl of another: resuming adopted the other run's samples."""
    a = extractive_run(env, tmp_path / "a")
    b = extractive_run(env, tmp_path / "b", "--limit", "3")
    frank = tmp_path / "frank"
    frank.mkdir()
    (frank / "run.json").write_bytes((a / "run.json").read_bytes())
    (frank / "samples.jsonl").write_bytes((b / "samples.jsonl").read_bytes())
    before = fingerprint(frank)
    code, output = invoke(env, "--resume", str(frank))
    assert code == ExitCode.BAD_INPUT, output
    line = one_error_line(output)
    assert line == (
        f"error: cannot resume {frank}: sample 1 of {frank / 'samples.jsonl'} is of run b, but "
        f"{frank / 'run.json'} is run a (retrievers extractive, model none); resume only a run "
        "directory as bench run wrote it, or start a new run"
    ), line
    assert fingerprint(frank) == before


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("retriever", "agent", "is of retriever agent"),
        ("model", "openai/gpt-4o", "is of model openai/gpt-4o"),
    ],
)
def test_resume_refuses_samples_of_a_retriever_or_model_it_does_not_have(env, tmp_path, field, value, says):
    run = tmp_path / "run"
    code, output = invoke(
        env, "--data-dir", str(demo_dataset_dir()), "-r", "iterative", *SCRIPTED, "--judge", "rules",
        "--limit", "2", "--out", str(run),
    )  # fmt: skip
    assert code == 0, output
    rows = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    rows[1][field] = value  # same run id: only what it is a sample of gives it away
    (run / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    before = fingerprint(run)
    code, output = invoke(env, "--resume", str(run))
    assert code == ExitCode.BAD_INPUT, output
    line = one_error_line(output)
    assert f"sample 2 of {run / 'samples.jsonl'} {says}, but" in line
    assert "is run run (retrievers iterative, model scripted)" in line
    assert fingerprint(run) == before


def test_resume_of_its_own_samples_still_works(env, tmp_path):
    run = extractive_run(env, tmp_path / "run")
    lines = (run / "samples.jsonl").read_text().splitlines(keepends=True)
    (run / "samples.jsonl").write_text(lines[0])  # as if stopped after one sample
    code, output = invoke(env, "--resume", str(run), "--timeout", "30")
    assert code == 0, output
    assert "1 sample written, 1 already done" in " ".join(output.split())
    # the header says which settings the resumed run uses (the stored ones, a flag given now winning)
    said = " ".join(output.split())
    assert "note: resumed with its stored settings (flags given now win): concurrency 4, timeout 30s" in said


def test_context_window_cannot_change_on_resume_and_the_stored_one_is_kept(env, tmp_path):
    """It sizes the section indexes the model is shown, so it changes what a sample means: refused
    like --json-mode (it was silently ignored), and the run keeps the window it started with."""
    run = extractive_run(env, tmp_path / "run", "--context-window", "4096")
    lines = (run / "samples.jsonl").read_text().splitlines(keepends=True)
    (run / "samples.jsonl").write_text(lines[0])
    before = fingerprint(run)
    code, output = invoke(env, "--resume", str(run), "--context-window", "8192")
    assert code == ExitCode.BAD_INPUT, output
    line = one_error_line(output)
    assert "stored settings; drop --context-window (stored 4096, given 8192) (only --budget," in line, line
    assert fingerprint(run) == before
    code, output = invoke(env, "--resume", str(run))
    assert code == 0, output
    assert json.loads((run / "run.json").read_text())["extra"]["config"]["context_window"] == 4096


def test_resume_accepts_the_runs_own_command_line_and_names_what_changed(env, tmp_path):
    """Repeating the command that started the run with --resume appended (the obvious script) is no
    change; an option given with another value is refused with both values (review 6, L3)."""
    same = ("--data-dir", str(demo_dataset_dir()), "-r", "extractive", "--judge", "rules", "--limit", "2")
    run = extractive_run(env, tmp_path / "run")
    lines = (run / "samples.jsonl").read_text().splitlines(keepends=True)
    (run / "samples.jsonl").write_text(lines[0])
    code, output = invoke(env, "--resume", str(run), *same, "--out", str(run))
    assert code == 0, output
    assert "1 sample written, 1 already done" in " ".join(output.split())
    # the same folder by another path, and the retrievers in another order, are no change either
    code, output = invoke(env, "--resume", str(run), "--out", f"{run}/../run", "-r", "extractive")
    assert code == 0, output
    code, output = invoke(env, "--resume", str(run), *same[:-1], "3", "--model", "openai/x")
    assert code == ExitCode.BAD_INPUT, output
    line = one_error_line(output)
    assert "drop --model (none stored, given openai/x), --limit (stored 2, given 3) (only --budget" in line


def test_an_out_that_is_a_file_is_refused_before_any_work(env, tmp_path):
    target = tmp_path / "notes.txt"
    target.write_text("mine")
    code, output = invoke(env, "-r", "extractive", "--judge", "rules", "--limit", "1", "--out", str(target))
    assert code == ExitCode.BAD_INPUT
    assert output.strip().splitlines()[-1] == (
        f"error: --out {target}: is a file; give a folder for the run (created if needed)"
    )
    assert "trees ready" not in output and target.read_text() == "mine"


@pytest.mark.parametrize(
    "args, says",
    [
        (["-r", ""], "--retrievers '' names no retriever; choose from"),
        (["-r", " , "], "names no retriever"),
        (["--cache-path", "x.sqlite"], "--cache-path x.sqlite is read only with --cache rw"),
        (["-r", "extractive", "--base-url", "http://127.0.0.1:9/v1"],
         "--base-url http://127.0.0.1:9/v1 would not be used: no retriever or judge of this run calls"),
        (["-r", "extractive", "--judge-base-url", "http://127.0.0.1:9/v1"],
         "the default judge (rules) takes no model: --judge-base-url would not be used"),
        (["-r", "extractive", "--scripted-policy", "bench.faults.scripted:policy"],
         "--scripted-policy answers --model scripted"),
        (["-r", "extractive", "--json-mode"], "--json-mode shapes a model's structured outputs"),
        (["--model", ""], "--model '': give a model spec"),
        (["-r", "extractive,bm25,extractive"], "--retrievers names extractive more than once"),
        (["-r", "extractive", "--opt", "bm25.top_k=3"], "--opt bm25.*: bm25 is not among this run's"),
        (["--timeout", "inf"], "inf is not a number of seconds > 0"),
        (["--timeout", "nan"], "nan is not a number of seconds > 0"),
        (["--timeout", "0"], "0 is not a number of seconds > 0"),
        (["--judge", "rules", "--judge-model", "openai/gpt-4o-mini"],
         "--judge rules takes no model: --judge-model would not be used"),
        (["--judge", "llm", *SCRIPTED, "--judge-models", "scripted,scripted"],
         "--judge llm takes one model (--judge-model): --judge-models would not be used"),
        (["--judge", "panel", "--judge-models", "scripted,scripted", "--judge-model", "scripted"],
         "--judge panel takes a panel of models (--judge-models): --judge-model would not be used"),
        (["-r", "extractive", "--judge-models", "scripted,scripted", "--judge-model", "scripted"],
         "the default judge (panel) takes a panel of models (--judge-models): --judge-model would not"),
    ],
)
def test_options_that_would_be_ignored_or_make_no_sense_are_refused(env, tmp_path, args, says):
    out = tmp_path / "run"
    code, output = invoke(
        env, "--data-dir", str(demo_dataset_dir()), "--limit", "1", "--out", str(out), *args
    )
    assert code == ExitCode.BAD_INPUT
    assert says in one_error_line(output)
    assert not out.exists()


@pytest.mark.parametrize(
    "given, judge, recorded",
    [(["--judge-model", "scripted"], "llm", "scripted"),
     (["--judge-models", "scripted,scripted"], "panel", "scripted,scripted")],
)  # fmt: skip
def test_judge_models_alone_say_which_judge_is_meant(env, tmp_path, given, judge, recorded):
    """No answering model and no --judge: ``--judge-model`` makes the judge an LLM judging with it
    (before, it was silently ignored and rules judged), ``--judge-models`` a panel of them."""
    out = tmp_path / "run"
    code, output = invoke(
        env, "--data-dir", str(demo_dataset_dir()), "-r", "extractive", "--limit", "1", "--out", str(out),
        *given, "--scripted-policy", "bench.faults.scripted:policy",
    )  # fmt: skip
    assert code == 0, output
    info = json.loads((out / "run.json").read_text())
    assert info["judge"] == judge and info["judge_model"] == recorded


@pytest.mark.parametrize(
    "out, says",
    [
        ("", "give the run a folder of its own (its name is the run id)"),
        (".", "give the run a folder of its own (its name is the run id)"),
        ("afile/run", "afile is a file, not a folder"),
    ],
)
def test_an_out_that_cannot_be_a_run_folder_is_refused(env, tmp_path, monkeypatch, out, says):
    """``-o ''`` used to write a run with an empty run id into the current folder; a path under a
    file failed only after the trees were built, with an internal error."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("not a folder")
    code, output = invoke(env, "--data-dir", str(demo_dataset_dir()), "-r", "extractive", "--limit", "1",
                          "-o", out)  # fmt: skip
    assert code == ExitCode.BAD_INPUT
    assert says in one_error_line(output)
    assert not (tmp_path / "run.json").exists() and not (tmp_path / "samples.jsonl").exists()


def test_a_model_free_retriever_is_not_filed_under_the_runs_model(env, tmp_path):
    """extractive calls no model: in a run beside agent its samples record none (the by-model tables
    put it under "-", not under the agent's model), and a --model nothing uses is said (review 6, L4)."""
    run = tmp_path / "mixed"
    data = str(demo_dataset_dir())
    args = ("--data-dir", data, "-r", "extractive,agent", "--judge", "rules", "--limit", "1")
    code, output = invoke(env, *args, "--out", str(run), *SCRIPTED)
    assert code == 0, output
    rows = map(json.loads, (run / "samples.jsonl").read_text().splitlines())
    models = {s["retriever"]: s["model"] for s in rows}
    assert models == {"extractive": "-", "agent": "scripted"}
    summary = json.loads((run / "summary.json").read_text())
    by = {g["group"]: g["n"] for g in summary["by_retriever_model"]}
    assert by == {"extractive": 1, "agent / scripted": 1}
    assert "is not used" not in output
    code, output = invoke(env, *args[:3], "extractive", *args[4:], "--out", str(tmp_path / "x"), *SCRIPTED)
    assert code == 0, output
    assert "note: --model scripted is not used: extractive calls no model, nor does the rules judge" in output


def test_a_run_mixing_model_and_model_free_retrievers_resumes(env, tmp_path):
    """Its extractive samples record model "-": resume must not take them for another run's rows
    (review 7: a budget-stopped agent,extractive run could not be resumed)."""
    run = tmp_path / "mixed"
    args = ("--data-dir", str(demo_dataset_dir()), "-r", "agent,extractive", "--judge", "rules")
    code, output = invoke(env, *args, "--budget", "20k", "--out", str(run), *SCRIPTED)
    assert code == ExitCode.BUDGET, output
    done = len((run / "samples.jsonl").read_text().splitlines())
    assert 0 < done < 36
    code, output = invoke(env, "--resume", str(run), "--budget", "10M")
    assert code == 0, output
    assert len((run / "samples.jsonl").read_text().splitlines()) == 36


def test_a_dataset_without_its_pdfs_folder_says_so_when_no_question_can_run(env, tmp_path):
    """``bench run`` over a dataset whose pdfs/ folder is missing stopped on "18 pdf_missing" alone;
    validate said why in a warning. The one error line now says it too."""
    import shutil

    data = tmp_path / "data"
    shutil.copytree(demo_dataset_dir(), data)
    shutil.rmtree(data / "pdfs")
    code, output = invoke(env, "--data-dir", str(data), "-r", "extractive", "-o", str(tmp_path / "run"))
    assert code == ExitCode.BAD_INPUT
    assert one_error_line(output) == (
        "error: no question can run: all 18 selected questions were dropped (18 pdf_missing); "
        f"{data}/pdfs is not a folder (there is none): the filings are looked for as pdfs/<doc_name>.pdf, so "
        f"every question's filing is missing; see pageindex bench datasets validate {data}"
    )
    assert not (tmp_path / "run").exists()


def test_a_filing_whose_tree_cannot_be_built_is_dropped_naming_it_once(env, tmp_path, monkeypatch):
    """A filing that passed validation but failed to build was dropped ``x.pdf: DIR/x.pdf: ...`` (the
    PDF error names its file already); another error says its kind, after the file's name."""
    import pageindex.tree
    from pageindex.tree.errors import PDFCorruptError

    real = pageindex.tree.build_tree

    def broken(path, **kwargs):
        if "BLUEFIN" in str(path):
            raise PDFCorruptError(path, "no page is left in it")
        if "GRANITEPEAK" in str(path):
            raise RuntimeError("a bug")
        return real(path, **kwargs)

    monkeypatch.setattr(pageindex.tree, "build_tree", broken)
    data, run = demo_dataset_dir(), tmp_path / "r"
    code, output = invoke(env, "--data-dir", str(data), "-r", "extractive", "-o", str(run))
    assert code == 0, output
    details = {json.loads(line)["detail"] for line in (run / "dropped.jsonl").read_text().splitlines()}
    assert details == {
        f"{data / 'pdfs' / 'BLUEFIN_2022_10K.pdf'}: corrupt or truncated PDF (no page is left in it)",
        "GRANITEPEAK_2023_10K.pdf: RuntimeError: a bug",
    }


@pytest.mark.parametrize("given", ["--model", "PAGEINDEX_MODEL"])
def test_an_unused_model_needs_no_api_key(env, tmp_path, given):
    """An extractive run judged by rules calls no model: the --model (or $PAGEINDEX_MODEL) it names
    is said unused and needs no key (trial: `-r extractive --judge rules` with $PAGEINDEX_MODEL set
    in the shell and no OPENAI_API_KEY was refused with `no API key for openai/gpt-4o-mini`)."""
    common = ["--data-dir", str(demo_dataset_dir()), "--limit", "1"]
    if given == "--model":
        common += ["--model", "openai/gpt-4o-mini"]
    else:
        env = {**env, "PAGEINDEX_MODEL": "openai/gpt-4o-mini"}
    run = tmp_path / "run"
    code, output = invoke(env, *common, "-r", "extractive", "--judge", "rules", "--out", str(run))
    assert code == 0, output
    said = "note: --model openai/gpt-4o-mini is not used: extractive calls no model" in output
    assert said == (given == "--model")  # a default from the environment is not said
    assert len((run / "samples.jsonl").read_text().splitlines()) == 1
    # a model the run calls still needs its key, said where the spec came from, before any work
    for retrievers, judge in (("agent", "rules"), ("extractive", "llm")):
        used = tmp_path / "used"
        code, output = invoke(env, *common, "-r", retrievers, "--judge", judge, "--out", str(used))
        assert code == ExitCode.BAD_INPUT
        source = "--model" if given == "--model" else "$PAGEINDEX_MODEL"
        assert one_error_line(output).startswith(f"error: {source}: no API key for openai/gpt-4o-mini at ")
        assert not used.exists()
    # a bad spec is refused whether or not the run calls it
    bad = ("-r", "extractive", "--judge", "rules", "--model", "gpt-4o-mini")
    code, output = invoke(env, *common, *bad, "--out", str(tmp_path / "bad"))
    assert code == ExitCode.BAD_INPUT
    assert one_error_line(output).startswith("error: --model: bad model spec 'gpt-4o-mini'")


def test_a_judge_two_plugins_register_is_refused_by_name_not_as_a_missing_key(monkeypatch):
    """With `-m openai/x` and no key, a judge name two modules registered must reach the run's own
    refusal (`judge 'rules' is registered by two modules ...`), not stop at `no API key`."""
    import bench.runner as runner
    from bench.config import RunConfig
    from pageindex import registry

    def conflict(name: str) -> str:
        raise registry.PluginError(f"judge {name!r} is registered by two modules: a and b")

    monkeypatch.setattr(runner, "judge_model_need", conflict)
    assert runner.calls_answering_model(RunConfig(retrievers=["extractive"], judge="rules")) is False
    assert runner.calls_answering_model(RunConfig(retrievers=["agent"], judge="rules")) is True
