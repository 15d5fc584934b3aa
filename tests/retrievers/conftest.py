"""Fixtures for retriever tests: real trees from FinanceBench filings (built once per session)."""

from __future__ import annotations

import pytest

from pageindex.tree import Tree, build_tree


@pytest.fixture(scope="session")
def fb_tree(fb_pdf):
    """``fb_tree("3M_2018_10K")`` -> the section tree of that filing (cached per session)."""
    built: dict[str, Tree] = {}

    def _tree(doc_name: str) -> Tree:
        if doc_name not in built:
            built[doc_name] = build_tree(fb_pdf(doc_name))
        return built[doc_name]

    return _tree


@pytest.fixture(scope="session")
def tree_3m(fb_tree) -> Tree:
    return fb_tree("3M_2018_10K")
