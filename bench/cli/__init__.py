"""The ``pageindex bench`` commands, mounted on the ``pageindex`` app from outside it.

``bench`` is a plug-in of ``pageindex`` (the ``pageindex.commands`` entry point in
``pyproject.toml`` names this module; that group is imported by the CLI only, never by a library
lookup): importing it registers, for every module of this package
that defines ``register(app, bench)``, that function as a component of kind ``"command"`` in
:mod:`pageindex.registry`; :mod:`pageindex.cli` calls each with the top-level app and the
``pageindex bench`` group. Adding a command is adding a module. Modules import their heavy
libraries inside the commands, so ``pageindex --help`` stays fast.
"""

from __future__ import annotations

import importlib
import pkgutil

from pageindex import registry

for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if _info.name.startswith("_"):
        continue
    _module = importlib.import_module(f"{__name__}.{_info.name}")
    if hasattr(_module, "register"):
        registry.register(registry.COMMAND_KIND, f"bench.{_info.name}", _module.register)
