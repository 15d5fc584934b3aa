"""HTML and Markdown reports over hand-made runs; the HTML is opened in headless Chromium and driven
over the DevTools protocol (tests/bench/chromium.py)."""

from __future__ import annotations

import base64
import gzip
import json
import random
import re
import subprocess
from html import unescape
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bench.report.html import render_html
from bench.report.markdown import render_markdown
from bench.rundir import load_run
from pageindex.cli import app
from tests.bench.chromium import CHROMIUM, FLAGS, Browser
from tests.bench.runfactory import outcomes, run_info, sample, write_run

HOSTILE = "<script>document.title='pwned'</script><b>bold?</b>"
LONG_TOKEN = "https://example.invalid/" + "x" * 2500  # one unbreakable "word" in an answer and a trace


def _rows(pattern: str, retriever: str, **fields):
    rows = outcomes(pattern, retriever, **fields)
    for k, s in enumerate(rows):
        s.question_type = ["metrics-generated", "novel-generated", "domain-relevant"][k % 3]
        s.doc_type = ["10k", "10q", "8k"][k % 3]
    return rows


def _make_run(tmp_path: Path, name: str = "run1") -> Path:
    agent = _rows("ccccciirre", "agent")
    agent[5].answer = HOSTILE
    agent[3].answer = LONG_TOKEN
    agent[3].trace = [{"kind": "tool_call", "message": "fetch_section item_7", "data": {"text": LONG_TOKEN}}]
    planner = _rows("ccccccccir", "planner", retriever_prompt_tokens=3000, iterations=4, tool_calls=3)
    return write_run(
        tmp_path / name,
        agent + planner,
        info=run_info(name),
        dropped=[{"question_id": "x1", "reason": "missing_pdf: DOC_Z.pdf not found"}],
    )


def _make_b(tmp_path: Path, name: str = "B", **info) -> Path:
    agent = _rows("cccciccccc", "agent", iterations=3)
    planner = _rows("cciccccccr", "planner", retriever_prompt_tokens=2500, iterations=3, tool_calls=2)
    return write_run(tmp_path / name, agent + planner, info=run_info(name, **info))


def _html_report(tmp_path: Path, *runs: Path) -> Path:
    """``bench report RUN... -o tmp_path/report.html`` through the CLI, which must succeed: its path."""
    out = tmp_path / "report.html"
    res = CliRunner().invoke(app, ["bench", "report", *map(str, runs), "-o", str(out)])
    assert res.exit_code == 0, res.output
    return out


def _dump_dom(url: str, profile: Path) -> str:
    if CHROMIUM is None:
        pytest.fail("chromium is not installed: apt-get install -y chromium (.ci/run does this in CI)")
    res = subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--dump-dom", url],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-2000:]
    return res.stdout


def test_html_report_of_one_run_renders_in_headless_chromium(tmp_path: Path) -> None:
    run_dir = _make_run(tmp_path)
    res = CliRunner().invoke(app, ["bench", "report", str(run_dir), "-o", str(run_dir / "report.html")])
    assert res.exit_code == 0, res.output
    html = (run_dir / "report.html").read_text()
    # self-contained: nothing fetched from anywhere, scripts inline
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)
    assert "<script src" not in html and "@import" not in html

    page = _dump_dom((run_dir / "report.html").as_uri(), tmp_path / "profile")
    assert len(re.findall(r"<figure class=\"chart\">\s*<svg", page)) == 4  # no repeats: no consistency chart
    assert "Accuracy against tokens per question" in page and "Pareto front" in page
    assert len(re.findall(r'<tr class="q"', page)) == 10  # one row per question
    assert 'id="ab"' not in page  # one run: no A-vs-B section
    assert "&lt;script&gt;" not in page or "pwned" not in page.split("<title>")[1].split("</title>")[0]
    assert "<title>pageindex-bench report: run1</title>" in page
    assert "missing_pdf: DOC_Z.pdf not found" in page
    # one summary table, retrievers as rows
    summary = page.split('id="summary"')[1].split("</table>")[0]
    assert re.search(r"<td>agent / scripted</td>\s*<td>10</td>\s*<td>50.0% \[23.7, 76.3\]</td>", summary)


