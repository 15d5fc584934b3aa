"""``pageindex bench datasets demo|validate`` from the command line (fetch is in test_fetch.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from pageindex.cli import app

runner = CliRunner()


def test_demo_then_validate_lists_dropped_bad_filings(tmp_path: Path) -> None:
    out = tmp_path / "bad"
    result = runner.invoke(app, ["bench", "datasets", "demo", str(out), "--bad"])
    assert result.exit_code == 0, result.output
    assert "wrote demo-bad dataset" in result.output and "25 questions over 10 filings" in result.output
    result = runner.invoke(app, ["bench", "datasets", "validate", str(out)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "25 questions, 18 kept, 7 dropped; 10 filings checked, 7 unusable" in result.output
    for reason in (
        "pdf_unreadable",
        "pdf_encrypted",
        "pdf_empty",
        "pdf_no_text",
        "pdf_too_large",
        "pdf_missing",
    ):
        assert reason in result.output
    strict = runner.invoke(app, ["bench", "datasets", "validate", str(out), "--strict"])
    assert strict.exit_code == 1
    no_limit = runner.invoke(app, ["bench", "datasets", "validate", str(out), "--max-pages", "0"])
    assert "19 kept, 6 dropped" in no_limit.output


def test_demo_hostile_and_seed(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["bench", "datasets", "demo", str(tmp_path / "h"), "--hostile", "--seed", "3"]
    )
    assert result.exit_code == 0, result.output
    assert "wrote demo-hostile dataset" in result.output
    assert '"seed": 3' in (tmp_path / "h" / "dataset.json").read_text()


def test_validate_missing_directory_is_one_clear_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["bench", "datasets", "validate", str(tmp_path / "nope")])
    assert result.exit_code == 2
    assert "no such dataset directory" in result.output
    assert "Traceback" not in result.output
    questions = tmp_path / "questions.jsonl"
    questions.write_text("")
    result = runner.invoke(app, ["bench", "datasets", "validate", str(questions)])
    assert result.exit_code == 2
    assert f"{questions} is a file; give the dataset's folder (the one holding" in result.output


def test_piped_validate_keeps_whole_cells(tmp_path: Path) -> None:
    """Written to a pipe with no COLUMNS (a CI log), tables are laid out wide: no cell cut with '…'."""
    import os
    import subprocess
    import sys

    # named from its parent (a pytest-xdist tmp_path is 70 characters): its detail cells are longer than 80
    # columns, and shorter than 200 (the corrupt filing's names its path twice)
    out = tmp_path / "bad"
    assert runner.invoke(app, ["bench", "datasets", "demo", "--out", str(out), "--bad"]).exit_code == 0
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    done = subprocess.run(
        [sys.executable, "-m", "pageindex.cli", "bench", "datasets", "validate", "bad"],
        capture_output=True, text=True, timeout=120, env=env, stdin=subprocess.DEVNULL, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "…" not in done.stdout
    said = "bad/pdfs/BAD_SCANNED_2023_10K.pdf: PDF has no text layer (scanned images only?); OCR it first"
    assert len(said) > 80 and said in done.stdout


def test_validate_a_dataset_with_nothing_usable_is_exit_2_as_bench_run_says(tmp_path: Path) -> None:
    """An empty questions.jsonl, or one whose every row is dropped, is no dataset: `bench run`
    refuses it (exit 2), so `validate` does too, --strict or not."""
    out = tmp_path / "demo"
    assert runner.invoke(app, ["bench", "datasets", "demo", "--out", str(out)]).exit_code == 0
    questions = out / "questions.jsonl"
    questions.write_text("")
    for extra in ([], ["--strict"]):
        res = runner.invoke(app, ["bench", "datasets", "validate", str(out), *extra])
        assert res.exit_code == 2, res.output
        assert res.output.strip().splitlines()[-1] == f"error: {out}: the dataset has no questions"
    questions.write_text('{"financebench_id": "x1"}\n{"financebench_id": "x2"}\n')  # no question text
    res = runner.invoke(app, ["bench", "datasets", "validate", str(out)])
    assert res.exit_code == 2, res.output
    last = res.output.strip().splitlines()[-1]
    assert last.startswith(f"error: {out}: the dataset has no usable question (")
    run = runner.invoke(app, ["bench", "run", "-d", str(out), "-r", "extractive", "--judge", "rules"])
    assert run.exit_code == 2, run.output


def test_demo_never_writes_over_a_dataset_that_is_not_a_demo(tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    mine = '{"financebench_id": "m1", "question": "Mine?"}\n'
    (out / "questions.jsonl").write_text(mine)
    res = runner.invoke(app, ["bench", "datasets", "demo", "-o", str(out)])
    assert res.exit_code == 2
    assert res.output.strip() == (
        f"error: --out {out}: holds a dataset that is not a demo one (questions.jsonl); choose another folder"
    )
    assert (out / "questions.jsonl").read_text() == mine
    demo = tmp_path / "demo"
    for seed in ("1", "2"):  # a demo folder is rewritten as before
        again = runner.invoke(app, ["bench", "datasets", "demo", "-o", str(demo), "--seed", seed])
        assert again.exit_code == 0, again.output


@pytest.mark.parametrize("given", ["", ".", "..", "$PWD", "$PWD/.."])
def test_demo_and_fetch_want_a_folder_of_their_own(tmp_path: Path, monkeypatch, given: str) -> None:
    """``-o "$UNSET"`` is ``.``: demo wrote questions.jsonl, documents.jsonl, dataset.json and pdfs/ among
    the files of the current folder (bench run refuses the same ``-o``); ``-o "$PWD"`` (or a folder the
    current one lies in) did the same by its absolute name."""
    monkeypatch.chdir(tmp_path)
    given = given.replace("$PWD", str(tmp_path))
    fetch = ["fetch", "financebench", "-o", given, "--base-url", "http://127.0.0.1:9"]
    for args in (["demo", "-o", given], fetch):
        res = runner.invoke(app, ["bench", "datasets", *args])
        assert res.exit_code == 2, res.output
        head = f"error: --out '{given or '.'}': give the dataset a folder of its own"
        assert res.output.strip().startswith(head), res.output
    assert list(tmp_path.iterdir()) == []


def test_fetch_never_writes_over_a_dataset_it_did_not_fetch(tmp_path: Path) -> None:
    """A folder holding the user's own dataset had its questions.jsonl and documents.jsonl written over
    and its PDFs "replaced" by fetch (demo refused the same folder)."""
    out = tmp_path / "mine"
    (out / "pdfs").mkdir(parents=True)
    (out / "pdfs" / "X.pdf").write_bytes(b"%PDF-1.4 mine")
    res = runner.invoke(app, ["bench", "datasets", "fetch", "financebench", "-o", str(out),
                              "--base-url", "http://127.0.0.1:9"])  # fmt: skip
    assert res.exit_code == 2
    assert res.output.strip() == (
        f"error: --out {out}: holds a dataset that fetch did not write (pdfs/*.pdf, and no manifest.json); "
        "choose another folder"
    )
    mine = '{"financebench_id": "m1", "question": "Mine?"}\n'
    (out / "questions.jsonl").write_text(mine)
    res = runner.invoke(app, ["bench", "datasets", "fetch", "financebench", "-o", str(out),
                              "--base-url", "http://127.0.0.1:9"])  # fmt: skip
    assert "(questions.jsonl, pdfs/*.pdf, and no manifest.json)" in res.output
    assert (out / "questions.jsonl").read_text() == mine
    assert (out / "pdfs" / "X.pdf").read_bytes() == b"%PDF-1.4 mine"


def test_a_demo_written_over_a_bad_demo_leaves_no_bad_filing(tmp_path: Path) -> None:
    """`demo --bad` then `demo` into one folder left the seven BAD_*.pdf in pdfs/: the dataset's content
    hash (which names every pdfs/*.pdf) then differed from a fresh demo's, so their runs did not compare."""
    from bench.runinfo import dataset_content_hash

    fresh, reused = tmp_path / "fresh", tmp_path / "reused"
    assert runner.invoke(app, ["bench", "datasets", "demo", "-o", str(fresh)]).exit_code == 0
    assert runner.invoke(app, ["bench", "datasets", "demo", "-o", str(reused), "--bad"]).exit_code == 0
    res = runner.invoke(app, ["bench", "datasets", "demo", "-o", str(reused)])
    assert res.exit_code == 0, res.output
    names = [sorted(p.name for p in (folder / "pdfs").iterdir()) for folder in (reused, fresh)]
    assert names[0] == names[1] and len(names[0]) == 3
    assert dataset_content_hash(reused) == dataset_content_hash(fresh)


def test_validate_prints_bracketed_ids_and_file_names_as_written(tmp_path: Path) -> None:
    """The dropped-questions table read its cells as markup: question "q[red]1" and the file
    "BAD [red]x.pdf" came out as "q1" and "BAD x.pdf", naming a file that is not there."""
    import json

    root = tmp_path / "[b]set"
    (root / "pdfs").mkdir(parents=True)
    (root / "pdfs" / "BAD [red]x.pdf").write_text("<html>404</html>")
    evidence = [{"evidence_text": "x", "doc_name": "BAD [red]x", "evidence_page_num": 0}]
    row = {"financebench_id": "q[red]1", "doc_name": "BAD [red]x", "question": "Net sales?", "answer": "1",
           "evidence": evidence}  # fmt: skip
    (root / "questions.jsonl").write_text(json.dumps(row) + "\n")
    result = runner.invoke(app, ["bench", "datasets", "validate", str(root)], env={"COLUMNS": "250"})
    assert result.exit_code == 2, result.output
    assert result.output.startswith("[b]set: 1 questions, 0 kept, 1 dropped")
    assert "q[red]1" in result.output and f"{root}/pdfs/BAD [red]x.pdf: not a PDF file" in result.output


def test_demo_and_fetch_never_write_a_dataset_into_a_run_folder(tmp_path: Path) -> None:
    """Trial 25: ``bench datasets demo -o RUN`` wrote questions.jsonl, documents.jsonl, dataset.json and
    pdfs/ among a run's run.json and samples.jsonl, exit 0 (bench run refuses a folder that holds a run)."""
    from bench.rundir import RunDir

    run = tmp_path / "r1"
    run.mkdir()
    (run / "run.json").write_text("{}")
    (run / "samples.jsonl").write_text("")
    assert RunDir(run).holds_run()
    fetch = ["fetch", "financebench", "-o", str(run), "--base-url", "http://127.0.0.1:9"]
    for args in (["demo", "-o", str(run)], ["demo", str(run), "--bad"], fetch):
        res = runner.invoke(app, ["bench", "datasets", *args])
        assert res.exit_code == 2, res.output
        assert res.output.strip() == (
            f"error: --out {run}: already holds a run (run.json, samples.jsonl); give the dataset a "
            "folder of its own, e.g. " + ("datasets/financebench" if "fetch" in args else "datasets/demo")
        )
    assert sorted(p.name for p in run.iterdir()) == ["run.json", "samples.jsonl"]


def test_validate_and_build_say_a_scanned_pdf_in_the_same_words(tmp_path: Path) -> None:
    """Trial 25: `datasets validate` said "no text layer on any sampled page (scanned images?)" of the
    filing `pageindex build` said "PDF has no text layer (scanned images only?); OCR it first" of. Both
    now say PDFNoTextError's message."""
    out = tmp_path / "bad"
    assert runner.invoke(app, ["bench", "datasets", "demo", "--out", str(out), "--bad"]).exit_code == 0
    scan = out / "pdfs" / "BAD_SCANNED_2023_10K.pdf"
    built = runner.invoke(app, ["build", str(scan)])
    assert built.exit_code == 2
    said = f"{scan}: PDF has no text layer (scanned images only?); OCR it first"
    assert built.output.strip() == f"error: {said}"
    checked = runner.invoke(app, ["bench", "datasets", "validate", str(out)], env={"COLUMNS": "300"})
    assert checked.exit_code == 0, checked.output
    assert f"│ pdf_no_text    │ {said} " in checked.output
    # a long scan is sampled (every other page of 90): the message says so
    from bench.datasets.badfiles import write_scanned_pdf
    from bench.datasets.validation import check_pdf

    long_scan = write_scanned_pdf(tmp_path / "long.pdf", pages=90)
    assert check_pdf(long_scan).detail == (
        f"{long_scan}: PDF has no text layer (scanned images only?); OCR it first "
        "(no text on the 45 of its 90 pages sampled)"
    )
