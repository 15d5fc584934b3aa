"""The ``pageindex`` command. Thin: parse options, call the library, print with rich.

Every module in this package that defines ``register(app, bench)`` adds its commands;
``app`` is the top-level command and ``bench`` the ``pageindex bench`` group. Adding a
command means adding a module, nothing else.
"""

from __future__ import annotations

import importlib
import pkgutil

import typer

app = typer.Typer(
    name="pageindex",
    help="Section trees for PDF filings, retrievers over them, and a benchmark harness.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
bench = typer.Typer(
    name="bench",
    help="Run datasets through retrievers, judge, compare, gate and report.",
    no_args_is_help=True,
)
app.add_typer(bench, name="bench")


def _register_all() -> None:
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(app, bench)


_register_all()


def main() -> None:
    app()
