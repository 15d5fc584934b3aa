"""Fixtures for tree tests: each real filing is built once per session (cache in a temp dir)."""

from __future__ import annotations

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
