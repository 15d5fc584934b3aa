"""Compare two runs on the samples they share (same question, retriever and repeat).

``compare_runs(run_a, run_b, by=...)`` gives, per group: each run's accuracy with its Wilson
interval, the difference (B - A) with a paired test (exact McNemar on discordant pairs, or a
paired bootstrap), the questions that flipped each way and the changes in cost-like figures.
Runs that differ in dataset, judge or judge prompt version carry ``warnings`` saying what differs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from bench.rundir import Run, named_apart
from bench.runinfo import options_text, provenance, rejudge_command
from bench.samples import Sample, unjudged_answers
from bench.stats import PairedTest, Proportion, accuracy_interval, paired_test
from bench.summary import NO_VALUE, ci_text
from pageindex.wording import counted

CompareBy = Literal["retriever", "model", "question_type", "doc_type", "overall"]
TestMethod = Literal["mcnemar", "bootstrap"]
SHORT_QUESTION = 80


class NoSharedSamples(ValueError):
    """The two runs have no (question, retriever, repeat) in common."""


class Flip(BaseModel):
    question_id: str
    retriever: str
    repeat: int = 0
    question: str = ""  # whole (`--json`); displays shorten it
    verdict_a: str  # Sample.outcome: the verdict, unjudged or error
    verdict_b: str


class MetricDelta(BaseModel):
    metric: str
    a: float | None
    b: float | None
    delta: float | None  # b - a; None when either is unknown


class GroupComparison(BaseModel):
    by: str
    group: str
    n_pairs: int
    accuracy_a: Proportion
    accuracy_b: Proportion
    diff: float  # accuracy B - accuracy A on the shared samples
    test: PairedTest
    significant: bool
    improved: list[Flip] = Field(default_factory=list)  # not correct in A, correct in B
    regressed: list[Flip] = Field(default_factory=list)  # correct in A, not correct in B
    deltas: list[MetricDelta] = Field(default_factory=list)

    def delta(self, metric: str) -> MetricDelta | None:
        return next((d for d in self.deltas if d.metric == metric), None)


class Comparison(BaseModel):
    run_a: str
    run_b: str
    path_a: str = ""
    path_b: str = ""
    by: str
    method: str
    alpha: float
    warnings: list[str] = Field(default_factory=list)
    # groups whose paired test could not call any difference significant (see powerless_notes)
    notes: list[str] = Field(default_factory=list)
    # what B was asked to do differently from A (setting_differences): the change being measured
    settings: list[str] = Field(default_factory=list)
    shared: int
    only_a: int
    only_b: int
    overall: GroupComparison
    groups: list[GroupComparison] = Field(default_factory=list)

    @property
    def shared_text(self) -> str:
        """``15 shared samples``, and how many of them the paired figures leave out (an ``uncertain``
        verdict on one side), so the pairs in the tables add up (trial 14)."""
        left_out = self.shared - self.overall.n_pairs
        tail = f" ({left_out} left out of the paired figures: uncertain on one side)" if left_out else ""
        return f"{self.shared} shared samples{tail}"


def _bare_model(spec: str) -> str:
    return spec.split("/", 1)[1] if "/" in spec else spec


def _same_model(a: str | None, b: str | None) -> bool:
    """Equal specs, or a ``replay/<model>`` run against the run that recorded ``<provider>/<model>``
    (replay answers from exactly those recorded replies: the CI recipe)."""
    if a == b:
        return True
    if not a or not b:
        return False
    from pageindex.llm.providers.replay import is_replay

    pa, pb = (",".join(_bare_model(m) for m in x.split(",")) for x in (a, b))
    return pa == pb and any(is_replay(m) for x in (a, b) for m in x.split(","))


def run_differences(a: Run, b: Run, *, allowed: bool = False) -> list[str]:
    """What makes two runs' accuracy figures not comparable like for like, as warnings: every
    difference :func:`comparability` finds (judge, its version and model, tree builder, dataset
    content; marked as let through when ``allowed``, i.e. ``--allow-changed``), then the dataset
    file and name, the judge prompt version and unfinished runs."""
    ia, ib = a.info, b.info
    tag = " (allowed by --allow-changed)" if allowed else ""
    differences = comparability(a, b).differences
    out = [f"{d.field} differs: {d.values}{tag}" for d in differences]
    checks: list[tuple[str, Any, Any]] = [
        ("judge prompt version", ia.judge_prompt_version, ib.judge_prompt_version)
    ]
    if not any(d.field == "dataset content hash" for d in differences):
        # the content hash's line already names differing datasets: one difference, said once (trial 13)
        checks = [
            ("dataset hash", ia.dataset.sha256 or None, ib.dataset.sha256 or None),
            ("dataset", ia.dataset.name or None, ib.dataset.name or None),
            *checks,
        ]
    for what, va, vb in checks:
        if va != vb:
            out.append(f"{what} differs: {_values(what, a, b, va, vb)}")
    return out + [w for run in (a, b) if (w := unfinished_warning(run))]


def unfinished_warning(run: Run) -> str | None:
    """``run X is interrupted, not finished (18 of 120 samples)`` for a run that did not finish (a
    killed one said so: :meth:`bench.rundir.Run.status_text`); None for a finished run."""
    if run.info.status == "finished":
        return None
    return f"run {run.run_id} is {run.status_text()}, not finished ({run.samples_text()})"


def setting_differences(a: Run, b: Run) -> list[str]:
    """What the two runs were asked to do differently, as ``bench compare`` and the reports say it (not
    warnings: this is what a comparison is made to measure): the answering model, the options and prompt
    version of each retriever both ran, a plug-in retriever's or judge's code (where both runs record it),
    and the repeats. Before, nothing said it: two runs whose only difference was ``--opt
    extractive.top_k=1`` showed identical rows in a report's runs table."""
    ia, ib = a.info, b.info
    name_a, name_b = (run.run_id for run in named_apart([a, b]))
    out: list[str] = []

    def differ(what: str, va: Any, vb: Any) -> None:
        if va != vb:
            out.append(f"{what}: {name_a}={va} vs {name_b}={vb}")

    if not _same_model(ia.model, ib.model):  # a replay/M run answers with M's recorded replies (CI recipe)
        differ("model", ia.model or NO_VALUE, ib.model or NO_VALUE)
    both = [r for r in ia.retrievers if r in ib.retrievers]
    for r in both:
        differ(
            f"{r} options",
            options_text(ia.retriever_options.get(r)),
            options_text(ib.retriever_options.get(r)),
        )
        va, vb = ia.prompt_versions.get(r), ib.prompt_versions.get(r)
        if va is not None and vb is not None:  # a run that does not record it is not said to differ
            differ(f"{r} prompt version", va or NO_VALUE, vb or NO_VALUE)
        ca, cb = ia.retriever_code.get(r), ib.retriever_code.get(r)
        if ca and cb:  # a plug-in's code: two versions of one plug-in recorded the same name and options
            differ(f"{r} plug-in code", ca, cb)
    if ia.judge == ib.judge and ia.judge_code and ib.judge_code:
        differ(f"judge {ia.judge} plug-in code", ia.judge_code, ib.judge_code)
    differ("repeats", max(ia.repeats, 1), max(ib.repeats, 1))
    return out


