"""The planner retriever over the real 3M 2018 10-K, driven by the scripted model.

Facts relied on (3M_2018_10K): ``item_8/cash_flows`` is PDF page 60 and shows ``(1,577)`` for
2018 purchases of PP&E; ``item_8/income`` is page 56 and shows net sales ``32,765``.
"""

from __future__ import annotations

import asyncio
import re

import pytest

from pageindex.llm import ScriptedModel, ScriptedRequest, make_client
from pageindex.llm.cache import LLMCache
from pageindex.retrievers import RetrieverConfigError, aretrieve, retrieve
from tests.retrievers.policies import shown_pages, usage_of

QUESTION = "What was 3M's FY2018 capital expenditure as a percentage of net sales?"
CAPEX = {"name": "capex_2018", "value": "(1,577)", "unit": "USD millions", "page": 60, "quote": "(1,577)"}
SALES = {"name": "sales_2018", "value": "32,765", "unit": "USD millions", "page": 56, "quote": "32,765"}
ANSWER = {
    "status": "answer",
    "answer": "4.8% (1,577 / 32,765)",
    "sources": [{"node_id": "item_8/cash_flows", "page": 60, "quote": "(1,577)"},
                {"node_id": "item_8/income", "page": 56, "quote": "32,765"}],
    "confidence": 0.8,
}


def fetch(tid, node, outputs, deps=()):
    return {"id": tid, "kind": "fetch_extract", "goal": f"get {', '.join(outputs)}", "node_ids": [node],
            "outputs": outputs, "depends_on": list(deps)}


def compute(tid, expression, output, deps):
    return {"id": tid, "kind": "compute", "goal": "compute", "expression": expression, "output": output,
            "depends_on": deps}


def synth(tid, deps):
    return {"id": tid, "kind": "synthesise", "goal": "answer the question", "depends_on": deps}


GOOD_PLAN = {"rationale": "two statements, one ratio", "tasks": [
    fetch("t1", "item_8/cash_flows", ["capex_2018"]),
    fetch("t2", "item_8/income", ["sales_2018"]),
    compute("t3", "abs(capex_2018) / sales_2018 * 100", "capex_pct", ["t1", "t2"]),
    synth("t4", ["t1", "t3"]),
]}


def task_of(req: ScriptedRequest) -> str:
    m = re.search(r"^Task (\w+):", req.last_user, re.MULTILINE)
    return m.group(1) if m else ""


class Policy:
    """Plans from a queue, extraction values by output name, a fixed synthesis; records overlap."""

    def __init__(self, plans, values=None, delay=0.05):
        self.plans = list(plans)
        self.values = values or {"capex_2018": CAPEX, "sales_2018": SALES}
        self.delay = delay
        self.in_flight = 0
        self.max_in_flight = 0

    async def __call__(self, req: ScriptedRequest):
        if req.response_model == "Plan":
            return self.plans.pop(0) if len(self.plans) > 1 else self.plans[0]
        if req.response_model == "ExtractReply":
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            try:
                await asyncio.sleep(self.delay)
            finally:
                self.in_flight -= 1
            wanted = re.search(r"Values to extract: (.*)", req.last_user).group(1).split(", ")
            found = [self.values[w] for w in wanted if w in self.values]
            missing = [w for w in wanted if w not in self.values]
            return {"values": found, "missing": missing, "reason": "not in this section" if missing else None}
        if req.response_model == "GateReply":
            return {"rejected": []}
        return ANSWER


def run_planner(tree, policy, **opts):
    sm = ScriptedModel(policy=policy)
    result = retrieve(tree, QUESTION, retriever="planner", llm=make_client("scripted", scripted=sm), **opts)
    return result, sm


def assert_usage_exact(result, sm):
    prompt, completion, calls = usage_of(sm)
    assert (result.usage.prompt_tokens, result.usage.completion_tokens, result.usage.llm_calls) == (
        prompt, completion, calls)
    by_role = {role: u.calls for role, u in result.usage.by_role.items()}
    assert sum(by_role.values()) == calls


