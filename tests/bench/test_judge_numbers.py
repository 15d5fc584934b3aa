"""Number extraction and matching as filings write numbers."""

from __future__ import annotations

import pytest

from bench.judges.numbers import extract_quantities, number_quantity, quantities_match


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
    assert extract_quantities("3M reported")[0].value == 3
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
    ],
)
def test_quantities_match(gold, answer: str, expected: bool) -> None:
    (a,) = extract_quantities(answer)
    assert quantities_match(gold, a) is expected
