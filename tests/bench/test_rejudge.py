"""``bench rejudge``: re-score a stored run with another judge, without any retriever, so a
baseline judged by an older judge can be gated against again."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bench.judges.base import make_judge
from bench.rejudge import RejudgeError, rejudge_run
from bench.rundir import load_run
from bench.runinfo import dataset_content_hash, judge_version
from bench.samples import load_samples
from pageindex.cli import app
from tests.bench.runfactory import outcomes, run_info, sample, write_run

RIGHT = "$1,577 million"  # the factory's gold answer
CURRENT = judge_version(make_judge("rules"))


def _cli(*args) -> object:
    return CliRunner().invoke(app, ["bench", *map(str, args)], terminal_width=250)


def _lines(res) -> list[str]:
    return [line for line in res.output.splitlines() if line.strip()]


def _stored_run(directory: Path) -> Path:
    """A run judged by an older rules judge: q000 was wrongly called incorrect, q004's judge call
    failed; q002 is a retriever fail and q003 a retriever error (no answer to judge)."""
    rows = [
        sample("q000", verdict="incorrect", answer=RIGHT),
        sample("q001", verdict="correct"),
        sample("q002", verdict="refusal", judge="retriever_fail", judge_reasoning="gave up"),
        sample("q003", verdict=None, error="TimeoutError: read timed out", answer=""),
        sample("q004", verdict=None, error="judge failed: LLMCallError: boom", answer=RIGHT, judge=None),
    ]
    info = run_info("base", judge_version="rules-0")
    dropped = [{"question_id": "q009", "reason": "pdf_missing", "detail": "DOC_9.pdf"}]
    return write_run(directory, rows, info=info, dropped=dropped)


def test_rejudge_rescores_answers_and_keeps_the_rest(tmp_path: Path) -> None:
    base = _stored_run(tmp_path / "base")
    out = asyncio.run(
        rejudge_run(base, tmp_path / "new", make_judge("rules"), judge_name="rules", command=["x"])
    )
    assert (out.run_id, out.source_run_id, out.judge_version) == ("new", "base", CURRENT)
    assert (out.judged, out.kept, out.changed, out.judge_errors) == (3, 2, 2, 0)
    assert out.status == "finished"

    info = json.loads((tmp_path / "new" / "run.json").read_text())
    assert (info["run_id"], info["judge"], info["judge_version"], info["judge_model"]) == (
        "new",
        "rules",
        CURRENT,
        None,
    )
    assert info["status"] == "finished" and info["builder_version"] == "1.0+handmade"
    assert info["dataset"]["content_sha256"] == "c0ffee"
    rejudge = info["extra"]["rejudge"]
    assert (rejudge["from_run"], rejudge["from_status"], rejudge["judged"], rejudge["changed"]) == (
        "base",
        "finished",
        3,
        2,
    )
    assert rejudge["previous_judge"] == {
        "name": "rules",
        "version": "rules-0",
        "model": None,
        "prompt_version": None,
    }

    by_id = {s.question_id: s for s in load_samples(tmp_path / "new" / "samples.jsonl")}
    assert set(by_id) == {"q000", "q001", "q002", "q003", "q004"}
    assert all(s.run_id == "new" for s in by_id.values())
    q0 = by_id["q000"]
    assert (q0.status, q0.verdict, q0.judge) == ("answer", "correct", "rules")
    assert q0.extra["rejudge"]["verdict"] == "incorrect" and q0.extra["rejudge"]["from_run"] == "base"
    assert q0.retriever_prompt_tokens == 1000 and q0.cost_usd == 0.001  # the retriever's figures stay
    q4 = by_id["q004"]
    assert (q4.status, q4.verdict, q4.error) == ("answer", "correct", None)
    assert (by_id["q002"].verdict, by_id["q002"].judge) == ("refusal", "retriever_fail")
    assert (by_id["q003"].status, by_id["q003"].error) == ("error", "TimeoutError: read timed out")
    assert "rejudge" not in by_id["q003"].extra

    summary = json.loads((tmp_path / "new" / "summary.json").read_text())
    assert (summary["overall"]["correct"], summary["overall"]["n"], summary["n_dropped"]) == (3, 5, 1)
    assert load_run(tmp_path / "new").dropped[0].question_id == "q009"


class _FlakyJudge:
    name = "flaky"
    version = "flaky-2"

    def __init__(self) -> None:
        self.rules = make_judge("rules")

    async def judge(self, question, gold_answer, answer):
        if "q001" in question:
            raise RuntimeError("boom")
        return await self.rules.judge(question, gold_answer, answer)


def test_a_failed_judge_call_keeps_the_answer_with_judge_error(tmp_path: Path) -> None:
    """The rule of bench run: a judge failure never turns an answered sample into an error; the
    next rejudge with a working judge scores it."""
    base = _stored_run(tmp_path / "base")
    out = asyncio.run(rejudge_run(base, tmp_path / "new", _FlakyJudge(), judge_name="flaky"))
    assert (out.judged, out.judge_errors, out.judge_version) == (3, 1, "flaky-2")
    q1 = next(s for s in load_samples(tmp_path / "new" / "samples.jsonl") if s.question_id == "q001")
    assert (q1.status, q1.verdict, q1.error, q1.judge) == ("answer", None, None, "judge_error")
    assert q1.judge_error == "RuntimeError: boom" and q1.answer
    assert q1.extra["rejudge"]["verdict"] == "correct"
    assert out.summary.overall.errored == 1  # the retriever's error only, not the judge's failure
    rules = make_judge("rules")
    again = asyncio.run(rejudge_run(tmp_path / "new", tmp_path / "again", rules, judge_name="rules"))
    assert (again.judged, again.judge_errors) == (3, 0)
    q1 = next(s for s in load_samples(tmp_path / "again" / "samples.jsonl") if s.question_id == "q001")
    assert (q1.status, q1.verdict, q1.judge_error) == ("answer", "correct", None)


def test_older_runs_judge_failures_are_judged_again(tmp_path: Path) -> None:
    """Runs rejudged before this rule recorded a failed judge call as status error."""
    base = _stored_run(tmp_path / "base")
    rows = [json.loads(line) for line in (base / "samples.jsonl").read_text().splitlines()]
    for row in rows:
        if row["question_id"] == "q001":
            row |= {"status": "error", "verdict": None, "error": "judge failed: RuntimeError: boom"}
    (base / "samples.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = asyncio.run(rejudge_run(base, tmp_path / "new", make_judge("rules"), judge_name="rules"))
    q1 = next(s for s in load_samples(tmp_path / "new" / "samples.jsonl") if s.question_id == "q001")
    assert (out.judged, q1.status, q1.verdict, q1.error) == (3, "answer", "correct", None)


def test_output_directory_must_be_new(tmp_path: Path) -> None:
    base = _stored_run(tmp_path / "base")
    before = (base / "samples.jsonl").read_bytes()
    judge = make_judge("rules")
    with pytest.raises(RejudgeError, match="is the run being rejudged"):
        asyncio.run(rejudge_run(base, base, judge, judge_name="rules"))
    other = write_run(tmp_path / "other", outcomes("cc"), info=run_info("other"))
    with pytest.raises(RejudgeError, match=r"already holds a run \(run.json, samples.jsonl"):
        asyncio.run(rejudge_run(base, other, judge, judge_name="rules"))
    assert (base / "samples.jsonl").read_bytes() == before
    assert len(load_samples(other / "samples.jsonl")) == 2


def test_gate_refuses_an_old_judge_until_the_baseline_is_rejudged(tmp_path: Path) -> None:
    # baseline judged by an older rules version that called 12 right answers wrong
    old = [sample(f"q{k:03d}", verdict="incorrect" if k < 12 else "correct", answer=RIGHT) for k in range(30)]
    base = write_run(tmp_path / "base", old, info=run_info("base", judge_version="rules-0"))
    cand_info = run_info("good", judge_version=CURRENT)
    good = write_run(tmp_path / "good", outcomes("c" * 30), info=cand_info)
    bad = write_run(
        tmp_path / "bad", outcomes("i" * 12 + "c" * 18), info=run_info("bad", judge_version=CURRENT)
    )

    res = _cli("gate", good, "--baseline", base, "--max-drop", "0.05")
    assert res.exit_code == 2
    assert _lines(res) == [
        f"error: not comparable: judge version base=rules-0 vs good={CURRENT} "
        "(re-score one with `pageindex bench rejudge`, or pass --allow-changed)"
    ]

    res = _cli("rejudge", base, "--judge", "rules", "-o", tmp_path / "base2")
    assert res.exit_code == 0, res.output
    assert _lines(res) == [
        f"rejudged 30 answers of base with rules (version {CURRENT}): 12 verdicts changed, "
        f"0 samples kept as they were; accuracy 100.0% -> {tmp_path / 'base2'}"
    ]

    res = _cli("gate", good, "--baseline", tmp_path / "base2", "--max-drop", "0.05")
    assert res.exit_code == 0, res.output
    assert "drop +0.0 pp vs baseline base2 (100.0% -> 100.0% on 30 shared samples" in res.output
    res = _cli("gate", bad, "--baseline", tmp_path / "base2", "--max-drop", "0.05")
    assert res.exit_code == 1, res.output
    assert "FAIL  max-drop [agent]: drop +40.0 pp vs baseline base2" in res.output
    assert "gate FAILED: 8/9 rules hold; failed: max-drop[agent]" in res.output


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--judge", "foo"], "error: unknown judge 'foo'; choose one of hybrid, llm, panel, rules"),
        (["--judge", "llm"], "error: --judge llm needs --judge-model"),
        (["-j", "rules", "-c", "0"], "error: --concurrency 0: must be at least 1"),
        (
            ["--judge", "rules", "--max-error-rate", "2"],
            "error: Invalid value for '--max-error-rate': '2' is not a fraction from 0 to 1",
        ),
    ],
)
def test_bad_rejudge_input_is_one_line(tmp_path: Path, args: list[str], expected: str) -> None:
    base = _stored_run(tmp_path / "base")
    res = _cli("rejudge", base, *args, "-o", tmp_path / "new")
    assert res.exit_code == 2
    assert len(_lines(res)) == 1 and _lines(res)[0].startswith(expected), res.output
    assert "Traceback" not in res.output and "pydantic.dev" not in res.output
    assert not (tmp_path / "new").exists()


def test_rejudge_refuses_missing_run_and_taken_output(tmp_path: Path) -> None:
    res = _cli("rejudge", tmp_path / "nope", "--judge", "rules", "-o", tmp_path / "new")
    assert res.exit_code == 2 and _lines(res) == [f"error: run directory {tmp_path / 'nope'} does not exist"]
    base = _stored_run(tmp_path / "base")
    res = _cli("rejudge", base, "--judge", "rules", "-o", base)
    assert res.exit_code == 2 and _lines(res) == [
        f"error: -o {base} is the run being rejudged; choose a new directory"
    ]


def test_rejudge_exits_4_when_judge_calls_fail(tmp_path: Path, monkeypatch) -> None:
    import bench.cli.judge as judge_cli

    monkeypatch.setattr(judge_cli, "_build_judge", lambda *a, **k: (_FlakyJudge(), []))
    base = _stored_run(tmp_path / "base")  # 1 of 3 answers fails: 33% > 20%
    res = _cli("rejudge", base, "--judge", "rules", "-o", tmp_path / "new")
    assert res.exit_code == 4, res.output
    assert _lines(res)[-1] == "judge errors: 1 of 3 answers (more than --max-error-rate 0.2)"
    assert len(load_samples(tmp_path / "new" / "samples.jsonl")) == 5  # nothing lost
    res = _cli("rejudge", base, "--judge", "rules", "-o", tmp_path / "new2", "--max-error-rate", "0.5")
    assert res.exit_code == 0, res.output
    # below the rate the answer without a verdict is still said, with how to judge it again (it was not)
    said = [line for line in _lines(res) if line.startswith("warning: ")]
    assert len(said) == 1 and said[0].startswith(
        "warning: 1 answer without a verdict (a failed judge call) counts as not correct; judge them again "
        "with: "  # the command that started it (here pytest's) with --resume
    ) and said[0].endswith(" --resume"), res.output


def test_provenance_of_a_real_run_then_rejudge_and_gate(tmp_path: Path, monkeypatch) -> None:
    from bench.runner import demo_dataset_dir
    from pageindex.retrievers.base import get_retriever
    from pageindex.tree.build import CODE_VERSION

    for var in ("OPENAI_API_KEY", "PAGEINDEX_MODEL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(tmp_path / "cache"))
    run_dir = tmp_path / "run"
    res = _cli("run", "--quiet", "-r", "extractive", "--judge", "rules", "--limit", "3", "--out", run_dir)
    assert res.exit_code == 0, res.output
    info = json.loads((run_dir / "run.json").read_text())
    assert info["builder_version"] == CODE_VERSION
    assert (info["judge"], info["judge_version"], info["judge_model"]) == ("rules", CURRENT, None)
    assert info["prompt_versions"] == {"extractive": get_retriever("extractive").prompt_version}
    assert info["dataset"]["content_sha256"] == dataset_content_hash(demo_dataset_dir())
    assert len(info["dataset"]["content_sha256"]) == 64

    res = _cli("rejudge", run_dir, "--judge", "rules", "-o", tmp_path / "again")
    assert res.exit_code == 0, res.output
    assert "0 verdicts changed" in res.output  # the same judge gives the same verdicts
    res = _cli("gate", tmp_path / "again", "--baseline", run_dir)
    assert res.exit_code == 0, res.output
    assert "WARNING" not in res.output and "PASS  coverage [extractive]: 3 of 3 samples" in res.output


def test_content_hash_follows_questions_documents_and_pdf_sizes(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "pdfs").mkdir(parents=True)
    (data / "questions.jsonl").write_text('{"financebench_id": "q1"}\n')
    (data / "pdfs" / "A.pdf").write_bytes(b"%PDF-1.4 aaaa")
    first = dataset_content_hash(data)
    assert dataset_content_hash(data) == first
    (data / "pdfs" / "A.pdf").write_bytes(b"%PDF-1.4 bbbb")  # same size: not noticed (documented)
    assert dataset_content_hash(data) == first
    (data / "pdfs" / "A.pdf").write_bytes(b"%PDF-1.4 bbbbb")
    resized = dataset_content_hash(data)
    assert resized != first
    (data / "documents.jsonl").write_text('{"doc_name": "A"}\n')
    assert dataset_content_hash(data) not in {first, resized}


def test_rejudge_records_and_replays_the_judge_through_the_cache_file_named(tmp_path, monkeypatch) -> None:
    """``--cache rw --cache-path F`` records the judge's calls in F; ``replay/MODEL --cache replay
    --cache-path F`` judges again from F alone (before, rejudge had no --cache-path, so a replay judge
    could only read the default cache file)."""
    monkeypatch.setenv("PAGEINDEX_SCRIPTED_POLICY", "bench.faults.scripted:policy")
    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(tmp_path / "default-cache"))
    base = _stored_run(tmp_path / "base")
    recording = tmp_path / "judge.sqlite"
    res = _cli("rejudge", base, "--judge", "llm", "--judge-model", "scripted", "--cache", "rw",
               "--cache-path", recording, "-o", tmp_path / "recorded")  # fmt: skip
    assert res.exit_code == 0, res.output
    assert recording.is_file() and not (tmp_path / "default-cache").exists()
    res = _cli("rejudge", base, "--judge", "llm", "--judge-model", "replay/scripted", "--cache", "replay",
               "--cache-path", recording, "-o", tmp_path / "replayed")  # fmt: skip
    assert res.exit_code == 0, res.output
    verdicts = {
        name: [s.verdict for s in load_samples(tmp_path / name / "samples.jsonl")]
        for name in ("recorded", "replayed")
    }
    assert verdicts["replayed"] == verdicts["recorded"]
    # A replay from a file that does not exist is refused before anything is judged.
    res = _cli("rejudge", base, "--judge", "llm", "--judge-model", "replay/scripted", "--cache", "replay",
               "--cache-path", tmp_path / "none.sqlite", "-o", tmp_path / "missed")  # fmt: skip
    assert res.exit_code == 2 and "replay needs a recorded cache" in res.output
    assert not (tmp_path / "missed").exists()


@pytest.mark.parametrize(
    "args, says",
    [
        (["--judge", "llm", "--judge-model", "scripted", "--cache-path", "x.sqlite"],
         "error: --cache-path x.sqlite is read only with --cache rw or --cache replay"),
        (["--judge", "rules", "--cache", "rw"],
         "error: --judge rules takes no model: --cache would not be used"),
        (["--judge", "llm", "--judge-model", "scripted", "--cache", "sometimes"],
         "error: --cache 'sometimes': must be off, rw, replay"),
    ],
)
def test_rejudge_cache_options_that_would_not_be_used_are_refused(tmp_path: Path, args, says) -> None:
    base = _stored_run(tmp_path / "base")
    res = _cli("rejudge", base, *args, "-o", tmp_path / "new")
    assert res.exit_code == 2 and len(_lines(res)) == 1, res.output
    assert _lines(res)[0].startswith(says)
    assert not (tmp_path / "new").exists()


class _PricedJudge:
    """A judge whose every verdict is one model call of ``cost`` dollars (None: an unpriced model)."""

    version = "priced-1"

    def __init__(self, cost: float | None) -> None:
        self.cost = cost

    async def assess(self, inp):
        from bench.judges.base import JudgeVerdict
        from pageindex.llm.types import Usage

        usage = Usage(prompt_tokens=40, completion_tokens=5, calls=1, cost_usd=self.cost)
        return JudgeVerdict(verdict="correct", judge="llm:priced", usage=usage)


def _llm_judged(directory: Path, judge_cost: float | None) -> Path:
    """Answers whose retriever made 2 calls for $0.001, judged by an LLM judge (1 call, ``judge_cost``)."""
    rows = []
    for k in range(4):
        answer = sample(f"q{k:03d}", verdict=None, status="answer", judge=None, llm_calls=2, cost_usd=0.001)
        rows.append(asyncio.run(_judged(answer, _PricedJudge(judge_cost))))
    return write_run(directory, rows, info=run_info("base", judge="llm", judge_model="openai/old"))


async def _judged(answer, judge):
    return answer.judged(await judge.assess(answer.judge_input()))


@pytest.mark.parametrize(
    ("old_cost", "new_judge", "calls", "cost"),
    [
        (0.01, "rules", 2, 0.001),  # a free judge: the retriever's figures alone
        (0.01, 0.002, 3, 0.003),  # another priced judge: its call and cost in place of the old one's
        (None, "rules", 2, 0.001),  # an unpriced old judge left the total unknown: the retriever's is known
        (0.01, None, 3, None),  # an unpriced new judge: unknown
    ],
)
def test_rejudge_puts_the_new_judges_calls_and_cost_in_place_of_the_old(
    tmp_path: Path, old_cost, new_judge, calls, cost
) -> None:
    """Review 13: a rejudged run kept the old judge's cost and calls and never added the new judge's,
    so summary, compare and the report priced a rejudged baseline with a judge it no longer had."""
    base = _llm_judged(tmp_path / "base", old_cost)
    first = load_samples(base / "samples.jsonl")[0]
    assert (first.llm_calls, first.cost_usd) == (3, None if old_cost is None else pytest.approx(0.011))
    judge = make_judge("rules") if new_judge == "rules" else _PricedJudge(new_judge)
    out = asyncio.run(rejudge_run(base, tmp_path / "new", judge, judge_name=str(new_judge)))
    for s in load_samples(tmp_path / "new" / "samples.jsonl"):
        assert s.llm_calls == calls
        assert s.cost_usd == (None if cost is None else pytest.approx(cost))
        assert s.extra["rejudge"]["llm_calls"] == 3  # the old figures are kept beside
    assert out.summary.overall.cost_usd == (None if cost is None else pytest.approx(4 * cost))


def test_a_record_from_before_the_retrievers_share_was_kept(tmp_path: Path) -> None:
    """Records written before `retriever_llm_calls`: a judge that used no tokens made no call, so the
    totals are the retriever's; one that used tokens has a share not known, and rejudging leaves its
    calls as they were and its cost unknown rather than guess."""
    from bench.samples import Sample

    row = sample("q000", verdict="correct", llm_calls=2, cost_usd=0.001).model_dump(mode="json")
    for key in ("retriever_llm_calls", "retriever_cost_usd"):
        row.pop(key)
    old_rules = Sample.model_validate(row)
    assert (old_rules.retriever_llm_calls, old_rules.retriever_cost_usd) == (2, 0.001)
    old_llm = Sample.model_validate(row | {"judge_prompt_tokens": 300, "llm_calls": 3, "cost_usd": 0.011})
    bare = old_llm.without_judge()
    assert (bare.llm_calls, bare.cost_usd, bare.verdict, bare.judge_prompt_tokens) == (3, None, None, 0)
    # review 14: rejudged again and again, its calls stay put (they grew by the new judge's each time)
    base = write_run(tmp_path / "old", [old_llm], info=run_info("old", judge="llm", judge_model="openai/old"))
    for k in range(3):
        out = tmp_path / f"again{k}"
        asyncio.run(rejudge_run(base, out, _PricedJudge(0.002), judge_name="llm", judge_model="openai/new"))
        again = load_samples(out / "samples.jsonl")[0]
        assert (again.llm_calls, again.cost_usd, again.verdict) == (3, None, "correct")
        base = out


def test_a_failed_judge_call_counts_its_http_attempts(tmp_path: Path) -> None:
    """Trial 13: a judge call that failed after its retries left `llm_calls` as if no call were made; the
    README says every HTTP attempt is one of the sample's calls. Two 500s (one retry): two calls."""
    from pageindex.llm import ScriptedModel, make_client

    base = write_run(tmp_path / "base", [sample("q000", llm_calls=2, cost_usd=0.001)])
    failing = ScriptedModel(replies=[ScriptedModel.http_error(500), ScriptedModel.http_error(500)])
    client = make_client("scripted", scripted=failing, max_retries=1, role="judge")
    judge = make_judge("llm", model_client=client)
    out = asyncio.run(rejudge_run(base, tmp_path / "new", judge, judge_name="llm", judge_model="scripted"))
    assert out.judge_errors == 1
    s = load_samples(tmp_path / "new" / "samples.jsonl")[0]
    assert (s.verdict, s.judge, s.llm_calls) == (None, "judge_error", 2 + 2)