def test_two_run_report_in_chromium(tmp_path: Path) -> None:
    a, b = _make_run(tmp_path, "A"), _make_b(tmp_path)
    out = _html_report(tmp_path, a, b)

    with Browser(tmp_path / "profile", width=1280, height=900) as page:
        page.open(out.as_uri())
        shot = page.screenshot(tmp_path / "top.png")
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000

        # A vs B: paired difference, McNemar p and the flipped questions, linked to their rows
        ab = page.js("document.querySelector('#ab').innerText")
        assert "difference B − A" in ab and "McNemar p" in ab and "95% CI (paired bootstrap)" in ab
        assert re.search(r"ALL\s+20\s+65.0% \[43.3, 81.9\]\s+85.0% \[64.0, 94.8\]\s+\+20.0 pp", ab)
        links = page.js("Array.from(document.querySelectorAll('#ab a')).map(a => a.textContent + a.hash)")
        improved = ["q005", "q006", "q007", "q008", "q009", "q008"]  # agent, then planner
        regressed = ["q004", "q002"]
        assert links == [f"{q}#q-{q}" for q in improved + regressed]
        assert page.js("document.querySelectorAll('tr.q').length") == 10

        # expand a row through its A-vs-B link: the details of every run side by side
        page.js("document.querySelector('tr#q-q003').click()")
        page.wait_for("!!document.querySelector('tr#q-q003 + tr.detail-row .card')")
        detail = page.js("document.querySelector('tr#q-q003 + tr.detail-row').innerText")
        assert detail.count("fetch_section item_7") == 4 and "$1,577 million" in detail
        heads = "Array.from(document.querySelectorAll('tr#q-q003 + tr.detail-row .card h4'))"
        assert page.js(heads + ".map(h => h.innerText)") == [
            "A agent correct", "A planner correct", "B agent correct", "B planner correct"
        ]  # fmt: skip
        page.js("document.querySelector('#ab a[href=\"#q-q005\"]').click()")
        page.wait_for("!!document.querySelector('tr#q-q005 + tr.detail-row .card')")
        assert HOSTILE in page.js("document.querySelector('tr#q-q005 + tr.detail-row').innerText")
        assert page.js("document.title") == "pageindex-bench report: A, B"  # shown, never run

        # nothing is wider than the viewport, even with a 2,500-character word in a trace
        assert page.js("document.documentElement.scrollWidth") <= 1280
        too_wide = page.js(
            "Array.from(document.querySelectorAll('body *'))"
            ".filter(e => e.getBoundingClientRect().right > innerWidth + 0.5)"
            ".map(e => e.tagName + '.' + e.className)"
        )
        assert too_wide == []
        page.screenshot(tmp_path / "expanded.png")

        # the filters and the search reduce the rows
        def visible() -> list[str]:
            return page.js(
                "Array.from(document.querySelectorAll('tr.q')).filter(r => !r.hidden).map(r => r.id)"
            )

        def click(f: str) -> None:
            page.js(f"document.querySelector('.controls button[data-f=\"{f}\"]').click()")

        click("flip")
        assert visible() == [f"q-q00{k}" for k in (2, 4, 5, 6, 7, 8, 9)]
        assert page.js("document.querySelector('#q-count').textContent") == "7 of 10 questions"
        click("err")
        assert visible() == ["q-q009"]
        click("dis")
        assert visible() == [f"q-q00{k}" for k in (2, 4, 5, 6, 7, 8, 9)]
        click("all")
        search = "const s = document.querySelector('#q-search'); s.value = 'Q003 value'; "
        page.js(search + "s.dispatchEvent(new Event('input'))")
        assert visible() == ["q-q003"]


def _trace(rnd: random.Random, text) -> list[dict]:
    """A trace shaped like an agent's: options, model calls with their replies, section fetches."""
    events: list[dict] = [
        {"kind": "info", "message": "agent on DOC: " + text(20), "t": 0.0,
         "data": {"options": {"max_turns": 12, "max_tokens": 800, "index_depth": 2}}},
    ]  # fmt: skip
    for k in range(rnd.randint(2, 5)):
        node = f"item_{rnd.randint(1, 15)}/{rnd.choice(['notes', 'mdna', 'cash_flows', 'risk'])}"
        events.append(
            {"kind": "model_call", "message": f"agent: {3 + 2 * k} messages -> tool calls ['fetch_section']",
             "t": 1.1 * k + 0.2, "data": {"role": "agent", "prompt_tokens": rnd.randint(900, 9000),
             "completion_tokens": rnd.randint(20, 300), "reply": {"reasoning": text(35)}}}
        )  # fmt: skip
        events.append(
            {"kind": "tool_call", "message": f"fetch_section {node}", "t": 1.1 * k + 0.9,
             "data": {"node_id": node, "pages": [rnd.randint(1, 120)], "chars": rnd.randint(500, 9000)}}
        )  # fmt: skip
    return events


def test_report_size_for_three_runs_of_300_samples(tmp_path: Path) -> None:
    """Measured: about 0.5 MB (details stored once, gzip + base64, rendered on opening a row)."""
    rnd = random.Random(7)
    vocabulary = [
        f"{rnd.choice('bcdfgklmnprst')}{rnd.choice('aeiou')}{rnd.choice('nrstl')}{k}" for k in range(3000)
    ]
    weights = [1 / (rank + 1) for rank in range(len(vocabulary))]  # Zipf, like words of prose

    def text(n: int) -> str:
        return " ".join(rnd.choices(vocabulary, weights, k=n))

    questions = {q: text(25) for q in range(100)}
    runs = []
    for name in "ABC":
        samples = []
        for q in range(100):
            for r in ("agent", "planner", "iterative"):
                verdict = rnd.choice(["correct", "correct", "incorrect", "refusal", None])
                samples.append(
                    sample(f"q{q:03d}", r, verdict, doc_id=f"DOC_{q % 30}", question=questions[q],
                           answer=text(40), judge_reasoning=text(30), trace=_trace(rnd, text),
                           iterations=rnd.randint(1, 4))
                )  # fmt: skip
        runs.append(load_run(write_run(tmp_path / name, samples, info=run_info(name))))
    html = render_html(runs)
    size = len(html.encode("utf-8"))
    print(f"report of 3 runs x 300 samples: {size / 1e6:.2f} MB")
    assert html.count('<tr class="q"') == 100
    assert size < 1_000_000


def _unpack(html: str) -> dict:
    blob = re.search(r'<script type="application/octet-stream" id="report-data">([^<]+)</script>', html)
    assert blob is not None
    return json.loads(gzip.decompress(base64.b64decode(blob.group(1))))


def test_traces_are_stored_once(tmp_path: Path) -> None:
    a = load_run(_make_run(tmp_path, "A"))
    replay = write_run(tmp_path / "R", [s.model_copy() for s in a.samples], info=run_info("R"))
    data = _unpack(render_html([a, load_run(replay)]))
    # 20 samples per run, 2 distinct traces (the default one and q003's long one): 2 stored, 40 references
    assert len(data["traces"]) == 2
    refs = [s["trace"] for q in data["questions"].values() for s in q["samples"]]
    assert len(refs) == 40 and sorted(set(refs)) == [0, 1]
    assert data["traces"][0] == [["0.40s", "tool_call", "fetch_section item_7", ""]]
    assert data["columns"] == ["A agent", "A planner", "B agent", "B planner"]  # letters, not run ids


