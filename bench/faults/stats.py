"""Request counters of the fault server, exact and thread-safe.

Every request except ``GET /stats`` itself is counted: in total, by path, by HTTP status
and by fault kind (``none`` for a normal answer). Chat requests are also counted per logical
request key (see ``protocol.logical_call_key``), so a test can check that no call was retried
more often than its cap, and the SDK's ``x-stainless-retry-count`` header is tallied.
"""

from __future__ import annotations

import threading
from collections import Counter

from pydantic import BaseModel, Field


class KeyStats(BaseModel):
    requests: int = 0
    faults: dict[str, int] = Field(default_factory=dict)
    answered: int = 0  # requests that got a normal (policy) reply or a content-level fault


class StatsSnapshot(BaseModel):
    """What ``/stats`` returns and ``FaultServer.stats()`` gives back."""

    total: int = 0
    chat_requests: int = 0
    by_path: dict[str, int] = Field(default_factory=dict)
    by_status: dict[str, int] = Field(default_factory=dict)
    by_fault: dict[str, int] = Field(default_factory=dict)
    by_key: dict[str, KeyStats] = Field(default_factory=dict)
    retry_count_header: dict[str, int] = Field(default_factory=dict)
    sticky_needs_more: int = 0  # conversations stuck in "needs more"
    in_flight: int = 0

    @property
    def faults(self) -> int:
        return sum(n for kind, n in self.by_fault.items() if kind != "none")

    @property
    def max_requests_per_key(self) -> int:
        return max((k.requests for k in self.by_key.values()), default=0)

    def summary_line(self) -> str:
        kinds = ", ".join(f"{k}={v}" for k, v in sorted(self.by_fault.items()) if k != "none")
        return (
            f"{self.total} requests ({self.chat_requests} chat), {self.faults} faults"
            + (f" [{kinds}]" if kinds else "")
            + f", {len(self.by_key)} distinct calls, max {self.max_requests_per_key} requests per call"
        )


class RequestStats:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        with getattr(self, "_lock", threading.Lock()):
            self._total = 0
            self._chat = 0
            self._paths: Counter[str] = Counter()
            self._statuses: Counter[str] = Counter()
            self._faults: Counter[str] = Counter()
            self._keys: dict[str, KeyStats] = {}
            self._retry_headers: Counter[str] = Counter()
            self._in_flight = 0
            self.sticky: set[str] = set()

    def begin(self, path: str) -> None:
        with self._lock:
            self._total += 1
            self._paths[path] += 1
            self._in_flight += 1

    def end(self, status: int | str) -> None:
        with self._lock:
            self._statuses[str(status)] += 1
            self._in_flight -= 1

    def chat(self, key: str, retry_header: str | None) -> int:
        """Count a chat request for ``key``; return its 0-based attempt number."""
        with self._lock:
            self._chat += 1
            stats = self._keys.setdefault(key, KeyStats())
            stats.requests += 1
            if retry_header is not None:
                self._retry_headers[retry_header] += 1
            return stats.requests - 1

    def key_faults(self, key: str) -> int:
        with self._lock:
            stats = self._keys.get(key)
            return sum(stats.faults.values()) if stats else 0

    def outcome(self, key: str | None, fault: str, answered: bool) -> None:
        with self._lock:
            self._faults[fault] += 1
            if key is not None:
                stats = self._keys.setdefault(key, KeyStats())
                if fault != "none":
                    stats.faults[fault] = stats.faults.get(fault, 0) + 1
                if answered:
                    stats.answered += 1

    def snapshot(self) -> StatsSnapshot:
        with self._lock:
            return StatsSnapshot(
                total=self._total,
                chat_requests=self._chat,
                by_path=dict(self._paths),
                by_status=dict(self._statuses),
                by_fault=dict(self._faults),
                by_key={k: v.model_copy(deep=True) for k, v in self._keys.items()},
                retry_count_header=dict(self._retry_headers),
                sticky_needs_more=len(self.sticky),
                in_flight=self._in_flight,
            )
