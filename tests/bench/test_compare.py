"""compare_runs over hand-made runs with known outcomes, and the compare command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bench.compare import NoSharedSamples, compare_runs, run_differences
from bench.rundir import load_run
from pageindex.cli import app
from tests.bench.runfactory import outcomes, run_info, sample, write_run


def _pair(tmp_path: Path, pattern_a: str, pattern_b: str, info_b=None, **fields_b):
    a = write_run(tmp_path / "A", outcomes(pattern_a))
    b = write_run(tmp_path / "B", outcomes(pattern_b, **fields_b), info=info_b or run_info("B"))
    return load_run(a), load_run(b)


def test_real_improvement_is_significant_and_flips_are_listed(tmp_path: Path) -> None:
    # A gets q000..q009 wrong; B gets everything right: 10 discordant pairs, all for B
    a, b = _pair(tmp_path, "i" * 10 + "c" * 20, "c" * 30, retriever_prompt_tokens=1500)
    cmp = compare_runs(a, b)
    assert cmp.shared == 30 and cmp.only_a == 0 and cmp.only_b == 0
    g = cmp.groups[0]
    assert g.group == "agent"
    assert g.accuracy_a.value == pytest.approx(20 / 30) and g.accuracy_b.value == 1.0
    assert g.diff == pytest.approx(10 / 30)
    assert g.test.p_value == pytest.approx(2 * 0.5**10)
    assert g.significant
    assert [f.question_id for f in g.improved] == [f"q{k:03d}" for k in range(10)]
    assert g.regressed == []
    assert g.improved[0].verdict_a == "incorrect" and g.improved[0].verdict_b == "correct"
    assert g.improved[0].question.startswith("What is the value asked by question q000")
    assert g.delta("tokens_per_question").delta == pytest.approx(500)
    assert g.delta("evidence_hit_rate").delta == pytest.approx(10 / 30)
    assert cmp.warnings == []


def test_noise_is_not_significant(tmp_path: Path) -> None:
    # two questions lost, two gained, same accuracy
    a, b = _pair(tmp_path, "ccii" + "c" * 26, "iicc" + "c" * 26)
    g = compare_runs(a, b).overall
    assert g.diff == 0 and not g.significant and g.test.p_value == pytest.approx(1.0)
    assert [f.question_id for f in g.regressed] == ["q000", "q001"]
    assert [f.question_id for f in g.improved] == ["q002", "q003"]
    # a small one-sided change is not significant either: 3 lost, 0 gained -> p = 0.25
    a, b = _pair(tmp_path / "x", "c" * 30, "iii" + "c" * 27)
    g = compare_runs(a, b).overall
    assert g.diff == pytest.approx(-0.1) and g.test.p_value == pytest.approx(0.25) and not g.significant


def test_bootstrap_test_and_grouping_by_question_type(tmp_path: Path) -> None:
    a = outcomes("i" * 12 + "c" * 18, docs=30)
    b = outcomes("c" * 30, docs=30)
    for k, s in enumerate(a + b):
        s.question_type = "novel" if (k % 30) < 15 else "metrics"
    ra = load_run(write_run(tmp_path / "A", a))
    rb = load_run(write_run(tmp_path / "B", b, info=run_info("B")))
    cmp = compare_runs(ra, rb, by="question_type", method="bootstrap")
    assert [g.group for g in cmp.groups] == ["metrics", "novel"]
    novel = cmp.groups[1]
    assert novel.n_pairs == 15 and len(novel.improved) == 12
    assert novel.test.method == "bootstrap" and novel.test.p_value < 0.01
    assert cmp.groups[0].diff == 0


def test_the_bootstrap_counts_documents_not_questions(tmp_path: Path) -> None:
    """Review 13: the bootstrap's p-value was the share of resamples beyond zero, so 12 gains on 4
    documents (or one flip in a one-document run) were p = 0. Documents are what it resamples: its
    p-value is the sign-flip test over them, 2 of 16 sign patterns here; one document says nothing."""
    a, b = outcomes("i" * 12 + "c" * 18), outcomes("c" * 30)
    ra = load_run(write_run(tmp_path / "A", a))
    rb = load_run(write_run(tmp_path / "B", b, info=run_info("B")))
    overall = compare_runs(ra, rb, method="bootstrap").overall
    assert overall.test.p_value == pytest.approx(2 / 16) and not overall.significant
    a, b = outcomes("c" * 30, docs=1), outcomes("i" + "c" * 29, docs=1)
    ra = load_run(write_run(tmp_path / "C", a))
    rb = load_run(write_run(tmp_path / "D", b, info=run_info("D")))
    overall = compare_runs(ra, rb, method="bootstrap").overall
    assert overall.test.p_value == 1.0 and overall.test.ci_low is None and not overall.significant


def test_different_judges_and_datasets_are_warned_about(tmp_path: Path) -> None:
    info_b = run_info("B", judge="llm", judge_model="openai/gpt-4o", judge_prompt_version="judge_v2")
    info_b.dataset.sha256 = "fff999"
    a, b = _pair(tmp_path, "cc", "cc", info_b=info_b)
    warnings = compare_runs(a, b).warnings
    text = "\n".join(warnings)
    assert "dataset hash differs: A=abc123 vs B=fff999" in text
    assert "judge differs: A=rules vs B=llm" in text
    assert "judge prompt version differs" in text


def test_a_different_dataset_is_one_warning(tmp_path: Path) -> None:
    """Trial 13: one dataset difference was listed three times ("dataset content hash differs", "dataset
    hash differs", "dataset differs"). The content hash's line names the datasets; the others go."""
    info_b = run_info("B")
    info_b.dataset.sha256, info_b.dataset.content_sha256, info_b.dataset.name = "fff999", "beef00", "other"
    a, b = _pair(tmp_path, "cc", "cc", info_b=info_b)
    warnings = [w for w in run_differences(a, b, allowed=True) if "dataset" in w]
    assert warnings == [
        "dataset content hash differs: A=c0ffee vs B=beef00 (datasets handmade vs other) "
        "(allowed by --allow-changed)"
    ]


def test_no_shared_samples(tmp_path: Path) -> None:
    a = load_run(write_run(tmp_path / "A", outcomes("cc")))
    b = load_run(write_run(tmp_path / "B", outcomes("cc", prefix="z"), info=run_info("B")))
    with pytest.raises(NoSharedSamples, match="share no samples"):
        compare_runs(a, b)


def test_compare_command_tables_json_and_warning(tmp_path: Path) -> None:
    info_b = run_info("B", judge="llm")
    a = write_run(tmp_path / "A", outcomes("i" * 10 + "c" * 20))
    b = write_run(tmp_path / "B", outcomes("c" * 30), info=info_b)
    runner = CliRunner()
    res = runner.invoke(app, ["bench", "compare", str(a), str(b)], terminal_width=200)
    assert res.exit_code == 2  # scored by another judge: refused
    assert res.output.strip() == (
        "error: not comparable: judge A=rules vs B=llm "
        "(re-score one with `pageindex bench rejudge`, or pass --allow-changed)"
    )
    res = runner.invoke(app, ["bench", "compare", str(a), str(b), "--allow-changed"], terminal_width=200)
    assert res.exit_code == 0, res.output
    assert "WARNING" in res.output and "judge differs: A=rules vs B=llm" in res.output
    assert "+33.3 pp" in res.output and "0.00195" in res.output
    assert "q009" in res.output
    res = runner.invoke(app, ["bench", "compare", str(a), str(b), "--json", "--allow-changed"])
    assert res.exit_code == 0
    data = json.loads(res.stdout)
    assert data["overall"]["significant"] is True and len(data["overall"]["improved"]) == 10
    res = runner.invoke(app, ["bench", "compare", str(a), str(tmp_path / "missing")])
    assert res.exit_code == 2 and "does not exist" in res.output


def test_a_run_whose_shared_answers_have_no_verdict_is_warned_about(tmp_path: Path) -> None:
    """Answers with no verdict (the judge call failed) count as wrong: compare says so and how to
    re-score, for the run that has them only (the gate fails on the same condition)."""
    unjudged = [
        sample(f"q{k:03d}", verdict=None, status="answer", judge="judge_error", judge_error="http_500: judge")
        for k in range(3)
    ]
    a = write_run(tmp_path / "A", unjudged + outcomes("c", prefix="x"))
    b = write_run(tmp_path / "B", outcomes("ccc") + outcomes("c", prefix="x"), info=run_info("B"))
    cmp = compare_runs(load_run(a), load_run(b))
    expected = (
        "run A: 3 of 4 shared answers have no verdict and count as wrong; "
        f"re-score with `pageindex bench rejudge {a}"
    )
    assert [w for w in cmp.warnings if "verdict" in w] == [w for w in cmp.warnings if w.startswith(expected)]
    assert len([w for w in cmp.warnings if "no verdict" in w]) == 1
    res = CliRunner().invoke(app, ["bench", "compare", str(a), str(b)], terminal_width=300)
    assert res.exit_code == 0 and "3 of 4 shared answers have no verdict" in res.output
    judged = compare_runs(load_run(b), load_run(b))
    assert not [w for w in judged.warnings if "no verdict" in w]


def test_json_keeps_the_whole_question_and_the_table_shortens_it(tmp_path: Path) -> None:
    """Trial 13: `compare --json` cut each flipped question at 80 characters, as the terminal does."""
    long = "What was the FY2019 capital expenditure of the company, in millions of US dollars, " * 2
    a = write_run(tmp_path / "A", outcomes("i", question=long))
    b = write_run(tmp_path / "B", outcomes("c", question=long), info=run_info("B"))
    res = CliRunner().invoke(app, ["bench", "compare", str(a), str(b), "--json"])
    assert json.loads(res.stdout)["overall"]["improved"][0]["question"] == long
    res = CliRunner().invoke(app, ["bench", "compare", str(a), str(b)], terminal_width=250)
    assert long.strip() not in res.output and long[:60] in res.output and "…" in res.output


def test_compare_with_the_bootstrap_shows_its_interval_as_the_report_does(tmp_path: Path) -> None:
    """Review 20: `bench compare --test bootstrap` showed the test's p but not its interval of the
    difference, which the report shows and the README promises; McNemar's table has no such column."""
    a = write_run(tmp_path / "A", outcomes("i" * 10 + "c" * 20, docs=7))
    b = write_run(tmp_path / "B", outcomes("c" * 30, docs=7), info=run_info("B"))
    cmp = compare_runs(load_run(a), load_run(b), method="bootstrap")
    low, high = cmp.overall.test.ci_low, cmp.overall.test.ci_high
    assert low is not None and high is not None and 0 < low < high
    interval = f"[+{100 * low:.1f} pp, +{100 * high:.1f} pp]"
    runner = CliRunner()
    res = runner.invoke(app, ["bench", "compare", str(a), str(b), "--test", "bootstrap"], terminal_width=250)
    assert res.exit_code == 0, res.output
    head = next(line for line in res.output.splitlines() if "retriever" in line and "pairs" in line)
    assert "│ diff │ 95% CI │ p │" in " ".join(head.replace("┃", "│").split())
    assert sum(interval in line for line in res.output.splitlines()) == 2  # agent, ALL
    from bench.report.markdown import render_markdown

    assert interval in render_markdown([load_run(a), load_run(b)])  # the report's figure
    mcnemar = runner.invoke(app, ["bench", "compare", str(a), str(b)], terminal_width=250)
    assert "95% CI" not in mcnemar.output and interval not in mcnemar.output


def test_flips_grouped_by_anything_but_the_retriever_name_their_retriever(tmp_path: Path) -> None:
    """Review 20: `--by question_type` (or model, doc_type, overall) lists a question's flips of every
    retriever in one group, and the lines did not say which retriever flipped: two looked the same."""
    a = write_run(tmp_path / "A", outcomes("cc") + outcomes("cc", "planner"))
    b = write_run(tmp_path / "B", outcomes("ec") + outcomes("ic", "planner"), info=run_info("B"))
    res = CliRunner().invoke(app, ["bench", "compare", str(a), str(b), "--by", "overall"], terminal_width=200)
    assert res.exit_code == 0, res.output
    lines = [line.split("  What")[0].strip() for line in res.output.splitlines() if line.startswith("  q000")]
    assert lines == ["q000 agent  [correct -> error]", "q000 planner  [correct -> incorrect]"]
    by_retriever = CliRunner().invoke(app, ["bench", "compare", str(a), str(b)], terminal_width=200)
    assert "  q000  [correct -> error]" in by_retriever.output  # its group already says which


def test_a_difference_that_rounds_to_nothing_has_no_minus_sign() -> None:
    """`d latency s` said -0.00 for a difference of -0.0001 s (review of reports, session 16)."""
    from bench.compare import signed

    assert [signed(-0.0001, 2), signed(-0.00001, pct=True), signed(0.0)] == ["+0.00", "+0.0 pp", "+0.0"]
    assert [signed(-0.5), signed(-1234.5), signed(0.04, pct=True), signed(None)] == [
        "-0.5", "-1,234.5", "+4.0 pp", "-",
    ]  # fmt: skip


def test_a_warning_wider_than_the_terminal_is_wrapped_in_its_box_not_cut(tmp_path: Path) -> None:
    """Review (rev-gate): the CLI's console does not wrap long lines (logs, pipes), which cropped the
    WARNING box's lines at the terminal's width: at 80 columns the `bench rejudge` remedy was cut off."""
    rows = outcomes("c" * 10)
    rows[0] = rows[0].model_copy(update={"verdict": None, "judge_error": "timeout: 30 s"})
    a = write_run(tmp_path / "A", outcomes("c" * 10))
    b = write_run(tmp_path / "B", rows, info=run_info("B"))
    import io

    from rich.console import Console

    from bench.compare import print_comparison

    out = io.StringIO()  # as the CLI's console: long lines are not wrapped (soft_wrap)
    print_comparison(compare_runs(load_run(a), load_run(b)), Console(file=out, width=80, soft_wrap=True))
    lines = out.getvalue().splitlines()
    box = lines[: next(i for i, line in enumerate(lines) if line.startswith("A = "))]
    assert len(box) > 3 and max(len(line) for line in box) <= 80
    flat = "".join("".join(box).replace("│", "").split())
    remedy = f"re-score with `pageindex bench rejudge {b} --judge rules -o {b}-rejudged`"
    assert "".join(remedy.split()) in flat


def test_a_test_that_could_not_call_any_difference_significant_is_noted(tmp_path: Path) -> None:
    """Review (rev-gate): over 3 documents the bootstrap's smallest p is 0.25, so every difference, all
    answers lost included, read `significant: no`; compare now notes where that says nothing."""
    a = write_run(tmp_path / "A", outcomes("c" * 18, docs=3))
    b = write_run(tmp_path / "B", outcomes("i" * 18, docs=3), info=run_info("B"))
    cmp = compare_runs(load_run(a), load_run(b), method="bootstrap")
    assert not cmp.overall.significant
    assert cmp.notes == [
        "the bootstrap test cannot call any difference significant at alpha 0.05 in: agent (3 documents, "
        "smallest p 0.25), ALL (3 documents, smallest p 0.25); there 'significant: no' is no evidence of no "
        "change (--test mcnemar counts questions, not documents)"
    ]
    assert cmp.warnings == []  # the runs are like for like: no WARNING box
    mcnemar = compare_runs(load_run(a), load_run(b))
    assert mcnemar.overall.significant and mcnemar.notes == []
    args = ["bench", "compare", str(a), str(b), "--test", "bootstrap"]
    res = CliRunner().invoke(app, args, terminal_width=250)
    assert res.exit_code == 0 and "note: the bootstrap test cannot call any difference" in res.output
    assert "WARNING" not in res.output
    res = CliRunner().invoke(app, [*args, "--json"])
    assert json.loads(res.stdout)["notes"] == cmp.notes


def test_a_run_compared_with_itself_is_refused_as_the_gate_refuses_it(tmp_path: Path) -> None:
    """It printed a table of zero differences, exit 0, where the two folders were meant to differ."""
    run = write_run(tmp_path / "r", outcomes("ccic"))
    (tmp_path / "link").symlink_to(run)
    for other in (run, tmp_path / "link"):
        res = CliRunner().invoke(app, ["bench", "compare", str(run), str(other)])
        assert res.exit_code == 2, res.output
        assert res.output.startswith(f"error: {run} and {other} are the same run folder"), res.output


def test_refusals_and_errors_in_run_a_are_not_correct(tmp_path: Path) -> None:
    """Mutation test: scoring A's samples as correct unless ``incorrect`` (refusals and errors right)
    passed every test, whose runs A held only correct and incorrect samples."""
    a, b = _pair(tmp_path, "rre" + "c" * 7, "c" * 10)
    g = compare_runs(a, b).overall
    assert g.accuracy_a.value == pytest.approx(0.7) and g.diff == pytest.approx(0.3)
    assert [(f.question_id, f.verdict_a) for f in g.improved] == [
        ("q000", "refusal"), ("q001", "refusal"), ("q002", "error")
    ]  # fmt: skip


def test_the_overall_test_counts_each_retrievers_question_apart(tmp_path: Path) -> None:
    """Mutation test: with the McNemar unit the question alone (not question and retriever), two
    retrievers that each lost q000..q002 were 3 lost questions (p = 0.25), not 6 (p = 2 / 2**6)."""
    rows_a = outcomes("c" * 10, "agent") + outcomes("c" * 10, "planner")
    rows_b = outcomes("iii" + "c" * 7, "agent") + outcomes("iii" + "c" * 7, "planner")
    a = load_run(write_run(tmp_path / "A", rows_a, info=run_info("A", retrievers=["agent", "planner"])))
    b = load_run(write_run(tmp_path / "B", rows_b, info=run_info("B", retrievers=["agent", "planner"])))
    t = compare_runs(a, b).overall.test
    assert (t.a_only, t.b_only, t.units) == (6, 0, 20)
    assert t.p_value == pytest.approx(2 / 2**6)


def test_samples_only_in_one_run_and_unknown_costs(tmp_path: Path) -> None:
    """Mutation test: ``only_a`` counted B's extra samples, and a mean cost over the known costs
    only; neither was checked."""
    a = load_run(write_run(tmp_path / "A", outcomes("c" * 5)))
    rows_b = outcomes("c" * 3)
    rows_b[1] = rows_b[1].model_copy(update={"cost_usd": None})
    b = load_run(write_run(tmp_path / "B", rows_b, info=run_info("B")))
    cmp = compare_runs(a, b)
    assert (cmp.shared, cmp.only_a, cmp.only_b) == (3, 2, 0)
    cost = cmp.overall.delta("cost_per_question")
    assert (cost.a, cost.b, cost.delta) == (pytest.approx(0.001), None, None)
    back = compare_runs(b, a)
    assert (back.only_a, back.only_b) == (0, 2)


def test_a_judge_model_of_another_provider_is_a_difference(tmp_path: Path) -> None:
    """Mutation test: dropping the "one side is a replay" condition made any two providers of one
    model name the same judge model; only ``replay/M`` matches a recorded ``provider/M``."""
    from bench.compare import NotComparable, check_comparable

    a = load_run(write_run(tmp_path / "A", outcomes("c"), info=run_info("A", judge_model="openai/gpt-4o")))
    for other, same in (("replay/gpt-4o", True), ("azure/gpt-4o", False)):
        b = load_run(write_run(tmp_path / other, outcomes("c"), info=run_info("B", judge_model=other)))
        if same:
            check_comparable(a, b)
        else:
            with pytest.raises(NotComparable, match="judge model A=openai/gpt-4o vs B=azure/gpt-4o"):
                check_comparable(a, b)


def test_runs_of_other_questions_are_not_told_to_pair_their_retrievers(tmp_path: Path) -> None:
    """Two runs of different datasets (the demo's extractive, FinanceBench's bm25) share no question:
    ``--retrievers extractive,bm25`` pairs nothing either, yet the refusal (and ``bench report``'s A-vs-B
    section) told to give it (fresh-user trial of session 25). It now says they share no question."""
    a = write_run(tmp_path / "A", outcomes("ci", "extractive", prefix="demo_"), info=run_info("A"))
    b = write_run(tmp_path / "B", outcomes("ci", "bm25", prefix="fb_"), info=run_info("B"))
    with pytest.raises(NoSharedSamples) as info:
        compare_runs(load_run(a), load_run(b))
    assert str(info.value) == (
        f"runs A ({a}) and B ({b}) share no samples (same question_id, retriever and repeat); "
        "they share no question either (A's ids like demo_000, B's like fb_000): runs of the same questions "
        "compare"
    )
    assert "--retrievers" not in str(info.value)


def test_one_retriever_against_another_with_retrievers_old_new(tmp_path: Path) -> None:
    """A researcher's new retriever against bm25: compare pairs a retriever with itself, so a run of
    bm25 and a run of `mine` "share no samples" (exit 2, no way named), and one run of both compared
    with itself was refused. ``--retrievers bm25,mine`` pairs A's bm25 with B's mine by question, in
    two runs or in one; the refusal of two runs holding different retrievers names it."""
    rows = outcomes("i" * 8 + "c" * 4, "bm25") + outcomes("c" * 10 + "ii", "mine")
    both = write_run(tmp_path / "both", rows, info=run_info("both", retrievers=["bm25", "mine"]))
    a = write_run(tmp_path / "A", rows[:12], info=run_info("A", retrievers=["bm25"]))
    b = write_run(tmp_path / "B", rows[12:], info=run_info("B", retrievers=["mine"]))
    with pytest.raises(NoSharedSamples) as info:
        compare_runs(load_run(a), load_run(b))
    assert str(info.value) == (
        f"runs A ({a}) and B ({b}) share no samples (same question_id, retriever and repeat); A holds "
        "retriever(s) bm25, B mine: to compare one retriever with another, give bench compare "
        "--retrievers bm25,mine"
    )
    cases = [(both, both, ("both (bm25)", "both (mine)")), (a, b, ("A (bm25)", "B (mine)"))]
    for run_a, run_b, names in cases:
        cmp = compare_runs(load_run(run_a), load_run(run_b), retrievers=("bm25", "mine"))
        assert (cmp.run_a, cmp.run_b) == names
        assert cmp.shared == 12 and cmp.only_a == 0 and cmp.only_b == 0
        assert cmp.settings[0] == "retriever: A=bm25 vs B=mine"
        [g] = cmp.groups
        assert g.group == "bm25 -> mine" and g.n_pairs == 12
        assert g.accuracy_a.value == pytest.approx(4 / 12) and g.accuracy_b.value == pytest.approx(10 / 12)
        assert [f.question_id for f in g.improved] == [f"q{k:03d}" for k in range(8)]
        assert [f.question_id for f in g.regressed] == ["q010", "q011"]
        assert g.test.p_value == pytest.approx(2 * (1 + 10 + 45) / 2**10)  # exact McNemar, 8 vs 2
    with pytest.raises(NoSharedSamples, match=r"has no samples of retriever 'agent'; it holds bm25, mine"):
        compare_runs(load_run(both), load_run(both), retrievers=("agent", "mine"))
    # the same name twice (bm25,bm25): a run without it is named with what it holds, as for two names (it
    # said "share no samples for retriever 'bm25'", naming neither run's retrievers)
    with pytest.raises(NoSharedSamples) as info:
        compare_runs(load_run(a), load_run(b), retrievers=("bm25", "bm25"))
    assert str(info.value) == f"run B ({b}) has no samples of retriever 'bm25'; it holds mine"

    runner = CliRunner()
    res = runner.invoke(app, ["bench", "compare", str(both), str(both), "--retrievers", "bm25,mine"])
    assert res.exit_code == 0, res.output
    assert "A = both (bm25)  B = both (mine)  12 shared samples" in res.output
    assert "bm25 -> mine: correct only in B (improved): 8" in res.output
    res = runner.invoke(app, ["bench", "compare", str(both), str(both), "--retrievers", "bm25"])
    assert res.exit_code == 2
    said = "error: --retrievers 'bm25': give two retriever names, OLD,NEW (e.g. bm25,mine)"
    assert res.output.strip() == said
    res = runner.invoke(app, ["bench", "compare", str(both), str(both)])
    assert res.exit_code == 2 and "(or --retrievers OLD,NEW to compare two of its retrievers)" in res.output


def test_a_test_by_question_pointing_away_from_the_difference_is_noted(tmp_path: Path) -> None:
    """Review rev-gate2: with repeats, 10 questions lost in every repeat and 25 gained in one of 3 is a
    drop of 1.7 pp over the samples, and McNemar by question (10 lost / 25 gained, p = 0.0167) made it
    'significant: yes'. The test found the other direction: not significant, with a note saying why."""
    rows_a, rows_b = [], []
    for r in range(3):
        pa = "c" * 10 + "i" * 90
        pb = "i" * 10 + ("c" if r == 0 else "i") * 25 + "i" * 65
        rows_a += [s.model_copy(update={"repeat": r}) for s in outcomes(pa)]
        rows_b += [s.model_copy(update={"repeat": r}) for s in outcomes(pb)]
    a = write_run(tmp_path / "A", rows_a, info=run_info("A", repeats=3))
    b = write_run(tmp_path / "B", rows_b, info=run_info("B", repeats=3))
    cmp = compare_runs(load_run(a), load_run(b))
    assert round(cmp.overall.diff * 300) == -5 and cmp.overall.test.p_value == pytest.approx(0.0167, abs=1e-4)
    assert not cmp.overall.significant
    assert cmp.notes == [
        "the mcnemar test by question points the other way from the difference over samples in: agent "
        "(-1.7 pp; 10 lost / 25 gained by question, p 0.0167), ALL (-1.7 pp; 10 lost / 25 gained by "
        "question, p 0.0167); there 'significant' is 'no': the test is no evidence of that difference"
    ]