def test_report_of_two_runs_warns_about_differences(tmp_path: Path) -> None:
    a = load_run(_make_run(tmp_path, "A"))
    html = render_html([a, load_run(_make_b(tmp_path, judge="llm"))])
    assert "judge differs: A=rules vs B=llm" in html
    assert html.count('<tr class="q"') == 10
    assert "A: agent / scripted" in html and "B: agent / scripted" in html  # chart legends per run


def test_consistency_chart_with_repeats(tmp_path: Path) -> None:
    samples = [sample(f"q{k}", "agent", v, repeat=rep) for k in range(4) for rep, v in
               enumerate(["correct", "correct" if k % 2 else "incorrect", "correct"])]  # fmt: skip
    html = render_html([load_run(write_run(tmp_path / "rep", samples, info=run_info("rep")))])
    assert "Per-question consistency across repeats" in html
    assert "agent / scripted: 50% stable" in html  # q1, q3 always correct; q0, q2 flip


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


def test_markdown_report_of_two_runs(tmp_path: Path) -> None:
    md = render_markdown([load_run(_make_run(tmp_path, "A")), load_run(_make_b(tmp_path))])
    assert (
        "## Summary (runs x retrievers)" in md
        and "| B | planner / scripted | 10 | 80.0% [49.0, 94.3] |" in md
    )
    assert "## A vs B: A = A, B = B" in md
    assert re.search(r"\| ALL \| 20 \| 65.0% \[43.3, 81.9\] \| 85.0% \[64.0, 94.8\] \| \+20.0 pp \|", md)
    flipped = md.split("Flipped: ")[1].splitlines()[0]
    assert flipped.startswith("q005 agent (incorrect -> correct), q006 agent (incorrect -> correct)")
    assert "q009 agent (error -> correct)" in flipped and "q002 planner (correct -> incorrect)" in flipped
    assert flipped.count("(") == 8


def test_two_runs_with_one_id_keep_their_own_letters_and_columns(tmp_path: Path) -> None:
    """Review 13: a baseline copied from a run folder keeps the id in its run.json; the report keyed runs
    by id, so both were "B" and one column held both runs' verdicts as if they were repeats. Such runs
    are named by their folders, as `bench compare` names them."""
    a = load_run(write_run(tmp_path / "baselines" / "main", outcomes("cccc"), info=run_info("nightly")))
    b = load_run(write_run(tmp_path / "ci" / "nightly", outcomes("iiii"), info=run_info("nightly")))
    md = render_markdown([a, b])
    assert f"## A vs B: A = {a.path}, B = {b.path}" in md
    assert "| 0.125 | 0 / 4 |" in md  # 4 correct only in A: the runs were not merged
    data = _unpack(render_html([a, b]))
    assert data["columns"] == ["A agent", "B agent"]
    assert len(data["questions"]["q000"]["samples"]) == 2


def test_an_answer_its_judge_failed_on_is_shown_unjudged_not_error(tmp_path: Path) -> None:
    """Review 13: the summary counts an answer whose judge call failed as `unjudged` (not an error), but
    the report's cells, card and flip lists said "error"."""
    rows = outcomes("cc")
    rows[1] = sample("q001", verdict=None, status="answer", judge="judge_error", judge_error="timeout: judge")
    a = load_run(write_run(tmp_path / "A", outcomes("cc"), info=run_info("A")))
    b = load_run(write_run(tmp_path / "B", rows, info=run_info("B")))
    assert b.summary.overall.errored == 0
    md = render_markdown([a, b])
    assert "q001 agent (correct -> unjudged)" in md
    assert next(line for line in md.splitlines() if line.startswith("| q001 ") and "unjudged" in line)
    data = _unpack(render_html([a, b]))
    assert [s["verdict"] for s in data["questions"]["q001"]["samples"]] == ["correct", "unjudged"]
    assert "(correct &rarr; unjudged)" in render_html([a, b])


def test_summary_command(tmp_path: Path) -> None:
    run_dir = _make_run(tmp_path)
    res = CliRunner().invoke(app, ["bench", "summary", str(run_dir)])
    assert res.exit_code == 0, res.output
    assert "by retriever" in res.output and "80.0% [49.0, 94.3]" in res.output
    res = CliRunner().invoke(app, ["bench", "summary", str(tmp_path / "nope")])
    assert res.exit_code == 2 and "does not exist" in res.output


def test_report_never_overwrites_a_run_file_or_writes_into_a_folder(tmp_path: Path) -> None:
    """``-o RUN/samples.jsonl`` would replace the finished samples with HTML: refused, nothing lost."""
    run = write_run(tmp_path / "run", outcomes("ccic"), info=run_info("run"))
    samples = (run / "samples.jsonl").read_bytes()
    runner = CliRunner()
    for target in ("samples.jsonl", "run.json", "summary.json"):
        res = runner.invoke(app, ["bench", "report", str(run), "-o", str(run / target)])
        assert res.exit_code == 2, res.output
        assert res.output.strip() == (
            f"error: --out {run / target}: is a file of run {run}; write the report to another file"
        )
    assert (run / "samples.jsonl").read_bytes() == samples and len(load_run(run).samples) == 4
    folder = runner.invoke(app, ["bench", "report", str(run), "-o", str(tmp_path)])
    assert folder.exit_code == 2 and "is a directory" in folder.output
    ok = runner.invoke(app, ["bench", "report", str(run)])  # the default, report.html in the run
    assert ok.exit_code == 0 and (run / "report.html").read_text().startswith("<!DOCTYPE html>")