class _OddJudge:
    """A plug-in judge that returns what ``make`` gives (sync or async ``assess``)."""

    version = "odd-1"

    def __init__(self, name: str, make, *, sync: bool = False) -> None:
        self.name, self._make, self._sync = name, make, sync
        if sync:
            self.assess = lambda inp: self._make()

    async def assess(self, inp):  # replaced by a plain function when sync
        return self._make()


def _assigned_bad_verdict():
    from bench.judges.base import JudgeVerdict

    verdict = JudgeVerdict(verdict="incorrect", judge="odd")
    verdict.verdict = "partially correct"  # pydantic does not check an assignment
    return verdict


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (_assigned_bad_verdict, "returned the verdict 'partially correct', not a JudgeVerdict whose verdict"),
        (lambda: None, "returned NoneType, not a JudgeVerdict"),
        (lambda: "correct", "returned str, not a JudgeVerdict"),
    ],
    ids=["bad-verdict", "none", "str"],
)
def test_a_judge_that_returns_no_verdict_is_a_judge_failure_and_the_run_stays_readable(
    tmp_path: Path, make, says
) -> None:
    """Trial 14: a plug-in judge's invalid verdict was written, and every later command refused the run
    (`line 1 is not a valid sample`); a judge returning None wiped every verdict, "0 verdicts changed",
    exit 0. Now each is that answer's judge failure, naming the judge and what is allowed."""
    base = _stored_run(tmp_path / "base")
    out = asyncio.run(rejudge_run(base, tmp_path / "new", _OddJudge("odd", make), judge_name="odd"))
    assert out.judge_errors == 3 and out.judged == 3
    rows = load_run(tmp_path / "new").samples  # readable
    failed = [s for s in rows if s.judge_error]
    assert len(failed) == 3 and all(s.verdict is None and s.status == "answer" for s in failed)
    assert failed[0].judge_error.startswith(f"invalid_verdict: judge 'odd' {says}")


