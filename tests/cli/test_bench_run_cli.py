"""``pageindex bench run`` as a newcomer meets it: the main job with no model, and a model that
cannot be reached."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from bench.samples import load_samples
from pageindex.cli import app


def test_main_job_without_a_model_runs_extractive_and_says_what_it_skipped(tmp_path, monkeypatch):
    for var in ("OPENAI_API_KEY", "PAGEINDEX_MODEL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(tmp_path / "cache"))
    out = CliRunner().invoke(app, ["bench", "run", "--quiet", "--out", str(tmp_path / "run")])
    assert out.exit_code == 0, out.output
    assert "skipped retrievers agent, planner, iterative: no model is configured" in out.output
    assert "OPENAI_API_KEY" in out.output and "ollama/" in out.output
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert info["status"] == "finished" and info["judge"] == "rules" and info["dataset"]["name"] == "demo"
    assert set(info["skipped_retrievers"]) == {"agent", "planner", "iterative"}
    samples = load_samples(tmp_path / "run" / "samples.jsonl")
    assert len(samples) == info["dataset"]["questions"] == 18
    assert {s.retriever for s in samples} == {"extractive"}
    assert all(s.verdict in {"correct", "incorrect", "refusal"} and s.judge == "rules" for s in samples)


def test_unreachable_model_fails_before_any_work(tmp_path):
    out = CliRunner().invoke(
        app,
        [
            "bench", "run", "--quiet", "--model", "openai/gpt-4o-mini", "--base-url", "http://127.0.0.1:9/v1",
            "--max-retries", "0", "--out", str(tmp_path / "run"),
        ],
        env={"OPENAI_API_KEY": "sk-test-secret-123"},
    )  # fmt: skip
    assert out.exit_code == 2
    assert "cannot reach openai/gpt-4o-mini at http://127.0.0.1:9/v1" in out.output
    assert "sk-test-secret-123" not in out.output
    assert not (tmp_path / "run").exists()


def test_json_mode_runs_structured_retrievers_without_tool_calls(tmp_path, fb_dir):
    """``--json-mode`` (servers without tool or JSON-schema support): structured replies come back
    as JSON content and every retriever still answers."""
    out = CliRunner().invoke(
        app,
        [
            "bench", "run", "--quiet", "--data-dir", str(fb_dir), "--limit", "2", "-r", "iterative,planner",
            "--model", "scripted", "--scripted-policy", "bench.faults.scripted:policy", "--judge", "llm",
            "--json-mode", "--out", str(tmp_path / "run"),
        ],
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert info["extra"]["config"]["json_mode"] is True
    samples = load_samples(tmp_path / "run" / "samples.jsonl")
    assert len(samples) == 4 and all(s.status == "answer" and s.verdict is not None for s in samples)


def test_credentials_in_the_base_url_reach_no_line_of_a_verbose_run(tmp_path, monkeypatch):
    """``--base-url http://bob:PASSWORD@...``: the local-server profile's header (printed without -v
    too), the preflight's and the client's request lines on stderr (-v) and in events.log, and
    run.json all name the URL masked. The preflight's request used to be logged in clear: the
    library loggers were filtered only once a client session opened."""
    import logging

    from bench.faults import FaultServer
    from pageindex.llm.redact import LIBRARY_LOGGERS

    for var in ("OPENAI_API_KEY", "PAGEINDEX_MODEL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(tmp_path / "cache"))
    for name in LIBRARY_LOGGERS:  # as a new process has them: not yet filtered
        monkeypatch.setattr(logging.getLogger(name), "filters", [])
    root = logging.getLogger()  # -v's handler writes to this invocation's stderr, and is removed after
    monkeypatch.setattr(root, "handlers", [h for h in root.handlers if not hasattr(h, "_pageindex_verbose")])
    level = root.level
    password = "pwSECRET4711"
    try:
        with FaultServer(rate=0.0) as srv:
            url = srv.base_url.replace("://", f"://bob:{password}@")
            out = CliRunner().invoke(
                app,
                ["bench", "run", "-r", "iterative", "-m", "openai/x", "--base-url", url, "--judge", "rules",
                 "--limit", "1", "-q", "-v", "--out", str(tmp_path / "run")],
            )  # fmt: skip
    finally:
        root.setLevel(level)
    assert out.exit_code == 0, out.output
    masked = srv.base_url.replace("://", "://***@")
    assert f"local-server profile for {masked} (loopback): concurrency 1" in out.output
    assert f'INFO httpx: HTTP Request: GET {masked}/models "HTTP/1.1 200 OK"' in out.output
    events = (tmp_path / "run" / "events.log").read_text()
    assert f'INFO httpx: HTTP Request: GET {masked}/models "HTTP/1.1 200 OK"' in events.splitlines()[0]
    assert f"HTTP Request: POST {masked}/chat/completions" in events
    everything = out.output + "".join(p.read_text() for p in (tmp_path / "run").iterdir() if p.is_file())
    assert password not in everything and "bob:" not in everything
    assert json.loads((tmp_path / "run" / "run.json").read_text())["base_urls"]["retriever"] == masked


def test_a_bad_model_in_the_variable_is_said_as_the_variable(tmp_path, monkeypatch):
    """A bad ``$PAGEINDEX_MODEL`` was said as a bad spec the user never typed; it is refused before any
    work, naming the variable (a typed one names --model), and no run folder is made."""
    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PAGEINDEX_MODEL", "gpt-4o")
    args = ["bench", "run", "--quiet", "-r", "bm25", "--out", str(tmp_path / "run")]
    out = CliRunner().invoke(app, args)
    assert out.exit_code == 2
    assert out.output.strip().startswith("error: $PAGEINDEX_MODEL: bad model spec 'gpt-4o'"), out.output
    typed = CliRunner().invoke(app, [*args, "--model", "x/y"])
    assert typed.exit_code == 2
    assert typed.output.startswith("error: --model: bad model spec 'x/y'"), typed.output
    assert not (tmp_path / "run").exists()
