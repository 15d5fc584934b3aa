"""Live progress of a question: which sections are being read, iteration n of N.

Retrievers are not changed for this: :class:`ObservedClient` wraps the LLM client a retriever
gets, tells a :class:`ProgressSink` about each model call (role, iteration or turn from the
call's tag) and about the sections each reply asks to read. :class:`RichProgress` shows that on
a terminal (a spinner line plus one line per section read); :class:`NullProgress` shows nothing.
"""

from __future__ import annotations

from typing import Any, Protocol

from rich.console import Console
from rich.markup import escape
from rich.status import Status

from pageindex.llm.types import Message
from pageindex.retrievers.tools import SectionFetcher
from pageindex.tree.model import Tree


class ProgressSink(Protocol):
    def stage(self, text: str) -> None: ...

    def model_call(self, role: str, step: int | None) -> None: ...

    def reading(self, requested: str) -> None: ...


class NullProgress:
    def stage(self, text: str) -> None:
        pass

    def model_call(self, role: str, step: int | None) -> None:
        pass

    def reading(self, requested: str) -> None:
        pass


class RecordingProgress(NullProgress):
    """Keeps every progress line (for tests and logs)."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def stage(self, text: str) -> None:
        self.lines.append(f"stage: {text}")

    def model_call(self, role: str, step: int | None) -> None:
        self.lines.append(f"call: {role} step {step}")

    def reading(self, requested: str) -> None:
        self.lines.append(f"reading: {requested}")


class RichProgress:
    """Spinner with the current step, and a line per section read (on ``console``, usually stderr)."""

    def __init__(self, console: Console, tree: Tree) -> None:
        self.console = console
        self.tree = tree
        self.limit: int | None = None  # N of "iteration n of N"
        self.unit = "step"
        self._stage = ""
        self._status: Status | None = None
        self._resolver: SectionFetcher | None = None

    def __enter__(self) -> RichProgress:
        self._status = self.console.status("working…", spinner="dots")
        self._status.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def _show(self, text: str) -> None:
        if self._status is not None:
            self._status.update(text)

    def stage(self, text: str) -> None:
        self._stage = text
        self._show(text)

    def model_call(self, role: str, step: int | None) -> None:
        where = ""
        if step is not None:
            where = f"{self.unit} {step}" + (f" of {self.limit}" if self.limit else "") + " · "
        self._show(f"{self._stage} · {where}{role} model thinking…")

    def reading(self, requested: str) -> None:
        if self._resolver is None:
            self._resolver = SectionFetcher(self.tree)
        node_id = self._resolver.resolve(requested).node_id
        if node_id is None:
            self.console.print(f"  [dim]looking for[/] {escape(requested)}", highlight=False)
            return
        node = self.tree.get(node_id)
        span = (
            f"page {node.start_page}" if node.page_count == 1 else f"pages {node.start_page}-{node.end_page}"
        )
        # a filing's heading as printed ("Item 6. [reserved]"), not read as markup
        said = f"  [dim]reading[/] {escape(node_id)} [dim]{escape(node.title)} ({span})[/]"
        self.console.print(said, highlight=False)
        self._show(f"{self._stage} · reading {node_id}")


class ObservedClient:
    """An LLM client that reports each call to a progress sink; everything else is delegated."""

    def __init__(self, inner: Any, sink: ProgressSink) -> None:
        self._inner = inner
        self._sink = sink

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    @staticmethod
    def _step(tag: dict[str, Any] | None) -> int | None:
        tag = tag or {}
        for key in ("iteration", "pass", "round", "turn"):
            if isinstance(tag.get(key), int):
                return tag[key]
        return None

    async def chat(self, messages: list[Message], **kwargs: Any) -> Any:
        tag = kwargs.get("tag") or {}
        self._sink.model_call(str(tag.get("role", "")), self._step(tag))
        resp = await self._inner.chat(messages, **kwargs)
        for call in resp.tool_calls:
            requested = (call.arguments or {}).get("node_id")
            if requested:
                self._sink.reading(str(requested))
        return resp

    async def structured(self, messages: list[Message], **kwargs: Any) -> Any:
        tag = kwargs.get("tag") or {}
        self._sink.model_call(str(tag.get("role", "")), self._step(tag))
        return await self._inner.structured(messages, **kwargs)
