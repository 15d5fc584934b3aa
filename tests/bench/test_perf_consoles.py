"""The perf scripts and the soak print their tables as the CLI does: piped into a file or a CI log they
are laid out 200 columns wide (``CliConsole``), not rich's 80. ``baselines.py | tee`` cut the answers
table into columns nine characters wide ("Depreciat / ion and / amortizat / ion:", trial 3)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted((ROOT / "bench" / "perf").glob("*.py")) + [ROOT / "bench" / "faults" / "soak.py"]


def _eighty_column_consoles(path: Path) -> list[int]:
    """Lines where a plain rich ``Console`` is made without a width of its own."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Console":
            if not any(k.arg in ("width", "stderr") for k in node.keywords):
                found.append(node.lineno)
    return found


def test_no_perf_script_prints_at_rich_default_width() -> None:
    bad = {p.relative_to(ROOT).as_posix(): lines for p in SCRIPTS if (lines := _eighty_column_consoles(p))}
    assert not bad, f"use pageindex.cli._common.CliConsole (200 columns when piped): {bad}"


def test_the_cli_console_is_wide_when_piped(monkeypatch) -> None:
    """The scripts' console is the CLI's, and that one lays a pipe out 200 columns wide (a console
    made afresh: one made at import takes the COLUMNS of whatever test imported the script first)."""
    import io

    from bench.perf import baselines
    from pageindex.cli._common import CliConsole

    assert isinstance(baselines.console, CliConsole)
    monkeypatch.delenv("COLUMNS", raising=False)
    piped = CliConsole(file=io.StringIO())
    assert not piped.is_terminal and piped.size.width == 200


def test_the_cli_console_reads_columns_when_it_prints(monkeypatch) -> None:
    """rich fixed the width from COLUMNS as it was when the console was made (at import): a command run
    in-process later (CliRunner with another COLUMNS) wrapped its table cells at the first test's width,
    and a test of long cells failed or passed by the order the tests ran in."""
    import io

    from pageindex.cli._common import CliConsole

    monkeypatch.setenv("COLUMNS", "50")
    console = CliConsole(file=io.StringIO())
    assert console.size.width == 50
    monkeypatch.setenv("COLUMNS", "250")
    assert console.size.width == 250
    monkeypatch.delenv("COLUMNS")
    assert console.size.width == 200  # piped, no COLUMNS
    assert CliConsole(file=io.StringIO(), width=70).size.width == 70  # a width given stays


def test_printing_a_table_whole_leaves_the_console_width_as_it_was(monkeypatch) -> None:
    """``print_whole`` restored ``console.width`` to the number it read, which fixed the width of the
    CLI's one console for the rest of the process: after a summary printed under COLUMNS=80, a later
    command in the same process laid its tables out at 80 whatever COLUMNS said."""
    import io

    from rich.table import Table

    from bench.summary import print_whole
    from pageindex.cli._common import CliConsole

    monkeypatch.setenv("COLUMNS", "80")
    console = CliConsole(file=io.StringIO())
    table = Table("a", "b")
    table.add_row("x" * 150, "y")
    print_whole(console, table)
    assert "x" * 150 in console.file.getvalue()  # printed whole, wider than 80
    monkeypatch.setenv("COLUMNS", "250")
    assert console.size.width == 250
