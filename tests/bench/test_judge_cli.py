"""``pageindex bench judge`` end to end on a small answers file (rules judge, no model)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from bench.judges.rules import RULES_VERSION
from pageindex.cli import app

Q = "What is the FY2018 capital expenditure amount (in USD millions) for 3M?"


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_judge_command_writes_one_verdict_per_row_and_prints_agreement(tmp_path: Path) -> None:
    rows = [
        {
            "financebench_id": "a",
            "question": Q,
            "gold_answer": 1577,
            "model_answer": "$1,577 million",
            "label": "Correct Answer",
            "model_name": "m1",
        },
        {
            "financebench_id": "b",
            "question": Q,
            "gold_answer": 1577,
            "model_answer": "$1,390 million",
            "label": "Incorrect Answer",
            "model_name": "m1",
        },
        "{not json",
        {"id": 7, "question": Q, "gold_answer": 1577, "label": "Refusal"},  # no model_answer
        {
            "financebench_id": "e",
            "question": Q,
            "gold_answer": 1577,
            "model_answer": "I'm sorry, but the context does not include capex.",
            "label": "Refusal",
            "model_name": "m2",
        },
    ]
    src = _write(tmp_path / "answers.jsonl", [r if isinstance(r, str) else json.dumps(r) for r in rows])
    out = tmp_path / "verdicts.jsonl"
    args = ["bench", "judge", "--input", str(src), "--judge", "rules", "--output", str(out)]
    result = CliRunner().invoke(app, [*args, "--max-error-rate", "0.5"])  # 2 malformed rows of 5
    assert result.exit_code == 0, result.output
    got = [json.loads(line) for line in out.read_text().splitlines()]
    assert [g["id"] for g in got] == ["a", "b", None, "7", "e"]
    assert [g["line"] for g in got] == [1, 2, 3, 4, 5]
    assert [g["status"] for g in got] == ["ok", "ok", "error", "error", "ok"]
    assert [g["verdict"] for g in got] == ["correct", "incorrect", None, None, "refusal"]
    assert "not JSON" in got[2]["error"] and "model_answer" in got[3]["error"]
    text = " ".join(result.output.split())  # rich wraps long lines
    assert "2 rows with errors" in text
    assert "Agreement with human labels" in text and "100.0%" in text
    assert "Confusion matrix" in text and "Agreement by model_name" in text
    # agreement is agreement, as --per-file says it: a column headed "accuracy" read as the answers'
    # accuracy (trial 3)
    assert "accuracy" not in text and "rows ┃ agreement ┃ Cohen's kappa" in text, text
    assert "model_name ┃ rows ┃ agreement ┃ Cohen's kappa" in text, text


def test_judge_command_errors_are_one_clear_line(tmp_path: Path) -> None:
    src = _write(tmp_path / "a.jsonl", [json.dumps({"question": Q, "gold_answer": 1, "model_answer": "1"})])
    runner = CliRunner()
    missing = runner.invoke(
        app, ["bench", "judge", "-i", str(tmp_path / "nope.jsonl"), "-o", str(tmp_path / "v")]
    )
    assert missing.exit_code == 2 and "no such file" in " ".join(missing.output.split())
    no_model = runner.invoke(
        app, ["bench", "judge", "-i", str(src), "--judge", "llm", "-o", str(tmp_path / "v")]
    )
    assert no_model.exit_code == 2 and "--judge-model" in no_model.output
    unknown = runner.invoke(
        app, ["bench", "judge", "-i", str(src), "--judge", "oracle", "-o", str(tmp_path / "v")]
    )
    assert unknown.exit_code == 2 and "unknown judge" in unknown.output
    ok = runner.invoke(app, ["bench", "judge", "-i", str(src), "-o", str(tmp_path / "v.jsonl")])
    assert ok.exit_code == 0 and "no human labels" in " ".join(ok.output.split())
    before = src.read_bytes()
    same = runner.invoke(app, ["bench", "judge", "-i", str(src), "-o", str(tmp_path / "." / "a.jsonl")])
    assert same.exit_code == 2, same.output
    target = tmp_path / "." / "a.jsonl"
    assert same.output.strip() == f"error: --out {target}: is also the input it reads; write to another file"
    assert src.read_bytes() == before  # the answers are still there
    folder = runner.invoke(app, ["bench", "judge", "-i", str(src), "-o", str(tmp_path)])
    assert folder.exit_code == 2 and "is a directory" in folder.output


# ------------------------------------------------------------------ --labels DIR --per-file
Q2 = "What was Foo Corp's FY2022 revenue (in USD millions)?"


def _labels_dir(tmp_path: Path) -> Path:
    """Two label files: alpha (the rules agree on 2 of 2), beta (1 of 2: the human label says
    correct for a figure 20% off)."""
    folder = tmp_path / "fb" / "labels"
    folder.mkdir(parents=True)

    def row(i: str, answer: str, label: str, gold: object = 1577, question: str = Q) -> str:
        fields = {"financebench_id": i, "question": question, "gold_answer": gold, "label": label}
        return json.dumps({**fields, "model_answer": answer})

    _write(
        folder / "alpha.jsonl",
        [row("a1", "$1,577 million", "Correct Answer"), row("a2", "I cannot determine capex.", "Refusal")],
    )
    _write(
        folder / "beta.jsonl",
        [
            row("b1", "Revenue was $9,100 million.", "Incorrect Answer", gold=7300, question=Q2),
            row("b2", "Revenue was $8,760 million.", "Correct Answer", gold=7300, question=Q2),
        ],
    )
    return tmp_path / "fb"


def test_per_file_report_over_a_labels_folder(tmp_path: Path) -> None:
    fb = _labels_dir(tmp_path)
    out = tmp_path / "v.jsonl"
    result = CliRunner().invoke(app, ["bench", "judge", "--labels", str(fb), "--per-file", "-o", str(out)])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert f"4 rows judged by rules (version {RULES_VERSION}+" in text
    assert "Agreement per label file" in text and "alpha" in text and "beta" in text
    assert "100.0%" in text and "50.0%" in text and "75.0%" in text  # alpha, beta, mean of files
    assert "worst: beta" in text and "Confusion matrix summed over files" in text
    got = [json.loads(line) for line in out.read_text().splitlines()]
    assert [g["source"] for g in got] == ["alpha", "alpha", "beta", "beta"]
    assert [g["verdict"] for g in got] == ["correct", "refusal", "incorrect", "incorrect"]
    assert all(g["judge_version"] and g["judge_version"].startswith(f"{RULES_VERSION}+") for g in got)


def test_per_file_with_holdout_and_abstain(tmp_path: Path) -> None:
    fb = _labels_dir(tmp_path)
    result = CliRunner().invoke(
        app, ["bench", "judge", "--labels", str(fb), "--per-file", "--abstain", "--holdout", "beta"]
    )
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert f"version {RULES_VERSION}+" in text and "[abstain]" in text
    dev, held = text.index("Development label files"), text.index("Hold-out label files")
    assert dev < text.index("alpha") < held < text.index("beta")
    excluded = CliRunner().invoke(
        app, ["bench", "judge", "--labels", str(fb), "--per-file", "--exclude", "beta"]
    )
    assert excluded.exit_code == 0 and "beta" not in excluded.output and "2 rows judged" in excluded.output


def test_llm_and_hybrid_judges_give_the_same_per_file_report(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PAGEINDEX_SCRIPTED_POLICY", "bench.faults.scripted:policy")
    fb = _labels_dir(tmp_path)
    for name in ("llm", "hybrid"):
        out = tmp_path / f"{name}.jsonl"
        result = CliRunner().invoke(
            app,
            [
                *("bench", "judge", "--labels", str(fb), "--per-file", "--judge", name),
                *("--judge-model", "scripted", "-o", str(out)),
            ],
        )
        assert result.exit_code == 0, result.output
        text = " ".join(result.output.split())
        assert "Agreement per label file" in text and "worst: beta" in text
        got = [json.loads(line) for line in out.read_text().splitlines()]
        assert len(got) == 4 and all(g["status"] == "ok" for g in got)
        if name == "llm":
            assert {g["judge"] for g in got} == {"llm:scripted"}
            assert {g["judge_version"] for g in got} == {"judge_v3"}
        else:  # every row here is settled by the rules: no model call
            assert {g["decided_by"] for g in got} == {"rules"} and all(g["usage"]["calls"] == 0 for g in got)


def test_labels_option_errors_are_one_line(tmp_path: Path) -> None:
    fb = _labels_dir(tmp_path)
    src = _write(tmp_path / "a.jsonl", [json.dumps({"question": Q, "gold_answer": 1, "model_answer": "1"})])
    runner = CliRunner()
    cases = [
        (["--labels", str(fb), "--input", str(src)], "exactly one of --input"),
        (["--input", str(src)], "--out is required with --input"),
        (["--labels", str(tmp_path / "nope")], "no such directory"),
        (["--labels", str(fb), "--per-file", "--holdout", "gamma"], "--holdout 'gamma'"),
        (["--labels", str(fb), "--holdout", "beta"], "--holdout needs --per-file"),
        (["--input", str(src), "-o", str(tmp_path / "v"), "--exclude", "x"], "need --labels"),
        (["--labels", str(fb), "--judge", "llm", "--abstain"], "--abstain applies to --judge rules"),
    ]
    for args, message in cases:
        result = runner.invoke(app, ["bench", "judge", *args])
        text = " ".join(result.output.split())
        assert result.exit_code == 2 and message in text, (args, result.output)
        assert "Traceback" not in result.output and text.startswith("error:")


def test_a_file_that_is_no_answers_file_is_bad_input(tmp_path: Path) -> None:
    """Every line malformed (a README given as --input): one error line, exit 2, nothing written,
    instead of "N rows judged; N rows with errors" and exit 0. Some malformed lines among good ones
    are still judged around (their errors listed)."""
    src = tmp_path / "notes.md"
    src.write_text("# Notes\n\nSome text, not JSON.\n")
    out = tmp_path / "verdicts.jsonl"
    result = CliRunner().invoke(app, ["bench", "judge", "--input", str(src), "--out", str(out)])
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2 and len(lines) == 1, result.output
    assert lines[0].startswith(f"error: {src}: no row is a JSON object") and not out.exists()
    good = {"question": "Q?", "gold_answer": "1", "model_answer": "1"}
    src.write_text((json.dumps(good) + "\n") * 4 + "not json\n")  # 1 of 5: not above 0.2
    result = CliRunner().invoke(app, ["bench", "judge", "--input", str(src), "--out", str(out)])
    assert result.exit_code == 0 and "1 row with errors" in result.output and out.exists()


def test_malformed_rows_count_toward_the_max_error_rate(tmp_path: Path) -> None:
    """Half the rows malformed exited 0 (only failed judge calls counted): a CI job saw success and an
    agreement over half the answers. A row that got no verdict counts, whatever the reason; the
    verdicts are still written."""
    good = json.dumps({"question": "Q?", "gold_answer": "1", "model_answer": "1"})
    src = _write(tmp_path / "answers.jsonl", [good, good, "not json", '{"question": "Q?"}'])
    out = tmp_path / "verdicts.jsonl"
    result = CliRunner().invoke(app, ["bench", "judge", "-i", str(src), "-o", str(out)])
    assert result.exit_code == 4, result.output
    says = [line for line in result.output.splitlines() if line.startswith("judge errors:")]
    assert says == [
        "judge errors: 2 of 4 rows got no verdict (2 malformed rows; more than --max-error-rate 0.2); "
        "first: line 3: " + json.loads(out.read_text().splitlines()[2])["error"]
    ]
    statuses = [json.loads(line)["status"] for line in out.read_text().splitlines()]
    assert statuses == ["ok", "ok", "error", "error"]
    args = ["bench", "judge", "-i", str(src), "-o", str(out)]
    again = CliRunner().invoke(app, [*args, "--max-error-rate", "50%"])  # 2 of 4 is not above a half

    assert again.exit_code == 0, again.output
    # the malformed rows were never judged: the head line said "4 rows judged by rules" (fresh-user
    # trial of session 25)
    assert f"2 of 4 rows judged by rules (version {RULES_VERSION}+" in " ".join(again.output.split())
    assert not again.output.startswith("4 rows judged")


def test_exclude_must_name_a_label_file(tmp_path: Path) -> None:
    """--exclude of a file that is not there is refused, as --holdout is (it was silently ignored)."""
    labels = tmp_path / "labels"
    labels.mkdir()
    row = {"question": "Q?", "gold_answer": "1", "model_answer": "1", "label": "Correct"}
    (labels / "model_a.jsonl").write_text(json.dumps(row) + "\n")
    args = ["bench", "judge", "--labels", str(tmp_path), "--exclude", "model_b"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert result.output.strip().startswith("error: --exclude 'model_b': not a label")


def test_by_names_a_field_agreement_can_be_grouped_by(tmp_path: Path) -> None:
    rows = [
        {"question": Q, "gold_answer": 1577, "model_answer": "$1,577 million", "label": "Correct Answer"},
        {"question": Q, "gold_answer": 1577, "model_answer": "$1,390 million", "label": "Correct Answer"},
    ]
    answers = _write(tmp_path / "a.jsonl", [json.dumps(r) for r in rows])
    out = tmp_path / "v.jsonl"
    bad = CliRunner().invoke(app, ["bench", "judge", "-i", str(answers), "-o", str(out), "--by", "eval_mode"])
    assert bad.exit_code == 2
    assert bad.output.strip() == (
        "error: --by eval_mode: agreement can be grouped by model_name, source, decided_by, judge_version"
    )
    assert not out.exists()  # refused before anything was judged or written
    good = CliRunner().invoke(
        app, ["bench", "judge", "-i", str(answers), "-o", str(out), "--by", "judge_version"]
    )
    assert good.exit_code == 0, good.output
    assert "Agreement by judge_version" in good.output


def test_a_label_that_is_no_verdict_is_said_not_dropped_in_silence(tmp_path: Path) -> None:
    rows = [
        {"question": Q, "gold_answer": 1577, "model_answer": "$1,577 million", "label": "maybe"},
        {"question": Q, "gold_answer": 1577, "model_answer": "$1,577 million", "label": "Correct Answer"},
    ]
    answers = _write(tmp_path / "a.jsonl", [json.dumps(r) for r in rows])
    result = CliRunner().invoke(app, ["bench", "judge", "-i", str(answers), "-o", str(tmp_path / "v.jsonl")])
    assert result.exit_code == 0, result.output
    assert "warning: 1 rows have a label that is none of correct, incorrect or refusal (e.g. 'maybe')" in (
        result.output
    )
    # the agreement is over the one row with a usable label, and both rows were judged
    assert "│    1 │    100.0%" in result.output  # agreement column
    assert len((tmp_path / "v.jsonl").read_text().splitlines()) == 2


def test_judge_exits_4_when_too_many_judge_calls_fail(tmp_path: Path, monkeypatch) -> None:
    """Answers the judge could not judge (here: replay misses) are not a success: exit 4 above
    --max-error-rate, with the agreement over what was judged still printed."""
    monkeypatch.setenv("PAGEINDEX_SCRIPTED_POLICY", "bench.faults.scripted:policy")
    row = {"question": Q, "gold_answer": 1577, "model_answer": "$1,577 million", "label": "Correct Answer"}
    recorded = _write(tmp_path / "one.jsonl", [json.dumps(row)])
    cache = tmp_path / "judge.sqlite"
    rec = CliRunner().invoke(app, ["bench", "judge", "-i", str(recorded), "-o", str(tmp_path / "v0.jsonl"),
                                   "--judge", "llm", "--judge-model", "scripted", "--cache", "rw",
                                   "--cache-path", str(cache)])  # fmt: skip
    assert rec.exit_code == 0, rec.output
    other = {**row, "model_answer": "$1,390 million", "label": "Incorrect Answer"}
    both = _write(tmp_path / "two.jsonl", [json.dumps(row), json.dumps(other)])
    replay = ["bench", "judge", "-i", str(both), "-o", str(tmp_path / "v.jsonl"), "--judge", "llm",
              "--judge-model", "replay/scripted", "--cache", "replay", "--cache-path", str(cache)]
    res = CliRunner().invoke(app, replay)
    assert res.exit_code == 4, res.output
    assert (
        "judge errors: 1 of 2 rows got no verdict (1 failed judge call; more than --max-error-rate 0.2)"
        in res.output
    )
    assert len((tmp_path / "v.jsonl").read_text().splitlines()) == 2  # the verdicts are written first
    assert CliRunner().invoke(app, [*replay, "--max-error-rate", "50%"]).exit_code == 0


def test_panel_takes_judge_models_and_rules_takes_no_model(tmp_path: Path, monkeypatch) -> None:
    """The same judge options as ``bench run``: a panel is ``--judge-models a,b``; an option the
    judge would not use is refused before anything is judged."""
    monkeypatch.setenv("PAGEINDEX_SCRIPTED_POLICY", "bench.faults.scripted:policy")
    row = {"question": Q, "gold_answer": 1577, "model_answer": "$1,577 million", "label": "Correct Answer"}
    answers = _write(tmp_path / "a.jsonl", [json.dumps(row)])
    out = tmp_path / "v.jsonl"
    base = ["bench", "judge", "-i", str(answers), "-o", str(out)]
    ok = CliRunner().invoke(app, [*base, "--judge", "panel", "--judge-models", "scripted,scripted"])
    assert ok.exit_code == 0 and json.loads(out.read_text())["judge"] == "panel", ok.output
    out.unlink()
    for args, says in (
        (["--judge", "panel", "--judge-model", "scripted,scripted"], "--judge-model would not be used"),
        (["--judge", "rules", "--judge-model", "scripted"], "--judge rules takes no model: --judge-model"),
        (["--judge", "llm", "--judge-model", "scripted", "--judge-models", "a,b"], "--judge-models would"),
        (["--judge", "llm", "--judge-model", "scripted,scripted"], "takes one model (for a panel:"),
    ):
        res = CliRunner().invoke(app, [*base, *args])
        assert res.exit_code == 2 and says in res.output, res.output
        assert len(res.output.strip().splitlines()) == 1
        assert not out.exists()


SLOW_JUDGE = """
import pathlib, time