def test_a_judge_with_a_plain_function_assess_works(tmp_path: Path) -> None:
    """Trial 14: a synchronous `assess` failed every sample ("can't be used in 'await' expression")."""
    from bench.judges.base import JudgeVerdict

    judge = _OddJudge("plain", lambda: JudgeVerdict(verdict="correct", judge="plain"), sync=True)
    base = _stored_run(tmp_path / "base")
    out = asyncio.run(rejudge_run(base, tmp_path / "new", judge, judge_name="plain"))
    assert (out.judged, out.judge_errors) == (3, 0)


def test_the_stored_rejudge_command_holds_no_credential(tmp_path: Path) -> None:
    """Review 16: `bench run` masked its command line in run.json, `bench rejudge` stored argv as
    given, so a `--judge-base-url http://user:pass@host/v1` went into a baseline committed to git."""
    base = _stored_run(tmp_path / "base")
    url = "http://alice:sk-SECRETTOKEN123456@127.0.0.1:9/v1"
    key = "sk-OTHER-987654321"
    argv = ["pageindex", "bench", "rejudge", str(base), "--judge-base-url", url, "--api-key", key]
    asyncio.run(rejudge_run(base, tmp_path / "new", make_judge("rules"), judge_name="rules", command=argv))
    stored = (tmp_path / "new" / "run.json").read_text()
    assert "SECRETTOKEN" not in stored and "OTHER-987654321" not in stored and "alice:" not in stored
    command = json.loads(stored)["extra"]["rejudge"]["command"]
    assert command[:4] == argv[:4] and "127.0.0.1:9/v1" in command[5] and command[-1] == "***"


