"""The ``planner`` retriever: a planner model writes a small DAG of tasks, an executor runs it.

1. **Plan.** The planner reads the question and the section index and returns a
   :class:`~pageindex.retrievers.planner_plan.Plan` (fetch_extract / compute / synthesise
   tasks with dependencies). A plan that fails :func:`validate_plan` (a cycle, a dependency
   on a missing task, ...) or does not parse is rejected with the reason and re-planned.
2. **Execute.** Every task whose dependencies are done starts at once (``max_parallel`` at a
   time), so independent fetches overlap. ``fetch_extract`` reads its sections with the shared
   ``fetch_section`` tool and asks for the named values; ``compute`` evaluates arithmetic over
   its dependencies' values (numbers such as ``"1,577"``, ``"(1,577)"`` or ``1577.0`` are
   parsed by :mod:`pageindex.retrievers.numbers`); ``synthesise`` writes the answer from the
   values only.
3. **Re-plan what failed.** A failed task (section not found, value missing, bad arithmetic,
   a synthesis that says the values do not answer) stops its dependents; once nothing else
   can run, the planner is shown the completed tasks (kept, never re-run) and the failures,
   and writes replacement tasks. At most ``max_replans`` re-plans; then the result is ``fail``.
   The answer is the synthesis of the round that ran without a failure: a synthesis that
   answered in a round that was then re-planned is superseded and never returned.

An optional quality gate (``quality_gate=True``, off by default) asks the model to check the
task results before synthesis and re-plans the rejected ones. It is off because, in the
benchmarks behind this design, such a gate rejected valid table data and caused 14 of 22 failures.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, Field

from pageindex.llm.types import Message, UnusableReply
from pageindex.retrievers.base import FetchOptions, QuestionRun, register_retriever
from pageindex.retrievers.numbers import format_number, try_number
from pageindex.retrievers.planner_plan import (
    ExpressionError,
    Plan,
    PlanError,
    Task,
    evaluate,
    validate_plan,
)
from pageindex.retrievers.prompts import INJECTION_NOTICE, load_prompt, wrap_document
from pageindex.retrievers.replies import AnswerWithSources, TextOrNumber
from pageindex.retrievers.result import FailedSearch, Finding, RetrievalResult
from pageindex.retrievers.tools import holding_pages

PROMPT_VERSION = "planner_v1"  # planner_plan_v1, planner_extract_v1, planner_synth_v1, planner_gate_v1


class PlannerOptions(FetchOptions):
    max_replans: int = Field(2, ge=0, le=10, description="re-plans after a rejected plan or failed tasks")
    max_tasks: int = Field(8, ge=2, le=30, description="tasks per plan at most")
    max_parallel: int = Field(4, ge=1, le=32, description="tasks running at the same time at most")
    max_sections_per_task: int = Field(3, ge=1, le=10, description="sections one fetch_extract task may read")
    max_chars_per_task: int = Field(24000, ge=1000, description="section text per extraction call at most")
    quality_gate: bool = Field(False, description="LLM check of task results before synthesis")
    index_depth: int | None = Field(None, ge=0, description="deepest index level shown (None = all)")
    summaries: bool = Field(True, description="show node summaries in the index when the tree has them")


# ----------------------------------------------------------------------------- replies
class ExtractedValue(BaseModel):
    name: str
    value: str | float | int = Field(description="as printed, e.g. (1,577)")
    unit: str | None = None
    page: int = Field(description="1-based PDF page")
    quote: TextOrNumber | None = None


class ExtractReply(BaseModel):
    values: list[ExtractedValue] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)
    reason: str | None = None


class GateRejection(BaseModel):
    task_id: str
    reason: str = ""


class GateReply(BaseModel):
    rejected: list[GateRejection] = Field(default_factory=list)


# ----------------------------------------------------------------------------- execution state
class Value(BaseModel):
    """A value passed along the plan's edges."""

    name: str
    text: str  # as printed / computed
    number: float | None = None  # parsed, when it is a number
    unit: str | None = None
    page: int | None = None
    node_id: str | None = None
    quote: str | None = None
    task_id: str = ""


