"""What summary, gate, compare and the reports said untrue, misleading or unhelpful of real runs (review
rev-report, on FinanceBench and demo runs made with the scripted model and with llama.cpp's server):

- a run killed with SIGKILL keeps ``running`` in its run.json: ``bench summary`` printed
  ``status=running`` and the gate "is running" of a run no process was running; now the folder's hold
  (:class:`bench.rundir.FolderClaim`) tells a run still going from a killed one;
- ``bench summary`` of an unfinished run said neither how many of its samples it holds nor how to go on;
- a report of one unfinished run had no "Read with care" box (only a pair's differences gave one);
- two runs whose only difference was ``--opt extractive.top_k=1`` looked the same in compare and reports;
- the report's summary table had no failed/errored counts and no tool calls;
- compare and the gate named two runs of one id alike ("A = sInt  B = sInt");
- the gate's judged check said "0 of 0 answers have a verdict", a report card "0 retriever tokens, 3 LLM
  calls" of a retriever that calls no model (its judge's attempts), and the questions legend did not name
  the "not run" badge.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from typer.testing import CliRunner

from bench.compare import compare_runs
from bench.report.html import render_html
from bench.report.markdown import render_markdown
from bench.rundir import FolderClaim, folder_held, load_run
from bench.runinfo import DatasetInfo
from pageindex.cli import app
from tests.bench.runfactory import outcomes, run_info, write_run

runner = CliRunner()
KILLED = "running, but no process is running it (killed, or its machine stopped)"


def _listed(name: str, **fields) -> object:
    """A run.json that lists 5 questions x 1 retriever x 1 repeat (as a real run's does)."""
    dataset = DatasetInfo(
        name="handmade", path="/data/handmade", sha256="abc123", content_sha256="c0ffee", questions=5
    )
    return run_info(name, dataset=dataset, **fields)


def _invoke(*args: object):
    return runner.invoke(app, [str(a) for a in args], terminal_width=250)


def test_a_killed_run_is_said_killed_and_a_held_one_still_running(tmp_path: Path) -> None:
    run_dir = write_run(tmp_path / "k", outcomes("cc"), info=_listed("k", status="running"))
    assert folder_held(run_dir) is False
    run = load_run(run_dir)
    assert run.status_text() == KILLED
    assert run.unfinished_note() == (
        f"{KILLED} with 2 of 5 samples: the figures are of those only; "
        f"continue with: pageindex bench run --resume {run_dir}"
    )
    res = _invoke("bench", "summary", run_dir)
    assert res.exit_code == 0, res.output
    assert f"note: {KILLED} with 2 of 5 samples" in res.output
    gate = _invoke("bench", "gate", run_dir, "--min-accuracy", "0.5")
    assert gate.exit_code == 1
    assert (
        f"FAIL  complete [run]: k is {KILLED} with 2 of 5 samples; required: finished (--allow-partial "
        f"judges the samples it has); finish it with: pageindex bench run --resume {run_dir}"
    ) in gate.output

    claim = FolderClaim.take(run_dir)  # a bench run writing into it holds the folder so
    try:
        assert folder_held(run_dir) is True
        assert run.status_text() == "still running"
        assert run.continue_command() is None  # nothing to resume while it runs
        assert run.unfinished_note() == "still running with 2 of 5 samples: the figures are of those only"
        gate = _invoke("bench", "gate", run_dir, "--min-accuracy", "0.5")
        assert (
            "FAIL  complete [run]: k is still running with 2 of 5 samples; required: finished" in gate.output
        )
        assert "finish it with" not in gate.output
    finally:
        claim.release()
    assert folder_held(run_dir) is False  # the probe took nothing that outlives it


def test_summary_of_an_unfinished_run_says_how_many_samples_and_how_to_go_on(tmp_path: Path) -> None:
    budget = write_run(tmp_path / "b", outcomes("ci"), info=_listed("b", status="aborted_due_to_budget"))
    res = _invoke("bench", "summary", budget)
    assert res.exit_code == 0, res.output
    assert (
        "note: aborted_due_to_budget with 2 of 5 samples: the figures are of those only; continue with: "
        f"pageindex bench run --resume {budget} with a new --budget"
    ) in res.output
    done = write_run(tmp_path / "d", outcomes("ccccc"), info=_listed("d"))
    assert "note:" not in _invoke("bench", "summary", done).output
    assert load_run(done).unfinished_note() is None

    # a failed run's status_detail already gives the command: the note gives the count only
    detail = "the model endpoint stopped answering ...; once it answers, continue with: pageindex ..."
    failed = write_run(
        tmp_path / "f", outcomes("c"), info=_listed("f", status="failed", status_detail=detail)
    )
    out = _invoke("bench", "summary", failed).output
    assert "note: failed with 1 of 5 samples: the figures are of those only\n" in out
    assert f"failed: {detail}" in out

    # a finished rejudge keeps the status of the run it re-scored: no resume of it is offered
    rejudge = {
        "from_run": "b",
        "from_status": "interrupted",
        "ended_at": "2026-11-27T07:49:40+00:00",
        "command": ["pageindex", "bench", "rejudge", "b", "--judge", "rules", "-o", "b-rj"],
    }
    rj = load_run(
        write_run(
            tmp_path / "b-rj",
            outcomes("c"),
            info=_listed("b-rj", status="interrupted", extra={"rejudge": rejudge}),
        )
    )
    assert rj.unfinished_note() == (
        "interrupted (kept from b, the run it rejudged) with 1 of 5 samples: the figures are of those only"
    )
    # an interrupted rejudge is continued by its own command
    going = {**rejudge, "from_status": "finished"}
    rj2 = load_run(
        write_run(
            tmp_path / "b-rj2",
            outcomes("c"),
            info=_listed("b-rj2", status="interrupted", extra={"rejudge": going}),
        )
    )
    assert rj2.continue_command() == "pageindex bench rejudge b --judge rules -o b-rj --resume"


def test_a_report_of_one_unfinished_run_warns(tmp_path: Path) -> None:
    run = load_run(write_run(tmp_path / "i", outcomes("cc"), info=_listed("i", status="interrupted")))
    warning = "run i is interrupted, not finished (2 of 5 samples)"
    html = render_html([run])
    assert "Read with care" in html and warning in html
    assert f"> **Warning:** {warning}" in render_markdown([run])
    killed = load_run(write_run(tmp_path / "k", outcomes("cc"), info=_listed("k", status="running")))
    html = render_html([killed])
    assert f"<td>{KILLED}</td>" in html  # the runs table's status column too
    assert f"run k is {KILLED}, not finished (2 of 5 samples)" in html



def test_the_markdown_report_lists_several_warnings_one_item_each(tmp_path: Path) -> None:
    """Two unfinished runs: each warning is its own list item (they were one line joined by "; ")."""
    a = load_run(write_run(tmp_path / "i", outcomes("cc"), info=_listed("i", status="interrupted")))
    b = load_run(write_run(tmp_path / "j", outcomes("ci"), info=_listed("j", status="interrupted")))
    lines = render_markdown([a, b]).splitlines()
    start = lines.index("> **Read with care:**")
    items = [line for line in lines[start:] if line.startswith("> - ")]
    assert "> - run i is interrupted, not finished (2 of 5 samples)" in items
    assert "> - run j is interrupted, not finished (2 of 5 samples)" in items
    assert not any("; run " in line for line in lines)

def test_settings_that_differ_are_said_by_compare_and_the_reports(tmp_path: Path) -> None:
    a = write_run(
        tmp_path / "k5",
        outcomes("ccicc", "extractive"),
        info=run_info("k5", retrievers=["extractive"], retriever_options={"extractive": {}}),
    )
    b = write_run(
        tmp_path / "k1",
        outcomes("ciiic", "extractive"),
        info=run_info(
            "k1", retrievers=["extractive"], model="openai/m", retriever_options={"extractive": {"top_k": 1}}
        ),
    )
    expected = ["model: k5=scripted vs k1=openai/m", "extractive options: k5=defaults vs k1=top_k=1"]
    assert compare_runs(load_run(a), load_run(b)).settings == expected
    res = _invoke("bench", "compare", a, b)
    assert res.exit_code == 0, res.output
    assert f"settings that differ: {'; '.join(expected)}" in res.output
    runs = [load_run(a), load_run(b)]
    html = render_html(runs)
    assert "<td>extractive.top_k=1</td>" in html  # the runs table's options column
    assert "Settings that differ: model: k5=scripted vs k1=openai/m; extractive options" in html
    md = render_markdown(runs)
    assert "Settings that differ: model: k5=scripted vs k1=openai/m; extractive options" in md
    assert "judge rules, options extractive.top_k=1, 5 samples" in md
    same = compare_runs(load_run(a), load_run(a))
    assert same.settings == []
    replay = write_run(tmp_path / "ci", outcomes("ciiic", "extractive"),
                       info=run_info("ci", retrievers=["extractive"], model="replay/m",
                                     retriever_options={"extractive": {"top_k": 1}}))  # fmt: skip
    assert compare_runs(load_run(b), load_run(replay)).settings == []  # replay/m answers as openai/m


def test_the_report_summary_counts_fails_and_errors_and_tool_calls(tmp_path: Path) -> None:
    run = load_run(write_run(tmp_path / "r", outcomes("cree", tool_calls=3)))
    md = render_markdown([run, run.model_copy(update={"info": run.info.model_copy(update={"run_id": "r2"})})])
    header = next(line for line in md.splitlines() if line.startswith("| run | retriever / model"))
    assert "tool calls (mean)" in header and header.rstrip(" |").endswith("dropped / failed / errored")
    row = next(line for line in md.splitlines() if line.startswith("| r | agent / scripted |"))
    assert row.endswith("| 3.0 | $0.0040 | 25.0% | 0/1/2 |"), row


def test_print_summary_puts_the_note_under_the_head_line(tmp_path: Path) -> None:
    from bench.summary import print_summary

    run = load_run(write_run(tmp_path / "i", outcomes("cc"), info=_listed("i", status="interrupted")))
    console = Console(record=True, width=250)
    print_summary(run.summary, console, unfinished=run.unfinished_note())
    lines = console.export_text().splitlines()
    assert lines[0].startswith("i  status=interrupted")
    assert lines[1].startswith(
        "note: interrupted with 2 of 5 samples: the figures are of those only; continue"
    )


def test_the_questions_legend_names_the_not_run_badge_where_one_shows(tmp_path: Path) -> None:
    """A question one run did not ask (``--limit 20`` against ``--limit 30``) shows a grey "·" that the
    legend did not name."""
    short = load_run(write_run(tmp_path / "s", outcomes("cc"), info=run_info("s")))
    long = load_run(write_run(tmp_path / "l", outcomes("ccc"), info=run_info("l")))
    assert 'v-none">·</span> not run; one badge per repeat' in render_html([short, long])
    assert "not run; one badge" not in render_html([short, short.model_copy(update={"path": tmp_path})])


def test_the_judged_check_of_a_retriever_with_no_answer_says_so(tmp_path: Path) -> None:
    """llama.cpp's gemma-3-270m: every planner sample gave up or timed out; the line read "0 of 0 answers
    have a verdict", as if something had been checked."""
    run_dir = write_run(tmp_path / "r", outcomes("rre"))
    res = _invoke("bench", "gate", run_dir, "--min-accuracy", "0")
    assert "PASS  judged [agent]: no answer to judge (none of 3 samples answered)" in res.output


def test_compare_and_gate_name_two_runs_of_one_id_by_their_folders(tmp_path: Path) -> None:
    """A copy of a run taken while it was interrupted, against the run resumed: both are "sInt". Compare
    printed "A = sInt  B = sInt" and the gate "run sInt has 2 samples that baseline sInt lacks"; they are
    named by their folders now, as the reports (and the README) name them."""
    from bench.gate import GateRules, evaluate_gate, write_junit

    before = write_run(tmp_path / "before", outcomes("cc"), info=_listed("sInt", status="interrupted"))
    after = write_run(tmp_path / "after", outcomes("ccic"), info=_listed("sInt"))
    cmp = compare_runs(load_run(before), load_run(after))
    assert (cmp.run_a, cmp.run_b) == (str(before), str(after))
    assert f"run {before} is interrupted, not finished (2 of 5 samples)" in cmp.warnings
    res = _invoke("bench", "compare", before, after)
    assert res.exit_code == 0 and "A = sInt  B = sInt" not in res.output, res.output
    gate = evaluate_gate(load_run(after), GateRules(allow_partial=True), load_run(before))
    assert f"run {after} has 2 samples of retriever 'agent' that baseline {before} lacks" in " ".join(
        gate.warnings
    )
    write_junit(tmp_path / "g.xml", gate)
    assert 'classname="gate.sInt"' in (tmp_path / "g.xml").read_text()  # the run's own id there


def test_a_cards_llm_calls_say_how_many_were_the_judges(tmp_path: Path) -> None:
    """extractive calls no model; with an LLM judge that needed three attempts its card read "0 retriever
    tokens, 3 LLM calls". The card says how many of the calls were the judge's."""
    from bench.report.html import JS, question_rows

    judged = outcomes("c", "extractive", llm_calls=3, retriever_llm_calls=0, retriever_prompt_tokens=0)
    old = outcomes("c", "agent", llm_calls=2, retriever_llm_calls=None)  # recorded before the split was kept
    _, _, data = question_rows([load_run(write_run(tmp_path / "r", judged + old))], set())
    cards = {s["col"]: s for s in data["questions"]["q000"]["samples"]}
    assert [cards[0]["jc"], cards[1]["jc"]] == [None, 3]  # columns in retriever order: agent, extractive
    assert "of them the judge" in JS


def test_the_reports_table_keeps_every_summary_column_it_names(tmp_path) -> None:
    """The combined table names the summary's columns by their headers: a header renamed in one place
    (the summary's 'cost' became 'cost total', the group's total beside per-question means) left a column
    of '-' in every report."""
    from bench.report.ab import SUMMARY_COLUMNS, combined_rows
    from bench.rundir import load_run
    from tests.bench.runfactory import sample, write_run

    run = load_run(write_run(tmp_path / "r", [sample("q1"), sample("q2", verdict="incorrect")]))
    (row,) = combined_rows([run])
    assert row["cost (total)"] == "$0.0020" and row["tokens/q (mean)"] == "1,100"
    assert all(row[name] != "-" for name in SUMMARY_COLUMNS.values()), row
