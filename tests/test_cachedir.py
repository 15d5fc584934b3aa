"""One cache root for every cache (it was computed in five modules, two of which did not expand ``~``)."""

from __future__ import annotations

from pathlib import Path

from pageindex.cachedir import cache_root


def test_every_cache_lives_under_the_one_root(monkeypatch, tmp_path):
    from bench.runner import REPO_DEMO_DIR  # noqa: F401  (bench's demo data goes there too)
    from pageindex.analyst.store import default_sessions_dir
    from pageindex.llm.cache import default_cache_path
    from pageindex.llm.doctor import cache_dir
    from pageindex.tree.cache import default_cache_dir

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", "~/caches")
    root = tmp_path / "caches"
    assert cache_root() == root
    found = [default_cache_dir(), default_cache_path(), cache_dir(), default_sessions_dir()]
    assert found == [root / "trees", root / "llm.sqlite", root / "doctor", root / "sessions"]
    for unset in ("", None):
        if unset is None:
            monkeypatch.delenv("PAGEINDEX_CACHE_DIR")
        else:
            monkeypatch.setenv("PAGEINDEX_CACHE_DIR", unset)
        assert cache_root() == Path(tmp_path) / ".cache" / "pageindex"
