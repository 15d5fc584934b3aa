"""The gate: rules, exit codes, messages and JUnit XML over hand-made runs."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bench.gate import GateInputError, GateResult, GateRules, RuleResult, evaluate_gate, write_junit
from bench.rundir import load_run
from pageindex.cli import app
from tests.bench.runfactory import outcomes, run_info, sample, write_run

runner = CliRunner()


def _gate(*args: str):
    return runner.invoke(app, ["bench", "gate", *map(str, args)], terminal_width=250)


def _rule(result: GateResult, name: str) -> RuleResult:
    return next(r for r in result.rules if r.name == name)


def test_rules_pass_and_fail_with_measured_values(tmp_path: Path) -> None:
    # agent: 7 of 10 correct, 1 refusal; planner: 4 of 10 correct
    rows = outcomes("ccccccciir", "agent") + outcomes("cccciiiiee", "planner")
    run = load_run(write_run(tmp_path / "run", rows))
    result = evaluate_gate(run, GateRules(min_accuracy=0.6, max_tokens_per_question=1200, min_answered=0.85))
    by_name = {r.name: r for r in result.rules}
    assert by_name["min-accuracy[agent]"].passed and by_name["min-accuracy[agent]"].measured == 0.7
    assert not by_name["min-accuracy[planner]"].passed
    assert by_name["min-accuracy[planner]"].message == "min-accuracy [planner]: 40.0% (required >= 60.0%)"
    assert by_name["max-tokens-per-question[agent]"].message.endswith("1,100 (required <= 1,200)")
    assert by_name["min-answered[agent]"].passed  # 9/10 answered
    assert not by_name["min-answered[planner]"].passed  # 8/10 answered
    assert result.exit_code == 1
    assert by_name["errors[planner]"].passed  # 2 of 10 errors
    assert by_name["errors[planner]"].message == (
        "errors [planner]: 2 of 10 samples ended in an error, 0 of them replay misses (required: not all)"
    )
    only_agent = evaluate_gate(run, GateRules(min_accuracy=0.6, retriever="agent"))
    assert only_agent.exit_code == 0
    assert [r.name for r in only_agent.rules] == [
        "complete[run]", "errors[agent]", "judged[agent]", "min-accuracy[agent]"
    ]


def test_drop_fails_only_when_larger_than_allowed_and_significant(tmp_path: Path) -> None:
    base = load_run(write_run(tmp_path / "base", outcomes("c" * 30)))
    # 12 questions lost: 40 points, p = 2 * 0.5**12 -> regression
    bad = load_run(write_run(tmp_path / "bad", outcomes("i" * 12 + "c" * 18), info=run_info("bad")))
    res = evaluate_gate(bad, GateRules(max_drop=0.05), base)
    rule = _rule(res, "max-drop[agent]")
    assert not rule.passed and rule.measured == pytest.approx(0.4)
    assert "12 lost / 0 gained" in rule.message and "regression" in rule.message
    # 2 questions lost: 6.7 points > 5 allowed, but p = 0.5: noise, the build passes
    flaky = load_run(write_run(tmp_path / "flaky", outcomes("ii" + "c" * 28), info=run_info("flaky")))
    rule = _rule(evaluate_gate(flaky, GateRules(max_drop=0.05), base), "max-drop[agent]")
    assert rule.passed and rule.measured == pytest.approx(2 / 30)
    assert "treated as noise" in rule.message and "p=0.5" in rule.message
    # same significant drop but allowed up to 50 points
    rule = _rule(evaluate_gate(bad, GateRules(max_drop=0.5), base), "max-drop[agent]")
    assert rule.passed and "within the allowed drop" in rule.message


def test_a_gain_is_said_as_a_gain(tmp_path: Path) -> None:
    """It printed 'drop -40.0 pp', read as a drop at a glance."""
    base = load_run(write_run(tmp_path / "base", outcomes("i" * 12 + "c" * 18)))
    better = load_run(write_run(tmp_path / "better", outcomes("c" * 30), info=run_info("better")))
    rule = _rule(evaluate_gate(better, GateRules(max_drop=0.0), base), "max-drop[agent]")
    assert rule.passed and rule.measured == pytest.approx(-0.4)
    assert rule.message.startswith("max-drop [agent]: gain +40.0 pp vs baseline base (60.0% -> 100.0%")
    same = load_run(write_run(tmp_path / "same", outcomes("i" * 12 + "c" * 18), info=run_info("same")))
    rule = _rule(evaluate_gate(same, GateRules(max_drop=0.0), base), "max-drop[agent]")
    assert "drop +0.0 pp" in rule.message


def test_unusable_input(tmp_path: Path) -> None:
    run = load_run(write_run(tmp_path / "run", outcomes("cc")))
    other = load_run(write_run(tmp_path / "other", outcomes("cc", prefix="z"), info=run_info("other")))
    with pytest.raises(GateInputError, match="share no samples"):
        evaluate_gate(run, GateRules(max_drop=0.05), other)
    with pytest.raises(GateInputError, match="no samples of retriever 'agentx'"):
        evaluate_gate(run, GateRules(min_accuracy=0.5, retriever="agentx"))
    with pytest.raises(GateInputError, match="no rules"):
        evaluate_gate(run, GateRules())
    with pytest.raises(GateInputError, match="--max-drop needs --baseline"):
        evaluate_gate(run, GateRules(max_drop=0.1))


def test_gate_command_exit_codes_and_junit(tmp_path: Path) -> None:
    base = write_run(tmp_path / "base", outcomes("c" * 30))
    good = write_run(tmp_path / "good", outcomes("c" * 29 + "i"), info=run_info("good"))
    bad = write_run(tmp_path / "bad", outcomes("i" * 12 + "c" * 18), info=run_info("bad"))

    res = _gate(good, "--min-accuracy", "0.9", "--baseline", base, "--max-drop", "0.05")
    assert res.exit_code == 0, res.output
    assert "PASS  min-accuracy [agent]: 96.7% (required >= 90.0%)" in res.output
    assert "PASS  coverage [agent]: 30 of 30 samples of baseline base\n" in res.output
    assert "PASS  complete [baseline]: base is finished with 30 samples\n" in res.output
    assert "gate passed: 10/10 rules hold" in res.output

    junit = tmp_path / "out" / "gate.xml"
    res = _gate(bad, "--min-accuracy", "0.9", "--baseline", base, "--max-drop", "0.05", "--junit", junit)
    assert res.exit_code == 1, res.output
    assert "FAIL  min-accuracy [agent]: 60.0% (required >= 90.0%)" in res.output
    assert "FAIL  max-drop [agent]: drop +40.0 pp" in res.output
    root = ET.parse(junit).getroot()
    suite = root.find("testsuite")
    assert suite.get("tests") == "10" and suite.get("failures") == "2"
    names = [c.get("name") for c in suite.iter("testcase")]
    assert names == [
        "complete[run]",
        "complete[baseline]",
        "coverage[agent]",
        "errors[agent]",
        "judged[agent]",
        "min-accuracy[agent]",
        "errors[agent baseline]",
        "judged[agent baseline]",
        "max-drop[agent]",
        "min-answered[agent]",
    ]
    failed = [c.get("name") for c in suite.iter("testcase") if c.find("failure") is not None]
    assert failed == ["min-accuracy[agent]", "max-drop[agent]"]
    assert "gate FAILED: 8/10 rules hold; failed: min-accuracy[agent], max-drop[agent]" in res.output

    res = _gate(tmp_path / "missing", "--min-accuracy", "0.5", "--junit", junit)
    assert res.exit_code == 2 and "does not exist" in res.output
    case = ET.parse(junit).getroot().find("testsuite/testcase")
    assert case.find("error") is not None and "does not exist" in case.find("error").get("message")

    other = write_run(tmp_path / "other", outcomes("cc", prefix="z"), info=run_info("other"))
    res = _gate(other, "--baseline", base)
    assert res.exit_code == 2 and "share no samples" in res.output


def test_junit_for_passing_gate_parses(tmp_path: Path) -> None:
    run = load_run(write_run(tmp_path / "run", outcomes("ccc")))
    result = evaluate_gate(run, GateRules(min_accuracy=0.5, min_answered=0.5))
    path = write_junit(tmp_path / "j.xml", result)
    suite = ET.parse(path).getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("5", "0", "0")


# ----------------------------------------------------------------------------- coverage
def _lines(res) -> list[str]:
    return [line for line in res.output.splitlines() if line.strip()]


def test_partial_candidate_fails_and_allow_partial_judges_shared_keys(tmp_path: Path) -> None:
    base = write_run(tmp_path / "base", outcomes("c" * 10))
    # a budget-aborted run: 2 of the baseline's 10 samples, both correct, plus 2 questions the
    # baseline does not have, both wrong
    rows = outcomes("cc") + outcomes("ii", prefix="z")
    cand = write_run(tmp_path / "cand", rows, info=run_info("cand", status="aborted_due_to_budget"))

    res = _gate(cand, "--baseline", base, "--max-drop", "0.05", "--min-accuracy", "0.9")
    assert res.exit_code == 1, res.output
    assert (
        "FAIL  coverage [agent]: 2 of 10 samples of baseline base (missing 8: q002, q003, q004, q005, "
        "q006 and 3 more); required: all (--allow-partial judges the shared samples only)"
    ) in res.output
    assert "FAIL  min-accuracy [agent]: 50.0% (required >= 90.0%)" in res.output  # the whole run
    assert "WARNING: run cand is aborted_due_to_budget, not finished" in res.output
    assert res.output.rstrip().endswith(
        "gate FAILED: 7/10 rules hold; failed: complete[run], coverage[agent], min-accuracy[agent]"
    )

    res = _gate(cand, "--baseline", base, "--max-drop", "0.05", "--min-accuracy", "0.9", "--allow-partial")
    assert res.exit_code == 0, res.output
    assert "PASS  coverage [agent]: 2 of 10 samples of baseline base (missing 8:" in res.output
    assert "--allow-partial: the checks below use the 2 shared samples" in res.output
    assert "PASS  min-accuracy [agent]: 100.0% (required >= 90.0%)" in res.output  # z000, z001 left out
    assert "on 2 shared samples, 0 lost / 0 gained" in res.output
    assert "2 of 2 answered, 0 errors (0 replay misses), 0 fails" in res.output
    assert "gate passed: 10/10 rules hold" in res.output


def test_candidate_missing_a_retriever_fails_coverage_and_an_empty_one_is_bad_input(tmp_path: Path) -> None:
    base = load_run(write_run(tmp_path / "base", outcomes("cccc") + outcomes("cccc", "planner")))
    only_agent = load_run(write_run(tmp_path / "a", outcomes("cccc"), info=run_info("a")))
    res = evaluate_gate(only_agent, GateRules(allow_partial=True), base)
    cov = _rule(res, "coverage[planner]")
    assert not cov.passed and cov.measured == 0.0
    assert cov.message.endswith(
        "(missing 4: q000, q001, q002, q003); "
        "a has no samples of it (--retriever NAME gates one retriever only)"
    )
    assert [r.name for r in res.failed] == ["coverage[planner]"] and res.exit_code == 1

    empty = load_run(
        write_run(tmp_path / "empty", [], info=run_info("empty", status="aborted_due_to_budget"))
    )
    # a run with no samples is bad input, with a baseline as without one (trial 13: it was exit 1 with a
    # baseline, 2 without, while the README's table says 2)
    with pytest.raises(GateInputError, match=r"run empty \(.*\) has no samples; it is aborted_due_to_budget"):
        evaluate_gate(empty, GateRules(max_drop=0.05), base)
    res = _gate(empty.path, "--baseline", base.path, "--max-drop", "0.05")
    assert res.exit_code == 2 and "has no samples" in res.output, res.output


def test_an_unfinished_baseline_fails_unless_allow_partial(tmp_path: Path) -> None:
    """A drop measured on the few samples a budget-stopped baseline holds is no regression check: the
    gate used to pass with only a warning (review 6: max-drop decided on 1 shared sample)."""
    base = write_run(tmp_path / "base", outcomes("c"), info=run_info("base", status="aborted_due_to_budget"))
    cand = write_run(tmp_path / "cand", outcomes("c" * 10), info=run_info("cand"))
    res = _gate(cand, "--baseline", base, "--max-drop", "0.05")
    assert res.exit_code == 1, res.output
    assert (
        "FAIL  complete [baseline]: base is aborted_due_to_budget with 1 sample; required: finished "
        "(--allow-partial judges the samples it has)"
    ) in res.output
    assert res.output.rstrip().endswith("failed: complete[baseline]")
    res = _gate(cand, "--baseline", base, "--max-drop", "0.05", "--allow-partial")
    assert res.exit_code == 0, res.output
    assert "PASS  complete [baseline]: base is aborted_due_to_budget with 1 sample; --allow" in res.output


# ----------------------------------------------------------------------------- errors and replay misses
def _missed(pattern: str, **fields) -> list:
    """Samples from ``pattern`` where ``m`` is a replay miss (an error sample)."""
    rows = outcomes(pattern.replace("m", "e"), **fields)
    miss = (
        "ReplayMiss: replay miss for model scripted (replay/scripted): request key ab12 is not in the cache"
    )
    return [
        s.model_copy(update={"error": miss}) if ch == "m" else s for s, ch in zip(rows, pattern, strict=True)
    ]


def test_all_replay_misses_fail_with_max_drop_alone(tmp_path: Path) -> None:
    base = write_run(tmp_path / "base", outcomes("cc" + "i" * 8))
    cand = write_run(tmp_path / "cand", _missed("m" * 10), info=run_info("cand"))
    res = _gate(cand, "--baseline", base, "--max-drop", "0.1")
    assert res.exit_code == 1, res.output
    # 2 lost pairs of 10 questions are not significant (p = 0.5): the drop alone would pass ...
    assert "PASS  max-drop [agent]: drop +20.0 pp" in res.output and "p=0.5)" in res.output
    # ... the error and answered checks do not
    assert (
        "FAIL  errors [agent]: 10 of 10 samples ended in an error, 10 of them replay misses "
        "(required: not all)"
    ) in res.output
    assert (
        "FAIL  min-answered [agent]: 0.0% (required >= 90.0%, default 0.9 x the baseline's 100.0%): "
        "0 of 10 answered, 10 errors (10 replay misses), 0 fails"
    ) in res.output
    assert "failed: errors[agent], min-answered[agent]" in res.output
    # an explicit --min-answered 0 does not make an all-miss run pass
    res = _gate(cand, "--baseline", base, "--max-drop", "0.1", "--min-answered", "0")
    assert res.exit_code == 1 and "failed: errors[agent]" in res.output


def test_errors_and_replay_misses_count_against_default_min_answered(tmp_path: Path) -> None:
    # baseline: 8 of 10 answered (2 refusals) -> default threshold 0.9 x 80% = 72%
    base = load_run(write_run(tmp_path / "base", outcomes("ccccccccrr")))
    # candidate: 2 replay misses and 1 other error -> 7 of 10 answered
    cand = load_run(write_run(tmp_path / "cand", _missed("cccccmmerr"), info=run_info("cand")))
    rule = _rule(evaluate_gate(cand, GateRules(), base), "min-answered[agent]")
    assert not rule.passed
    assert rule.measured == pytest.approx(0.5) and rule.threshold == pytest.approx(0.72)
    assert rule.message.endswith("5 of 10 answered, 3 errors (2 replay misses), 2 fails")
    good = load_run(write_run(tmp_path / "good", _missed("ccccccccmr"), info=run_info("good")))
    rule = _rule(evaluate_gate(good, GateRules(), base), "min-answered[agent]")
    assert rule.passed and rule.measured == pytest.approx(0.8)
    # an explicit value replaces the default
    rule = _rule(evaluate_gate(good, GateRules(min_answered=0.85), base), "min-answered[agent]")
    assert not rule.passed and rule.threshold == 0.85 and "default" not in rule.message


# ----------------------------------------------------------------------------- comparability
def test_runs_scored_differently_are_not_comparable(tmp_path: Path) -> None:
    cand = write_run(tmp_path / "cand", outcomes("cccc"), info=run_info("cand"))
    old_judge = write_run(
        tmp_path / "oldjudge", outcomes("cccc"), info=run_info("oldjudge", judge_version="rules-0")
    )
    res = _gate(cand, "--baseline", old_judge, "--max-drop", "0.05")
    assert res.exit_code == 2, res.output
    assert _lines(res) == [
        "error: not comparable: judge version oldjudge=rules-0 vs cand=rules-handmade "
        "(re-score one with `pageindex bench rejudge`, or pass --allow-changed)"
    ]
    # a copy of a run keeps its id: the two are told apart by their folders (trial 2)
    copy = write_run(tmp_path / "copy", outcomes("cccc"), info=run_info("cand", judge_version="rules-0"))
    res = _gate(cand, "--baseline", copy, "--max-drop", "0.05")
    said = f"error: not comparable: judge version {copy}=rules-0 vs {cand}=rules-handmade"
    assert _lines(res)[0].startswith(said)
    res = _gate(cand, "--baseline", old_judge, "--max-drop", "0.05", "--allow-changed")
    assert res.exit_code == 0, res.output
    assert (
        "WARNING: judge version differs: oldjudge=rules-0 vs cand=rules-handmade (allowed by --allow-changed)"
        in res.output
    )

    other = run_info("other", builder_version="2.0+x", judge_model="openai/gpt-4o")
    other.dataset.content_sha256 = "beef"
    other_dir = write_run(tmp_path / "other", outcomes("cccc"), info=other)
    res = _gate(cand, "--baseline", other_dir)
    assert res.exit_code == 2
    (line,) = _lines(res)
    assert line == (
        "error: not comparable: judge model other=openai/gpt-4o vs cand=-; "
        "tree builder version other=2.0+x vs cand=1.0+handmade; "
        "dataset content hash other=beef vs cand=c0ffee (re-score one with `pageindex bench rejudge`, "
        "run both with the same tree builder (pageindex and pymupdf releases), "
        "compare runs of the same dataset, or pass --allow-changed)"
    )
    # two datasets: named, their 64-character hashes shortened
    fb = run_info("fb")
    fb.dataset.name, fb.dataset.content_sha256 = "financebench", "a" * 64
    fb_dir = write_run(tmp_path / "fb", outcomes("cccc"), info=fb)
    cand_info = run_info("cand2")
    cand_info.dataset.content_sha256 = "b" * 64
    cand2 = write_run(tmp_path / "cand2", outcomes("cccc"), info=cand_info)
    (line,) = _lines(_gate(cand2, "--baseline", fb_dir))
    assert f"dataset content hash fb={'a' * 12} vs cand2={'b' * 12} (datasets financebench vs " in line
    assert "a" * 13 not in line
    assert line.endswith("(compare runs of the same dataset, or pass --allow-changed)")


def test_runs_without_provenance_are_compared_with_a_warning(tmp_path: Path) -> None:
    old = run_info("old", judge_version=None, builder_version=None)
    old.dataset.content_sha256 = ""
    base = write_run(tmp_path / "old", outcomes("cccc"), info=old)
    cand = write_run(tmp_path / "cand", outcomes("cccc"), info=run_info("cand"))
    res = _gate(cand, "--baseline", base, "--max-drop", "0.05")
    assert res.exit_code == 0, res.output
    assert (
        "WARNING: run old does not record its judge version, tree builder version, dataset content hash "
        "(written before provenance was recorded): not checked"
    ) in res.output


def test_an_old_baseline_without_a_judge_version_is_said_with_the_rejudge_that_rescores_it(
    tmp_path: Path,
) -> None:
    """Upgrade review: against a baseline written by pageindex-bench b58837b (no judge version), the gate
    passed a drop of 55.6% -> 38.9% that was the rules judge's change alone, its warning saying only "not
    checked". It now gives the command that scores the baseline's answers with today's judge (a run that
    records its judge version but not its builder gets no such command)."""
    old = run_info("old", judge_version=None, builder_version=None)
    old.dataset.content_sha256 = ""
    base = write_run(tmp_path / "old", outcomes("ccci"), info=old)
    cand = write_run(tmp_path / "cand", outcomes("ccci"), info=run_info("cand"))
    res = _gate(cand, "--baseline", base)
    assert res.exit_code == 0, res.output
    assert (
        "WARNING: run old does not record its judge version, tree builder version, dataset content hash "
        "(written before provenance was recorded): not checked; to score its answers with today's judge: "
        f"pageindex bench rejudge {base} --judge rules -o {base}-rejudged"
    ) in " ".join(res.output.split())
    half = write_run(tmp_path / "half", outcomes("ccci"), info=run_info("half", builder_version=None))
    res = _gate(cand, "--baseline", half)
    assert res.exit_code == 0, res.output
    said = " ".join(res.output.split())
    assert "WARNING: run half does not record its tree builder version (written before provenance" in said
    assert "rejudge" not in said


def test_old_run_json_without_provenance_loads(tmp_path: Path) -> None:
    run_dir = write_run(tmp_path / "old", outcomes("cc"))
    data = json.loads((run_dir / "run.json").read_text())
    for key in ("builder_version", "judge_version"):
        del data[key]
    del data["dataset"]["content_sha256"]
    (run_dir / "run.json").write_text(json.dumps(data))
    info = load_run(run_dir).info
    assert (info.builder_version, info.judge_version, info.dataset.content_sha256) == (None, None, "")


# ----------------------------------------------------------------------------- option values
@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["--min-accuracy", "50"],
            "error: --min-accuracy must be a fraction from 0 to 1 (e.g. 0.6) or a percentage (e.g. 60%); "
            "got '50' (to mean 50 percent, write 50%)",
        ),
        (["--min-accuracy", "abc"], "error: --min-accuracy must be a fraction from 0 to 1"),
        (["--max-drop", "-0.1"], "error: --max-drop must be a fraction from 0 to 1"),
        # review (rev-gate): a bare 1 was 100%, a drop check that never fails, where 1 point was as meant
        (["--max-drop", "1"], "error: --max-drop 1 is ambiguous: write 1% for a drop of one point, or 100% "
         "to allow any drop"),
        (["--max-drop", " 1.0 "], "error: --max-drop 1.0 is ambiguous: write 1% for a drop of one point"),
        (["--min-answered", "150%"], "error: --min-answered must be a fraction from 0 to 1"),
        (["--alpha", "nan"], "error: --alpha must be a significance level from 0.001 to 0.5"),
        # a significance level is never said to be "a fraction ... (e.g. 60%)", which it refuses;
        # "write N%" only where N% is taken
        (["--alpha", "5"], (
            "error: --alpha must be a significance level from 0.001 to 0.5 (0.1%-50%); got '5' "
            "(to mean 5 percent, write 5%)"
        )),
        (["--alpha", "60"], (
            "error: --alpha must be a significance level from 0.001 to 0.5 (0.1%-50%); got '60'"
        )),
        # a significance level of 0 calls no drop significant: max-drop could never fail
        (["--alpha", "0"], (
            "error: --alpha must be a significance level from 0.001 to 0.5 (0.1%-50%); got '0'"
        )),
        (["--alpha", "1e-300"], "error: --alpha must be a significance level from 0.001 to 0.5"),
        (["--test", "foo"], "error: --test must be one of mcnemar, bootstrap; got 'foo'"),
        (
            ["--max-tokens-per-question", "lots"],
            "error: --max-tokens-per-question must be a number of tokens >= 0 (e.g. 1200 or 1.2k); "
            "got 'lots'",
        ),
    ],
)
def test_bad_option_is_one_error_line(tmp_path: Path, args: list[str], expected: str) -> None:
    run = write_run(tmp_path / "run", outcomes("cc"))
    junit = tmp_path / "gate.xml"
    res = _gate(run, *args, "--junit", junit)
    assert res.exit_code == 2
    assert len(_lines(res)) == 1 and _lines(res)[0].startswith(expected)
    assert "Traceback" not in res.output and "pydantic.dev" not in res.output and "╭" not in res.output
    assert ET.parse(junit).getroot().get("errors") == "1"


def test_percentages_are_accepted(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", outcomes("ccci"))
    res = _gate(run, "--min-accuracy", "75%", "--min-answered", "0.5", "--max-tokens-per-question", "1,200")
    assert res.exit_code == 0, res.output
    assert "PASS  min-accuracy [agent]: 75.0% (required >= 75.0%)" in res.output
    # --max-drop 100% allows any drop, said so; 0.5 is half: 50 points
    base = write_run(tmp_path / "base", outcomes("cccc"))
    res = _gate(run, "--baseline", base, "--max-drop", "100%")
    assert res.exit_code == 0 and "(allowed <= 100.0 pp)" in res.output, res.output
    res = _gate(run, "--baseline", base, "--max-drop", "0.5")
    assert "(allowed <= 50.0 pp)" in res.output, res.output
    res = _gate(run, "--min-accuracy", "80 %")
    assert res.exit_code == 1 and "FAIL  min-accuracy [agent]: 75.0% (required >= 80.0%)" in res.output
    # token counts as --budget takes them (trial 13: 10k was refused here and accepted there)
    res = _gate(run, "--max-tokens-per-question", "1k")
    assert res.exit_code == 1
    assert "FAIL  max-tokens-per-question [agent]: 1,100 (required <= 1,000)" in res.output


def test_each_difference_is_named_once_and_reports_see_them_too(tmp_path: Path) -> None:
    """One source of differences (``comparability``): the gate names each allowed difference once,
    and ``run_differences`` (what reports and compare show) names the judge version and tree
    builder too, which it used not to."""
    from bench.compare import run_differences

    cand = load_run(write_run(tmp_path / "cand", outcomes("cccc"), info=run_info("cand")))
    other = run_info("other", judge_version="rules-0", builder_version="2.0+x", judge_model="openai/gpt-4o")
    base = load_run(write_run(tmp_path / "other", outcomes("cccc"), info=other))
    found = run_differences(base, cand)
    assert [w.split(" differs")[0] for w in found] == ["judge version", "judge model", "tree builder version"]
    result = evaluate_gate(cand, GateRules(allow_changed=True), base)
    for field in ("judge version", "judge model", "tree builder version"):
        assert sum(field in w for w in result.warnings) == 1, result.warnings
    assert all(w.endswith("(allowed by --allow-changed)") for w in result.warnings if "differs" in w)


# ----------------------------------------------------------------------------- unfinished runs, no verdicts
def test_a_failed_run_says_why_in_its_complete_line(tmp_path: Path) -> None:
    """A run whose model endpoint went away (a llama.cpp server killed mid-run): the gate's line says so,
    as `bench summary` does, so a CI log shows why without the run folder; one sample is "1 sample"."""
    detail = (
        "the model endpoint stopped answering during the run (openai/m at http://127.0.0.1:8791/v1: "
        "connection refused (all 4 attempts); a probe after it: connection refused): no new sample started "
        "and the samples it cut are not recorded; once it answers, continue with: "
        "pageindex bench run --resume cand"
    )
    info = run_info("cand", status="failed", status_detail=detail)
    cand = write_run(tmp_path / "cand", outcomes("c"), info=info)
    res = _gate(cand, "--min-accuracy", "0.5")
    assert res.exit_code == 1, res.output
    assert (
        "FAIL  complete [run]: cand is failed (the model endpoint stopped answering during the run) with 1 "
        "sample; required: finished (--allow-partial judges the samples it has)" in res.output
    ), res.output


def test_a_rejudge_of_a_killed_run_says_whose_status_it_kept(tmp_path: Path) -> None:
    """A finished ``bench rejudge`` keeps the status of the run it re-scored: the gate said "k-rj is
    running" of a rejudge that had ended; the line now says the status is the source run's."""
    rejudge = {"from_run": "k", "from_status": "running", "ended_at": "2026-11-27T07:49:40+00:00"}
    info = run_info("k-rj", status="running", extra={"rejudge": rejudge})
    res = _gate(write_run(tmp_path / "k-rj", outcomes("cc"), info=info), "--min-accuracy", "0.5")
    assert res.exit_code == 1, res.output
    assert (
        "FAIL  complete [run]: k-rj is running (kept from k, the run it rejudged) with 2 samples; required: "
        "finished" in res.output
    ), res.output
    going = run_info("k-rj2", status="running", extra={"rejudge": {**rejudge, "ended_at": None}})
    res = _gate(write_run(tmp_path / "k-rj2", outcomes("cc"), info=going), "--min-accuracy", "0.5")
    # a rejudge that did not end and that no process holds was killed: its own status, said so
    killed = "running, but no process is running it (killed, or its machine stopped)"
    assert f"k-rj2 is {killed} with 2" in res.output



