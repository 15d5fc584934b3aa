"""Options named the same everywhere (issue 17): ``--out/-o`` for every output file or folder,
``--opt`` (no short flag) for retriever options, ``--judge-base-url`` for the judge's endpoint,
``--cache-path`` for the LLM cache file; old spellings hidden but still accepted; ``ask -o`` a
clear error; every ``--help`` ends with two or three example commands and the exit-code table."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from typer.core import TyperGroup as Group
from typer.testing import CliRunner

from pageindex.cli import app
from pageindex.cli._common import EXIT_CODES_HELP, HIDDEN_ALIASES, split_retriever_option
from pageindex.cli.ask import parse_options

try:  # typer >= 0.2x carries its own copy of click
    from typer._click.core import Context
    from typer._click.exceptions import NoSuchOption
except ImportError:  # pragma: no cover - older typer on real click
    from click import Context
    from click.exceptions import NoSuchOption

ENV = {"OPENAI_API_KEY": "", "PAGEINDEX_MODEL": "", "COLUMNS": "400"}
# commands that write a file or folder named by an option (datasets fetch/demo also still take DIR)
WRITERS = {
    "bench datasets fetch": None,
    "bench datasets demo": None,
    "build": "--output",
    "bench run": None,
    "bench judge": "--output",
    "bench rejudge": "--output",
    "bench report": "--output",
}
OLD_SPELLINGS = [  # (command, old spelling, canonical spelling)
    *[(command, old, "--out") for command, old in WRITERS.items() if old],
    ("bench judge", "--base-url", "--judge-base-url"),
    ("bench rejudge", "--base-url", "--judge-base-url"),
    ("cache stats", "--path", "--cache-path"),
    ("cache clear", "--path", "--cache-path"),
]


def invoke(args: list[str]) -> tuple[int, str]:
    out = CliRunner().invoke(app, [str(a) for a in args], env=ENV)
    return out.exit_code, out.output


def walk(command=None, path: tuple[str, ...] = ()) -> Iterator[tuple[str, object]]:
    """(command path without 'pageindex', click command) for every group and command."""
    command = command or typer.main.get_command(app)
    yield " ".join(path), command
    if isinstance(command, Group):
        for name, sub in sorted(command.commands.items()):
            yield from walk(sub, (*path, name))


def commands() -> dict[str, object]:
    return dict(walk())


def options(command) -> list:
    return [p for p in command.params if p.param_type_name == "option"]


def option(command, name: str):
    return next(p for p in options(command) if name in p.opts)


def visible(command) -> list[str]:
    return [o for p in options(command) if not p.hidden for o in (*p.opts, *p.secondary_opts)]


def help_of(path: str) -> str:
    code, output = invoke([*path.split(), "--help"])
    assert code == 0, output
    return output


# -- the names ----------------------------------------------------------------------------------
def test_every_output_option_is_out_with_short_o():
    found = commands()
    for path in WRITERS:
        out = option(found[path], "--out")
        assert out.opts == ["--out", "-o"], path
    for path, command in found.items():
        for p in options(command):
            if "-o" in p.opts and not p.hidden:
                assert p.opts == ["--out", "-o"], f"{path}: -o belongs to {p.opts}"
            assert "--output" not in (*p.opts, *p.secondary_opts), f"{path} shows --output"


def test_opt_has_no_short_flag_anywhere():
    found = commands()
    holders = [path for path, c in found.items() if any("--opt" in p.opts for p in options(c))]
    assert sorted(holders) == ["ask", "bench run"]
    for path in holders:
        assert option(found[path], "--opt").opts == ["--opt"], path


def test_the_judge_endpoint_is_judge_base_url():
    found = commands()
    for path in ("bench run", "bench judge", "bench rejudge", "doctor"):
        assert option(found[path], "--judge-base-url").opts == ["--judge-base-url"], path
    for path in ("bench judge", "bench rejudge"):  # --base-url there named the judge's endpoint
        assert "--base-url" not in visible(found[path]), path


def test_the_llm_cache_file_is_cache_path():
    found = commands()
    for path in ("bench run", "cache stats", "cache clear"):
        assert option(found[path], "--cache-path").opts == ["--cache-path"], path
    for path, command in found.items():
        assert "--path" not in visible(command), path


@pytest.mark.parametrize(("path", "old", "new"), OLD_SPELLINGS)
def test_old_spellings_are_hidden_aliases(path, old, new):
    command = commands()[path]
    param = option(command, new)
    assert old in param.hidden_aliases and old in HIDDEN_ALIASES[new]
    assert old not in visible(command)
    shown = " ".join(help_of(path).split())
    assert f"{old} " not in shown and f"{old}," not in shown
    # parsed as the canonical option
    ctx = command.make_context(path.split()[-1], [old, "VALUE"], resilient_parsing=True)
    assert str(ctx.params[param.name]) == "VALUE"


def test_old_spellings_still_work_end_to_end(tmp_path):
    answers = tmp_path / "answers.jsonl"
    row = {"id": "q1", "question": "Revenue?", "gold_answer": "$5.0 billion", "model_answer": "$5.0 billion"}
    answers.write_text(json.dumps(row) + "\n")
    for spelling in (["--out"], ["-o"], ["--output"]):
        verdicts = tmp_path / f"verdicts{spelling[0]}.jsonl"
        code, output = invoke(["bench", "judge", "-i", answers, *spelling, verdicts])
        assert code == 0, output
        assert verdicts.is_file(), spelling
    # the judge's endpoint under its old name (a scripted judge model calls no endpoint, so any URL)
    scripted = {**ENV, "PAGEINDEX_SCRIPTED_POLICY": "bench.faults.scripted:policy"}
    verdicts = tmp_path / "verdicts-old-base-url.jsonl"
    old_url = ["bench", "judge", "-i", str(answers), "-o", str(verdicts), "--judge", "llm", "--judge-model",
               "scripted", "--base-url", "http://x"]  # fmt: skip
    done = CliRunner().invoke(app, old_url, env=scripted)
    assert done.exit_code == 0 and verdicts.is_file(), done.output
    code, output = invoke(["cache", "stats", "--path", tmp_path / "none.sqlite"])
    assert code == 0 and "empty (no file yet)" in output
    code, output = invoke(["bench", "judge", "-i", answers])
    assert code == 2 and "error: --out is required with --input" in output


def test_datasets_demo_takes_out_or_the_old_positional_dir(tmp_path):
    for args in (["--out", tmp_path / "a"], ["-o", tmp_path / "b"], [tmp_path / "c"]):
        code, output = invoke(["bench", "datasets", "demo", *args])
        assert code == 0, output
        assert (args[-1] / "questions.jsonl").is_file()
    code, output = invoke(["bench", "datasets", "demo", tmp_path / "d", "--out", tmp_path / "e"])
    assert code == 2 and output.strip().startswith("error:") and len(output.strip().splitlines()) == 1
    assert "different folders" in output and not (tmp_path / "d").exists()
    code, output = invoke(["bench", "datasets", "demo"])
    assert code == 2 and "--out DIR" in output


def test_a_missing_required_out_names_only_the_new_spelling(tmp_path):
    code, output = invoke(["bench", "rejudge", tmp_path, "--judge", "rules"])
    assert code == 2
    assert "'--out' / '-o'" in output and "--output" not in output


def test_ask_dash_o_is_a_clear_error_naming_opt(tmp_path):
    for args in (["-o", "max_turns=6"], ["-o"]):
        code, output = invoke(["ask", tmp_path / "10k.pdf", "What was revenue?", *args])
        lines = [line for line in output.splitlines() if line.strip()]
        assert code == 2, output
        assert len(lines) == 1 and lines[0].startswith("error: "), output
        assert "--opt" in lines[0] and "-o" in lines[0]
    assert "-o" not in visible(commands()["ask"])


# -- --opt NAME=VALUE and RETRIEVER.NAME=VALUE --------------------------------------------------
def test_split_retriever_option():
    assert split_retriever_option("agent.max_turns=8") == ("agent", "max_turns", "8")
    assert split_retriever_option("agent.max-turns = 8") == ("agent", "max_turns", "8")
    assert split_retriever_option("max_turns=8", ["agent"]) == ("agent", "max_turns", "8")
    assert split_retriever_option("iterative.max_turns=8", ["agent"]) == ("iterative", "max_turns", "8")
    assert split_retriever_option("agent.ratio=0.5") == ("agent", "ratio", "0.5")
    with pytest.raises(ValueError, match="several retrievers run; say which with RETRIEVER.NAME=VALUE"):
        split_retriever_option("max_turns=8", ["agent", "iterative"])
    with pytest.raises(ValueError, match="RETRIEVER.NAME=VALUE"):
        split_retriever_option("max_turns=8")
    # the example names a retriever that has the option, never one that does not
    with pytest.raises(ValueError) as exc:
        split_retriever_option("top_k=3")
    assert str(exc.value) == (
        "--opt 'top_k=3': no -r given, so the default retrievers run; say which with RETRIEVER.NAME=VALUE "
        "(top_k is an option of bm25, extractive: e.g. --opt bm25.top_k=3)"
    )
    with pytest.raises(ValueError, match="'no_such' is not an option of the retrievers that run"):
        split_retriever_option("no_such=1", ["agent", "planner"])
    for bad in ("max_turns", "=8", ".max_turns=8", "agent.=8"):
        with pytest.raises(ValueError, match="--opt"):
            split_retriever_option(bad, ["agent"])


def test_ask_takes_both_forms_for_its_retriever():
    assert parse_options(["max_turns=5", "iterative.index_depth=none"], "iterative") == {
        "max_turns": "5",
        "index_depth": None,
    }
    with pytest.raises(ValueError, match="is for retriever 'agent', but --retriever is 'iterative'"):
        parse_options(["agent.max_turns=5"], "iterative")


def test_bench_run_opt_without_retriever_needs_one_retriever(tmp_path):
    code, output = invoke(
        ["bench", "run", "-r", "extractive,oracle", "-q", "-o", tmp_path / "run", "--opt", "top_k=3"]
    )
    lines = [line for line in output.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1, output
    assert "several retrievers run" in lines[0] and "RETRIEVER.NAME=VALUE" in lines[0]
    # with one retriever, NAME=VALUE is that retriever's option (same outcome as the long form)
    run = ["bench", "run", "-r", "extractive", "-q", "-o"]
    short = invoke([*run, tmp_path / "a", "--opt", "no_such=1"])
    long = invoke([*run, tmp_path / "b", "--opt", "extractive.no_such=1"])
    assert short[0] == long[0] == 2
    assert short[1].replace(str(tmp_path / "a"), "X") == long[1].replace(str(tmp_path / "b"), "X")


# -- help: examples, then the exit codes --------------------------------------------------------
def _examples(text: str) -> list[str]:
    """The example commands of a help text, each whole: a line ending in a shell continuation (` \\`)
    goes on on the next line."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "Examples:")
    found: list[str] = []
    going_on = False
    for line in lines[start + 1 :]:
        if going_on:
            found[-1] = found[-1][:-1] + line.strip()
        elif line.strip().startswith("pageindex "):
            found.append(line.strip())
        else:
            break
        going_on = found[-1].endswith(" \\")
    return found