# ----------------------------------------------------------------------------- comparability
class NotComparable(ValueError):
    """Two runs were scored under different conditions (judge, tree builder or dataset)."""


class Difference(BaseModel):
    field: str  # judge | judge version | judge model | tree builder version | dataset content hash
    a: str | None
    b: str | None
    values: str  # "A=x vs B=y" (content hashes shortened to 12 characters, differing datasets named)

    @property
    def text(self) -> str:
        """``judge version A=x vs B=y``: how a refusal names the difference."""
        return f"{self.field} {self.values}"


class Comparability(BaseModel):
    """What :func:`comparability` found: differences (refused unless allowed) and, per run,
    provenance it does not record (a warning: it was written before provenance was recorded)."""

    differences: list[Difference] = Field(default_factory=list)
    unrecorded: list[str] = Field(default_factory=list)

    @property
    def comparable(self) -> bool:
        return not self.differences


def _provenance(a: Run, b: Run) -> list[tuple[str, str | None, str | None]]:
    pa, pb = provenance(a.info), provenance(b.info)
    return [(what, pa[what], pb[what]) for what in pa]


def comparability(a: Run, b: Run) -> Comparability:
    """Whether runs A and B were scored alike: same judge (name, version and model; a replay of
    the recorded model counts as the same), tree builder version and dataset content hash. A
    field that a run does not record is never a difference; it is listed in ``unrecorded``. (The
    judge model is always recorded: None means a judge without a model.)"""
    out = Comparability()
    missing: dict[str, list[str]] = {}
    runs: dict[str, Run] = {}
    for what, va, vb in _provenance(a, b):
        if what != "judge model" and (va is None or vb is None):
            for run, value in ((a, va), (b, vb)):
                if value is None:
                    missing.setdefault(run.run_id, []).append(what)
                    runs[run.run_id] = run
            continue
        same = _same_model(va, vb) if what == "judge model" else va == vb
        if not same:
            out.differences.append(Difference(field=what, a=va, b=vb, values=_values(what, a, b, va, vb)))
    for run_id, fields in missing.items():
        # its verdicts may be an older judge's: a change in accuracy may be the judge's alone (upgrade
        # review: 55.6% -> 38.9% against a b58837b baseline was a rules change, and the gate passed it)
        run = runs[run_id]
        rescore = (
            f"; to score its answers with today's judge: {rejudge_command(run.path, run.info)}"
            if "judge version" in fields and run.info.judge
            else ""
        )
        out.unrecorded.append(
            f"run {run_id} does not record its {', '.join(fields)} (written before provenance was "
            f"recorded): not checked{rescore}"
        )
    return out


