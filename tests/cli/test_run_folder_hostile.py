"""A run folder a user broke (an edited sample row, an unreadable file, a read-only disk): every command
that reads or writes it says so in one line naming the file and what is wrong, with the exit code of
the README's table, and the samples already written stay as they were."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bench.runfactory import outcomes, write_run
from tests.cli.clirun import extractive_run, invoke


def one_error_line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1, output
    assert lines[0].startswith("error: ") and "internal error" not in lines[0], output
    return lines[0]


@pytest.mark.parametrize("command", ["summary", "gate", "compare", "report", "rejudge"])
def test_an_edited_sample_row_is_named_by_its_field_and_what_is_allowed(tmp_path: Path, command: str) -> None:
    run = write_run(tmp_path / "r", outcomes("cc"))
    rows = (run / "samples.jsonl").read_text().splitlines()
    first = json.loads(rows[0])
    first["latency_s"] = "fast"
    (run / "samples.jsonl").write_text("\n".join([json.dumps(first), *rows[1:]]) + "\n")
    args = {
        "summary": ["bench", "summary", str(run)],
        "gate": ["bench", "gate", str(run), "--min-accuracy", "0.5"],
        "compare": ["bench", "compare", str(run), str(run)],
        "report": ["bench", "report", str(run), "-o", str(tmp_path / "r.html")],
        "rejudge": ["bench", "rejudge", str(run), "--judge", "rules", "-o", str(tmp_path / "new")],
    }[command]
    code, output = invoke(args)
    assert code == 2, output
    line = one_error_line(output)
    # the row and the field, and what the field takes (not pydantic's "1 validation error for Sample")
    assert "samples.jsonl: line 1 is not a valid sample: latency_s: must be a number" in line, line
    assert "validation error" not in line


def _files(run_dir: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(run_dir.iterdir()) if p.is_file()}


@pytest.mark.parametrize("name", ["events.log", "dropped.jsonl"])
def test_resuming_a_run_that_cannot_write_its_files_is_refused_with_the_run_as_it_was(
    tmp_path: Path, quiet_env: None, name: str
) -> None:
    """A run file that cannot be written (here a folder in its place) is found before run.json says
    "running": it was an internal error after the finished run had been marked running."""
    run_dir = extractive_run(tmp_path, limit=2)
    (run_dir / name).unlink()
    (run_dir / name).mkdir()
    before = _files(run_dir)
    code, output = invoke(["bench", "run", "--resume", str(run_dir), "-q"])
    assert code == 2, output
    error = [line for line in output.splitlines() if line.startswith("error:")]
    assert error == [f"error: cannot resume {run_dir}: cannot write {run_dir / name} (Is a directory); "
                     "nothing was written"], output  # fmt: skip
    assert "internal error" not in output
    assert _files(run_dir) == before
    assert json.loads((run_dir / "run.json").read_text())["status"] == "finished"


@pytest.mark.parametrize("existed", [True, False])
@pytest.mark.parametrize("command", ["run", "rejudge"])
def test_an_out_folder_that_cannot_be_written_is_bad_input_before_any_write(
    tmp_path: Path, quiet_env: None, monkeypatch: pytest.MonkeyPatch, command: str, existed: bool
) -> None:
    """An existing --out folder on a read-only disk: one line naming it, exit 2, nothing written; it
    was an internal error. Tests run as root, where a chmod would not stop a write: the disk's refusal
    is made here, for every file made or written in the folder through ``os.open`` (the temporary
    files of the atomic writes, and the check)."""
    import errno
    import os

    source = extractive_run(tmp_path, limit=2) if command == "rejudge" else None
    out = tmp_path / "out"
    if existed:
        out.mkdir()
    real = os.open

    def read_only_disk(path, flags, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        writes = flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT)
        if writes and os.path.abspath(path).startswith(str(out)):
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", read_only_disk)
    from bench.runner import demo_dataset_dir

    args = {
        "run": ["bench", "run", "--data-dir", str(demo_dataset_dir()), "-r", "extractive", "--judge", "rules",
                "--limit", "1", "--out", str(out), "-q"],
        "rejudge": ["bench", "rejudge", str(source), "--judge", "rules", "-o", str(out)],
    }[command]  # fmt: skip
    code, output = invoke(args)
    assert code == 2, output
    line = one_error_line(output)
    assert f"{out}: cannot write into {out} (Read-only file system); nothing was written" in line, line
    # nothing written: a folder that was there stays empty, one the command made for itself goes again
    assert list(out.iterdir()) == [] if existed else not out.exists()


@pytest.mark.parametrize("broken", ["folder", "not UTF-8"])
@pytest.mark.parametrize("command", ["summary", "compare"])
def test_an_unreadable_dropped_jsonl_is_named_not_an_internal_error(
    tmp_path: Path, broken: str, command: str
) -> None:
    run = write_run(tmp_path / "r", outcomes("cc"))
    dropped = run / "dropped.jsonl"
    dropped.unlink(missing_ok=True)
    if broken == "folder":
        dropped.mkdir()
    else:
        dropped.write_bytes(b"\xff\xfe\n")
    code, output = invoke(["bench", command, str(run), *([str(run)] if command == "compare" else [])])
    assert code == 2, output
    line = one_error_line(output)
    assert line.startswith(f"error: {dropped}: cannot read it as dropped questions ("), output


def test_summary_write_that_cannot_write_is_one_line_and_the_run_stays(tmp_path: Path) -> None:
    """``bench summary RUN --write`` where summary.json cannot be written (here a folder in its place;
    a read-only run folder is the same error): it was 'internal error: IsADirectoryError'."""
    run = write_run(tmp_path / "r", outcomes("cc"))
    (run / "summary.json").unlink(missing_ok=True)
    (run / "summary.json").mkdir()
    samples = (run / "samples.jsonl").read_bytes()
    code, output = invoke(["bench", "summary", str(run), "--write"])
    assert code == 2, output
    line = one_error_line(output)
    assert line.startswith(f"error: --write: cannot write {run / 'summary.json'} ("), line
    assert (run / "samples.jsonl").read_bytes() == samples


def test_ctrl_c_in_any_command_is_the_line_interrupted_and_exit_130(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """typer turns a KeyboardInterrupt into a silent exit 130: `pageindex build` or `bench summary`
    stopped by Ctrl-C said nothing at all."""
    import bench.summary

    run = write_run(tmp_path / "r", outcomes("cc"))

    def ctrl_c(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(bench.summary, "print_summary", ctrl_c)
    code, output = invoke(["bench", "summary", str(run)])
    assert code == 130, output
    assert [line for line in output.splitlines() if line.strip()] == ["interrupted"], output


def test_ctrl_c_while_the_app_is_built_is_the_line_interrupted_and_exit_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The first second of every command builds the app (its modules and plug-ins load): a Ctrl-C
    then printed a traceback and the process died by SIGINT."""
    import pageindex.cli
    from pageindex.cli import _app

    def ctrl_c() -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(_app, "main", ctrl_c)
    try:
        pageindex.cli.main()
    except KeyboardInterrupt:
        pytest.fail("a Ctrl-C while the app was built escaped: a traceback and a death by SIGINT")
    except SystemExit as stop:
        assert stop.code == 130
    else:
        pytest.fail("main() returned after a Ctrl-C")
    assert capsys.readouterr().err == "interrupted\n"


