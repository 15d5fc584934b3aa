"""Number extraction and matching as filings write numbers."""

from __future__ import annotations

import pytest

from bench.judges.numbers import (
    extract_quantities,
    implied_by_difference,
    number_quantity,
    quantities_match,
)


def texts(s: str) -> list[str]:
    return [q.text for q in extract_quantities(s)]


def test_extracts_scale_currency_and_negatives() -> None:
    (q,) = extract_quantities("Capex was $(1,577) million")
    assert q.value == 1_577_000_000 and q.negative and q.scale_stated and q.decimals == 0
    (b,) = extract_quantities("net PP&E of $8.738 billion")
    assert b.value == pytest.approx(8.738e9) and b.decimals == 3
    (mn,) = extract_quantities("Adj. EBITDA was $2,018mn")
    assert mn.value == 2.018e9
    (p,) = extract_quantities("margin of 10.3%")
    assert p.percent and p.value == pytest.approx(10.3)
    (neg,) = extract_quantities("net revenue was -$473 million")
    assert neg.negative and neg.value == 473e6


def test_skips_years_dates_list_markers_and_names() -> None:
    assert texts("In FY2019 and 2020, per the 10-K filed January 28, 2023") == []
    assert texts("1. Revenue\n2) Costs grew 4.5%") == ["4.5"]
    # A lone letter is a scale only after a currency sign: "3M" is a company, "$3M" three million.
    assert texts("3M reported") == []
    assert extract_quantities("$3M reported")[0].value == 3e6
    assert texts("a quick ratio of 0.54x") == ["0.54"]


@pytest.mark.parametrize(
    ("gold", "answer", "expected"),
    [
        (number_quantity(1577), "$1,577 million", True),  # unstated gold scale
        (number_quantity(1577, scale=1e6, scale_stated=True), "$1.577 billion", True),
        (number_quantity(1577, scale=1e6, scale_stated=True), "$1,577 billion", False),  # wrong scale
        (number_quantity(8.7, scale=1e9, scale_stated=True), "$8.738 billion", True),  # gold precision
        (number_quantity(0.103), "10.3%", True),  # ratio vs percent
        (number_quantity(0.654), "65.2%", False),
        (number_quantity(24.26), "24.3", True),  # answer precision (3 significant digits)
        (number_quantity(1.33), "1", False),  # a bare "1" is too coarse to match
        (number_quantity(42.69), "42.57 days", False),
        (number_quantity(0.05), "5.2%", True),  # a percent against a ratio gold
        (number_quantity(0.005), "5.2%", False),  # ... but never rescaled by thousands
        (number_quantity(0.25, scale=1e9, scale_stated=True), "25%", False),  # amount vs percent
    ],
)
def test_quantities_match(gold, answer: str, expected: bool) -> None:
    (a,) = extract_quantities(answer)
    assert quantities_match(gold, a) is expected


def test_inline_enumerators_are_not_figures() -> None:
    assert texts("two deals: (1) Acme Ltd and (2) Widget Co for $40 million") == ["40"]
    # A parenthesised negative stays a figure.
    assert texts("a loss of (7) million") == ["7"]


def test_percent_gold_needs_a_percent_or_a_ratio() -> None:
    (gold,) = extract_quantities("the segment was 35% of sales")
    (bare,) = extract_quantities("there are 35 stores")
    (ratio,) = extract_quantities("a share of 0.35")
    assert not quantities_match(gold, bare) and quantities_match(gold, ratio)


def test_rescale_can_be_switched_off() -> None:
    (amount,) = extract_quantities("$12,345 million")
    assert quantities_match(number_quantity(0.012), amount)  # thousands-power rescaling
    assert not quantities_match(number_quantity(0.012), amount, rescale=False)


