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


def _no_home(monkeypatch, tmp_path):
    """A process with no home folder: HOME unset, the user id not in the password database."""
    import pwd
    import tempfile

    def not_listed(uid: int) -> pwd.struct_passwd:
        raise KeyError(f"getpwuid(): uid not found: {uid}")

    monkeypatch.delenv("HOME", raising=False)
    monkeypatch.delenv("PAGEINDEX_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr(pwd, "getpwuid", not_listed)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()


def test_with_no_home_folder_the_caches_go_to_xdg_cache_home_else_a_private_temp(monkeypatch, tmp_path):
    """`Path.home()` raised `RuntimeError: Could not determine home directory`, and every command that
    touched a cache ended `error: internal error` (a container run as a user id /etc/passwd lacks)."""
    import os
    import stat

    _no_home(monkeypatch, tmp_path)
    root = cache_root()
    assert root == tmp_path / "tmp" / f"pageindex-cache-{os.getuid()}"
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "pageindex"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/xdg")  # not absolute: the spec says to ignore it
    assert cache_root() == tmp_path / "tmp" / f"pageindex-cache-{os.getuid()}"
    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", "~/caches")  # no home for ~: never a folder named "~" here
    assert cache_root() == tmp_path / "tmp" / f"pageindex-cache-{os.getuid()}"


def test_a_temp_cache_folder_another_user_could_have_made_is_not_used(monkeypatch, tmp_path):
    import os

    _no_home(monkeypatch, tmp_path)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "tmp" / f"pageindex-cache-{os.getuid()}").symlink_to(tmp_path / "elsewhere")
    root = cache_root()
    assert root.parent == tmp_path / "tmp" and root.name.startswith("pageindex-cache-")
    assert not root.is_symlink() and root.is_dir()


def test_an_empty_home_is_no_home_not_the_root_folder(monkeypatch, tmp_path):
    """`HOME=` (set, empty) made Python's home `/`, so the caches went to `/.cache/pageindex`."""
    import pwd

    monkeypatch.setenv("HOME", "")
    monkeypatch.delenv("PAGEINDEX_CACHE_DIR", raising=False)
    fields = list(pwd.getpwuid(0))
    fields[5] = str(tmp_path / "listed")  # pw_dir
    listed = pwd.struct_passwd(fields)
    monkeypatch.setattr(pwd, "getpwuid", lambda uid: listed)
    assert cache_root() == tmp_path / "listed" / ".cache" / "pageindex"


def test_bench_run_with_no_home_folder_runs_and_caches_its_trees_in_the_temp_folder(monkeypatch, tmp_path):
    """It dropped every question `tree_build_failed` (`Could not determine home directory`), exit 2."""
    import json
    import os

    from tests.cli.clirun import invoke

    _no_home(monkeypatch, tmp_path)
    out = tmp_path / "run"
    code, output = invoke(
        ["bench", "run", "-r", "extractive", "--judge", "rules", "--limit", "2", "-q", "-o", str(out)]
    )
    assert code == 0, output
    samples = [json.loads(line) for line in (out / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [s["status"] for s in samples] == ["answer", "answer"]
    trees = tmp_path / "tmp" / f"pageindex-cache-{os.getuid()}" / "trees"
    assert len(list(trees.glob("*.json"))) == 1