def test_an_interrupted_rejudge_goes_on_with_resume(tmp_path: Path) -> None:
    """Trial 15: Ctrl-C left 368 of 540 answers judged, and the same command again said the folder
    "already holds a run": nothing could finish it. --resume judges only what is missing; another
    source or another judge is refused, and the folder is left as it was."""
    rows = [sample(f"q{k:03d}", verdict="incorrect", answer=RIGHT) for k in range(6)]
    base = write_run(tmp_path / "base", rows, info=run_info("base", judge_version="rules-0"))
    rules = make_judge("rules")

    class StopAfterTwo:
        name, version, calls = "rules", rules.version, 0

        def judge(self, question, gold, answer):
            StopAfterTwo.calls += 1
            if StopAfterTwo.calls == 2:  # a failed judge call before the interrupt: judged again on resume
                raise ConnectionError("judge endpoint reset")
            if StopAfterTwo.calls > 2:
                raise KeyboardInterrupt
            return rules.judge(question, gold, answer)

    out = tmp_path / "new"
    with pytest.raises(KeyboardInterrupt):
        asyncio.run(rejudge_run(base, out, StopAfterTwo(), judge_name="rules", concurrency=1, command=["a"]))
    assert len(load_samples(out / "samples.jsonl")) == 2
    assert json.loads((out / "run.json").read_text())["status"] == "interrupted"
    again = _cli("rejudge", base, "--judge", "rules", "-o", out)
    assert again.exit_code == 2 and "--resume" not in again.output  # not silently resumed

    other = write_run(tmp_path / "other", rows, info=run_info("other"))
    refused = _cli("rejudge", other, "--judge", "rules", "-o", out, "--resume")
    assert refused.exit_code == 2 and "it is not a rejudge of run other (of run base)" in refused.output
    before = (out / "samples.jsonl").read_bytes()
    with pytest.raises(RejudgeError, match="judged by rules .*, not flaky flaky-2; resume with the same"):
        asyncio.run(rejudge_run(base, out, _FlakyJudge(), judge_name="flaky", resume=True))
    assert (out / "samples.jsonl").read_bytes() == before

    done = _cli("rejudge", base, "--judge", "rules", "-o", out, "--resume")
    assert done.exit_code == 0, done.output
    finished = load_run(out)
    assert finished.info.status == "finished" and len(finished.samples) == 6
    assert {s.verdict for s in finished.samples} == {"correct"}
    assert not any(s.judge_error for s in finished.samples)
    (retried,) = load_samples(out / "retried.jsonl")  # the failed attempt stays on record
    assert retried.judge_error and retried.verdict is None
    assert finished.info.extra["rejudge"]["command"] == ["a"]
    assert (finished.info.extra["rejudge"]["judged"], finished.info.extra["rejudge"]["changed"]) == (7, 6)
    assert len(finished.info.extra["rejudge"]["resumes"]) == 1