def test_gold_change_implied_by_two_stated_figures() -> None:
    (gold,) = extract_quantities("a decline of 2.3%")
    stated = extract_quantities("margin fell from 31.4% to 29.1% while revenue was $5 million")
    assert implied_by_difference(gold, stated)
    near = extract_quantities("margin fell from 31.4% to 29.0%")  # 2.4: within rounding of both
    assert implied_by_difference(gold, near)
    far = extract_quantities("margin fell from 31.4% to 28.6%")
    assert not implied_by_difference(gold, far)
    (points,) = extract_quantities("2.3")  # plain figures do not pair with percents
    assert not implied_by_difference(points, stated)


def test_a_dash_between_two_figures_is_a_range_not_a_minus() -> None:
    for text in ("roughly 35–40% of sales", "roughly 35-40% of sales", "roughly 35 – 40% of sales"):
        found = extract_quantities(text)
        assert [(q.value, q.percent, q.minus) for q in found] == [(35.0, True, False), (40.0, True, False)]
        assert found[0].other_end == 40.0 and found[1].other_end == 35.0
    # The first figure takes the range's scale; a spaced hyphen joins no range, and a sign is set tight.
    assert [q.value for q in extract_quantities("$1.0–1.1 billion")] == [1.0e9, 1.1e9]
    assert [(q.minus, q.other_end) for q in extract_quantities("12 - 3 = 9")] == [(False, None)] * 3
    assert [q.minus for q in extract_quantities("EPS $2.45 – 10% above consensus; margin -5%")] == [
        False, False, True,
    ]
    assert [q.value for q in extract_quantities("$900 million–$1.1 billion")] == [9e8, 1.1e9]
    assert [q.minus for q in extract_quantities("from 5% to -3%")] == [False, True]
    # Year spans and form names are still no figures.
    assert [q.value for q in extract_quantities("the 2019-20 season had 7 games; see the 10-K")] == [7.0]
    # A range needs a smaller first figure standing alone, in a unit the second agrees with; dates,
    # identifiers, scores and a dash used as punctuation are none.
    for text in ("EPS was $2.45 – 10% above consensus", "margin 42.3% – 1.2 points higher", "120-80 = 40",
                 "ASC 842-10", "a 2-1 vote", "1-800-555-0199", "debt at 2022-12-31", "FY22-23 sales",
                 "March 1-15", "a Rule 10b5-1 plan"):
        assert all(q.other_end is None for q in extract_quantities(text)), text
    assert [q.value for q in extract_quantities("debt of $30 billion at 2022-12-31")] == [30e9]
    assert [q.value for q in extract_quantities("FY22-23 sales")] == []
    assert [(q.value, q.other_end) for q in extract_quantities("$1.5-2B")] == [(1.5e9, 2e9), (2e9, 1.5e9)]


def test_a_range_states_the_gold_only_when_both_ends_round_to_it() -> None:
    narrow = extract_quantities("$1.57–1.58 billion")[0]
    assert quantities_match(number_quantity(1577, scale=1e6, scale_stated=True), narrow, rel_tol=0.01)
    wide = extract_quantities("around 1-2%")[0]
    assert not quantities_match(extract_quantities("1%")[0], wide, rel_tol=0.01)
    assert not quantities_match(number_quantity(0.01), wide, rel_tol=0.01, gold_steps=1.0)


@pytest.mark.timeout(30)
def test_long_runs_of_blanks_are_read_at_once() -> None:
    """Blanks between optional parts of a figure once backtracked for minutes on a 20 KB answer."""
    text = "Revenue" + " " * 20_000 + "rose 5" + " " * 20_000 + "–6% " + "\n" * 5_000
    assert [q.value for q in extract_quantities(text)] == [5.0, 6.0]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("EUR 1.2 billion", 1.2e9),
        ("€1.2 billion", 1.2e9),
        ("¥1,601,688 million", 1_601_688e6),
        ("1,601,688 million JPY", 1_601_688e6),
        ("NT$2,161.7 billion", 2_161.7e9),
        ("£350m", 350e6),
        ("CHF 3.4bn", 3.4e9),
        ("-€473", 473.0),
    ],
)
def test_other_currencies_than_the_dollar_are_money(text: str, value: float) -> None:
    """A 20-F or another country's annual report states figures in its own currency: the sign or the
    ISO code makes a figure money as "$" does (a lone letter after it is a scale: "£350m")."""
    (q,) = extract_quantities(text)
    assert q.money and q.value == pytest.approx(value)
    assert q.negative == text.startswith("-")
    assert texts("the EURO STOXX 50 index") == ["50"] and not extract_quantities("the EURO STOXX 50")[0].money


