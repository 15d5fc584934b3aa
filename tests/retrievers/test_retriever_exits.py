"""A retriever that raises CancelledError of its own or calls sys.exit() is an error sample, like any other
exception (trial 14: the first lost its sample while the run said "finished", the second ended the run with
exit 3, the budget's code); a cancellation someone asked for still cancels."""

from __future__ import annotations

import asyncio
import sys

import pytest

from pageindex.retrievers import aretrieve, register_retriever, retrieve


@register_retriever("test_own_cancel", needs_llm=False)
async def own_cancel(run, opts):
    raise asyncio.CancelledError()


@register_retriever("test_exits", needs_llm=False)
async def exits(run, opts):
    sys.exit(3)


@register_retriever("test_waits", needs_llm=False)
async def waits(run, opts):
    await asyncio.sleep(30)
    return run.result("answer", answer="never")  # pragma: no cover


def test_a_retrievers_own_cancelled_error_is_an_error_sample(tree_3m):
    result = retrieve(tree_3m, "q", retriever="test_own_cancel")
    assert (result.status, result.error_kind) == ("error", "CancelledError")
    assert result.error == (
        "CancelledError: retriever 'test_own_cancel' raised CancelledError, no cancellation was asked for"
    )


def test_a_retriever_calling_exit_is_an_error_sample(tree_3m):
    result = retrieve(tree_3m, "q", retriever="test_exits")
    assert (result.status, result.error_kind) == ("error", "SystemExit")
    assert result.error == (
        "SystemExit: retriever 'test_exits' called exit(3); a retriever returns a result or raises"
    )


def test_a_cancellation_asked_for_still_cancels(tree_3m):
    async def main() -> None:
        task = asyncio.create_task(aretrieve(tree_3m, "q", retriever="test_waits"))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