@pytest.mark.parametrize("status", ["interrupted", "running", "aborted_due_to_budget", "failed"])
def test_an_unfinished_run_fails_the_gate_without_a_baseline_too(tmp_path: Path, status: str) -> None:
    """A run that was interrupted, killed (still "running"), stopped by its budget or failed is no
    evidence for CI, however good its samples: the gate fails it unless --allow-partial."""
    cand = write_run(tmp_path / "cand", outcomes("ccc"), info=run_info("cand", status=status))
    res = _gate(cand, "--min-accuracy", "0.5")
    assert res.exit_code == 1, res.output
    # a "running" run that no process holds was killed, and is said so (the folder here is held by none)
    killed = "running, but no process is running it (killed, or its machine stopped)"
    said = killed if status == "running" else status
    assert f"FAIL  complete [run]: cand is {said} with 3 samples; required: finished" in res.output
    assert res.output.rstrip().endswith("failed: complete[run]")

    res = _gate(cand, "--min-accuracy", "0.5", "--allow-partial")
    assert res.exit_code == 0, res.output
    assert "PASS  complete [run]: cand is" in res.output and "--allow-partial" in res.output

    done = write_run(tmp_path / "done", outcomes("ccc"), info=run_info("done"))
    finished = _gate(done, "--min-accuracy", "0.5").output
    assert "PASS  complete [run]: done is finished with 3 samples" in finished


