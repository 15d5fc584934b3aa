"""Summary figures over hand-made run directories, checked against hand-computed values."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from rich.console import Console

from bench.rundir import RunLoadError, load_run, read_summary
from bench.stats import wilson_interval
from bench.summary import print_summary
from tests.bench.runfactory import outcomes, sample, write_run


def _agent_samples():
    # 5 correct, 2 incorrect, 2 refusals (fail), 1 error; retriever tokens 100..1000
    rows = outcomes("ccccciirre", "agent")
    return [
        s.model_copy(update={"retriever_prompt_tokens": 100 * (k + 1), "retriever_completion_tokens": 0})
        for k, s in enumerate(rows)
    ]


def test_summary_figures_match_hand_computed_values(tmp_path: Path) -> None:
    planner = [sample(f"p{k}", "planner", "correct", cost_usd=None if k == 0 else 0.002) for k in range(3)]
    run_dir = write_run(
        tmp_path / "r1",
        _agent_samples() + planner,
        dropped=[
            {
                "question_id": "x1",
                "reason": "missing_pdf: DOC_Z.pdf not found",
                "question_type": "novel-generated",
            },
            {"question_id": "x2", "reason": "duplicate: same text as q001"},
        ],
    )
    run = load_run(run_dir)
    agent = run.summary.group("retriever", "agent")
    assert agent is not None
    assert (agent.n, agent.correct, agent.incorrect, agent.refusals, agent.failed, agent.errored) == (
        10,
        5,
        2,
        2,
        2,
        1,
    )
    assert agent.accuracy.value == 0.5
    assert agent.accuracy.low == pytest.approx(wilson_interval(5, 10).low)
    assert agent.accuracy_no_errors.value == pytest.approx(5 / 9)
    assert agent.answered_rate == pytest.approx(0.7)
    assert agent.evidence_hit_rate == pytest.approx(0.5)
    assert agent.tokens_per_question.mean == pytest.approx(550)
    assert agent.tokens_per_question.median == pytest.approx(550)
    assert agent.tokens_per_question.p90 == pytest.approx(910)  # linear: 900 + 0.1 * 100
    assert agent.cost_usd == pytest.approx(0.01)
    assert agent.cost_per_question == pytest.approx(0.001)
    assert agent.dropped == 2
    assert agent.repeat_agreement is None

    planner_g = run.summary.group("retriever", "planner")
    assert planner_g.accuracy.value == 1.0
    assert planner_g.cost_usd is None  # one sample's cost is unknown

    assert run.summary.overall.n == 13 and run.summary.overall.correct == 8
    assert run.summary.n_dropped == 2
    assert run.summary.dropped_reasons == {"missing_pdf": 1, "duplicate": 1}
    novel = run.summary.group("question_type", "novel-generated")
    assert novel is None  # no samples of that type; its dropped question is still counted overall
    metrics = run.summary.group("question_type", "metrics-generated")
    assert metrics.n == 13 and metrics.dropped == 0
    assert run.summary.group("retriever_model", "agent / scripted").keys == {
        "retriever": "agent",
        "model": "scripted",
    }
    # what the runner wrote is what load_run computes
    assert read_summary(run_dir) == run.summary


def test_agreement_across_repeats(tmp_path: Path) -> None:
    rows = [sample("q1", "planner", "correct", repeat=r) for r in range(3)]
    rows += [sample("q2", "planner", v, repeat=r) for r, v in enumerate(["correct", "incorrect", "correct"])]
    run = load_run(write_run(tmp_path / "rep", rows))
    agreement = run.summary.group("retriever", "planner").repeat_agreement
    assert agreement.questions == 2 and agreement.unanimous == 1
    assert agreement.unanimous_rate == 0.5
    assert agreement.mean_pairwise == pytest.approx((1 + 1 / 3) / 2)
    assert agreement.unstable == ["q2"]


def test_agreement_across_repeats_is_counted_without_a_pandas_series_per_question(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 200 questions x 2 retrievers x 3 repeats: a question unstable under both is listed once, an error
    # (no verdict) is a verdict of its own. Before, each question of each grouping built a pandas Series and
    # its value_counts (about 1 ms each: 15 s for `bench summary` of 8,000 samples) and `unstable` was a list
    # searched for every question.
    rows = []
    for q in range(200):
        for retriever in ("planner", "agent"):
            verdicts = ["correct", "correct", "correct"]
            if q % 4 == 0:
                verdicts = ["correct", "incorrect", "correct"]
            elif q % 4 == 1 and retriever == "agent":
                verdicts = ["correct", None, None]
            rows += [sample(f"q{q:03d}", retriever, v, repeat=r) for r, v in enumerate(verdicts)]
    calls = []
    real = pd.Series.value_counts
    monkeypatch.setattr(
        pd.Series, "value_counts", lambda self, *a, **k: calls.append(1) or real(self, *a, **k)
    )
    run = load_run(write_run(tmp_path / "rep", rows, write_summary_file=False))
    agreement = run.summary.overall.repeat_agreement
    assert agreement.questions == 400 and agreement.unanimous == 400 - 50 - 50 - 50
    assert agreement.mean_pairwise == pytest.approx((250 * 1 + 150 * 1 / 3) / 400)
    assert agreement.unstable == [f"q{q:03d}" for q in range(200) if q % 4 in (0, 1)]
    assert run.summary.group("retriever", "planner").repeat_agreement.unstable == [
        f"q{q:03d}" for q in range(0, 200, 4)
    ]
    assert len(calls) == 0


def test_torn_last_line_is_dropped_with_a_warning(tmp_path: Path) -> None:
    run_dir = write_run(tmp_path / "torn", outcomes("ccic"), torn_tail='{"question_id": "q9", "retri')
    before = (run_dir / "samples.jsonl").read_bytes()
    run = load_run(run_dir)
    assert len(run.samples) == 4
    assert run.summary.overall.correct == 3
    assert any("partial last line" in w for w in run.warnings)
    assert (run_dir / "samples.jsonl").read_bytes() == before  # reading never edits the run


def test_unusable_run_directories_raise_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(RunLoadError, match="does not exist"):
        load_run(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(RunLoadError, match="run.json is missing"):
        load_run(tmp_path / "empty")
    run_dir = write_run(tmp_path / "bad", outcomes("cc"))
    lines = (run_dir / "samples.jsonl").read_text().splitlines()
    (run_dir / "samples.jsonl").write_text(lines[0] + "\n{broken\n" + lines[1] + "\n")
    with pytest.raises(RunLoadError, match="line 2"):
        load_run(run_dir)


def test_print_summary_shows_the_tables(tmp_path: Path) -> None:
    run = load_run(write_run(tmp_path / "p", _agent_samples() + outcomes("ci", "planner", prefix="z")))
    console = Console(record=True, width=250)
    print_summary(run.summary, console)
    text = console.export_text()
    assert "by retriever" in text
    assert "50.0% [23.7, 76.3]" in text  # agent: Wilson 5/10
    assert "0/2/1" in text  # dropped/failed/errored of agent
    assert "planner" in text


def test_repeats_do_not_narrow_the_accuracy_interval(tmp_path: Path) -> None:
    """18 questions, 4 right, run 3 times with identical outcomes: 54 samples but 18 observations.
    Wilson on 54 would print [13.2, 34.9] against [9.0, 45.2] for the same questions run once; the
    interval resamples whole questions instead (review 6)."""
    once = load_run(write_run(tmp_path / "once", outcomes("c" * 4 + "i" * 14)))
    rows = [s.model_copy(update={"repeat": r}) for r in range(3) for s in outcomes("c" * 4 + "i" * 14)]
    thrice = load_run(write_run(tmp_path / "thrice", rows))
    single = once.summary.group("retriever", "agent").accuracy
    repeated = thrice.summary.group("retriever", "agent").accuracy
    assert (repeated.n, repeated.value, repeated.method) == (54, pytest.approx(4 / 18), "wilson-by-question")
    # identical repeats: exactly the interval of the questions run once, never Wilson's on 54
    assert (repeated.low, repeated.high) == (pytest.approx(single.low), pytest.approx(single.high))
    assert repeated.high - repeated.low > (wilson_interval(12, 54).high - wilson_interval(12, 54).low) * 1.3
    assert single.method == "wilson"
    # all right, or one question in six: an interval that neither collapses nor leaves out what was seen
    from bench.stats import accuracy_interval

    perfect = accuracy_interval([1.0] * 15, [f"q{k // 3}" for k in range(15)])
    assert (perfect.low, perfect.high) == (pytest.approx(wilson_interval(5, 5).low), 1.0)
    one = accuracy_interval([1.0] * 3 + [0.0] * 15, [f"q{k // 3}" for k in range(18)])
    assert one.low > 0 and one.high == pytest.approx(wilson_interval(1, 6).high)


def test_summarize_takes_the_dataset_loaders_dropped_rows() -> None:
    from bench.datasets.models import DroppedQuestion as LoaderDropped
    from bench.summary import summarize
    from tests.bench.runfactory import run_info

    dropped = [
        LoaderDropped(question_id="x1", reason="pdf_missing", detail="pdfs/X.pdf not found"),
        LoaderDropped(question_id="x2", reason="pdf_missing", detail="pdfs/Y.pdf not found"),
        {"question_id": "x3", "reason": "duplicate"},
    ]
    summary = summarize(outcomes("ci"), run_info(), dropped)
    assert summary.n_dropped == 3
    assert summary.dropped_reasons == {"pdf_missing": 2, "duplicate": 1}
    assert summary.by_retriever[0].dropped == 3


def test_answers_whose_judge_call_failed_are_counted_and_said(tmp_path: Path) -> None:
    """Such answers count as not correct; the summary (and the reports, which share its rows) say
    how many there are instead of showing them as a plain 0% with no error."""
    unjudged = sample("q2", verdict=None, status="answer", judge_error="LLMTimeout: no reply")
    run = load_run(write_run(tmp_path / "u", [*outcomes("c"), unjudged]))
    overall = run.summary.overall
    assert (overall.unjudged, overall.correct, overall.errored) == (1, 1, 0)
    console = Console(record=True, width=250)
    from bench.runinfo import rejudge_command

    print_summary(run.summary, console, rejudge=rejudge_command(tmp_path / "u", run.info))
    text = console.export_text()
    assert "warning: 1 answer without a verdict (a failed judge call) counts as not correct" in text
    # a command that runs as printed: the run, its judge, an output folder
    again = f"pageindex bench rejudge {tmp_path / 'u'} --judge rules -o {tmp_path / 'u'}-rejudged"
    assert f"judge them again with: {again}" in " ".join(text.split())
    assert "unjudged" in text
    clean = Console(record=True, width=250)
    print_summary(load_run(write_run(tmp_path / "c", outcomes("ci"))).summary, clean)
    assert "unjudged" not in clean.export_text()


def test_a_complete_but_invalid_last_row_is_an_error_not_a_torn_write(tmp_path: Path) -> None:
    run_dir = write_run(tmp_path / "r", outcomes("cc"))
    with open(run_dir / "samples.jsonl", "a") as fh:
        fh.write('{"question_id": 5}\n')  # ends with its newline: written whole, so not torn
    with pytest.raises(RunLoadError, match="line 3 is not a valid sample"):
        load_run(run_dir)


@pytest.mark.parametrize("name", ["run.json", "samples.jsonl"])
def test_a_run_file_that_is_a_folder_is_a_clear_error(tmp_path: Path, name: str) -> None:
    run_dir = write_run(tmp_path / "r", outcomes("cc"))
    (run_dir / name).unlink()
    (run_dir / name).mkdir()
    with pytest.raises(RunLoadError, match=f"{name}: cannot read it"):
        load_run(run_dir)


def test_evidence_hit_counts_only_samples_with_evidence_pages_and_stats_are_not_means() -> None:
    """Mutation test: the evidence-hit rate over all samples (those without evidence pages counted as
    misses), a median that was the mean, judge tokens without the completion, and the table's
    "tokens/q mean" column showing the median all left every figure above unchanged."""
    from bench.summary import summarize, summary_rows
    from tests.bench.runfactory import run_info

    rows = [
        sample("q0", evidence_hit=True, retriever_prompt_tokens=100, retriever_completion_tokens=0),
        sample("q1", evidence_hit=False, retriever_prompt_tokens=100, retriever_completion_tokens=0),
        sample("q2", evidence_hit=None, retriever_prompt_tokens=1000, retriever_completion_tokens=600),
        sample("q3", evidence_hit=None, retriever_prompt_tokens=100, retriever_completion_tokens=0,
               judge_prompt_tokens=30, judge_completion_tokens=10),
    ]  # fmt: skip
    overall = summarize(rows, run_info()).overall
    assert (overall.evidence_n, overall.evidence_hit_rate) == (2, 0.5)
    assert overall.tokens_per_question.mean == pytest.approx(475)  # (100 + 100 + 1600 + 100) / 4
    assert overall.tokens_per_question.median == pytest.approx(100)
    assert overall.judge_tokens_per_question.mean == pytest.approx(10)  # 40 on one of 4 samples
    row = summary_rows([overall])[0]
    assert (row["tokens/q mean"], row["median"], row["evidence hit"]) == ("475", "100", "50.0%")


def test_two_retrievers_on_one_question_are_two_observations_not_repeats() -> None:
    """Mutation test: with the unit the question alone (not question and retriever), the overall
    interval of two retrievers that each answered 10 questions once was taken as 10 repeated
    questions and widened (method ``wilson-by-question``)."""
    from bench.summary import summarize
    from tests.bench.runfactory import run_info

    rows = outcomes("ccccccciii", "agent") + outcomes("cccccciiii", "planner")
    overall = summarize(rows, run_info()).overall
    assert (overall.accuracy.k, overall.accuracy.n, overall.accuracy.method) == (13, 20, "wilson")
    assert overall.accuracy.low == pytest.approx(wilson_interval(13, 20).low)
    assert overall.accuracy.high == pytest.approx(wilson_interval(13, 20).high)
