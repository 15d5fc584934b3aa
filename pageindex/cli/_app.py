"""The ``pageindex`` app itself: the top-level group, its one-line errors, and the mounting of every
command (this package's modules and the ``pageindex.commands`` plug-ins). Built on first use of
``pageindex.cli.app`` (see the package docstring), never by importing a command's helpers."""

from __future__ import annotations

import codecs
import importlib
import os
import pkgutil
import sys
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

try:  # typer >= 0.2x carries its own copy of click
    from typer._click import core as click_core
    from typer._click import exceptions as click_exc
    from typer._click.utils import echo
except ImportError:  # pragma: no cover - older typer on real click
    from click import core as click_core
    from click import exceptions as click_exc
    from click.utils import echo

from pageindex import registry
from pageindex.cli._common import (
    EXIT_CODES_HELP,
    HIDDEN_ALIASES,
    ExitCode,
    err_console,
    examples,
    given_value,
    one_line,
    plain,
    setup_logging,
    usage_error_hook,
)
from pageindex.registry import PluginError
from pageindex.wording import plainly

# Abort (Ctrl-C or end of input at a prompt) is typer's own class since typer 0.2x, click's before.
Abort = getattr(typer, "Abort", None) or click_exc.Abort

DEBUG_ENV = "PAGEINDEX_DEBUG"


def _redacted(exc: BaseException) -> str:
    """An exception's text with the environment's credentials and anything shaped like one masked
    (``pageindex.llm.redact``, imported here only: the CLI starts without the LLM layer)."""
    from pageindex.llm.redact import redact

    return redact(str(exc))


def _redact_chain(exc: BaseException) -> None:
    """Mask credentials in the text arguments of ``exc`` and of the exceptions it was raised from
    (``PAGEINDEX_DEBUG=1``'s traceback prints each one's text)."""
    from pageindex.llm.redact import redact

    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        current.args = tuple(redact(a) if isinstance(a, str) else a for a in current.args)
        current = current.__cause__ or current.__context__


def _usage_message(exc: click_exc.ClickException, args: Any) -> str:
    """Click's message for a usage error, with a value pydantic refused said as what is allowed and
    the value given echoed: "Invalid value for '--limit': 'abc' must be a whole number"."""
    message = exc.format_message()
    if isinstance(exc, click_exc.NoSuchOption):  # `build -annual.pdf`: a file named like an option
        argv = [str(a) for a in (sys.argv[1:] if args is None else args)]
        named = next((a for a in argv if a.startswith(exc.option_name) and Path(a).is_file()), None)
        if named is not None:
            return f"{message}; {named} is a file: write ./{named} (or put -- before it)"
    if not isinstance(exc, click_exc.BadParameter) or exc.param is None:
        return message
    plain = plainly(exc.message)
    if plain == exc.message:  # the project's own wording, which names the value already
        return message
    given = given_value(list(sys.argv[1:] if args is None else args), list(exc.param.opts))
    value = f"{given!r} " if given is not None and plain.startswith("must be") else ""
    return message.replace(exc.message, f"{value}{plain}")


def _command_name(ctx: Any) -> str:
    """The command a context parses, as typed after the program's name: ``bench gate``."""
    names: list[str] = []
    while ctx.parent is not None:
        names.append(ctx.info_name or "")
        ctx = ctx.parent
    return " ".join(reversed(names))