def check_comparable(a: Run, b: Run, *, allow_changed: bool = False) -> list[str]:
    """Raise :class:`NotComparable` (one line, "not comparable: ..." naming what differs) unless
    the runs were scored alike or ``allow_changed``. Returns the warnings :func:`run_differences`
    does not give: provenance a run does not record (the differences ``allow_changed`` let through
    are among ``run_differences``')."""
    found = comparability(a, b)
    if found.differences and not allow_changed:
        raise NotComparable(
            "not comparable: " + "; ".join(d.text for d in found.differences) + f" ({_remedy(found)})"
        )
    return found.unrecorded


def _values(what: str, a: Run, b: Run, va: str | None, vb: str | None) -> str:
    """``A=x vs B=y`` for one difference; a dataset content hash shortened, with the datasets'
    names when they differ."""
    name_a, name_b = (run.run_id for run in named_apart([a, b]))
    if what != "dataset content hash":
        return f"{name_a}={va or NO_VALUE} vs {name_b}={vb or NO_VALUE}"
    names = (a.info.dataset.name or NO_VALUE, b.info.dataset.name or NO_VALUE)
    named = f" (datasets {names[0]} vs {names[1]})" if names[0] != names[1] else ""
    return f"{name_a}={(va or NO_VALUE)[:12]} vs {name_b}={(vb or NO_VALUE)[:12]}{named}"


def _remedy(found: Comparability) -> str:
    """What can make the runs comparable: a rejudge only mends a judge difference."""
    fields = {d.field for d in found.differences}
    steps = []
    if fields & {"judge", "judge version", "judge model"}:
        steps.append("re-score one with `pageindex bench rejudge`")
    if "tree builder version" in fields:
        steps.append("run both with the same tree builder (pageindex and pymupdf releases)")
    if "dataset content hash" in fields:
        steps.append("compare runs of the same dataset")
    return ", ".join(steps) + ", or pass --allow-changed"


