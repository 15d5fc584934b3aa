"""The planner's plan: a small DAG of tasks, and the checks a plan must pass before it runs.

Three kinds of task:

- ``fetch_extract``: read ``node_ids`` (1..3 sections) and extract the named ``outputs``;
- ``compute``: evaluate ``expression`` (arithmetic over output names of its dependencies)
  into ``output``;
- ``synthesise``: write the answer from everything computed so far (exactly one per plan).

:func:`validate_plan` rejects a plan with a clear message (duplicate ids, a dependency on a
task that does not exist, a cycle, a compute expression that is not arithmetic, names a
value no dependency produces or gives a function the wrong number of arguments, ...); on a
re-plan the already completed tasks count as part of the plan, so new tasks may depend on them.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Literal

from pydantic import BaseModel, Field

from pageindex.wording import counted

TaskKind = Literal["fetch_extract", "compute", "synthesise"]
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class Task(BaseModel):
    """One step of a plan."""

    id: str = Field(description="short unique id, e.g. t1")
    kind: TaskKind
    goal: str = Field("", description="what this task must produce, in words")
    depends_on: list[str] = Field(default_factory=list, description="ids of tasks whose results it uses")
    node_ids: list[str] = Field(default_factory=list, description="fetch_extract: section ids to read")
    outputs: list[str] = Field(
        default_factory=list, description="fetch_extract: names of the values to extract (snake_case)"
    )
    expression: str | None = Field(
        None, description="compute: arithmetic over output names of dependencies, e.g. capex / revenue * 100"
    )
    output: str | None = Field(None, description="compute: name of the computed value")

    def produces(self) -> list[str]:
        if self.kind == "fetch_extract":
            return list(self.outputs)
        if self.kind == "compute" and self.output:
            return [self.output]
        return []


class Plan(BaseModel):
    """What the planner model returns."""

    tasks: list[Task] = Field(description="the tasks, any order; dependencies make the DAG")
    rationale: str = Field("", description="one or two sentences on the approach")


class PlanError(ValueError):
    """A plan that cannot run; the message is shown to the planner when it re-plans."""


# ----------------------------------------------------------------------------- expressions
_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos}


class ExpressionError(ValueError):
    """An expression that is not plain arithmetic, or that cannot be evaluated."""


def _round(value: float, digits: float = 0) -> float:
    """``round(value, digits)``: values reach functions as floats, the digits must be a whole number."""
    if digits != int(digits):
        raise ExpressionError(f"round's digits must be a whole number, not {digits:g}")
    return round(value, int(digits))


_FUNCS: dict[str, Callable[..., float]] = {"abs": abs, "min": min, "max": max, "round": _round}
# the arguments each function takes: fewest, most (None: no limit), in words
_ARITY: dict[str, tuple[int, int | None, str]] = {
    "abs": (1, 1, "one number"),
    "min": (2, None, "two or more numbers"),
    "max": (2, None, "two or more numbers"),
    "round": (1, 2, "a number and optionally its digits"),
}


def _arity_problem(name: str, given: int) -> str | None:
    fewest, most, wanted = _ARITY[name]
    if given < fewest or (most is not None and given > most):
        return f"{name}() takes {wanted}, not {counted(given, 'argument')}"
    return None


def _parse_expression(expression: str) -> ast.Expression:
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"expression {expression!r} is not valid arithmetic: {exc.msg}") from None
    for node in ast.walk(tree):
        allowed = (
            ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.Name, ast.Load, ast.Call,
            *_BINOPS, *_UNARY,
        )
        if not isinstance(node, allowed):
            raise ExpressionError(
                f"expression {expression!r} uses {type(node).__name__}; only + - * / **, numbers, "
                f"value names and {', '.join(_FUNCS)} are allowed"
            )
        if isinstance(node, ast.Constant) and not isinstance(node.value, int | float):
            raise ExpressionError(f"expression {expression!r} contains a non-number {node.value!r}")
        if isinstance(node, ast.Call):
            if not (isinstance(node.func, ast.Name) and node.func.id in _FUNCS):
                raise ExpressionError(
                    f"expression {expression!r} calls a function other than {', '.join(_FUNCS)}"
                )
            problem = _arity_problem(node.func.id, len(node.args))
            if problem:
                raise ExpressionError(f"expression {expression!r}: {problem}")
    return tree


def expression_names(expression: str) -> set[str]:
    """Value names an expression reads (function names excluded)."""
    tree = _parse_expression(expression)
    funcs = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - funcs


def evaluate(expression: str, values: Mapping[str, float]) -> float:
    """Evaluate arithmetic ``expression`` with ``values``; :class:`ExpressionError` on any problem.

    Any problem includes what only evaluation shows (an overflow, a negative number to a fractional
    power, a result that is not a finite number): a compute task fails with the reason and is
    re-planned; it never ends the retrieval.
    """
    tree = _parse_expression(expression)

    def ev(node: ast.AST) -> float:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant):
            return float(node.value)
        if isinstance(node, ast.Name):
            if node.id not in values:
                have = ", ".join(sorted(values)) or "none"
                raise ExpressionError(f"no value named {node.id!r} (have: {have})")
            return float(values[node.id])
        if isinstance(node, ast.BinOp):
            left, right = ev(node.left), ev(node.right)
            if isinstance(node.op, ast.Div) and right == 0:
                raise ExpressionError(f"division by zero in {expression!r}")
            if isinstance(node.op, ast.Pow) and abs(right) > 100:
                raise ExpressionError(f"exponent too large in {expression!r}")
            result = _BINOPS[type(node.op)](left, right)
            if isinstance(result, complex):
                raise ExpressionError(f"{expression!r} has no real value (a negative number to a fraction)")
            return float(result)
        if isinstance(node, ast.UnaryOp):
            return float(_UNARY[type(node.op)](ev(node.operand)))
        if isinstance(node, ast.Call):
            args = [ev(a) for a in node.args]
            return float(_FUNCS[node.func.id](*args))  # type: ignore[union-attr]
        raise ExpressionError(f"cannot evaluate {type(node).__name__}")

    try:
        result = ev(tree)
    except ExpressionError:
        raise
    except (ArithmeticError, TypeError, ValueError) as exc:
        raise ExpressionError(f"cannot evaluate {expression!r}: {exc}") from None
    if not math.isfinite(result):
        raise ExpressionError(f"{expression!r} is {result}, not a finite number")
    return result


# ----------------------------------------------------------------------------- validation
def find_cycle(edges: Mapping[str, Iterable[str]]) -> list[str] | None:
    """A dependency cycle as a path ``[a, b, a]``, or None. ``edges[x]`` = tasks x depends on."""
    state: dict[str, int] = {}  # 1 = on the stack, 2 = done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for dep in edges.get(node, ()):
            if dep not in edges:
                continue
            if state.get(dep) == 1:
                return stack[stack.index(dep):] + [dep]
            if state.get(dep) is None:
                found = visit(dep)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in edges:
        if state.get(node) is None:
            found = visit(node)
            if found:
                return found
    return None


def validate_plan(
    plan: Plan,
    *,
    done: Mapping[str, Task] | None = None,
    max_tasks: int = 8,
    max_sections_per_task: int = 3,
) -> None:
    """Raise :class:`PlanError` naming every problem of ``plan`` (``done``: completed tasks it may use)."""
    done = done or {}
    problems: list[str] = []
    tasks = plan.tasks
    if not tasks:
        raise PlanError("the plan has no tasks")
    if len(tasks) > max_tasks:
        problems.append(f"the plan has {len(tasks)} tasks; at most {max_tasks} are allowed")
    ids = [t.id for t in tasks]
    for dup in sorted({i for i in ids if ids.count(i) > 1}):
        problems.append(f"task id {dup!r} is used more than once")
    for t in tasks:
        if t.id in done:
            problems.append(f"task id {t.id!r} is already a completed task; give new tasks new ids")
    known = set(ids) | set(done)
    by_id = {t.id: t for t in tasks}
    for t in tasks:
        for dep in t.depends_on:
            if dep == t.id:
                problems.append(f"task {t.id!r} depends on itself")
            elif dep not in known:
                problems.append(f"task {t.id!r} depends on {dep!r}, which is not a task of the plan")
    cycle = find_cycle({t.id: [d for d in t.depends_on if d != t.id] for t in tasks})
    if cycle:
        problems.append("the plan has a dependency cycle: " + " -> ".join(cycle))
    synth = [t for t in tasks if t.kind == "synthesise"]
    if len(synth) != 1:
        problems.append(f"the plan needs exactly one synthesise task (it has {len(synth)})")
    for t in tasks:
        if t.kind == "fetch_extract":
            if not t.node_ids:
                problems.append(f"fetch_extract task {t.id!r} names no node_ids to read")
            if len(t.node_ids) > max_sections_per_task:
                problems.append(
                    f"fetch_extract task {t.id!r} reads {len(t.node_ids)} sections; "
                    f"at most {max_sections_per_task} per task"
                )
            if not t.outputs:
                problems.append(f"fetch_extract task {t.id!r} names no outputs to extract")
            for name in t.outputs:
                if not _NAME.match(name):
                    problems.append(f"output name {name!r} of task {t.id!r} is not a snake_case identifier")
        elif t.kind == "compute":
            if not t.expression or not t.output:
                problems.append(f"compute task {t.id!r} needs both an expression and an output name")
                continue
            if not _NAME.match(t.output):
                problems.append(f"output name {t.output!r} of task {t.id!r} is not a snake_case identifier")
            try:
                names = expression_names(t.expression)
            except ExpressionError as exc:
                problems.append(f"compute task {t.id!r}: {exc}")
                continue
            available: set[str] = set()
            for dep in t.depends_on:
                source = by_id.get(dep) or done.get(dep)
                if source is not None:
                    available |= set(source.produces())
            missing = sorted(names - available)
            if missing:
                problems.append(
                    f"compute task {t.id!r} uses {', '.join(missing)}, which none of its dependencies "
                    f"({', '.join(t.depends_on) or 'none'}) produces"
                )
    if problems:
        raise PlanError("; ".join(problems))


def topological_order(tasks: Iterable[Task]) -> list[str]:
    """Task ids with every task after its dependencies (assumes a validated plan)."""
    tasks = list(tasks)
    ids = {t.id for t in tasks}
    remaining = {t.id: {d for d in t.depends_on if d in ids} for t in tasks}
    order: list[str] = []
    while remaining:
        ready = sorted(i for i, deps in remaining.items() if not deps)
        if not ready:
            raise PlanError("the plan has a dependency cycle")
        for i in ready:
            order.append(i)
            del remaining[i]
        for deps in remaining.values():
            deps.difference_update(ready)
    return order
