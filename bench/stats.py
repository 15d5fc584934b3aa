"""Statistics for accuracy figures: confidence intervals and paired tests.

- :func:`wilson_interval` - Wilson score interval for a proportion.
- :func:`accuracy_interval` - Wilson, over questions rather than samples when they were repeated.
- :func:`cluster_bootstrap_interval` - percentile bootstrap resampling whole clusters (documents),
  for when questions about the same filing are not independent.
- :func:`mcnemar_exact` - exact McNemar test on the discordant pairs of two paired 0/1 outcomes.
- :func:`paired_bootstrap` - paired bootstrap of the difference in means (optionally by cluster).

Every result is a pydantic model so it can go straight into ``summary.json`` or ``--json`` output.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist
from typing import Literal

import numpy as np
from pydantic import BaseModel


class Proportion(BaseModel):
    """``k`` successes out of ``n`` with a confidence interval (all three None when ``n == 0``)."""

    k: int
    n: int
    value: float | None
    low: float | None
    high: float | None
    method: str = "wilson"
    confidence: float = 0.95

    def fmt(self, digits: int = 3) -> str:
        if self.value is None:
            return "n/a"
        return f"{self.value:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}]"


class PairedTest(BaseModel):
    """Outcome of a paired comparison of B against A on the same samples (1 = correct)."""

    method: Literal["mcnemar", "bootstrap"]
    n: int  # pairs
    a_only: int  # A right, B wrong
    b_only: int  # A wrong, B right
    diff: float  # mean(B) - mean(A)
    p_value: float
    ci_low: float | None = None  # of the difference (bootstrap only)
    ci_high: float | None = None
    # what the test counts as independent observations: questions (McNemar; repeats of one counted
    # once) or documents (the bootstrap's sign-flip test); and the smallest p-value it could give on
    # them whatever the outcomes (2 / 2**units): at or above alpha no difference can be significant
    units: int = 0
    smallest_p: float = 1.0

    def significant(self, alpha: float = 0.05) -> bool:
        """Whether the test calls the difference ``diff`` significant at ``alpha``: p < alpha, and the
        units it counts moved the way ``diff`` did (see :attr:`against_difference`)."""
        return self.p_value < alpha and (self.b_only - self.a_only) * self.diff > 0

    @property
    def against_difference(self) -> bool:
        """Whether the units the test counts changed the other way from ``diff`` (or ``diff`` is zero
        while they changed). Only McNemar over repeated questions can: it counts a question lost or
        gained by its share of correct repeats, while ``diff`` is over samples, so 10 questions lost in
        all 3 repeats and 25 gained in one of 3 are a drop of 5 samples and 10 lost / 25 gained by
        question (p = 0.0167): evidence of no drop, which was called a significant one."""
        return (self.b_only - self.a_only) * self.diff <= 0 and self.b_only != self.a_only

    def significant_against(self, alpha: float = 0.05) -> bool:
        """Whether p < ``alpha`` while the test's units moved the other way from ``diff``: the test is then
        no evidence of that difference (compare's note, the gate's "no evidence of a drop")."""
        return self.against_difference and self.p_value < alpha

    def powerless(self, alpha: float = 0.05) -> bool:
        """Whether no outcome could be significant at ``alpha`` (too few units: see :func:`smallest_p`)."""
        return self.smallest_p >= alpha


# Two-sided normal quantiles as scipy's ``norm.ppf`` gives them (so stored figures do not move
# in the last digit); any other confidence from the standard library.
_Z = {0.9: 1.6448536269514722, 0.95: 1.959963984540054, 0.99: 2.5758293035489004}


def _z(confidence: float) -> float:
    return _Z.get(confidence) or NormalDist().inv_cdf(1 - (1 - confidence) / 2)


def wilson_interval(k: int, n: int, confidence: float = 0.95) -> Proportion:
    """Wilson score interval; behaves well at 0% and 100% and for small ``n``."""
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return Proportion(k=0, n=0, value=None, low=None, high=None, confidence=confidence)
    low, high = _wilson_bounds(k / n, n, confidence)
    return Proportion(k=k, n=n, value=k / n, low=low, high=high, confidence=confidence)


def _wilson_bounds(p: float, n: float, confidence: float) -> tuple[float, float]:
    """Wilson's bounds for a share ``p`` observed over ``n`` independent observations."""
    z = _z(confidence)
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    low = 0.0 if p <= 0 else max(0.0, float(centre - half))
    high = 1.0 if p >= 1 else min(1.0, float(centre + half))
    return low, high


