"""The usage ledger: every model call of a run, with totals per role, model, sample, retriever.

All clients of a run share one :class:`UsageLedger`. Each call adds one :class:`UsageRecord`
(prompt / completion / cached tokens, latency, cost, model, role, the caller's tag such as
``{"sample_id": ..., "retriever": ..., "iteration": ...}``, and whether the cache served it).
Adding is guarded by a lock, so threads and tasks may share a ledger.

It is the one place model usage is counted: a retrieval's usage (``QuestionRun.usage``, hence
``RetrievalResult.usage`` and the sample's retriever tokens, calls and cost) is read back from the
records tagged with its ``retrieval_id``; nothing else adds tokens up call by call. Records are
indexed by tag value, so reading one retrieval's records does not scan the whole run.

The run's totals (all calls, those sent, those a cache or a shared call answered, and the attempts
that reported no usage) are running sums, added in the order the records come, as summing the
records would add them. A ledger made with ``keep_records=False`` (``bench run``'s) keeps a record
only while its retrieval is under way (:meth:`hold` to :meth:`release`, which ``aretrieve`` calls):
then every figure it is asked for is the same, and a run holds the records of the retrievals in
flight, not one per call of the run (about 1.4 KB a call).
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
    def __init__(self, *, keep_records: bool = True) -> None:
        self.keep_records = keep_records
        self._records: list[UsageRecord] = []
        self._by_tag: dict[tuple[str, Any], list[UsageRecord]] = {}
        # keep_records=False: the records of the retrievals under way, by retrieval id
        self._held: dict[Any, list[UsageRecord]] = {}
        self._calls_entered = 0
        # running totals, keyed by the ``cached`` filter (None: every record)
        self._totals: dict[bool | None, Usage] = {None: Usage(), True: Usage(), False: Usage()}
        self._unreported: dict[bool | None, tuple[int, int]] = {None: (0, 0), True: (0, 0), False: (0, 0)}
        self._lock = threading.Lock()

    def add(self, record: UsageRecord) -> None:
        with self._lock:
            self._calls_entered += 1
            for key in (None, record.cached):
                self._totals[key] = self._totals[key] + record
                attempts, estimated = self._unreported[key]
                self._unreported[key] = (
                    attempts + record.unreported_attempts, estimated + record.estimated_prompt_tokens
                )
            if not self.keep_records:
                held = self._held.get(_hashable(record.tag.get("retrieval_id")))
                if held is not None:
                    held.append(record)
                return
            self._records.append(record)
            for item in record.tag.items():
                try:
                    self._by_tag.setdefault(item, []).append(record)
                except TypeError:  # an unhashable tag value: found by scanning instead
                    continue

    def hold(self, retrieval_id: str) -> None:
        """Keep the records tagged with ``retrieval_id`` until :meth:`release` (a ledger that keeps
        every record keeps them anyway)."""
        if not self.keep_records:
            with self._lock:
                self._held.setdefault(retrieval_id, [])

    def release(self, retrieval_id: str) -> None:
        """The retrieval ``retrieval_id`` is over: its records, already in the running totals, are let
        go, and its later ones (a request it abandoned, answered after) go only into the totals."""
        if not self.keep_records:
            with self._lock:
                self._held.pop(retrieval_id, None)

    def __len__(self) -> int:
        """The calls entered (every record added, kept or not)."""
        return self._calls_entered

    @property
    def records_held(self) -> int:
        """The records this ledger holds now."""
        with self._lock:
            if self.keep_records:
                return len(self._records)
            return sum(len(records) for records in self._held.values())

    def records(
        self,
        *,
        role: str | None = None,
        model: str | None = None,
        cached: bool | None = None,
        **tag: Any,
    ) -> list[UsageRecord]:
        """Records matching every given filter; ``tag`` keys match the caller's tag. A ledger made with
        ``keep_records=False`` answers only for a retrieval under way (``retrieval_id=...``)."""
        with self._lock:
            if self.keep_records:
                snapshot = self._records
                for item in tag.items():
                    try:
                        indexed = self._by_tag.get(item, [])
                    except TypeError:
                        continue
                    if len(indexed) < len(snapshot):
                        snapshot = indexed
            else:
                held = self._held.get(_hashable(tag.get("retrieval_id")))
                if held is None:
                    raise LookupError(
                        "this usage ledger keeps only the records of retrievals under way "
                        "(keep_records=False): ask for one by its retrieval_id, or for a total"
                    )
                snapshot = held
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
        """Summed usage of the matching records (e.g. ``total(role="judge", sample_id="q1")``); with
        no filter but ``cached``, the running total."""
        if role is None and model is None and not tag:
            with self._lock:
                return self._totals[cached].model_copy()
        return sum_usage(self.records(role=role, model=model, cached=cached, **tag))

    def unreported(self, *, cached: bool | None = None) -> tuple[int, int]:
        """Attempts the server took without reporting usage, and their estimated prompt tokens, summed
        over the records (``cached``: only those served from a cache, or only those sent)."""
        with self._lock:
            return self._unreported[cached]

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


def _hashable(value: Any) -> Any:
    """``value`` as a dict key (None for an unhashable one, which no retrieval id is)."""
    try:
        hash(value)
    except TypeError:
        return None
    return value
