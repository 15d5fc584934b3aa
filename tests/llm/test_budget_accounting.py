"""Budget limits and the charge for attempts without usage, at their edges (mutation tests)."""

from __future__ import annotations

import pytest

from pageindex.llm import Budget, BudgetExceeded, ScriptedModel, make_client
from pageindex.llm.types import UsageRecord


def _record(tokens: int, usd: float | None) -> UsageRecord:
    return UsageRecord(
        prompt_tokens=tokens, completion_tokens=0, calls=1, cost_usd=usd, model="m", role="retriever"
    )


def test_a_budget_is_spent_when_it_is_reached_exactly() -> None:
    """Mutation test: ``spent_usd > max_usd`` survived (the token limit's ``>=`` was tested): a dollar
    budget reached to the cent let one more call start."""
    dollars = Budget(max_usd=0.5)
    dollars.add(_record(10, 0.25))
    assert not dollars.exhausted
    dollars.add(_record(10, 0.25))
    assert dollars.spent_usd == 0.5 and dollars.exhausted
    with pytest.raises(BudgetExceeded, match=r"dollar budget spent: \$0.5000 of \$0.5000"):
        dollars.check()
    tokens = Budget(max_tokens=20)
    tokens.add(_record(20, None))
    assert tokens.exhausted


def test_only_attempts_without_reported_usage_are_charged_an_estimate() -> None:
    """Mutation test: charging every attempt the server took (not only those that reported no usage)
    survived: an attempt whose usage is in the ledger was counted a second time, as an estimate."""
    budget = Budget(max_tokens=1_000_000)
    client = make_client("scripted", scripted=ScriptedModel(), budget=budget)
    estimate = client.tokens.estimate(4000)
    assert estimate > 0
    attempts = [
        {"outcome": "invalid_reply", "usage": {"prompt_tokens": 900, "completion_tokens": 20}},
        {"outcome": "timeout", "usage": None},
        {"outcome": "http_429", "usage": None},
    ]
    client._charge_unreported(attempts, 4000)
    assert budget.spent_tokens == estimate  # the timeout only


def test_ledger_totals_match_every_tag_given_and_keep_unknown_costs_unknown() -> None:
    """Mutation test: dropping the per-record tag check in ``UsageLedger.records`` survived (the tag
    index narrows to one tag only, so a second tag filtered nothing)."""
    from pageindex.llm.ledger import UsageLedger

    ledger = UsageLedger()
    for sample_id, retriever, tokens, usd in (
        ("q1", "agent", 100, 0.01), ("q1", "planner", 200, None), ("q2", "agent", 400, 0.04)
    ):  # fmt: skip
        tag = {"sample_id": sample_id, "retriever": retriever}
        ledger.add(_record(tokens, usd).model_copy(update={"tag": tag}))
    one = ledger.total(sample_id="q1", retriever="agent")
    assert (one.prompt_tokens, one.calls, one.cost_usd) == (100, 1, pytest.approx(0.01))
    q1 = ledger.total(sample_id="q1")
    assert (q1.prompt_tokens, q1.calls, q1.cost_usd) == (300, 2, None)  # one price unknown: total unknown
    by = ledger.by("sample_id", retriever="agent")
    assert {k: v.prompt_tokens for k, v in by.items()} == {"q1": 100, "q2": 400}
