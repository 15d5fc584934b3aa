"""``pageindex bench judge --labels DIR --per-file`` with the ``llm`` and ``hybrid`` judges against the
real llama-cpp-python server of this tier: the calibration report issue 14 asks to be "ready the
moment a model is reachable", run for real on a small label folder (two files, two made-up rows each).

Asserts what the harness does, not what SmolLM2-135M thinks: every row gets a verdict, the report
names the judge and its version and has a row per label file, the mean and the worst file; ``hybrid``
sends the model only the rows the rules leave ``uncertain``, so it makes fewer model calls.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from bench.judges.rules import RULES_VERSION
from tests.real.conftest import pageindex_cli

Q = "What was Foo Corp's FY2022 revenue in USD millions?"
ROWS = {
    "config_a": [
        {
            "id": "a1",
            "question": Q,
            "gold_answer": 120,
            "model_answer": "Revenue was $120 million.",
            "label": "Correct Answer",
        },
        {
            "id": "a2",
            "question": "Did Foo Corp pay a dividend in FY2022?",
            "gold_answer": "Yes",
            "model_answer": "I cannot determine that from the information provided.",
            "label": "Refusal",
        },
    ],
    "config_b": [
        {
            "id": "b1",
            "question": Q,
            "gold_answer": 120,
            "model_answer": "Revenue was $95 million.",
            "label": "Incorrect Answer",
        },
        {
            "id": "b2",
            "question": "Who audits Foo Corp?",
            "gold_answer": "Acme & Co. LLP audits Foo Corp.",
            "model_answer": "Foo's auditor is a large accounting firm headquartered in New York.",
            "label": "Incorrect Answer",
        },
    ],
}


def _labels(tmp_path: Path) -> Path:
    folder = tmp_path / "data" / "labels"
    folder.mkdir(parents=True)
    for name, rows in ROWS.items():
        (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder.parent


def _judge(llama, tmp_path: Path, judge: str, *inputs: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PAGEINDEX_CACHE_DIR": str(tmp_path / "cache"), "COLUMNS": "200",
           "OPENAI_API_KEY": "none"}  # fmt: skip
    args = [
        "bench", "judge", *inputs, "--judge", judge, "--judge-model", llama.spec,
        "--judge-base-url", llama.base_url, "--concurrency", "1",
    ]  # fmt: skip
    return subprocess.run([*pageindex_cli(), *args], capture_output=True, text=True, env=env, timeout=1500)


def test_llm_and_hybrid_calibration_reports_on_the_real_server(llama, tmp_path):
    data = _labels(tmp_path)
    llm = _judge(llama, tmp_path, "llm", "--labels", str(data), "--per-file")
    assert llm.returncode == 0, llm.stderr
    assert f"4 rows judged by llm:{llama.spec} (version judge_v3)" in llm.stdout
    for expected in ("config_a", "config_b", "mean of files", "worst:", "all rows pooled"):
        assert expected in llm.stdout, expected
    # hybrid: the rules settle the figure rows and the refusal; only the text answer goes to the model
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps(r) + "\n" for rows in ROWS.values() for r in rows))
    out = tmp_path / "verdicts.jsonl"
    hybrid = _judge(llama, tmp_path, "hybrid", "--input", str(answers), "--out", str(out))
    assert hybrid.returncode == 0, hybrid.stderr
    rows = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert {i: r["decided_by"] for i, r in rows.items()} == {
        "a1": "rules",
        "a2": "rules",
        "b1": "rules",
        "b2": "llm",
    }
    assert {i: r["verdict"] for i, r in rows.items() if i != "b2"} == {
        "a1": "correct",
        "a2": "refusal",
        "b1": "incorrect",
    }
    assert rows["b2"]["verdict"] in ("correct", "incorrect", "refusal")
    assert rows["b2"]["usage"]["prompt_tokens"] > 0 and rows["a1"]["usage"]["prompt_tokens"] == 0
    # each verdict records the version of the judge that decided it
    assert all(rows[i]["judge_version"].startswith(f"{RULES_VERSION}+") for i in ("a1", "a2", "b1"))
    assert rows["a1"]["judge_version"].endswith("[abstain]") and rows["b2"]["judge_version"] == "judge_v3"