@pytest.mark.parametrize("sig,ignored", [(15, False), (2, True)])
def test_rejudge_stops_on_sigterm_and_on_an_inherited_ignored_sigint(tmp_path: Path, sig, ignored) -> None:
    """Trial 16: a rejudge started in the background by a script (SIGINT inherited as ignored) ran to the
    end whatever `kill -INT` said, and SIGTERM (a cancelled CI job) left run.json "running" with no
    summary; both now stop it as Ctrl-C does (interrupted, exit 130, the resume line printed)."""
    import signal
    import subprocess
    import sys
    import time

    rows = [sample(f"q{k:05d}", verdict="incorrect", answer=RIGHT) for k in range(4000)]
    base = write_run(tmp_path / "base", rows, info=run_info("base", judge_version="rules-0"))
    out = tmp_path / "new"
    command = [sys.executable, "-c", "from pageindex.cli import main; main()", "bench", "rejudge", str(base),
               "--judge", "rules", "--concurrency", "1", "-o", str(out)]  # fmt: skip
    ignore = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignored else None
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
    proc = subprocess.Popen(command, preexec_fn=ignore, **pipes)
    try:
        deadline = time.monotonic() + 60
        samples = out / "samples.jsonl"
        while not (samples.exists() and samples.stat().st_size > 0):
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.02)
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, (stdout, stderr)
    assert "interrupted: the answers judged so far are in" in stdout and "--resume" in stdout
    assert json.loads((out / "run.json").read_text())["status"] == "interrupted"
    assert len(load_samples(out / "samples.jsonl")) < 4000