def short_question(text: str, limit: int = SHORT_QUESTION) -> str:
    """A question on one line, cut to ``limit`` characters with an ellipsis (how displays list flips)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _mean(values: Sequence[float | None]) -> float | None:
    if not values or any(v is None for v in values):
        return None
    return float(sum(values)) / len(values)  # type: ignore[arg-type]


def _rate(values: Sequence[bool | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


_METRICS: dict[str, Callable[[Sequence[Sample]], float | None]] = {
    "tokens_per_question": lambda ss: _mean([s.tokens for s in ss]),
    "llm_calls": lambda ss: _mean([s.llm_calls for s in ss]),
    "iterations": lambda ss: _mean([s.iterations for s in ss]),
    "tool_calls": lambda ss: _mean([s.tool_calls for s in ss]),
    "latency_s": lambda ss: _mean([s.latency_s for s in ss]),
    "cost_per_question": lambda ss: _mean([s.cost_usd for s in ss]),
    "evidence_hit_rate": lambda ss: _rate([s.evidence_hit for s in ss]),
    "answered_rate": lambda ss: _rate([s.status == "answer" for s in ss]),
}


def _group_key(by: CompareBy, a: Sample, b: Sample, default_a: str | None, default_b: str | None) -> str:
    if by == "overall":
        return "all"
    if by == "model":
        ma, mb = a.model or default_a or NO_VALUE, b.model or default_b or NO_VALUE
        return ma if ma == mb else f"{ma} -> {mb}"
    return getattr(a, by) or NO_VALUE


def compare_pairs(
    pairs: Sequence[tuple[Sample, Sample]],
    by: str,
    group: str,
    method: TestMethod = "mcnemar",
    alpha: float = 0.05,
) -> GroupComparison:
    """Compare one group of paired samples (A, B). A pair where either verdict is ``uncertain`` (the
    judge abstained) is left out: neither side's outcome is known."""
    pairs = [(a, b) for a, b in pairs if "uncertain" not in (a.verdict, b.verdict)]
    ya = [1.0 if a.verdict == "correct" else 0.0 for a, _ in pairs]
    yb = [1.0 if b.verdict == "correct" else 0.0 for _, b in pairs]
    units = [a.unit for a, _ in pairs]  # repeats of one question: one unit
    test = paired_test(ya, yb, method, clusters=[a.doc_id or a.question_id for a, _ in pairs], units=units)
    improved, regressed = [], []
    for (a, b), xa, xb in zip(pairs, ya, yb, strict=True):
        if xa == xb:
            continue
        flip = Flip(
            question_id=a.question_id,
            retriever=a.retriever,
            repeat=a.repeat,
            question=a.question or b.question,
            verdict_a=a.outcome,
            verdict_b=b.outcome,
        )
        (improved if xb > xa else regressed).append(flip)
    sa = [a for a, _ in pairs]
    sb = [b for _, b in pairs]
    deltas = []
    for metric, fn in _METRICS.items():
        va, vb = fn(sa), fn(sb)
        deltas.append(
            MetricDelta(metric=metric, a=va, b=vb, delta=None if va is None or vb is None else vb - va)
        )
    acc_a, acc_b = accuracy_interval(ya, units), accuracy_interval(yb, units)
    return GroupComparison(
        by=by,
        group=group,
        n_pairs=len(pairs),
        accuracy_a=acc_a,
        accuracy_b=acc_b,
        diff=test.diff,
        test=test,
        significant=test.significant(alpha),
        improved=improved,
        regressed=regressed,
        deltas=deltas,
    )


def shared_pairs(a: Run, b: Run, retriever: str | None = None) -> list[tuple[Sample, Sample]]:
    """Samples present in both runs, in A's order; optionally of one retriever."""
    index_b = {s.key: s for s in b.samples}
    return [
        (s, index_b[s.key])
        for s in a.samples
        if s.key in index_b and (retriever is None or s.retriever == retriever)
    ]


def unjudged_warnings(a: Run, b: Run, pairs: Sequence[tuple[Sample, Sample]]) -> list[str]:
    """A warning per run whose shared answers include some without a verdict (a judge call that
    failed, or a run judged with no judge): they count as wrong, so the difference would be measured
    against answers nobody scored. The gate fails on the same condition (its ``judged`` check)."""
    out = []
    for run, answers in ((a, [x for x, _ in pairs]), (b, [y for _, y in pairs])):
        answered, unjudged = unjudged_answers(answers)
        if unjudged:
            out.append(
                f"run {run.run_id}: {len(unjudged)} of {len(answered)} shared answers have no verdict and "
                f"count as wrong; re-score with `{rejudge_command(run.path, run.info)}`"
            )
    return out