def test_happy_path_runs_independent_fetches_concurrently(tree_3m):
    policy = Policy([GOOD_PLAN])
    result, sm = run_planner(tree_3m, policy)
    assert result.status == "answer", result.reason or result.error
    assert result.answer.startswith("4.8%")
    assert result.extra["computed"]["capex_pct"] == pytest.approx(1577 / 32765 * 100)
    assert policy.max_in_flight == 2  # t1 and t2 were in flight at the same time
    models = [r.response_model for r in sm.requests]
    assert models == ["Plan", "ExtractReply", "ExtractReply", "AnswerWithSources"]
    assert result.pages_fetched == [56, 60] == shown_pages(sm)
    assert_usage_exact(result, sm)
    assert {role: u.calls for role, u in result.usage.by_role.items()} == {
        "planner": 1, "extraction": 2, "synthesis": 1}
    assert sorted((f.label, f.value, f.page, f.verified) for f in result.findings) == [
        ("capex_2018", "(1,577)", 60, True), ("sales_2018", "32,765", 56, True)
    ]
    assert all(s.verified for s in result.sources)
    assert result.iterations == 1 and result.extra["replans"] == 0
    assert result.prompt_version == "planner_v1"
    # the synthesis never sees page text, only the values
    synth_req = sm.requests[-1]
    assert "[page" not in synth_req.last_user and "capex_2018 = (1,577)" in synth_req.last_user
    assert result.tool_calls == 2


def test_dependent_tasks_wait_for_their_inputs(tree_3m):
    chain = {"tasks": [
        fetch("t1", "item_8/cash_flows", ["capex_2018"]),
        fetch("t2", "item_8/income", ["sales_2018"], deps=["t1"]),
        synth("t3", ["t2", "t1"]),
    ]}
    policy = Policy([chain])
    result, _ = run_planner(tree_3m, policy)
    assert result.status == "answer"
    assert policy.max_in_flight == 1


@pytest.mark.parametrize(("printed", "expected"), [("1,577", 3154.0), ("(1,577)", -3154.0), (1577.0, 3154.0)])
def test_numbers_along_edges_in_any_format(tree_3m, printed, expected):
    plan = {"tasks": [
        fetch("t1", "item_8/cash_flows", ["capex_2018"]),
        compute("t2", "capex_2018 * 2", "double", ["t1"]),
        synth("t3", ["t2"]),
    ]}
    policy = Policy([plan], values={"capex_2018": {**CAPEX, "value": printed}})
    result, sm = run_planner(tree_3m, policy)
    assert result.status == "answer", result.reason
    assert result.extra["computed"] == {"double": expected}
    assert f"double = {expected:g}" in sm.requests[-1].last_user


@pytest.mark.parametrize(
    ("bad_plan", "message"),
    [
        ({"tasks": [fetch("t1", "item_8/cash_flows", ["capex_2018"], deps=["t2"]),
                    fetch("t2", "item_8/income", ["sales_2018"], deps=["t1"]), synth("t3", ["t1", "t2"])]},
         "dependency cycle: t1 -> t2 -> t1"),
        ({"tasks": [fetch("t1", "item_8/cash_flows", ["capex_2018"]), synth("t3", ["t1", "t7"])]},
         "task 't3' depends on 't7', which is not a task of the plan"),
    ],
)
def test_invalid_plan_is_rejected_then_replanned(tree_3m, bad_plan, message):
    policy = Policy([bad_plan, GOOD_PLAN])
    result, sm = run_planner(tree_3m, policy)
    assert result.status == "answer"
    errors = [e.message for e in result.trace if e.kind == "error"]
    assert any(message in e for e in errors)
    planner_reqs = [r for r in sm.requests if r.response_model == "Plan"]
    assert len(planner_reqs) == 2
    assert "Your previous plan was rejected" in planner_reqs[1].last_user
    assert message in planner_reqs[1].last_user
    assert result.extra["rounds"][0]["rejected"].count(message) == 1
    assert result.iterations == 2 and result.extra["replans"] == 1
    assert_usage_exact(result, sm)


