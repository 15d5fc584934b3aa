"""The run directory's owner: run.json carries a format version; older runs still load, newer
ones fail with one line naming their version and what to do."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.rundir import FORMAT_VERSION, RunDir, RunLoadError, load_run
from tests.bench.runfactory import outcomes, run_info, write_run


def test_a_run_written_before_format_versions_loads(tmp_path: Path) -> None:
    path = write_run(tmp_path / "old", outcomes("ccir"))
    assert "format_version" not in json.loads((path / "run.json").read_text()) or json.loads(
        (path / "run.json").read_text()
    )["format_version"] is None
    run = load_run(path)
    assert run.info.format_version is None and len(run.samples) == 4


def test_written_runs_carry_the_format_version(tmp_path: Path) -> None:
    rundir = RunDir(tmp_path / "new").create()
    info = rundir.write_info(run_info("new"))
    assert info.format_version == FORMAT_VERSION
    assert json.loads(rundir.info_path.read_text())["format_version"] == FORMAT_VERSION
    assert rundir.read_info().format_version == FORMAT_VERSION


def test_a_newer_format_is_one_line_naming_the_version(tmp_path: Path) -> None:
    path = write_run(tmp_path / "future", outcomes("cc"))
    data = json.loads((path / "run.json").read_text())
    data["format_version"] = FORMAT_VERSION + 1
    (path / "run.json").write_text(json.dumps(data))
    with pytest.raises(RunLoadError) as caught:
        load_run(path)
    message = str(caught.value)
    assert "\n" not in message
    assert f"format version {FORMAT_VERSION + 1}" in message and "upgrade pageindex-bench" in message


def test_taken_and_samples(tmp_path: Path) -> None:
    empty = RunDir(tmp_path / "none")
    assert empty.taken_by() == [] and not empty.holds_run() and empty.problem() is None
    path = write_run(tmp_path / "run", outcomes("c"))
    assert RunDir(path).taken_by()[:2] == ["run.json", "samples.jsonl"] and RunDir(path).holds_run()
    assert (RunDir(path).problem() or "").startswith("already holds a run (run.json, samples.jsonl")


def test_a_folder_with_a_run_files_name_but_no_run_is_refused(tmp_path: Path) -> None:
    # the user's own summary.json or events.log: a new run would write over them
    for name in ("summary.json", "events.log", "dropped.jsonl", "retried.jsonl"):
        folder = tmp_path / name.replace(".", "_")
        folder.mkdir()
        (folder / name).write_text("mine\n")
        problem = RunDir(folder).problem() or ""
        assert problem.startswith(f"holds {name}, which a run would write over") and "\n" not in problem
        assert not RunDir(folder).holds_run()
    # other files are not the run's: a folder holding only notes is fine
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "keep.txt").write_text("mine\n")
    assert RunDir(notes).problem() is None


def test_a_run_json_that_is_no_json_or_lacks_a_field_says_which(tmp_path: Path) -> None:
    for text, says in (
        ('{"mine": 1', "is not a valid run.json: not JSON: EOF while parsing an object"),
        ('{"mine": 1}', "is not a valid run.json: run_id: Field required"),
    ):
        (tmp_path / "run.json").write_text(text)
        with pytest.raises(RunLoadError) as caught:
            RunDir(tmp_path).read_info()
        assert says in str(caught.value) and "row" not in str(caught.value)


def test_rewriting_the_dropped_questions_never_leaves_a_torn_file(tmp_path):
    """Review 16: dropped.jsonl was truncated and rewritten in place on every run and resume; a crash
    part-way left a torn file, and a torn dropped.jsonl makes the whole run unreadable."""
    from bench.datasets.models import DroppedQuestion

    run = RunDir(tmp_path)
    rows = [DroppedQuestion(question_id=f"q{i}", reason="pdf_missing", detail=f"DOC_{i}") for i in range(2)]
    run.write_dropped(rows)

    def crashing():
        yield rows[0]
        raise KeyboardInterrupt  # the process stopped part-way through the rewrite

    with pytest.raises(KeyboardInterrupt):
        run.write_dropped(crashing())
    assert run.read_dropped() == rows
    assert [p.name for p in tmp_path.iterdir()] == ["dropped.jsonl"]  # no temp file left either


@pytest.mark.parametrize("name", ["dropped.jsonl", "summary.json"])
def test_a_run_file_that_cannot_be_read_is_one_line_naming_it(tmp_path: Path, name: str) -> None:
    """A folder in a run file's place, or a file that is no UTF-8, was an internal error (review 18)."""
    from bench.rundir import read_summary

    def read(path: Path) -> object:
        return read_summary(path) if name == "summary.json" else RunDir(path).read_dropped()

    for damage in ("folder", "latin-1"):
        path = write_run(tmp_path / damage, outcomes("ci"))
        (path / name).unlink(missing_ok=True)
        if damage == "folder":
            (path / name).mkdir()
        else:
            (path / name).write_bytes("Soci\xe9t\xe9 G\xe9n\xe9rale\n".encode("latin-1"))
        with pytest.raises(RunLoadError) as caught:
            read(path)
        message = str(caught.value)
        assert message.startswith(f"{path / name}: cannot read it as ") and "\n" not in message, message