def powerless_notes(groups: Sequence[GroupComparison], method: str, alpha: float) -> list[str]:
    """A note naming the groups whose paired test could not call any difference significant at
    ``alpha`` (too few questions, or documents for the bootstrap: its smallest p is at least alpha), where
    "significant: no" says nothing of the difference (the demo's 3 documents under the bootstrap)."""
    unit = "question" if method == "mcnemar" else "document"
    weak = [
        f"{'ALL' if g.by == 'overall' else g.group} ({counted(g.test.units, unit)}, smallest p "
        f"{g.test.smallest_p:.3g})"
        for g in groups
        if g.n_pairs and g.test.powerless(alpha)
    ]
    if not weak:
        return []
    return [
        f"the {method} test cannot call any difference significant at alpha {alpha} in: {', '.join(weak)}; "
        f"there 'significant: no' is no evidence of no change"
        + (" (--test mcnemar counts questions, not documents)" if method == "bootstrap" else "")
    ]


def direction_notes(groups: Sequence[GroupComparison], method: str, alpha: float) -> list[str]:
    """A note naming the groups where the test's units moved the other way from the difference over
    samples (:attr:`bench.stats.PairedTest.against_difference`: McNemar by repeated question) with a p
    below ``alpha``: their 'significant' reads 'no', and a p-value alone would say otherwise."""
    away = [
        f"{'ALL' if g.by == 'overall' else g.group} ({signed(g.diff, pct=True)}; {g.test.a_only} lost / "
        f"{g.test.b_only} gained by question, p {g.test.p_value:.3g})"
        for g in groups
        if g.n_pairs and g.test.significant_against(alpha)
    ]
    if not away:
        return []
    return [
        f"the {method} test by question points the other way from the difference over samples in: "
        f"{', '.join(away)}; there 'significant' is 'no': the test is no evidence of that difference"
    ]


def retriever_pair(a: Run, b: Run, old: str, new: str) -> tuple[Run, Run]:
    """Run A's samples of retriever ``old`` and run B's of ``new`` (B may be A itself), each named
    ``old -> new`` so that they pair by question and repeat: one retriever against another. The runs
    are named by their retriever too (``r1 (bm25)``, ``r1 (mine)``). Raises :class:`NoSharedSamples`
    for a run that holds no sample of the retriever named, naming those it holds."""
    label = f"{old} -> {new}"
    out = []
    for run, name in ((a, old), (b, new)):
        _holds(run, name)
        samples = [s.model_copy(update={"retriever": label}) for s in run.samples if s.retriever == name]
        info = run.info.model_copy(update={"run_id": f"{run.run_id} ({name})"})
        out.append(run.model_copy(update={"samples": samples, "info": info}))
    return out[0], out[1]


def _holds(run: Run, name: str) -> None:
    """Raise :class:`NoSharedSamples` for a run that holds no sample of retriever ``name``, naming
    those it holds (``--retrievers OLD,NEW``, and ``X,X`` too)."""
    if not any(s.retriever == name for s in run.samples):
        held = sorted({s.retriever for s in run.samples})
        raise NoSharedSamples(
            f"run {run.run_id} ({run.path}) has no samples of retriever {name!r}; "
            f"it holds {', '.join(held) or 'none'}"
        )


def _no_shared_hint(a: Run, b: Run) -> str:
    """Why two runs share no sample when each holds retrievers the other does not: compare pairs a
    retriever with itself, so a run of bm25 and a run of a new retriever shared nothing, and the line
    did not say how to set them against each other."""
    ra, rb = sorted({s.retriever for s in a.samples}), sorted({s.retriever for s in b.samples})
    if not ra or not rb:
        return ""
    qa, qb = sorted({s.question_id for s in a.samples}), sorted({s.question_id for s in b.samples})
    if not set(qa) & set(qb):  # no pairing of retrievers can help: runs of other questions (datasets)
        return (
            f"; they share no question either (A's ids like {qa[0]}, B's like {qb[0]}): runs of the same "
            "questions compare"
        )
    if set(ra) & set(rb):
        return ""
    return (
        f"; A holds retriever(s) {', '.join(ra)}, B {', '.join(rb)}: to compare one retriever with another, "
        f"give bench compare --retrievers {ra[0]},{rb[0]}"
    )