def test_a_rejudge_holds_its_folder_while_it_writes(tmp_path: Path) -> None:
    """Trial 2 (Nov 27): two `bench rejudge --resume -o X` started together both judged the 17
    answers left and appended them, so samples.jsonl held every one twice (and the judge was paid
    twice). A rejudge now holds -o as a bench run holds its folder: a second one into it, new or
    --resume, is refused with -o untouched, and the folder is free again once the first has ended."""
    from bench.rundir import FolderClaim

    rows = [sample(f"q{k:03d}", verdict="incorrect", answer=RIGHT) for k in range(3)]
    base = write_run(tmp_path / "base", rows, info=run_info("base", judge_version="rules-0"))
    out = tmp_path / "new"
    out.mkdir()
    held = FolderClaim.take(out)  # another rejudge (or bench run) writing into it now
    try:
        refused = _cli("rejudge", base, "--judge", "rules", "-o", out)
        assert refused.exit_code == 2, refused.output
        assert _lines(refused) == [
            f"error: -o {out}: another rejudge or bench run is using it now; wait for it to end"
        ]
        assert list(out.iterdir()) == []
    finally:
        held.release()

    first = _cli("rejudge", base, "--judge", "rules", "-o", out)
    assert first.exit_code == 0, first.output
    before = (out / "samples.jsonl").read_bytes()
    held = FolderClaim.take(out)
    try:
        again = _cli("rejudge", base, "--judge", "rules", "-o", out, "--resume")
        assert again.exit_code == 2 and "is using it now" in again.output, again.output
        assert (out / "samples.jsonl").read_bytes() == before
    finally:
        held.release()
    free = FolderClaim.take(out)  # released by the rejudges that ended
    free.release()