@pytest.mark.parametrize(
    ("text", "low", "high"),
    [
        ("£200-£250 million", 200e6, 250e6),
        ("€1.0–€1.1 billion", 1.0e9, 1.1e9),
        ("NT$5-NT$6 billion", 5e9, 6e9),
        ("US$5-US$6 million", 5e6, 6e6),
        ("£200-250 million", 200e6, 250e6),
    ],
)
def test_a_range_may_write_its_currency_sign_twice(text: str, low: float, high: float) -> None:
    """A range's second figure may carry the sign again, whatever the currency ("$1.0-$1.1 billion"
    was read as one; "£200-£250 million" was 200 and 250 million, and "NT$5-NT$6" lost its first end
    as the "10" of a "10-K")."""
    first, second = extract_quantities(text)
    assert (first.value, first.other_end) == (pytest.approx(low), pytest.approx(high))
    assert (second.value, second.other_end) == (pytest.approx(high), pytest.approx(low))


def test_two_currencies_across_a_dash_are_two_amounts() -> None:
    """"$5-€6 billion" is no range: a dollar figure, then a euro one."""
    dollars, euros = extract_quantities("$5-€6 billion")
    assert (dollars.value, dollars.other_end, dollars.currency) == (5.0, None, "$")
    assert (euros.value, euros.other_end, euros.currency) == (6e9, None, "EUR")


def test_the_same_number_in_another_currency_is_another_amount() -> None:
    """A sign several currencies share ("$" any dollar, "¥" yen or yuan) agrees with each of them; two
    currencies written out do not agree ("EUR 1.2 billion" is not "$1.2 billion", nor NT$ US$)."""
    from bench.judges.numbers import currency_of, same_currency

    assert [currency_of(c) for c in ("$", "US$", "USD", "nt$", "€", "RMB", "¥", "")] == [
        "$", "USD", "USD", "TWD", "EUR", "CNY", "¥", ""
    ]
    assert same_currency("$", "TWD") and same_currency("¥", "JPY") and same_currency("", "EUR")
    assert not same_currency("EUR", "$") and not same_currency("TWD", "USD") and not same_currency("¥", "EUR")
    (eur,) = extract_quantities("EUR 1.2 billion")
    assert not quantities_match(eur, extract_quantities("$1.2 billion")[0])
    assert quantities_match(eur, extract_quantities("€1,200 million")[0])
    assert quantities_match(eur, extract_quantities("1.2 billion")[0])  # no currency written: the number
    (nt,) = extract_quantities("NT$2,161.7 billion")
    assert quantities_match(nt, extract_quantities("$2,161.7 billion")[0])
    assert not quantities_match(nt, extract_quantities("US$2,161.7 billion")[0])


