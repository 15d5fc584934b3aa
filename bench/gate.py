"""A yes/no for CI: does a run meet its accuracy, cost and answer-rate rules?

``evaluate_gate(run, GateRules(...), baseline)`` checks every rule for each retriever of the run (or
the one named) and returns a :class:`GateResult` (exit code 0 when all hold, 1 when any fails).
Unusable input (no samples, unknown retriever, no samples shared with the baseline) raises
:class:`GateInputError` (exit code 2). A drop against the baseline fails only when it is larger
than ``max_drop`` AND the paired test calls it significant at ``alpha``, so one flaky question
does not fail a build. ``write_junit`` writes the outcome as JUnit XML.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from pydantic import BaseModel, Field

from bench.compare import TestMethod, compare_pairs, run_differences, shared_pairs
from bench.summary import Run, samples_frame, summarize_group

EXIT_OK, EXIT_FAILED, EXIT_UNUSABLE = 0, 1, 2


class GateInputError(ValueError):
    """The gate cannot judge this input (exit code 2)."""


class GateRules(BaseModel):
    min_accuracy: float | None = None  # over all samples (errors count as not correct)
    max_drop: float | None = None  # accuracy drop vs baseline, as a fraction (0.05 = 5 points)
    max_tokens_per_question: float | None = None  # mean retriever tokens per sample
    min_answered: float | None = None  # share of samples with status "answer"
    retriever: str | None = None  # only this retriever; default: each retriever of the run
    alpha: float = 0.05
    method: TestMethod = "mcnemar"


class RuleResult(BaseModel):
    rule: str  # min-accuracy | max-drop | max-tokens-per-question | min-answered
    scope: str  # retriever name
    passed: bool
    measured: float | None
    threshold: float
    message: str  # one line: measured value, threshold and verdict

    @property
    def name(self) -> str:
        return f"{self.rule}[{self.scope}]"


class GateResult(BaseModel):
    run_id: str
    baseline_id: str | None = None
    rules: list[RuleResult] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.rules)

    @property
    def exit_code(self) -> int:
        return EXIT_OK if self.passed else EXIT_FAILED

    def lines(self) -> list[str]:
        return [("PASS  " if r.passed else "FAIL  ") + r.message for r in self.rules]


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _scopes(run: Run, rules: GateRules) -> list[str]:
    if not run.samples:
        raise GateInputError(f"run {run.run_id} ({run.path}) has no samples")
    present = sorted({s.retriever for s in run.samples})
    if rules.retriever is None:
        return present
    if rules.retriever not in present:
        raise GateInputError(
            f"run {run.run_id} has no samples of retriever {rules.retriever!r} (it has: {', '.join(present)})"
        )
    return [rules.retriever]


def _check(rule: str, scope: str, measured: float | None, threshold: float, upper: bool, fmt) -> RuleResult:
    passed = measured is not None and (measured <= threshold if upper else measured >= threshold)
    op = "<=" if upper else ">="
    shown = "n/a" if measured is None else fmt(measured)
    return RuleResult(
        rule=rule,
        scope=scope,
        passed=passed,
        measured=measured,
        threshold=threshold,
        message=f"{rule} [{scope}]: {shown} (required {op} {fmt(threshold)})",
    )


def _drop_rule(run: Run, baseline: Run, scope: str, rules: GateRules) -> RuleResult:
    pairs = shared_pairs(baseline, run, scope)
    if not pairs:
        raise GateInputError(
            f"run {run.run_id} and baseline {baseline.run_id} ({baseline.path}) share no samples "
            f"of retriever {scope!r}"
        )
    cmp = compare_pairs(pairs, "retriever", scope, rules.method, rules.alpha)
    drop = -cmp.diff
    max_drop = rules.max_drop or 0.0
    too_big = drop > max_drop + 1e-12
    failed = too_big and cmp.significant
    if failed:
        verdict = f"significant at alpha {rules.alpha}: regression"
    elif too_big:
        verdict = f"not significant at alpha {rules.alpha}: treated as noise"
    else:
        verdict = "within the allowed drop"
    test = "McNemar" if rules.method == "mcnemar" else "paired bootstrap"
    message = (
        f"max-drop [{scope}]: drop {100 * drop + 0.0:+.1f} pp vs baseline {baseline.run_id} "
        f"({_pct(cmp.accuracy_a.value)} -> {_pct(cmp.accuracy_b.value)} on {cmp.n_pairs} shared samples, "
        f"{len(cmp.regressed)} lost / {len(cmp.improved)} gained, {test} p={cmp.test.p_value:.3g}) "
        f"(allowed <= {100 * max_drop:.1f} pp); {verdict}"
    )
    return RuleResult(
        rule="max-drop", scope=scope, passed=not failed, measured=drop, threshold=max_drop, message=message
    )


def evaluate_gate(run: Run, rules: GateRules, baseline: Run | None = None) -> GateResult:
    """Check every rule for every retriever in scope."""
    if rules.max_drop is not None and baseline is None:
        raise GateInputError("--max-drop needs --baseline RUN")
    if (
        rules.min_accuracy is None
        and rules.max_tokens_per_question is None
        and rules.min_answered is None
        and baseline is None
    ):
        raise GateInputError(
            "no rules given: use --min-accuracy, --baseline/--max-drop, "
            "--max-tokens-per-question or --min-answered"
        )
    scopes = _scopes(run, rules)
    if baseline is not None:
        if not shared_pairs(baseline, run, rules.retriever):
            raise GateInputError(
                f"run {run.run_id} and baseline {baseline.run_id} ({baseline.path}) share no samples "
                "(same question_id, retriever and repeat)"
            )
    frame = samples_frame(run.samples, run.info.model)
    result = GateResult(
        run_id=run.run_id,
        baseline_id=baseline.run_id if baseline else None,
        warnings=list(run.warnings) + (run_differences(baseline, run) if baseline else []),
    )
    for scope in scopes:
        g = summarize_group(frame[frame["retriever"] == scope], "retriever", scope)
        if rules.min_accuracy is not None:
            result.rules.append(
                _check("min-accuracy", scope, g.accuracy.value, rules.min_accuracy, False, _pct)
            )
        if baseline is not None:
            result.rules.append(_drop_rule(run, baseline, scope, rules))
        if rules.max_tokens_per_question is not None:
            result.rules.append(
                _check(
                    "max-tokens-per-question",
                    scope,
                    g.tokens_per_question.mean,
                    rules.max_tokens_per_question,
                    True,
                    lambda x: f"{x:,.0f}",
                )
            )
        if rules.min_answered is not None:
            result.rules.append(
                _check("min-answered", scope, g.answered_rate, rules.min_answered, False, _pct)
            )
    return result


def write_junit(path: str | Path, result: GateResult | None, error: str | None = None) -> Path:
    """JUnit XML: one test case per rule (a ``failure`` when it fails); an unusable input is one
    test case with an ``error``."""
    path = Path(path)
    suite = ET.Element("testsuite", name="pageindex-bench-gate")
    cases: list[ET.Element] = []
    failures = errors = 0
    run_id = result.run_id if result else "input"
    if error is not None:
        case = ET.Element("testcase", classname=f"gate.{run_id}", name="input", time="0")
        ET.SubElement(case, "error", message=error, type="GateInputError").text = error
        cases.append(case)
        errors = 1
    if result is not None:
        for r in result.rules:
            case = ET.Element("testcase", classname=f"gate.{run_id}", name=r.name, time="0")
            if not r.passed:
                ET.SubElement(case, "failure", message=r.message, type="GateRuleFailed").text = r.message
                failures += 1
            else:
                ET.SubElement(case, "system-out").text = r.message
            cases.append(case)
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    suite.extend(cases)
    if result is not None and result.warnings:
        ET.SubElement(suite, "system-err").text = "\n".join(result.warnings)
    root = ET.Element("testsuites", tests=str(len(cases)), failures=str(failures), errors=str(errors))
    root.append(suite)
    ET.indent(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
    return path
