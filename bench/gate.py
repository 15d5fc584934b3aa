"""A yes/no for CI: does a run meet its accuracy, cost and answer-rate rules?

``evaluate_gate(run, GateRules(...), baseline)`` checks every rule for each retriever of the run (or
the one named) and returns a :class:`GateResult` (exit code 0 when all hold, 1 when any fails),
one :class:`RuleResult` per check and retriever:

- ``complete`` (one per gate, and one for the baseline): the run finished (``run.json`` status
  ``finished``); a run that was interrupted, killed, stopped by its budget or failed fails the gate
  unless ``allow_partial`` (then it is judged on the samples it has). So does an unfinished baseline:
  a drop measured on the few samples a budget-stopped baseline holds is no regression check.
- ``coverage`` (with a baseline): the run holds every (question, retriever, repeat) of the
  baseline. A partial run fails unless ``allow_partial``; then every other check of that retriever
  uses only the samples both runs share.
- ``errors``: not every sample ended in an error (replay misses counted apart in the message); with a
  baseline, not every baseline sample of the retriever either (``errors [RETRIEVER baseline]``): a
  baseline that measured nothing passed any run.
- ``judged``: every answer has a verdict that decides it (a judge call that failed leaves none, a judge
  that abstains says ``uncertain``: re-score the run with ``bench rejudge``); with a baseline, every
  baseline answer the drop is measured on too (``judged [RETRIEVER baseline]``), or the drop would be
  measured against answers counted wrong.
- ``min-accuracy``, ``max-tokens-per-question``: as given.
- ``max-drop`` (with a baseline): a drop fails only when it is larger than ``max_drop`` AND the
  paired test calls it significant at ``alpha``, so one flaky question does not fail a build; where
  the test could not call any drop significant (too few questions or documents: its ``smallest_p`` is
  at least ``alpha``), on ``max_drop`` alone.
- ``min-answered``: share of samples with status ``answer`` (errors, replay misses included, and
  ``fail`` count against it). With a baseline and no ``min_answered``, the default is
  :data:`DEFAULT_ANSWERED_FACTOR` times the baseline's answered share on the same samples.

Unusable input (no samples, unknown retriever, no samples shared with the baseline) raises
:class:`GateInputError` (exit code 2); so do runs that are not comparable (different judge, tree
builder or dataset: see :func:`bench.compare.check_comparable`) unless ``allow_changed``.
``write_junit`` writes the outcome as JUnit XML.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from bench.compare import (
    NotComparable,
    TestMethod,
    check_comparable,
    compare_pairs,
    run_differences,
    shared_pairs,
)
from bench.rundir import SAMPLES, Run, named_apart, resume_run_command
from bench.runinfo import rejudge_command
from bench.samples import Sample, unjudged_answers
from bench.summary import samples_frame, summarize_group
from pageindex.atomic import same_file, write_atomic
from pageindex.wording import counted, shortened

EXIT_OK, EXIT_FAILED, EXIT_UNUSABLE = 0, 1, 2
DEFAULT_ANSWERED_FACTOR = 0.9
_LISTED_MISSING = 5
# how far a figure may miss its threshold by floating-point rounding alone: 0.9 x 80% is
# 0.7200000000000001, and 72 of 100 answered failed "72.0% (required >= 72.0%)"
_ROUNDING = 1e-12


# control characters (C0, DEL, C1) and code points XML 1.0 cannot hold
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def printable(text: str) -> str:
    """``text`` with every control character written as its escape (``\\x1b``, ``\\n``): a judge error,
    a question id or a folder name may hold one, which made the JUnit XML unparseable (an ESC or NUL is
    no XML 1.0 character), coloured the terminal or split a PASS/FAIL line in two."""
    return _UNPRINTABLE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


class GateInputError(ValueError):
    """The gate cannot judge this input (exit code 2)."""


class GateRules(BaseModel):
    min_accuracy: float | None = None  # over all samples (errors count as not correct)
    max_drop: float | None = None  # accuracy drop vs baseline, as a fraction (0.05 = 5 points)
    max_tokens_per_question: float | None = None  # mean retriever tokens per sample
    min_answered: float | None = None  # share of samples with status "answer"; default from baseline
    retriever: str | None = None  # only this retriever; default: each retriever of the run
    alpha: float = 0.05
    method: TestMethod = "mcnemar"
    allow_partial: bool = False  # a run missing baseline samples is judged on the shared ones
    allow_changed: bool = False  # compare runs whose judge, builder or dataset differ


class RuleResult(BaseModel):
    rule: str  # coverage | errors | min-accuracy | max-drop | max-tokens-per-question | min-answered
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
    def failed(self) -> list[RuleResult]:
        return [r for r in self.rules if not r.passed]

    @property
    def exit_code(self) -> int:
        return EXIT_OK if self.passed else EXIT_FAILED

    def lines(self) -> list[str]:
        return [("PASS  " if r.passed else "FAIL  ") + printable(r.message) for r in self.rules]

    def verdict_line(self) -> str:
        held = sum(r.passed for r in self.rules)
        line = f"gate {'passed' if self.passed else 'FAILED'}: {held}/{len(self.rules)} rules hold"
        if not self.passed:
            line += "; failed: " + ", ".join(r.name for r in self.failed)
        return printable(line)


def is_replay_miss(sample: Sample) -> bool:
    """An error because the replay cache did not hold a request this run made."""
    error = (sample.error or "").lower()
    return sample.status == "error" and ("replaymiss" in error or "replay miss" in error)


def _pct(x: float, digits: int = 1) -> str:
    return f"{100 * x:.{digits}f}%"


def _tokens(x: float, digits: int = 0) -> str:
    return f"{x:,.{digits}f}"


def _apart(fmt, measured: float, threshold: float) -> tuple[str, str]:
    """``measured`` and ``threshold`` as ``fmt`` writes them (``fmt(x, digits)``), with as many more
    digits as tell apart two figures that differ: 7 of 18 against a --min-accuracy of 38.9% failed as
    "38.9% (required >= 38.9%)", now "38.89% (required >= 38.90%)". Figures apart only by rounding
    error (0.72 and 0.9 x 0.8) are shown as they are at the fewest digits."""
    shown = fmt(measured), fmt(threshold)
    if measured == threshold or abs(measured - threshold) <= _ROUNDING or shown[0] != shown[1]:
        return shown
    for digits in range(1, 7):  # a share's one decimal, then more; tokens' none, then some
        more = fmt(measured, digits), fmt(threshold, digits)
        if more[0] != more[1]:
            return more
    return shown


def _key_text(key: tuple[str, str, int]) -> str:
    question_id, _, repeat = key
    return f"{question_id}#{repeat}" if repeat else question_id


def _scopes(run: Run, rules: GateRules, baseline: Run | None) -> list[str]:
    present = {s.retriever for s in run.samples}
    wanted = present | ({s.retriever for s in baseline.samples} if baseline is not None else set())
    if rules.retriever is None:
        return sorted(wanted)
    if rules.retriever not in wanted:
        runs = f"run {run.run_id}" + (f" or baseline {baseline.run_id}" if baseline is not None else "")
        raise GateInputError(
            f"{runs} has no samples of retriever {rules.retriever!r} (it has: {', '.join(sorted(wanted))})"
        )
    if baseline is not None and rules.retriever not in (kept := {s.retriever for s in baseline.samples}):
        # the one retriever asked for shares no sample with the baseline: no coverage, drop or answered
        # check could be made, and the gate passed on errors and judged alone (exit 0)
        raise GateInputError(
            f"baseline {baseline.run_id} ({baseline.path}) has no samples of retriever {rules.retriever!r} "
            f"(it has: {', '.join(sorted(kept))}): no drop can be measured; gate {rules.retriever} "
            "without --baseline, or against a baseline that ran it"
        )
    return [rules.retriever]


def _check(rule: str, scope: str, measured: float | None, threshold: float, upper: bool, fmt) -> RuleResult:
    """A figure against its limit; one exactly on it holds (``required <=`` or ``>=``)."""
    passed = measured is not None and (
        measured <= threshold + _ROUNDING if upper else measured >= threshold - _ROUNDING
    )
    op = "<=" if upper else ">="
    shown, limit = ("n/a", fmt(threshold)) if measured is None else _apart(fmt, measured, threshold)
    return RuleResult(
        rule=rule,
        scope=scope,
        passed=passed,
        measured=measured,
        threshold=threshold,
        message=f"{rule} [{scope}]: {shown} (required {op} {limit})",
    )


def _coverage_rule(
    scope: str, base_keys: set, run_keys: set, baseline: Run, allow_partial: bool, run: Run
) -> RuleResult:
    shared = base_keys & run_keys
    missing = sorted(base_keys - run_keys)
    measured = len(shared) / len(base_keys) if base_keys else 1.0
    head = f"coverage [{scope}]: {len(shared)} of {len(base_keys)} samples of baseline {baseline.run_id}"
    if not missing:
        return RuleResult(
            rule="coverage", scope=scope, passed=True, measured=measured, threshold=1.0, message=head
        )
    head += f" (missing {len(missing)}: {shortened(map(_key_text, missing), _LISTED_MISSING)})"
    passed = allow_partial and bool(shared)
    if passed:
        tail = f"; --allow-partial: the checks below use the {len(shared)} shared samples"
    elif not shared:
        # the run names itself, and why it has none where it skipped the retriever ("RUN has no samples")
        skipped = run.info.skipped_retrievers.get(scope)
        why = f" (it skipped it: {skipped})" if skipped else ""
        tail = f"; {run.run_id} has no samples of it{why} (--retriever NAME gates one retriever only)"
    else:
        tail = "; required: all (--allow-partial judges the shared samples only)"
    return RuleResult(
        rule="coverage", scope=scope, passed=passed, measured=measured, threshold=1.0, message=head + tail
    )


def _errors_rule(scope: str, samples: Sequence[Sample], *, baseline: Run | None = None) -> RuleResult:
    """Not every sample ended in an error; of the ``baseline`` (its samples the run is gated on) too:
    a baseline that measured nothing lets any run pass against it."""
    errors = sum(s.status == "error" for s in samples)
    misses = sum(is_replay_miss(s) for s in samples)
    n = len(samples)
    passed = n > 0 and errors < n
    message = (
        f"errors [{scope}]: {errors} of {n} samples ended in an error, {misses} of them replay misses "
        "(required: not all)"
    )
    if baseline is not None and not passed:
        message += (
            f"; baseline {baseline.run_id} measured nothing to compare with: record it again "
            "(a replay baseline needs its recording)"
        )
    return RuleResult(
        rule="errors",
        scope=scope,
        passed=passed,
        measured=errors / n if n else None,
        threshold=1.0,
        message=message,
    )


def _rewritten_samples(run: Run) -> list[str]:
    """The rows of ``run``'s samples file that repeat a sample already in it with another outcome (status
    or verdict), as "q007 [agent]: correct, then incorrect". The runner writes a sample once; loading
    keeps the first row of a key and warns of the others, so a file edited or merged by hand (a
    regressed run's rows after the baseline's) read as its first rows, and passed."""
    from bench.samples import read_samples_file

    path = run.path / SAMPLES
    try:
        rows = read_samples_file(path, keep_repeats=True)[0]
    except (OSError, ValueError):  # loading the run read it: a file changed since is not this check's
        return []
    first: dict[tuple[str, str, int], Sample] = {}
    found = []
    for row in rows:
        kept = first.setdefault(row.key, row)
        if kept is not row and (kept.status, kept.verdict) != (row.status, row.verdict):
            was, then = kept.verdict or kept.status, row.verdict or row.status
            found.append(f"{_key_text(row.key)} [{row.retriever}]: {was}, then {then}")
    return found


def _complete_rule(run: Run, allow_partial: bool, *, role: str = "run") -> RuleResult:
    """``role`` is ``run`` (the run gated) or ``baseline`` (the run it is compared with)."""
    if rewritten := _rewritten_samples(run):
        shown = "; ".join(rewritten[:3]) + ("; ..." if len(rewritten) > 3 else "")
        return RuleResult(
            rule="complete",
            scope=role,
            passed=False,
            measured=0.0,
            threshold=1.0,
            message=(
                f"complete [{role}]: {run.path}/{SAMPLES} holds {counted(len(rewritten), 'sample')} twice "
                f"with different outcomes ({shown}): "
                "edited or merged by hand, it is no one measurement; required: one row per sample "
                "(the run's own file, or a new run)"
            ),
        )
    status = run.info.status
    done = status == "finished"
    detail = run.info.status_detail if status == "failed" else None
    why = f" ({detail.split(' (')[0].split(': ')[0]})" if detail else ""  # the cause, not its particulars
    # a killed run's "running" said so, and a finished rejudge's status named as the re-scored run's
    shown, held_text = (status, counted(len(run.samples), "sample")) if done else (
        run.status_text(), run.samples_text()
    )
    head = f"complete [{role}]: {run.run_id} is {shown}{why} with {held_text}"
    listed, held = run.listed_samples()
    lost = done and held < listed  # a finished run holds every sample it lists: these were lost since
    if lost:
        info = run.info
        head = (
            f"complete [{role}]: {run.run_id} is finished but holds {held} of the {listed} samples its "
            f"run.json lists ({counted(info.dataset.questions, 'question')} x "
            f"{counted(len(info.retrievers), 'retriever')} x {counted(info.repeats, 'repeat')}): "
            f"{run.path}/samples.jsonl lost some since the run ended (cut short, or a torn last line)"
        )
        done = False
    if done:
        tail = ""
    elif allow_partial:
        tail = "; --allow-partial: the checks below use the samples it has"
    else:
        required = "all of them" if lost else "finished"
        tail = f"; required: {required} (--allow-partial judges the samples it has)"
        if not lost and not detail and (command := run.continue_command()):
            tail += f"; finish it with: {command}"
        elif lost and not run.info.extra.get("rejudge"):  # a resume runs the samples it lacks again
            tail += f"; run the missing ones again with: {resume_run_command(run.path)}"
    return RuleResult(
        rule="complete",
        scope=role,
        passed=done or allow_partial,
        measured=1.0 if done else 0.0,
        threshold=1.0,
        message=head + tail,
    )


def _judged_rule(run: Run, scope: str, samples: Sequence[Sample]) -> RuleResult:
    """Every answer has a verdict that decides it: none whose judge call failed, and none ``uncertain``
    (a judge that abstained). An uncertain answer counts as not correct in the accuracy and is left
    out of the paired drop, so a run whose answers turned uncertain would pass ``max-drop`` measured on
    the rest; the gate does not decide on answers nobody judged."""
    answers, unjudged = unjudged_answers(samples)
    uncertain = [s for s in answers if s.verdict == "uncertain"]
    decided = len(answers) - len(unjudged) - len(uncertain)
    message = f"judged [{scope}]: {decided} of {len(answers)} answers have a verdict"
    if not answers:  # "0 of 0 answers have a verdict" read as if something had been checked
        message = f"judged [{scope}]: no answer to judge (none of {counted(len(samples), 'sample')} answered)"
    if unjudged or uncertain:
        first = next((s.judge_error for s in unjudged if s.judge_error), None)
        missing = []
        if unjudged:
            have = "has" if len(unjudged) == 1 else "have"
            missing.append(f"{len(unjudged)} {have} none" + (f" (judge failed: {first})" if first else ""))
        if uncertain:
            n = len(uncertain)
            missing.append(f"{n} {'is' if n == 1 else 'are'} uncertain (the judge abstained)")
        # the judge that abstained would abstain again: name one that decides every answer (trial 14)
        again = rejudge_command(run.path, run.info, judge="rules" if uncertain else None)
        message += f"; {'; '.join(missing)}; required: all — re-score with `{again}`"
        if uncertain:
            message += " (or --judge llm or hybrid with a model: judges that decide every answer)"
    return RuleResult(
        rule="judged",
        scope=scope,
        passed=not unjudged and not uncertain,
        measured=decided / len(answers) if answers else None,
        threshold=1.0,
        message=message,
    )


def _answered_rule(
    scope: str, samples: Sequence[Sample], threshold: float, baseline_share: float | None
) -> RuleResult:
    n = len(samples)
    answered = sum(s.status == "answer" for s in samples)
    errors = sum(s.status == "error" for s in samples)
    misses = sum(is_replay_miss(s) for s in samples)
    fails = sum(s.status == "fail" for s in samples)
    rule = _check("min-answered", scope, answered / n if n else None, threshold, False, _pct)
    default = ""
    if baseline_share is not None:
        default = f", default {DEFAULT_ANSWERED_FACTOR:g} x the baseline's {_pct(baseline_share)}"
    shown, limit = ("n/a", _pct(threshold)) if not n else _apart(_pct, answered / n, threshold)
    rule.message = (
        f"min-answered [{scope}]: {shown} (required >= {limit}"
        f"{default}): {answered} of {n} answered, {counted(errors, 'error')} "
        f"({counted(misses, 'replay miss', 'replay misses')}), {counted(fails, 'fail')}"
    )
    return rule


def _drop_rule(
    baseline: Run, scope: str, pairs: list[tuple[Sample, Sample]], rules: GateRules
) -> RuleResult:
    cmp = compare_pairs(pairs, "retriever", scope, rules.method, rules.alpha)
    max_drop = rules.max_drop or 0.0
    if not cmp.n_pairs:  # every shared pair has an uncertain side: no drop can be measured
        return RuleResult(
            rule="max-drop",
            scope=scope,
            passed=False,
            measured=None,
            threshold=max_drop,
            message=(
                f"max-drop [{scope}]: none of the {len(pairs)} samples shared with baseline "
                f"{baseline.run_id} "
                "has a decided verdict in both runs (uncertain on one side): no drop can be measured"
            ),
        )
    drop = -cmp.diff
    too_big = drop > max_drop + _ROUNDING
    # a test that could not call any drop significant here (too few questions or documents) would pass
    # every drop, 100% -> 0% included (the bootstrap over the demo's 3 documents): the threshold decides
    powerless = cmp.test.powerless(rules.alpha)
    failed = too_big and (cmp.significant or powerless)
    if failed and not cmp.significant:
        unit = "question" if rules.method == "mcnemar" else "document"
        other = "" if rules.method == "mcnemar" else "--test mcnemar, "
        verdict = (
            f"regression: the test over {counted(cmp.test.units, unit)} cannot call any drop significant "
            f"at alpha {rules.alpha} (smallest p {cmp.test.smallest_p:.3g}), so a drop above the allowed "
            f"fails (use {other}more {unit}s, or a larger --max-drop)"
        )
    elif failed:
        verdict = f"significant at alpha {rules.alpha}: regression"
    elif too_big:
        verdict = f"not significant at alpha {rules.alpha}: treated as noise"
        if cmp.test.significant_against(rules.alpha):
            verdict += " (by question the test finds more gained than lost: no evidence of a drop)"
    else:
        verdict = "within the allowed drop"
    test = "McNemar" if rules.method == "mcnemar" else "paired bootstrap"
    by_question = (cmp.test.a_only, cmp.test.b_only) != (len(cmp.regressed), len(cmp.improved))
    if rules.method == "mcnemar" and by_question:  # repeats: the test counts each question once
        test = f"{cmp.test.a_only} lost / {cmp.test.b_only} gained by question, {test}"
    # a gain is said as one ("drop -25.0 pp" read as a drop); no change stays "drop +0.0 pp"
    change = f"gain +{-100 * drop:.1f} pp" if round(100 * drop, 1) < 0 else f"drop {100 * drop + 0.0:+.1f} pp"
    message = (
        f"max-drop [{scope}]: {change} vs baseline {baseline.run_id} "
        f"({_pct(cmp.accuracy_a.value)} -> {_pct(cmp.accuracy_b.value)} on {cmp.n_pairs} shared samples, "
        f"{len(cmp.regressed)} lost / {len(cmp.improved)} gained, {test} p={cmp.test.p_value:.3g}) "
        f"(allowed <= {100 * max_drop:.1f} pp); {verdict}"
    )
    return RuleResult(
        rule="max-drop", scope=scope, passed=not failed, measured=drop, threshold=max_drop, message=message
    )


def evaluate_gate(run: Run, rules: GateRules, baseline: Run | None = None) -> GateResult:
    """Check every rule for every retriever in scope (see the module docstring)."""
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
    if not run.samples:  # with a baseline too: nothing to check is bad input (exit 2), not a failed check
        status = "" if run.info.status == "finished" else f"; it is {run.info.status}"
        raise GateInputError(f"run {run.run_id} ({run.path}) has no samples{status}{run.why_no_samples()}")
    warnings = list(run.warnings)
    if baseline is not None:
        if not baseline.samples:
            raise GateInputError(
                f"baseline {baseline.run_id} ({baseline.path}) has no samples{baseline.why_no_samples()}"
            )
        if same_file(run.path, baseline.path):  # every check against itself holds: nothing is gated
            raise GateInputError(
                f"run {run.path} and baseline {baseline.path} are the same run folder: a run compared with "
                "itself passes every check against the baseline; give the baseline's own folder"
            )
        run_id = run.run_id  # the JUnit file's class name keeps the run's own id
        # two runs with one id (a baseline copied from a run folder) are named by their folders, as
        # compare and the reports name them: "run sInt has 34 samples that baseline sInt lacks"
        run, baseline = named_apart([run, baseline])
        try:
            provenance = check_comparable(baseline, run, allow_changed=rules.allow_changed)
        except NotComparable as exc:
            raise GateInputError(str(exc)) from None
        base_all = {s.key for s in baseline.samples}
        if run.samples and not base_all & {s.key for s in run.samples}:
            raise GateInputError(
                f"run {run.run_id} and baseline {baseline.run_id} ({baseline.path}) share no samples "
                "(same question_id, retriever and repeat)"
            )
        # the baseline's own load warnings (a torn last line, a repeated sample row) as the run's are
        warnings += baseline.warnings
        warnings += run_differences(baseline, run, allowed=rules.allow_changed) + provenance
    scopes = _scopes(run, rules, baseline)
    result = GateResult(
        run_id=run_id if baseline is not None else run.run_id,
        baseline_id=baseline.run_id if baseline else None,
        warnings=warnings,
    )
    result.rules.append(_complete_rule(run, rules.allow_partial))
    if baseline is not None:
        result.rules.append(_complete_rule(baseline, rules.allow_partial, role="baseline"))
    for scope in scopes:
        mine = [s for s in run.samples if s.retriever == scope]
        base = [s for s in baseline.samples if s.retriever == scope] if baseline is not None else []
        if baseline is not None and not base:
            result.warnings.append(
                f"baseline {baseline.run_id} has no samples of retriever {scope!r}: no coverage or drop check"
            )
        if base:
            base_keys, run_keys = {s.key for s in base}, {s.key for s in mine}
            coverage = _coverage_rule(scope, base_keys, run_keys, baseline, rules.allow_partial, run)
            result.rules.append(coverage)
            if extra := len(run_keys - base_keys):  # a baseline of a subset: said, not silently unchecked
                result.warnings.append(
                    f"run {run.run_id} has {counted(extra, 'sample')} of retriever {scope!r} that baseline "
                    f"{baseline.run_id} lacks: no drop is measured on them"
                )
            if rules.allow_partial and base_keys - run_keys:
                mine = [s for s in mine if s.key in base_keys]
            judged = {s.key for s in mine}
            base = [s for s in base if s.key in judged]
        if not mine:
            continue  # coverage failed: nothing of this retriever to judge
        result.rules.append(_errors_rule(scope, mine))
        result.rules.append(_judged_rule(run, scope, mine))
        g = summarize_group(samples_frame(mine, run.info.model), "retriever", scope)
        if rules.min_accuracy is not None:
            result.rules.append(
                _check("min-accuracy", scope, g.accuracy.value, rules.min_accuracy, False, _pct)
            )
        if base and baseline is not None:  # (base is only ever a baseline's samples)
            # a baseline whose every sample ended in an error (all replay misses) measures nothing:
            # against it any drop read as a gain and the default min-answered was 0.9 x 0%
            result.rules.append(_errors_rule(f"{scope} baseline", base, baseline=baseline))
            # a baseline answer without a verdict counts as not correct: any drop measured against
            # it is unknown, so the baseline must be judged too
            result.rules.append(_judged_rule(baseline, f"{scope} baseline", base))
            pairs = shared_pairs(baseline, run, scope)
            result.rules.append(_drop_rule(baseline, scope, pairs, rules))
        if rules.max_tokens_per_question is not None:
            result.rules.append(
                _check(
                    "max-tokens-per-question",
                    scope,
                    g.tokens_per_question.mean,
                    rules.max_tokens_per_question,
                    True,
                    _tokens,
                )
            )
        if rules.min_answered is not None:
            result.rules.append(_answered_rule(scope, mine, rules.min_answered, None))
        elif base:
            share = sum(s.status == "answer" for s in base) / len(base)
            result.rules.append(_answered_rule(scope, mine, DEFAULT_ANSWERED_FACTOR * share, share))
    return result


def is_junit_file(path: Path) -> bool:
    """Whether ``path`` holds JUnit XML (what ``bench gate --junit`` may replace)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(512).lstrip()
    except OSError:
        return False
    return head.startswith(b"<?xml") or head.startswith(b"<testsuite")