def policy(request):
    pathlib.Path(__file__).with_suffix(".started").touch()
    time.sleep(30)
    return "correct"
"""


def test_ctrl_c_while_judging_says_so_and_writes_nothing(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    (tmp_path / "slow.py").write_text(SLOW_JUDGE)
    row = {"question": Q, "gold_answer": 1577, "model_answer": "$1,577 million"}
    answers = _write(tmp_path / "a.jsonl", [json.dumps(row)])
    out = tmp_path / "v.jsonl"
    env = {**os.environ, "PAGEINDEX_SCRIPTED_POLICY": f"{tmp_path / 'slow.py'}:policy"}
    argv = [sys.executable, "-m", "pageindex.cli", "bench", "judge", "-i", str(answers), "-o", str(out),
            "--judge", "llm", "--judge-model", "scripted"]  # fmt: skip
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (tmp_path / "slow.started").exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, (stdout, stderr)
    assert f"interrupted: nothing written ({out} untouched)" in stderr
    # a model judge's replies are kept only by the cache: the line says how a rerun reuses them
    assert "give --cache rw to keep the judge model's replies, so that a rerun reuses those" in stderr
    assert not out.exists()


def test_a_dataset_without_labels_is_not_read_as_label_files(tmp_path):
    """A FinanceBench dataset folder with no labels/: its questions.jsonl is not a label file (it used to
    be read as one, and the report said 'no labelled rows' with exit 0)."""
    from bench.judges.batch import label_files

    row = {"financebench_id": "x", "question": Q, "answer": "1", "doc_name": "d"}
    (tmp_path / "questions.jsonl").write_text(json.dumps(row) + "\n")
    (tmp_path / "documents.jsonl").write_text("{}\n")
    assert label_files(tmp_path) == []
    result = CliRunner().invoke(app, ["bench", "judge", "--labels", str(tmp_path), "--per-file"])
    assert result.exit_code == 2
    assert "no *.jsonl label files" in result.output and "labels/" in result.output


def test_a_verdicts_file_is_replaced_whole_or_not_at_all(tmp_path: Path) -> None:
    """A write of VERDICTS.jsonl that fails part-way leaves the earlier verdicts file as it was: it was
    truncated first, then half written, and the next ``bench judge -o`` refused the torn file as no
    verdicts file."""
    import pytest

    from bench.judges.batch import VerdictRow, is_verdicts_file, write_verdict_rows

    out = tmp_path / "verdicts.jsonl"
    first = VerdictRow(line=1, status="ok", verdict="correct", reasoning="caf\u00e9")
    write_verdict_rows(out, [first, first.model_copy(update={"line": 2})])
    before = out.read_bytes()

    class Broken:
        def model_dump(self, **_: object) -> dict:
            raise OSError(28, "No space left on device")

    with pytest.raises(OSError):
        write_verdict_rows(out, [first, Broken()])  # type: ignore[list-item]
    assert out.read_bytes() == before and is_verdicts_file(out)
    assert [p.name for p in tmp_path.iterdir()] == ["verdicts.jsonl"]


def test_a_label_files_row_without_a_verdict_is_named_by_its_file(tmp_path: Path) -> None:
    """`--labels` reads several files: "first: line 2" did not say which (review of the session's
    diff, session 16). The row's file is named in the list of errors and in the exit-4 line."""
    labels = tmp_path / "labels"
    labels.mkdir()
    row = {"question": "Q?", "gold_answer": "1", "model_answer": "1", "label": "Correct"}
    (labels / "model_a.jsonl").write_text(json.dumps(row) + "\n")
    (labels / "model_b.jsonl").write_text(json.dumps(row) + "\nnot json\n")
    result = CliRunner().invoke(app, ["bench", "judge", "--labels", str(tmp_path)])
    assert result.exit_code == 4, result.output
    assert "  model_b line 2 (no id): not JSON" in result.output
    said = " ".join(result.output.split())
    assert "more than --max-error-rate 0.2); first: model_b line 2: not JSON" in said


