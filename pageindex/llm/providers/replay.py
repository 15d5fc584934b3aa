"""The replay provider: ``replay/<model>`` answers only from the cache (recorded with
``openai/<model>`` and the cache in mode ``rw``) and never touches the network; a miss raises
``ReplayMiss``. A run recorded as ``openai/<model>`` and its replay are comparable runs."""

from __future__ import annotations

from typing import ClassVar

from pageindex.llm.providers.base import Provider, register_provider

PREFIX = "replay/"


@register_provider("replay")
class Replay(Provider):
    """Answers from the cache only."""

    remote: ClassVar[bool] = False
    replay_only: ClassVar[bool] = True

    def transport(self):  # type: ignore[no-untyped-def]
        raise AssertionError("replay-only clients never reach the network")


def is_replay(spec: str) -> bool:
    """Whether ``spec`` is a ``replay/<model>`` spec."""
    return spec.strip().startswith(PREFIX)
