"""``pageindex ask`` with the scripted model (policy loaded from tests/retrievers/policies.py)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from pageindex.cli import app
from tests.retrievers.policies import CAPEX_Q

POLICIES = Path(__file__).with_name("policies.py")
runner = CliRunner()


def ask(*args: str):
    return runner.invoke(app, ["ask", *args], catch_exceptions=False)


def test_ask_prints_answer_sources_and_summary(fb_pdf):
    pdf = str(fb_pdf("3M_2018_10K"))
    out = ask(
        pdf,
        CAPEX_Q,
        "--retriever",
        "iterative",
        "--model",
        "scripted",
        "--scripted-policy",
        f"{POLICIES}:iterative_capex_policy",
        "--trace",
    )
    assert out.exit_code == 0, out.output
    text = out.output
    assert "answer" in text and "$1,577 million" in text
    # numbered citation: section, PDF page, printed page, quote, verified on the page
    assert '[1] item_8/cash_flows' in text and "PDF page 60, printed 60" in text
    assert '"(1,577)" · verified' in text
    assert "iterations 1" in text and "tool calls 1" in text and "pages [60]" in text
    assert "synthesis -> answer" in text  # --trace lines


def test_ask_json_is_the_whole_result(fb_pdf):
    pdf = str(fb_pdf("3M_2018_10K"))
    out = ask(
        pdf,
        CAPEX_Q,
        "-r",
        "agent",
        "-m",
        "scripted",
        "--json",
        "--opt",
        "max_turns=3",
        "--scripted-policy",
        f"{POLICIES}:agent_capex_policy",
    )
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["status"] == "answer" and data["retriever"] == "agent"
    assert data["options"]["max_turns"] == 3 and data["pages_fetched"] == [60]
    assert data["sources"][0]["verified"] is True and data["usage"]["llm_calls"] == 2


def test_ask_bad_input_is_one_clear_line(fb_pdf, tmp_path):
    pdf = str(fb_pdf("3M_2018_10K"))
    out = ask(
        pdf,
        "q",
        "-r",
        "agent",
        "-m",
        "scripted",
        "--opt",
        "max_turnz=3",
        "--scripted-policy",
        f"{POLICIES}:agent_capex_policy",
    )
    assert out.exit_code == 2 and "unknown option 'max_turnz'" in out.output
    out = ask(pdf, "q", "-r", "nope", "-m", "scripted")
    assert out.exit_code == 2 and "unknown retriever 'nope'" in out.output
    out = ask(pdf, "q", "-r", "agent", "-m", "scripted")
    assert out.exit_code == 2 and "--scripted-policy" in out.output
    out = ask(str(tmp_path / "missing.pdf"), "q", "-r", "agent", "-m", "scripted")
    assert out.exit_code == 2 and "missing.pdf" in out.output
    assert "Traceback" not in out.output


def test_retrievers_lists_names_and_option_defaults():
    out = runner.invoke(app, ["retrievers"], env={"COLUMNS": "200"})
    assert out.exit_code == 0, out.output
    assert "agent" in out.output and "iterative" in out.output
    assert "max_turns (12)" in out.output and "max_iterations (4)" in out.output


def test_ask_exits_4_and_says_why_when_the_models_output_is_unusable(fb_pdf):
    out = ask(
        str(fb_pdf("3M_2018_10K")), CAPEX_Q, "-r", "oracle", "--evidence-page", "60",
        "-m", "scripted", "--scripted-policy", f"{POLICIES}:never_valid_policy",
    )  # fmt: skip
    assert out.exit_code == 4, out.output
    last = out.output.strip().splitlines()[-1]
    assert last.startswith("error: the model's output was unusable (invalid_reply)")
    assert "Traceback" not in out.output
    # trial 14: the same answer said "Not found in this filing." above its error line
    assert "Not found" not in out.output
    assert "No usable answer: the model's output was unusable (invalid_reply)." in out.output
    # the agent too: prose on every turn read nothing, which was "Not found in this filing.", exit 0; and
    # the planner: a plan rejected in every round ran no task (exit 0 before, as if searched)
    for retriever, option in (("agent", "max_turns=2"), ("planner", "max_replans=1")):
        out = ask(
            str(fb_pdf("3M_2018_10K")), CAPEX_Q, "-r", retriever, "--opt", option,
            "-m", "scripted", "--scripted-policy", f"{POLICIES}:never_valid_policy",
        )  # fmt: skip
        assert out.exit_code == 4, (retriever, out.output)
        assert "Not found" not in out.output
        assert "No usable answer: the model's output was unusable (invalid_reply)." in out.output


def test_ask_names_the_files_that_share_a_name_and_the_links_that_lead_nowhere(tmp_path):
    """Two filings named alike in two folders were "documents must be distinct, got ['x', 'x']" (they
    are distinct: it is their names that are not), one given twice the same; a link to a moved filing
    was "file not found", where build says where it points."""
    from tests.tree.pdf_factory import make_pdf

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = make_pdf(tmp_path / "a" / "x.pdf", [["Item 1. Business", "Revenue was 10."]])
    second = make_pdf(tmp_path / "b" / "x.pdf", [["Item 1. Business", "Revenue was 20."]])
    out = ask(str(first), str(second), "Revenue?", "-r", "extractive")
    assert out.exit_code == 2
    assert out.output == (
        f"error: {first} and {second} are both named x: ask tells filings apart by their file names; "
        "give one of them another name\n"
    )
    out = ask(str(first), str(first), "Revenue?", "-r", "extractive")
    assert out.exit_code == 2 and out.output == f"error: {first} is given twice\n"
    moved = tmp_path / "moved.pdf"
    (tmp_path / "link.pdf").symlink_to(moved)
    out = ask(str(tmp_path / "link.pdf"), "Revenue?", "-r", "extractive")
    assert out.exit_code == 2
    assert out.output == (
        f"error: {tmp_path / 'link.pdf'}: file not found (a symbolic link to {moved}, which does not exist)\n"
    )


def test_trees_of_one_name_are_said_as_filings_of_one_name_are(tmp_path):
    """Review (rev-day): the check before any build looked at PDFs only, so two tree JSONs of filings
    named alike, or a filing and its own tree, were still "documents must be distinct, got ['x', 'x']"."""
    from tests.tree.pdf_factory import make_pdf

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = make_pdf(tmp_path / "a" / "x.pdf", [["Item 1. Business", "Revenue was 10."]])
    second = make_pdf(tmp_path / "b" / "x.pdf", [["Item 1. Business", "Revenue was 20."]])
    trees = []
    for pdf in (first, second):
        out = runner.invoke(app, ["build", str(pdf), "-o", str(pdf.with_suffix(".json")), "--no-cache"])
        assert out.exit_code == 0, out.output
        trees.append(pdf.with_suffix(".json"))
    out = ask(str(trees[0]), str(trees[1]), "Revenue?", "-r", "extractive")
    assert out.exit_code == 2
    assert out.output == (
        f"error: {trees[0]} and {trees[1]} are both named x: ask tells filings apart by their names (a tree "
        "keeps the name of the PDF it was built from); give one of them another name\n"
    )
    out = ask(str(first), str(trees[1]), "Revenue?", "-r", "extractive")
    assert out.exit_code == 2 and "are both named x: ask tells filings apart by their names" in out.output
    out = ask(str(first), str(trees[0]), "Revenue?", "-r", "extractive")  # a filing and its own tree
    assert out.exit_code == 2 and out.output == f"error: {first} and {trees[0]} are one filing, given twice\n"
