"""Progress of a run fed by its event stream: trees being built, then samples finishing.

On a terminal it is a live rich progress bar. Anywhere else (a CI log, a pipe, a file) it prints
plain lines that are never cut or overwritten: one for every ``every`` samples (about a tenth of
the run) or after ``interval_s`` seconds with something new, whichever comes first, and one when the
run is done; while trees are built, the count and the filing being built.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from bench.events import RunEvent, RunProgress
from pageindex.wording import counted

INTERVAL_S = 10.0


def _stats(p: RunProgress) -> str:
    acc = "-" if p.accuracy is None else f"{p.accuracy:.0%}"
    cost = "unknown" if p.cost_usd is None else f"${p.cost_usd:.4f}"
    return f"acc {acc}  tokens {p.tokens:,}  cost {cost}  errors {p.errors}"


def _clock(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


class _Throttle:
    """Says when a line is due: every ``every`` steps, or ``interval_s`` after the last line when
    there is news, and always at the first and the last step."""

    def __init__(self, total: int, interval_s: float, clock: Callable[[], float], every: int | None):
        self.total = total
        self.every = every or max(1, -(-total // 10))  # about ten lines for the whole run
        self.interval_s = interval_s
        self.clock = clock
        self.last_done = -1
        self.last_at = clock()

    def due(self, done: int) -> bool:
        now = self.clock()
        if (
            self.last_done < 0
            or done >= self.total
            or done - self.last_done >= self.every
            or (done > self.last_done and now - self.last_at >= self.interval_s)
        ):
            self.last_done, self.last_at = done, now
            return True
        return False


class ProgressView:
    """Subscribe ``view.on_event`` to an :class:`~bench.events.EventBus`; use as a context manager.
    ``live`` defaults to whether ``console`` is a terminal."""

    def __init__(
        self,
        console: Console | None = None,
        *,
        live: bool | None = None,
        every: int | None = None,
        interval_s: float = INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.console = console or Console()
        self.live = self.console.is_terminal if live is None else live
        self.every = every
        self.interval_s = interval_s
        self.clock = clock
        self.started = clock()
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[stats]}"),
            TimeElapsedColumn(),
            console=self.console,
            transient=False,
        )
        self.task = None
        self.tree_task = None
        self._throttle: _Throttle | None = None
        self._tree_throttle: _Throttle | None = None

    def __enter__(self) -> ProgressView:
        if self.live:
            self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live:
            self.progress.stop()

    # -- plain lines -----------------------------------------------------------------
    def _line(self, text: str) -> None:
        self.console.print(text, markup=False, highlight=False, soft_wrap=True, crop=False)

    def _elapsed(self) -> str:
        return _clock(self.clock() - self.started)

    # -- events ----------------------------------------------------------------------
    def on_event(self, event: RunEvent) -> None:
        if event.kind == "tree_building":
            self._on_tree(event)
            return
        if event.kind == "waiting":
            (self.progress.console.print if self.live else self._line)(event.message)
            return
        if event.kind == "warning":  # the command prints it (on standard error)
            return
        p = event.progress
        if event.kind == "run_started":
            note = f" ({p.skipped} already done)" if p.skipped else ""
            if self.live:
                self.task = self.progress.add_task(f"{event.run_id}{note}", total=p.total, stats=_stats(p))
            else:
                self._throttle = _Throttle(p.total, self.interval_s, self.clock, self.every)
                self._throttle.due(0)
                self._line(f"{event.run_id}: {counted(p.total, 'sample')} to run{note}")
            return
        if self.live:
            if self.task is not None:
                self.progress.update(self.task, completed=p.done, stats=_stats(p))
            return
        if self._throttle is None:
            return
        if event.kind == "run_finished" or self._throttle.due(p.done):
            if event.kind == "run_finished" and self._throttle.last_done == p.done and p.done:
                return  # the last sample's line said it all
            pct = f" ({p.done / p.total:.0%})" if p.total else ""
            self._line(f"{event.run_id}: {p.done}/{p.total} samples{pct}  {_stats(p)}  {self._elapsed()}")

    def _on_tree(self, event: RunEvent) -> None:
        p = event.progress
        done, total = p.done, p.total
        ready = f"{counted(total, 'tree')} ready"
        if p.skipped:  # trees the tree cache held: counted apart from those built
            built = f", {total - p.skipped} built" if total > p.skipped else ""
            ready += f" ({p.skipped} loaded from the tree cache{built})"
        if done >= total:
            what = ready
        elif event.cached:
            what = f"loading tree {done + 1}/{total} from the tree cache: {event.message}"
        else:
            what = f"building tree {done + 1}/{total}: {event.message}"
        if self.live:
            if self.tree_task is None:
                self.tree_task = self.progress.add_task("trees", total=total, stats="")
            self.progress.update(self.tree_task, completed=done, description="trees", stats=what)
            return
        if self._tree_throttle is None:
            self._tree_throttle = _Throttle(total, self.interval_s, self.clock, None)
        if self._tree_throttle.due(done):
            self._line(f"{what}  {self._elapsed()}")
