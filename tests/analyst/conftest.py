"""Fixtures for analyst tests: a private cache dir (trees, sessions, summaries) shared by the
test session, real trees built from FinanceBench filings, and an analyst on the scripted model."""

from __future__ import annotations

from pathlib import Path

import pytest

from pageindex.tree import Tree, build_tree

POLICIES = Path(__file__).with_name("policies.py")


@pytest.fixture(scope="session")
def analyst_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("pageindex_cache")


@pytest.fixture(autouse=True)
def _cache_env(analyst_cache, monkeypatch, tmp_path):
    # trees are shared (built once); sessions are per test
    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "cache").mkdir()
    (analyst_cache / "trees").mkdir(exist_ok=True)  # a test run alone must not find a dangling link
    (tmp_path / "cache" / "trees").symlink_to(analyst_cache / "trees", target_is_directory=True)


@pytest.fixture(scope="session")
def analyst_tree(fb_pdf, analyst_cache):
    built: dict[str, Tree] = {}
    (analyst_cache / "trees").mkdir(exist_ok=True)

    def _tree(doc_name: str) -> Tree:
        if doc_name not in built:
            built[doc_name] = build_tree(fb_pdf(doc_name), cache_dir=analyst_cache / "trees")
        return built[doc_name]

    return _tree