def test_answers_the_judge_failed_on_fail_the_gate(tmp_path: Path) -> None:
    """A judge call that failed leaves an answer with no verdict: the run's accuracy is not known,
    so the gate fails (naming the judge's error and the remedy) even when every other check holds."""
    unjudged = [
        sample(f"j{k}", verdict=None, status="answer", judge="judge_error", judge_error="timeout: judge")
        for k in range(2)
    ]
    rows = outcomes("cc") + unjudged
    run = write_run(tmp_path / "rj", rows, info=run_info("rj"))
    res = _gate(run, "--min-answered", "0.9")
    assert res.exit_code == 1, res.output
    assert "PASS  min-answered [agent]: 100.0%" in res.output  # every sample has its answer
    again = f"pageindex bench rejudge {run} --judge rules -o {run}-rejudged"
    assert (
        "FAIL  judged [agent]: 2 of 4 answers have a verdict; 2 have none (judge failed: timeout: judge); "
        f"required: all — re-score with `{again}`"
    ) in res.output
    # the remedy runs as printed (it used to lack the required --judge and -o), and then the gate passes
    done = CliRunner().invoke(app, again.split()[1:])
    assert done.exit_code == 0, done.output
    assert _gate(Path(f"{run}-rejudged"), "--min-answered", "0.9").exit_code == 0