class TaskOutcome(BaseModel):
    task_id: str
    status: Literal["done", "failed", "blocked"]
    values: list[Value] = Field(default_factory=list)
    error: str | None = None
    pages: list[int] = Field(default_factory=list)
    answer: AnswerWithSources | None = None  # the synthesise task's reply
    round: int = 0  # planning round that produced the task


class _Failed(Exception):
    """A task failed for a reason the planner should hear."""


class PlanExecutor:
    """Runs one plan's tasks over one retrieval; keeps completed tasks across re-plans."""

    def __init__(self, run: QuestionRun, opts: PlannerOptions):
        self.run = run
        self.opts = opts
        self.done: dict[str, Task] = {}  # completed tasks (kept across re-plans)
        self.outcomes: dict[str, TaskOutcome] = {}
        self.history: list[TaskOutcome] = []  # every outcome, failures included, in finishing order
        self.position: dict[str, tuple[int, int]] = {}  # task id -> (round, index in its plan)
        self.round = 0
        self._sem = asyncio.Semaphore(opts.max_parallel)

    def in_plan_order(self, outcomes: Iterable[TaskOutcome]) -> list[TaskOutcome]:
        """``outcomes`` in the order the plans wrote their tasks (round, then place in the plan),
        whatever order they finished in (one task's outcomes keep theirs): what a prompt lists must
        not depend on timing (it is part of the LLM cache key, so a recorded run would not replay)."""
        return sorted(outcomes, key=lambda o: self.position[o.task_id])

    # -- values ------------------------------------------------------------------
    def values_of(self, task: Task) -> dict[str, Value]:
        """Values produced by ``task``'s dependencies, transitively (nearest wins)."""
        out: dict[str, Value] = {}
        seen: set[str] = set()
        stack = list(task.depends_on)
        while stack:
            dep = stack.pop(0)
            if dep in seen:
                continue
            seen.add(dep)
            outcome = self.outcomes.get(dep)
            if outcome is not None and outcome.status == "done":
                for v in outcome.values:
                    out.setdefault(v.name, v)
            if dep in self.done:
                stack.extend(self.done[dep].depends_on)
        return out

    # -- one plan ----------------------------------------------------------------
    async def execute(self, tasks: list[Task]) -> list[TaskOutcome]:
        """Run ``tasks`` (valid against ``self.done``); returns the failed and blocked outcomes."""
        pending = {t.id: t for t in tasks}
        self.position.update({t.id: (self.round, i) for i, t in enumerate(tasks)})
        running: dict[asyncio.Task[TaskOutcome], str] = {}
        failed: list[TaskOutcome] = []

        def ready(t: Task) -> bool:
            return all(d in self.done for d in t.depends_on)

        try:
            while pending or running:
                for tid in [tid for tid, t in pending.items() if ready(t)]:
                    task = pending.pop(tid)
                    running[asyncio.create_task(self._run_task(task))] = tid
                if not running:
                    break
                finished, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                for fut in finished:
                    running.pop(fut)
                    outcome = fut.result()  # an LLM error other than a bad reply ends the retrieval
                    self.outcomes[outcome.task_id] = outcome
                    self.history.append(outcome)
                    if outcome.status == "done":
                        self.done[outcome.task_id] = next(t for t in tasks if t.id == outcome.task_id)
                    else:
                        failed.append(outcome)
        finally:
            for fut in running:
                fut.cancel()
            if running:
                await asyncio.gather(*running, return_exceptions=True)
        for task in pending.values():  # waiting on a failed task
            waiting = [d for d in task.depends_on if d not in self.done]
            outcome = TaskOutcome(
                task_id=task.id, status="blocked", error=f"waits on {', '.join(waiting)}", round=self.round
            )
            self.run.event("decision", f"task {task.id} blocked: {outcome.error}", task_id=task.id)
            failed.append(outcome)
        return self.in_plan_order(failed)

    async def _run_task(self, task: Task) -> TaskOutcome:
        async with self._sem:
            self.run.event("decision", f"task {task.id} ({task.kind}) starts: {task.goal}", task_id=task.id)
            try:
                if task.kind == "fetch_extract":
                    outcome = await self._fetch_extract(task)
                elif task.kind == "compute":
                    outcome = self._compute(task)
                else:
                    outcome = await self._synthesise(task)
            except _Failed as exc:
                outcome = TaskOutcome(task_id=task.id, status="failed", error=str(exc), round=self.round)
            except UnusableReply as exc:
                outcome = TaskOutcome(
                    task_id=task.id, status="failed", error=f"the model's reply was unusable: {exc}",
                    round=self.round,
                )
            if outcome.status == "done":
                shown = ", ".join(f"{v.name}={v.text}" for v in outcome.values) or "answer written"
                self.run.event("decision", f"task {task.id} done: {shown}", task_id=task.id)
            else:
                self.run.event("error", f"task {task.id} failed: {outcome.error}", task_id=task.id)
            return outcome

    async def _fetch_extract(self, task: Task) -> TaskOutcome:
        run = self.run
        fetcher = run.fetcher
        parts: list[tuple[str, str]] = []  # (node_id, text) of each slice read
        pages: list[int] = []
        unknown: list[str] = []
        budget = self.opts.max_chars_per_task
        with holding_pages() as unsent:  # shown once the extraction request is answered
            for requested in task.node_ids:
                offset: int | None = 0
                while offset is not None and budget > 0:
                    run.count_tool_calls()
                    piece = fetcher.fetch(requested, offset, why=f"planner task {task.id}")
                    if not piece.found:
                        closest = ", ".join(c.node_id for c in piece.candidates[:3])
                        unknown.append(f"{requested} (closest: {closest})")
                        break
                    parts.append((piece.node_id, piece.text))
                    pages += [p for p in piece.pages if p not in pages]
                    budget -= len(piece.text)
                    offset = piece.next_offset
        if not parts:
            raise _Failed(f"no section found for {', '.join(unknown)}")
        prompt = load_prompt("planner_extract_v1")

        def build(text: str) -> list[Message]:
            return prompt.messages(
                task_id=task.id,
                goal=task.goal,
                question=run.query,
                outputs=", ".join(task.outputs),
                text=text,
                injection_notice=INJECTION_NOTICE,
            )

        # The sections' text fits the model's known context window: slices in order while they fit,
        # the next cut, the rest left out (said in the trace); no room at all is a ContextLengthError.
        room = await run.text_room(build(""), role="extraction", reply=ExtractReply)
        room = None if room is None else room - 24 * len(parts)  # the <document> tags around each slice
        kept = await run.fit_texts([text for _, text in parts], room)
        if not kept:
            raise run.no_room_error("extraction", room or 0)
        if kept != [text for _, text in parts][: len(kept)] or len(kept) < len(parts):
            run.event(
                "info",
                f"task {task.id}: section text cut to {sum(map(len, kept)):,} of "
                f"{sum(len(t) for _, t in parts):,} characters to fit the model's "
                f"{run.llm.context_window:,}-token context window",
                task_id=task.id, context_window=run.llm.context_window,
            )  # fmt: skip
        shown = {int(n) for text in kept for n in re.findall(r"\[page (\d+)", text)}
        shown_parts = zip(parts, kept, strict=False)  # the slices kept, the last perhaps cut
        messages = build("\n".join(wrap_document(text, node_id=node) for (node, _), text in shown_parts))
        unsent.drop_all_but(shown)  # shown once the request is answered (usably or not)
        reply = await run.structured(
            messages, ExtractReply, role="extraction", tag={"task": task.id}, shows=unsent
        )
        values: list[Value] = []
        node_of_page = {p: self.run.tree.leaf_for_page(p) for p in pages}
        for v in reply.values:
            if v.name not in task.outputs or any(x.name == v.name for x in values):
                continue
            text = v.value if isinstance(v.value, str) else format_number(float(v.value))
            leaf = node_of_page.get(v.page)
            values.append(
                Value(
                    name=v.name, text=text.strip(), number=try_number(v.value), unit=v.unit, page=v.page,
                    node_id=leaf.node_id if leaf else (task.node_ids[0] if task.node_ids else None),
                    quote=v.quote, task_id=task.id,
                )
            )
        missing = [n for n in task.outputs if not any(v.name == n for v in values)]
        if missing:
            why = f": {reply.reason}" if reply.reason else ""
            raise _Failed(f"{', '.join(missing)} not found in {', '.join(task.node_ids)}{why}")
        return TaskOutcome(task_id=task.id, status="done", values=values, pages=pages, round=self.round)

    def _compute(self, task: Task) -> TaskOutcome:
        available = self.values_of(task)
        numbers: dict[str, float] = {}
        for name, value in available.items():
            if value.number is not None:
                numbers[name] = value.number
        try:
            result = evaluate(task.expression or "", numbers)
        except ExpressionError as exc:
            not_numbers = [n for n, v in available.items() if v.number is None]
            hint = f" ({', '.join(not_numbers)} could not be read as numbers)" if not_numbers else ""
            raise _Failed(f"compute {task.expression!r}: {exc}{hint}") from None
        value = Value(name=task.output or task.id, text=format_number(result), number=result, task_id=task.id)
        return TaskOutcome(task_id=task.id, status="done", values=[value], round=self.round)

    async def _synthesise(self, task: Task) -> TaskOutcome:
        values = self.values_of(task)
        lines = []
        for v in values.values():
            where = f" (page {v.page}, section {v.node_id})" if v.page else " (computed)"
            unit = f" {v.unit}" if v.unit else ""
            quote = f' — "{v.quote}"' if v.quote else ""
            lines.append(f"- {v.name} = {v.text}{unit}{where}{quote}")
        prompt = load_prompt("planner_synth_v1")
        messages = prompt.messages(question=self.run.query, values="\n".join(lines) or "(none)")
        reply = await self.run.structured(
            messages, AnswerWithSources, role="synthesis", tag={"task": task.id}
        )
        if reply.status == "fail":
            raise _Failed(f"synthesis could not answer from the values: {reply.reason}")
        return TaskOutcome(task_id=task.id, status="done", answer=reply, round=self.round)

    # -- quality gate ------------------------------------------------------------------
    async def gate(self) -> list[str]:
        """Task ids the gate rejects (only tasks that produced values are shown)."""
        shown = [o for o in self.in_plan_order(self.outcomes.values()) if o.status == "done" and o.values]
        if not shown:
            return []
        lines = []
        for o in shown:
            task = self.done[o.task_id]
            vals = "; ".join(f"{v.name}={v.text}{(' ' + v.unit) if v.unit else ''}" for v in o.values)
            lines.append(f"- {o.task_id} ({task.kind}) goal: {task.goal} -> {vals}")
        prompt = load_prompt("planner_gate_v1")
        reply = await self.run.structured(
            prompt.messages(question=self.run.query, results="\n".join(lines)), GateReply, role="gate"
        )
        return [r.task_id for r in reply.rejected if r.task_id in self.done]

    def forget(self, task_ids: list[str]) -> list[str]:
        """Drop completed tasks (and everything that used them) so a re-plan can replace them."""
        dropped = set(task_ids)
        changed = True
        while changed:
            changed = False
            for tid, task in self.done.items():
                if tid not in dropped and dropped & set(task.depends_on):
                    dropped.add(tid)
                    changed = True
        for tid in dropped:
            self.done.pop(tid, None)
            self.outcomes.pop(tid, None)
        return sorted(dropped)


