"""The one folder every pageindex cache lives under: section trees (``trees/``), LLM replies
(``llm.sqlite``), endpoint doctor reports (``doctor/``), analyst sessions (``sessions/``) and the
generated demo data (``demo-data/``)."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

__all__ = ["cache_root", "home_folder"]


def cache_root() -> Path:
    """``$PAGEINDEX_CACHE_DIR`` (``~`` expanded) when set and not empty, else ``~/.cache/pageindex``.

    A process with no home folder (``HOME`` unset or empty and the user not in the password database:
    a container run as an arbitrary user id) uses ``$XDG_CACHE_HOME/pageindex`` when that is an absolute
    path, else ``pageindex-cache-UID`` in the temp folder (private to the user). Every command stopped
    there with ``internal error: RuntimeError: Could not determine home directory``, and an empty
    ``HOME`` put the caches in ``/.cache``. A ``$PAGEINDEX_CACHE_DIR`` under ``~`` goes there too then."""
    root = os.environ.get("PAGEINDEX_CACHE_DIR")
    home = home_folder()
    if root and (root == "~" or root.startswith("~/")):
        if home is not None:
            return home / root[2:]
        # no home for ~ to mean: the folder below, never a folder named "~" in the current one
    elif root:
        try:
            return Path(root).expanduser()  # ~user/...
        except RuntimeError:  # a user the password database does not list
            return Path(root)
    if home is not None:
        return home / ".cache" / "pageindex"
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(xdg):
        return Path(xdg) / "pageindex"
    return _private_temp_folder()


def _private_temp_folder() -> Path:
    """``pageindex-cache-UID`` in the temp folder, made private (mode 700) if new; one that another
    user made, or a link, is never used (a fresh private folder is made instead)."""
    uid = os.getuid() if hasattr(os, "getuid") else None
    folder = Path(tempfile.gettempdir()) / f"pageindex-cache-{'user' if uid is None else uid}"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        info = folder.lstat()
        if stat.S_ISDIR(info.st_mode) and (uid is None or info.st_uid == uid):
            return folder
    except OSError:
        pass
    return Path(tempfile.mkdtemp(prefix="pageindex-cache-"))


def home_folder() -> Path | None:
    """The user's home folder: ``$HOME`` when set and not empty, else the password database's (on
    Windows, the profile folder); None when neither says one."""
    home = os.environ.get("HOME")
    if home:
        return Path(home)
    try:
        import pwd
    except ImportError:  # pragma: no cover - Windows: USERPROFILE
        try:
            return Path.home()
        except RuntimeError:
            return None
    try:
        folder = pwd.getpwuid(os.getuid()).pw_dir
    except KeyError:  # a user id the container's /etc/passwd does not list
        return None
    return Path(folder) if folder else None
