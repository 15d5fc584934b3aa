"""Shared fixtures. Real filings come from FinanceBench: ``$PAGEINDEX_FINANCEBENCH``,
by default ``../shared/financebench`` beside the repository root."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


def financebench_dir() -> Path:
    return Path(os.environ.get("PAGEINDEX_FINANCEBENCH", REPO_ROOT.parent / "shared" / "financebench"))


@pytest.fixture(scope="session")
def fb_dir() -> Path:
    path = financebench_dir()
    if not (path / "questions.jsonl").exists():
        pytest.fail(f"FinanceBench data not found at {path}; set PAGEINDEX_FINANCEBENCH")
    return path


@pytest.fixture(scope="session")
def fb_pdf(fb_dir: Path):
    """Path of a FinanceBench filing by doc name, e.g. ``fb_pdf('3M_2018_10K')``."""

    def _pdf(doc_name: str) -> Path:
        return fb_dir / "pdfs" / f"{doc_name}.pdf"

    return _pdf
