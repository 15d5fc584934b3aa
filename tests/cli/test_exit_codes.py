"""Honest outcomes: every broken set-up gets the exit code of the README's table and one line.

0 done; 1 a check failed; 2 bad input, configuration, unreachable or not comparable (nothing run);
3 budget reached; 4 finished with too many errors; 130 interrupted (tests/bench/test_reliability_process).
"""

from __future__ import annotations

import functools
import http.server
import json
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.runner import demo_dataset_dir
from pageindex.cli._common import EXIT_CODES_HELP, ExitCode
from tests.cli.clirun import extractive_run, invoke

SCRIPTED = ["--model", "scripted", "--scripted-policy", "bench.faults.scripted:policy"]


def assert_one_error_line(output: str) -> None:
    """One error line and nothing else (a loopback URL's settings header is said only after the
    endpoint's preflight passed)."""
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1, output
    assert lines[0].startswith("error: ")
    assert "Traceback" not in output and "pydantic.dev" not in output and "╭" not in output


def serve(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:  # keep the test output clean
        pass


@pytest.fixture
def static_site(tmp_path) -> Iterator[str]:
    """``python3 -m http.server`` on loopback: reachable, but not an OpenAI-compatible API."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<html><title>hello</title></html>")
    yield from serve(functools.partial(_Quiet, directory=str(site)))


class _BrokenChat(http.server.BaseHTTPRequestHandler):
    """Lists models (passes the preflight) but every chat completion fails with HTTP 500."""

    def log_message(self, *args: object) -> None:
        pass

    def _json(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802
        self._json(200, {"object": "list", "data": [{"id": "x", "object": "model"}]})

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._json(500, {"error": {"message": "the GPU caught fire", "type": "server_error"}})


@pytest.fixture
def broken_chat() -> Iterator[str]:
    yield from serve(_BrokenChat)


# -- a fresh machine ---------------------------------------------------------------------------
def test_the_cli_runs_as_a_module_without_being_on_path():
    done = subprocess.run(
        [sys.executable, "-m", "pageindex.cli", "bench", "gate", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "COLUMNS": "200"},
    )
    assert done.returncode == 0, done.stderr
    assert "Exit codes: 0 done" in done.stdout and "130 interrupted" in done.stdout


def test_a_run_started_as_a_module_records_the_command_as_pageindex(tmp_path):
    """`python -m pageindex.cli bench run ...` recorded the path of `__main__.py` as the program, so
    the commands a run prints to go on (resume, rejudge) began with a path no one types (review of
    the session's diff, session 16)."""
    out = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-m", "pageindex.cli", "bench", "run", "-r", "extractive", "--judge", "rules",
         "--limit", "1", "-q", "-o", str(out)],
        capture_output=True, text=True, timeout=120,
        env={"PATH": "/usr/bin:/bin", "PAGEINDEX_CACHE_DIR": str(tmp_path / "cache")},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    command = json.loads((out / "run.json").read_text())["command"]
    assert command[:3] == ["pageindex", "bench", "run"] and command[-2:] == ["-o", str(out)]


def test_every_command_help_ends_with_the_exit_code_table():
    for args in (
        ["--help"],
        ["bench", "--help"],
        ["build", "--help"],
        ["ask", "--help"],
        ["bench", "run", "--help"],
    ):
        code, output = invoke(args, COLUMNS="400")
        assert code == 0, output
        assert " ".join(EXIT_CODES_HELP.split()) in " ".join(output.split()), args


# -- 2: bad input, nothing run ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("option", "named"),
    [
        (["--judge", "foo"], "--judge 'foo': must be 'llm', 'rules', 'hybrid' or 'panel'"),
        (["--cache", "bogus"], "--cache 'bogus'"),
        (["--limit", "-1"], "--limit -1: must be at least 1"),
        (["--concurrency", "0"], "--concurrency 0: must be at least 1"),
        (["--max-error-rate", "1.5"], "'--max-error-rate': '1.5' is not a fraction"),
        (["--limit", "many"], "'--limit' / '-n': 'many' must be a whole number"),
        (["--timeout=soon"], "'--timeout': 'soon' must be a number"),
        (["--opt", "extractive.top_k=abc"], "option 'top_k': must be a whole number (known options: top_k"),
        (["--no-such-option"], "No such option: --no-such-option"),
    ],
)
def test_a_bad_option_is_one_line_and_exit_2(option, named, tmp_path, quiet_env):
    code, output = invoke(["bench", "run", "-r", "extractive", "-q", "--out", str(tmp_path / "run"), *option])
    assert code == ExitCode.BAD_INPUT
    assert_one_error_line(output)
    assert named in output
    assert not (tmp_path / "run").exists()


