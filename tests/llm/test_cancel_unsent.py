"""A call cancelled (a sample's ``time_limit``, a run stopped) while no request of it is out -- in the
back-off sleep after a 429, before its retry -- cut no request: it is counted as the attempts the
server saw, and no estimated prompt is charged to the budget. Before, a phantom attempt was added (one
more LLM call than the server logged, and an estimate of its prompt against ``--budget``); seen at the
end of a failed ``build --summaries``: 76 calls counted, 75 requests at the server."""

from __future__ import annotations

import asyncio

from bench.faults import FaultServer
from pageindex.llm import Budget, UsageLedger, make_client
from pageindex.llm.types import Message


async def _cut_after(client, seconds: float) -> None:
    task = asyncio.create_task(client.chat([Message(role="user", content="what is 40 + 2? " * 50)]))
    await asyncio.sleep(seconds)
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass


def test_a_call_cancelled_in_its_retry_back_off_counts_only_the_attempt_the_server_saw() -> None:
    ledger, budget = UsageLedger(), Budget(max_tokens=10**6)
    with FaultServer(rate=1.0, faults=["429"], retry_after_seconds=5) as srv:
        client = make_client("openai/x", base_url=srv.base_url, ledger=ledger, budget=budget, max_retries=3)
        asyncio.run(_cut_after(client, 1.0))  # the 429 came back at once; the retry waits 5 s
        stats = srv.stats()
    assert stats.chat_requests == 1
    [record] = ledger.records()
    assert record.error == "cancelled" and record.calls == 1  # was 2
    assert record.prompt_tokens == 0 and budget.spent_tokens == 0  # a 429 computed nothing


def test_a_call_cancelled_while_its_request_is_out_still_counts_it() -> None:
    """The other side: a request the server is computing (a stall) is a call, its estimated prompt
    charged, as README's *Every attempt counted* says of a call cut by --time-limit."""
    ledger, budget = UsageLedger(), Budget(max_tokens=10**6)
    with FaultServer(rate=1.0, faults=["stall"], stall_seconds=30) as srv:
        client = make_client("openai/x", base_url=srv.base_url, ledger=ledger, budget=budget, max_retries=0)
        asyncio.run(_cut_after(client, 1.0))
        stats = srv.stats()
    assert stats.chat_requests == 1
    [record] = ledger.records()
    assert record.error == "cancelled" and record.calls == 1
    assert budget.spent_tokens > 0