def test_the_reports_tables_have_the_uncertain_column_the_summary_has(tmp_path: Path) -> None:
    """Trial 14: 7 of 15 verdicts were uncertain, shown in the summary's own table and the Markdown per-run
    tables, but the report's combined tables had no such column."""
    rows = outcomes("ccii") + [sample(f"u{k}", verdict="uncertain", status="answer") for k in range(3)]
    a = load_run(write_run(tmp_path / "A", rows, info=run_info("A")))
    b_rows = outcomes("cccc") + [sample(f"u{k}", verdict="correct", status="answer") for k in range(3)]
    b = load_run(write_run(tmp_path / "B", b_rows, info=run_info("B")))
    md = render_markdown([a, b], questions=False)
    header = next(line for line in md.splitlines() if line.startswith("| run | retriever / model"))
    assert "| accuracy (95% CI) | uncertain | answered |" in header, header
    assert "| A | agent / scripted | 7 | 28.6% [8.2, 64.1] | 3 |" in md
    assert "| B | agent / scripted | 7 | 100.0% [64.6, 100.0] | 0 |" in md
    assert "uncertain</th>" in render_html([a, b])
    # the pairs add up: 7 shared, 3 of them left out of the paired figures
    assert "7 shared samples (3 left out of the paired figures: uncertain on one side)" in md


def test_the_report_format_follows_the_out_suffix_and_an_unknown_suffix_is_refused(tmp_path: Path) -> None:
    """Trial 15: `bench report -o x.pdf` wrote HTML into a .pdf (and `-o x.md` HTML into a .md)."""
    run = write_run(tmp_path / "run", outcomes("ccic"), info=run_info("run"))
    runner = CliRunner()
    md = runner.invoke(app, ["bench", "report", str(run), "-o", str(tmp_path / "r.md")])
    assert md.exit_code == 0 and (tmp_path / "r.md").read_text().startswith("#")
    for args, words in (
        (["-o", str(tmp_path / "r.pdf")], "a report is HTML (.html) or Markdown (.md)"),
        (["-o", str(tmp_path / "r2.md"), "--format", "html"], "names a md file but --format is html"),
    ):
        res = runner.invoke(app, ["bench", "report", str(run), *args])
        assert res.exit_code == 2 and words in res.output, res.output
    assert not (tmp_path / "r.pdf").exists() and not (tmp_path / "r2.md").exists()


