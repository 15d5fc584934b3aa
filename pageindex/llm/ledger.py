"""The usage ledger: every model call of a run, with totals per role, model, sample, retriever.

All clients of a run share one :class:`UsageLedger`. Each call adds one :class:`UsageRecord`
(prompt / completion / cached tokens, latency, cost, model, role, the caller's tag such as
``{"sample_id": ..., "retriever": ..., "iteration": ...}``, and whether the cache served it).
Adding is guarded by a lock, so threads and tasks may share a ledger.

It is the one place model usage is counted: a retrieval's usage (``QuestionRun.usage``, hence
``RetrievalResult.usage`` and the sample's retriever tokens, calls and cost) is read back from the
records tagged with its ``retrieval_id``; nothing else adds tokens up call by call. Records are
indexed by tag value, so reading one retrieval's records does not scan the whole run.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from pageindex.llm.types import Usage, UsageRecord

if TYPE_CHECKING:
    import pandas as pd


def sum_usage(records: Iterable[Usage]) -> Usage:
    """Sum usages; cost stays None ("unknown") if any part is unknown."""
    total = Usage()
    for record in records:
        total = total + record
    return total


class UsageLedger:
    def __init__(self) -> None:
        self._records: list[UsageRecord] = []
        self._by_tag: dict[tuple[str, Any], list[UsageRecord]] = {}
        self._lock = threading.Lock()

    def add(self, record: UsageRecord) -> None:
        with self._lock:
            self._records.append(record)
            for item in record.tag.items():
                try:
                    self._by_tag.setdefault(item, []).append(record)
                except TypeError:  # an unhashable tag value: found by scanning instead
                    continue

    def __len__(self) -> int:
        return len(self._records)

    def records(
        self,
        *,
        role: str | None = None,
        model: str | None = None,
        cached: bool | None = None,
        **tag: Any,
    ) -> list[UsageRecord]:
        """Records matching every given filter; ``tag`` keys match the caller's tag."""
        with self._lock:
            snapshot = self._records
            for item in tag.items():
                try:
                    indexed = self._by_tag.get(item, [])
                except TypeError:
                    continue
                if len(indexed) < len(snapshot):
                    snapshot = indexed
            snapshot = list(snapshot)
        return [
            record
            for record in snapshot
            if (role is None or record.role == role)
            and (model is None or record.model == model)
            and (cached is None or record.cached == cached)
            and all(record.tag.get(key) == value for key, value in tag.items())
        ]

    def total(
        self, *, role: str | None = None, model: str | None = None, cached: bool | None = None, **tag: Any
    ) -> Usage:
        """Summed usage of the matching records (e.g. ``total(role="judge", sample_id="q1")``)."""
        return sum_usage(self.records(role=role, model=model, cached=cached, **tag))

    def by(self, field: str, **filters: Any) -> dict[Any, Usage]:
        """Totals grouped by ``role``, ``model``, ``cached`` or a tag key (``sample_id``, ``retriever``)."""
        groups: dict[Any, list[UsageRecord]] = {}
        for record in self.records(**filters):
            key = getattr(record, field) if field in ("role", "model", "cached") else record.tag.get(field)
            groups.setdefault(key, []).append(record)
        return {key: sum_usage(records) for key, records in groups.items()}

    def to_frame(self) -> pd.DataFrame:
        """One row per call; tag keys become ``tag.<key>`` columns."""
        import pandas as pd

        rows = []
        for record in self.records():
            row = record.model_dump(exclude={"tag"})
            row.update({f"tag.{key}": value for key, value in record.tag.items()})
            rows.append(row)
        return pd.DataFrame(rows)