def test_replans_only_the_failed_part(tree_3m):
    first = {"tasks": [
        fetch("t1", "item_8/cash_flows", ["capex_2018"]),
        fetch("t2", "item_8/balance_sheet", ["sales_2018"]),  # the wrong statement: value missing
        compute("t3", "abs(capex_2018) / sales_2018 * 100", "capex_pct", ["t1", "t2"]),
        synth("t4", ["t3"]),
    ]}
    second = {"tasks": [
        fetch("t5", "item_8/income", ["sales_2018"]),
        compute("t6", "abs(capex_2018) / sales_2018 * 100", "capex_pct", ["t1", "t5"]),
        synth("t7", ["t6", "t1"]),
    ]}

    class BalanceSheetLacksSales(Policy):
        async def __call__(self, req):
            if req.response_model == "ExtractReply" and task_of(req) == "t2":
                return {"values": [], "missing": ["sales_2018"], "reason": "the balance sheet has no sales"}
            return await super().__call__(req)

    policy = BalanceSheetLacksSales([first, second])
    result, sm = run_planner(tree_3m, policy)
    assert result.status == "answer", result.reason
    extraction_tasks = [task_of(r) for r in sm.requests if r.response_model == "ExtractReply"]
    assert sorted(extraction_tasks) == ["t1", "t2", "t5"]  # t1 ran once, kept across the re-plan
    replan = [r for r in sm.requests if r.response_model == "Plan"][1].last_user
    assert "t1 (fetch_extract, done)" in replan and "capex_2018=(1,577)" in replan
    assert "t2 (fetch_extract ['item_8/balance_sheet']) failed: sales_2018 not found" in replan
    assert "t3 (compute" in replan and "blocked" in replan
    assert result.extra["rounds"][0]["failed"] == ["t2"]
    assert result.extra["rounds"][0]["blocked"] == ["t3", "t4"]
    assert [fs.tried for fs in result.failed_searches] == [["item_8/balance_sheet"]]
    assert result.extra["computed"]["capex_pct"] == pytest.approx(1577 / 32765 * 100)
    assert result.pages_fetched == [56, 58, 60] == shown_pages(sm)
    assert_usage_exact(result, sm)


def test_a_model_that_never_finishes_ends_in_fail_after_max_replans(tree_3m):
    plan = {"tasks": [fetch("t1", "item_8/cash_flows", ["capex_2018"]), synth("t2", ["t1"])]}

    def renamed(round_no):  # a fresh plan each round, always asking for a value that is not there
        return {"tasks": [fetch(f"r{round_no}", "item_8/cash_flows", ["dividend_yield"]),
                          synth(f"s{round_no}", [f"r{round_no}"])]}

    policy = Policy([renamed(0), renamed(1), renamed(2), plan])
    result, sm = run_planner(tree_3m, policy)
    assert result.status == "fail"
    assert "no answer after 2 re-plan(s)" in result.reason and "dividend_yield not found" in result.reason
    assert [r.response_model for r in sm.requests].count("Plan") == 3
    assert result.iterations == 3
    assert result.pages_fetched == [60]  # the same section is served from memory, shown once
    assert_usage_exact(result, sm)

    policy = Policy([renamed(0)])
    result, sm = run_planner(tree_3m, policy, max_replans=0)
    assert result.status == "fail" and [r.response_model for r in sm.requests].count("Plan") == 1


def test_synthesis_that_cannot_answer_triggers_a_replan(tree_3m):
    class RefusesFirst(Policy):
        synth_calls = 0

        async def __call__(self, req):
            if req.response_model == "AnswerWithSources":
                self.synth_calls += 1
                if self.synth_calls == 1:
                    return {"status": "fail", "reason": "need net sales too"}
            return await super().__call__(req)

    first = {"tasks": [fetch("t1", "item_8/cash_flows", ["capex_2018"]), synth("t2", ["t1"])]}
    second = {"tasks": [fetch("t3", "item_8/income", ["sales_2018"]), synth("t4", ["t1", "t3"])]}
    result, sm = run_planner(tree_3m, RefusesFirst([first, second]))
    assert result.status == "answer"
    assert "synthesis could not answer from the values: need net sales too" in [
        r for r in sm.requests if r.response_model == "Plan"][1].last_user


def test_malformed_planner_replies_end_in_fail(tree_3m):
    sm = ScriptedModel(policy=lambda req: "I would first look at the cash flow statement.")
    result = retrieve(tree_3m, QUESTION, retriever="planner", llm=make_client("scripted", scripted=sm))
    assert result.status == "fail"
    assert "the reply was not a valid plan" in result.reason
    assert all(r.response_model == "Plan" for r in sm.requests)
    rounds = result.extra["rounds"]
    assert len(rounds) == 3 and all("not a valid plan" in r["rejected"] for r in rounds)
    assert result.pages_fetched == []
    # the filing was never read: the model's output failed, not the search (ask exits 4, not 0)
    assert result.error_kind == "invalid_reply"
    assert_usage_exact(result, sm)


