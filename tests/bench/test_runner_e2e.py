"""``pageindex bench run`` end to end over real FinanceBench filings with the scripted model
(bench.faults.scripted): every file of the run directory, a resumed run after a crash, budget
exhaustion, and questions dropped with their reasons."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from bench.config import RunConfig
from bench.faults.scripted import policy
from bench.faults.soak import check_run, comparable_summary, tear_last_line
from bench.runner import Runner, RunOutcome, RunSetupError
from bench.samples import Sample, load_samples
from pageindex.retrievers.base import get_retriever

DOCS = {"3M_2018_10K": 2, "AMCOR_2023Q4_EARNINGS": 2, "ULTABEAUTY_2023Q4_EARNINGS": 2}
ALL_RETRIEVERS = ["agent", "planner", "iterative", "followup", "oracle", "bm25"]


@pytest.fixture(scope="module")
def fb_subset(fb_dir: Path, tmp_path_factory) -> Path:
    """Six real questions over three real filings (PDFs symlinked), plus two that must be
    dropped: one whose PDF is missing, one whose evidence page is beyond the filing's end."""
    root = tmp_path_factory.mktemp("fb_subset")
    (root / "pdfs").mkdir()
    rows = [
        json.loads(line) for line in (fb_dir / "questions.jsonl").read_text().splitlines() if line.strip()
    ]
    picked, taken = [], dict.fromkeys(DOCS, 0)
    for row in rows:
        doc = row["doc_name"]
        if doc in taken and taken[doc] < DOCS[doc]:
            picked.append(row)
            taken[doc] += 1
    ghost = {**picked[-1], "financebench_id": "e2e_missing_pdf", "doc_name": "GHOST_2023_10K"}
    ghost["question"] = "What was Ghost Corp's total revenue in FY2023?"
    far = {**picked[-1], "financebench_id": "e2e_page_out_of_range"}
    far["question"] = "What was Ulta Beauty's gross profit in fiscal 2023, in USD millions?"
    far["evidence"] = [{**far["evidence"][0], "evidence_page_num": 499}]
    picked += [ghost, far]
    (root / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in picked))
    docs = [
        json.loads(line) for line in (fb_dir / "documents.jsonl").read_text().splitlines() if line.strip()
    ]
    keep = [d for d in docs if d["doc_name"] in DOCS]
    keep.append({**keep[0], "doc_name": "GHOST_2023_10K", "company": "Ghost"})
    (root / "documents.jsonl").write_text("".join(json.dumps(d) + "\n" for d in keep))
    for doc in DOCS:
        (root / "pdfs" / f"{doc}.pdf").symlink_to(fb_dir / "pdfs" / f"{doc}.pdf")
    return root


@pytest.fixture(scope="module")
def tree_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("trees")


def run(config: RunConfig, **kwargs) -> RunOutcome:
    return asyncio.run(Runner(config, scripted=policy, command=["pageindex", "bench", "run"], **kwargs).run())


def config(data: Path, out: Path, trees: Path, **changes) -> RunConfig:
    base = dict(
        data_dir=data, out=out, model="scripted", tree_cache_dir=trees, concurrency=4,
        scripted_policy="bench.faults.scripted:policy",
    )  # fmt: skip
    return RunConfig(**{**base, **changes})


@pytest.fixture(scope="module")
def llm_run(fb_subset: Path, tree_cache: Path, tmp_path_factory) -> RunOutcome:
    out = tmp_path_factory.mktemp("runs") / "llm"
    return run(config(fb_subset, out, tree_cache, retrievers=ALL_RETRIEVERS, judge="llm"))