# ----------------------------------------------------------------------------- the retriever
def _describe_done(executor: PlanExecutor) -> str:
    lines = []
    for outcome in executor.in_plan_order(executor.outcomes[tid] for tid in executor.done):
        tid = outcome.task_id
        task = executor.done[tid]
        vals = ", ".join(f"{v.name}={v.text}" for v in outcome.values)
        lines.append(f"- {tid} ({task.kind}, done): {task.goal}" + (f" -> {vals}" if vals else ""))
    return "\n".join(lines)


def _previous_text(executor: PlanExecutor, failures: list[TaskOutcome], tasks: dict[str, Task],
                   rejection: str | None) -> str:
    parts = []
    if rejection:
        parts.append(f"Your previous plan was rejected: {rejection}. Write a corrected plan.")
    if executor.done:
        parts.append(
            "Completed tasks (kept; do not repeat them, reuse their ids in depends_on):\n"
            + _describe_done(executor)
        )
    if failures:
        lines = []
        for f in failures:
            t = tasks.get(f.task_id)
            what = f"{t.kind} {t.node_ids or t.expression or ''}".strip() if t else ""
            lines.append(f"- {f.task_id} ({what}) {f.status}: {f.error}")
        parts.append(
            "These tasks failed or could not run:\n" + "\n".join(lines)
            + "\nWrite only the tasks still needed (new ids), including one synthesise task. "
            "Try other sections for values that were not found."
        )
    return "\n\n".join(parts)