def test_bench_run_resume_of_a_rejudged_run_says_how_to_continue_it(tmp_path: Path) -> None:
    """It said "scored with other versions (judge version ...)": a rejudged run keeps its source's run
    settings while its run.json names the new judge (trial 18)."""
    base = _stored_run(tmp_path / "base")
    new = tmp_path / "my runs" / "new"
    command = ["pageindex", "bench", "rejudge", str(base), "--judge", "rules", "-o", str(new)]
    asyncio.run(rejudge_run(base, new, make_judge("rules"), judge_name="rules", command=command))
    before = {p.name: p.read_bytes() for p in new.iterdir()}
    result = CliRunner().invoke(app, ["bench", "run", "--resume", str(new), "-q"])
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())  # one error line (wrapped at the terminal's width)
    assert said == (
        f"error: cannot resume {new}: bench rejudge wrote it (from {base}); continue it with bench rejudge "
        f"--resume: pageindex bench rejudge {base} --judge rules -o '{new}' --resume"
    ), result.output
    assert result.output.count("error:") == 1 and {p.name: p.read_bytes() for p in new.iterdir()} == before


def test_a_refused_rejudge_removes_every_folder_it_made(tmp_path: Path, monkeypatch) -> None:
    """"Nothing was written" means no folder either: a refusal once -o is held removed -o itself but
    left the parents it had made (`-o new/sub/out`); one claim object (bench.rundir.FolderClaim) now
    makes, holds and removes them for a run and a rejudge alike. A folder that was there stays."""
    from bench.rundir import RunDir

    base = _stored_run(tmp_path / "base")
    monkeypatch.setattr(RunDir, "unwritable", lambda self: "the disk is read-only")
    out = tmp_path / "new" / "sub" / "out"
    res = _cli("rejudge", base, "--judge", "rules", "-o", out)
    assert res.exit_code == 2, res.output
    assert _lines(res) == [f"error: -o {out}: the disk is read-only; nothing was written"]
    assert not (tmp_path / "new").exists()
    (tmp_path / "kept").mkdir()
    res = _cli("rejudge", base, "--judge", "rules", "-o", tmp_path / "kept" / "out")
    assert res.exit_code == 2, res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["base", "kept"]
    assert not any((tmp_path / "kept").iterdir())


def test_the_rejudge_line_says_one_answer_in_the_singular(tmp_path: Path) -> None:
    """'rejudged 1 answers ... 1 verdicts changed' (the summary's '1 answers have' was fixed in 5696e18;
    this line said its counts the same way)."""
    base = write_run(tmp_path / "base", [sample("q000", verdict="incorrect", answer=RIGHT)],
                     info=run_info("base", judge_version="rules-0"))  # fmt: skip
    res = _cli("rejudge", base, "--judge", "rules", "-o", tmp_path / "new")
    assert res.exit_code == 0, res.output
    assert _lines(res) == [
        f"rejudged 1 answer of base with rules (version {CURRENT}): 1 verdict changed, "
        f"0 samples kept as they were; accuracy 100.0% -> {tmp_path / 'new'}"
    ]


