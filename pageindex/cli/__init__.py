"""The ``pageindex`` command. Thin: parse options, call the library, print with rich.

Every module in this package that defines ``register(app, bench)`` adds its commands;
``app`` is the top-level command and ``bench`` the ``pageindex bench`` group. Adding a
command means adding a module, nothing else. Commands from outside the package (the ``bench``
harness's, or a plug-in's) are components of kind ``"command"`` in :mod:`pageindex.registry`,
found through the ``pageindex.plugins`` entry points and ``PAGEINDEX_PLUGINS``: this package
never imports ``bench``.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys
from typing import Any

import typer
from typer.core import TyperGroup

try:  # typer >= 0.2x carries its own copy of click
    from typer._click import exceptions as click_exc
    from typer._click.utils import echo
except ImportError:  # pragma: no cover - older typer on real click
    from click import exceptions as click_exc
    from click.utils import echo

from pageindex import registry
from pageindex.cli._common import EXIT_CODES_HELP, ExitCode, err_console, one_line, setup_logging
from pageindex.registry import PluginError

DEBUG_ENV = "PAGEINDEX_DEBUG"


class OneLineErrors(TyperGroup):
    """The top-level command group: every usage error (unknown option, bad value, missing argument)
    is one line ``error: ...`` and exit 2, never a box; an unexpected exception is one line too
    (``PAGEINDEX_DEBUG=1`` shows the traceback). Exit codes: :class:`ExitCode`."""

    def main(
        self,
        args: Any = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        setup_logging(verbose=False)
        try:
            if _PLUGIN_ERROR is not None:
                raise _PLUGIN_ERROR
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
            code = rv if isinstance(rv, int) else 0
        except click_exc.NoArgsIsHelpError as exc:
            echo(exc.ctx.get_help())
            code = ExitCode.OK
        except click_exc.ClickException as exc:
            where = f" (see '{exc.ctx.command_path} --help')" if getattr(exc, "ctx", None) else ""
            err_console.print(f"[bold red]error:[/] {one_line(exc.format_message())}{where}", highlight=False)
            code = ExitCode.BAD_INPUT
        except PluginError as exc:
            err_console.print(f"[bold red]error:[/] {one_line(str(exc))}", highlight=False)
            code = ExitCode.BAD_INPUT
        except click_exc.Abort:
            err_console.print("interrupted", highlight=False)
            code = ExitCode.INTERRUPTED
        except Exception as exc:
            if os.environ.get(DEBUG_ENV):
                raise
            err_console.print(
                f"[bold red]error:[/] internal error: {type(exc).__name__}: {one_line(str(exc))} "
                f"(set {DEBUG_ENV}=1 for the traceback)",
                highlight=False,
            )
            code = ExitCode.BAD_INPUT
        if standalone_mode:
            sys.exit(int(code))
        return code


app = typer.Typer(
    name="pageindex",
    cls=OneLineErrors,
    help="Section trees for PDF filings, retrievers over them, and a benchmark harness.",
    epilog=EXIT_CODES_HELP,
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


_PLUGIN_ERROR: PluginError | None = None  # reported as one line when the command runs


def _register_all() -> None:
    global _PLUGIN_ERROR
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(app, bench)
    try:
        mounted = registry.entries("command")
    except PluginError as exc:
        _PLUGIN_ERROR, mounted = exc, registry.entries("command")
    for register in mounted.values():
        register(app, bench)
    for typer_app in (app, bench):  # every --help ends with the exit-code table
        for command in typer_app.registered_commands:
            command.epilog = command.epilog or EXIT_CODES_HELP
    for group in app.registered_groups:
        group.typer_instance.info.epilog = group.typer_instance.info.epilog or EXIT_CODES_HELP


_register_all()


def main() -> None:
    app()
