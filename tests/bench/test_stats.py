"""Confidence intervals and paired tests against hand-computed values."""

from __future__ import annotations

import pytest

from bench.stats import (
    cluster_bootstrap_interval,
    mcnemar_exact,
    paired_bootstrap,
    sign_flip_p,
    smallest_p,
    wilson_interval,
)


def test_wilson_matches_hand_computed_interval() -> None:
    # p = 0.8, z = 1.96: centre = (0.8 + z^2/20) / (1 + z^2/10), half = z*sqrt(0.016 + z^2/400) / (1 + z^2/10)
    ci = wilson_interval(8, 10)
    assert ci.value == pytest.approx(0.8)
    assert ci.low == pytest.approx(0.4902, abs=1e-4)
    assert ci.high == pytest.approx(0.9433, abs=1e-4)


def test_wilson_edges() -> None:
    zero = wilson_interval(0, 10)
    assert zero.low == 0.0 and zero.high == pytest.approx(0.2775, abs=1e-4)
    full = wilson_interval(10, 10)
    assert full.high == 1.0 and full.low == pytest.approx(0.7225, abs=1e-4)
    empty = wilson_interval(0, 0)
    assert empty.value is None and empty.fmt() == "n/a"
    with pytest.raises(ValueError):
        wilson_interval(3, 2)


def test_mcnemar_counts_only_discordant_pairs() -> None:
    # 10 pairs where only B is right, 20 where both are right: p = 2 * 0.5**10
    a = [0] * 10 + [1] * 20
    b = [1] * 10 + [1] * 20
    t = mcnemar_exact(a, b)
    assert (t.a_only, t.b_only, t.n) == (0, 10, 30)
    assert t.diff == pytest.approx(10 / 30)
    assert t.p_value == pytest.approx(2 * 0.5**10)
    assert t.significant(0.05)


def test_mcnemar_noise_is_not_significant() -> None:
    a = [1, 0, 1, 0, 1] + [1] * 20
    b = [0, 1, 0, 1, 1] + [1] * 20  # 2 lost, 2 gained
    t = mcnemar_exact(a, b)
    assert (t.a_only, t.b_only) == (2, 2)
    assert t.p_value == pytest.approx(1.0)
    assert not t.significant(0.05)
    assert mcnemar_exact([1, 1], [1, 1]).p_value == 1.0


def test_paired_bootstrap_agrees_with_mcnemar_on_clear_cases() -> None:
    a = [0] * 12 + [1] * 18
    b = [1] * 12 + [1] * 18
    t = paired_bootstrap(a, b, seed=1)
    assert t.diff == pytest.approx(0.4)
    assert t.p_value < 0.01
    assert 0 < t.ci_low < 0.4 < t.ci_high <= 1
    noise = paired_bootstrap([1, 0, 1, 0] + [1] * 26, [0, 1, 0, 1] + [1] * 26, seed=1)
    assert noise.diff == 0 and noise.p_value > 0.5


def test_the_bootstrap_p_value_is_the_sign_flip_test_over_its_clusters() -> None:
    """Review 13: the p-value was twice the share of resamples on the far side of zero, so whenever every
    cluster's difference had one sign (one document; 4 lost and none gained) it was 0. Now the sign-flip
    test over the clusters the bootstrap resamples: with one pair per cluster, exactly McNemar's."""
    a, b = [1] * 4 + [1] * 26, [0] * 4 + [1] * 26  # 4 lost, 0 gained, each its own cluster
    assert paired_bootstrap(a, b).p_value == pytest.approx(mcnemar_exact(a, b).p_value) == 0.125
    one_doc = paired_bootstrap([1] * 30, [0] + [1] * 29, clusters=["D"] * 30)
    assert (one_doc.p_value, one_doc.ci_low, one_doc.ci_high) == (1.0, None, None)
    four_docs = paired_bootstrap(a, b, clusters=[f"D{k % 4}" for k in range(30)])
    assert four_docs.p_value == pytest.approx(2 / 16)  # one loss on each of 4 documents
    assert paired_bootstrap([1], [0]).p_value == 1.0  # one pair: both signs as likely
    # exact by enumeration up to 16 non-zero clusters; beyond, sampled, never 0
    assert sign_flip_p([1.0] * 16) == pytest.approx(2 / 2**16)
    assert 0 < sign_flip_p([1.0] * 40) < 1e-3
    assert sign_flip_p([1.0, -1.0] * 20) == pytest.approx(1.0, abs=0.01)
    assert sign_flip_p([0.0, 0.0]) == 1.0


def test_cluster_bootstrap_is_wider_when_documents_disagree() -> None:
    # 4 documents, each all right or all wrong: the effective sample is 4, not 40
    outcomes = [1] * 10 + [0] * 10 + [1] * 10 + [0] * 10
    docs = ["a"] * 10 + ["b"] * 10 + ["c"] * 10 + ["d"] * 10
    clustered = cluster_bootstrap_interval(outcomes, docs, seed=0)
    plain = wilson_interval(20, 40)
    assert clustered.value == 0.5
    assert clustered.high - clustered.low > plain.high - plain.low
    single = cluster_bootstrap_interval([1, 0, 1], ["a", "a", "a"])
    assert single.method == "wilson" and single.k == 2