def test_a_bad_gate_option_is_one_line(tmp_path):
    code, output = invoke(["bench", "gate", str(tmp_path), "--min-accuracy", "50"])
    assert code == ExitCode.BAD_INPUT
    assert_one_error_line(output)
    assert "--min-accuracy" in output


def copy_demo(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    shutil.copytree(demo_dataset_dir(), data)
    return data


def test_an_empty_questions_file_exits_2(tmp_path, quiet_env):
    data = copy_demo(tmp_path)
    (data / "questions.jsonl").write_text("")
    code, output = invoke(
        ["bench", "run", "-d", str(data), "-r", "extractive", "-q", "--out", str(tmp_path / "r")]
    )
    assert code == ExitCode.BAD_INPUT
    assert_one_error_line(output)
    assert "has no questions" in output
    assert not (tmp_path / "r").exists()


def test_a_dataset_whose_pdfs_are_all_missing_exits_2(tmp_path, quiet_env):
    data = copy_demo(tmp_path)
    shutil.rmtree(data / "pdfs")
    (data / "pdfs").mkdir()
    code, output = invoke(
        ["bench", "run", "-d", str(data), "-r", "extractive", "-q", "--out", str(tmp_path / "r")]
    )
    assert code == ExitCode.BAD_INPUT
    assert_one_error_line(output)
    assert "all 18 selected questions were dropped (18 pdf_missing)" in output
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("filter_", [["--question-id", "nope"], ["--question-type", "bogus"]])
def test_a_filter_that_matches_nothing_exits_2(filter_, tmp_path, quiet_env):
    code, output = invoke(["bench", "run", "-r", "extractive", "-q", "--out", str(tmp_path / "r"), *filter_])
    assert code == ExitCode.BAD_INPUT
    assert_one_error_line(output)
    assert f"{filter_[0]} {filter_[1]} matched none of the 18 questions" in output


@pytest.mark.parametrize(
    "filters, unmatched",
    [
        (["--question-id", "demo_nwic_01", "--question-id", "demo_nwic_1"], "--question-id demo_nwic_1"),
        (["--question-type", "domain-relevant", "--question-type", "novel"], "--question-type novel"),
    ],
)
def test_a_filter_value_that_matches_nothing_beside_one_that_matches_exits_2(
    filters, unmatched, tmp_path, quiet_env
):
    """A mistyped id in a list of ids was dropped in silence: the run went on with the others, exit 0,
    and nothing said the question asked for was not run (fresh-user trial of session 25)."""
    code, output = invoke(["bench", "run", "-r", "extractive", "-q", "--out", str(tmp_path / "r"), *filters])
    assert code == ExitCode.BAD_INPUT
    assert_one_error_line(output)
    assert f"{unmatched} matched none of the 18 questions" in output
    assert "ids like demo_" in output
    assert not (tmp_path / "r").exists()


def test_a_scripted_model_without_a_policy_names_both_ways_to_give_one(tmp_path, quiet_env):
    """`PAGEINDEX_MODEL=scripted pageindex bench run` said only `pass --scripted-policy module:function`,
    while `ask` named $PAGEINDEX_SCRIPTED_POLICY too, which bench run also reads (fresh-user trial of
    session 25)."""
    args = ["bench", "run", "--limit", "1", "-q", "--out", str(tmp_path / "r")]
    code, output = invoke(args, PAGEINDEX_MODEL="scripted", PAGEINDEX_SCRIPTED_POLICY="")
    assert code == ExitCode.BAD_INPUT
    assert_one_error_line(output)
    said = "needs a scripted policy: pass --scripted-policy module:function (or $PAGEINDEX_SCRIPTED_POLICY)"
    assert said in output
    assert not (tmp_path / "r").exists()


def test_a_selection_reports_only_the_malformed_rows_it_takes(tmp_path, quiet_env):
    """`--question-id q1` on a dataset with malformed rows said every bad row of the file was dropped
    (and "all 16 selected questions were dropped" when q1's PDF was missing); a malformed row asked for
    by id said "matched none" rather than that the row is malformed (review of datasets, session 16)."""
    data = copy_demo(tmp_path)
    lines = (data / "questions.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    bad = [
        json.dumps({**first, "financebench_id": "broken_a", "evidence": "not a list"}),
        json.dumps({**first, "financebench_id": "broken_b", "question": None}),
        json.dumps({**first, "financebench_id": "broken_c", "question": None, "question_type": "other"}),
        "not json at all",
    ]
    (data / "questions.jsonl").write_text("\n".join([*lines, *bad]) + "\n")
    run = tmp_path / "r1"
    args = ["bench", "run", "-d", str(data), "-r", "extractive", "--judge", "rules", "-q"]
    code, output = invoke([*args, "--question-id", first["financebench_id"], "--out", str(run)])
    assert code == 0, output
    assert (run / "dropped.jsonl").read_text().strip() == ""
    assert json.loads((run / "run.json").read_text())["dataset"]["dropped"] == 0

    code, output = invoke([*args, "--question-id", "broken_a", "--out", str(tmp_path / "r2")])
    assert code == ExitCode.BAD_INPUT
    assert_one_error_line(output)
    assert "all 1 selected questions were dropped (1 malformed)" in output

    kind = first["question_type"]
    run = tmp_path / "r3"
    code, output = invoke([*args, "--question-type", kind, "--out", str(run)])
    assert code == 0, output
    dropped = [json.loads(line) for line in (run / "dropped.jsonl").read_text().splitlines()]
    assert {d["question_id"] for d in dropped if d["reason"] == "malformed"} == {"broken_a", "broken_b"}


def test_bench_run_says_the_documents_rows_it_ignores(tmp_path, quiet_env):
    """`datasets validate` warned of documents.jsonl rows it ignores (their filings lose their doc type,
    so a summary by doc type is wrong); `bench run` said nothing (review of datasets, session 16)."""
    data = copy_demo(tmp_path)
    with (data / "documents.jsonl").open("a") as docs:
        docs.write("not json\n")
    code, output = invoke(["bench", "run", "-d", str(data), "-r", "extractive", "--judge", "rules", "-q",
                           "--limit", "1", "--out", str(tmp_path / "r")])  # fmt: skip
    assert code == 0, output
    warned = [line for line in output.splitlines() if line.startswith("warning: documents.jsonl")]
    assert len(warned) == 1 and warned[0].endswith("the row is ignored"), output


def test_a_static_file_server_is_not_an_openai_api_for_bench_run(static_site, tmp_path, quiet_env):
    code, output = invoke(
        ["bench", "run", "-r", "agent", "--model", "openai/x", "--base-url", static_site, "--limit", "2",
         "-q", "--out", str(tmp_path / "run")]
    )  # fmt: skip
    assert code == ExitCode.BAD_INPUT
    assert_one_error_line(output)
    assert f"openai/x at {static_site} is not an OpenAI-compatible API" in output
    assert "HTTP 404 with an HTML page" in output
    assert not (tmp_path / "run").exists()


def test_a_static_file_server_is_not_an_openai_api_for_ask(static_site, tmp_path, quiet_env):
    pdf = demo_dataset_dir() / "pdfs"
    filing = sorted(pdf.glob("*.pdf"))[0]
    code, output = invoke(
        ["ask", str(filing), "What was revenue?", "--model", "openai/x", "--base-url", static_site]
    )
    assert code == ExitCode.BAD_INPUT
    assert_one_error_line(output)
    assert "is not an OpenAI-compatible API" in output and "<html" not in output


def test_no_preflight_when_no_retriever_or_judge_uses_a_model(tmp_path, monkeypatch):
    """With OPENAI_API_KEY set the default model is openai/gpt-4o-mini, but an extractive run judged
    by rules uses no model: nothing is preflighted (the base URL points at a closed port)."""
    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(tmp_path / "cache"))
    code, output = invoke(
        ["bench", "run", "-r", "extractive", "--judge", "rules", "--limit", "2", "-q",
         "--out", str(tmp_path / "r")],
        OPENAI_API_KEY="sk-test-123456789", OPENAI_BASE_URL="http://127.0.0.1:9/v1",
    )  # fmt: skip
    assert code == ExitCode.OK, output
    info = json.loads((tmp_path / "r" / "run.json").read_text())
    assert info["model"] is None and info["judge"] == "rules"