def test_every_file_of_the_run_directory(llm_run: RunOutcome, fb_subset: Path):
    run_dir = llm_run.run_dir
    assert sorted(p.name for p in run_dir.iterdir()) == [
        "dropped.jsonl",
        "events.log",
        "run.json",
        "samples.jsonl",
        "summary.json",
    ]
    log = (run_dir / "events.log").read_text()
    assert "HTTP Request: POST" in log  # the library's log lines of the run land here, not on the terminal

    info = json.loads((run_dir / "run.json").read_text())
    assert info["status"] == "finished" and info["ended_at"] and info["started_at"] <= info["ended_at"]
    assert info["command"] == ["pageindex", "bench", "run"] and info["git_commit"] and info["package_version"]
    assert info["dataset"]["path"] == str(fb_subset) and len(info["dataset"]["sha256"]) == 64
    assert info["dataset"]["questions"] == 6 and info["dataset"]["dropped"] == 2
    assert info["retrievers"] == ALL_RETRIEVERS and info["model"] == "scripted"
    assert info["prompt_versions"] == {r: get_retriever(r).prompt_version for r in ALL_RETRIEVERS}
    assert info["prompt_versions"]["agent"] == "agent_v1"
    assert (
        info["judge"] == "llm"
        and info["judge_model"] == "scripted"
        and info["judge_prompt_version"] == "judge_v3"
    )
    assert info["extra"]["config"]["scripted_policy"] == "bench.faults.scripted:policy"
    assert "key" not in json.dumps(info).lower().replace("keys", "")  # no API key field or value

    rows = [json.loads(line) for line in (run_dir / "samples.jsonl").read_text().splitlines()]
    assert len(rows) == 36 and len({(r["question_id"], r["retriever"], r["repeat"]) for r in rows}) == 36
    required = set(Sample.model_fields)
    for r in rows:
        assert required <= set(r), required - set(r)
        assert r["status"] in {"answer", "fail", "error"} and r["run_id"] == "llm"
        assert r["evidence_hit"] == bool(set(r["evidence_pages"]) & set(r["pages_fetched"]))
        if r["status"] == "answer":
            assert r["verdict"] in {"correct", "incorrect", "refusal"} and r["judge"] == "llm:scripted"
            assert r["judge_prompt_tokens"] > 0 and r["judge_reasoning"]
        assert r["retriever_prompt_tokens"] > 0 and r["llm_calls"] >= 1
        assert r["extra"]["prompt_version"] == info["prompt_versions"][r["retriever"]]
    answered = [r for r in rows if r["status"] == "answer"]
    assert len(answered) >= 30  # the scripted model answers plausibly: fetched sections, real figures
    capex = [r for r in rows if r["question_id"] == "financebench_id_03029"]
    assert {r["retriever"] for r in capex if r["verdict"] == "correct"} >= {"agent", "oracle", "iterative"}
    assert all(60 in r["pages_fetched"] for r in capex if r["retriever"] in {"agent", "oracle"})
    assert any(s["verified"] for r in answered for s in r["sources"])

    summary = json.loads((run_dir / "summary.json").read_text())
    check = check_run(run_dir)
    assert check.ok, check
    assert summary["n_samples"] == 36 and summary["n_dropped"] == 2
    assert summary["overall"]["correct"] == sum(r["verdict"] == "correct" for r in rows)
    hits = [r["evidence_hit"] for r in rows if r["evidence_hit"] is not None]
    assert summary["overall"]["evidence_hit_rate"] == pytest.approx(sum(hits) / len(hits))
    assert {g["group"]: g["n"] for g in summary["by_retriever"]} == dict.fromkeys(ALL_RETRIEVERS, 6)

    dropped = {
        d["question_id"]: d for d in map(json.loads, (run_dir / "dropped.jsonl").read_text().splitlines())
    }
    assert dropped["e2e_missing_pdf"]["reason"] == "pdf_missing"
    assert "GHOST_2023_10K" in dropped["e2e_missing_pdf"]["detail"]
    assert dropped["e2e_page_out_of_range"]["reason"] == "evidence_page_out_of_range"
    assert summary["dropped_reasons"] == {"pdf_missing": 1, "evidence_page_out_of_range": 1}


def test_rules_judge_crash_and_resume(fb_subset: Path, tree_cache: Path, tmp_path: Path):
    cfg = dict(retrievers=["agent", "oracle", "bm25"], judge="rules")
    reference = run(config(fb_subset, tmp_path / "ref", tree_cache, **cfg))
    ref_rows = load_samples(reference.run_dir / "samples.jsonl")
    assert len(ref_rows) == 18 and all(r.judge in {"rules", None, "retriever_fail"} for r in ref_rows)

    # A crash: the process died after 7 samples, in the middle of writing the 8th.
    crashed = tmp_path / "crashed"
    shutil.copytree(reference.run_dir, crashed)
    lines = (crashed / "samples.jsonl").read_text().splitlines(keepends=True)
    (crashed / "samples.jsonl").write_text("".join(lines[:8]))
    assert tear_last_line(crashed / "samples.jsonl")
    (crashed / "summary.json").unlink()
    info = json.loads((crashed / "run.json").read_text())
    (crashed / "run.json").write_text(json.dumps({**info, "status": "running", "ended_at": None}))

    resumed = run(RunConfig(), resume_dir=crashed)
    assert resumed.status == "finished" and resumed.samples_skipped == 7 and resumed.samples_written == 11
    assert any("partial last line" in w for w in resumed.warnings)
    rows = load_samples(crashed / "samples.jsonl")
    assert sorted(r.key for r in rows) == sorted(r.key for r in ref_rows)  # no loss, no duplicate
    by_key = {r.key: r for r in ref_rows}
    for r in rows:
        ref = by_key[r.key]
        assert (r.answer, r.verdict, r.tokens) == (ref.answer, ref.verdict, ref.tokens)
    assert check_run(crashed).ok
    a = comparable_summary(json.loads((crashed / "summary.json").read_text()))
    b = comparable_summary(json.loads((reference.run_dir / "summary.json").read_text()))
    assert a == b

    again = asyncio.run(  # nothing left to do: nothing written twice
        Runner(RunConfig(), scripted=policy, command=["pageindex", "bench", "run", "--resume", str(crashed)],
               resume_dir=crashed).run()
    )  # fmt: skip
    assert again.samples_written == 0 and len(load_samples(crashed / "samples.jsonl")) == 18
    # the command that started the run stays the one recorded; each resume is added with its time
    info = json.loads((crashed / "run.json").read_text())
    assert info["command"] == ["pageindex", "bench", "run"]
    assert [r["command"] for r in info["extra"]["resumes"]] == [
        ["pageindex", "bench", "run"], ["pageindex", "bench", "run", "--resume", str(crashed)]
    ]


