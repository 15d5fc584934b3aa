"""The README's CI recipe, end to end: record a run with the cache in ``rw``, replay it with
``replay/<model>`` and no network, gate against the recording; a change that alters what is sent
to the model shows up as replay misses that fail the gate."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from pageindex.cli import app

POLICY = "bench.faults.scripted:policy"


def _run(tmp_path, fb_dir, out, *extra):
    args = [
        "bench",
        "run",
        "--quiet",
        "--data-dir",
        str(fb_dir),
        "--limit",
        "2",
        "-r",
        "agent",
        "--judge",
        "llm",
        "--cache-path",
        str(tmp_path / "ci.sqlite"),
        "--out",
        str(tmp_path / out),
        *extra,
    ]
    return CliRunner().invoke(app, args, env={"OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""})


def test_record_replay_gate(tmp_path, fb_dir):
    rec = _run(
        tmp_path, fb_dir, "baseline", "--model", "scripted", "--scripted-policy", POLICY, "--cache", "rw"
    )
    assert rec.exit_code == 0, rec.output
    rep = _run(tmp_path, fb_dir, "ci", "--model", "replay/scripted", "--cache", "replay")
    assert rep.exit_code == 0, rep.output
    base = [json.loads(x) for x in (tmp_path / "baseline" / "samples.jsonl").read_text().splitlines()]
    ci = [json.loads(x) for x in (tmp_path / "ci" / "samples.jsonl").read_text().splitlines()]
    same = ("status", "verdict", "answer", "retriever_prompt_tokens", "retriever_completion_tokens")
    assert [[r[f] for f in same] for r in base] == [[r[f] for f in same] for r in ci]

    gate = CliRunner().invoke(
        app,
        [
            "bench",
            "gate",
            str(tmp_path / "ci"),
            "--baseline",
            str(tmp_path / "baseline"),
            "--max-drop",
            "0.02",
            "--min-answered",
            "0.9",
        ],
    )
    assert gate.exit_code == 0, gate.output
    assert "WARNING" not in gate.output  # replay/scripted is the recorded scripted model

    # a change in what is sent to the model (here a retriever option) misses the cache ...
    changed = _run(
        tmp_path,
        fb_dir,
        "changed",
        "--model",
        "replay/scripted",
        "--cache",
        "replay",
        "--opt",
        "agent.slice_chars=1000",
    )
    # every sample is a replay miss (an error): finished, written, and exit 4 (the exit-code table)
    assert changed.exit_code == 4, changed.output
    assert "too many errors: 2 of 2 samples" in changed.output
    rows = [json.loads(x) for x in (tmp_path / "changed" / "samples.jsonl").read_text().splitlines()]
    assert rows and all(r["status"] == "error" and "replay" in r["error"].lower() for r in rows)
    # ... and fails the gate
    gate = CliRunner().invoke(
        app,
        [
            "bench",
            "gate",
            str(tmp_path / "changed"),
            "--baseline",
            str(tmp_path / "baseline"),
            "--min-answered",
            "0.9",
        ],
    )
    assert gate.exit_code == 1, gate.output
    assert "FAIL  min-answered [agent]: 0.0%" in gate.output
    # as the README's recipe runs it: --max-error-rate 100% leaves the verdict to the gate (exit 0, so a
    # CI script under `set -e` reaches the gate and its JUnit file)
    leave = _run(
        tmp_path, fb_dir, "leave", "--model", "replay/scripted", "--cache", "replay",
        "--opt", "agent.slice_chars=1000", "--max-error-rate", "100%",
    )  # fmt: skip
    assert leave.exit_code == 0, leave.output
    gate = CliRunner().invoke(
        app, ["bench", "gate", str(tmp_path / "leave"), "--baseline", str(tmp_path / "baseline"),
              "--min-answered", "0.9", "--junit", str(tmp_path / "gate.xml")],
    )  # fmt: skip
    assert gate.exit_code == 1 and (tmp_path / "gate.xml").is_file(), gate.output


def test_a_replay_takes_json_mode_from_a_recording_made_in_it(tmp_path, fb_dir):
    """Fresh-user trial (2026-11-27): a recording against llama.cpp's server took JSON mode from
    ``pageindex doctor``'s findings, which a replay (no endpoint) has not: every replayed call missed.
    A replay without --json-mode of a recording whose structured calls were all in JSON mode now
    replays in JSON mode, and says so; one in tools mode stays in tools mode."""
    rec = _run(
        tmp_path, fb_dir, "baseline", "--model", "scripted", "--scripted-policy", POLICY, "--cache", "rw",
        "--json-mode", "-r", "planner",
    )  # fmt: skip
    assert rec.exit_code == 0, rec.output
    rep = _run(tmp_path, fb_dir, "ci", "--model", "replay/scripted", "--cache", "replay", "-r", "planner")
    assert rep.exit_code == 0, rep.output
    ci = [json.loads(x) for x in (tmp_path / "ci" / "samples.jsonl").read_text().splitlines()]
    base = [json.loads(x) for x in (tmp_path / "baseline" / "samples.jsonl").read_text().splitlines()]
    assert [r["error_kind"] for r in ci] == [r["error_kind"] for r in base] and ci[0]["error_kind"] is None
    assert [(r["status"], r["answer"]) for r in ci] == [(r["status"], r["answer"]) for r in base]
    info = json.loads((tmp_path / "ci" / "run.json").read_text())
    assert info["extra"]["config"]["json_mode"] is True
    said = "settings from the recording: JSON mode: the recording made its 8 structured calls of scripted"
    assert said in rep.output.replace("\n", " ")
