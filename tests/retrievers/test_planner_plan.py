"""The plan model: validation with clear errors, arithmetic, number parsing along edges."""

from __future__ import annotations

import re

import pytest
from pydantic import BaseModel

from pageindex.retrievers.numbers import Numeric, find_numbers, parse_number, try_number
from pageindex.retrievers.planner_plan import (
    ExpressionError,
    Plan,
    PlanError,
    Task,
    evaluate,
    find_cycle,
    topological_order,
    validate_plan,
)


def fx(tid: str, outputs: list[str], deps: list[str] | None = None) -> Task:
    return Task(id=tid, kind="fetch_extract", node_ids=["item_8/cash_flows"], outputs=outputs,
                depends_on=deps or [])


def synth(deps: list[str], tid: str = "s") -> Task:
    return Task(id=tid, kind="synthesise", depends_on=deps)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1,577", 1577.0),
        ("(1,577)", -1577.0),
        (1577.0, 1577.0),
        (1577, 1577.0),
        ("1577.0", 1577.0),
        ("$1,577", 1577.0),
        ("$ (1,577)", -1577.0),
        ("-1,577", -1577.0),
        ("\u22121,577", -1577.0),
        ("$1.6 billion", 1.6e9),
        ("3 million USD", 3e6),
        ("12.5%", 12.5),
        ("$8.70", 8.7),
    ],
)
def test_numbers_parse_accounting_formats(text, value):
    assert parse_number(text) == pytest.approx(value)

    class Carrier(BaseModel):
        x: Numeric

    assert Carrier(x=text).x == pytest.approx(value)


@pytest.mark.parametrize("text", ["abc", "(1,577", "1,57,7", "", None, True, float("nan")])
def test_numbers_reject_non_numbers(text):
    assert try_number(text) is None


def test_find_numbers_on_a_statement_line():
    found = find_numbers("Purchases of property, plant and equipment (PP&E) (1,577) (1,373) $ 5,363 pre-2018")
    assert [(f.text, f.value) for f in found] == [
        ("(1,577)", -1577.0), ("(1,373)", -1373.0), ("$ 5,363", 5363.0), ("2018", 2018.0)
    ]


def test_valid_plan_and_order():
    plan = Plan(tasks=[
        synth(["c"]),
        Task(id="c", kind="compute", depends_on=["a", "b"], expression="a_v / b_v * 100", output="pct"),
        fx("b", ["b_v"]),
        fx("a", ["a_v"]),
    ])
    validate_plan(plan)
    assert topological_order(plan.tasks) == ["a", "b", "c", "s"]


