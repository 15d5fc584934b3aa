"""The ``pageindex bench`` commands, mounted on the ``pageindex`` app from outside it.

``bench`` is a plug-in of ``pageindex`` (the ``pageindex.plugins`` entry point in
``pyproject.toml`` names this module): importing it registers, for every module of this package
that defines ``register(app, bench)``, that function as a component of kind ``"command"`` in
:mod:`pageindex.registry`; :mod:`pageindex.cli` calls each with the top-level app and the
``pageindex bench`` group. Adding a command is adding a module. Modules import their heavy
libraries inside the commands, so ``pageindex --help`` stays fast.
"""

from __future__ import annotations

import importlib
import pkgutil

from pageindex import registry

COMMAND = "command"

for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if _info.name.startswith("_"):
        continue
    _module = importlib.import_module(f"{__name__}.{_info.name}")
    if hasattr(_module, "register"):
        registry.register(COMMAND, f"bench.{_info.name}", _module.register)