def test_a_baseline_whose_answers_have_no_verdict_fails_the_gate(tmp_path: Path) -> None:
    """Against a baseline the judge failed on, every baseline answer counts as not correct, so any
    candidate would show no drop: the gate fails its judged check instead of passing (trial 2)."""
    unjudged = [
        sample(f"q{k:03d}", verdict=None, status="answer", judge="judge_error", judge_error="http_500: judge")
        for k in range(3)
    ]
    base = write_run(tmp_path / "base", unjudged, info=run_info("base"))
    cand = write_run(tmp_path / "cand", outcomes("ccc"), info=run_info("cand"))
    res = _gate(cand, "--baseline", str(base), "--max-drop", "0")
    assert res.exit_code == 1, res.output
    assert "FAIL  judged [agent baseline]: 0 of 3 answers have a verdict; 3 have none" in res.output
    assert f"pageindex bench rejudge {base} --judge rules" in res.output
    assert "PASS  judged [agent]: 3 of 3 answers have a verdict" in res.output
    judged = write_run(tmp_path / "judged", outcomes("ccc"), info=run_info("judged"))
    assert _gate(cand, "--baseline", str(judged), "--max-drop", "0").exit_code == 0


def test_the_rejudge_remedy_names_the_runs_judge_endpoint_and_quotes_its_path(tmp_path: Path) -> None:
    """A run judged by a model on its own server: the command keeps that server (without it the
    rejudge went to api.openai.com), and a path with a space stays one argument (review 7)."""
    import shlex

    from bench.runinfo import rejudge_command

    config = {"judge_base_url": "http://127.0.0.1:8080/v1", "base_url": None}
    info = run_info("rj", judge="llm", judge_model="openai/judge-m", extra={"config": config})
    again = rejudge_command(tmp_path / "my runs" / "rj", info)
    assert shlex.split(again) == [
        "pageindex", "bench", "rejudge", str(tmp_path / "my runs" / "rj"), "--judge", "llm",
        "--judge-model", "openai/judge-m", "--judge-base-url", "http://127.0.0.1:8080/v1",
        "-o", str(tmp_path / "my runs" / "rj") + "-rejudged",
    ]  # fmt: skip
    # an endpoint the judge model took from the environment ($OPENAI_BASE_URL) is the run's too
    resolved = {"resolved_urls": {"openai/judge-m": "http://127.0.0.1:9090/v1"}}
    env_info = run_info("rj", judge="llm", judge_model="openai/judge-m", extra={"config": resolved})
    assert "--judge-base-url http://127.0.0.1:9090/v1 " in rejudge_command("rj", env_info)
    rules_info = run_info("r2", extra={"config": {"base_url": "http://127.0.0.1:8080/v1"}})
    assert "--judge-base-url" not in rejudge_command("r2", rules_info)  # the rules judge calls no model