def test_a_plan_rejected_in_every_round_is_unusable_output_not_a_not_found(tree_3m):
    """gemma-3-270m on a real llama.cpp server copied the schema's placeholders ("..." as every id and
    expression) in all 3 rounds: no task ran and nothing was read, yet `ask -r planner` exited 0 with
    a plain fail, as if the filing had been searched."""
    placeholder = {"tasks": [{"id": "t1", "kind": "fetch_extract", "goal": "...", "node_ids": ["..."],
                              "outputs": ["..."], "depends_on": []},
                             synth("t2", ["t1"])]}
    result, sm = run_planner(tree_3m, Policy([placeholder]))
    assert result.status == "fail" and result.error_kind == "invalid_reply"
    assert "is not a snake_case identifier" in result.reason
    assert [r.response_model for r in sm.requests] == ["Plan"] * 3
    assert result.pages_fetched == []
    # a plan that ran (and failed its tasks) searched the filing: that stays a plain fail
    result, _ = run_planner(tree_3m, Policy([{"tasks": [fetch("t1", "item_8/cash_flows", ["dividend_yield"]),
                                                      synth("t2", ["t1"])]}]), max_replans=0)
    assert result.status == "fail" and result.error_kind is None


def test_malformed_extraction_reply_fails_the_task_and_replans(tree_3m):
    class Garbled(Policy):
        async def __call__(self, req):
            if req.response_model == "ExtractReply" and task_of(req) == "t1":
                return '{"values": [{"name": "capex_2018"'  # truncated JSON, every attempt
            return await super().__call__(req)

    second = {"tasks": [fetch("t5", "item_7/cash_flows", ["capex_2018"]), synth("t6", ["t5"])]}
    first = {"tasks": [fetch("t1", "item_8/cash_flows", ["capex_2018"]), synth("t2", ["t1"])]}
    result, sm = run_planner(tree_3m, Garbled([first, second]))
    assert result.status == "answer"
    assert result.extra["rounds"][0]["failed"] == ["t1"]
    assert any("task t1 failed: the model's reply was unusable" in e.message for e in result.trace)
    assert_usage_exact(result, sm)


def test_unknown_section_fails_the_task_with_the_closest_candidates(tree_3m):
    first = {"tasks": [fetch("t1", "item_99/nothing_here", ["capex_2018"]), synth("t2", ["t1"])]}
    result, sm = run_planner(tree_3m, Policy([first, GOOD_PLAN]))
    assert result.status == "answer"
    replan = [r for r in sm.requests if r.response_model == "Plan"][1].last_user
    assert "no section found for item_99/nothing_here (closest:" in replan


def test_quality_gate_is_off_by_default_and_replans_what_it_rejects(tree_3m):
    result, sm = run_planner(tree_3m, Policy([GOOD_PLAN]))
    assert "GateReply" not in [r.response_model for r in sm.requests]
    assert result.extra["quality_gate"] is False

    class GateRejectsT2Once(Policy):
        gate_calls = 0

        async def __call__(self, req):
            if req.response_model == "GateReply":
                self.gate_calls += 1
                if self.gate_calls == 1:
                    return {"rejected": [{"task_id": "t2", "reason": "looks like the wrong period"}]}
            return await super().__call__(req)

    second = {"tasks": [
        fetch("t5", "item_8/income", ["sales_2018"]),
        compute("t6", "abs(capex_2018) / sales_2018 * 100", "capex_pct", ["t1", "t5"]),
        synth("t7", ["t6"]),
    ]}
    result, sm = run_planner(tree_3m, GateRejectsT2Once([GOOD_PLAN, second]), quality_gate=True)
    assert result.status == "answer"
    models = [r.response_model for r in sm.requests]
    assert models.count("GateReply") == 2 and models.count("Plan") == 2
    assert result.extra["rounds"][0]["gate_rejected"] == ["t2"]
    replan = [r for r in sm.requests if r.response_model == "Plan"][1].last_user
    assert "t2 (fetch_extract ['item_8/income']) failed: rejected by the quality gate" in replan
    assert "t1 (fetch_extract, done)" in replan  # kept: the gate did not reject it
    assert_usage_exact(result, sm)


def test_unknown_option_is_an_error(tree_3m):
    with pytest.raises(RetrieverConfigError, match="unknown option 'max_replan'"):
        asyncio.run(aretrieve(tree_3m, QUESTION, retriever="planner", llm=make_client(
            "scripted", scripted=ScriptedModel(replies=[])), max_replan=3))