UNUSABLE_JUDGE = """
def policy(request):
    return {"verdict": "maybe", "reasoning": "no idea"}
"""


def test_a_failed_judge_call_keeps_what_it_spent_in_the_verdicts_file(tmp_path: Path, monkeypatch) -> None:
    """A row whose judge replies never validated is a judge error with the reason, and its row records
    the calls and tokens those replies took (it recorded 0 calls and a cost of $0, while bench run's
    sample of the same failure counts them)."""
    (tmp_path / "unusable.py").write_text(UNUSABLE_JUDGE)
    monkeypatch.setenv("PAGEINDEX_SCRIPTED_POLICY", f"{tmp_path / 'unusable.py'}:policy")
    row = {"question": Q, "gold_answer": 1577, "model_answer": "$1,577 million", "label": "Correct Answer"}
    answers = _write(tmp_path / "a.jsonl", [json.dumps(row)])
    out = tmp_path / "v.jsonl"
    res = CliRunner().invoke(app, ["bench", "judge", "-i", str(answers), "-o", str(out), "--judge", "llm",
                                   "--judge-model", "scripted", "--max-error-rate", "100%"])  # fmt: skip
    assert res.exit_code == 0, res.output
    got = json.loads(out.read_text())
    assert got["status"] == "error" and got["verdict"] is None
    assert "did not validate as LLMVerdictOut" in got["error"]
    assert got["usage"]["calls"] == 3  # the first ask and the default 2 validation re-asks
    assert got["usage"]["prompt_tokens"] > 0 and got["usage"]["completion_tokens"] > 0
    assert got["usage"]["cost_usd"] is None  # the scripted model has no price: unknown, not $0


