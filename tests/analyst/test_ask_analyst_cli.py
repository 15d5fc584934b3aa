"""``pageindex ask`` in analyst mode: saved and reopened sessions, several filings, not-found."""

from __future__ import annotations

import json
import os
from pathlib import Path

from typer.testing import CliRunner

from pageindex.cli import app
from pageindex.tree.combine import combine_trees
from tests.analyst.conftest import POLICIES
from tests.analyst.policies import CAPEX_Q, COMPARE_Q, FOLLOWUP_Q, MISSING_Q

runner = CliRunner()
SCRIPTED = ["-m", "scripted", "--scripted-policy", f"{POLICIES}:analyst_policy"]


def ask(*args: str):
    return runner.invoke(app, ["ask", *args, *SCRIPTED], catch_exceptions=False, env={"COLUMNS": "200"})


def test_saved_session_is_reopened_by_name(fb_pdf, analyst_tree):
    analyst_tree("3M_2018_10K")  # tree in the shared cache
    pdf = str(fb_pdf("3M_2018_10K"))
    first = ask(pdf, CAPEX_Q, "--session", "q4-review", "--json")
    assert first.exit_code == 0, first.output
    data = json.loads(first.stdout)
    assert data["retriever"] == "iterative" and data["extra"]["session_use"]["mode"] == "cold"
    path = Path(os.environ["PAGEINDEX_CACHE_DIR"]) / "sessions" / "q4-review.json"
    saved = json.loads(path.read_text())
    assert [t["question"] for t in saved["turns"]] == [CAPEX_Q]
    assert [s["node_id"] for s in saved["sections"]] == ["item_8/cash_flows"]

    second = ask(pdf, FOLLOWUP_Q, "--session", "q4-review")  # a new process would see the same file
    assert second.exit_code == 0, second.output
    assert "session q4-review: reopened (1 question, 2 findings, 1 section read)" in second.output
    assert "answer (session, session_answer_v1)" in second.output
    assert (
        "[1] item_8/cash_flows Consolidated Statement of Cash Flows · PDF page 60, printed 60 · "
        '"(1,577)" · verified' in second.output
    )
    assert "From the session: 3 cache hits (2 findings, 1 section already read)" in second.output
    assert len(json.loads(path.read_text())["turns"]) == 2

    saved = json.loads(path.read_text())
    saved["last_used_at"] -= 3 * 3600  # three idle hours
    path.write_text(json.dumps(saved))
    third = ask(pdf, FOLLOWUP_Q, "--session", "q4-review", "--session-ttl", "120")
    assert third.exit_code == 0, third.output
    assert "expired after 180 idle minutes" in third.output and "answer (iterative" in third.output

    bad = ask(pdf, CAPEX_Q, "--session", "../escape")
    assert bad.exit_code == 2 and "session name '../escape'" in bad.output
    empty = ask(pdf, CAPEX_Q, "--session", "")  # was taken as no session, in silence
    assert empty.exit_code == 2 and "error: --session: session name '' must be" in empty.output


