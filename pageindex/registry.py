"""The one registry of everything users add: retrievers, judges, model providers, commands.

A *kind* (``"retriever"``, ``"judge"``, ``"provider"``, ``"command"``) maps names to objects. Each
kind is declared once, by the package that owns the concept, with the modules to scan for it::

    declare("retriever", "pageindex.retrievers", "pageindex.analyst.session_retriever")

and components register themselves with a decorator when their module is imported::

    @registry.register("judge", "grounded")
    def make_grounded(**options): ...

:func:`entries` / :func:`lookup` import, once per kind, the declared packages (every module in
them; a module that fails to import is remembered and named by :func:`import_error`), then the
plug-ins: modules named by Python entry points in the group ``pageindex.plugins`` (an installed
package adds one in its ``pyproject.toml``) and by the ``PAGEINDEX_PLUGINS`` environment variable
(comma-separated module names, e.g. a module in ``tests/``). Adding a retriever, judge or provider
is one module; nothing else is edited. A ``PAGEINDEX_PLUGINS`` module that fails to import is an
error (:class:`PluginError`: the user named it for this run); an installed package's entry point that
fails to import is not, since one broken package must not disable every command: it is remembered
(:func:`plugin_failures`, which the CLI prints as a warning) and named by :func:`missing_hint` in the
error for a name nothing registered. The registry knows no kind's type: ``pageindex`` declares
retrievers and providers, ``bench`` declares judges and its commands (``pageindex`` never imports
``bench``).

Commands are plug-ins of their own group, ``pageindex.commands``, imported only when the kind
``"command"`` is asked for (by the CLI): a library lookup of a retriever or provider never imports
a command-line module (``bench`` reaches the CLI through that group's entry point).
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys
from typing import Any

from pageindex.wording import error_text

PLUGINS_ENV = "PAGEINDEX_PLUGINS"
ENTRY_POINT_GROUP = "pageindex.plugins"
COMMAND_KIND = "command"
COMMAND_GROUP = "pageindex.commands"  # entry points of command modules, loaded for the CLI only

_entries: dict[str, dict[str, Any]] = {}
_sources: dict[str, list[str]] = {}
_scanned: set[str] = set()
_import_errors: dict[str, dict[str, str]] = {}
_failed_modules: dict[str, dict[str, str]] = {}  # kind -> module of its packages that failed -> why
_groups_loaded: set[str] = set()
_plugin_failures: list[str] = []  # entry points that failed to import, one line each
_origins: dict[str, dict[str, str]] = {}  # kind -> name -> the module that registered it
_conflicts: dict[str, dict[str, list[str]]] = {}  # kind -> name -> modules that registered it


class PluginError(ImportError):
    """A module named in ``PAGEINDEX_PLUGINS`` or a ``pageindex.plugins`` entry point failed to import."""


def declare(kind: str, *modules: str) -> None:
    """Say which packages (every module inside) or modules hold the components of ``kind``."""
    known = _sources.setdefault(kind, [])
    for module in modules:
        if module not in known:
            known.append(module)
            _scanned.discard(kind)


def register(kind: str, name: str, obj: Any = None, *, origin: str | None = None) -> Any:
    """Register ``obj`` as ``kind`` ``name``; without ``obj``, a decorator. ``origin`` is the module
    that registers it (default ``obj.__module__``). The same module registering a name again (a
    reload) replaces it; two modules registering one name is a conflict: :func:`lookup` then raises
    :class:`PluginError` naming both, whichever was imported first (trial 11: a plug-in's
    "extractive" won in Python and lost on the command line, by import order)."""

    def decorate(target: Any) -> Any:
        source = origin or getattr(target, "__module__", None) or "?"
        before = _origins.setdefault(kind, {}).get(name)
        if before is not None and not _same_module(before, source):
            found = _conflicts.setdefault(kind, {}).setdefault(name, [before])
            if source not in found:
                found.append(source)
        _origins[kind][name] = source
        _entries.setdefault(kind, {})[name] = target
        return target

    return decorate(obj) if obj is not None else decorate


def _same_module(a: str, b: str) -> bool:
    """Two module names of one file: equal, or a script run as ``__main__`` that is also imported
    by its own name (``PAGEINDEX_PLUGINS=myplug python myplug.py``)."""
    if a == b:
        return True
    if "__main__" not in (a, b):
        return False
    files = [getattr(sys.modules.get(m), "__file__", None) for m in (a, b)]
    return None not in files and os.path.realpath(files[0]) == os.path.realpath(files[1])  # type: ignore[arg-type]


def entries(kind: str) -> dict[str, Any]:
    """Every registered ``kind``, in registration order (declared packages first, then plug-ins)."""
    discover(kind)
    return dict(_entries.get(kind, {}))


def names(kind: str) -> list[str]:
    return list(entries(kind))


def lookup(kind: str, name: str) -> Any | None:
    """The ``kind`` registered as ``name``, or None; :class:`PluginError` when two modules registered
    that name (see :func:`register`)."""
    discover(kind)
    if name in _conflicts.get(kind, {}):
        raise PluginError(conflict(kind, name))
    return _entries.get(kind, {}).get(name)


def conflict(kind: str, name: str) -> str:
    """``retriever 'extractive' is registered by two modules: ...`` (one line)."""
    modules = " and ".join(_conflicts[kind][name])
    return (
        f"{kind} {name!r} is registered by two modules: {modules}; rename the plug-in's, or drop one of them"
    )


def conflicts(kind: str) -> list[str]:
    """One line per name of ``kind`` that two modules registered (after discovery)."""
    discover(kind)
    return [conflict(kind, name) for name in _conflicts.get(kind, {})]


def plugin_identity(kind: str, name: str) -> str | None:
    """What a plug-in's ``kind`` ``name`` is made of, for a run to record: the module that registered it
    and a digest of that module's code (:func:`pageindex.digest.code_digest`: comments and docstrings do
    not change it), with the installed package and its version for an entry point's
    (``my_plugin 3f2a9c0e1b (my-plugin-pkg 1.2)``). None for a component of ``kind``'s declared packages
    (the package's own code: ``git_commit`` says which) and for a name nothing registered. Two runs of
    two versions of one plug-in recorded the same name, options and prompt version, so ``bench compare``
    could not tell them apart."""
    discover(kind)
    module = _origins.get(kind, {}).get(name)
    if module is None or any(module == s or module.startswith(s + ".") for s in _sources.get(kind, [])):
        return None
    from pageindex.digest import code_digest

    file = getattr(sys.modules.get(module), "__file__", None)
    try:
        digest = code_digest([file]) if file and file.endswith(".py") else "unknown-code"
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        digest = "unreadable-code"
    package = next((dist for _, ep_module, dist in entry_point_modules()
                    if module == ep_module or module.startswith(ep_module + ".")), None)  # fmt: skip
    if package is None:
        return f"{module} {digest}"
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"{module} {digest} ({package} {version(package)})"
    except PackageNotFoundError:
        return f"{module} {digest} ({package})"


def import_error(kind: str, name: str) -> str | None:
    """Why the module ``name`` of ``kind``'s packages failed to import, if it did."""
    discover(kind)
    return _import_errors.get(kind, {}).get(name)


def discover(kind: str) -> None:
    """Import ``kind``'s declared packages, then the plug-ins (which may declare more), once."""
    _scan(kind)
    load_plugins()
    if kind == COMMAND_KIND:
        load_plugins(COMMAND_GROUP)
    _scan(kind)


def _scan(kind: str) -> None:
    if kind in _scanned:
        return
    _scanned.add(kind)
    for source in list(_sources.get(kind, [])):
        module = importlib.import_module(source)
        if not hasattr(module, "__path__"):
            continue
        for info in sorted(pkgutil.iter_modules(module.__path__), key=lambda m: m.name):
            if info.name.startswith("_"):
                continue
            try:
                importlib.import_module(f"{source}.{info.name}")
            except (Exception, SystemExit) as exc:  # a half-written module must not break the others
                _import_errors.setdefault(kind, {})[info.name] = _import_failure_text(exc)
                _failed_modules.setdefault(kind, {})[f"{source}.{info.name}"] = _import_failure_text(exc)


def import_failures(kind: str) -> list[str]:
    """One line per module of ``kind``'s declared packages that failed to import (after discovery): what
    it registers is missing. ``pageindex retrievers`` warns with them and :func:`missing_hint` names them:
    a half-written ``pageindex/retrievers/mine.py`` (README, Adding a retriever) was otherwise silent,
    and asking for its retriever said only "unknown retriever 'mine' (a plug-in's name? ...)"."""
    discover(kind)
    return [
        f"{kind} module {module!r} failed to import: {why}; what it registers is missing"
        for module, why in _failed_modules.get(kind, {}).items()
    ]


def _import_failure_text(exc: BaseException) -> str:
    """Why a module failed to import, one line; a ``sys.exit()`` it called is said as such."""
    if isinstance(exc, SystemExit):
        return f"SystemExit: the module called sys.exit({exc.code!r}) on import"
    return error_text(exc)


def plugin_modules() -> list[str]:
    """Modules named by ``PAGEINDEX_PLUGINS`` (in order)."""
    return [m.strip() for m in os.environ.get(PLUGINS_ENV, "").split(",") if m.strip()]


def load_plugins(group: str = ENTRY_POINT_GROUP) -> None:
    """Import the entry-point plug-ins of ``group``, then (for the components' group) the
    ``PAGEINDEX_PLUGINS`` modules, once per process. A plug-in that fails to import raises
    :class:`PluginError` naming it."""
    if group in _groups_loaded:
        return
    _groups_loaded.add(group)
    for name, module, dist in entry_point_modules(group):
        try:
            _import_plugin(module, f"entry point {name!r} of the installed package {dist!r}")
        except PluginError as exc:  # remembered, not raised: see the module docstring
            _plugin_failures.append(f"{exc}; what it adds is missing (fix or uninstall {dist})")
    if group == ENTRY_POINT_GROUP:
        for module in plugin_modules():
            _import_plugin(module, f"${PLUGINS_ENV}")


def plugin_failures() -> list[str]:
    """One line per installed package's entry point that failed to import (after discovery)."""
    return list(_plugin_failures)


def missing_hint(kind: str | None = None) -> str:
    """What to add to the error for a name no component registered: the modules of ``kind``'s packages
    and the plug-ins that failed to import, or else where a plug-in's name comes from."""
    load_plugins()
    failed = [*(import_failures(kind) if kind else []), *_plugin_failures]
    if failed:
        return "; " + "; ".join(failed)
    return (
        f" (a plug-in's name? name its module in ${PLUGINS_ENV} or install its package; a resumed run needs"
        " the plug-ins it was made with)"
    )


def entry_point_modules(group: str = ENTRY_POINT_GROUP) -> list[tuple[str, str, str]]:
    """(name, module, distribution) of every ``group`` entry point of every installed distribution.
    Every copy of a distribution's metadata on the path counts (``importlib.metadata.entry_points``
    would keep only the first, and a stale ``*.egg-info`` in the working directory would then hide
    an editable install's entry points)."""
    from importlib.metadata import distributions

    found: dict[str, tuple[str, str]] = {}
    for dist in distributions():
        for point in dist.entry_points:
            if point.group == group:
                owner = dist.metadata["Name"] or "?"
                found.setdefault(point.name, (point.value.split(":")[0].strip(), owner))
    return [(name, module, owner) for name, (module, owner) in sorted(found.items())]


def _import_plugin(module: str, where: str) -> None:
    try:
        importlib.import_module(module)
    except (Exception, SystemExit) as exc:  # a sys.exit() on import ended every command with its code
        reason = _import_failure_text(exc)
        a_file = module.endswith(".py") or "/" in module or "\\" in module  # a path where a name goes
        if isinstance(exc, ModuleNotFoundError) and a_file:
            path = module.replace("\\", "/")
            folder, _, file = path.rpartition("/")
            stem = file.removesuffix(".py")
            reason += (
                f" (${PLUGINS_ENV} names modules, not files: for {module} write "
                f"PYTHONPATH={folder or '.'} {PLUGINS_ENV}={stem})"
            )
        elif isinstance(exc, ModuleNotFoundError) and exc.name and (module + ".").startswith(exc.name + "."):
            # the plug-in itself, not one of its imports: the `pageindex` command does not look in the
            # current folder (a console script, unlike `python -m`), so a my_plugin.py there is not found
            reason += (
                " (a plug-in module must be importable: put its folder on PYTHONPATH, e.g. PYTHONPATH=."
                f" for {module.replace('.', '/')}.py in the current folder, or install its package)"
            )
        raise PluginError(f"plug-in {module!r} ({where}) failed to import: {reason}") from exc