AGREEING_JUDGE = """
def policy(request):
    return {"verdict": "correct", "reasoning": "same figure"}
"""


def test_verdict_rows_keep_what_the_judge_recorded_beside_the_verdict(tmp_path: Path, monkeypatch) -> None:
    """Hybrid's rules_verdict (the rules' leaning where the model decided) and a panel's agreement and
    votes are in each row's details (the file had decided_by only)."""
    (tmp_path / "agree.py").write_text(AGREEING_JUDGE)
    monkeypatch.setenv("PAGEINDEX_SCRIPTED_POLICY", f"{tmp_path / 'agree.py'}:policy")
    row = {"question": "Did the consumer segment grow?", "model_answer": "The segment saw some changes.",
           "gold_answer": "The consumer segment shrunk by 0.9% organically.", "label": "Incorrect Answer"}
    answers = _write(tmp_path / "a.jsonl", [json.dumps(row)])
    for args in (["--judge", "hybrid", "--judge-model", "scripted"],
                 ["--judge", "panel", "--judge-models", "scripted,scripted"]):  # fmt: skip
        out = tmp_path / f"{args[1]}.jsonl"
        res = CliRunner().invoke(app, ["bench", "judge", "-i", str(answers), "-o", str(out), *args])
        assert res.exit_code == 0, res.output
        got = json.loads(out.read_text())
        assert got["verdict"] == "correct"
        if args[1] == "hybrid":
            assert (got["decided_by"], got["details"]["rules_verdict"]) == ("llm", "incorrect")
        else:
            assert got["details"]["agreement"] == 1.0 and len(got["details"]["votes"]) == 2