# -- 3: budget ---------------------------------------------------------------------------------
def test_a_spent_budget_exits_3(tmp_path, fb_dir):
    code, output = invoke(
        ["bench", "run", "-d", str(fb_dir), "-r", "iterative", "--limit", "6", "--concurrency", "1",
         "--budget", "500", "--judge", "rules", "-q", "--out", str(tmp_path / "run"), *SCRIPTED]
    )  # fmt: skip
    assert code == ExitCode.BUDGET, output
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert info["status"] == "aborted_due_to_budget"


def test_a_budget_stop_says_to_resume_with_a_new_budget_when_no_sample_fit(tmp_path, fb_dir):
    """Fresh-user trial 2026-11-27: `--budget 2k` cut the first agent sample at its judge call and the
    run said "continue with --resume DIR"; that resume spent the stored 2k again, cut the same sample,
    wrote nothing and said the same, a loop paid for at each turn. The line now names a new --budget,
    and says when no sample fitted in the budget."""
    run = tmp_path / "run"
    args = ["-d", str(fb_dir), "-r", "iterative", "--limit", "2", "--concurrency", "1"]
    args += ["--judge", "rules", "-q"]
    code, output = invoke(["bench", "run", *args, "--budget", "500", "--out", str(run), *SCRIPTED])
    assert code == ExitCode.BUDGET, output
    last = output.strip().splitlines()[-1]
    assert f"continue with: pageindex bench run --resume {run} with a new --budget" in last, last
    assert "no sample finished within it" in last, last
    code, output = invoke(["bench", "run", "--resume", str(run), "--budget", "200k", "-q"])
    assert code == ExitCode.OK, output