def test_junit_that_is_a_directory_is_refused_before_any_verdict(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", outcomes("ccc"), info=run_info("run"))
    res = _gate(run, "--min-accuracy", "0.5", "--junit", tmp_path)
    assert res.exit_code == 2
    assert res.output.strip().splitlines() == [
        f"error: --junit {tmp_path}: is a directory; give a file path (e.g. {tmp_path / 'gate.xml'})"
    ]


def test_max_drop_counts_a_repeated_question_once(tmp_path: Path) -> None:
    """``--repeats 3``: the candidate loses 2 of 10 questions in all three repeats. That is the evidence
    of 2 questions (McNemar p = 0.5: noise at alpha 0.05), not of 6 independent samples (p = 0.031).
    (10 questions: over 5 no drop could be significant, and the threshold alone decides.)"""

    def repeated(pattern: str) -> list:
        return [s.model_copy(update={"repeat": r}) for r in range(3) for s in outcomes(pattern)]

    base = write_run(tmp_path / "base", repeated("c" * 10))
    cand = write_run(tmp_path / "cand", repeated("ii" + "c" * 8), info=run_info("cand"))
    res = _gate(cand, "--baseline", base, "--max-drop", "0.05")
    assert res.exit_code == 0, res.output
    assert "PASS  max-drop [agent]: drop +20.0 pp" in res.output
    assert "6 lost / 0 gained, 2 lost / 0 gained by question, McNemar p=0.5)" in res.output


def test_answers_that_became_uncertain_fail_the_gate_not_hide_a_drop(tmp_path: Path) -> None:
    """Review 13: 20 answers the baseline had right came back `uncertain` (a judge that abstains); the
    paired drop leaves such pairs out, so max-drop passed on the other 10 (100% -> 100%). The judged
    check now counts an uncertain answer as not judged; with every shared pair uncertain the gate used
    to crash (exit 2, no JUnit file): it fails, saying no drop can be measured."""
    base = write_run(tmp_path / "base", outcomes("c" * 30), info=run_info("base"))
    rows = [sample(f"q{k:03d}", verdict="uncertain", status="answer") for k in range(20)]
    cand = write_run(tmp_path / "cand", rows + outcomes("c" * 30)[20:], info=run_info("cand"))
    res = _gate(cand, "--baseline", str(base), "--max-drop", "0.05")
    assert res.exit_code == 1, res.output
    assert (
        "FAIL  judged [agent]: 10 of 30 answers have a verdict; 20 are uncertain (the judge abstained); "
        f"required: all — re-score with `pageindex bench rejudge {cand} --judge rules -o {cand}-rejudged` "
        "(or --judge llm or hybrid with a model: judges that decide every answer)"
    ) in res.output  # trial 14: it named the judge that abstained, which would abstain again
    one = write_run(tmp_path / "one", rows[:1] + outcomes("c" * 30)[1:], info=run_info("one"))
    assert "1 is uncertain (the judge abstained)" in _gate(one, "--min-accuracy", "0").output
    gone = write_run(tmp_path / "gone", rows[:3], info=run_info("gone"))
    junit = tmp_path / "gate.xml"
    res = _gate(gone, "--baseline", str(write_run(tmp_path / "b3", outcomes("ccc"))), "--max-drop", "0",
                "--junit", str(junit))
    assert res.exit_code == 1, res.output
    assert (
        "FAIL  max-drop [agent]: none of the 3 samples shared with baseline b3 has a decided verdict in "
        "both runs"
    ) in res.output
    assert junit.is_file() and ET.parse(junit).getroot().get("failures") == "2"


def test_junit_is_replaced_whole_or_not_at_all(tmp_path: Path) -> None:
    """A JUnit write that fails part-way leaves the earlier file as it was (it was truncated, then
    half written: a CI step read a torn report)."""
    out = tmp_path / "gate.xml"

    def rule(name: str, message: object) -> RuleResult:
        return RuleResult.model_construct(
            rule=name, scope="r", passed=True, measured=1.0, threshold=0.5, message=message
        )

    write_junit(out, GateResult(run_id="run", rules=[rule("a", "fine"), rule("b", "fine too")]))
    before = out.read_bytes()
    with pytest.raises(TypeError):  # a message that cannot be serialised, met after the first case
        write_junit(out, GateResult.model_construct(run_id="run", rules=[rule("a", "ok"), rule("b", 3)],
                                                    warnings=[], baseline_id=None))  # fmt: skip
    assert out.read_bytes() == before and ET.parse(out).getroot().tag == "testsuites"
    assert [p.name for p in tmp_path.iterdir()] == ["gate.xml"]


def test_a_drop_no_test_could_call_significant_fails_on_the_threshold(tmp_path: Path) -> None:
    """Review (rev-gate): the sign-flip test of `--test bootstrap` counts documents, and over 3 of them
    its smallest p is 0.25, so the demo's 38.9% -> 0% collapse passed as noise (exit 0); so did any drop
    over 5 questions with McNemar. Where the test could not call any drop significant at alpha, a drop
    above --max-drop fails on the threshold alone, and the line says why."""
    base = write_run(tmp_path / "base", outcomes("c" * 18, docs=3))
    cand = write_run(tmp_path / "cand", outcomes("i" * 18, docs=3), info=run_info("cand"))
    res = _gate(cand, "--baseline", base, "--test", "bootstrap")
    assert res.exit_code == 1, res.output
    assert (
        "FAIL  max-drop [agent]: drop +100.0 pp vs baseline base (100.0% -> 0.0% on 18 shared samples, "
        "18 lost / 0 gained, paired bootstrap p=0.25) (allowed <= 0.0 pp); regression: the test over "
        "3 documents cannot call any drop significant at alpha 0.05 (smallest p 0.25), so a drop above the "
        "allowed fails (use --test mcnemar, more documents, or a larger --max-drop)"
    ) in res.output
    assert res.output.splitlines()[-1] == "gate FAILED: 8/9 rules hold; failed: max-drop[agent]"
    # McNemar over the same 18 questions: p = 2 / 2**18, a regression the test itself calls
    res = _gate(cand, "--baseline", base)
    assert res.exit_code == 1 and "significant at alpha 0.05: regression" in res.output
    # McNemar over 5 questions: smallest p 0.0625; one question lost fails, none lost passes
    small = write_run(tmp_path / "small", outcomes("ccccc"), info=run_info("small"))
    lost = write_run(tmp_path / "lost", outcomes("icccc"), info=run_info("lost"))
    res = _gate(lost, "--baseline", small)
    assert res.exit_code == 1, res.output
    assert "the test over 5 questions cannot call any drop significant at alpha 0.05 (smallest p 0.0625)" in (
        res.output
    )
    res = _gate(lost, "--baseline", small, "--max-drop", "20%")  # the threshold allows it
    assert res.exit_code == 0 and "within the allowed drop" in res.output, res.output
    # where the test can call a drop significant, a small drop is still noise (one flaky question)
    big = write_run(tmp_path / "big", outcomes("c" * 10), info=run_info("big"))
    flaky = write_run(tmp_path / "flaky", outcomes("i" + "c" * 9), info=run_info("flaky"))
    res = _gate(flaky, "--baseline", big)
    assert res.exit_code == 0 and "not significant at alpha 0.05: treated as noise" in res.output, res.output


def test_a_run_gated_against_its_own_folder_is_bad_input(tmp_path: Path) -> None:
    """Review (rev-gate): `bench gate results/ci --baseline results/ci` (or a symlink to it) passed every
    check against the baseline (drop +0.0 pp, exit 0) whatever the run held: nothing was gated."""
    run = write_run(tmp_path / "ci", outcomes("ciiiiiiiii"), info=run_info("ci"))
    (tmp_path / "link").symlink_to(run)
    for baseline in (run, tmp_path / "link", tmp_path / "." / "ci"):
        res = _gate(run, "--baseline", baseline, "--max-drop", "0.02")
        assert res.exit_code == 2, res.output
        assert res.output == (
            f"error: run {run} and baseline {baseline} are the same run folder: a run compared with itself "
            "passes every check against the baseline; give the baseline's own folder\n"
        )
    # a copy of the run in another folder is a baseline like any other (a first baseline is one)
    import shutil

    shutil.copytree(run, tmp_path / "copy")
    res = _gate(run, "--baseline", tmp_path / "copy")
    assert res.exit_code == 0 and res.output.splitlines()[-1] == "gate passed: 9/9 rules hold", res.output


def test_a_retriever_the_baseline_lacks_is_not_passed_unchecked(tmp_path: Path) -> None:
    """Review (rev-gate): `--retriever bm25 --baseline B --max-drop 0.02` with B holding no bm25 sample
    (recorded without a model, which skips it) made no coverage, drop or answered check and passed on
    `errors` and `judged` alone (4/4 rules, exit 0) with bm25 at 0%. Asked for by name, it is bad
    input, as runs sharing no samples are; unnamed, it is a warning, as before."""
    base = write_run(tmp_path / "base", outcomes("cccccccccc", "extractive"))
    rows = outcomes("cccccccccc", "extractive") + outcomes("iiiiiiiiii", "bm25")
    cand = write_run(tmp_path / "cand", rows, info=run_info("cand"))
    res = _gate(cand, "--baseline", base, "--max-drop", "0.02", "--retriever", "bm25")
    assert res.exit_code == 2, res.output
    assert res.output == (
        f"error: baseline base ({base}) has no samples of retriever 'bm25' (it has: extractive): no drop "
        "can be measured; gate bm25 without --baseline, or against a baseline that ran it\n"
    )
    res = _gate(cand, "--baseline", base, "--max-drop", "0.02", "--retriever", "extractive")
    assert res.exit_code == 0, res.output
    res = _gate(cand, "--baseline", base, "--max-drop", "0.02")
    assert res.exit_code == 0, res.output
    assert "baseline base has no samples of retriever 'bm25': no coverage or drop check" in res.output
    assert "max-drop [bm25]" not in res.output and "PASS  max-drop [extractive]" in res.output


def test_a_finished_run_that_lost_samples_fails_complete(tmp_path: Path) -> None:
    """Review (rev-gate): a finished baseline whose samples.jsonl was cut after the run (a partial copy,
    `head`, a torn last line) passed `complete` ("finished with 9 samples") and `coverage` (measured
    against the baseline itself), so the gate checked half the questions and passed. A finished run
    holds every sample its run.json lists (questions x retrievers x repeats); fewer fails `complete`."""
    from bench.runinfo import DatasetInfo

    def info(run_id: str, questions: int = 10):
        dataset = DatasetInfo(name="handmade", sha256="abc123", content_sha256="c0ffee", questions=questions)
        return run_info(run_id, dataset=dataset)

    cand = write_run(tmp_path / "cand", outcomes("c" * 10), info=info("cand"))
    cut = write_run(tmp_path / "cut", outcomes("c" * 5), info=info("cut"))
    res = _gate(cand, "--baseline", cut)
    assert res.exit_code == 1, res.output
    assert (
        f"FAIL complete [baseline]: cut is finished but holds 5 of the 10 samples its run.json lists "
        f"(10 questions x 1 retriever x 1 repeat): {cut}/samples.jsonl lost some since the run ended (cut "
        "short, or a torn last line); required: all of them (--allow-partial judges the samples it has); "
        f"run the missing ones again with: pageindex bench run --resume {cut}"
    ) in " ".join(res.output.split())
    assert res.output.splitlines()[-1] == "gate FAILED: 8/9 rules hold; failed: complete[baseline]"
    # a torn last line in a finished run: the same (the line is dropped with a warning)
    torn = write_run(tmp_path / "torn", outcomes("c" * 9), info=info("torn"), torn_tail='{"run_id": "to')
    res = _gate(torn, "--min-accuracy", "0.5")
    assert res.exit_code == 1 and "FAIL  complete [run]: torn is finished but holds 9 of the 10" in res.output
    res = _gate(torn, "--min-accuracy", "0.5", "--allow-partial")
    assert res.exit_code == 0 and "--allow-partial: the checks below use the samples it has" in res.output
    # the whole run passes; a run that does not record its question count is not checked
    assert _gate(cand, "--min-accuracy", "0.5").exit_code == 0
    old = write_run(tmp_path / "old", outcomes("c" * 5), info=info("old", 0))
    assert _gate(old, "--min-accuracy", "0.5").exit_code == 0


def test_control_characters_in_messages_keep_junit_parseable_and_lines_whole(tmp_path: Path) -> None:
    """Review (rev-gate): a judge error holding an ESC or a NUL (a server's reply, quoted) went into the
    `judged` line and the JUnit XML as it was: the XML was not well-formed (a CI test reporter cannot read
    it) and the terminal took the escape. Control characters are written as their escapes."""
    rows = outcomes("cc")
    rows[1] = rows[1].model_copy(
        update={"verdict": None, "judge_error": "http_error: \x1b[31mbad\x00 gate\nway\x07"}
    )
    run = write_run(tmp_path / "run", rows)
    junit = tmp_path / "gate.xml"
    res = _gate(run, "--min-accuracy", "0", "--junit", junit)
    assert res.exit_code == 1, res.output
    assert "1 has none (judge failed: http_error: \\x1b[31mbad\\x00 gate\\nway\\x07); required" in res.output
    assert "\x1b" not in res.output and "\x00" not in res.output
    failure = ET.parse(junit).getroot().find(".//failure")
    assert failure is not None and "judge failed: http_error: \\x1b[31mbad\\x00 gate\\nway\\x07)" in (
        failure.get("message") or ""
    )


def test_the_baselines_load_warnings_are_shown_as_the_runs_are(tmp_path: Path) -> None:
    """Review (rev-gate): a baseline whose samples.jsonl repeats a sample (a row left out: the first is
    kept) or ends in a torn line was gated against with no word of it (the run's own warnings were
    shown; `bench compare` shows both)."""
    base = write_run(tmp_path / "base", outcomes("cccc"), torn_tail='{"question_id": "q0')
    with (base / "samples.jsonl").open("r+", encoding="utf-8") as fh:
        text = fh.read()
        fh.seek(0)
        fh.write(text.split("\n")[0] + "\n" + text)
    cand = write_run(tmp_path / "cand", outcomes("cccc"), info=run_info("cand"))
    junit = tmp_path / "gate.xml"
    res = _gate(cand, "--baseline", base, "--junit", junit)
    assert res.exit_code == 0, res.output
    assert f"WARNING: {base}/samples.jsonl: line 2 repeats sample ('q000', 'agent', 0); kept the first" in (
        res.output
    )
    assert f"WARNING: {base}/samples.jsonl: dropped a partial last line (19 bytes)" in res.output
    assert "line 2 repeats sample" in (ET.parse(junit).getroot().findtext(".//system-err") or "")


def test_counts_of_one_are_said_in_the_singular(tmp_path: Path) -> None:
    rows = _missed("cmr" + "c" * 7)
    rows[3] = rows[3].model_copy(update={"verdict": None, "judge_error": "timeout: 30 s"})
    res = _gate(write_run(tmp_path / "run", rows), "--min-answered", "0.5")
    assert "8 of 10 answered, 1 error (1 replay miss), 1 fail" in res.output, res.output
    assert "1 has none (judge failed: timeout: 30 s)" in res.output


def test_samples_the_baseline_lacks_are_said_to_be_unchecked(tmp_path: Path) -> None:
    """Review (rev-gate): against a baseline of a subset (`--question-type`, `--limit`), the run's other
    samples were in no drop check and nothing said so (`bench compare` says "only in B")."""
    base = write_run(tmp_path / "base", outcomes("cccccc"))
    cand = write_run(tmp_path / "cand", outcomes("cccccc" + "i" * 12), info=run_info("cand"))
    res = _gate(cand, "--baseline", base)
    assert res.exit_code == 0, res.output
    assert "WARNING: run cand has 12 samples of retriever 'agent' that baseline base lacks: no drop is " in (
        res.output
    )
    same = write_run(tmp_path / "same", outcomes("cccccc"), info=run_info("same"))
    res = _gate(same, "--baseline", base)
    assert res.exit_code == 0 and "lacks" not in res.output, res.output


def test_the_help_says_when_a_drop_fails_on_the_threshold_alone() -> None:
    """Review (rev-day): --max-drop's help still said a larger drop "fails only when the paired test says
    it is significant", after 9a0399a made a drop no test could call significant fail on the threshold
    alone; and --allow-partial's spoke only of unfinished runs, not of a finished one that lost samples."""
    res = runner.invoke(app, ["bench", "gate", "--help"], terminal_width=1000, env={"COLUMNS": "1000"})
    text = " ".join(res.output.replace("│", " ").split())
    assert res.exit_code == 0
    assert "fails only when the paired test says it is significant" not in text
    assert (
        "A larger drop fails when the paired test says it is significant at --alpha, or when the test could "
        "not call any drop significant (5 or fewer questions or documents at 0.05)"
    ) in text
    assert "a finished RUN that lost samples" in text


def test_finished_runs_of_the_runner_pass_complete_and_cut_copies_fail(tmp_path: Path, monkeypatch) -> None:
    """Review (rev-day): the `complete` rule counts questions x retrievers x repeats from run.json, so every
    finished run `bench run` writes must hold that many samples, whatever selected its questions: --repeats,
    --limit, --question-id (given twice), questions dropped by validation or by an unreadable filing, a
    resumed run and a rejudged one. Hand-made runs record no question count, so only real runs check it."""
    import shutil

    for name in ("OPENAI_API_KEY", "PAGEINDEX_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(tmp_path / "cache"))
    cli = CliRunner()

    def invoke(*args: object) -> None:
        res = cli.invoke(app, [str(a) for a in args], terminal_width=250)
        assert res.exit_code == 0, res.output

    demo, bad = tmp_path / "demo", tmp_path / "bad"
    invoke("bench", "datasets", "demo", "-o", demo)
    invoke("bench", "datasets", "demo", "--bad", "-o", bad)
    runs = {
        "repeats": ["--data-dir", demo, "-r", "extractive", "--repeats", "2", "--limit", "4"],
        "ids": ["--data-dir", demo, "-r", "extractive", "--question-id", "demo_nwic_01", "--question-id",
                "demo_nwic_01", "--question-id", "demo_nwic_02"],
        "dropped": ["--data-dir", bad, "-r", "extractive"],
    }  # fmt: skip
    for name, args in runs.items():
        invoke("bench", "run", *args, "-o", tmp_path / name)
    # a run stopped half-way (its last samples lost, as a Ctrl-C leaves it), resumed to the end
    cut = tmp_path / "resumed"
    shutil.copytree(tmp_path / "repeats", cut)
    lines = (cut / "samples.jsonl").read_text().splitlines(keepends=True)
    (cut / "samples.jsonl").write_text("".join(lines[:3]))
    info = json.loads((cut / "run.json").read_text())
    (cut / "run.json").write_text(json.dumps({**info, "status": "interrupted"}))
    invoke("bench", "run", "--resume", cut)
    invoke("bench", "rejudge", tmp_path / "dropped", "--judge", "rules", "-o", tmp_path / "rejudged")
    for name in [*runs, "resumed", "rejudged"]:
        run = load_run(tmp_path / name)
        assert run.info.status == "finished" and run.info.dataset.questions > 0, name
        copy = shutil.copytree(tmp_path / name, tmp_path / f"{name}-base")
        res = _gate(tmp_path / name, "--baseline", copy)
        assert res.exit_code == 0, res.output
        # one id for the run and its copy: both named by their folders
        said = f"PASS  complete [run]: {tmp_path / name} is finished with {len(run.samples)} samples"
        assert said in res.output
        # the same run with its last sample lost since it ended fails `complete`
        kept = (copy / "samples.jsonl").read_text().splitlines(keepends=True)[:-1]
        (copy / "samples.jsonl").write_text("".join(kept))
        res = _gate(tmp_path / name, "--baseline", copy)
        assert res.exit_code == 1 and "FAIL  complete [baseline]" in res.output, res.output


def test_a_figure_exactly_at_its_threshold_passes(tmp_path: Path) -> None:
    """Mutation test: ``<`` for max-tokens-per-question and a drop failing when equal to max-drop
    survived; a limit is allowed (required <=), so a run exactly on it passes."""
    base = load_run(write_run(tmp_path / "base", outcomes("c" * 30)))
    run = load_run(write_run(tmp_path / "run", outcomes("i" * 12 + "c" * 18), info=run_info("run")))
    res = evaluate_gate(run, GateRules(max_drop=0.4, max_tokens_per_question=1100), base)
    drop = _rule(res, "max-drop[agent]")
    assert drop.passed and drop.measured == pytest.approx(0.4) and "within the allowed drop" in drop.message
    tokens = _rule(res, "max-tokens-per-question[agent]")
    assert tokens.passed and tokens.measured == 1100  # 1000 prompt + 100 completion on every sample
    assert not _rule(evaluate_gate(run, GateRules(max_drop=0.39), base), "max-drop[agent]").passed
    tighter = evaluate_gate(run, GateRules(max_tokens_per_question=1099))
    assert not _rule(tighter, "max-tokens-per-question[agent]").passed


def test_allow_partial_measures_the_baseline_on_the_shared_samples_only(tmp_path: Path) -> None:
    """Mutation test: not narrowing the baseline to the shared samples under --allow-partial survived:
    the default min-answered then came from every baseline sample (5 errors among the missing ones:
    0.9 x 50%), and a run answering 4 of 5 shared samples the baseline answered all of passed."""
    base = load_run(write_run(tmp_path / "base", outcomes("eeeee" + "c" * 5)))
    rows = outcomes("e" * 5 + "ecccc")[5:]  # q005..q009: the baseline's answered half, one error
    run = load_run(write_run(tmp_path / "run", rows, info=run_info("run", status="interrupted")))
    res = evaluate_gate(run, GateRules(allow_partial=True), base)
    answered = _rule(res, "min-answered[agent]")
    assert answered.threshold == pytest.approx(0.9) and answered.measured == pytest.approx(0.8)
    assert not answered.passed


def test_a_usage_error_replaces_an_earlier_junit_report_with_a_failing_one(tmp_path: Path) -> None:
    """Trial 25: ``bench gate ... --junit out.xml`` re-run with a misspelt option stopped with exit 2
    before its options were read, and left the earlier run's out.xml: a CI step reading it saw the
    earlier ``gate passed``. The usage error is now the report: one test case with an error."""
    run = write_run(tmp_path / "run", outcomes("ccc"), info=run_info("run"))
    junit = tmp_path / "gate.xml"
    assert _gate(run, "--min-accuracy", "0.5", "--junit", junit).exit_code == 0
    assert ET.parse(junit).getroot().get("errors") == "0"

    res = _gate(run, "--min-acuracy", "0.5", "--junit", junit)
    assert res.exit_code == 2
    assert res.output.startswith("error: No such option: --min-acuracy")
    root = ET.parse(junit).getroot()
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("1", "0", "1")
    error = root.find("testsuite/testcase/error")
    assert error.get("type") == "UsageError"
    assert error.get("message") == "No such option: --min-acuracy (Possible options: --min-accuracy)"

    # --junit=FILE, and a missing RUN: the same
    assert _gate(run, "--min-accuracy", "0.5", f"--junit={junit}").exit_code == 0
    res = _gate("--min-accuracy", "0.5", f"--junit={junit}")
    assert res.exit_code == 2 and "Missing argument 'run'" in res.output
    error = ET.parse(junit).getroot().find("testsuite/testcase/error")
    assert "Missing argument 'run'" in error.get("message")

    # a file that is not a JUnit report is never written over; a --junit without its file writes nothing
    notes = tmp_path / "notes.txt"
    notes.write_text("mine\n")
    res = _gate(run, "--bogus", "--junit", notes)
    assert res.exit_code == 2 and notes.read_text() == "mine\n"
    res = _gate(run, "--min-accuracy", "0.5", "--junit")
    assert res.exit_code == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gate.xml", "notes.txt", "run"]


def test_a_baseline_whose_samples_all_ended_in_an_error_fails_the_gate(tmp_path: Path) -> None:
    """Review rev-gate2: a baseline recorded while every request missed the replay cache (a CI run's
    output committed as the baseline) measures nothing, and against it a candidate with 17 of 18 replay
    misses passed every check: drop 0% -> 5.6% a gain, default min-answered 0.9 x 0% = 0%, exit 0."""
    base = write_run(tmp_path / "base", _missed("m" * 18))
    cand = write_run(tmp_path / "cand", _missed("c" + "m" * 17), info=run_info("cand"))
    res = _gate(cand, "--baseline", base, "--max-drop", "0.02")
    assert res.exit_code == 1, res.output
    assert (
        "FAIL  errors [agent baseline]: 18 of 18 samples ended in an error, 18 of them replay misses "
        "(required: not all)"
    ) in res.output
    assert "failed: errors[agent baseline]" in res.output
    # a baseline with one answer measures something: the check holds (the answered share decides)
    ok = write_run(tmp_path / "ok", _missed("c" + "m" * 17), info=run_info("ok"))
    res = _gate(cand, "--baseline", ok)
    assert res.exit_code == 0, res.output
    assert "PASS  errors [agent baseline]: 17 of 18 samples ended in an error" in res.output


def test_an_answered_share_exactly_at_the_default_threshold_passes(tmp_path: Path) -> None:
    """Review rev-gate2: the default min-answered is 0.9 x the baseline's share, and 0.9 * 0.8 is
    0.7200000000000001 in floating point: a candidate answering 72 of 100 against a baseline's 80 of 100
    failed `72.0% (required >= 72.0%)`, so did 9 of 13 against 10 of 13 (69.2%), where the README says it
    fails when below."""
    base = load_run(write_run(tmp_path / "base", outcomes("c" * 72 + "i" * 8 + "e" * 20)))
    run = load_run(write_run(tmp_path / "run", outcomes("c" * 72 + "e" * 28), info=run_info("run")))
    answered = _rule(evaluate_gate(run, GateRules(), base), "min-answered[agent]")
    assert answered.measured == 0.72 and answered.passed, answered.message
    base = load_run(write_run(tmp_path / "b13", outcomes("c" * 10 + "e" * 3)))
    run = load_run(write_run(tmp_path / "r13", outcomes("c" * 9 + "e" * 4), info=run_info("r13")))
    answered = _rule(evaluate_gate(run, GateRules(max_drop=1.0), base), "min-answered[agent]")
    assert answered.passed, answered.message
    # one answer fewer is below it
    run = load_run(write_run(tmp_path / "r12", outcomes("c" * 8 + "e" * 5), info=run_info("r12")))
    assert not _rule(evaluate_gate(run, GateRules(max_drop=1.0), base), "min-answered[agent]").passed


def _repeated_split(lost: int, gained: int, rest: int) -> tuple[list, list]:
    """(baseline, candidate) of 3 repeats: ``lost`` questions right in every repeat of the baseline and
    wrong in every repeat of the candidate, ``gained`` questions wrong in the baseline and right in one
    repeat of the candidate, ``rest`` questions wrong in both."""
    n = lost + gained + rest
    base, cand = [], []
    for r in range(3):
        a = "c" * lost + "i" * (gained + rest)
        b = "i" * lost + ("c" if r == 0 else "i") * gained + "i" * rest
        base += [s.model_copy(update={"repeat": r}) for s in outcomes(a)]
        cand += [s.model_copy(update={"repeat": r}) for s in outcomes(b)]
    assert len(base) == 3 * n
    return base, cand


def test_a_drop_the_test_by_question_sees_as_a_gain_is_not_a_significant_regression(tmp_path: Path) -> None:
    """Review rev-gate2 (FinanceBench's extractive run, --repeats 3, edited): 10 questions lost in all 3
    repeats, 25 gained in one, a drop of 1.7 pp over 300 samples; McNemar by question, 10 lost / 25
    gained, p = 0.0167, was read as 'significant at alpha 0.05: regression', exit 1. The test found more
    questions gained: it is no evidence of a regression, and the drop is treated as noise, said why."""
    base_rows, cand_rows = _repeated_split(10, 25, 65)
    base = write_run(tmp_path / "base", base_rows, info=run_info("base", repeats=3))
    cand = write_run(tmp_path / "cand", cand_rows, info=run_info("cand", repeats=3))
    res = _gate(cand, "--baseline", base, "--max-drop", "1%")
    assert res.exit_code == 0, res.output
    assert (
        "PASS  max-drop [agent]: drop +1.7 pp vs baseline base (10.0% -> 8.3% on 300 shared samples, "
        "30 lost / 25 gained, 10 lost / 25 gained by question, McNemar p=0.0167) (allowed <= 1.0 pp); "
        "not significant at alpha 0.05: treated as noise (by question the test finds more gained than "
        "lost: no evidence of a drop)"
    ) in res.output


def test_a_figure_just_off_its_threshold_is_shown_with_digits_that_tell_them_apart(tmp_path: Path) -> None:
    """Review rev-gate2: the demo's extractive run (7 of 18 correct) gated with the 38.9% its summary
    shows failed 'min-accuracy [extractive]: 38.9% (required >= 38.9%)', and bm25's 2,004.33 tokens a
    question against 2,004 'max-tokens-per-question [bm25]: 2,004 (required <= 2,004)': a FAIL line
    whose two figures read the same. They are now shown with as many digits as tell them apart."""
    run = load_run(write_run(tmp_path / "run", outcomes("c" * 7 + "i" * 11), info=run_info("run")))
    rule = _rule(evaluate_gate(run, GateRules(min_accuracy=0.389)), "min-accuracy[agent]")
    assert not rule.passed and rule.message == "min-accuracy [agent]: 38.89% (required >= 38.90%)"
    rows = [sample(f"q{k}", retriever_prompt_tokens=1000 + (k == 0)) for k in range(3)]
    tok = load_run(write_run(tmp_path / "tok", rows, info=run_info("tok")))
    res = evaluate_gate(tok, GateRules(max_tokens_per_question=1100))
    rule = _rule(res, "max-tokens-per-question[agent]")
    assert not rule.passed
    assert rule.message == "max-tokens-per-question [agent]: 1,100.3 (required <= 1,100.0)"
    # figures that read apart keep one decimal (a share) or none (tokens)
    rule = _rule(evaluate_gate(run, GateRules(min_accuracy=0.5)), "min-accuracy[agent]")
    assert rule.message == "min-accuracy [agent]: 38.9% (required >= 50.0%)"
    # min-answered: 9 of 13 answered against 69.3%
    ans = load_run(write_run(tmp_path / "ans", outcomes("c" * 9 + "e" * 4), info=run_info("ans")))
    rule = _rule(evaluate_gate(ans, GateRules(min_answered=0.6925)), "min-answered[agent]")
    assert not rule.passed and rule.message.startswith("min-answered [agent]: 69.23% (required >= 69.25%):")


def test_a_samples_file_holding_a_sample_twice_with_different_outcomes_fails(tmp_path: Path) -> None:
    """Review rev-gate (session 26): a run's samples.jsonl with the baseline's correct rows put in front of
    the run's own regressed rows (a file merged by hand) passed every check, with one warning per repeat:
    loading keeps a key's first row. Such a file is no one measurement: `complete` fails, also with
    --allow-partial. A row repeated as it was is only warned about, as before."""
    base = write_run(tmp_path / "base", outcomes("cccc"))
    own = outcomes("ccci")
    run = write_run(tmp_path / "run", own, info=run_info("run"))
    with (run / "samples.jsonl").open("a", encoding="utf-8") as fh:  # the run's first row again, as it was
        fh.write(own[0].model_dump_json() + "\n")
    res = _gate(run, "--baseline", base, "--max-drop", "0.5")
    assert res.exit_code == 0 and "line 5 repeats sample" in res.output, res.output  # warned of only

    regressed = outcomes("iiic")
    merged = write_run(tmp_path / "merged", outcomes("ccc") + regressed, info=run_info("merged"))
    res = _gate(merged, "--baseline", base, "--max-drop", "0.5")
    assert res.exit_code == 1, res.output
    said = " ".join(res.output.split())
    assert (
        f"FAIL complete [run]: {merged}/samples.jsonl holds 3 samples twice with different outcomes "
        "(q000 [agent]: correct, then incorrect; q001 [agent]: correct, then incorrect; q002 [agent]: "
        "correct, then incorrect): edited or merged by hand"
    ) in said, res.output
    assert _gate(merged, "--baseline", base, "--max-drop", "0.5", "--allow-partial").exit_code == 1
    assert _gate(merged, "--min-accuracy", "0.5").exit_code == 1  # without a baseline too