def test_an_empty_samples_file_is_warned_about_as_a_missing_one_is(tmp_path: Path) -> None:
    """``bench summary`` of a run whose samples.jsonl is empty printed a bare header (review 18)."""
    path = write_run(tmp_path / "r", outcomes("cc"))
    (path / "samples.jsonl").write_text("")
    samples, warnings = RunDir(path).read_samples()
    assert samples == [] and warnings == [f"{path / 'samples.jsonl'} holds no samples: the run has none"]
    (path / "samples.jsonl").unlink()
    assert RunDir(path).read_samples()[1] == [f"{path / 'samples.jsonl'} is missing: the run has no samples"]


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"overall": 5}', "run_id: Field required"),
        ('{"n_samples": ', "not JSON: Expecting value: line 1 column 15"),
    ],
)
def test_a_summary_json_that_is_no_summary_is_one_line_naming_what_is_wrong(
    tmp_path: Path, text: str, why: str
) -> None:
    """It was pydantic's whole dump ('N validation errors for Summary' and a line per field), as
    run.json's and dropped.jsonl's errors no longer are."""
    run = write_run(tmp_path / "r", outcomes("cc"))
    (run / "summary.json").write_text(text)
    with pytest.raises(RunLoadError) as refused:
        RunDir(run).read_summary()
    message = str(refused.value)
    assert message.startswith(f"{run / 'summary.json'} is not a valid summary: {why}"), message
    assert "\n" not in message and "validation error" not in message, message


def test_listed_samples_counts_only_the_samples_run_json_lists(tmp_path: Path) -> None:
    """Mutation test: counting held samples of any repeat up to and including ``repeats``, of any
    retriever, or with ``repeats`` 0 taken as 0 survived: a stray row (another retriever, a repeat the
    run did not ask for) then stood in for a lost one, and a finished run that lost samples passed
    the gate's ``complete`` check."""
    from bench.runinfo import DatasetInfo
    from tests.bench.runfactory import sample

    dataset = DatasetInfo(name="handmade", sha256="abc123", content_sha256="c0ffee", questions=3)
    rows = outcomes("cc") + [sample("q002", repeat=1), sample("q002", "planner")]
    run = load_run(write_run(tmp_path / "r", rows, info=run_info("r", dataset=dataset)))
    assert run.listed_samples() == (3, 2)
    old = load_run(write_run(tmp_path / "old", rows, info=run_info("old", dataset=dataset, repeats=0)))
    assert old.listed_samples() == (3, 2)  # a run.json of repeats 0 ran each question once


def test_a_running_run_with_no_samples_yet_is_said_to_be_running(tmp_path: Path) -> None:
    """Session 26's fresh-user trial: `bench summary` of a run still at its first sample warned
    `samples.jsonl holds no samples: the run has none` under a note that it was still running: it has
    none YET. Said so while a process holds the run (its samples are coming), and as before for a run
    nothing runs (killed: it has none)."""
    from typer.testing import CliRunner

    from bench.rundir import FolderClaim
    from pageindex.cli import app

    path = write_run(tmp_path / "r", [], info=run_info("r", status="running"))
    (path / "samples.jsonl").write_text("")
    claim = FolderClaim.take(path)  # bench run writing into it holds the folder so
    try:
        output = CliRunner().invoke(app, ["bench", "summary", str(path)]).output
        said = f"warning: {path / 'samples.jsonl'} holds no samples yet: the run is still running"
        assert said in output and "the run has none" not in output, output
        (path / "samples.jsonl").unlink()  # the moment between run.json and samples.jsonl
        assert load_run(path).warnings == [
            f"{path / 'samples.jsonl'} is missing: the run has no samples yet (it is still running)"
        ]
    finally:
        claim.release()
    assert load_run(path).warnings == [f"{path / 'samples.jsonl'} is missing: the run has no samples"]
    (path / "samples.jsonl").write_text("")
    assert load_run(path).warnings == [f"{path / 'samples.jsonl'} holds no samples: the run has none"]