@register_retriever("planner", options=PlannerOptions, prompt_version=PROMPT_VERSION)
async def planner(run: QuestionRun, opts: PlannerOptions) -> RetrievalResult:
    """A planner writes a DAG of fetch/compute/synthesise tasks; an executor runs independent tasks
    concurrently and re-plans only what failed."""
    executor = PlanExecutor(run, opts)
    index = await run.index(max_depth=opts.index_depth, summaries=opts.summaries, role="planner")
    plan_prompt = load_prompt("planner_plan_v1")
    failures: list[TaskOutcome] = []
    all_tasks: dict[str, Task] = {}
    rejection: str | None = None
    rounds: list[dict[str, Any]] = []
    failed_searches: list[FailedSearch] = []
    gate_used = False

    for round_no in range(opts.max_replans + 1):
        executor.round = round_no
        messages = plan_prompt.messages(
            question=run.query,
            index=index,
            previous=_previous_text(executor, failures, all_tasks, rejection),
            max_tasks=opts.max_tasks,
            max_sections=opts.max_sections_per_task,
        )
        try:
            plan = await run.structured(messages, Plan, role="planner", tag={"round": round_no})
            validate_plan(
                plan, done=executor.done, max_tasks=opts.max_tasks,
                max_sections_per_task=opts.max_sections_per_task,
            )
        except (PlanError, UnusableReply) as exc:
            rejection = str(exc) if isinstance(exc, PlanError) else f"the reply was not a valid plan ({exc})"
            run.event("error", f"round {round_no}: plan rejected: {rejection}", round=round_no)
            rounds.append({"round": round_no, "rejected": rejection})
            continue
        rejection = None
        run.event(
            "decision",
            f"round {round_no}: plan with {len(plan.tasks)} tasks: "
            + "; ".join(f"{t.id} {t.kind} <- {t.depends_on}" for t in plan.tasks),
            round=round_no,
            plan=plan.model_dump(mode="json"),
        )
        all_tasks.update({t.id: t for t in plan.tasks})
        failures = await executor.execute(plan.tasks)
        record: dict[str, Any] = {
            "round": round_no,
            "tasks": [t.id for t in plan.tasks],
            "failed": [f.task_id for f in failures if f.status == "failed"],
            "blocked": [f.task_id for f in failures if f.status == "blocked"],
        }
        rounds.append(record)
        for f in failures:
            t = all_tasks.get(f.task_id)
            if f.status == "failed" and t is not None and t.kind == "fetch_extract":
                failed_searches.append(
                    FailedSearch(item=t.goal or ", ".join(t.outputs), reason=f.error or "", tried=t.node_ids)
                )
        synth = next((t for t in plan.tasks if t.kind == "synthesise"), None)
        if opts.quality_gate and synth is not None and not failures:
            gate_used = True
            rejected = await executor.gate()
            if rejected:
                dropped = executor.forget(rejected)
                run.event("decision", f"round {round_no}: quality gate rejected {rejected}", dropped=dropped)
                record["gate_rejected"] = rejected
                failures = [
                    TaskOutcome(task_id=t, status="failed", error="rejected by the quality gate",
                                round=round_no)
                    for t in dropped
                ]
                continue
        if not failures and synth is not None and synth.id in executor.outcomes:
            return _answer(run, executor, synth.id, rounds, failed_searches, gate_used)
    reason = (
        f"plan rejected: {rejection}" if rejection
        else "tasks failed: " + "; ".join(f"{f.task_id}: {f.error}" for f in failures if f.error)
    )
    run.event("decision", f"giving up after {opts.max_replans} re-plan(s): {reason}")
    # Not one plan was usable: no task ran and the filing was never read, so the model's output failed,
    # not the search (ask exits 4, a run records the kind), as for the agent's and iterative's.
    never_planned = bool(rounds) and all("rejected" in r for r in rounds)
    return run.result(
        "fail",
        reason=f"no answer after {opts.max_replans} re-plan(s); {reason}",
        error_kind="invalid_reply" if never_planned else None,
        iterations=len(rounds),
        findings=_findings(executor),
        failed_searches=failed_searches,
        extra=_extra(executor, rounds, gate_used),
    )


