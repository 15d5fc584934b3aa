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
is one module; nothing else is edited. The registry knows no kind's type: ``pageindex`` declares
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
from typing import Any

PLUGINS_ENV = "PAGEINDEX_PLUGINS"
ENTRY_POINT_GROUP = "pageindex.plugins"
COMMAND_KIND = "command"
COMMAND_GROUP = "pageindex.commands"  # entry points of command modules, loaded for the CLI only

_entries: dict[str, dict[str, Any]] = {}
_sources: dict[str, list[str]] = {}
_scanned: set[str] = set()
_import_errors: dict[str, dict[str, str]] = {}
_groups_loaded: set[str] = set()


class PluginError(ImportError):
    """A module named in ``PAGEINDEX_PLUGINS`` or a ``pageindex.plugins`` entry point failed to import."""


def declare(kind: str, *modules: str) -> None:
    """Say which packages (every module inside) or modules hold the components of ``kind``."""
    known = _sources.setdefault(kind, [])
    for module in modules:
        if module not in known:
            known.append(module)
            _scanned.discard(kind)


def register(kind: str, name: str, obj: Any = None) -> Any:
    """Register ``obj`` as ``kind`` ``name`` (a later registration of the same name replaces it);
    without ``obj``, a decorator."""
    if obj is not None:
        _entries.setdefault(kind, {})[name] = obj
        return obj

    def decorate(target: Any) -> Any:
        _entries.setdefault(kind, {})[name] = target
        return target

    return decorate


def entries(kind: str) -> dict[str, Any]:
    """Every registered ``kind``, in registration order (declared packages first, then plug-ins)."""
    discover(kind)
    return dict(_entries.get(kind, {}))


def names(kind: str) -> list[str]:
    return list(entries(kind))


def lookup(kind: str, name: str) -> Any | None:
    """The ``kind`` registered as ``name``, or None."""
    found = _entries.get(kind, {}).get(name)
    if found is None:
        discover(kind)
        found = _entries.get(kind, {}).get(name)
    return found


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
            except Exception as exc:  # a half-written module must not break the others
                _import_errors.setdefault(kind, {})[info.name] = f"{type(exc).__name__}: {exc}"


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
    for name, module in entry_point_modules(group):
        _import_plugin(module, f"entry point {name!r}")
    if group == ENTRY_POINT_GROUP:
        for module in plugin_modules():
            _import_plugin(module, f"${PLUGINS_ENV}")


def entry_point_modules(group: str = ENTRY_POINT_GROUP) -> list[tuple[str, str]]:
    """(name, module) of every ``group`` entry point of every installed distribution.
    Every copy of a distribution's metadata on the path counts (``importlib.metadata.entry_points``
    would keep only the first, and a stale ``*.egg-info`` in the working directory would then hide
    an editable install's entry points)."""
    from importlib.metadata import distributions

    found: dict[str, str] = {}
    for dist in distributions():
        for point in dist.entry_points:
            if point.group == group:
                found.setdefault(point.name, point.value.split(":")[0].strip())
    return sorted(found.items())


def _import_plugin(module: str, where: str) -> None:
    try:
        importlib.import_module(module)
    except Exception as exc:
        reason = f"{type(exc).__name__}: {exc}"
        raise PluginError(f"plug-in {module!r} ({where}) failed to import: {reason}") from exc

