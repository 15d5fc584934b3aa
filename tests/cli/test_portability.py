"""The CLI under the environments users have and the suite does not: a locale whose encoding is not
UTF-8, no HOME, files from Windows. Each runs the command in a subprocess with that environment."""

from __future__ import annotations

import codecs
import json
import shutil
import subprocess
import sys
from pathlib import Path

from bench.runner import demo_dataset_dir
from pageindex.tree.model import Node, Tree

REPO = Path(__file__).resolve().parents[2]


def run_cli(*args: str, env: dict[str, str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``pageindex ARGS`` as a fresh process of this checkout's code, with only ``env`` (and PATH)
    set; its output read as UTF-8, what a terminal of that encoding would show decoded as bytes."""
    return subprocess.run(
        [sys.executable, "-m", "pageindex.cli", *args],
        capture_output=True,
        timeout=120,
        cwd=cwd,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), **env},
        encoding="utf-8",
        errors="replace",
    )


def _tree_json(tmp_path: Path) -> Path:
    node = Node(
        node_id="fls", title="Forward\u2011Looking Statements (€ m)", level=1, kind="heading",
        start_page=1, end_page=1,
    )  # fmt: skip
    tree = Tree(
        doc_id="Société_2023", source="Société_2023.pdf", sha256="0" * 64, page_count=1,
        builder_version="test", nodes=[node], pages=["Forward\u2011Looking Statements"],
    )  # fmt: skip
    path = tmp_path / "tree.json"
    path.write_text(tree.model_dump_json(), encoding="utf-8")
    return path


def test_output_a_locale_cannot_encode_is_escaped_not_an_internal_error(tmp_path):
    """Under a locale whose encoding lacks a character the output holds (a filing's non-breaking
    hyphen under Latin-1; here ASCII) the command printed nothing and ended `error: internal error:
    UnicodeEncodeError`, exit 2."""
    done = run_cli("tree", str(_tree_json(tmp_path)), env={"PYTHONIOENCODING": "ascii", "COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    lines = done.stdout.splitlines()
    assert lines[0] == "Soci\\xe9t\\xe9_2023  (1 page, strategy: )"
    assert lines[1].startswith("Forward\\u2011Looking Statements (\\u20ac m)  [p. 1]")


def windows_dataset(tmp_path: Path, n: int = 3) -> Path:
    """``n`` demo questions in a folder named with non-ASCII letters and brackets, as Windows tools
    write them: UTF-8 with a byte-order mark, CRLF line ends, non-ASCII company names."""
    demo = demo_dataset_dir()
    data = tmp_path / "Société [démo]"
    shutil.copytree(demo / "pdfs", data / "pdfs")
    rows = [json.loads(line) for line in (demo / "questions.jsonl").read_text(encoding="utf-8").splitlines()]
    docs = [json.loads(line) for line in (demo / "documents.jsonl").read_text(encoding="utf-8").splitlines()]
    for doc in docs:
        doc["company"] = f"{doc['company']} Société Générale"
    for name, items in (("questions.jsonl", rows[:n]), ("documents.jsonl", docs)):
        text = "".join(json.dumps(item, ensure_ascii=False) + "\r\n" for item in items)
        (data / name).write_bytes(codecs.BOM_UTF8 + text.encode("utf-8"))
    return data


def test_the_c_locale_without_utf8_mode_prints_escapes_and_a_file_name_s_own_bytes(tmp_path):
    """The C locale with Python's UTF-8 mode off (`PYTHONUTF8=0`) writes stdio as ASCII with
    `surrogateescape`, which raised as `strict` did: `doctor` of a cached report holding "…" ended
    `error: internal error: UnicodeEncodeError`. A file name's byte that is not UTF-8 is printed as that
    byte, as `ls` shows it (it was replaced by `?`-like marks or raised)."""
    env = {"LC_ALL": "C", "PYTHONUTF8": "0", "COLUMNS": "200"}
    done = run_cli("tree", str(_tree_json(tmp_path)), env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1].startswith("Forward\\u2011Looking Statements (\\u20ac m)  [p. 1]")
    named = subprocess.run(
        [sys.executable, "-m", "pageindex.cli", "tree", b"caf\xe9 [q4].pdf"],
        capture_output=True, timeout=120, cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), **env},
    )  # fmt: skip
    assert named.returncode == 2
    assert named.stderr == b"error: caf\xe9 [q4].pdf: file not found\n"


def test_a_dataset_named_outside_the_locale_is_validated_not_an_internal_error(tmp_path):
    data = windows_dataset(tmp_path)
    done = run_cli("bench", "datasets", "validate", str(data), env={"PYTHONIOENCODING": "ascii"})
    assert done.returncode == 0, done.stderr
    said = "Soci\\xe9t\\xe9 [d\\xe9mo]: 3 questions, 3 kept, 0 dropped; 1 filings checked"
    assert done.stdout.startswith(said)


def test_reading_a_pdf_writes_nothing_in_the_home_folder_and_says_nothing_of_onnxruntime(tmp_path):
    """pymupdf imports onnxruntime, whose telemetry wrote `~/.cache/Microsoft/DeveloperTools/.onnxruntime`
    (outside `$PAGEINDEX_CACHE_DIR`) and, with a home folder it cannot write, put a coloured `[W:onnxruntime:
    ...] Failed to persist telemetry device ID` line on standard error of every PDF command."""
    filing = sorted((demo_dataset_dir() / "pdfs").glob("*.pdf"))[0]
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "PAGEINDEX_CACHE_DIR": str(tmp_path / "cache")}
    done = run_cli("tree", str(filing), env=env)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "" and list(home.iterdir()) == []
    not_a_folder = tmp_path / "home-file"
    not_a_folder.write_text("", encoding="utf-8")
    done = run_cli("tree", str(filing), "--no-cache", env={**env, "HOME": str(not_a_folder)})
    assert done.returncode == 0 and done.stderr == ""


def test_paths_with_brackets_are_printed_as_written(tmp_path):
    """rich read `[draft]` in a path as markup and dropped it: `bench run -o '[draft] run'` ended
    `run  run: finished ... -> /tmp/ run`, `bench report -o '[x] r.md'` said `report written to  r.md`,
    `bench gate --junit` the same."""
    from tests.cli.clirun import invoke

    out = tmp_path / "[draft] run"
    code, output = invoke(
        ["bench", "run", "-r", "extractive", "--judge", "rules", "--limit", "1", "-o", str(out)],
        PAGEINDEX_CACHE_DIR=str(tmp_path / "cache"),
    )
    assert code == 0, output
    last = output.strip().splitlines()[-1]
    assert last.startswith("run [draft] run: finished; 1 sample written") and last.endswith(f"-> {out}")
    report = tmp_path / "[x] r.md"
    code, output = invoke(["bench", "report", str(out), "--format", "md", "-o", str(report)])
    assert code == 0 and output.strip() == f"report written to {report}" and report.is_file()
    junit = tmp_path / "[ci] junit.xml"
    code, output = invoke(["bench", "gate", str(out), "--min-accuracy", "0", "--junit", str(junit)])
    assert code == 0 and output.strip().splitlines()[-1] == f"JUnit XML written to {junit}"


def test_a_heading_with_brackets_is_shown_as_the_filing_prints_it():
    from rich.console import Console

    from pageindex.analyst.progress import RichProgress

    title = "Item 6. [reserved] [/b]"
    node = Node(node_id="item_6", title=title, level=1, kind="item", start_page=2, end_page=2)
    tree = Tree(
        doc_id="x", source="x.pdf", sha256="0" * 64, page_count=2, builder_version="test", nodes=[node],
        pages=["", ""],
    )  # fmt: skip
    console = Console(record=True, width=200, force_terminal=False)
    RichProgress(console, tree).reading("item_6")
    assert console.export_text().strip() == "reading item_6 Item 6. [reserved] [/b] (page 2)"


def test_the_same_rows_saved_on_windows_are_the_same_dataset_and_their_runs_compare(tmp_path):
    """A byte-order mark, CRLF ends (git's core.autocrlf) or UTF-16 changed the dataset's hashes, so a
    run over the Windows copy and one over the original were `not comparable: dataset content hash ...`
    (compare and gate --baseline, exit 2) though every question, gold answer and verdict was the same."""
    from bench.datasets import dataset_hash
    from bench.runinfo import dataset_content_hash
    from tests.cli.clirun import invoke

    demo = demo_dataset_dir()
    windows = tmp_path / "windows"
    shutil.copytree(demo, windows)
    for name, encoding in (("questions.jsonl", "utf-8-sig"), ("documents.jsonl", "utf-16")):
        text = (demo / name).read_text(encoding="utf-8").replace("\n", "\r\n")
        (windows / name).write_bytes(text.encode(encoding))
    assert dataset_hash(demo).startswith("22e9a3dcaba3")  # a Unix file's hash is what it was
    assert dataset_hash(windows) == dataset_hash(demo)
    assert dataset_content_hash(windows) == dataset_content_hash(demo)
    runs = []
    for name, data in (("unix", demo), ("windows", windows)):
        out = tmp_path / name
        code, output = invoke(
            ["bench", "run", "--data-dir", str(data), "-r", "extractive", "--judge", "rules", "--limit", "3",
             "-q", "-o", str(out)],
            PAGEINDEX_CACHE_DIR=str(tmp_path / "cache"),
        )  # fmt: skip
        assert code == 0, output
        runs.append(str(out))
    code, output = invoke(["bench", "compare", *runs])
    assert code == 0, output
    assert "3 shared samples  only in A: 0  only in B: 0" in output
    code, output = invoke(["bench", "gate", runs[1], "--baseline", runs[0], "--max-drop", "0"])
    assert code == 0, output


def test_a_closed_standard_input_reads_as_an_empty_one(tmp_path):
    """`pageindex cache clear <&-` and `pageindex ask FILE <&-` (a daemon's or cron's closed stdin)
    ended `error: internal error: RuntimeError: input(): lost sys.stdin`, exit 2."""
    import os

    def closed_stdin(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pageindex.cli", *args], capture_output=True, text=True, timeout=120,
            preexec_fn=lambda: os.close(0),
            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "PAGEINDEX_CACHE_DIR": str(tmp_path)},
        )  # fmt: skip

    done = closed_stdin("cache", "clear")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"error: cache clear: no answer to the question (input ended): nothing deleted from "
        f"{tmp_path / 'llm.sqlite'}; pass --yes to delete without asking"
    ]
    filing = sorted((demo_dataset_dir() / "pdfs").glob("*.pdf"))[0]
    scripted = ["-m", "scripted", "--scripted-policy", "bench.faults.scripted:policy"]
    done = closed_stdin("ask", str(filing), *scripted)
    assert done.returncode == 0, done.stderr
    assert "internal error" not in done.stderr and done.stdout.startswith("Ask a question, or a command:")


def test_a_columns_of_no_width_is_ignored():
    """A terminal that reports no size exports `COLUMNS=0`: rich laid help out 0 columns wide and
    `bench gate --help` printed one empty line, exit 0."""
    done = run_cli("bench", "gate", "--help", env={"COLUMNS": "0", "LINES": "0"})
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    assert "Usage: python -m pageindex.cli bench gate" in text and "Exit codes: 0 done" in text
    assert max(len(line) for line in done.stdout.splitlines()) == 80  # help's width off a terminal


def test_a_dataset_json_saved_with_a_byte_order_mark_still_names_the_dataset(tmp_path):
    """Its name was not read (`Unexpected UTF-8 BOM`), so runs named the dataset after its folder."""
    from bench.datasets import load_financebench

    data = windows_dataset(tmp_path)
    (data / "dataset.json").write_bytes(codecs.BOM_UTF8 + b'{"name": "d\\u00e9mo-win"}\r\n')
    assert load_financebench(data).name == "démo-win"