def compare_runs(
    a: Run,
    b: Run,
    by: CompareBy = "retriever",
    method: TestMethod = "mcnemar",
    alpha: float = 0.05,
    retriever: str | None = None,
    *,
    allow_changed: bool = False,
    retrievers: tuple[str, str] | None = None,
) -> Comparison:
    """Compare run B against run A (B - A) on their shared samples. Raises :class:`NoSharedSamples`.
    Two runs with one id (a run folder copied as a baseline, a run and a copy of it taken before its
    resume) are named by their folders (:func:`bench.rundir.named_apart`), as the reports name them:
    the table said "A: sInt" and "B: sInt", and a warning "run sInt is interrupted" of either.
    ``retrievers=(old, new)`` compares A's retriever ``old`` with B's ``new`` (:func:`retriever_pair`)."""
    pair_setting: list[str] = []
    if retrievers is not None and retrievers[0] != retrievers[1]:
        a, b = retriever_pair(a, b, *retrievers)
        pair_setting = [f"retriever: A={retrievers[0]} vs B={retrievers[1]}"]
    elif retrievers is not None:  # the same name twice: that retriever in both runs
        retriever = retrievers[0]
        _holds(a, retriever)
        _holds(b, retriever)
    a, b = named_apart([a, b])
    pairs = shared_pairs(a, b, retriever)
    if not pairs:
        which = f" for retriever {retriever!r}" if retriever else ""
        raise NoSharedSamples(
            f"runs {a.run_id} ({a.path}) and {b.run_id} ({b.path}) share no samples{which} "
            "(same question_id, retriever and repeat)" + ("" if retrievers else _no_shared_hint(a, b))
        )
    keys_a = {s.key for s in a.samples if retriever is None or s.retriever == retriever}
    keys_b = {s.key for s in b.samples if retriever is None or s.retriever == retriever}
    grouped: dict[str, list[tuple[Sample, Sample]]] = {}
    for sa, sb in pairs:
        grouped.setdefault(_group_key(by, sa, sb, a.info.model, b.info.model), []).append((sa, sb))
    overall = compare_pairs(pairs, "overall", "all", method, alpha)
    groups = [compare_pairs(grouped[g], by, g, method, alpha) for g in sorted(grouped)]
    shown = groups if by != "overall" else []
    return Comparison(
        run_a=a.run_id,
        run_b=b.run_id,
        path_a=str(a.path),
        path_b=str(b.path),
        by=by,
        method=method,
        alpha=alpha,
        warnings=run_differences(a, b, allowed=allow_changed) + unjudged_warnings(a, b, pairs),
        notes=powerless_notes([*shown, overall], method, alpha)
        + direction_notes([*shown, overall], method, alpha),
        settings=pair_setting + setting_differences(a, b),
        shared=len(pairs),
        only_a=len(keys_a - keys_b),
        only_b=len(keys_b - keys_a),
        overall=overall,
        groups=groups,
    )


# ----------------------------------------------------------------------------- display
def signed(x: float | None, digits: int = 1, pct: bool = False) -> str:
    """A difference with its sign: ``+0.04`` (``digits`` places), or ``+4.0 pp`` for a share (``pct``)."""
    if x is None:
        return NO_VALUE
    value = round(100 * x if pct else x, digits) or 0.0  # rounded to nothing: +0.00, never -0.00
    return f"{value:+.{digits}f} pp" if pct else f"{value:+,.{digits}f}"


def diff_interval(test: PairedTest) -> str:
    """The paired bootstrap's 95% interval of the difference, ``[-1.0 pp, +9.5 pp]``; ``-`` where it has
    none (McNemar's test gives none; the bootstrap none from under two documents)."""
    if test.ci_low is None or test.ci_high is None:
        return NO_VALUE
    return f"[{signed(test.ci_low, pct=True)}, {signed(test.ci_high, pct=True)}]"


