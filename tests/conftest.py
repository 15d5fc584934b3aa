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


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    """The bundled demo dataset (three synthetic 10-Ks, 18 questions), written once per test module."""
    from bench.datasets.demo import write_demo_dataset

    root = tmp_path_factory.mktemp("demo")
    write_demo_dataset(root)
    return root


@pytest.fixture
def no_model_env(monkeypatch, tmp_path):
    """No model configured (no key, model, base URL or scripted policy in the environment) and a cache
    folder of the test's own (no doctor findings, trees or replies of another test). A module takes it
    for every test with ``pytestmark = pytest.mark.usefixtures("no_model_env")``."""
    for var in ("OPENAI_API_KEY", "PAGEINDEX_JUDGE_API_KEY", "PAGEINDEX_MODEL", "OPENAI_BASE_URL",
                "PAGEINDEX_SCRIPTED_POLICY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(tmp_path / "cache"))
