"""The one folder every pageindex cache lives under: section trees (``trees/``), LLM replies
(``llm.sqlite``), endpoint doctor reports (``doctor/``), analyst sessions (``sessions/``) and the
generated demo data (``demo-data/``)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_root"]


def cache_root() -> Path:
    """``$PAGEINDEX_CACHE_DIR`` (``~`` expanded) when set and not empty, else ``~/.cache/pageindex``."""
    root = os.environ.get("PAGEINDEX_CACHE_DIR")
    return Path(root).expanduser() if root else Path.home() / ".cache" / "pageindex"
