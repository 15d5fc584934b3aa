"""The gate: rules, exit codes, messages and JUnit XML over hand-made runs."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bench.gate import GateInputError, GateRules, evaluate_gate, write_junit
from bench.summary import load_run
from pageindex.cli import app
from tests.bench.runfactory import outcomes, run_info, write_run

runner = CliRunner()


def _gate(*args: str):
    return runner.invoke(app, ["bench", "gate", *map(str, args)], terminal_width=250)


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
    only_agent = evaluate_gate(run, GateRules(min_accuracy=0.6, retriever="agent"))
    assert only_agent.exit_code == 0 and [r.scope for r in only_agent.rules] == ["agent"]


def test_drop_fails_only_when_larger_than_allowed_and_significant(tmp_path: Path) -> None:
    base = load_run(write_run(tmp_path / "base", outcomes("c" * 30)))
    # 12 questions lost: 40 points, p = 2 * 0.5**12 -> regression
    bad = load_run(write_run(tmp_path / "bad", outcomes("i" * 12 + "c" * 18), info=run_info("bad")))
    res = evaluate_gate(bad, GateRules(max_drop=0.05), base)
    (rule,) = res.rules
    assert not rule.passed and rule.measured == pytest.approx(0.4)
    assert "12 lost / 0 gained" in rule.message and "regression" in rule.message
    # 2 questions lost: 6.7 points > 5 allowed, but p = 0.5: noise, the build passes
    flaky = load_run(write_run(tmp_path / "flaky", outcomes("ii" + "c" * 28), info=run_info("flaky")))
    (rule,) = evaluate_gate(flaky, GateRules(max_drop=0.05), base).rules
    assert rule.passed and rule.measured == pytest.approx(2 / 30)
    assert "treated as noise" in rule.message and "p=0.5" in rule.message
    # same significant drop but allowed up to 50 points
    (rule,) = evaluate_gate(bad, GateRules(max_drop=0.5), base).rules
    assert rule.passed and "within the allowed drop" in rule.message


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
    assert "gate passed: 2/2 rules hold" in res.output

    junit = tmp_path / "out" / "gate.xml"
    res = _gate(bad, "--min-accuracy", "0.9", "--baseline", base, "--max-drop", "0.05", "--junit", junit)
    assert res.exit_code == 1, res.output
    assert "FAIL  min-accuracy [agent]: 60.0% (required >= 90.0%)" in res.output
    assert "FAIL  max-drop [agent]: drop +40.0 pp" in res.output
    root = ET.parse(junit).getroot()
    suite = root.find("testsuite")
    assert suite.get("tests") == "2" and suite.get("failures") == "2"
    names = [c.get("name") for c in suite.iter("testcase")]
    assert names == ["min-accuracy[agent]", "max-drop[agent]"]
    assert all(c.find("failure") is not None for c in suite.iter("testcase"))

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
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("2", "0", "0")
