"""A per-run spending limit in tokens and/or dollars, shared by every client of the run.

``check()`` runs before a call starts (once it has its request slot: a call queued behind the
client's concurrency limit is checked when its turn comes) and raises :class:`BudgetExceeded`
once the limit is reached; ``add()`` counts a finished call. Calls already in flight when the
limit is crossed still finish and are counted, so a run can overshoot by at most the calls in
flight (the client's concurrency). Replies served from the cache cost nothing and are not counted unless
``count_cached=True`` (useful to make a replayed run stop exactly where the recorded one did).
"""

from __future__ import annotations

import threading

from pageindex.llm.types import BudgetExceeded, UsageRecord


class Budget:
    def __init__(
        self, max_tokens: int | None = None, max_usd: float | None = None, *, count_cached: bool = False
    ) -> None:
        if max_tokens is not None and max_tokens < 0 or max_usd is not None and max_usd < 0:
            raise ValueError("budget limits must be >= 0")
        self.max_tokens = max_tokens
        self.max_usd = max_usd
        self.count_cached = count_cached
        self.spent_tokens = 0
        self.spent_usd = 0.0
        self.calls = 0
        self._lock = threading.Lock()

    @property
    def exhausted(self) -> bool:
        with self._lock:
            return self._reason() is not None

    def _reason(self) -> str | None:
        if self.max_tokens is not None and self.spent_tokens >= self.max_tokens:
            return f"token budget spent: {self.spent_tokens} of {self.max_tokens} tokens"
        if self.max_usd is not None and self.spent_usd >= self.max_usd:
            return f"dollar budget spent: ${self.spent_usd:.4f} of ${self.max_usd:.4f}"
        return None

    def check(self, what: str = "") -> None:
        """Raise :class:`BudgetExceeded` if the budget is spent (call before starting work)."""
        with self._lock:
            reason = self._reason()
        if reason is not None:
            prefix = f"{what}: " if what else ""
            raise BudgetExceeded(f"{prefix}{reason}; no new model calls are started")

    def add(self, record: UsageRecord) -> None:
        if record.cached and not self.count_cached:
            return
        with self._lock:
            self.spent_tokens += record.total_tokens
            self.spent_usd += record.cost_usd or 0.0
            self.calls += 1

    def charge_estimate(self, tokens: int, usd: float | None = None) -> None:
        """Count tokens no server reported (the estimated prompt of an attempt that timed out:
        the server still computed it), and their price when the model has one, so a dollar
        budget stops such calls as a token budget does."""
        if tokens > 0:
            with self._lock:
                self.spent_tokens += tokens
                self.spent_usd += usd or 0.0

    def __repr__(self) -> str:
        return (
            f"Budget(max_tokens={self.max_tokens}, max_usd={self.max_usd}, "
            f"spent_tokens={self.spent_tokens}, spent_usd={self.spent_usd:.6f})"
        )