def test_answers_written_on_windows_are_judged_as_the_same_answers_written_on_unix(tmp_path: Path) -> None:
    """A byte-order mark made the first row `not JSON` (no id, no verdict: 1 of 3 rows lost and the
    agreement taken over the rest), and a UTF-16 file (PowerShell's `>`) was `cannot read`, exit 2;
    the datasets' loader read both. A Latin-1 row was the whole file's `cannot read`; it is that row's."""
    import codecs

    rows = [
        {"financebench_id": "a", "question": Q, "gold_answer": 1577, "model_answer": "$1,577 million",
         "label": "Correct Answer", "model_name": "Modèle"},
        {"financebench_id": "b", "question": Q, "gold_answer": 1577, "model_answer": "$1,390 million",
         "label": "Incorrect Answer", "model_name": "Modèle"},
        {"financebench_id": "c", "question": Q, "gold_answer": 1577, "model_answer": "1577 (in € m)",
         "label": "Correct Answer", "model_name": "Modèle"},
    ]  # fmt: skip
    text = "".join(json.dumps(r, ensure_ascii=False) + "\r\n" for r in rows)
    files = {
        "unix": text.replace("\r\n", "\n").encode("utf-8"),
        "bom": codecs.BOM_UTF8 + text.encode("utf-8"),
        "utf16": text.encode("utf-16"),
    }
    got = {}
    for name, data in files.items():
        src = tmp_path / f"{name}.jsonl"
        src.write_bytes(data)
        out = tmp_path / f"verdicts-{name}.jsonl"
        args = ["bench", "judge", "--input", str(src), "--judge", "rules", "-o", str(out)]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        got[name] = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    expected = [("a", "ok", "correct"), ("b", "ok", "incorrect"), ("c", "ok", "correct")]
    for name in files:
        assert [(g["id"], g["status"], g["verdict"]) for g in got[name]] == expected, name
        assert [g["model_name"] for g in got[name]] == ["Modèle"] * 3
    latin = tmp_path / "latin1.jsonl"
    latin.write_bytes(files["unix"].replace("Modèle".encode(), "Modèle".encode("latin-1"), 1))
    out = tmp_path / "verdicts-latin1.jsonl"
    args = ["bench", "judge", "--input", str(latin), "--judge", "rules", "-o", str(out)]
    result = CliRunner().invoke(app, [*args, "--max-error-rate", "0.5"])
    assert result.exit_code == 0, result.output
    verdicts = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [v["status"] for v in verdicts] == ["error", "ok", "ok"]
    at = files["unix"].index("Modèle".encode()) + len("Mod") + 1  # the è, counted from 1
    assert verdicts[0]["error"] == f"line 1 is not UTF-8 text (byte {at})"