# -- 4: finished, but the infrastructure decided too much ---------------------------------------
def test_a_run_where_every_sample_errored_exits_4(broken_chat, tmp_path, quiet_env):
    code, output = invoke(
        ["bench", "run", "-r", "agent", "--judge", "rules", "--model", "openai/x", "--base-url", broken_chat,
         "--limit", "2", "--max-retries", "0", "-q", "--out", str(tmp_path / "run")]
    )  # fmt: skip
    assert code == ExitCode.ERRORS, output
    last = output.strip().splitlines()[-1]
    assert "too many errors: 2 of 2 samples ended in error" in last and "--max-error-rate 0.2" in last
    # the library's own retry noise is in the run's event log, not on the terminal
    assert "Traceback" not in output and "pydantic.dev" not in output
    assert (tmp_path / "run" / "events.log").exists()
    samples = [json.loads(line) for line in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    assert [s["status"] for s in samples] == ["error", "error"]


def test_max_error_rate_1_accepts_a_run_full_of_errors(broken_chat, tmp_path, quiet_env):
    code, output = invoke(
        ["bench", "run", "-r", "agent", "--judge", "rules", "--model", "openai/x", "--base-url", broken_chat,
         "--limit", "1", "--max-retries", "0", "--max-error-rate", "1", "-q", "--out", str(tmp_path / "run")]
    )  # fmt: skip
    assert code == ExitCode.OK, output


def test_a_static_file_server_is_not_an_openai_api_for_bench_judge(static_site, tmp_path, quiet_env):
    answers = tmp_path / "answers.jsonl"
    answers.write_text(
        json.dumps({"id": "q1", "question": "Revenue?", "gold_answer": "$5", "answer": "$5"}) + "\n"
    )
    code, output = invoke(
        ["bench", "judge", "--input", str(answers), "--judge", "llm", "--judge-model", "openai/x",
         "--base-url", static_site, "-o", str(tmp_path / "verdicts.jsonl")]
    )  # fmt: skip
    assert code == ExitCode.BAD_INPUT
    assert_one_error_line(output)
    assert "is not an OpenAI-compatible API" in output
    assert not (tmp_path / "verdicts.jsonl").exists()


def test_a_static_file_server_is_not_an_openai_api_for_build_summaries(static_site, tmp_path, quiet_env):
    filing = sorted((demo_dataset_dir() / "pdfs").glob("*.pdf"))[0]
    code, output = invoke(
        ["build", str(filing), "--summaries", "--model", "openai/x", "--base-url", static_site,
         "--cache-dir", str(tmp_path / "trees"), "-o", str(tmp_path / "tree.json")]
    )  # fmt: skip
    assert code == ExitCode.BAD_INPUT
    assert (
        output.strip().splitlines()[-1].startswith("error: ") and "is not an OpenAI-compatible API" in output
    )
    assert "Traceback" not in output and not (tmp_path / "tree.json").exists()



def test_ask_interrupted_exits_130_with_one_line(tmp_path):
    """Ctrl-C while the model is computing (a real HTTP server that takes 15 s to answer)."""
    import os
    import signal
    import time

    from pageindex.llm.testing import FakeOpenAIServer

    filing = sorted((demo_dataset_dir() / "pdfs").glob("*.pdf"))[0]
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "PAGEINDEX_MODEL")}
    env["PAGEINDEX_CACHE_DIR"] = str(tmp_path / "cache")
    with FakeOpenAIServer(delay_s=15) as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "pageindex.cli", "ask", str(filing), "What was revenue?",
             "--model", "openai/scripted", "--base-url", server.base_url],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + 120
        while not server.chat_requests and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)  # until the model call is waiting
        assert server.chat_requests, proc.communicate()
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == ExitCode.INTERRUPTED
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert lines[-1] == "interrupted: no answer" and "Traceback" not in stderr, stderr