@pytest.mark.parametrize(
    ("text", "value", "percent", "currency"),
    [
        ("1.234,5 Mio. EUR", 1_234.5e6, False, "EUR"),  # grouped thousands before a decimal comma
        ("Umsatz: 1.234.567 €", 1_234_567, False, "EUR"),  # two dot-groups
        ("1\u202f234,5", 1_234.5, False, ""),  # narrow no-break space
        ("1\u2009234,5", 1_234.5, False, ""),  # thin space
        ("1 234,5", 1_234.5, False, ""),  # a plain space, before a decimal comma
        ("1\u00a0234 Mio.", 1_234e6, False, ""),  # no-break space, no decimals
        ("43,42 %", 43.42, True, ""),  # a unit glued after
        ("EUR 1,2 billion", 1.2e9, False, "EUR"),  # a currency before
        ("€1,5 Mrd.", 1.5e9, False, "EUR"),
        ("1,234 Mio. EUR", 1.234e6, False, "EUR"),  # a decimal-comma language's scale word decides
        ("1.234 Mrd.", 1_234e9, False, ""),
        ("1271,78CHF", 1_271.78, False, "CHF"),  # a code glued on (the figure was skipped as a name)
        ("109,36 $", 109.36, False, "$"),  # a currency sign after the figure, as French writes it
    ],
)
def test_a_decimal_comma_is_read_by_the_figures_shape_and_its_unit(
    text: str, value: float, percent: bool, currency: str
) -> None:
    """Each of these was read as two figures or as another one ("1.234,5" as 1.234 and 5, "43,42 %" as
    43 and 42%, "1,234 Mio." as 1,234): a decimal comma's shape, or a unit glued to its figure, says
    which convention the figure is written in."""
    (q,) = extract_quantities(text)
    assert (q.value, q.percent, q.currency) == (pytest.approx(value), percent, currency)


def test_an_ambiguous_figure_keeps_the_decimal_points_reading() -> None:
    """"1,234" and "1.234" fit both conventions: in an English text they stay one thousand two hundred
    thirty-four and one point two three four; a bare "3,5" is a list there. A text that writes its
    decimals with commas (the extractive baseline's page test) reads "1,5" as a decimal, but "1.234" and
    "1,234" as the decimal point does unless a scale word of those languages follows."""
    assert [q.value for q in extract_quantities("Revenue was 1,234 and the ratio 1.234.")] == [1234, 1.234]
    assert texts("See notes 3,5 and 13.") == ["3", "5", "13"]
    assert texts("Capex was $1,577 million; margin 12.5%.") == ["1,577", "12.5"]
    german = "Die Marge lag bei 12,5 und 13,4; der Umsatz bei 1.234 Mio. und 1,5."
    assert [q.value for q in extract_quantities(german)] == [12.5, 13.4, 1234e6, 1.5]
    # a few list-like commas make a text of decimal commas; its "1.234" stays one point two three four
    cited = "See pages 12,13 and 45,46 of the 10-K; revenue was $1.234 billion."
    assert [q.value for q in extract_quantities(cited)][-1] == pytest.approx(1.234e9)
    assert texts("In FY2021,12% of revenue came from China.") == ["12"]  # glued to a name: as before
    # a sign after a figure is its currency, not when it opens the next figure
    assert [(q.value, q.currency) for q in extract_quantities("from 5 $10 million")] == [(5, ""), (10e6, "$")]
    # a figure read so stays where it was written
    (q,) = extract_quantities("Umsatz 1.234,5 Mio. EUR")
    assert (q.start, q.end) == (7, len("Umsatz 1.234,5 Mio. EUR"))


@pytest.mark.parametrize(
    ("text", "sign"),
    [
        ("a loss of $45 million", -1),
        ("net loss was $45 million", -1),
        ("revenue declined by about 3%", -1),
        ("a profit of $45 million", 1),
        ("a gain of 45", 1),
        ("sales grew 4.1%", 1),
        ("+4.1%", 1),
        ("$(45) million", -1),
        ("a gain of $(45) million", -1),  # the written sign before the words
        ("revenue increased to 14.8%", 0),  # a level it rose to, not a signed change
        ("net income (loss) of 45", 0),  # a label of both signs
        ("net loss per share of $0.45", 0),
        ("45", 0),
    ],
)
def test_the_sign_a_figure_is_written_or_worded_with(text: str, sign: int) -> None:
    (q,) = extract_quantities(text)
    assert q.sign == sign