def write_junit(
    path: str | Path, result: GateResult | None, error: str | None = None, error_type: str = "GateInputError"
) -> Path:
    """JUnit XML: one test case per rule (a ``failure`` when it fails); an unusable input is one
    test case with an ``error`` of ``error_type`` (``UsageError`` for a command line that did not parse)."""
    path = Path(path)
    error = None if error is None else printable(error)
    suite = ET.Element("testsuite", name="pageindex-bench-gate")
    cases: list[ET.Element] = []
    failures = errors = 0
    run_id = printable(result.run_id) if result else "input"
    if error is not None:
        case = ET.Element("testcase", classname=f"gate.{run_id}", name="input", time="0")
        ET.SubElement(case, "error", message=error, type=error_type).text = error
        cases.append(case)
        errors = 1
    if result is not None:
        for r in result.rules:
            case = ET.Element("testcase", classname=f"gate.{run_id}", name=printable(r.name), time="0")
            message = printable(r.message)
            if not r.passed:
                ET.SubElement(case, "failure", message=message, type="GateRuleFailed").text = message
                failures += 1
            else:
                ET.SubElement(case, "system-out").text = message
            cases.append(case)
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    suite.extend(cases)
    if result is not None and result.warnings:
        ET.SubElement(suite, "system-err").text = "\n".join(printable(w) for w in result.warnings)
    root = ET.Element("testsuites", tests=str(len(cases)), failures=str(failures), errors=str(errors))
    root.append(suite)
    ET.indent(root)
    # written whole (temp file + rename): a write that failed part-way left an earlier report half written
    write_atomic(path, ET.tostring(root, encoding="utf-8", xml_declaration=True))
    return path
