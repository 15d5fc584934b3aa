"""A live rich progress bar fed by the run's event stream."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from bench.events import RunEvent, RunProgress


def _stats(p: RunProgress) -> str:
    acc = "-" if p.accuracy is None else f"{p.accuracy:.0%}"
    cost = "unknown" if p.cost_usd is None else f"${p.cost_usd:.4f}"
    return f"acc {acc}  tokens {p.tokens:,}  cost {cost}  errors {p.errors}"


class ProgressView:
    """Subscribe ``view.on_event`` to an :class:`~bench.events.EventBus`; use as a context manager."""

    def __init__(self, console: Console | None = None):
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[stats]}"),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        )
        self.task = None

    def __enter__(self) -> ProgressView:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def on_event(self, event: RunEvent) -> None:
        p = event.progress
        if event.kind == "run_started":
            note = f" ({p.skipped} already done)" if p.skipped else ""
            self.task = self.progress.add_task(f"{event.run_id}{note}", total=p.total, stats=_stats(p))
        elif self.task is not None:
            self.progress.update(self.task, completed=p.done, stats=_stats(p))