class EarlySynthesisThenReplan(Policy):
    """Round 0: t2 reads a statement without sales (fails) while s1, needing only t1, answers;
    every later synthesis replies ``later``."""

    def __init__(self, plans, later):
        super().__init__(plans)
        self.later = later
        self.synth_calls = 0

    async def __call__(self, req):
        if req.response_model == "ExtractReply" and task_of(req) == "t2":
            return {"values": [], "missing": ["sales_2018"], "reason": "the balance sheet has no sales"}
        if req.response_model == "AnswerWithSources":
            self.synth_calls += 1
            if self.synth_calls == 1:
                return {**ANSWER, "answer": "EARLY: capex was 1,577"}
            return self.later
        return await super().__call__(req)


EARLY_ROUND = {"tasks": [
    fetch("t1", "item_8/cash_flows", ["capex_2018"]),
    fetch("t2", "item_8/balance_sheet", ["sales_2018"]),
    synth("s1", ["t1"]),  # does not wait for t2: it answers although t2 fails
]}
LAST_ROUND = {"tasks": [
    fetch("t5", "item_8/income", ["sales_2018"]),
    compute("t6", "abs(capex_2018) / sales_2018 * 100", "capex_pct", ["t1", "t5"]),
    synth("s2", ["t6", "t1"]),
]}


def test_the_answer_is_the_last_rounds_synthesis_not_an_earlier_one(tree_3m):
    policy = EarlySynthesisThenReplan([EARLY_ROUND, LAST_ROUND], later=ANSWER)
    result, sm = run_planner(tree_3m, policy)
    assert policy.synth_calls == 2 and result.extra["replans"] == 1
    assert (result.status, result.answer) == ("answer", ANSWER["answer"])


def test_a_failed_last_synthesis_is_a_fail_not_an_earlier_rounds_answer(tree_3m):
    refusal = {"status": "fail", "reason": "the values do not give the ratio"}
    policy = EarlySynthesisThenReplan([EARLY_ROUND, LAST_ROUND], later=refusal)
    result, sm = run_planner(tree_3m, policy, max_replans=1)
    assert policy.synth_calls == 2
    assert result.status == "fail" and not result.answer and result.sources == []
    assert "s2: synthesis could not answer from the values: the values do not give the ratio" in result.reason


class Timed(Policy):
    """Extraction replies after a per-task delay; ``total_assets`` is never found."""

    def __init__(self, plans, delays, **kw):
        super().__init__(plans, **kw)
        self.delays = delays

    async def __call__(self, req):
        if req.response_model == "ExtractReply":
            await asyncio.sleep(self.delays.get(task_of(req), 0.0))
        return await super().__call__(req)


FOUR_FETCHES = {"tasks": [
    fetch("t1", "item_8/cash_flows", ["capex_2018"]),
    fetch("t2", "item_8/income", ["sales_2018"]),
    fetch("t3", "item_8/balance_sheet", ["total_assets"]),
    fetch("t4", "item_8/balance_sheet", ["total_equity"]),
    synth("t5", ["t1", "t2", "t3", "t4"]),
]}
FAST_FIRST = {"t1": 0.0, "t2": 0.15, "t3": 0.0, "t4": 0.15}
SLOW_FIRST = {"t1": 0.15, "t2": 0.0, "t3": 0.15, "t4": 0.0}
ANSWER_FROM_T1_T2 = {"tasks": [synth("t6", ["t1", "t2"])]}


def test_replan_prompt_and_findings_do_not_depend_on_which_task_finished_first(tree_3m):
    """The re-plan prompt (part of the LLM cache key) lists completed and failed tasks in plan order."""
    seen = []
    for delays in (FAST_FIRST, SLOW_FIRST):
        result, sm = run_planner(tree_3m, Timed([FOUR_FETCHES, ANSWER_FROM_T1_T2], delays))
        assert result.status == "answer", result.reason
        finished = [t["task_id"] for t in result.extra["tasks"]][:4]
        replan = [r for r in sm.requests if r.response_model == "Plan"][1]
        seen.append((finished, [m.model_dump() for m in replan.messages], result.findings))
    (order_a, replan_a, findings_a), (order_b, replan_b, findings_b) = seen
    assert order_a != order_b  # the tasks did finish in different orders
    assert replan_a == replan_b
    text = replan_a[-1]["content"]
    assert text.index("- t1 (fetch_extract, done)") < text.index("- t2 (fetch_extract, done)")
    assert text.index("- t3 (fetch_extract") < text.index("- t4 (fetch_extract") < text.index("- t5 (")
    assert [f.label for f in findings_a] == [f.label for f in findings_b] == ["capex_2018", "sales_2018"]