def test_markdown_report_shows_hostile_text_as_written_and_never_as_markup(tmp_path: Path) -> None:
    """Review 20: the Markdown report escaped only '|': a dataset's `<script>`, `<img onerror>`, `<b>`,
    `[link](url)`, backticks, `*emphasis*` and entities went into the pull request as markup, and a
    backslash before a pipe split its cell. Rendered (CommonMark with GFM tables, as GitHub reads it),
    every question, answer and id reads as written, in one cell, and no tag but the tables' own."""
    from markdown_it import MarkdownIt  # rich's Markdown parser: installed with rich

    hostile = [
        ("x_<script>alert(1)</script>",
         "What is <b>capex</b>? [link](http://e.invalid) `code` *em* _u_ ~~s~~",
         "$623 </textarea><img src=x onerror=alert(1)>"),
        ("p|ipe", "a \\| b | c &amp; &lt;i&gt; __init__ \\", "C:\\dir\\|x"),
    ]  # fmt: skip
    rows = []
    for qid, question, answer in hostile:
        s = sample(qid, "agent", "incorrect")
        s.question, s.answer = question, answer
        rows.append(s)
    run = load_run(write_run(tmp_path / "run", rows, info=run_info("run")))
    md = render_markdown([run])
    html = MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(md)
    structure = {"h1", "h2", "h3", "p", "table", "thead", "tbody", "tr", "th", "td"}
    assert set(re.findall(r"<(\w+)", html)) <= structure
    per_question = html.split("<h3>per question</h3>")[1]
    cells = [
        [unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        for row in re.findall(r"<tr>(.*?)</tr>", per_question.split("<tbody>")[1], re.S)
    ]
    assert [(c[0], c[5], c[6]) for c in cells] == [
        (qid, question, answer) for qid, question, answer in sorted(hostile)
    ]
    assert "| financebench_id_00476 |" in render_markdown(
        [load_run(write_run(tmp_path / "plain", [sample("financebench_id_00476")], info=run_info("plain")))]
    )  # an underscore inside a word is no markup: ids stay readable in the raw text


def test_the_report_warns_of_answers_without_a_verdict_as_summary_and_compare_do(tmp_path: Path) -> None:
    """Review 20: `bench summary` and `bench compare` warn that answers whose judge call failed count as
    not correct, with the command that judges them; the report, whose A-vs-B difference they move, said
    nothing of them (its only hint an `unjudged` column)."""
    rows = outcomes("cccc")
    rows[1] = sample("q001", verdict=None, status="answer", judge="judge_error", judge_error="timeout: judge")
    a = load_run(write_run(tmp_path / "A", outcomes("cccc"), info=run_info("A")))
    b = load_run(write_run(tmp_path / "B", rows, info=run_info("B")))
    said = (
        f"B: 1 answer without a verdict (a failed judge call) counts as not correct; judge them "
        f"again with: pageindex bench rejudge {b.path} --judge rules -o {b.path}-rejudged"
    )
    assert said.split(": ", 1)[1] in CliRunner().invoke(app, ["bench", "summary", str(b.path)]).output
    assert f"<li>{said}</li>" in render_html([b]) and f"<li>{said}</li>" in render_html([a, b])
    from bench.report.markdown import md_text

    assert md_text(said) in render_markdown([a, b]).split("\n## ")[0]
    assert "without a verdict" not in render_html([a])
    # the rows to look at: the filter that shows the unjudged answer says it does ("errors" alone did not)
    assert 'data-f="err" class="">errors, unusable replies or no verdict (1)</button>' in render_html([b])


def _runs_of_three_retrievers(tmp_path: Path, names: str, q002: str | None = None) -> list[Path]:
    """A run per letter of ``names``, each of agent, planner and extractive on three questions (correct,
    correct, incorrect); ``q002`` replaces the third question's text."""
    runs = []
    for name in names:
        rows = [s for r in ("agent", "planner", "extractive") for s in outcomes("cci", r)]
        for s in rows:
            s.question = q002 if q002 and s.question_id == "q002" else s.question
        runs.append(write_run(tmp_path / name, rows, info=run_info(name)))
    return runs


def test_questions_stay_readable_with_many_columns_and_a_long_question(tmp_path: Path) -> None:
    """Review 20: with 5 runs x 3 retrievers the questions table set no column widths and the question
    got 1/17 of it (a word per line); a 10,000-character question filled its row whole."""
    runs = _runs_of_three_retrievers(tmp_path, "VWXYZ", q002="Why " + "very " * 2000 + "long zebra?")
    out = _html_report(tmp_path, *runs)
    with Browser(tmp_path / "profile", width=1280, height=900) as page:
        page.open(out.as_uri())
        table = "document.querySelector('table.questions')"
        share = page.js(f"{table}.querySelector('th').offsetWidth / {table}.offsetWidth")
        assert share > 0.27, share
        assert page.js("document.querySelector('tr#q-q002').offsetHeight") < 200
        assert "…" in page.js("document.querySelector('tr#q-q002 td').innerText")
        page.js("const s = document.querySelector('#q-search'); s.value = 'zebra'; "
                "s.dispatchEvent(new Event('input'))")  # fmt: skip
        assert page.js(
            "Array.from(document.querySelectorAll('tr.q')).filter(r => !r.hidden).map(r => r.id)"
        ) == ["q-q002"]
        assert page.js("document.documentElement.scrollWidth") <= 1280


# every word of every verdict column's header: how many line boxes it takes (1: not split)
_HEADER_WORD_LINES = """
Array.from(document.querySelectorAll('table.questions th.cell')).flatMap(th => {
  const text = th.firstChild, out = [];
  for (const m of text.data.matchAll(/\\S+/g)) {
    const r = document.createRange(); r.setStart(text, m.index); r.setEnd(text, m.index + m[0].length);
    out.push([m[0], r.getClientRects().length]);
  }
  return out;
})
"""


@pytest.mark.parametrize("names", ["VWXYZ", "VW"])
def test_verdict_column_headers_never_split_a_word(tmp_path: Path, names: str) -> None:
    """Review rev-report: with 5 runs x 3 retrievers (15 columns of 4% each) the headers wrapped mid-word
    ("plann" / "er"); such narrow columns now turn their header upright. Two runs keep it level."""
    runs = _runs_of_three_retrievers(tmp_path, names)
    out = _html_report(tmp_path, *runs)
    with Browser(tmp_path / "profile", width=1280, height=900) as page:
        page.open(out.as_uri())
        words = page.js(_HEADER_WORD_LINES)
        assert len(words) == 2 * 3 * len(names), words  # "A agent", ... one header a run and retriever
        assert [w for w, lines in words if lines != 1] == []
        upright = page.js(
            "getComputedStyle(document.querySelector('table.questions th.cell')).writingMode"
        )
        assert upright == ("vertical-rl" if len(names) == 5 else "horizontal-tb")
        assert page.js("document.documentElement.scrollWidth") <= 1280


# every word of the A-vs-B tables' headers and retriever cells: how many line boxes it takes (1: not split)
_AB_WORD_LINES = """
Array.from(document.querySelectorAll('#ab table th, #ab table td:first-child')).flatMap(cell => {
  const text = cell.firstChild, out = [];
  for (const m of text.data.matchAll(/\\S+/g)) {
    const r = document.createRange(); r.setStart(text, m.index); r.setEnd(text, m.index + m[0].length);
    out.push([m[0], r.getClientRects().length]);
  }
  return out;
})
"""


def test_a_vs_b_headers_and_retrievers_never_split_a_word(tmp_path: Path) -> None:
    """Fresh-user trial 2026-11-27: three runs named as a user names them (ext_k1_long_name_baseline, ...)
    split the A-vs-B table's headers and retriever names mid-word ("retrieve" / "r", "pair" / "s",
    "extractiv" / "e"); the table now breaks them only between words, as the summary table does."""
    runs = []
    for name in ("ext_k1_long_name_baseline", "ext_k3_candidate_alternatives", "ext_k5_default"):
        rows = [s for r in ("agent", "planner", "extractive") for s in outcomes("cci", r)]
        runs.append(write_run(tmp_path / name, rows, info=run_info(name)))
    out = _html_report(tmp_path, *runs)
    with Browser(tmp_path / "profile", width=1280, height=900) as page:
        page.open(out.as_uri())
        words = page.js(_AB_WORD_LINES)
        assert "retriever" in [w for w, _ in words] and "extractive" in [w for w, _ in words], words
        assert [w for w, lines in words if lines != 1] == []
        assert page.js("document.documentElement.scrollWidth") <= 1280


# every word (a run of letters, digits, '_' or '.') of the summary tables' headers and name cells, and how
# many line boxes it takes (1: not split); a '/' or '-' between two such words is a place a name may break
_SUMMARY_WORD_LINES = """
Array.from(document.querySelectorAll(
  'table.summary th, table.summary:not(.multi) td:first-child, table.multi td:nth-child(-n+2)'
)).flatMap(cell => {
  const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT), out = [];
  for (let text = walker.nextNode(); text; text = walker.nextNode()) {
    for (const m of text.data.matchAll(/[\\w.]+/g)) {
      const r = document.createRange(); r.setStart(text, m.index); r.setEnd(text, m.index + m[0].length);
      out.push([m[0], r.getClientRects().length]);
    }
  }
  return out;
})
"""


@pytest.mark.parametrize("runs", [1, 2])
def test_summary_names_never_split_a_word_on_a_phone(tmp_path: Path, runs: int) -> None:
    """Fresh-user trial of session 26: at 390 px (a phone) the summary table split its retriever and model
    names mid-word, "extractiv" / "e" and "openai/ge" / "mma-3-270m", though the table sits in a scrolling
    box: its name cells could break anywhere, so the table shrank them rather than scroll."""
    paths = []
    for k in range(runs):
        rows = outcomes("cir", "bm25", model="openai/gemma-3-270m") + outcomes("cci", "extractive")
        paths.append(write_run(tmp_path / f"run{k}", rows, info=run_info(f"run{k}")))
    out = _html_report(tmp_path, *paths)
    with Browser(tmp_path / "profile", width=390, height=900) as page:
        page.open(out.as_uri())
        words = page.js(_SUMMARY_WORD_LINES)
        assert {"extractive", "gemma", "accuracy"} <= {w for w, _ in words}, words
        assert [w for w, lines in words if lines != 1] == []
        assert page.js("document.documentElement.scrollWidth") <= 390


# the question table's verdict headers and document cells as a reader sees them: each word's line boxes
_QUESTION_TABLE_WORDS = """
Array.from(document.querySelectorAll('table.questions th.cell, table.questions td.doc')).flatMap(cell => {
  const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT), out = [];
  for (let text = walker.nextNode(); text; text = walker.nextNode()) {
    for (const m of text.data.matchAll(/[\\w.]+/g)) {
      const r = document.createRange(); r.setStart(text, m.index); r.setEnd(text, m.index + m[0].length);
      const lines = r.getClientRects().length;
      if (lines) out.push([m[0], lines]);  // a hidden cell has no line box: it is not read
    }
  }
  return out;
})
"""


def test_the_question_table_reads_on_a_phone(tmp_path: Path) -> None:
    """Fresh-user trial of session 26: at 390 px the question table gave its document / type column and
    each verdict column 12% (about 27 px of text): "NORTHWIND_2023_10K" read "NO / RTH / WI / ND / _20 / ...",
    "metrics-generated" "met / rics / - / gen / era / ted" and the header "extractive" "ext / rac / tive". On
    a window that narrow the document and type go under the question and the verdict headers stand upright."""
    rows = _rows("cir", "bm25") + _rows("cci", "extractive")
    for s in rows:
        s.doc_id = "NORTHWIND_2023_10K"
    run = write_run(tmp_path / "r", rows, info=run_info("r"))
    out = _html_report(tmp_path, run)
    with Browser(tmp_path / "profile", width=390, height=900) as page:
        page.open(out.as_uri())
        words = page.js(_QUESTION_TABLE_WORDS)
        assert "extractive" in [w for w, _ in words], words
        assert [w for w, lines in words if lines != 1] == []
        first = page.js("document.querySelector('tr.q td').innerText")
        assert "NORTHWIND_2023_10K · metrics-generated" in first.replace("\n", ""), first
        assert page.js("document.documentElement.scrollWidth") <= 390
    with Browser(tmp_path / "profile2", width=1280, height=900) as page:  # wide: a column of its own
        page.open(out.as_uri())
        words = dict(page.js(_QUESTION_TABLE_WORDS))
        assert words["extractive"] == words["bm25"] == 1 and "NORTHWIND_2023_10K" in words, words
        assert "NORTHWIND" not in page.js("document.querySelector('tr.q td').innerText")


def test_an_unjudged_answers_card_says_why_its_judge_failed(tmp_path: Path) -> None:
    """Review 20: the card of an answer without a verdict said "Judge: judge_error" and nothing of the
    failure the run recorded (`judge_error`), which is what decides whether a rejudge can mend it."""
    rows = outcomes("cc")
    failed = "timeout: judge <b>x</b>"
    rows[1] = sample("q001", verdict=None, status="answer", judge="rules", judge_error=failed)
    run = write_run(tmp_path / "B", rows, info=run_info("B"))
    out = _html_report(tmp_path, run)
    with Browser(tmp_path / "profile", width=1280, height=900) as page:
        page.open(out.as_uri())
        page.js("document.querySelector('tr#q-q001').click()")
        page.wait_for("!!document.querySelector('tr#q-q001 + tr.detail-row .card')")
        card = page.js("document.querySelector('tr#q-q001 + tr.detail-row .card').innerText")
    assert "unjudged" in card and "Judge failed\ntimeout: judge <b>x</b>" in card


def test_a_cards_figures_say_one_call_in_the_singular(tmp_path: Path) -> None:
    """Fresh-user trial of session 26: a bm25 sample's card read "2,771 retriever tokens, 1 LLM calls";
    one call, iteration or tool call is now said in the singular, others as before."""
    rows = [
        sample("q000", "bm25", llm_calls=1, retriever_llm_calls=1, iterations=1, tool_calls=1),
        sample("q001", "bm25", llm_calls=3, retriever_llm_calls=2, iterations=0, tool_calls=2),
    ]
    run = write_run(tmp_path / "B", rows, info=run_info("B"))
    out = _html_report(tmp_path, run)
    figures = []
    with Browser(tmp_path / "profile", width=1280, height=900) as page:
        page.open(out.as_uri())
        for q in ("q000", "q001"):
            page.js(f"document.querySelector('tr#q-{q}').click()")
            page.wait_for(f"!!document.querySelector('tr#q-{q} + tr.detail-row .card')")
            card = page.js(f"document.querySelector('tr#q-{q} + tr.detail-row .card').innerText")
            figures.append(next(line for line in card.splitlines() if "retriever tokens" in line))
    assert ", 1 LLM call, 1 iteration, 1 tool call, " in figures[0], figures
    assert ", 3 LLM calls (1 of them the judge's), 0 iterations, 2 tool calls, " in figures[1], figures


def test_a_run_without_samples_draws_no_empty_charts(tmp_path: Path) -> None:
    """Review 20: a run with no samples got four empty charts with made-up axes (0%, 0%, 1%, 1%) and a
    summary row named "all"; beside a run with samples, that run's row looked like a group."""
    empty = load_run(write_run(tmp_path / "E", [], info=run_info("E")))
    html = render_html([empty])
    assert "<svg" not in html and "No samples: nothing to chart." in html
    assert "<td>(no samples)</td>" in html
    full = load_run(write_run(tmp_path / "F", outcomes("cci"), info=run_info("F")))
    both = render_html([full, empty])
    assert both.count('<figure class="chart">') == 4 and "<td>E</td>\n      <td>(no samples)</td>" in both
    assert "| E | (no samples) | 0 |" in render_markdown([full, empty])


def test_a_run_file_given_as_the_run_is_said_as_such_and_a_folder_out_names_a_report_file(
    tmp_path: Path,
) -> None:
    """Review 20: `bench report RUN/run.json` said "--out RUN/run.json/report.html: ... is a file, not a
    folder" (no --out was given: the default under the file was checked before the runs), and `-o
    FOLDER` suggested FOLDER/out, a name the report then refuses for its suffix."""
    run = write_run(tmp_path / "run", outcomes("cc"), info=run_info("run"))
    runner = CliRunner()
    res = runner.invoke(app, ["bench", "report", str(run / "run.json")])
    assert res.exit_code == 2 and res.output.startswith(f"error: {run / 'run.json'} is a file, not a run")
    assert "--out" not in res.output
    for args, name in (([], "report.html"), (["--format", "md"], "report.md")):
        res = runner.invoke(app, ["bench", "report", str(run), "-o", str(tmp_path), *args])
        assert res.exit_code == 2 and res.output.strip().endswith(f"(e.g. {tmp_path / name})"), res.output


def test_write_html_replaces_a_report_whole_or_not_at_all(tmp_path: Path, monkeypatch) -> None:
    """Review 20: `write_html` (the Python API) wrote in place: a failure while writing left a torn
    report where the earlier one was; `bench report` writes whole."""
    from bench.report import html as html_report

    run = load_run(write_run(tmp_path / "run", outcomes("cc"), info=run_info("run")))
    out = html_report.write_html([run], tmp_path / "r" / "report.html")
    before = out.read_text()
    assert before.startswith("<!DOCTYPE html>")

    def broken(runs, title=None):
        raise RuntimeError("render failed")

    monkeypatch.setattr(html_report, "render_html", broken)
    with pytest.raises(RuntimeError):
        html_report.write_html([run], out)
    assert out.read_text() == before
    real_replace = __import__("os").replace
    monkeypatch.setattr(html_report, "render_html", lambda runs, title=None: "<!DOCTYPE html>new")
    monkeypatch.setattr("os.replace", lambda *a: (_ for _ in ()).throw(OSError(28, "No space left")))
    with pytest.raises(OSError):
        html_report.write_html([run], out)
    monkeypatch.setattr("os.replace", real_replace)
    assert out.read_text() == before and [p.name for p in out.parent.iterdir()] == ["report.html"]


def test_question_ids_alike_once_made_row_ids_keep_rows_and_links_apart(tmp_path: Path) -> None:
    """Review 20: row ids keep letters, digits and -_. only, so `a|b` and `a_b` both had the row id
    `q-a_b`: two rows with one id, and the flip link of `a|b` opened `a_b`."""
    a = load_run(write_run(tmp_path / "A", [sample("a_b"), sample("a|b")], info=run_info("A")))
    b_rows = [sample("a_b"), sample("a|b", verdict="incorrect")]
    b = load_run(write_run(tmp_path / "B", b_rows, info=run_info("B")))
    page = render_html([a, b])
    ids = re.findall(r'<tr class="q" id="([^"]+)" data-qid="([^"]+)"', page)
    assert ids == [("q-a_b", "a_b"), ("q-a_b-2", "a|b")]
    assert re.findall(r'<a class="qid" href="#([^"]+)">([^<]+)</a>', page) == [("q-a_b-2", "a|b")]


def test_markdown_a_vs_b_says_what_only_one_run_has(tmp_path: Path) -> None:
    """Review 20: the Markdown A-vs-B section said "12 shared samples" of a run with 24 (its second
    repeats had no pair) without saying the rest were left out; the HTML and `bench compare` say it."""
    a_rows = [sample(f"q{k}", repeat=rep) for k in range(3) for rep in (0, 1)]
    a = load_run(write_run(tmp_path / "A", a_rows, info=run_info("A")))
    b = load_run(write_run(tmp_path / "B", [sample(f"q{k}") for k in range(4)], info=run_info("B")))
    md = render_markdown([a, b])
    assert "3 shared samples; only in A: 3, only in B: 1; paired bootstrap CI" in md


def test_a_run_given_twice_is_refused_as_compare_and_gate_refuse_it(tmp_path) -> None:
    """It was reported twice, the second labelled "(2)", every comparison between them empty."""
    from typer.testing import CliRunner

    from pageindex.cli import app
    from tests.bench.runfactory import outcomes, write_run

    run = write_run(tmp_path / "r", outcomes("ccic"))
    (tmp_path / "link").symlink_to(run)
    args = ["bench", "report", str(run), str(tmp_path / "link"), "-o", str(tmp_path / "x.md")]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2, res.output
    assert res.output.startswith(f"error: {run} and {tmp_path / 'link'} are the same run folder"), res.output
    assert not (tmp_path / "x.md").exists()


def test_a_report_says_an_old_run_is_compared_unchecked_as_compare_and_gate_do(tmp_path: Path) -> None:
    """Upgrade review: a run written by pageindex-bench b58837b (2026-11-23) records no judge version,
    tree builder version or dataset content hash. ``bench compare`` and ``bench gate`` warn that these are
    not checked; ``bench report OLD NEW`` showed the old run's 60% beside today's 30% with no such word
    (here the difference was a judge change). The report now warns as they do, once."""
    samples = [sample(f"q{k}", "agent", "correct" if k < 6 else "incorrect") for k in range(10)]
    old = write_run(tmp_path / "old", samples, info=run_info("old"))
    info = json.loads((old / "run.json").read_text())
    for key in ("format_version", "builder_version", "judge_version", "judge_code", "retriever_code"):
        info.pop(key, None)  # as the older install wrote run.json: no such keys
    info["dataset"].pop("content_sha256")
    (old / "run.json").write_text(json.dumps(info))
    new = write_run(
        tmp_path / "new", [sample(f"q{k}", "agent", "correct" if k < 3 else "incorrect") for k in range(10)]
    )
    res = CliRunner().invoke(app, ["bench", "report", str(old), str(new), "--format", "md", "-o", "-"])
    assert res.exit_code == 0, res.output
    warning = (
        "run old does not record its judge version, tree builder version, dataset content hash (written "
        "before provenance was recorded): not checked"
    )
    assert res.stdout.count(warning) == 1
    assert "| old | agent / scripted | 10 | 60.0% [31.3, 83.2] |" in res.stdout
    assert warning in render_html([load_run(new), load_run(old)])  # the old run second: still said


def test_a_fail_on_unusable_model_output_shows_its_error_kind_not_a_refusal(tmp_path: Path) -> None:
    """Session 26's fresh-user trial: a bm25 `fail` whose model reply never validated (`invalid_reply`)
    read as an "R refusal" badge and the "errors or no verdict" filter counted 0, so a broken model read
    as a refusing one. It shows its error kind (the summary counts it under failed, as before), and the
    filter finds it; a refusal the model chose is still a refusal."""
    rows = outcomes("crr")
    rows[1] = sample(
        "q001", verdict="refusal", status="fail", error_kind="invalid_reply",
        reason="the model's reply was unusable: openai/m: reply did not validate as AnswerWithSources",
    )
    run = load_run(write_run(tmp_path / "A", rows, info=run_info("A")))
    html = render_html([run])
    badges = [(v, unescape(t)) for v, t in re.findall(r'<span class="v v-([a-z_]+)" title="([^"]*)">', html)]
    assert ("refusal", "refusal") in badges  # q002, the model's own refusal
    assert [b for b in badges if b[0] != "refusal" and b[0] != "correct"] == [
        ("unusable", "invalid_reply: the model's reply was unusable (scored as a refusal)")
    ]
    assert 'data-f="err" class="">errors, unusable replies or no verdict (1)</button>' in html
    assert re.search(r'data-qid="q001" data-dis="0" data-flip="0" data-err="1"', html)
    cards = {s["verdict"] for q in _unpack(html)["questions"].values() for s in q["samples"]}
    assert cards == {"correct", "invalid_reply", "refusal"}
    assert "| q001 | agent | 0 | invalid_reply |" in render_markdown([run])
    summary = CliRunner().invoke(app, ["bench", "summary", str(run.path), "--json"]).output
    overall = json.loads(summary)["overall"]
    assert (overall["failed"], overall["refusals"], overall["errored"]) == (2, 2, 0)


def test_read_with_care_says_a_run_went_over_its_max_error_rate(tmp_path: Path) -> None:
    """Session 26's fresh-user trial: a run that ended `too many errors: 8 of 8 samples ... above
    --max-error-rate 0.2` (exit 4) got a report whose "Read with care" box said nothing of it. The box
    says it, with the rate the run's record keeps and the commonest kind; a run within its rate, or one
    whose record keeps no rate (written before it was stored), is not said to be over it."""
    rows = outcomes("ceee")
    for s in rows[1:]:
        s.error_kind, s.error = "timeout", "LLMTimeout: no reply within 20 s"
    over = load_run(write_run(tmp_path / "over", rows, info=run_info("over", extra={"config": {
        "max_error_rate": 0.2}})))
    said = (
        "over: 3 of 4 samples ended in error or a failed judge call (75%, above its --max-error-rate 0.2, "
        "where bench run exits 4); most often timeout in 3 samples, e.g. LLMTimeout: no reply within 20 s"
    )
    assert f"<li>{said}</li>" in render_html([over])
    from bench.report.markdown import md_text

    assert md_text(said) in render_markdown([over]).split("\n## ")[0]
    lenient = load_run(write_run(tmp_path / "lenient", rows, info=run_info("lenient", extra={"config": {
        "max_error_rate": 0.8}})))
    unknown = load_run(write_run(tmp_path / "unknown", rows, info=run_info("unknown")))
    for run in (lenient, unknown):
        assert "max-error-rate" not in render_html([run])