def _findings(executor: PlanExecutor) -> list[Finding]:
    """The values read from pages, in plan order (not finishing order: a replay gives the same list)."""
    out = []
    for outcome in executor.in_plan_order(executor.history):
        if outcome.status != "done":
            continue
        for v in outcome.values:
            if v.page is not None:
                out.append(
                    Finding(label=v.name, value=v.text, unit=v.unit, page=v.page, section=v.node_id or "",
                            context=v.quote or "")
                )
    return out


def _extra(executor: PlanExecutor, rounds: list[dict[str, Any]], gate_used: bool) -> dict[str, Any]:
    return {
        "rounds": rounds,
        "replans": max(0, len(rounds) - 1),
        "tasks": [o.model_dump(mode="json", exclude={"answer"}) for o in executor.history],
        "quality_gate": gate_used,
    }


def _answer(run: QuestionRun, executor: PlanExecutor, synth_id: str, rounds: list[dict[str, Any]],
            failed_searches: list[FailedSearch], gate_used: bool) -> RetrievalResult:
    """The result of the round that ran without a failure: the answer is its synthesise task's, ``synth_id``.

    A synthesis of an earlier round is never the answer, even when it wrote one: that round had a
    failure, so the planner re-planned and the last plan's synthesis supersedes it. When the last
    round fails too, the retrieval ends in ``fail`` (see :func:`planner`), never in an earlier round's
    answer presented as the final one.
    """
    reply = executor.outcomes[synth_id].answer
    if reply is None:  # a done synthesise task always carries its reply
        raise RuntimeError(f"planner: synthesise task {synth_id} is done but has no answer")
    result = run.result_from_answer(
        reply,
        iterations=len(rounds),
        findings=_findings(executor),
        failed_searches=failed_searches,
        extra=_extra(executor, rounds, gate_used),
    )
    outcomes = executor.in_plan_order(executor.outcomes.values())
    computed = [v for o in outcomes for v in o.values if v.page is None]
    if computed:
        result.extra["computed"] = {v.name: v.number for v in computed}
    return result

