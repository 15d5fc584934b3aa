"""HTML and Markdown reports over hand-made runs; the HTML is opened in headless Chromium."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bench.report.html import render_html
from bench.report.markdown import render_markdown
from bench.summary import load_run
from pageindex.cli import app
from tests.bench.runfactory import outcomes, run_info, write_run

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
HOSTILE = "<script>document.title='pwned'</script><b>bold?</b>"


def _rows(pattern: str, retriever: str, **fields):
    rows = outcomes(pattern, retriever, **fields)
    for k, s in enumerate(rows):
        s.question_type = ["metrics-generated", "novel-generated", "domain-relevant"][k % 3]
        s.doc_type = ["10k", "10q", "8k"][k % 3]
    return rows


def _make_run(tmp_path: Path, name: str = "run1") -> Path:
    agent = _rows("ccccciirre", "agent")
    agent[5].answer = HOSTILE
    planner = _rows("ccccccccir", "planner", retriever_prompt_tokens=3000, iterations=4, tool_calls=3)
    return write_run(
        tmp_path / name,
        agent + planner,
        info=run_info(name),
        dropped=[{"question_id": "x1", "reason": "missing_pdf: DOC_Z.pdf not found"}],
    )


def _chromium(args: list[str], profile: Path) -> subprocess.CompletedProcess[str]:
    if CHROMIUM is None:
        pytest.fail(
            "chromium is not installed: install Debian's package (apt-get install -y chromium); "
            ".ci/run does this in CI"
        )
    return subprocess.run(
        [CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_html_report_renders_in_headless_chromium(tmp_path: Path) -> None:
    run_dir = _make_run(tmp_path)
    res = CliRunner().invoke(app, ["bench", "report", str(run_dir), "-o", str(run_dir / "report.html")])
    assert res.exit_code == 0, res.output
    html = (run_dir / "report.html").read_text()
    # self-contained: nothing fetched from anywhere
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)

    url = (run_dir / "report.html").as_uri()
    dom = _chromium(["--dump-dom", url], tmp_path / "profile1")
    assert dom.returncode == 0, dom.stderr[-2000:]
    page = dom.stdout
    assert page.count("<svg") >= 4, "the four charts did not render as inline SVG"
    assert len(re.findall(r"<figure class=\"chart\">\s*<svg", page)) == 4
    assert "Accuracy against tokens per question" in page
    assert len(re.findall(r'<tr class="sample">', page)) == 20  # one expandable row per sample
    assert page.count("<details>") >= 20
    assert "$1,577 million" in page  # gold answer inside a row's details
    assert "fetch_section item_7" in page  # trace inside a row's details
    assert "&lt;script&gt;document.title='pwned'&lt;/script&gt;" in page  # answers are shown, not run
    assert "<title>pageindex-bench report: run1</title>" in page
    assert "missing_pdf: DOC_Z.pdf not found" in page

    shot = run_dir / "report.png"
    res = _chromium(["--window-size=1400,2400", f"--screenshot={shot}", url], tmp_path / "profile2")
    assert res.returncode == 0, res.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 20_000  # a blank page is a few kB


def test_report_of_two_runs_warns_about_differences(tmp_path: Path) -> None:
    a = load_run(_make_run(tmp_path, "A"))
    b_dir = write_run(tmp_path / "B", _rows("cccccccccc", "agent"), info=run_info("B", judge="llm"))
    html = render_html([a, load_run(b_dir)])
    assert "judge differs: A=rules vs B=llm" in html
    assert html.count('<tr class="sample">') == 30
    assert "A: agent / scripted" in html and "B: agent / scripted" in html  # chart legends per run


def test_markdown_report(tmp_path: Path) -> None:
    run_dir = _make_run(tmp_path)
    md = render_markdown([load_run(run_dir)])
    lines = md.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("| retriever_model"))
    assert lines[header + 2].startswith("| agent / scripted | 10 | 50.0% [23.7, 76.3] |")
    assert lines[header + 3].startswith("| planner / scripted | 10 | 80.0% [49.0, 94.3] |")
    assert "### by question type" in md and "### per question" in md
    assert "| x1 | missing_pdf: DOC_Z.pdf not found |" in md
    res = CliRunner().invoke(app, ["bench", "report", str(run_dir), "--format", "md", "-o", "-"])
    assert res.exit_code == 0 and res.stdout.startswith("# pageindex-bench report: run1")


def test_summary_command(tmp_path: Path) -> None:
    run_dir = _make_run(tmp_path)
    res = CliRunner().invoke(app, ["bench", "summary", str(run_dir)])
    assert res.exit_code == 0, res.output
    assert "by retriever" in res.output and "80.0% [49.0, 94.3]" in res.output
    res = CliRunner().invoke(app, ["bench", "summary", str(tmp_path / "nope")])
    assert res.exit_code == 2 and "does not exist" in res.output
