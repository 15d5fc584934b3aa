"""Fixtures for tree tests: each real filing is built once per session (cache in a temp dir)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pageindex.tree import Tree, build_tree


@pytest.fixture(scope="session")
def tree_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("tree-cache")


@pytest.fixture(scope="session")
def built(fb_pdf, tree_cache_dir):
    """``built('3M_2018_10K')`` -> its Tree, built at most once per session."""
    trees: dict[str, Tree] = {}

    def _built(doc_name: str) -> Tree:
        if doc_name not in trees:
            trees[doc_name] = build_tree(fb_pdf(doc_name), cache_dir=tree_cache_dir)
        return trees[doc_name]

    return _built


def filings_dir() -> Path:
    """Non-10-K public filings: ``$PAGEINDEX_FILINGS``, by default ``../shared/filings``."""
    root = Path(__file__).resolve().parents[2]
    return Path(os.environ.get("PAGEINDEX_FILINGS", root.parent / "shared" / "filings"))


@pytest.fixture(scope="session")
def filing_tree(tree_cache_dir):
    """``filing_tree('TSMC_2023_20-F')`` -> its Tree (layout rules only: outline ignored)."""
    trees: dict[str, Tree] = {}

    def _built(name: str) -> Tree:
        if name not in trees:
            path = filings_dir() / f"{name}.pdf"
            if not path.is_file():
                pytest.fail(f"filing {path} not found; set PAGEINDEX_FILINGS")
            trees[name] = build_tree(path, cache_dir=tree_cache_dir, use_outline=False)
        return trees[name]

    return _built