@pytest.mark.parametrize("samples", ["empty", "missing"])
def test_rejudging_a_run_with_no_samples_is_bad_input(tmp_path: Path, samples: str) -> None:
    """It wrote a new run of 0 samples and exited 0 ('rejudged 0 answers ... accuracy -'), where gate
    and compare call a run with no samples bad input."""
    run = write_run(tmp_path / "r", [])
    if samples == "missing":
        (run / "samples.jsonl").unlink()
    out = tmp_path / "new"
    code, output = invoke(["bench", "rejudge", str(run), "--judge", "rules", "-o", str(out)])
    assert code == 2, output
    assert one_error_line(output) == f"error: run r ({run}) has no samples: no answer to rejudge"
    assert not out.exists()


def test_rejudge_says_that_the_source_lost_a_torn_last_line(tmp_path: Path) -> None:
    """The new run left out the source's partial last line in silence (summary and compare warn)."""
    run = write_run(tmp_path / "r", outcomes("cc"), torn_tail='{"run_id": "run", "question_')
    code, output = invoke(["bench", "rejudge", str(run), "--judge", "rules", "-o", str(tmp_path / "new")])
    assert code == 0, output
    assert "dropped a partial last line" in output and "rejudged 2 answers" in output, output


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"doc_id": ', "not JSON: EOF while parsing a value at line 1 column 11"),
        ("{}", "doc_id: Field required"),
    ],
)
@pytest.mark.parametrize("command", ["tree", "ask"])
def test_a_file_that_is_no_tree_json_is_named_with_what_is_wrong(
    tmp_path: Path, text: str, why: str, command: str
) -> None:
    """tree and ask said 'not a tree JSON (1 validation error for Tree)', naming nothing wrong."""
    path = tmp_path / "tree.json"
    path.write_text(text)
    args = ["tree", str(path)] if command == "tree" else ["ask", str(path), "capex?", "-r", "extractive"]
    code, output = invoke(args)
    assert code == 2, output
    assert one_error_line(output) == f"error: {path}: not a tree JSON ({why})"


def test_a_command_started_with_sigint_ignored_takes_it_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """A script's background job inherits SIGINT ignored: `pageindex build` (and tree, ask, ...) ran on
    through `kill -INT`; bench run and rejudge took it back on their own (review 18)."""
    import signal

    import pageindex.cli
    from pageindex.cli import _app

    seen: list[object] = []
    monkeypatch.setattr(_app, "main", lambda: seen.append(signal.getsignal(signal.SIGINT)))
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        pageindex.cli.main()
    finally:
        signal.signal(signal.SIGINT, before)
    assert seen == [signal.default_int_handler]


@pytest.mark.parametrize("command", ["rejudge", "gate"])
def test_a_run_whose_only_line_is_torn_says_so_where_it_has_no_samples(tmp_path: Path, command: str) -> None:
    """Gate and rejudge said 'has no samples' where summary warned of the torn line (trial 18)."""
    run = write_run(tmp_path / "r", [], torn_tail='{"run_id": "run", "question_')
    args = {
        "rejudge": ["bench", "rejudge", str(run), "--judge", "rules", "-o", str(tmp_path / "new")],
        "gate": ["bench", "gate", str(run), "--min-accuracy", "0.5"],
    }[command]
    code, output = invoke(args)
    assert code == 2, output
    line = one_error_line(output)
    assert f"({run}) has no samples" in line and "dropped a partial last line" in line, line
