"""The run's event stream: one event per finished sample, plus start and end.

Code that wants to watch a run (the progress bar, a dashboard, a test) subscribes a
callback to :class:`EventBus`; the runner publishes. A subscriber that raises is logged
and unsubscribed, never allowed to break the run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel

from bench.samples import Sample

log = logging.getLogger(__name__)


class RunProgress(BaseModel):
    done: int = 0
    total: int = 0
    skipped: int = 0  # finished in an earlier attempt (resume)
    correct: int = 0
    judged: int = 0
    errors: int = 0
    tokens: int = 0
    cost_usd: float | None = 0.0

    @property
    def accuracy(self) -> float | None:
        """Correct over the samples done, as the summary's accuracy: errors and answers left unjudged
        count as not correct (they were left out, so "acc" read higher than the summary); None until
        a verdict is in."""
        return self.correct / self.done if self.judged else None

    def add(self, sample: Sample) -> None:
        self.done += 1
        self.tokens += sample.tokens + sample.judge_prompt_tokens + sample.judge_completion_tokens
        if sample.status == "error":
            self.errors += 1
        if sample.verdict is not None:
            self.judged += 1
            self.correct += sample.verdict == "correct"
        if self.cost_usd is not None:
            self.cost_usd = None if sample.cost_usd is None else self.cost_usd + sample.cost_usd


class RunEvent(BaseModel):
    # tree_building: before the run, progress.done of progress.total trees ready (progress.skipped of
    # them loaded from the tree cache: built by an earlier run), message = the filing under way and
    # cached = whether it is loaded from the tree cache rather than built (done == total: all ready);
    # waiting: during set-up, a model endpoint has not
    # answered the preflight for a while (message says which, and why that may be); warning: during
    # set-up, before any model call, something the user should know at once (message)
    kind: Literal["tree_building", "waiting", "warning", "run_started", "sample_finished", "run_finished"]
    run_id: str
    progress: RunProgress
    sample: Sample | None = None
    status: str | None = None  # final run status, on run_finished
    message: str = ""
    cached: bool = False  # tree_building: the tree under way comes from the tree cache


Subscriber = Callable[[RunEvent], None]


class EventBus:
    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []

    def subscribe(self, callback: Subscriber) -> None:
        self._subscribers.append(callback)

    def publish(self, event: RunEvent) -> None:
        for callback in list(self._subscribers):
            try:
                callback(event)
            except Exception:  # a broken watcher must not break the run
                log.exception("event subscriber %r failed; unsubscribed", callback)
                self._subscribers.remove(callback)