@pytest.mark.parametrize("path", sorted(commands()))
def test_no_example_line_is_cut_where_help_is_80_columns(path):
    """Fresh-user trial: help not on a terminal is 80 columns wide, and a long example was cut between
    lines, so its first line, copied, was a shorter command that ran (``bench gate ... --baseline B``
    without its ``--max-drop``). Every example line now fits, and any but the last ends in ` \\`."""
    out = CliRunner().invoke(app, [*path.split(), "--help"], env={**ENV, "COLUMNS": "80"})
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert max(map(len, lines)) <= 80
    start = next(i for i, line in enumerate(lines) if line.strip() == "Examples:")
    block = []
    for line in lines[start + 1 :]:
        if not line.strip():
            break
        block.append(line)
    assert all(line.startswith("  ") for line in block), block  # none wrapped back to the margin
    for example in _examples("Examples:\n" + "\n".join(block)):
        assert shlex.split(example)[0] == "pageindex", example


@pytest.mark.parametrize("columns", [60, 44])
def test_examples_are_folded_to_a_narrower_help(columns):
    """With help narrower than 80 columns (a narrow terminal, ``COLUMNS=60``) rich wrapped the folded
    examples again at the margin: ``... --min-accuracy`` ended a line and ``60%`` began the next, flush
    left. The examples are folded to the width the CLI starts with (a new process: they are folded when
    the commands register)."""
    import os
    import subprocess
    import sys

    env = {**os.environ, **ENV, "COLUMNS": str(columns)}
    env.pop("TERMINAL_WIDTH", None)
    done = subprocess.run([sys.executable, "-m", "pageindex.cli", "bench", "gate", "--help"], env=env,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "Examples:")
    block = [line.rstrip() for line in lines[start + 1 :]]
    block = block[: block.index("")]
    assert block and all(line.startswith("   ") and len(line) <= columns for line in block), block
    assert _examples("Examples:\n" + "\n".join(block)) == [
        "pageindex bench gate results/candidate --min-accuracy 60%",
        "pageindex bench gate results/candidate --baseline results/baseline --max-drop 0.05",
        "pageindex bench gate results/candidate --baseline results/baseline --junit gate.xml",
    ]