def test_quality_gate_prompt_does_not_depend_on_which_task_finished_first(tree_3m):
    prompts = []
    for delays in ({"t1": 0.0, "t2": 0.15}, {"t1": 0.15, "t2": 0.0}):
        result, sm = run_planner(tree_3m, Timed([GOOD_PLAN], delays), quality_gate=True)
        assert result.status == "answer", result.reason
        [gate] = [r for r in sm.requests if r.response_model == "GateReply"]
        prompts.append([m.model_dump() for m in gate.messages])
    assert prompts[0] == prompts[1]
    assert prompts[0][-1]["content"].index("- t1 (") < prompts[0][-1]["content"].index("- t2 (")


def test_a_run_recorded_with_the_cache_replays(tree_3m, tmp_path):
    """Recorded live (t2 finishes before t1), replayed from the cache with no model behind it."""
    path = tmp_path / "llm.sqlite"
    policy = Timed([FOUR_FETCHES, ANSWER_FROM_T1_T2], {"t1": 0.15, "t3": 0.15})
    recorded = retrieve(tree_3m, QUESTION, retriever="planner", llm=make_client(
        "scripted", scripted=ScriptedModel(policy=policy), cache=LLMCache(path, "rw")))
    assert recorded.status == "answer" and recorded.extra["replans"] == 1
    replayed = retrieve(tree_3m, QUESTION, retriever="planner", llm=make_client(
        "scripted", scripted=ScriptedModel(replies=[]), cache=LLMCache(path, "replay")))
    assert (replayed.status, replayed.answer, replayed.error) == (recorded.status, recorded.answer, None)
    assert replayed.findings == recorded.findings


def test_round_with_digits_computes(tree_3m):
    plan = {"tasks": [
        fetch("t1", "item_8/cash_flows", ["capex_2018"]),
        fetch("t2", "item_8/income", ["sales_2018"]),
        compute("t3", "round(abs(capex_2018) / sales_2018 * 100, 1)", "capex_pct", ["t1", "t2"]),
        synth("t4", ["t3"]),
    ]}
    result, _ = run_planner(tree_3m, Policy([plan]))
    assert result.status == "answer", result.error or result.reason
    assert result.extra["computed"] == {"capex_pct": 4.8}


def test_a_compute_that_cannot_be_evaluated_fails_its_task_and_is_replanned(tree_3m):
    first = {"tasks": [
        fetch("t1", "item_8/cash_flows", ["capex_2018"]),
        compute("t2", "capex_2018 ** 0.5", "root", ["t1"]),  # capex is (1,577): negative, no real root
        synth("t3", ["t2"]),
    ]}
    second = {"tasks": [compute("t4", "abs(capex_2018) ** 0.5", "root", ["t1"]), synth("t5", ["t4"])]}
    result, sm = run_planner(tree_3m, Policy([first, second]))
    assert result.status == "answer", result.error or result.reason
    assert result.extra["rounds"][0]["failed"] == ["t2"]
    assert result.extra["computed"]["root"] == pytest.approx(1577 ** 0.5)
    assert [f.label for f in result.findings] == ["capex_2018"]  # kept across the re-plan
    replan = [r for r in sm.requests if r.response_model == "Plan"][1].last_user
    assert "t2 (compute capex_2018 ** 0.5) failed: compute 'capex_2018 ** 0.5':" in replan
    assert "has no real value" in replan


def test_an_answer_and_quotes_given_as_json_numbers_are_accepted(tree_3m):
    plan = {"tasks": [fetch("t1", "item_8/cash_flows", ["capex_2018"]), synth("t2", ["t1"])]}

    class Numbers(Policy):
        async def __call__(self, req):
            if req.response_model == "AnswerWithSources":
                return {"status": "answer", "answer": 1577,
                        "sources": [{"node_id": "item_8/cash_flows", "page": 60, "quote": 1577}]}
            return await super().__call__(req)

    policy = Numbers([plan], values={"capex_2018": {**CAPEX, "value": 1577, "quote": 1577}})
    result, sm = run_planner(tree_3m, policy)
    assert (result.status, result.answer) == ("answer", "1577"), result.reason
    assert [(s.page, s.quote, s.verified) for s in result.sources] == [(60, "1577", True)]
    assert [(f.value, f.context) for f in result.findings] == [("1577", "1577")]
    assert [r.response_model for r in sm.requests] == ["Plan", "ExtractReply", "AnswerWithSources"]