def _cli(*args: str, stdin: int | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "pageindex.cli", *args],
        stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip


def test_a_reader_that_stops_early_ends_the_command_quietly_with_exit_0(tmp_path):
    """``pageindex bench summary RUN | head -1``: the closed pipe is neither a traceback nor an error."""
    run_dir = extractive_run(tmp_path)
    readers = (
        ["bench", "summary", str(run_dir)],
        ["bench", "report", str(run_dir), "--format", "md", "-o", "-"],
    )
    for args in readers:
        proc = _cli(*args)
        first = proc.stdout.readline()
        proc.stdout.close()  # the reader goes away, as head does
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=60) == 0, err
        assert first.strip() and err == "", (args, err)


def _first_line_then_leave(*args: str) -> tuple[int, str]:
    """Run the CLI, read one line of its output and close the pipe, as ``| head -1`` does."""
    proc = _cli(*args)
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert first.strip(), err
    return proc.wait(timeout=300), err


def test_a_reader_that_leaves_takes_the_output_not_the_work_or_the_exit_code(tmp_path):
    """``bench run ... | head -1`` in a CI step still runs every sample and finishes the run (it used to
    stop with exit 0, the run left ``running``), and a failing gate whose output is cut still exits 1."""
    run_dir = tmp_path / "run"
    code, err = _first_line_then_leave(
        "bench", "run", "--data-dir", str(demo_dataset_dir()), "-r", "extractive", "--judge", "rules",
        "--out", str(run_dir),
    )  # fmt: skip
    assert (code, err) == (0, "")
    assert json.loads((run_dir / "run.json").read_text())["status"] == "finished"
    assert len((run_dir / "samples.jsonl").read_text().splitlines()) == 18
    code, err = _first_line_then_leave("bench", "gate", str(run_dir), "--min-accuracy", "0.99")
    assert code == ExitCode.CHECK_FAILED and "Traceback" not in err


def _cache_with_a_reply(tmp_path: Path) -> Path:
    from pageindex.llm.cache import LLMCache

    path = tmp_path / "llm.sqlite"
    cache = LLMCache(path)
    cache.put("k", model="m", kind="chat", request={}, reply={}, prompt_tokens=1, completion_tokens=1)
    cache.close()
    return path


def _entries(path: Path) -> int:
    from pageindex.llm.cache import LLMCache

    cache = LLMCache(path, mode="replay")
    try:
        return cache.stats().entries
    finally:
        cache.close()


def test_cache_clear_without_an_answer_is_a_set_up_error_that_deletes_nothing(tmp_path):
    """End of input at the question (a script or CI step that forgot ``--yes``) exited 0 as if the cache
    had been emptied: now exit 2, one error line that says nothing was deleted and names ``--yes``."""
    cache = _cache_with_a_reply(tmp_path)
    proc = _cli("cache", "clear", "--cache-path", str(cache), stdin=subprocess.DEVNULL)  # end of input
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == ExitCode.BAD_INPUT, err
    assert err.decode().strip().splitlines() == [
        f"error: cache clear: no answer to the question (input ended): nothing deleted from {cache}; "
        "pass --yes to delete without asking"
    ]
    assert _entries(cache) == 1 and b"Traceback" not in out + err


def test_ctrl_c_at_the_cache_question_is_an_interrupted_command_that_deletes_nothing(tmp_path):
    """A real SIGINT while ``cache clear`` waits for its answer: exit 130, as the exit-code table says of
    an interrupted command (it was a "cancelled" exit 0), and the cache is as it was."""
    import os
    import select
    import signal

    cache = _cache_with_a_reply(tmp_path)
    proc = _cli("cache", "clear", "--cache-path", str(cache), stdin=subprocess.PIPE)
    asked = b""
    while b"?" not in asked:  # the question has no newline: read what is there until it is shown
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        assert ready, asked
        chunk = os.read(proc.stdout.fileno(), 4096)
        assert chunk, asked
        asked += chunk
    assert b"Delete all replies and failures from" in asked
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == ExitCode.INTERRUPTED, err
    assert err.decode().strip() == f"interrupted: nothing deleted from {cache}"
    assert _entries(cache) == 1 and b"Traceback" not in asked + out + err


def test_an_unexpected_exception_is_one_line(tmp_path, monkeypatch):
    import bench.summary

    def boom(*args, **kwargs):
        raise RuntimeError("something broke\nsecond line")

    monkeypatch.delenv("PAGEINDEX_DEBUG", raising=False)
    run_dir = extractive_run(tmp_path)
    monkeypatch.setattr(bench.summary, "print_summary", boom)
    code, output = invoke(["bench", "summary", str(run_dir)])
    assert code == ExitCode.BAD_INPUT
    assert_one_error_line(output)
    assert "internal error: RuntimeError: something broke" in output and "PAGEINDEX_DEBUG=1" in output