def test_a_holdout_or_exclude_not_found_names_the_label_files(tmp_path: Path) -> None:
    """Trial 25: ``--holdout GPT-4_oracle`` was refused without naming the label files there. Names are
    matched as written, case included, as every enumerated option is (``--retrievers``, ``--judge``,
    ``--test``, ``--cache``, ``--format``, ``--by``): a value that differs only in case is told the name."""
    fb = _labels_dir(tmp_path)
    runner = CliRunner()
    base = ["bench", "judge", "--labels", str(fb), "--per-file"]
    result = runner.invoke(app, [*base, "--holdout", "Beta"])
    assert result.exit_code == 2
    assert result.output.strip() == (
        f"error: --holdout 'Beta': not a label file in {fb} (names match as written: did you mean 'beta'?); "
        "the label files: alpha, beta"
    )
    result = runner.invoke(app, [*base, "--exclude", "alpha", "--holdout", "gamma"])
    assert result.exit_code == 2
    assert result.output.strip() == (
        f"error: --holdout 'gamma': not a label file in {fb} after --exclude; the label files: beta"
    )
    result = runner.invoke(app, [*base, "--exclude", "ALPHA.jsonl"])
    assert result.exit_code == 2
    assert result.output.strip() == (
        f"error: --exclude 'ALPHA.jsonl': not a label file in {fb} (names match as written: did you mean "
        "'alpha.jsonl'?); the label files: alpha, beta"
    )