def test_a_judge_endpoint_that_goes_away_stops_the_rejudge_failed_and_resume_ends_it(tmp_path, monkeypatch):
    """As ``bench run`` does: the answers left are not each recorded as a failed judge call (a killed
    judge server made a rejudge write 60 such rows and end ``finished``); the rejudge stops ``failed``,
    says why and how to go on, exits 4, and ``--resume`` judges the rest."""
    import socket
    import threading

    from bench.faults import FaultServer
    from bench.faults.scripted import ChatPolicy

    for var in ("OPENAI_API_KEY", "PAGEINDEX_MODEL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(tmp_path / "cache"))
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    servers: list[FaultServer] = []

    class GoneAfterOne(ChatPolicy):
        calls = 0

        def judge(self, chat):
            GoneAfterOne.calls += 1
            if GoneAfterOne.calls == 2:  # the server is killed while it computes its second verdict
                threading.Thread(target=servers[0].stop).start()
            return super().judge(chat)

    base = _stored_run(tmp_path / "base")  # three answers to judge
    out = tmp_path / "new"
    servers.append(FaultServer(policy=GoneAfterOne(), port=port).start())
    args = ["rejudge", base, "--judge", "llm", "--judge-model", "openai/fault-model", "--judge-base-url",
            servers[0].base_url, "-o", out, "-c", "1"]  # fmt: skip
    monkeypatch.setattr("sys.argv", ["pageindex", "bench", *map(str, args)])  # what run.json says to type
    try:
        res = _cli(*args)
    finally:
        servers[0].stop()
    assert res.exit_code == 4, res.output
    info = json.loads((out / "run.json").read_text())
    assert info["status"] == "failed"
    detail = info["status_detail"]
    assert detail.startswith("the judge model endpoint stopped answering during the rejudge (")
    assert "; a probe after it: connection refused)" in detail
    assert detail.endswith(f"--judge-base-url {servers[0].base_url} -o {out} -c 1 --resume")
    assert _lines(res)[-1] == f"error: {detail}"
    judged = [s for s in load_samples(out / "samples.jsonl") if s.extra.get("rejudge")]
    assert 1 <= len(judged) <= 2 and all(s.verdict and not s.judge_error for s in judged)
    with FaultServer(policy=ChatPolicy(), port=port):
        res = _cli(*args, "--resume")
    assert res.exit_code == 0, res.output
    info = json.loads((out / "run.json").read_text())
    assert (info["status"], info["status_detail"]) == ("finished", None)
    samples = load_samples(out / "samples.jsonl")
    assert len(samples) == 5 and sum(bool(s.extra.get("rejudge")) for s in samples) == 3
    assert not any(s.judge_error for s in samples)


UNSETTLED = {  # the rules (abstaining) leave this one uncertain, leaning incorrect: hybrid asks the model
    "question": "Did the consumer segment grow?",
    "gold_answer": "The consumer segment shrunk by 0.9% organically.",
    "answer": "The segment saw some changes in the year.",
}


def test_what_hybrid_and_panel_record_beside_the_verdict_is_kept(tmp_path: Path) -> None:
    """README: hybrid records which judge decided (`decided_by`) and the rules' leaning (`rules_verdict`),
    a panel its agreement; a run's samples kept neither (only the verdict, judge and reasoning)."""
    from pageindex.llm import ScriptedModel, make_client

    def client() -> object:
        says = ScriptedModel(policy=lambda request: {"verdict": "correct", "reasoning": "same figure"})
        return make_client("scripted", scripted=says, role="judge")

    base = write_run(tmp_path / "base", [sample("q000", verdict="incorrect", **UNSETTLED)])
    hybrid = make_judge("hybrid", model_client=client())
    asyncio.run(rejudge_run(base, tmp_path / "hyb", hybrid, judge_name="hybrid", judge_model="scripted"))
    s = load_samples(tmp_path / "hyb" / "samples.jsonl")[0]
    assert (s.verdict, s.judge) == ("correct", "llm:scripted")
    assert (s.judge_details["decided_by"], s.judge_details["rules_verdict"]) == ("llm", "incorrect")

    panel = make_judge("panel", model_client=[client(), client()])
    asyncio.run(rejudge_run(tmp_path / "hyb", tmp_path / "pan", panel, judge_name="panel", judge_model="s,s"))
    s = load_samples(tmp_path / "pan" / "samples.jsonl")[0]
    assert s.judge_details["agreement"] == 1.0 and len(s.judge_details["votes"]) == 2
    assert "decided_by" not in s.judge_details  # the earlier judge's details go with its verdict


def test_hybrid_and_panel_runs_record_their_judge_prompt_version(tmp_path: Path) -> None:
    """run.json's `judge_prompt_version` (compare warns on a difference, the report shows it) was None
    for hybrid and panel, whose LLM judges ask with judge_v3 as llm's do."""
    from bench.judges.llm import PROMPT_VERSION
    from pageindex.llm import ScriptedModel, make_client

    def client() -> object:
        says = ScriptedModel(policy=lambda request: {"verdict": "correct", "reasoning": "same figure"})
        return make_client("scripted", scripted=says, role="judge")

    base = write_run(tmp_path / "base", [sample("q000", verdict="incorrect", **UNSETTLED)])
    for name, clients in (("llm", client()), ("hybrid", client()), ("panel", [client(), client()])):
        judge = make_judge(name, model_client=clients)
        asyncio.run(rejudge_run(base, tmp_path / name, judge, judge_name=name, judge_model="scripted"))
        info = json.loads((tmp_path / name / "run.json").read_text())
        assert info["judge_prompt_version"] == PROMPT_VERSION == "judge_v3", name


def test_rejudging_a_run_that_has_not_finished_says_so(tmp_path: Path) -> None:
    """A run still running (its folder held by its process) or killed part-way is rejudged on the
    samples it holds; the rejudge says so on stderr (it said only its accuracy, exit 0, as of a
    whole run)."""
    from bench.rundir import FolderClaim

    rows = [sample("q000"), sample("q001", verdict="incorrect")]
    info = run_info("live", status="running", ended_at=None)
    live = write_run(tmp_path / "live", rows, info=info)
    claim = FolderClaim.take(live)
    try:
        res = _cli("rejudge", live, "--judge", "rules", "-o", tmp_path / "live-rj")
    finally:
        claim.release()
    assert res.exit_code == 0, res.output
    assert (
        "note: live is still running with 2 samples: the rejudge holds those only and keeps that status; "
        "rejudge it again once it has finished"
    ) in " ".join(_lines(res))
    killed = _cli("rejudge", live, "--judge", "rules", "-o", tmp_path / "killed-rj")
    assert killed.exit_code == 0, killed.output
    assert "note: live is running, but no process is running it (killed, or its machine stopped) with 2 " in (
        " ".join(_lines(killed))
    )
    done = _cli("rejudge", _stored_run(tmp_path / "base"), "--judge", "rules", "-o", tmp_path / "base-rj")
    assert done.exit_code == 0 and "note:" not in done.output, done.output