def comparison_rows(cmp: Comparison) -> list[dict[str, str]]:
    """Display rows (strings), one per group and one for all shared samples."""
    rows = []
    groups = cmp.groups if cmp.by != "overall" else []
    for g in [*groups, cmp.overall]:
        d = {m.metric: m.delta for m in g.deltas}
        rows.append(
            {
                cmp.by: "ALL" if g is cmp.overall else g.group,
                "pairs": str(g.n_pairs),
                f"A: {cmp.run_a}": ci_text(g.accuracy_a),
                f"B: {cmp.run_b}": ci_text(g.accuracy_b),
                "diff": signed(g.diff, pct=True),
                # --test bootstrap: its interval, what that test is read by (review 20: only its p was shown)
                **({"95% CI": diff_interval(g.test)} if cmp.method == "bootstrap" else {}),
                "p": f"{g.test.p_value:.3g}",
                "significant": "yes" if g.significant else "no",
                "A->B +/-": f"+{len(g.improved)} / -{len(g.regressed)}",
                "d tokens/q": signed(d["tokens_per_question"], 0),
                "d iterations": signed(d["iterations"], 2),
                "d latency s": signed(d["latency_s"], 2),
                "d cost/q": signed(d["cost_per_question"], 5),
                "d evidence hit": signed(d["evidence_hit_rate"], pct=True),
            }
        )
    return rows


def print_comparison(cmp: Comparison, console: Any = None, max_flips: int = 20) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.panel import Panel
    from rich.table import Table

    console = console or Console()
    if cmp.warnings:
        console.print(
            Panel(
                escape("\n".join(cmp.warnings))
                + "\nAccuracy differences may come from these, not from the change.",
                title="WARNING: these runs are not like for like",
                border_style="bold red",
            ),
            soft_wrap=False,  # wrapped inside the box: the CLI's console crops it (the remedy was cut off)
        )
    console.print(
        f"A = [bold]{escape(cmp.run_a)}[/]  B = [bold]{escape(cmp.run_b)}[/]  {escape(cmp.shared_text)}  "
        f"only in A: {cmp.only_a}  only in B: {cmp.only_b}  test: {cmp.method} (alpha {cmp.alpha})",
        highlight=False,
    )
    if cmp.settings:
        console.print(f"settings that differ: {'; '.join(cmp.settings)}", highlight=False, markup=False)
    for note in cmp.notes:
        console.print(f"note: {note}", highlight=False, markup=False, style="yellow")
    rows = comparison_rows(cmp)
    table = Table(title=f"accuracy by {cmp.by} (B - A)", title_justify="left")
    for i, col in enumerate(rows[0]):
        table.add_column(col, justify="left" if i == 0 else "right", no_wrap=i == 0)
    for row in rows:
        table.add_row(*[escape(v) for v in row.values()])
    if console.is_terminal:
        console.print(table)
    else:  # a log or a pipe: whole, with no blanks padding the title line
        from bench.summary import print_whole

        print_whole(console, table)
    groups = cmp.groups if cmp.by != "overall" else [cmp.overall]
    for g in groups:
        for label, flips in (
            ("correct only in B (improved)", g.improved),
            ("correct only in A (regressed)", g.regressed),
        ):
            if not flips:
                continue
            console.print(f"[bold]{escape(g.group)}[/]: {label}: {len(flips)}", highlight=False)
            for f in flips[:max_flips]:
                rep = f" #{f.repeat}" if f.repeat else ""
                # grouped by anything but the retriever, a group holds every retriever's samples of a
                # question: the line names its retriever (two lines of one question looked the same)
                who = f" {f.retriever}" if cmp.by != "retriever" else ""
                change = f"{f.verdict_a} -> {f.verdict_b}"
                console.print(
                    f"  {f.question_id}{who}{rep}  [{change}]  {short_question(f.question)}",
                    highlight=False,
                    markup=False,
                )
            if len(flips) > max_flips:
                console.print(f"  ... and {len(flips) - max_flips} more (see --json)")