def test_mcnemar_counts_each_question_once_when_it_was_repeated() -> None:
    """5 questions run 3 times each: B loses 2 of them in every repeat. Counted pair by pair that
    is 6 discordant pairs (p = 2 / 2**6 = 0.031, "significant"); it is the evidence of 2 questions
    (p = 0.5)."""
    a = [1.0] * 15
    b = [0.0] * 6 + [1.0] * 9
    units = [f"q{k // 3}" for k in range(15)]  # q0 q0 q0 q1 q1 q1 ...
    plain = mcnemar_exact(a, b)
    assert (plain.a_only, plain.p_value) == (6, pytest.approx(2 / 2**6))
    by_question = mcnemar_exact(a, b, units=units)
    assert (by_question.a_only, by_question.b_only, by_question.p_value) == (2, 0, 0.5)
    assert by_question.diff == plain.diff == pytest.approx(-0.4)
    # a question half lost (correct in 2 of 3 repeats instead of 3) still counts once, for A
    assert mcnemar_exact([1.0] * 3, [1.0, 0.0, 1.0], units=["q"] * 3).a_only == 1
    # every question once: the plain test
    once = mcnemar_exact(a, b, units=[f"q{k}" for k in range(15)])
    assert (once.a_only, once.p_value) == (plain.a_only, plain.p_value)


def test_smallest_p_is_what_every_unit_changing_one_way_gives() -> None:
    """A test's smallest attainable p (every unit changed the same way) is recorded with it: the gate
    reads it to know when no drop could be significant (5 questions: 0.0625 > 0.05)."""
    assert [smallest_p(m) for m in (0, 1, 2, 5, 6)] == [1.0, 1.0, 0.5, 0.0625, 0.03125]
    assert smallest_p(40, "bootstrap") == pytest.approx(1 / 20001)
    every = mcnemar_exact([1.0] * 5, [0.0] * 5)
    assert (every.units, every.smallest_p, every.p_value) == (5, 0.0625, 0.0625)
    # repeats of one question count once: 3 questions x 2 repeats
    rep = mcnemar_exact([1.0] * 6, [0.0] * 6, units=["q1", "q1", "q2", "q2", "q3", "q3"])
    assert (rep.units, rep.smallest_p) == (3, 0.25)
    boot = paired_bootstrap([1.0] * 18, [0.0] * 18, clusters=["A", "B", "C"] * 6)
    assert (boot.units, boot.smallest_p, boot.p_value) == (3, 0.25, 0.25)


def test_bootstrap_intervals_are_the_2_5_and_97_5_percentiles() -> None:
    """Mutation test: percentiles [5, 95] (a 90% interval labelled 95%) passed every test above. 400
    one-sample documents, half right: the bootstrap mean is Binomial(400, 0.5) / 400, sd 0.025, so the
    95% interval is 0.5 -/+ 1.96 * 0.025 = [0.451, 0.549] (a 90% one would be [0.459, 0.541])."""
    clustered = cluster_bootstrap_interval([1, 0] * 200, [f"d{k}" for k in range(400)])
    assert clustered.low == pytest.approx(0.451, abs=0.004)
    assert clustered.high == pytest.approx(0.549, abs=0.004)
    paired = paired_bootstrap([0] * 400, [1, 0] * 200)  # d = b - a is 1 on half the pairs
    assert paired.ci_low == pytest.approx(0.451, abs=0.004)
    assert paired.ci_high == pytest.approx(0.549, abs=0.004)


def test_significance_and_powerlessness_at_exactly_alpha() -> None:
    """Mutation test: ``p <= alpha`` for significant and ``smallest_p > alpha`` for powerless survived
    (at 0.05 no p-value lands on alpha). Significant means p < alpha; powerless smallest_p >= alpha."""
    t = mcnemar_exact([1.0] * 5, [0.0] * 5)  # p = smallest p = 2 / 2**5
    assert t.p_value == t.smallest_p == 0.0625
    assert not t.significant(0.0625) and t.significant(0.0626)
    assert t.powerless(0.0625) and not t.powerless(0.0626)


def test_wilson_lower_bound_of_a_small_share_is_above_zero() -> None:
    """Mutation test: a lower bound clamped to 0 below a 5% share survived (only 0 of n was tested).
    1 of 40: centre 0.0749 / 1.096, half 0.0640 / 1.096 -> low 0.0044, high 0.1288."""
    ci = wilson_interval(1, 40)
    assert ci.low == pytest.approx(0.00443, abs=1e-4) and ci.high == pytest.approx(0.12885, abs=1e-4)


def test_a_test_by_question_pointing_away_from_the_difference_is_not_significant() -> None:
    """Review rev-gate2: with repeats McNemar counts questions lost and gained, which can point the other
    way from the difference over samples. 10 questions lost in all 3 repeats and 25 gained in one of 3:
    the accuracy falls by 5 of 300 samples, yet 10 lost / 25 gained by question gives p = 0.0167, and the
    drop was called significant (the gate failed it as a regression the test did not find)."""
    a = [1.0] * 30 + [0.0] * 75
    b = [0.0] * 30 + [1.0, 0.0, 0.0] * 25
    units = [f"q{k // 3}" for k in range(105)]
    t = mcnemar_exact(a, b, units=units)
    assert (t.a_only, t.b_only, round(t.diff * 105)) == (10, 25, -5)
    assert t.p_value == pytest.approx(0.0167, abs=1e-4)
    assert t.against_difference and not t.significant(0.05)
    # the same questions with the difference their way: significant
    gain = mcnemar_exact(a[:30] + [0.0] * 75, b[:30] + [1.0] * 75, units=units)
    assert not gain.against_difference and gain.significant(0.05)
    # no difference over samples at all (30 lost, 30 gained) while 10 questions lost and 30 gained
    even = mcnemar_exact([1.0] * 30 + [0.0] * 90, [0.0] * 30 + [1.0, 0.0, 0.0] * 30, units=[
        f"q{k // 3}" for k in range(120)
    ])
    assert even.diff == 0 and even.p_value < 0.05 and not even.significant(0.05)
