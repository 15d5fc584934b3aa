"""Fixtures shared by the CLI tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def quiet_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No model configured from the environment, and a cache of the test's own."""
    for var in ("OPENAI_API_KEY", "PAGEINDEX_JUDGE_API_KEY", "PAGEINDEX_MODEL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(tmp_path / "cache"))