def test_resume_refuses_a_run_started_with_another_judge_version(
    fb_subset: Path, tree_cache: Path, tmp_path: Path
):
    """A resumed run's new samples would be scored by this install: a judge, tree builder or
    dataset that changed since the run started would mix versions in one run, so it is refused."""
    done = run(config(fb_subset, tmp_path / "run", tree_cache, retrievers=["bm25"], judge="rules"))
    info = json.loads((done.run_dir / "run.json").read_text())
    assert info["judge_version"] and info["builder_version"]
    before = (done.run_dir / "samples.jsonl").read_text()
    stale = {**info, "status": "interrupted", "judge_version": "rules 0+old", "builder_version": "0.1"}
    (done.run_dir / "run.json").write_text(json.dumps(stale))
    with pytest.raises(RunSetupError) as err:
        run(RunConfig(), resume_dir=done.run_dir)
    message = str(err.value)
    assert "cannot resume" in message and "judge version rules 0+old -> " in message
    assert "tree builder version 0.1 -> " in message and "dataset content hash" not in message
    assert (done.run_dir / "samples.jsonl").read_text() == before  # nothing written
    assert json.loads((done.run_dir / "run.json").read_text())["judge_version"] == "rules 0+old"


def test_budget_exhaustion_then_resume_completes(fb_subset: Path, tree_cache: Path, tmp_path: Path):
    cfg = config(fb_subset, tmp_path / "budget", tree_cache, retrievers=["agent", "iterative"], judge="llm",
                 budget_tokens=30_000, concurrency=2)  # fmt: skip
    first = run(cfg)
    assert first.status == "aborted_due_to_budget"
    info = json.loads((first.run_dir / "run.json").read_text())
    assert info["status"] == "aborted_due_to_budget" and info["budget"] == {"tokens": 30_000}
    rows = load_samples(first.run_dir / "samples.jsonl")
    assert 1 <= len(rows) < 12
    summary = json.loads((first.run_dir / "summary.json").read_text())
    assert summary["status"] == "aborted_due_to_budget" and summary["n_samples"] == len(rows)
    spent = sum(r.tokens + r.judge_prompt_tokens + r.judge_completion_tokens for r in rows)
    assert spent >= 30_000 - 15_000  # it stopped because the budget was (nearly) spent, not earlier

    done = run(RunConfig(), resume_dir=first.run_dir, resume_overrides={"budget_tokens": 10_000_000})
    assert done.status == "finished" and done.samples_skipped == len(rows)
    final = load_samples(first.run_dir / "samples.jsonl")
    assert len(final) == 12 and len({r.key for r in final}) == 12
    assert check_run(first.run_dir).ok
    assert json.loads((first.run_dir / "run.json").read_text())["budget"] == {"tokens": 10_000_000}


def test_an_unknown_option_of_a_retriever_that_does_not_run_is_refused(fb_subset: Path, tree_cache: Path,
                                                                       tmp_path: Path):  # fmt: skip
    """``-r extractive --opt agent.max_turn=3``: the typo is an error even though agent does not run
    this time (it was silently ignored); nothing is written."""
    from pageindex.retrievers.base import RetrieverConfigError

    bad = config(fb_subset, tmp_path / "run", tree_cache, retrievers=["extractive"],
                 retriever_options={"agent": {"max_turn": "3"}})  # fmt: skip
    with pytest.raises(RetrieverConfigError, match="retriever 'agent': unknown option 'max_turn'"):
        run(bad)
    assert not (tmp_path / "run" / "samples.jsonl").exists()