def accuracy_interval(
    outcomes: Sequence[float], units: Sequence[str], confidence: float = 0.95
) -> Proportion:
    """The interval of a share of 0/1 ``outcomes``: Wilson's over the samples, or, when a unit (a
    question run by one retriever) holds several samples (``--repeats``), Wilson's over the units:
    K repeats of a question are not K independent observations (counted so, they narrow the interval
    by about sqrt(K)), so the share is weighed as if seen on one observation per question. That is
    exact when repeats agree and cautious when they differ; a bootstrap over so few questions
    collapses instead (5 of 5 questions right gives [100, 100]) (method ``wilson-by-question``)."""
    n_units = len(set(units))
    if n_units < len(units):
        k, n = int(sum(outcomes)), len(outcomes)
        low, high = _wilson_bounds(k / n, n_units, confidence)
        return Proportion(
            k=k, n=n, value=k / n, low=low, high=high, method="wilson-by-question", confidence=confidence
        )
    return wilson_interval(int(sum(outcomes)), len(outcomes), confidence)


def _cluster_index(clusters: Sequence[str]) -> tuple[np.ndarray, int]:
    _, idx = np.unique(np.asarray(clusters, dtype=object).astype(str), return_inverse=True)
    return idx, int(idx.max()) + 1 if len(idx) else 0


def cluster_bootstrap_interval(
    outcomes: Sequence[float],
    clusters: Sequence[str],
    *,
    confidence: float = 0.95,
    n_boot: int = 2000,
    seed: int = 0,
) -> Proportion:
    """Percentile interval for the mean of 0/1 ``outcomes`` resampling whole clusters
    (e.g. documents) with replacement. With a single cluster it falls back to Wilson."""
    y = np.asarray(outcomes, dtype=float)
    if len(y) != len(clusters):
        raise ValueError("outcomes and clusters differ in length")
    k, n = int(y.sum()), len(y)
    if n == 0:
        return Proportion(k=0, n=0, value=None, low=None, high=None, method="cluster-bootstrap")
    idx, m = _cluster_index(clusters)
    if m < 2:
        return wilson_interval(k, n, confidence)
    sums = np.bincount(idx, weights=y, minlength=m)
    counts = np.bincount(idx, minlength=m).astype(float)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, m, size=(n_boot, m))
    means = sums[draws].sum(axis=1) / counts[draws].sum(axis=1)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return Proportion(
        k=k,
        n=n,
        value=k / n,
        low=float(low),
        high=float(high),
        method="cluster-bootstrap",
        confidence=confidence,
    )


def _discordant(a: Sequence[float], b: Sequence[float]) -> tuple[np.ndarray, np.ndarray, int, int]:
    xa = np.asarray(a, dtype=float)
    xb = np.asarray(b, dtype=float)
    if xa.shape != xb.shape:
        raise ValueError("paired outcomes differ in length")
    a_only = int(np.sum((xa > 0) & (xb <= 0)))
    b_only = int(np.sum((xa <= 0) & (xb > 0)))
    return xa, xb, a_only, b_only


def mcnemar_exact(
    a: Sequence[float], b: Sequence[float], *, units: Sequence[str] | None = None
) -> PairedTest:
    """Exact (binomial) McNemar test: under H0 each discordant pair is equally likely to favour A or B.
    Two-sided p-value; 1.0 when there are no discordant pairs.

    ``units`` names what each pair is an observation of (the question, when a run repeats its
    questions): pairs of one unit are collapsed into one, discordant when the unit's mean outcome
    differs between A and B. Repeats of one question are not independent evidence: counted one by
    one, K identical repeats would make a drop look K times as certain. Without repeats (every unit
    once) it is the plain test. ``a_only``/``b_only`` then count units."""
    xa, xb, a_only, b_only = _discordant(a, b)
    if units is not None and len(set(units)) < len(units):
        idx, m = _cluster_index(units)
        sizes = np.bincount(idx, minlength=m)
        mean_a = np.bincount(idx, weights=xa, minlength=m) / sizes
        mean_b = np.bincount(idx, weights=xb, minlength=m) / sizes
        a_only, b_only = int(np.sum(mean_a > mean_b)), int(np.sum(mean_b > mean_a))
    discordant = a_only + b_only
    p = 1.0 if discordant == 0 else _binomial_two_sided_half(b_only, discordant)
    diff = float(xb.mean() - xa.mean()) if len(xa) else 0.0
    m = len(set(units)) if units is not None else len(xa)
    return PairedTest(
        method="mcnemar", n=len(xa), a_only=a_only, b_only=b_only, diff=diff, p_value=p,
        units=m, smallest_p=smallest_p(m),
    )  # fmt: skip


def _binomial_two_sided_half(k: int, n: int) -> float:
    """Exact two-sided binomial p-value of ``k`` successes in ``n`` trials at p = 0.5 (the
    distribution is symmetric: twice the smaller tail, at most 1), in integer arithmetic."""
    tail = sum(math.comb(n, i) for i in range(min(k, n - k) + 1))
    return min(1.0, 2 * tail / 2**n)


_EXACT_FLIPS = 16  # up to 2**16 sign patterns are enumerated; more are sampled
_FLIP_DRAWS = 20000  # random sign patterns beyond _EXACT_FLIPS