@pytest.mark.parametrize("path", sorted(commands()))
def test_every_help_ends_with_examples_then_the_exit_codes(path):
    shown = help_of(path)
    flat = " ".join(shown.split())
    examples = _examples(shown)
    assert 2 <= len(examples) <= 3, (path, examples)
    assert flat.index("Examples:") < flat.index(" ".join(EXIT_CODES_HELP.split()))
    assert flat.endswith(" ".join(EXIT_CODES_HELP.split()))


@pytest.mark.parametrize("path", sorted(commands()))
def test_every_example_uses_options_its_command_has(path):
    root = typer.main.get_command(app)
    for example in _examples(help_of(path)):
        args = shlex.split(example.split("  #")[0])[1:]
        command, ctx = root, Context(root, info_name="pageindex")
        while isinstance(command, Group) and args and args[0] in command.commands:
            command = command.commands[args.pop(0)]
        assert not isinstance(command, Group), example
        try:
            command.make_context(command.name, args, parent=ctx, resilient_parsing=True)
        except NoSuchOption as exc:  # pragma: no cover - the failure message
            pytest.fail(f"{example}: {exc.format_message()}")


def _help_texts() -> list[str]:
    """Every command's help and epilog (examples), the README's text too."""
    import click
    import typer

    from pageindex.cli import app

    texts: list[str] = [(Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")]

    def walk(command: click.Command) -> None:
        # an example folded over lines (a shell continuation) is read as the one command it is
        texts.extend([command.help or "", re.sub(r" \\\n\s+", " ", command.epilog or "")])
        for param in command.params:  # an option's help, said of its command ("ask: ...")
            texts.append(f"{command.name}: {getattr(param, 'help', None) or ''}")
        for sub in getattr(command, "commands", {}).values():
            walk(sub)

    walk(typer.main.get_command(app))
    return texts


def test_every_opt_example_names_an_option_the_retriever_has() -> None:
    """The ``--opt`` examples of every --help and of the README name options the retriever meant
    has (a wrong one, ``-r iterative --opt max_turns=6``, exits 2 for whoever copies it)."""
    import re

    from pageindex.retrievers import get_retriever
    from pageindex.retrievers.base import available_retrievers

    checked = 0
    for text in _help_texts():
        for line in text.splitlines():
            if "--opt" not in line:
                continue
            spans = re.findall(r"`([^`]*)`", line)
            # a retriever named on the line ("| `oracle` | ...", "`oracle` takes `--opt pages=..`")
            row = next((s for s in spans if s in available_retrievers()), None)
            for part in spans or [line]:  # each command of the line
                given = re.search(r"(?:-r|--retrievers?)\s+([a-z,]+)", part)
                default = "iterative" if re.search(r"\bask\b", part) else "agent"  # ask's, else agent
                named = given.group(1).split(",") if given else [row or default]
                for opt in re.findall(r"--opt\s+([a-z_]+(?:\.[a-z_]+)?)=", part):
                    retriever, _, name = opt.rpartition(".")
                    for r in [retriever] if retriever else named:
                        fields = get_retriever(r).options.model_fields
                        assert name in fields, f"{r}.{name} in: {line.strip()}"
                        checked += 1
    assert checked >= 8


def test_version_prints_the_installed_version() -> None:
    from importlib.metadata import version

    code, output = invoke(["--version"])
    assert code == 0 and output.strip() == f"pageindex-bench {version('pageindex-bench')}"