def test_cycle_is_rejected_with_the_path():
    plan = Plan(tasks=[fx("t1", ["x"], ["t2"]), fx("t2", ["y"], ["t1"]), synth(["t1", "t2"])])
    with pytest.raises(PlanError, match=r"dependency cycle: t1 -> t2 -> t1"):
        validate_plan(plan)
    assert find_cycle({"a": ["b"], "b": ["c"], "c": ["a"]}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": ["b"], "b": []}) is None


def test_dangling_dependency_is_rejected_by_name():
    plan = Plan(tasks=[fx("t1", ["x"]), synth(["t1", "t9"])])
    with pytest.raises(PlanError, match=r"task 's' depends on 't9', which is not a task of the plan"):
        validate_plan(plan)


def test_completed_tasks_count_as_part_of_a_replan():
    done = {"t1": fx("t1", ["capex"])}
    plan = Plan(tasks=[
        fx("t5", ["revenue"]),
        Task(id="t6", kind="compute", depends_on=["t1", "t5"], expression="capex / revenue", output="r"),
        synth(["t6"]),
    ])
    validate_plan(plan, done=done)
    with pytest.raises(PlanError, match="already a completed task"):
        validate_plan(Plan(tasks=[fx("t1", ["capex"]), synth(["t1"])]), done=done)


@pytest.mark.parametrize(
    ("tasks", "message"),
    [
        ([fx("a", ["x"]), fx("a", ["y"]), synth(["a"])], "task id 'a' is used more than once"),
        ([fx("a", ["x"])], "exactly one synthesise task (it has 0)"),
        ([fx("a", ["x"]), synth(["a"]), synth(["a"], "s2")], "exactly one synthesise task (it has 2)"),
        ([Task(id="a", kind="fetch_extract", outputs=["x"]), synth(["a"])], "names no node_ids"),
        ([Task(id="a", kind="fetch_extract", node_ids=["n"]), synth(["a"])], "names no outputs"),
        ([fx("a", ["Capex 2018"]), synth(["a"])], "not a snake_case identifier"),
        ([fx("a", ["x"]), Task(id="c", kind="compute", depends_on=["a"], expression="x + y", output="z"),
          synth(["c"])], "uses y, which none of its dependencies (a) produces"),
        ([fx("a", ["x"]), Task(id="c", kind="compute", depends_on=["a"], expression="__import__('os')",
          output="z"), synth(["c"])], "calls a function other than"),
        ([fx("a", ["x"]), Task(id="c", kind="compute", depends_on=["a"], output="z"), synth(["c"])],
         "needs both an expression and an output"),
        ([fx("a", ["x"], ["a"]), synth(["a"])], "task 'a' depends on itself"),
    ],
)
def test_invalid_plans_name_the_problem(tasks, message):
    with pytest.raises(PlanError) as info:
        validate_plan(Plan(tasks=tasks))
    assert message in str(info.value)


def test_task_and_section_caps():
    many = [fx(f"t{i}", [f"v{i}"]) for i in range(9)] + [synth([f"t{i}" for i in range(9)])]
    with pytest.raises(PlanError, match="10 tasks; at most 8"):
        validate_plan(Plan(tasks=many))
    wide = Task(id="a", kind="fetch_extract", node_ids=["n1", "n2", "n3", "n4"], outputs=["x"])
    with pytest.raises(PlanError, match="reads 4 sections; at most 3"):
        validate_plan(Plan(tasks=[wide, synth(["a"])]))


def test_evaluate_arithmetic_only():
    assert evaluate("abs(capex) / revenue * 100", {"capex": -1577.0, "revenue": 32765.0}) == pytest.approx(
        4.813062719
    )
    assert evaluate("(a + b) / 2", {"a": 1.0, "b": 2.0}) == 1.5
    with pytest.raises(ExpressionError, match="division by zero"):
        evaluate("a / b", {"a": 1.0, "b": 0.0})
    with pytest.raises(ExpressionError, match="no value named 'c'"):
        evaluate("a + c", {"a": 1.0})
    with pytest.raises(ExpressionError, match="uses Attribute"):
        evaluate("a.real", {"a": 1.0})
    with pytest.raises(ExpressionError, match="not valid arithmetic"):
        evaluate("a +", {"a": 1.0})


def test_round_takes_its_digits_as_a_whole_number():
    values = {"pct": 4.813062719, "big": 1577.0}
    assert evaluate("round(pct, 1)", values) == 4.8
    assert evaluate("round(pct)", values) == 5.0
    assert evaluate("round(big, -2)", values) == 1600.0
    with pytest.raises(ExpressionError, match="round's digits must be a whole number, not 1.5"):
        evaluate("round(pct, 1.5)", values)


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("max()", "max() takes two or more numbers, not 0 arguments"),
        ("min(x)", "min() takes two or more numbers, not 1 argument"),
        ("abs(x, x)", "abs() takes one number, not 2 arguments"),
        ("round(x, 1, 2)", "round() takes a number and optionally its digits, not 3 arguments"),
    ],
)
def test_a_function_given_the_wrong_number_of_arguments_is_rejected_before_it_runs(expression, message):
    compute = Task(id="c", kind="compute", depends_on=["a"], expression=expression, output="z")
    with pytest.raises(PlanError) as info:
        validate_plan(Plan(tasks=[fx("a", ["x"]), compute, synth(["c"])]))
    assert message in str(info.value)
    with pytest.raises(ExpressionError, match=re.escape(message)):
        evaluate(expression, {"x": 1.0})


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("(0 - x) ** 0.5", "has no real value"),
        ("0 ** -1", "cannot evaluate"),
        ("x ** 100", "cannot evaluate"),  # overflows
        ("x * 1e300", "not a finite number"),
    ],
)
def test_what_only_evaluation_shows_is_an_expression_error(expression, message):
    validate_plan(Plan(tasks=[
        fx("a", ["x"]), Task(id="c", kind="compute", depends_on=["a"], expression=expression, output="z"),
        synth(["c"]),
    ]))  # valid arithmetic: the problem shows only with the values
    with pytest.raises(ExpressionError, match=message):
        evaluate(expression, {"x": 1e10})
