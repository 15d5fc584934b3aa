"""A command never overwrites a file it did not make: the filing it reads, a label file it reads, a
run's records, a hard link to its input. Each case is one ``error:`` line, exit 2, file untouched;
replacing the command's own earlier output still works."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bench.runner import demo_dataset_dir
from pageindex.cli import app
from tests.bench.runfactory import sample, write_run

PDF = demo_dataset_dir() / "pdfs" / "NORTHWIND_2023_10K.pdf"
ANSWER = {"question": "What was revenue?", "gold_answer": "1", "model_answer": "1", "label": "Correct Answer"}


def invoke(*args: object) -> tuple[int, str]:
    out = CliRunner().invoke(app, [str(a) for a in args], env={"OPENAI_API_KEY": "", "PAGEINDEX_MODEL": ""})
    return out.exit_code, out.output


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def refused(code: int, output: str, says: str) -> None:
    lines = [line for line in output.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: ") and says in lines[0], output


@pytest.fixture
def run(tmp_path: Path) -> Path:
    samples = [sample("q000", verdict="correct"), sample("q001", verdict="incorrect")]
    return write_run(tmp_path / "run", samples)


@pytest.fixture
def answers(tmp_path: Path) -> Path:
    path = tmp_path / "answers.jsonl"
    path.write_text(json.dumps(ANSWER) + "\n")
    return path


def test_build_never_writes_over_the_filing_or_a_run_file(tmp_path, run):
    pdf = shutil.copy(PDF, tmp_path / "filing.pdf")
    before = digest(pdf)
    refused(*invoke("build", pdf, "-o", pdf), "is also the input it reads")
    assert digest(pdf) == before
    record = run / "run.json"
    kept = digest(record)
    refused(*invoke("build", pdf, "-o", record), "exists and is not a tree JSON")
    assert digest(record) == kept
    under_a_file = tmp_path / "filing.pdf" / "tree.json"
    refused(*invoke("build", pdf, "-o", under_a_file), "filing.pdf is a file, not a folder")
    # its own output is replaced as before
    tree = tmp_path / "tree.json"
    assert invoke("build", pdf, "-o", tree)[0] == 0 and invoke("build", pdf, "-o", tree)[0] == 0


def test_judge_never_writes_over_what_it_reads_or_a_run(tmp_path, run, answers):
    labels = tmp_path / "fb" / "labels"
    labels.mkdir(parents=True)
    label_file = labels / "model_a.jsonl"
    label_file.write_text(json.dumps(ANSWER) + "\n")
    kept = digest(label_file)
    code, output = invoke("bench", "judge", "--labels", tmp_path / "fb", "-o", label_file)
    refused(code, output, "is also the input it reads")
    assert digest(label_file) == kept
    link = tmp_path / "hard.jsonl"
    os.link(answers, link)
    refused(*invoke("bench", "judge", "-i", answers, "-o", link), "is also the input it reads")
    samples = run / "samples.jsonl"
    kept = digest(samples)
    refused(*invoke("bench", "judge", "-i", answers, "-o", samples), "exists and is not a verdicts file")
    assert digest(samples) == kept
    verdicts = tmp_path / "verdicts.jsonl"
    assert invoke("bench", "judge", "-i", answers, "-o", verdicts)[0] == 0
    assert invoke("bench", "judge", "-i", answers, "-o", verdicts)[0] == 0  # its own output: replaced


def test_gate_junit_never_writes_over_a_run_file(tmp_path, run):
    samples = run / "samples.jsonl"
    kept = digest(samples)
    refused(*invoke("bench", "gate", run, "--min-accuracy", "0", "--junit", samples), "is not JUnit XML")
    assert digest(samples) == kept
    junit = tmp_path / "gate.xml"
    for _ in range(2):  # written, then replaced
        code, output = invoke("bench", "gate", run, "--min-accuracy", "0", "--junit", junit)
        assert code == 0, output
    assert junit.read_text().startswith("<?xml")


def test_report_replaces_only_a_report(tmp_path, run, answers):
    kept = digest(answers)
    refused(*invoke("bench", "report", run, "-o", answers), "exists and is not a report")
    assert digest(answers) == kept
    for fmt, name in (("html", "r.html"), ("md", "r.md")):
        for _ in range(2):  # written, then replaced (a custom title too)
            args = ("bench", "report", run, "--format", fmt, "--title", "Mine", "-o", tmp_path / name)
            code, output = invoke(*args)
            assert code == 0, output


@pytest.mark.parametrize("name", ["summary.json", "events.log", "dropped.jsonl"])
def test_run_and_rejudge_never_write_over_a_file_named_like_a_run_file(tmp_path, run, name):
    # a folder of the user's own that holds a file a run writes, but no run: refused before any work
    folder = tmp_path / "mine"
    folder.mkdir()
    mine = folder / name
    mine.write_text('{"mine": 2}\n')
    kept = digest(mine)
    says = f"holds {name}, which a run would write over"
    refused(*invoke("bench", "rejudge", run, "--judge", "rules", "-o", folder), says)
    code, output = invoke(
        "bench", "run", "-d", demo_dataset_dir(), "-r", "extractive", "--judge", "rules", "--limit", "1",
        "-q", "--out", folder,
    )
    refused(code, output, says)
    assert digest(mine) == kept and sorted(p.name for p in folder.iterdir()) == [name]
    # a folder holding only other files is the user's to share with a run
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "keep.txt").write_text("mine\n")
    assert invoke("bench", "rejudge", run, "--judge", "rules", "-o", tmp_path / "notes")[0] == 0
    assert (tmp_path / "notes" / "keep.txt").read_text() == "mine\n"
