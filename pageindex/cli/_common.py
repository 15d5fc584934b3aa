"""Helpers shared by CLI modules: one console, one way to report a fatal error, the exit codes."""

from __future__ import annotations

import math
import os
import re
import shutil
import sys
from collections.abc import Callable, Iterable
from enum import IntEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import typer
from rich.console import Console, ConsoleDimensions

from pageindex.atomic import file_in_the_way, same_file
from pageindex.wording import plainly

if TYPE_CHECKING:
    from pageindex.tree.model import Tree

PIPE_WIDTH = 200  # columns tables get when the output is a pipe or file and COLUMNS is not set


class CliConsole(Console):
    """The CLI's console. Written to a pipe or a file (not a terminal) with no ``COLUMNS`` set, it
    lays tables out :data:`PIPE_WIDTH` columns wide instead of rich's 80, so piped output keeps
    whole cells (no ``…``) and whole lines; ``COLUMNS`` or a terminal decide otherwise."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if kwargs.get("width") is None:
            # rich fixes the width from $COLUMNS as it was when the console was made (at import); read
            # it when printing instead, as rich reads a terminal's: a command run in-process after the
            # variable changed (the tests' CliRunner) laid its tables out for another test's COLUMNS
            self._width = None

    @property
    def size(self) -> ConsoleDimensions:
        size = super().size
        if self._width is None and not self.is_terminal and "COLUMNS" not in self._environ:
            return ConsoleDimensions(PIPE_WIDTH, size.height)
        return size

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self._width, self._height = new_size

    def print(self, *objects: Any, **kwargs: Any) -> None:
        """As rich prints, but a line whose text reads as broken markup (a path or name with ``[/b]``
        in it, printed where :func:`plain` was not used) is printed as written rather than raising:
        it ended a finished ``bench run -o 'r[/b]x'`` with an internal error."""
        from rich.errors import MarkupError

        try:
            super().print(*objects, **kwargs)
        except MarkupError:
            super().print(*objects, **{**kwargs, "markup": False})

    def on_broken_pipe(self) -> None:
        """Standard error's reader gone (``2>&1 | head -1``): the rest of it is dropped and the command
        goes on to its own exit code. rich's own pointed stdout at /dev/null and exited 1, which the CLI
        takes for stdout's reader gone (exit 0): a bad input whose `error:` line met the closed pipe
        exited 0, not 2. Standard output's closed pipe is rich's case, as before."""
        if not self.stderr:
            super().on_broken_pipe()
        self.quiet = True
        del self._buffer[:]
        try:  # what Python still holds for the pipe would fail again as it exits
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stderr.fileno())
            os.close(devnull)
        except (OSError, ValueError):  # no file descriptor (a test's captured stream): nothing to flush
            pass


console = CliConsole(soft_wrap=True)  # long lines are not hard-wrapped (logs, pipes, tests)
err_console = CliConsole(stderr=True, soft_wrap=True)
SCRIPTED_POLICY_ENV = "PAGEINDEX_SCRIPTED_POLICY"


def checked_model(
    model: str | None, base_url: str | None, missing: str | None, *, key: bool = True
) -> str | None:
    """:func:`pageindex.llm.spec.model_choice`'s spec once it parses, else one line naming where it
    came from (``--model`` or ``$PAGEINDEX_MODEL``). ``missing`` is said when neither gives one (None:
    none is fine, None is returned). A base URL no server can have is said as its own error (it names
    the URL). ``key=False``: a model the command will not call needs no API key."""
    from pageindex.llm import LLMError
    from pageindex.llm.spec import PLACEHOLDER_KEY, model_choice, parse_spec
    from pageindex.llm.types import BaseURLError

    model, source = model_choice(model)
    if not model:
        if missing is None:
            return None
        fail(missing)
    try:
        parse_spec(model, base_url=base_url, api_key=None if key else PLACEHOLDER_KEY)
    except BaseURLError as exc:
        fail(str(exc))
    except LLMError as exc:
        fail(f"{source}: {exc}")
    return model


class ExitCode(IntEnum):
    """The exit codes of every command (the README's table; printed at the end of every ``--help``).
    Where two apply, the first of INTERRUPTED, BAD_INPUT, BUDGET, ERRORS wins."""

    OK = 0  # done (ask: answered, or a justified "not found")
    CHECK_FAILED = 1  # a check failed: the gate, validate --strict, an endpoint usable only with limits
    BAD_INPUT = 2  # bad input or configuration, unreachable, or not comparable: nothing was run
    BUDGET = 3  # the budget was reached
    ERRORS = 4  # too many samples in error, or the endpoint went away mid-run (ask: error or unusable output)
    INTERRUPTED = 130  # Ctrl-C (bench run: SIGTERM and SIGHUP too; bench rejudge: SIGTERM)


EXIT_CODES_HELP = (
    "Exit codes: 0 done; 1 a check failed (gate, validate --strict, endpoint usable only with limits); "
    "2 bad input or configuration, unreachable, or not comparable (nothing was run); 3 budget reached; "
    "4 finished with more than --max-error-rate of samples in error, or the model endpoint stopped answering "
    "mid-run (ask: error or unusable output); "
    "130 interrupted (Ctrl-C; for bench run also SIGTERM, SIGHUP; bench rejudge SIGTERM)."
)


def setup_logging(verbose: bool = False) -> None:
    """Library log lines (instructor, the HTTP client, retries) never reach the terminal unless
    ``verbose``; a run also writes them to its ``events.log`` (see ``bench.runner``). Without a
    handler Python would print warnings to stderr through its last-resort handler. Every line
    shown has URL credentials and keys masked (:func:`pageindex.llm.redact.redact_handler`)."""
    import logging

    from pageindex.llm.redact import redact_handler, redact_library_logs

    redact_library_logs()
    root = logging.getLogger()
    if not any(getattr(h, "_pageindex", False) for h in root.handlers):
        quiet = logging.NullHandler()
        quiet._pageindex = True  # type: ignore[attr-defined]
        root.addHandler(quiet)
    if verbose and not any(getattr(h, "_pageindex_verbose", False) for h in root.handlers):
        loud = redact_handler(logging.StreamHandler())
        loud.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        loud._pageindex_verbose = True  # type: ignore[attr-defined]
        root.addHandler(loud)
        root.setLevel(logging.INFO)


def command_line() -> list[str]:
    """This command as the user would type it again: ``sys.argv`` with the program named
    ``pageindex`` where it is the console script or the package run as ``python -m pageindex.cli``
    (whose argv[0] is the path of ``__main__.py``), for the commands a run records and prints."""
    argv = list(sys.argv)
    if argv and (Path(argv[0]).name == "pageindex" or argv[0].endswith(f"cli{os.sep}__main__.py")):
        argv[0] = "pageindex"
    return argv


def given_value(args: list[str], opts: list[str]) -> str | None:
    """The last value given to an option spelled one of ``opts``, as click reads it: ``--limit 0``,
    ``--limit=0``, ``-n 0`` and ``-n0`` (so ``-n=5`` gives ``=5``); nothing after ``--``."""
    if "--" in args:
        args = args[: args.index("--")]
    value = None
    for k, arg in enumerate(args):
        for opt in opts:
            if arg == opt and k + 1 < len(args):
                value = args[k + 1]
            elif opt.startswith("--") and arg.startswith(f"{opt}="):
                value = arg[len(opt) + 1 :]
            elif not opt.startswith("--") and len(opt) == 2 and arg.startswith(opt) and arg != opt:
                value = arg[len(opt) :]
    return value


UsageErrorHook = Callable[[list[str], str], None]
_USAGE_ERROR_HOOKS: dict[str, UsageErrorHook] = {}


def on_usage_error(command: str, hook: UsageErrorHook) -> None:
    """Have ``hook(args, message)`` run when a usage error (an unknown option, a bad value, a missing
    argument) stops ``command`` (``"bench gate"``) before it runs, after its ``error:`` line is printed:
    ``args`` is the command line, ``message`` the error. ``bench gate`` writes it to the ``--junit``
    file the command line names, so a CI never reads an earlier run's verdict there."""
    _USAGE_ERROR_HOOKS[command] = hook


def usage_error_hook(command: str) -> UsageErrorHook | None:
    """What :func:`on_usage_error` set for ``command``, if anything."""
    return _USAGE_ERROR_HOOKS.get(command)


def plain(text: object) -> str:
    """``text`` to print after a markup prefix (``[bold red]error:[/] ...``) as written: a path, a
    doc_name or a server's reply with ``[/b]`` in it crashed the print (a traceback, exit 1), and one
    with ``[red]`` lost it."""
    from rich.markup import escape

    return escape(str(text))


def one_line(text: str) -> str:
    """``text`` folded onto one line (error messages never span lines)."""
    return " ".join(str(text).split())


def fail(message: str, code: int = ExitCode.BAD_INPUT) -> NoReturn:
    """Print one clear error line and exit with ``code`` (2 = bad input)."""
    err_console.print(f"[bold red]error:[/] {plain(one_line(message))}", highlight=False, soft_wrap=True)
    raise typer.Exit(int(code))


def warn_tree(tree: Tree) -> None:
    """The tree's warnings (what its PDF did not let the builder read), one ``warning:`` line each on
    standard error: build, tree and ask say them."""
    for line in tree.warnings:
        err_console.print(f"[yellow]warning:[/] {plain(f'{tree.doc_id}: {one_line(line)}')}", highlight=False)


def validation_message(exc: Exception, options: dict[str, str] | None = None) -> str:
    """A pydantic ``ValidationError`` as one line naming the option (``options`` maps field names to
    option spellings) and what is allowed; any other exception's first line."""
    errors = getattr(exc, "errors", None)
    if not callable(errors):
        return one_line(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    parts = []
    for err in errors():
        field = ".".join(str(x) for x in err.get("loc", ()) if not isinstance(x, int))
        name = (options or {}).get(field, f"--{field.replace('_', '-')}" if field else "value")
        ctx = err.get("ctx") or {}
        allowed = ctx.get("expected")
        message = plainly(err.get("msg", "invalid"))
        if allowed:
            message = f"must be {allowed}"
        if not field:  # a rule over several fields: its message says what is wrong
            parts.append(message)
        elif "input" in err:
            parts.append(f"{name} {err.get('input')!r}: {message}")
        else:
            parts.append(f"{name}: {message}")
    return "; ".join(parts)


def scripted_client(
    policy_spec: str | None,
    *,
    role: str = "retriever",
    option: str = "--model",
    policy_flag: bool = True,
    **kwargs: Any,
) -> Any:
    """A client answering from a scripted policy (``--model scripted``). The policy is
    ``module:function`` / ``file.py:function`` (a function of a ScriptedRequest, or a
    ScriptedModel) or ``$PAGEINDEX_SCRIPTED_POLICY``. ``option`` names the flag that gave the
    spec; a command without ``--scripted-policy`` (``policy_flag=False``: ``bench judge``,
    ``bench rejudge``) is told to set the variable, never a flag it does not take."""
    from pageindex.llm import ScriptedModel, make_client
    from pageindex.llm.scripted import load_policy

    spec = policy_spec or os.environ.get(SCRIPTED_POLICY_ENV)
    if not spec:
        if policy_flag:
            fail(f"{option} scripted needs --scripted-policy module:function (or ${SCRIPTED_POLICY_ENV})")
        fail(f"{option} scripted needs a policy: set ${SCRIPTED_POLICY_ENV}=module:function "
             "(this command takes no --scripted-policy)")
    try:
        policy = load_policy(spec)
    except ValueError as exc:
        fail(str(exc))
    if not isinstance(policy, ScriptedModel):
        policy = ScriptedModel(policy=policy, keep_requests=False)  # no one reads its requests
    return make_client("scripted", role=role, scripted=policy, **kwargs)


def model_client(
    model: str,
    *,
    role: str = "retriever",
    base_url: str | None = None,
    scripted_policy: str | None = None,
    json_mode: bool = False,
    option: str = "--model",
    policy_flag: bool = True,
    **settings: Any,
) -> Any:
    """The client for ``--model``; for a real server, checked reachable before any work starts
    (one clear line naming the model and URL, never the key, and exit 2 otherwise). ``settings``
    go to ``make_client`` (timeout, max_retries, concurrency, retry_timeouts, context_window)."""
    import asyncio

    from pageindex.llm import LLMError, make_client

    if model == "scripted":
        return scripted_client(scripted_policy, role=role, json_mode=json_mode, option=option,
                               policy_flag=policy_flag, **settings)
    try:
        client = make_client(model, role=role, base_url=base_url, json_mode=json_mode, **settings)
        asyncio.run(client.check())
    except LLMError as exc:
        fail(str(exc))
    return client


# --- Shared option declarations (issue 17: one spelling per meaning in every command) -------------
#
# Old spellings stay as hidden aliases for one release: an alias listed here is accepted wherever it
# is declared together with its canonical spelling, and never shown in --help or in error messages
# (:class:`pageindex.cli.AliasedCommand` does the hiding).
HIDDEN_ALIASES: dict[str, tuple[str, ...]] = {
    "--out": ("--output",),
    "--judge-base-url": ("--base-url",),
    "--cache-path": ("--path",),
}
OPT_METAVAR = "NAME=VALUE"


def out_option(default: Any = None, *, help: str, **kwargs: Any) -> Any:
    """``--out/-o``: the output file or folder of every command (old spelling ``--output`` hidden)."""
    return typer.Option(default, "--out", "-o", *HIDDEN_ALIASES["--out"], help=help, **kwargs)


def output_dir(positional: Path | None, out: Path | None) -> Path:
    """The folder a command writes, given as ``--out DIR`` (the rule everywhere) or, as before, as a
    positional ``DIR``; one of them, or both naming the same folder."""
    if positional is not None and out is not None and Path(positional) != Path(out):
        fail(f"DIR {positional} and --out {out} name different folders; give one of them")
    chosen = out if out is not None else positional
    if chosen is None:
        fail("missing the folder to write: give --out DIR")
    return Path(chosen)


def output_file(
    option: str,
    path: Path,
    *,
    inputs: Iterable[Path] = (),
    replaces: Callable[[Path], bool] | None = None,
    kind: str = "",
    example: str = "out",
) -> Path:
    """``path`` checked as a file a command may write (before any work), or one ``error:`` line
    naming ``option``: not a directory, under a folder (not a file), not one of the command's
    ``inputs`` (the same file by any name, hard links included: writing there would replace what it
    reads), and, when it exists, a file ``replaces`` recognises as ``kind`` (what this command
    writes: a tree JSON, a verdicts file, JUnit XML) or an empty one. A command never overwrites a
    file it did not make: a filing, a label file, a run's records."""
    if path.is_dir():  # "" is "." too (Path("") == Path(".")): say which folder that is
        where = " (the current folder)" if path == Path() else ""
        fail(f"{option} {path}{where}: is a directory; give a file path (e.g. {path / example})")
    if blocker := file_in_the_way(path):
        fail(f"{option} {path}: {blocker} is a file, not a folder")
    target = path.resolve()
    for source in inputs:
        source = Path(source)
        if source.resolve() == target or same_file(path, source):
            fail(f"{option} {path}: is also the input it reads; write to another file")
    if replaces is not None and path.is_file() and path.stat().st_size and not replaces(path):
        fail(
            f"{option} {path}: exists and is not {kind}; this command replaces only a file it wrote "
            "(give a new file name, or remove that file first)"
        )
    return path


def check_cache_dir(given: str | None, option: str) -> Path | None:
    """A tree cache folder given as ``option`` (``--cache-dir``, ``--tree-cache-dir``): a folder (or not
    there yet). A file there, a symbolic link that leads nowhere (a loop, a moved folder), or an empty
    value (an unset shell variable: it used to mean the current folder), is one error line before any
    work; an unwritable cache found later only costs the caching, never the tree."""
    if given is None:
        return None
    if not given.strip():
        fail(f"{option} '': give a folder for the tree cache ({option} . for the current one)")
    from pageindex.tree.pdf import broken_link

    cache_dir = Path(given)
    if link := broken_link(cache_dir):  # a loop, or a link to nowhere: nothing could be cached, unsaid
        fail(f"{option} {cache_dir}: {link}; give a folder for the tree cache")
    if cache_dir.exists() and not cache_dir.is_dir():
        fail(f"{option} {cache_dir}: is a file; give a folder for the tree cache")
    return cache_dir


def load_tree_file(path: Path) -> Any:
    """A tree JSON written by ``pageindex build``, or one ``error:`` line: unreadable, or not a tree
    (the first line of the validation error only, never a pydantic dump)."""
    from pydantic import ValidationError

    from pageindex.tree import load_tree
    from pageindex.wording import first_error

    try:
        return load_tree(path)
    except OSError as exc:
        fail(f"{path}: cannot read ({exc.strerror or exc})")
    except ValueError as exc:
        from pageindex.tree.pdf import starts_as_pdf

        if starts_as_pdf(path):  # a filing saved under a .json name ("'utf-8' codec can't decode ...")
            fail(f"{path}: not a tree JSON (it is a PDF file: give it a .pdf name to build its tree)")
        if isinstance(exc, ValidationError):  # the field and what it takes, not "1 validation error for Tree"
            fail(f"{path}: not a tree JSON ({first_error(exc)})")
        fail(f"{path}: not a tree JSON ({str(exc).splitlines()[0]})")


def opt_option(*, help: str) -> Any:
    """``--opt``: a retriever option, repeatable; no short flag (``-o`` is ``--out``)."""
    return typer.Option([], "--opt", help=help, metavar=OPT_METAVAR)


def judge_base_url_option(*, help: str, old_base_url: bool = False) -> Any:
    """``--judge-base-url``: the judge model's endpoint; ``old_base_url`` keeps ``--base-url`` as a
    hidden alias where it used to name the judge's endpoint (``bench judge``, ``bench rejudge``)."""
    aliases = HIDDEN_ALIASES["--judge-base-url"] if old_base_url else ()
    key = " An openai/ judge is sent $PAGEINDEX_JUDGE_API_KEY when set, else $OPENAI_API_KEY."
    return typer.Option(None, "--judge-base-url", *aliases, help=help + key)


def cache_path_option(*, help: str, old_path: bool = False) -> Any:
    """``--cache-path``: the LLM reply cache file; ``old_path`` keeps ``--path`` as a hidden alias
    (``cache stats|clear``)."""
    aliases = HIDDEN_ALIASES["--cache-path"] if old_path else ()
    return typer.Option(None, "--cache-path", *aliases, help=help)


def _seconds(seconds: float, shown: str, *, or_none: bool = False) -> float:
    """``seconds`` if it is a finite number > 0 (what ``--timeout`` and ``--time-limit`` take), else
    the option's error naming the value as the user gave it (``shown``)."""
    if not (math.isfinite(seconds) and seconds > 0):
        also = " or 'none'" if or_none else ""
        raise typer.BadParameter(f"{shown} is not a number of seconds > 0{also} (give e.g. 60 or 600)")
    return seconds


def _finite_seconds(value: float | None) -> float | None:
    return value if value is None else _seconds(value, f"{value:g}")


NO_LIMIT = "none"  # --time-limit none: no limit (lifts a resumed run's stored one)


def _limit_seconds(value: str | None) -> float | str | None:
    if value is None or value.strip().lower() == NO_LIMIT:
        return value if value is None else NO_LIMIT
    try:
        seconds = float(value)
    except ValueError:
        raise typer.BadParameter(f"{value!r} is not a number of seconds > 0 or 'none'") from None
    return _seconds(seconds, value, or_none=True)


def time_limit_option(help: str) -> Any:
    """``--time-limit``: seconds one question's whole retrieval may take, all its calls (no limit by
    default), a finite number > 0 like ``--timeout``; ``none`` for no limit (on ``--resume``, it lifts
    the run's stored one)."""
    return typer.Option(None, "--time-limit", help=help, callback=_limit_seconds, metavar="SECONDS|none")


def timeout_option(default: float | None = None, *, help: str) -> Any:
    """``--timeout``: seconds a model call may take, a finite number > 0 (``inf``, ``nan``, 0 and
    negative values are refused as usage errors, exit 2)."""
    return typer.Option(default, "--timeout", help=help, callback=_finite_seconds)


FRACTION_HELP = "a fraction from 0 to 1 (e.g. 0.6) or a percentage (e.g. 60%)"


SIGNIFICANCE = (0.001, 0.5)  # the significance levels --alpha accepts


def parse_fraction(option: str, raw: str, *, significance: bool = False) -> float:
    """``0.6``, ``.6`` or ``60%`` -> 0.6. Anything else, or outside 0-1 (0%-100%), raises
    ``ValueError`` with one line naming the option. A bare number above 1 (``50``) is refused
    rather than guessed to be a percentage. ``significance``: a significance level, from 0.001 to
    0.5 (near 0 no drop is ever significant, so a gate could never fail; above 0.5 every one is)."""
    text = raw.strip()
    percent = text.endswith("%")
    try:
        value = float(text[:-1].strip() if percent else text)
    except ValueError:
        value = math.nan
    if percent:
        value /= 100
    low, high = SIGNIFICANCE if significance else (0.0, 1.0)
    allowed = "a significance level from 0.001 to 0.5 (0.1%-50%)" if significance else FRACTION_HELP
    if not math.isfinite(value) or not low <= value <= high:
        # "50" for 50%: said how to write it, where that is allowed
        taken = not percent and low <= value / 100 <= high
        hint = f" (to mean {text} percent, write {text}%)" if taken else ""
        raise ValueError(f"{option} must be {allowed}; got {raw!r}{hint}")
    return value


def _error_rate(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return parse_fraction("--max-error-rate", value)
    except ValueError:
        raise typer.BadParameter(f"{value!r} is not {FRACTION_HELP}") from None


def _at_least_one(value: int | None) -> int | None:
    if value is not None and value < 1:  # said as a config file's value is (bench run)
        fail(f"--concurrency {value}: must be at least 1")
    return value


def concurrency_option(default: int | None, help: str) -> Any:
    """``--concurrency`` / ``-c``: how many samples, answers or requests are in flight at once; a
    whole number of 1 or more in every command."""
    return typer.Option(default, "--concurrency", "-c", callback=_at_least_one, help=help)


def max_error_rate_option(default: str | None = "0.2", *, of: str = "samples") -> Any:
    """``--max-error-rate``: the share of samples (or answers, or rows: ``of``) in error, or with a
    failed judge call, above which a command that finished exits 4; ``bench run`` defaults to None (a
    resumed run keeps its stored rate)."""
    return typer.Option(
        default,
        "--max-error-rate",
        callback=_error_rate,
        help=f"Exit 4 when more than this share of the {of} ended in error or a failed judge call: "
        f"{FRACTION_HELP} (default 0.2).",
    )


def scripted_policy_option() -> Any:
    """``--scripted-policy``: the policy answering ``--model scripted`` (tests, demos, offline runs)."""
    return typer.Option(
        None,
        "--scripted-policy",
        help="With --model scripted: module:function or file.py:function answering each request (a "
        f"ScriptedRequest), e.g. bench.faults.scripted:policy. Default: ${SCRIPTED_POLICY_ENV}.",
    )


def judge_models_option() -> Any:
    """``--judge-models``: the models of ``--judge panel``, comma-separated (``bench run``, ``judge``,
    ``rejudge``)."""
    return typer.Option(None, "--judge-models", help="Comma-separated judge models for --judge panel.")


def cache_option(default: str | None = "off", *, help: str) -> Any:
    """``--cache``: the LLM reply cache mode, off | rw | replay (``pageindex.llm.cache``); ``bench run``
    defaults to None (a resumed run keeps its stored mode)."""
    return typer.Option(default, "--cache", help=help)


def examples(*commands: str) -> str:
    """An epilog listing example commands (every ``--help`` shows two or three, then the exit
    codes, which :func:`pageindex.cli._register_all` appends)."""
    if not 2 <= len(commands) <= 3:
        raise ValueError("give two or three example commands")
    width = _example_width()
    return "Examples:\n" + "\n".join(f"  {_fold(c, width)}" for c in commands)


# a shell word: quoted parts and plain characters, as many as stand together
_WORD = re.compile(r"""(?:"[^"]*"|'[^']*'|[^\s"']+)+""")
_EXAMPLE_WIDTH = 74  # within the 80 columns help gets when not on a terminal, after its indent


def _example_width() -> int:
    """:data:`_EXAMPLE_WIDTH`, or less where help is narrower than 80 columns: a narrower terminal, or
    ``COLUMNS`` / typer's ``TERMINAL_WIDTH`` (which rich reads too), so that rich never wraps a folded
    line again at the margin (at 60 columns ``--min-accuracy`` ended a line and ``60%`` began the
    next). Read when the commands register, as the CLI starts; a wider terminal keeps 74."""
    given = os.environ.get("TERMINAL_WIDTH", "")
    columns = int(given) if given.isdigit() else shutil.get_terminal_size(fallback=(80, 24)).columns
    return max(min(_EXAMPLE_WIDTH, columns - 6), 30)


def _fold(command: str, width: int = _EXAMPLE_WIDTH) -> str:
    """``command`` in lines of at most ``width`` characters, broken between words with
    a shell continuation (`` \\``), so a copied line is never a shorter command that runs: help not on a
    terminal is 80 columns wide, and ``... --baseline results/baseline`` ended a line whose
    ``--max-drop 0.05`` stood on the next (fresh-user trial). A trailing ``  # comment`` stays last."""
    text, hash_, comment = command.partition("  #")
    words: list[str] = []
    for word in _WORD.findall(text):  # an option and its value stay on one line where they can
        if words and words[-1].startswith("-") and " " not in words[-1] and not word.startswith("-"):
            words[-1] += f" {word}"
        else:
            words.append(word)
    lines = [""]
    for word in words:
        if lines[-1].strip() and len(lines[-1]) + 1 + len(word) > width:
            lines[-1] += " \\"
            lines.append("    ")
        lines[-1] += word if not lines[-1].strip() else f" {word}"
    if hash_ and len(lines[-1]) + 3 + len(comment) <= width:
        lines[-1] += f"  #{comment}"
    elif hash_:  # on a line of its own, after the command it speaks of
        lines.append(f"    #{comment}")
    return "\n  ".join(lines)


def split_retriever_option(text: str, retrievers: list[str] | None = None) -> tuple[str, str, str]:
    """``--opt`` text -> (retriever, name, raw value). ``RETRIEVER.NAME=VALUE`` is accepted
    everywhere; ``NAME=VALUE`` where one retriever is meant (``retrievers`` holds exactly one)."""
    head, sep, raw = text.partition("=")
    retriever, dot, name = head.strip().rpartition(".")
    only = retrievers[0] if retrievers and len(retrievers) == 1 else None
    if not sep or not name.strip() or (dot and not retriever.strip()):
        form = "NAME=VALUE or RETRIEVER.NAME=VALUE" if only else "RETRIEVER.NAME=VALUE"
        raise ValueError(f"--opt {text!r}: write {form}, e.g. --opt agent.max_turns=8")
    key = name.strip().replace("-", "_")
    if not dot:
        if only is None:
            raise ValueError(_which_retriever(text, key, raw.strip(), retrievers))
        retriever = only
    return retriever.strip(), key, raw.strip()


def _which_retriever(text: str, name: str, raw: str, retrievers: list[str] | None) -> str:
    """The error for ``--opt NAME=VALUE`` when it is not clear which retriever it is for: the
    retrievers (of those that run, else of all) that have an option ``NAME``, as an example."""
    from pageindex.retrievers.base import available_retrievers

    specs = available_retrievers()
    pool = [r for r in retrievers or specs if r in specs]
    having = [r for r in pool if name in specs[r].options.model_fields]
    if not having:
        where = "of the retrievers that run" if retrievers else "of any retriever"
        return f"--opt {text!r}: {name!r} is not an option {where} (see `pageindex retrievers`)"
    runs = "several retrievers run" if retrievers else "no -r given, so the default retrievers run"
    return (
        f"--opt {text!r}: {runs}; say which with RETRIEVER.NAME=VALUE ({name} is an option of "
        f"{', '.join(having)}: e.g. --opt {having[0]}.{name}={raw})"
    )