def smallest_p(units: int, method: Literal["mcnemar", "bootstrap"] = "mcnemar") -> float:
    """The smallest two-sided p-value a paired test over ``units`` independent observations can give,
    whatever their outcomes: every one of them changed the same way, 2 / 2**units (one unit or none: 1).
    Beyond :data:`_EXACT_FLIPS` documents the sign-flip test samples patterns and can say no less than
    1 / (draws + 1). At or above alpha the test can never call a difference significant: with 5
    questions (McNemar) or 5 documents (bootstrap) not even every answer turning wrong is, at 0.05."""
    p = min(1.0, math.ldexp(1.0, 1 - units)) if units > 0 else 1.0
    if method == "bootstrap" and units > _EXACT_FLIPS:
        p = max(p, 1 / (_FLIP_DRAWS + 1))
    return p


def sign_flip_p(contributions: Sequence[float], *, n_draws: int = _FLIP_DRAWS, seed: int = 0) -> float:
    """Two-sided p-value of a paired randomization (sign-flip) test: under H0 (A and B exchangeable
    within each cluster) every cluster's summed difference is as likely negative as positive, so the
    p-value is the share of sign patterns whose total is at least as far from zero as the observed.
    Exact over all patterns of the non-zero clusters (up to 16 of them), else ``n_draws`` random patterns
    with the observed one counted (never 0). One cluster: p = 1; with one pair per cluster and 0/1
    outcomes it is McNemar's exact test."""
    c = np.asarray([x for x in contributions if x != 0], dtype=float)
    if len(c) == 0:
        return 1.0
    observed = abs(float(c.sum()))
    k = len(c)
    if k <= _EXACT_FLIPS:
        patterns = ((np.arange(2**k)[:, None] >> np.arange(k)) & 1) * 2 - 1
        totals = np.abs(patterns @ c)
        return float(np.mean(totals >= observed - 1e-9))
    rng = np.random.default_rng(seed)
    totals = np.abs(rng.choice([-1.0, 1.0], size=(n_draws, k)) @ c)
    return float((1 + np.sum(totals >= observed - 1e-9)) / (n_draws + 1))


def paired_bootstrap(
    a: Sequence[float],
    b: Sequence[float],
    *,
    clusters: Sequence[str] | None = None,
    confidence: float = 0.95,
    n_boot: int = 5000,
    seed: int = 0,
) -> PairedTest:
    """Paired bootstrap of ``mean(b) - mean(a)``, resampling pairs (or whole clusters of pairs): the
    percentile interval, and the two-sided p-value of the paired sign-flip test over the same clusters
    (:func:`sign_flip_p`). Not the share of resamples beyond zero: with few clusters, or every cluster's
    difference of one sign, every resample lies on one side and that share says p = 0 for a single
    flipped question. Under two clusters there is no interval (None): one cluster resampled is
    itself."""
    xa, xb, a_only, b_only = _discordant(a, b)
    n = len(xa)
    if n == 0:
        return PairedTest(method="bootstrap", n=0, a_only=0, b_only=0, diff=0.0, p_value=1.0)
    d = xb - xa
    observed = float(d.mean())
    rng = np.random.default_rng(seed)
    idx, m = _cluster_index(clusters) if clusters is not None else (np.arange(n), n)
    sums = np.bincount(idx, weights=d, minlength=m)
    p = sign_flip_p(sums, seed=seed)
    power = {"units": m, "smallest_p": smallest_p(m, "bootstrap")}
    if m < 2:
        return PairedTest(
            method="bootstrap", n=n, a_only=a_only, b_only=b_only, diff=observed, p_value=p, **power
        )
    counts = np.bincount(idx, minlength=m).astype(float)
    draws = rng.integers(0, m, size=(n_boot, m))
    boot = sums[draws].sum(axis=1) / counts[draws].sum(axis=1)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(boot, [tail, 100 - tail])
    return PairedTest(
        method="bootstrap",
        n=n,
        a_only=a_only,
        b_only=b_only,
        diff=observed,
        p_value=p,
        ci_low=float(low),
        ci_high=float(high),
        **power,
    )


def paired_test(
    a: Sequence[float],
    b: Sequence[float],
    method: Literal["mcnemar", "bootstrap"] = "mcnemar",
    clusters: Sequence[str] | None = None,
    units: Sequence[str] | None = None,
) -> PairedTest:
    """The paired test named by ``method`` (``mcnemar`` needs 0/1 outcomes). ``clusters`` (documents)
    are what the bootstrap resamples; ``units`` (questions) are what McNemar counts once each."""
    if method == "mcnemar":
        return mcnemar_exact(a, b, units=units)
    if method == "bootstrap":
        return paired_bootstrap(a, b, clusters=clusters)
    raise ValueError(f"unknown paired test {method!r}: use mcnemar or bootstrap")