class OneLineErrors(TyperGroup):
    """The top-level command group: every usage error (unknown option, bad value, missing argument)
    is one line ``error: ...`` and exit 2, never a box; an unexpected exception is one line too
    (``PAGEINDEX_DEBUG=1`` shows the traceback). Exit codes: :class:`ExitCode`."""

    def invoke(self, ctx: Any) -> Any:
        # typer turns a Ctrl-C into a silent exit 130; as Abort it gets its line ("interrupted") below
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise Abort() from None

    def main(
        self,
        args: Any = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        setup_logging(verbose=False)
        _printable_everywhere()
        _stdin_or_nothing()
        _sizes_that_mean_something()
        previous_stdout = sys.stdout
        sys.stdout = _ReaderMayLeave(previous_stdout)  # type: ignore[assignment]
        try:
            if _PLUGIN_ERROR is not None:
                if not _asks_for_help(self, sys.argv[1:] if args is None else list(args)):
                    raise _PLUGIN_ERROR
                # the help of a user looking for what went wrong: said, and the help shown (it was exit 2)
                said = f"{_redacted(_PLUGIN_ERROR)}; what it adds is missing from this help"
                err_console.print(f"[yellow]warning:[/] {plain(one_line(said))}", highlight=False)
            for failure in registry.plugin_failures():  # an installed package's broken entry point
                err_console.print(f"[yellow]warning:[/] {plain(one_line(failure))}", highlight=False)
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
            code = rv if isinstance(rv, int) else 0
        except click_exc.NoArgsIsHelpError as exc:
            # its message is the help; typer's rich help has printed itself already, and is empty
            message = exc.format_message()
            if message.strip():
                echo(message)
            code = ExitCode.OK
        except click_exc.ClickException as exc:
            ctx = getattr(exc, "ctx", None)
            where = f" (see '{ctx.command_path} --help')" if ctx else ""
            message = one_line(_usage_message(exc, args))
            err_console.print(f"[bold red]error:[/] {plain(message + where)}", highlight=False)
            code = ExitCode.BAD_INPUT
            if ctx is not None and (hook := usage_error_hook(_command_name(ctx))) is not None:
                hook(list(sys.argv[1:] if args is None else args), message)
        except PluginError as exc:  # a plug-in's own exception, which may quote its key
            err_console.print(f"[bold red]error:[/] {plain(one_line(_redacted(exc)))}", highlight=False)
            code = ExitCode.BAD_INPUT
        except Abort:
            err_console.print("interrupted", highlight=False)
            code = ExitCode.INTERRUPTED
        except BrokenPipeError:
            # A closed pipe _ReaderMayLeave did not see (a write around it): what it wanted, it has.
            _silence_stdout()
            code = ExitCode.OK
        except SystemExit as exc:
            # rich meets a closed pipe by pointing stdout at /dev/null and exiting 1; the same case
            if not isinstance(exc.__context__, BrokenPipeError):
                raise
            code = ExitCode.OK
        except Exception as exc:
            if os.environ.get(DEBUG_ENV):
                _redact_chain(exc)  # Python prints the traceback: its messages masked as the line's
                raise
            said = plain(one_line(_redacted(exc)))
            err_console.print(
                f"[bold red]error:[/] internal error: {type(exc).__name__}: {said} "
                f"(set {DEBUG_ENV}=1 for the traceback)",
                highlight=False,
            )
            code = ExitCode.BAD_INPUT
        try:  # output still buffered goes now, while a closed pipe can be handled
            sys.stdout.flush()
        except BrokenPipeError:
            _silence_stdout()
        finally:
            sys.stdout = previous_stdout
        if standalone_mode:
            sys.exit(int(code))
        return code


_PRINTABLE = "pageindex-printable"


def _printable(exc: UnicodeError) -> tuple[str | bytes, int]:
    """The encoding error handler of standard output and error: a file name's undecodable byte (a
    lone surrogate, as Python reads one) is written back as that byte, as ``surrogateescape`` does;
    any other character the encoding lacks as its escape, as ``backslashreplace`` does."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    text = exc.object[exc.start : exc.end]
    if all(0xDC80 <= ord(c) <= 0xDCFF for c in text):
        return bytes(ord(c) - 0xDC00 for c in text), exc.end
    return codecs.backslashreplace_errors(exc)


def _printable_everywhere() -> None:
    """Let standard output and error print any text, whatever the locale's encoding: a character it
    has no byte for (a filing's non-breaking hyphen under a Latin-1 locale, ``PYTHONIOENCODING=ascii``,
    a Windows console, the C locale with UTF-8 mode off) is written as its escape (``\\u2011``), never
    an error. It was ``error: internal error: UnicodeEncodeError``, exit 2, with nothing printed
    (``pageindex tree`` of most filings). Files the commands write are UTF-8 whatever the locale; only
    the terminal's text is escaped."""
    try:
        codecs.lookup_error(_PRINTABLE)
    except LookupError:
        codecs.register_error(_PRINTABLE, _printable)
    for stream in (sys.stdout, sys.stderr):
        # stdout is strict (the C locale's: surrogateescape), stderr backslashreplace (a file name's byte
        # came out as \udce9)
        errors = getattr(stream, "errors", None)
        if errors in ("strict", "surrogateescape", "backslashreplace") and hasattr(stream, "reconfigure"):
            try:
                stream.reconfigure(errors=_PRINTABLE)
            except (OSError, ValueError):  # pragma: no cover - a stream that cannot change
                pass


def _sizes_that_mean_something() -> None:
    """``COLUMNS`` or ``LINES`` that is no width (``0``, ``-5``, ``abc``: a terminal that reports no
    size exports ``COLUMNS=0``) is dropped, so the terminal's size or the default is used, as
    ``shutil.get_terminal_size`` does. rich laid help out 0 columns wide: ``bench gate --help`` printed
    an empty line, exit 0."""
    for name in ("COLUMNS", "LINES"):
        value = os.environ.get(name)
        if value is not None and not (value.strip().isdigit() and int(value) > 0):
            del os.environ[name]


def _stdin_or_nothing() -> None:
    """A closed standard input (``<&-``, a daemon's) reads as an empty one: a question at it meets the
    end of input and says so (``cache clear``: ``no answer to the question (input ended)``, exit 2; an
    ``ask`` session ends). It was ``error: internal error: RuntimeError: input(): lost sys.stdin``."""
    if sys.stdin is None:
        try:
            sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - the process's stdin until it exits
        except OSError:  # pragma: no cover - no /dev/null
            pass


class _ReaderMayLeave:
    """The CLI's stdout. A reader that goes away early (``| head -1``) takes the rest of the output
    with it, never the command's work or its exit code: the first write or flush that meets the
    closed pipe points stdout at /dev/null and the command goes on (a ``bench run`` runs every
    sample, a failing ``bench gate`` still exits 1). Everything else is the wrapped stream's."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            _silence_stdout()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            _silence_stdout()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's last flush cannot fail on a closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # pragma: no cover - stdout without a file descriptor
        pass


class AliasedCommand(TyperCommand):
    """A command whose options may carry old spellings (``HIDDEN_ALIASES``): they parse as before
    but are left out of ``--help`` and error messages."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            opts = list(getattr(param, "opts", ()))
            hidden = [a for c in opts for a in HIDDEN_ALIASES.get(c, ()) if a in opts]
            if hidden:
                param.opts = [o for o in opts if o not in hidden]
                param.hidden_aliases = hidden  # type: ignore[attr-defined]

    def make_parser(self, ctx: Any) -> Any:
        aliased = [p for p in self.params if getattr(p, "hidden_aliases", None)]
        shown = [p.opts for p in aliased]
        for param in aliased:
            param.opts = [*param.opts, *param.hidden_aliases]  # type: ignore[attr-defined]
        try:
            return super().make_parser(ctx)
        finally:
            for param, opts in zip(aliased, shown, strict=True):
                param.opts = opts


app = typer.Typer(
    name="pageindex",
    cls=OneLineErrors,
    help="Section trees for PDF filings, retrievers over them, and a benchmark harness.",
    epilog=examples(
        'pageindex ask filing.pdf "What was revenue in 2023?" -m openai/gpt-4o-mini',
        "pageindex build filing.pdf -o tree.json",
        "pageindex bench run -r agent,extractive -m openai/gpt-4o-mini -o results/first",
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
bench = typer.Typer(
    name="bench",
    help="Run datasets through retrievers, judge, compare, gate and report.",
    epilog=examples(
        "pageindex bench run --limit 5 -o results/smoke",
        "pageindex bench compare results/baseline results/smoke",
        "pageindex bench report results/baseline results/smoke -o report.html",
    ),
    no_args_is_help=True,
)
app.add_typer(bench, name="bench")


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            echo(f"pageindex-bench {version('pageindex-bench')}")
        except PackageNotFoundError:  # run from a source tree that was never installed
            echo("pageindex-bench (not installed)")
        raise typer.Exit(ExitCode.OK)


@app.callback()
def _main(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Section trees for PDF filings, retrievers over them, and a benchmark harness."""


_PLUGIN_ERROR: PluginError | None = None  # reported as one line when the command runs


def _asks_for_help(group: TyperGroup, args: list[str]) -> bool:
    """Whether the command line only asks for help or the version: ``--help`` or ``--version`` before
    any ``--``, or nothing but group names (``pageindex``, ``pageindex bench``, ``pageindex cache``:
    each shows its help; they were the plug-in's error, exit 2)."""
    words = args[: args.index("--")] if "--" in args else args
    if "--help" in words or "--version" in words:
        return True
    command: Any = group
    for word in words:
        if not isinstance(command, TyperGroup):
            return False
        command = command.get_command(click_core.Context(command), word)
    return isinstance(command, TyperGroup)


def _register_all() -> None:
    global _PLUGIN_ERROR
    package = importlib.import_module("pageindex.cli")
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"pageindex.cli.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(app, bench)
    try:
        mounted = registry.entries(registry.COMMAND_KIND)
    except PluginError as exc:
        _PLUGIN_ERROR, mounted = exc, registry.entries(registry.COMMAND_KIND)
    for register in mounted.values():
        register(app, bench)
    _finish(app)


def _finish(typer_app: typer.Typer) -> None:
    """Every command of ``typer_app`` and its groups hides its old option spellings, and every
    ``--help`` ends with its examples, then the exit-code table."""
    info = typer_app.info
    if not isinstance(info.epilog, str) or EXIT_CODES_HELP not in info.epilog:
        info.epilog = _with_exit_codes(info.epilog)
    for command in typer_app.registered_commands:
        if command.cls in (None, TyperCommand):
            command.cls = AliasedCommand
        command.epilog = _with_exit_codes(command.epilog)
    for group in typer_app.registered_groups:
        _finish(group.typer_instance)


def _with_exit_codes(epilog: Any) -> str:
    text = epilog if isinstance(epilog, str) else ""
    if EXIT_CODES_HELP in text:
        return text
    return f"{text}\n\n{EXIT_CODES_HELP}" if text else EXIT_CODES_HELP


_register_all()


def main() -> None:
    app()