def test_two_filings_citations_name_their_document(fb_pdf, analyst_tree):
    a, b = analyst_tree("3M_2018_10K"), analyst_tree("AMCOR_2023Q4_EARNINGS")
    combined = combine_trees([a, b])
    assert combined.get("AMCOR_2023Q4_EARNINGS:cash_flows").start_page == a.page_count + 9
    assert combined.page_text(a.page_count + 9) == b.page_text(9)
    assert combined.page_label(a.page_count + 9) == "9" and combined.locate(a.page_count + 9) == (
        "AMCOR_2023Q4_EARNINGS",
        9,
    )
    assert combined.global_page("3M_2018_10K", 60) == 60 and "3M_2018_10K:item_8/cash_flows" in combined

    out = ask(str(fb_pdf("3M_2018_10K")), str(fb_pdf("AMCOR_2023Q4_EARNINGS")), COMPARE_Q, "--json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["status"] == "answer"
    assert [
        (s["doc_id"], s["node_id"], s["page"], s["page_label"], s["quote"], s["verified"])
        for s in data["sources"]
    ] == [
        ("3M_2018_10K", "item_8/cash_flows", 60, "60", "(1,577)", True),
        ("AMCOR_2023Q4_EARNINGS", "cash_flows", 9, "9", "(527)", True),
    ]
    assert data["extra"]["pages_by_doc"] == {"3M_2018_10K": [60], "AMCOR_2023Q4_EARNINGS": [9]}

    text = ask(str(fb_pdf("3M_2018_10K")), str(fb_pdf("AMCOR_2023Q4_EARNINGS")), COMPARE_Q).output
    assert (
        "[2] AMCOR_2023Q4_EARNINGS · cash_flows GAAP Statement of Cash Flows · PDF page 9, printed 9" in text
    )


def test_not_found_says_what_was_searched(fb_pdf, analyst_tree):
    analyst_tree("3M_2018_10K")
    out = ask(str(fb_pdf("3M_2018_10K")), MISSING_Q)
    assert out.exit_code == 0, out.output
    assert "Not found in this filing." in out.output
    assert "Searched: sections item_1a · pages 10, 11" in out.output
    assert "Citations" not in out.output


def test_bad_input(fb_pdf, tmp_path):
    out = ask("notes.txt", "q")
    assert out.exit_code == 2 and "notes.txt: not a PDF or tree JSON" in out.output
    out = ask(str(fb_pdf("3M_2018_10K")), str(fb_pdf("3M_2018_10K")), "q")
    assert out.exit_code == 2 and "3M_2018_10K.pdf is given twice" in out.output
    assert "Traceback" not in out.output
    wrong = tmp_path / "wrong.json"
    wrong.write_text('{"a": 1}')
    out = ask(str(wrong), "q")  # the same line as `pageindex tree wrong.json`: never a pydantic dump
    assert out.exit_code == 2
    assert out.output.strip() == f"error: {wrong}: not a tree JSON (doc_id: Field required)"
    # numbers out of range are said as `bench run` says them (trial 12: "must be > 0, got 0")
    pdf = str(fb_pdf("3M_2018_10K"))
    for option, value, least in (
        ("--concurrency", "0", 1),
        ("--context-window", "0", 1),
        ("--max-retries", "-1", 0),
    ):
        out = ask(pdf, "q", option, value)
        assert (
            out.exit_code == 2 and out.output.strip() == f"error: {option} {value}: must be at least {least}"
        )


def test_one_filing_by_two_names_is_refused(fb_pdf, analyst_tree, tmp_path):
    """A filing and a link to it (or a copy) under another name were two filings in one index: every
    page twice, each question's citations split between two names of one document."""
    analyst_tree("3M_2018_10K")
    pdf = fb_pdf("3M_2018_10K")
    link = tmp_path / "3m annual [2018].pdf"
    link.symlink_to(pdf)
    copy = tmp_path / "3m-copy.pdf"
    copy.write_bytes(pdf.read_bytes())
    for other in (link, copy):
        out = ask(str(pdf), str(other), CAPEX_Q, "-r", "extractive")
        assert out.exit_code == 2
        assert out.output.strip() == f"error: {pdf} and {other} are one filing, given twice"


def test_a_question_ending_in_pdf_is_said_to_be_read_as_a_filing(fb_pdf, analyst_tree):
    """A question whose last word ends in .pdf is taken for a filing; it was 'file not found' with the
    question as the file's name, and nothing said why."""
    analyst_tree("3M_2018_10K")
    pdf = str(fb_pdf("3M_2018_10K"))
    out = ask(pdf, "What is in exhibit.pdf", "-r", "extractive")
    assert out.exit_code == 2
    assert out.output.strip() == (
        "error: What is in exhibit.pdf: file not found (an argument ending in .pdf is read as a filing; a "
        "question that ends so must end otherwise, e.g. with '?')"
    )
    out = ask(pdf, "missing.pdf", "-r", "extractive")  # one word: a file name, as before
    assert out.exit_code == 2 and out.output.strip() == "error: missing.pdf: file not found"


def test_a_retriever_that_needs_no_model_resolves_and_calls_none(fb_pdf, analyst_tree, monkeypatch):
    """``-r extractive`` with PAGEINDEX_MODEL set (no key for it, or a server that must not be
    asked): it answers without resolving, preflighting or calling the model; it used to demand
    the model's key (exit 2) or its preflight. A follow-up in a saved session is answered without
    the model-backed ``session`` retriever."""
    from pageindex.llm.testing import FakeOpenAIServer

    analyst_tree("3M_2018_10K")
    pdf = str(fb_pdf("3M_2018_10K"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    base = ["ask", pdf, CAPEX_Q, "-r", "extractive", "--json"]
    unkeyed = runner.invoke(app, base, env={"PAGEINDEX_MODEL": "openai/gpt-4o-mini"}, catch_exceptions=False)
    assert unkeyed.exit_code == 0, unkeyed.output
    data = json.loads(unkeyed.stdout)
    assert (data["retriever"], data["status"], data["usage"]["llm_calls"]) == ("extractive", "answer", 0)
    assert (data["sources"][0]["quote"], data["sources"][0]["verified"]) == ("(1,577)", True)

    with FakeOpenAIServer() as server:  # a reachable model that must not be asked
        env = {"PAGEINDEX_MODEL": "openai/x", "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-x"}
        first = runner.invoke(app, [*base, "--session", "ex"], env=env, catch_exceptions=False)
        follow = runner.invoke(
            app, ["ask", pdf, FOLLOWUP_Q, "-r", "extractive", "--session", "ex", "-m", "openai/y"], env=env
        )
    assert first.exit_code == 0, first.output
    assert follow.exit_code == 0, follow.output
    # said as bench run says an unused model: a note naming the option first (fresh-user trial)
    assert "note: --model openai/y is not used: extractive calls no model" in follow.output
    assert "answer (extractive, no prompt)" in follow.output and "needs a model" not in follow.output
    assert server.exchanges == []  # no preflight, no chat


def test_a_blank_question_or_an_evidence_page_off_the_filing_is_refused(fb_pdf, analyst_tree):
    """An empty QUESTION used to open the interactive session (waiting on stdin in a script), and
    --evidence-page 0, -3 or 999 on a 160-page filing gave an oracle with no evidence (exit 4)."""
    pdf = str(fb_pdf("3M_2018_10K"))
    out = runner.invoke(app, ["ask", pdf, "  ", "-r", "extractive"])
    assert out.exit_code == 2
    assert out.output.strip() == (
        "error: the question is empty; give a question, or none at all for an interactive session"
    )
    for page in ("0", "-3", "999"):
        out = ask(pdf, "What was capex?", "-r", "oracle", "--evidence-page", page)
        assert out.exit_code == 2, out.output
        assert out.output.strip() == f"error: --evidence-page {page}: the filing's pages are 1-160"


def test_a_session_file_that_cannot_be_read_is_refused_not_replaced(fb_pdf, analyst_tree):
    """A torn session file was started afresh with no word, and the answers it held were saved over."""
    analyst_tree("3M_2018_10K")
    pdf = str(fb_pdf("3M_2018_10K"))
    assert ask(pdf, CAPEX_Q, "--session", "torn", "-r", "extractive").exit_code == 0
    path = Path(os.environ["PAGEINDEX_CACHE_DIR"]) / "sessions" / "torn.json"
    torn = path.read_text()[:200]
    path.write_text(torn)
    out = ask(pdf, FOLLOWUP_Q, "--session", "torn", "-r", "extractive")
    assert out.exit_code == 2
    assert out.output.startswith("error: session 'torn' cannot be read (not JSON: ")
    assert out.output.strip().endswith(f"give another --session name, or move {path} away to start it afresh")
    assert len(out.output.strip().splitlines()) == 1 and path.read_text() == torn


def test_a_session_open_in_another_process_is_refused_before_any_work(fb_pdf, analyst_tree):
    """Two asks with one --session each saved what they had read: the last to save replaced the other's
    answers (two interactive sessions of one name: the first one's questions were gone)."""
    import fcntl

    analyst_tree("3M_2018_10K")
    pdf = str(fb_pdf("3M_2018_10K"))
    folder = Path(os.environ["PAGEINDEX_CACHE_DIR"]) / "sessions"
    folder.mkdir()
    with (folder / "busy.lock").open("a+") as other:  # another process holds it
        other.write("4242")
        other.flush()
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        out = ask(pdf, CAPEX_Q, "--session", "busy", "-r", "extractive")
    assert out.exit_code == 2 and not (folder / "busy.json").exists()
    assert out.output.strip() == (
        "error: session 'busy' is open in another pageindex ask (process 4242): give another --session "
        "name, or end that one first"
    )
    assert ask(pdf, CAPEX_Q, "--session", "busy", "-r", "extractive").exit_code == 0  # that one ended


def test_a_question_longer_than_a_file_name_is_asked(fb_pdf, analyst_tree):
    """ask tells the filings from the question by asking whether each argument is a file: a question
    of more than 255 bytes without a '/' (a file name's limit) made that raise, and ask ended in
    'error: internal error: OSError: [Errno 36] File name too long: ...' with the question in it."""
    analyst_tree("3M_2018_10K")
    question = "Considering the statement of cash flows and the notes on property, plant and equipment, " * 4
    assert len(question.encode()) > 255 and "/" not in question
    out = ask(str(fb_pdf("3M_2018_10K")), question, "-r", "extractive", "--json")
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["query"] == question.strip()


def test_a_reopened_session_shows_the_last_saved_answers_sources(fb_pdf, analyst_tree):
    """/sources and /trace before any question of this sitting: the session's last turn (trial 2)."""
    analyst_tree("3M_2018_10K")
    pdf = str(fb_pdf("3M_2018_10K"))
    assert ask(pdf, CAPEX_Q, "--session", "reopened").exit_code == 0
    out = runner.invoke(
        app, ["ask", pdf, "--session", "reopened", *SCRIPTED], input="/sources\n/trace\n/quit\n",
        env={"COLUMNS": "200"}, catch_exceptions=False,
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    assert "No answer yet." not in out.output
    cited = "[1] item_8/cash_flows Consolidated Statement of Cash Flows · PDF page 60, printed 60"
    assert cited in out.output
    assert "The last answer (question 1) was given before this session was reopened" in out.output


def test_a_question_past_its_time_limit_is_an_error_of_kind_time_limit(fb_pdf, analyst_tree):
    """``ask --time-limit S`` bounds one question's whole retrieval as ``bench run --time-limit`` bounds
    a sample (session 11 left ask with step limits only): exit 4, the answer an error of kind time_limit."""
    import asyncio
    import time

    from pageindex.retrievers import register_retriever

    @register_retriever("test_ask_slow", needs_llm=False)
    async def slow(run, opts):
        run.show_pages([60])
        await asyncio.sleep(30)
        return run.result("answer", answer="too late")  # pragma: no cover

    analyst_tree("3M_2018_10K")
    started = time.monotonic()
    out = ask(str(fb_pdf("3M_2018_10K")), CAPEX_Q, "-r", "test_ask_slow", "--time-limit", "0.5", "--json")
    assert time.monotonic() - started < 15  # not the retriever's 30 s
    assert out.exit_code == 4, out.output
    data = json.loads(out.stdout)
    assert (data["status"], data["error_kind"]) == ("error", "time_limit")
    assert "within its time limit of 0.5s" in data["error"]
    bad = ask(str(fb_pdf("3M_2018_10K")), CAPEX_Q, "--time-limit", "0")
    assert bad.exit_code == 2 and "--time-limit" in bad.output


def test_a_model_the_server_does_not_list_is_said_before_any_work(tmp_path):
    """Review: a llama.cpp server answers any model name with the one it serves, so a mistyped
    ``-m openai/gemma-9b`` was answered by gemma-3-270m in silence (the doctor said 'not listed')."""
    from bench.faults import FaultServer
    from bench.faults.competent import CompetentPolicy
    from tests.tree.pdf_factory import make_pdf

    pdf = make_pdf(
        tmp_path / "acme.pdf",
        [["ACME Corp Annual Report"], ["Item 7. Results", "Revenue was $120 million in 2023."]],
        bold_first=True,
    )
    with FaultServer(CompetentPolicy()) as srv:
        args = ["ask", str(pdf), "What was revenue in 2023?", "-r", "planner", "--base-url", srv.base_url]
        typo = runner.invoke(app, [*args, "-m", "openai/fault-modle"], env={"COLUMNS": "200"})
        listed = runner.invoke(app, [*args, "-m", "openai/fault-model"], env={"COLUMNS": "200"})
    assert typo.exit_code == 0, typo.output
    assert (
        f"warning: fault-modle is not among the models {srv.base_url} lists (fault-model): the server "
        "answered a one-token request for it, perhaps with another model"
    ) in typo.output
    assert listed.exit_code == 0 and "warning:" not in listed.output


def test_a_bad_model_in_the_variable_is_said_as_the_variable(fb_pdf, analyst_tree, monkeypatch):
    """A bad ``$PAGEINDEX_MODEL`` was said as a bad spec the user never typed: the line now names the
    variable; without a model, the line says both ways to give one."""
    args = ["ask", str(fb_pdf("3M_2018_10K")), CAPEX_Q, "-r", "planner"]
    monkeypatch.setenv("PAGEINDEX_MODEL", "bad model!")
    out = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert out.exit_code == 2
    assert out.output.strip().startswith("error: $PAGEINDEX_MODEL: bad model spec 'bad model!'"), out.output
    monkeypatch.setenv("PAGEINDEX_MODEL", "")
    out = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert out.exit_code == 2 and out.output.strip() == (
        "error: retriever 'planner' needs a model: pass --model (e.g. openai/gpt-4o-mini) or set "
        "$PAGEINDEX_MODEL"
    ), out.output


def test_a_session_that_cannot_be_saved_is_a_warning_and_the_answer_stands(fb_pdf, analyst_tree, monkeypatch):
    """Review faults: with the sessions folder unwritable (a full disk, a cache folder that is a file)
    the answer was printed and the failure said as a bare yellow line, without ``warning:``."""
    import errno

    from pageindex.analyst.store import SessionStore

    def full(self, session):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(SessionStore, "save", full)
    analyst_tree("3M_2018_10K")
    out = ask(str(fb_pdf("3M_2018_10K")), CAPEX_Q, "--session", "full", "-r", "extractive")
    assert out.exit_code == 0, out.output
    assert "(1,577)" in out.stdout
    said = "warning: could not save session full (No space left on device): the answer is not in it"
    assert said in out.output


def test_a_not_found_that_searched_nothing_says_so_in_words() -> None:
    """Trial 25: the extractive baseline, asked about words no page of the filing has, said "no row or
    sentence on the top pages matches" and "Searched: sections none · pages none": it had no top pages,
    and read nothing. A search that read pages and no section names only the pages."""
    pdf = str(Path(__file__).parents[2] / "datasets" / "demo" / "pdfs" / "NORTHWIND_2023_10K.pdf")

    def said(question: str) -> list[str]:
        out = runner.invoke(app, ["ask", pdf, question, "-r", "extractive"], env={"COLUMNS": "200"})
        assert out.exit_code == 0, out.output
        return out.output.splitlines()[:3]

    assert said("What is the CEO's favourite colour?") == [
        "Not found in this filing.",
        "no page of the filing has a word of the question, so no page was searched",
        "Searched: nothing (no section or page was read)",
    ]
    assert said("what in 2023?") == [
        "Not found in this filing.",
        "no row or sentence on the 5 pages searched matches the question",
        "Searched: pages 6, 8, 12, 13, 14",
    ]