def test_wrong_kinds_of_file_say_what_is_wanted(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    code, output = invoke(["tree", str(text)])
    assert code == 2 and "not a PDF file" in output and "or a tree JSON" in output
    assert_one_error_line(output)
    code, output = invoke(["bench", "summary", str(text)])
    assert code == 2 and f"{text} is a file, not a run directory" in output
    assert_one_error_line(output)


def test_ask_with_oracle_pages_the_filing_does_not_have_is_bad_input(tmp_path, quiet_env):
    filing = sorted((demo_dataset_dir() / "pdfs").glob("*.pdf"))[0]
    cases = (("999", "outside this filing's pages 1-"), ("abc", "page numbers separated by commas"))
    for pages, says in cases:
        args = ["ask", str(filing), "What was revenue?", "-r", "oracle", "--opt", f"pages={pages}"]
        code, output = invoke([*args, *SCRIPTED])
        assert code == ExitCode.BAD_INPUT, output
        assert_one_error_line(output)
        assert says in output and "no gold evidence" not in output and "invalid literal" not in output
    # no --opt pages at all: ask's question has no gold pages, so the oracle has none (exit 2, the flag
    # named; it was exit 4, "retrieval failed", naming a Python argument)
    for extra in ([], ["--json"]):
        code, output = invoke(["ask", str(filing), "What was revenue?", "-r", "oracle", *extra, *SCRIPTED])
        assert code == ExitCode.BAD_INPUT, output
        assert_one_error_line(output)
        assert "--opt pages=N,M" in output and "context evidence_pages" not in output


def test_build_summaries_from_unusable_replies_is_exit_4_and_writes_nothing(tmp_path, quiet_env):
    """A server that answers /models but whose every chat reply is malformed: the summaries fail
    (exit 4, "ended in unusable output" in the table), one error line, no tree written."""
    from bench.faults import FaultServer

    filing = sorted((demo_dataset_dir() / "pdfs").glob("*.pdf"))[0]
    with FaultServer(rate=1.0, faults=["wrong_shape"]) as srv:
        code, output = invoke(
            ["build", str(filing), "--summaries", "--model", "openai/x", "--base-url", srv.base_url,
             "--cache-dir", str(tmp_path / "trees"), "-o", str(tmp_path / "tree.json")]
        )  # fmt: skip
    assert code == ExitCode.ERRORS, output
    lines = output.strip().splitlines()  # the estimate, then one error line
    assert [line for line in lines if line.startswith("error:")] == lines[-1:]
    assert "Traceback" not in output and "summaries failed" in lines[-1]
    assert not (tmp_path / "tree.json").exists()
    assert "summaries failed" in output and not (tmp_path / "tree.json").exists()


def test_build_summaries_from_a_scripted_policy_with_unusable_replies_is_exit_4(tmp_path, quiet_env):
    """Trial: a --scripted-policy that answers a summary request with something no reply can be made
    of (the analyst test policy's []) was "internal error: ScriptedExhausted ...", exit 2; it is the
    model's unusable output, as from a server: exit 4, one error line, no tree written."""
    filing = sorted((demo_dataset_dir() / "pdfs").glob("*.pdf"))[0]
    policy = tmp_path / "policy.py"
    policy.write_text("def policy(request):\n    return []\n")
    code, output = invoke(
        ["build", str(filing), "--summaries", "--model", "scripted", "--scripted-policy", f"{policy}:policy",
         "--cache-dir", str(tmp_path / "trees"), "-o", str(tmp_path / "tree.json")]
    )  # fmt: skip
    assert code == ExitCode.ERRORS, output
    lines = output.strip().splitlines()
    assert [line for line in lines if line.startswith("error:")] == lines[-1:], output
    assert "summaries failed" in lines[-1] and "internal error" not in output
    assert not (tmp_path / "tree.json").exists()


@pytest.mark.parametrize("group", [[], ["bench"], ["cache"]])
def test_a_group_without_a_command_prints_its_help_once(group):
    proc = subprocess.run(
        [sys.executable, "-m", "pageindex.cli", *group], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("Usage: ") == 1, proc.stdout


@pytest.mark.parametrize(
    "command",
    [
        ["doctor", "-m", "openai/x", "--base-url", "http://127.0.0.1:9"],
        ["ask", "-m", "openai/x", "filing.pdf", "What was revenue?"],
        ["bench", "run"],
        ["bench", "datasets", "fetch", "financebench", "--out", "nowhere"],
    ],
)
@pytest.mark.parametrize("value", ["inf", "nan", "0", "-1"])
def test_a_timeout_must_be_a_finite_number_of_seconds(command: list[str], value: str) -> None:
    """One ``--timeout`` for every command that calls a server: a wait that never ends (``inf``) or
    cannot start is a usage error, before anything is read or reached."""
    code, output = invoke([*command, "--timeout", value])
    assert code == ExitCode.BAD_INPUT
    assert_one_error_line(output)
    assert f"{value} is not a number of seconds > 0" in output


def test_ctrl_c_while_the_trees_are_built_exits_130_with_one_line(tmp_path, quiet_env, monkeypatch):
    import bench.runner

    def ctrl_c_at_the_first_tree(self, *_event):  # the first Ctrl-C lands as a tree starts
        self.request_stop("interrupted")

    monkeypatch.setattr(bench.runner.Runner, "_tree_event", ctrl_c_at_the_first_tree)
    code, output = invoke(
        ["bench", "run", "-r", "extractive", "--judge", "rules", "-q", "--out", str(tmp_path / "r")]
    )
    assert code == ExitCode.INTERRUPTED, output
    lines = [line for line in output.splitlines() if line.strip()]
    assert lines == [
        "interrupted while building the trees (1 of 3 built, kept in the tree cache); no sample ran and "
        "nothing was written"
    ], output
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(("given", "echoed"), [("-n=5", "'=5'"), ("-nmany", "'many'"), ("--limit=x", "'x'")])
def test_a_bad_value_is_echoed_as_click_read_it(given, echoed, tmp_path, quiet_env):
    code, output = invoke(["bench", "run", "-r", "extractive", "-q", "--out", str(tmp_path / "r"), given])
    assert code == ExitCode.BAD_INPUT
    assert_one_error_line(output)
    assert f"Invalid value for '--limit' / '-n': {echoed} must be a whole number" in output


@pytest.mark.parametrize(
    "command",
    [["bench", "run", "-r", "extractive"], ["bench", "judge", "-i", "answers.jsonl"],
     ["bench", "rejudge", "RUN", "-j", "rules", "-o", "new"], ["ask", "filing.pdf", "a question?"]],
)  # fmt: skip
def test_concurrency_is_one_option_with_one_wording_everywhere(command, tmp_path, quiet_env):
    """`bench judge` said typer's range error, `bench rejudge` "--concurrency must be a whole number of
    1 or more; got '0'", `bench run` and `ask` "--concurrency 0: must be at least 1"; and only the
    last two took `-c` (review of the option names, session 16). One option now, checked before any
    input is read; `-j` is --judge wherever a judge is chosen."""
    for spelling in ("--concurrency", "-c"):
        code, output = invoke([*command, spelling, "0"])
        assert code == ExitCode.BAD_INPUT, output
        assert output.strip() == "error: --concurrency 0: must be at least 1"
    code, output = invoke([*command, "-c", "many"])
    assert code == ExitCode.BAD_INPUT and "'--concurrency' / '-c': 'many' must be a whole number" in output


def test_a_name_that_looks_like_markup_is_said_as_written(tmp_path, quiet_env):
    """Messages were printed as Rich markup: `bench summary 'nope[/b]'` crashed while saying its
    error (a traceback, exit 1, which is a failed gate's code), `'nope[red]x'` lost its `[red]`; a
    documents.jsonl row with such a doc_name crashed `datasets validate` and ended a finished `bench
    run` the same way (session 16's warnings of the rows it ignores)."""
    code, output = invoke(["bench", "summary", str(tmp_path / "nope[/b]")])
    assert code == ExitCode.BAD_INPUT, output
    assert_one_error_line(output)
    assert "nope[/b] does not exist" in output
    code, output = invoke(["bench", "summary", str(tmp_path / "nope[red]x")])
    assert code == ExitCode.BAD_INPUT and "nope[red]x does not exist" in output, output

    data = copy_demo(tmp_path)
    with (data / "documents.jsonl").open("a") as docs:
        docs.write('{"doc_name": "x[/b]y"}\n')
    lines = len((data / "documents.jsonl").read_text().splitlines())
    said = (
        f"warning: documents.jsonl line {lines}: doc_name 'x[/b]y' is not a file name: the filing must be "
        "pdfs/<doc_name>.pdf, with no folder; the row is ignored"
    )
    code, output = invoke(["bench", "datasets", "validate", str(data)])
    assert code == 0, output
    assert said in output.splitlines() and "Traceback" not in output
    code, output = invoke(["bench", "run", "-d", str(data), "-r", "extractive", "--judge", "rules", "-q",
                           "--limit", "1", "--out", str(tmp_path / "r")])  # fmt: skip
    assert code == 0, output
    assert said in output.splitlines() and "Traceback" not in output


def test_a_finished_run_in_a_folder_named_like_markup_exits_0(tmp_path, quiet_env):
    """A line that prints a path in Rich markup crashed on a closing tag in it: `bench run -o 'r[/b]x'`
    ran every sample, then 'error: internal error: MarkupError', exit 2. Such a line is printed as
    written instead."""
    run = tmp_path / "r[" / "b]x"
    code, output = invoke(["bench", "run", "-r", "extractive", "--judge", "rules", "-q", "--limit", "1",
                           "--out", str(run)])  # fmt: skip
    assert code == 0, output
    assert "MarkupError" not in output and f"-> {run}" in output


def test_bench_run_says_a_model_the_server_does_not_list(tmp_path, quiet_env):
    """`ask` warned that a server does not list the model (a llama.cpp server answers any name with the
    one it serves); `bench run` filed a whole run's answers under the mistyped name in silence (session
    16). Said with the header, before the samples, and with the closing warnings."""
    from bench.faults import FaultServer
    from bench.faults.competent import CompetentPolicy

    with FaultServer(CompetentPolicy()) as srv:
        args = ["bench", "run", "-r", "planner", "--judge", "rules", "-n", "1", "--base-url", srv.base_url]
        typo = invoke([*args, "-m", "openai/fault-modle", "--out", str(tmp_path / "typo")])
        listed = invoke([*args, "-m", "openai/fault-model", "--out", str(tmp_path / "listed")])
    said = (
        f"fault-modle is not among the models {srv.base_url} lists (fault-model): the server answered a "
        "one-token request for it, perhaps with another model"
    )
    assert typo[0] == 0, typo[1]
    lines = [" ".join(line.split()) for line in typo[1].splitlines()]
    assert f"note: {said}" in lines and f"warning: {said}" in lines
    assert lines.index(f"note: {said}") < lines.index(f"warning: {said}")
    assert listed[0] == 0 and "is not among the models" not in listed[1], listed[1]
    # and in run.json: once the console is gone, the run still says its model was not the server's
    recorded = json.loads((tmp_path / "typo" / "run.json").read_text())["extra"]
    assert recorded["endpoint_warnings"] == [said]
    assert "endpoint_warnings" not in json.loads((tmp_path / "listed" / "run.json").read_text())["extra"]


def test_an_error_line_sent_into_a_closed_pipe_keeps_its_exit_code(tmp_path):
    """``pageindex build notes.pdf 2>&1 | head -0`` (a CI step that shows the first lines of a command's
    output) exited 0: the `error:` line met the closed pipe, rich pointed stdout at /dev/null and exited
    1, which the CLI took for a reader of stdout gone, exit 0. The bad input still exits 2."""
    import os

    notes = tmp_path / "notes.pdf"
    notes.write_text("not a PDF")
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader has gone before the first line
    try:
        asked = ["ask", str(notes), "Revenue?", "-r", "extractive"]
        for args in (["build", str(notes)], ["tree", str(notes)], asked):
            command = [sys.executable, "-m", "pageindex.cli", *args]
            proc = subprocess.run(command, stdout=write_end, stderr=write_end, timeout=60)
            assert proc.returncode == ExitCode.BAD_INPUT, args
    finally:
        os.close(write_end)


def test_a_run_with_too_many_errors_says_the_commonest_one_and_what_it_says_to_do(tmp_path, quiet_env):
    """A bench run at llama.cpp's --n_ctx 4096 without --context-window: every sample's error said `give
    --context-window 4096`, but the run ended with "too many errors: 9 of 12 ...; see samples.jsonl" and
    nothing of the cause. The line names the commonest error kind and one such error now."""
    from bench.faults import FaultServer
    from bench.faults.limits import ServerLimits

    limits = ServerLimits(context_window=200, advertise_context=False)
    with FaultServer(limits=limits) as srv:
        code, output = invoke(
            ["bench", "run", "-r", "agent", "--judge", "rules", "--model", "openai/x", "--base-url",
             srv.base_url, "--limit", "2", "--max-retries", "0", "-q", "--out", str(tmp_path / "run")]
        )  # fmt: skip
    assert code == ExitCode.ERRORS, output
    last = " ".join(output.split()[output.split().index("many") - 1:])  # the line, however it wrapped
    assert "too many errors: 2 of 2 samples ended in error" in last
    assert "most often context_length in 2 samples, e.g. ContextLengthError: openai/x at" in last
    assert "the prompt does not fit the model's context" in last and "see " in last
