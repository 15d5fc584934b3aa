"""``pageindex bench run``: questions x retrievers x repeats, judged, written as they finish.

This module owns a run's flow; the run directory's files belong to :mod:`bench.rundir`, what a
``--resume`` may continue to :mod:`bench.resume`. The
flow, top to bottom (the named steps of :meth:`Runner.run`): open the run directory, settle the
settings, choose retrievers, load and validate the dataset (drops with reasons), make the model
clients (one budget and ledger for the run), build or load one tree per document, describe the
run (``run.json``), then run samples with at most ``concurrency`` in flight, each judged through
:func:`bench.judges.base.judge_sample`. Every finished sample is appended to
``samples.jsonl`` at once (fsynced); ``--resume`` skips what is there. A spent budget or a
Ctrl-C stops starting samples, cancels those in flight (they run again on resume) and the
summary of what finished is still written.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, Field

from bench import resume
from bench import runinfo as provenance
from bench.config import (
    LLM_RETRIEVERS,
    PATH_SETTINGS,
    RunConfig,
    apply_doctor_findings,
    apply_recording_settings,
    configured_model,
)
from bench.datasets.models import Dataset, DroppedQuestion, Question
from bench.events import EventBus, RunEvent, RunProgress
from bench.judges.base import judge_model_need, judge_sample
from bench.rundir import FolderClaim, FolderInUse, RunDir, RunLoadError, resume_run_command
from bench.runinfo import DatasetInfo, RunInfo, RunStatus
from bench.samples import (
    Sample,
    above_error_rate,
    commonest_error,
    errored,
    judge_error_text,
)
from bench.summary import NO_VALUE, Summary
from pageindex import registry
from pageindex.cachedir import cache_root
from pageindex.llm.profile import endpoint_url
from pageindex.llm.redact import env_secrets, redact, redact_argv, redact_handler, redact_url, url_secrets
from pageindex.llm.scripted import load_policy
from pageindex.llm.types import BudgetExceeded, EndpointUnreachableError
from pageindex.retrievers.base import (
    TIME_LIMIT,
    QuestionContext,
    aretrieve,
    available_retrievers,
    get_retriever,
    plugin_model_hint,
)
from pageindex.tree.model import Tree
from pageindex.wording import counted, error_text

log = logging.getLogger(__name__)
T = TypeVar("T")


# After a call timed out against a server on this machine: how many call timeouts to wait for it to
# finish the abandoned request before the next sample (see Runner._let_abandoned_finish).
ABANDONED_WAITS = 3
PREFLIGHT_NOTICE_S = 10.0  # a preflight probe unanswered this long is said (a busy local server)
# Stops that cancel the samples in flight (they run again on resume); a budget stop lets them finish.
CANCELLING_STOPS: frozenset[RunStatus] = frozenset({"interrupted", "failed"})


class RunSetupError(Exception):
    """The run cannot start (no dataset, unknown retriever, model not configured, ...)."""


class _FolderBusy(RunSetupError):
    """A new run's folder is held by another run (:meth:`Runner._claim_new_folder`)."""


class RunWriteError(Exception):
    """The run's samples ran, but the end of the run (run.json, summary.json) could not be written
    (a full disk): exit 4, the finished samples kept for a resume."""


class SetupInterrupted(Exception):
    """Ctrl-C before the first sample (while the trees were built): the run stops there, before its
    folder is made or (``--resume``) touched, so nothing is written; the trees built so far stay in the
    tree cache."""


class RunOutcome(BaseModel):
    run_dir: Path
    run_id: str
    status: RunStatus
    summary: Summary
    samples_written: int = 0  # by this invocation
    samples_skipped: int = 0  # already finished (resume)
    samples_retried: int = 0  # earlier ``error`` samples taken back to run again (--retry-errors)
    stopped_because: str | None = None  # why a ``failed`` run stopped (the endpoint stopped answering)
    dropped: list[DroppedQuestion] = Field(default_factory=list)
    skipped_retrievers: dict[str, str] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)
    samples_total: int = 0  # every sample of the run, this invocation's and earlier ones
    samples_errored: int = 0  # status error, or the judge call failed
    commonest_error: str | None = None  # the error kind most samples in error ended with, and one of them
    max_error_rate: float = 0.2
    # model calls this invocation paid for that no written sample holds (see RunInfo.unrecorded_usage)
    unrecorded: dict[str, Any] | None = None
    sent: dict[str, Any] | None = None  # this invocation's calls sent to a model (see RunInfo.sent_usage)
    cached: dict[str, Any] | None = None  # ... and those the cache answered (RunInfo.cached_usage)

    @property
    def error_rate(self) -> float:
        return self.samples_errored / self.samples_total if self.samples_total else 0.0

    @property
    def too_many_errors(self) -> bool:
        """More than ``max_error_rate`` of the samples ended in error (exit 4)."""
        return above_error_rate(self.samples_errored, self.samples_total, self.max_error_rate)


# ----------------------------------------------------------------------------- set-up
UNREPORTED_KEYS = ("unreported_attempts", "estimated_prompt_tokens")  # sent_usage's, when there were some


def _add_usage(before: dict[str, Any] | None, more: dict[str, Any]) -> dict[str, Any]:
    """A usage total of the run's earlier sessions (run.json's ``unrecorded_usage``, ``sent_usage`` or
    ``cached_usage``) plus this one's; a cost unknown in either is unknown."""
    if not before:
        return more
    keys = ("calls", "prompt_tokens", "completion_tokens")
    total = {k: int(before.get(k) or 0) + int(more[k]) for k in keys}
    costs = (before.get("cost_usd"), more["cost_usd"])
    total["cost_usd"] = None if None in costs else round(sum(costs), 6)
    for key in UNREPORTED_KEYS:  # kept only where some session had them
        if key in before or key in more:
            total[key] = int(before.get(key) or 0) + int(more.get(key) or 0)
    return total


def _usage_dict(usage: Any) -> dict[str, Any]:
    """A ledger total as run.json keeps it (no calls: zero, cost 0)."""
    if usage is None or not usage.calls:
        return {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0}
    cost = None if usage.cost_usd is None else round(usage.cost_usd, 6)
    return {"calls": usage.calls, "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens, "cost_usd": cost}


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _plugin_code_changes(previous: RunInfo, retrievers: list[str], judge_name: str) -> list[str]:
    """What a resume says of a plug-in whose code changed since the run started (``retriever_code``,
    ``judge_code``): the samples kept are the old code's, those run now the new's. A judge's version is
    checked apart (a changed one is refused); its code under one version is said here."""
    pairs = [(f"retriever {r}", previous.retriever_code.get(r), registry.plugin_identity("retriever", r))
             for r in retrievers]  # fmt: skip
    if previous.judge == judge_name:
        now = registry.plugin_identity("judge", judge_name)
        pairs.append((f"judge {judge_name}", previous.judge_code, now))
    return [
        f"plug-in {what}'s code changed since the run started ({before} -> {now}): the samples kept are "
        "the old code's, those run now the new code's; start a new run to measure one of them"
        for what, before, now in pairs
        if before and now and before != now
    ]


def _git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=5,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def _package_version() -> str:
    try:
        return metadata.version("pageindex-bench")
    except metadata.PackageNotFoundError:
        return "unknown"


REPO_DEMO_DIR = Path(__file__).resolve().parents[1] / "datasets" / "demo"


def demo_dataset_dir() -> Path:
    """The demo dataset: the copy committed in ``datasets/demo`` (a test keeps it equal to the
    generator's output), else one generated into the user cache dir (kept current)."""
    if (REPO_DEMO_DIR / "questions.jsonl").exists():
        return REPO_DEMO_DIR
    from bench.datasets.demo import ensure_demo_dataset

    demo_dir = cache_root() / "demo-data"
    ensure_demo_dataset(demo_dir)
    return demo_dir


def load_dataset(config: RunConfig) -> Dataset:
    from bench.datasets.financebench import load_financebench

    if config.data_dir is None:
        return load_financebench(demo_dataset_dir(), name="demo")
    return load_financebench(config.data_dir)


def wanted_retrievers(config: RunConfig) -> list[str]:
    """The retrievers asked for: ``--retrievers``, else the defaults (without a model the LLM ones
    are then skipped)."""
    return config.retrievers or [*LLM_RETRIEVERS, "extractive"]


def judge_for(config: RunConfig, with_model: bool) -> str:
    """The judge a run uses: ``--judge``, else a panel of ``--judge-models``, else the LLM judge when
    it has a model (``with_model``: an answering model, a ``--judge-model`` or a judge client given),
    else rules."""
    if config.judge:
        return config.judge
    # Judge models given on their own say which judge is meant: a panel of --judge-models, an LLM
    # judge for a --judge-model (also with no answering model).
    if config.judge_models:
        return "panel"
    return "llm" if with_model or config.judge_model else "rules"


def calls_answering_model(config: RunConfig) -> bool:
    """Whether a new run of ``config`` calls its answering model (``--model`` or ``$PAGEINDEX_MODEL``):
    a retriever it asks for needs a model (a name no retriever has counts: it is refused later), or
    its judge falls back to that model (a judge of one model given no ``--judge-model``). An
    extractive run judged by rules does not, so its model needs no key: it is said unused."""
    known = available_retrievers()
    if any(name not in known or known[name].needs_llm for name in wanted_retrievers(config)):
        return True
    try:
        need = judge_model_need(judge_for(config, with_model=True))
    except registry.PluginError:  # two modules registered the judge: the run refuses it by name
        return False
    return need == "one" and not config.judge_model


def choose_retrievers(config: RunConfig, model: str | None) -> tuple[list[str], dict[str, str]]:
    """The retrievers to run and those skipped (with why). Unknown names are an error."""
    known = available_retrievers()
    wanted = wanted_retrievers(config)
    unknown = [r for r in wanted if r not in known]
    for name in wanted:
        if name in known:
            try:
                get_retriever(name)  # a name two modules registered: which would run is import order
            except registry.PluginError as exc:
                raise RunSetupError(str(exc)) from None
    if unknown:
        raise RunSetupError(
            f"unknown retriever(s) {', '.join(unknown)}; choose from {', '.join(sorted(known))}"
            f"{registry.missing_hint('retriever')}"
        )
    run, skipped = [], {}
    for name in wanted:
        if known[name].needs_llm and not model:
            skipped[name] = (
                "needs a model (set OPENAI_API_KEY, or pass --model openai/... or ollama/...)"
                + plugin_model_hint(name)
            )
        else:
            run.append(name)
    if not run:
        raise RunSetupError("no retriever can run: " + "; ".join(f"{k}: {v}" for k, v in skipped.items()))
    return run, skipped


def explain_empty_selection(dataset: Dataset, selected: Dataset, config: RunConfig) -> None:
    """Raise :class:`RunSetupError` naming why nothing was selected (empty file, a filter that
    matches nothing), or naming a ``--question-type``/``--question-id`` value that matches no row of
    the dataset beside others that do (a mistyped id was dropped in silence and the run went on with
    the rest); a selection whose every value matches (a malformed row asked for included) passes."""
    if not dataset.questions and not (selected.questions or selected.malformed):
        bad = f" ({len(dataset.malformed)} malformed rows dropped)" if dataset.malformed else ""
        raise RunSetupError(f"{dataset.path}: the dataset has no questions{bad}")
    rows = [*dataset.questions, *dataset.malformed]
    known_types = {row.question_type for row in rows}
    known_ids = {row.question_id for row in rows}
    filters = [f"--question-type {t}" for t in config.question_types if t not in known_types]
    filters += [f"--question-id {i}" for i in config.question_ids if i not in known_ids]
    if not filters:  # each value matches a row: the selection is empty only as the values combine
        if selected.questions or selected.malformed:
            return
        filters = [f"--question-type {t}" for t in config.question_types]
        filters += [f"--question-id {i}" for i in config.question_ids]
    types = sorted({q.question_type for q in dataset.questions if q.question_type})
    example = rows[0].question_id
    raise RunSetupError(
        f"{' '.join(filters) or 'the filters'} matched none of the {len(dataset.questions)} questions "
        f"(question types: {', '.join(types) or 'none'}; ids like {example})"
    )


def _drop_counts(dropped: list[DroppedQuestion], dataset: Dataset) -> str:
    counts: dict[str, int] = {}
    for d in dropped:
        counts[d.reason] = counts.get(d.reason, 0) + 1
    reasons = ", ".join(f"{n} {reason}" for reason, n in sorted(counts.items())) or "none selected"
    from bench.datasets.financebench import pdf_folder_problem

    # why every filing is missing, when the dataset's pdfs/ is no folder (said before as a warning only
    # by validate: the run stopped on "18 pdf_missing" alone)
    why = "".join(f"; {problem}" for problem in pdf_folder_problem(Path(dataset.path))) if counts else ""
    return (
        f"all {len(dropped)} selected questions were dropped ({reasons}){why}; "
        f"see pageindex bench datasets validate {dataset.path}"
    )


def absolute_paths(config: RunConfig) -> dict[str, Path]:
    """The config's paths (dataset, run folder, caches) made absolute, as a run stores them: a resume
    from another folder must find the same files (a relative ``--data-dir ds`` resumed elsewhere read
    another folder's, or none)."""
    paths = {name: getattr(config, name) for name in PATH_SETTINGS}
    return {name: Path(os.path.abspath(p)) for name, p in paths.items() if p is not None}


def new_run_id(config: RunConfig) -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    digest = hashlib.sha256(RunConfig.model_dump_json(config).encode()).hexdigest()[:6]
    return f"{stamp}-{digest}"


# ----------------------------------------------------------------------------- the run
class Runner:
    """One run. Build with a config, then ``await runner.run()``.

    ``retriever_llm`` / ``judge_llm`` replace the clients the config would make (tests pass
    scripted clients); ``scripted`` answers every model spec ``scripted`` (a ``ScriptedModel``,
    a policy function, or ``module:function``; default ``config.scripted_policy``) through
    clients the runner makes, so the run's budget, cache, retries and ledger apply to it;
    ``resume_overrides`` changes operational settings of a resumed run (see
    :data:`bench.config.RESUME_OVERRIDES`); ``retry_errors`` (resume only) runs again the samples
    that ended in ``error``, their earlier records moved to ``retried.jsonl``; ``events`` receives
    one event per finished sample.

    When a sample ends in a ``connection`` error (the server could not be reached, after the
    retries), the runner asks the endpoint again (the preflight's probe). If it still does not
    answer, the endpoint is gone: no new sample starts, the samples in flight are cancelled, the
    ones it cut are not recorded (``--resume`` runs them once it is back) and the run is marked
    ``failed``. If it answers, the error was passing and the sample is recorded as it ended.
    """

    def __init__(
        self,
        config: RunConfig,
        *,
        resume_dir: Path | None = None,
        retriever_llm: Any = None,
        judge_llm: Any = None,
        events: EventBus | None = None,
        command: list[str] | None = None,
        scripted: Any = None,
        resume_overrides: dict[str, Any] | None = None,
        retry_errors: bool = False,
    ):
        self.config = config
        self.resume_dir = resume_dir
        self.events = events or EventBus()
        self.command = command if command is not None else list(sys.argv)
        self._retriever_llm = retriever_llm
        self._judge_llm = judge_llm
        self._scripted = scripted
        self._scripted_model: Any = None
        self.resume_overrides = dict(resume_overrides or {})
        if retry_errors and resume_dir is None:
            raise RunSetupError(
                "--retry-errors runs again the errored samples of an earlier run: give it with --resume RUN"
            )
        self.retry_errors = retry_errors
        self.stopped_because: str | None = None
        self.write_failed = False  # stopped because a run file could not be written (a full disk)
        self.stop = asyncio.Event()
        self.interrupted = asyncio.Event()  # a Ctrl-C (request_stop("interrupted"))
        self.cancel = asyncio.Event()  # a stop that cancels the samples in flight (CANCELLING_STOPS)
        self.stop_reason: RunStatus | None = None
        self.sampling = False  # the samples began (before: set-up and tree building, nothing written)
        self.warnings: list[str] = []
        self.setting_notes: list[str] = []  # settings taken from elsewhere (the doctor's findings)
        self.plugin_changes: list[str] = []  # a resume's plug-ins whose code changed (kept with the resume)
        self.endpoint_warnings: list[str] = []  # what the preflight found wrong (run.json, extra)
        self.doctor_warnings: list[str] = []  # what the doctor's findings say will fail (run.json, extra)
        self._llm_cache: Any = None  # the run's LLM cache (None: off), for what it could not record
        self._claim: FolderClaim | None = None  # the run folder, held while this run lasts

    # -- set-up ------------------------------------------------------------------
    def _open_run_dir(self) -> tuple[Path, RunInfo | None]:
        if self.resume_dir is not None:
            run_dir = Path(self.resume_dir)
            rundir = RunDir(run_dir)
            if run_dir.is_dir():  # before reading anything: a run going on there would change it
                self._claim_folder(  # (one still setting up has no run.json yet)
                    run_dir, f"cannot resume {run_dir}: another bench run is using it now; wait for it to end"
                )
            if not rundir.info_path.exists():
                raise RunSetupError(f"cannot resume: {rundir.info_path} does not exist")
            if problem := rundir.unwritable():  # before any work, and before run.json says "running"
                raise RunSetupError(f"cannot resume {run_dir}: {problem}; nothing was written")
            try:
                info = rundir.read_info()
            except RunLoadError as exc:
                raise RunSetupError(f"cannot resume: {exc}") from None
            self._resumed(resume.check_records, rundir, info)
            config = self._resumed(resume.stored_settings, info, self.config, run_dir)
            try:
                self.config = config.with_overrides(self.resume_overrides)
            except ValueError as exc:
                raise RunSetupError(str(exc)) from None
            self._resumed(resume.check_credentials, self.config)
            # said with the header, as a new run says its profile and the doctor's settings
            self.setting_notes.append(resume.settings_note(self.config))
            return run_dir, info
        if self.config.out is None:
            return self._claim_default_folder(Path("results") / new_run_id(self.config)), None
        run_dir = self.config.out
        if problem := RunDir(run_dir).problem():
            hint = f"; use --resume {run_dir} or another --out" if RunDir(run_dir).holds_run() else ""
            raise RunSetupError(f"--out {run_dir}: {problem}{hint}")
        self._claim_new_folder(run_dir)
        return run_dir, None

    def _claim_default_folder(self, first: Path) -> Path:
        """The folder of a run given no ``--out``: ``results/RUN_ID``, or, where another run has that one,
        the first of ``RUN_ID-2``, ``RUN_ID-3``, ... that no run has. Two runs share a run id when they
        start in the same second with the same options, settings from the environment apart (two CI jobs
        that differ in ``$PAGEINDEX_MODEL`` or ``$OPENAI_BASE_URL``): the second was refused, exit 2,
        told to give another ``--out`` it had not given."""
        for n in range(1, 1000):
            run_dir = first if n == 1 else first.with_name(f"{first.name}-{n}")
            if RunDir(run_dir).taken_by():  # a run of that id that already wrote its files
                continue
            if problem := RunDir(run_dir).problem():  # no run folder can be there (results is a file)
                raise RunSetupError(f"--out {run_dir}: {problem}")
            try:
                self._claim_new_folder(run_dir)
            except _FolderBusy:  # another run holds it, still setting up
                continue
            return run_dir
        raise RunSetupError(f"--out {first}: it and 998 folders named after it are in use; give an --out")

    def _claim_new_folder(self, run_dir: Path) -> None:
        """Make a new run's folder and claim it before the set-up's long steps (the trees), so that a
        resume or a second run started into it meanwhile is told the folder is in use. The folders
        made here are removed again when the run ends before writing run.json (a set-up error, a
        Ctrl-C while the trees are built) and nothing else was put in them."""
        busy = f"--out {run_dir}: another bench run is writing into it now; give another --out"
        self._claim_folder(run_dir, busy, make=True, error=_FolderBusy)
        if problem := RunDir(run_dir).unwritable():  # a read-only folder or disk: before any work
            raise RunSetupError(f"--out {run_dir}: {problem}; nothing was written")

    def remove_unused_folders(self) -> None:
        """Remove the folders :meth:`_claim_new_folder` made if the run wrote nothing into them: when
        the run ends, while it still holds its claim, and on a second Ctrl-C, which quits at once."""
        if self._claim is not None:
            self._claim.remove_unused()

    def _make_clients(self, model: str | None, judge_default: str | None = None) -> tuple[Any, Any, Any]:
        """(retriever client, judge client or list for a panel, budget). ``model`` is None when no
        chosen retriever needs one; ``judge_default`` is the model an LLM judge falls back to."""
        judge_default = judge_default if judge_default is not None else model
        from pageindex.llm import Budget, UsageLedger, make_client

        cfg = self.config
        budget = None
        if cfg.budget_tokens or cfg.budget_usd:
            budget = Budget(max_tokens=cfg.budget_tokens, max_usd=cfg.budget_usd)
        # it holds a retrieval's records while it runs, the run's totals as running sums (a record per
        # call of the run was about 1.4 KB each, never read again once its sample was made)
        ledger = UsageLedger(keep_records=False)
        self._ledger = ledger
        common: dict[str, Any] = {
            "ledger": ledger,
            "budget": budget,
            "timeout": cfg.timeout_s,
            "max_retries": cfg.max_retries,
            "json_mode": cfg.json_mode,
            "concurrency": cfg.llm_concurrency or max(cfg.concurrency, 1) * 2,
            "retry_timeouts": cfg.retry_timeouts,
            "context_window": cfg.context_window,
            "context_window_source": cfg.context_window_source,
            "cache": self._cache(),
        }

        # a judge model at another endpoint than the answering model's: its own settings (bench run settled
        # them for that endpoint when the run started)
        def judge_common(spec: str) -> dict[str, Any]:
            own = cfg.judge_clients.get(spec)
            if own is None:
                return common
            # not the answering model's window: the judge's own, found by the doctor, else discovered
            return {**common, "context_window": None, **own.client_kwargs(max(cfg.concurrency, 1) * 2)}

        def client(spec: str, role: str, base_url: str | None) -> Any:
            settings = judge_common(spec) if role == "judge" else common
            if spec.split("/", 1)[0] == "scripted":
                return make_client(spec, role=role, scripted=self._scripted_for(spec), **settings)
            if base_url is None:  # the endpoint the run resolved when it started
                base_url = self._resumed(resume.stored_endpoint, spec, role, cfg.resolved_urls.get(spec))
            made = make_client(spec, role=role, base_url=base_url, **settings)
            if self.resume_dir is not None and hasattr(made, "keep_context_window"):
                made.keep_context_window("a --resume keeps the window the run started with")
            return made

        retriever_llm = self._retriever_llm
        if retriever_llm is None and model:
            retriever_llm = client(model, "retriever", cfg.base_url)
        judge_llm = self._judge_llm
        judge = self._judge_name(judge_default)
        judge_url = cfg.judge_base_url or cfg.base_url
        need = judge_model_need(judge)
        unused = {
            "--judge-model": bool(cfg.judge_model) and need != "one",
            "--judge-models": bool(cfg.judge_models) and need != "panel",
            "--judge-base-url": bool(cfg.judge_base_url) and need == "none",
        }
        # (a new run only: a run started before these checks resumes with the settings it has)
        given = [name for name, unused_here in unused.items() if unused_here]
        if given and self.resume_dir is None:
            takes = {"none": "takes no model", "one": "takes one model (--judge-model)",
                     "panel": "takes a panel of models (--judge-models)"}[need]  # fmt: skip
            which = f"--judge {judge}" if cfg.judge else f"the default judge ({judge})"
            raise RunSetupError(f"{which} {takes}: {' and '.join(given)} would not be used; drop it")
        if judge_llm is None and need == "one":
            jm = cfg.judge_model or judge_default
            if not jm:
                raise RunSetupError(f"--judge {judge} needs a model: pass --judge-model or --model")
            judge_llm = client(jm, "judge", judge_url)
        if judge_llm is None and need == "panel":
            if len(cfg.judge_models) < 2:
                raise RunSetupError("--judge panel needs two or more --judge-models")
            judge_llm = [client(m, "judge", judge_url) for m in cfg.judge_models]
        judge_uses_base_url = need != "none" and not cfg.judge_base_url
        if (
            self.resume_dir is None and cfg.base_url and retriever_llm is None and not judge_uses_base_url
            and self._retriever_llm is None
        ):
            raise RunSetupError(
                f"--base-url {redact_url(cfg.base_url)} would not be used: no retriever or judge of this run "
                "calls a model (drop --base-url, or run a retriever or judge that uses one)"
            )
        return retriever_llm, judge_llm, budget

    def _warn_now(self, message: str) -> None:
        """A warning said on the progress stream before any sample (the header's place)."""
        self.events.publish(RunEvent(kind="warning", run_id="", progress=RunProgress(), message=message))

    def _warn_shared_key(self, retriever_llm: Any, judge_llm: Any) -> None:
        """Say, before any call, that the one ``$OPENAI_API_KEY`` goes to the answering model's endpoint
        and to a judge's elsewhere (:func:`~pageindex.llm.spec.shared_key_warning`)."""
        from pageindex.llm.spec import shared_key_warning

        judges = judge_llm if isinstance(judge_llm, list) else [judge_llm]
        specs = [getattr(j, "model_spec", None) for j in judges]
        said = shared_key_warning(getattr(retriever_llm, "model_spec", None), [s for s in specs if s])
        if said:
            self._warn_now(said)

    def _warn_tool_loops(self, retriever_llm: Any, retrievers: list[str]) -> None:
        """Say, before any sample, which retrievers need tool calls where the cached ``pageindex doctor``
        findings say tool calls do not work (:func:`~pageindex.llm.doctor.tool_loop_warning`): their
        samples end without an answer, and the run went on in silence. Said again with the closing
        warnings, and kept in run.json (``extra.doctor_warnings``)."""
        from pageindex.llm.doctor import tool_loop_warning

        if retriever_llm is None or self._retriever_llm is not None:
            return
        spec = getattr(retriever_llm, "spec", None)
        said = tool_loop_warning(spec, self.config.base_url, retrievers, outcome="their samples end")
        if said and said not in self.warnings:
            self._warn_now(said)
            self.warnings.append(said)
            self.doctor_warnings.append(said)

    async def _preflight(self, *clients: Any) -> None:
        """Fail before any work when a model is unreachable or its key is rejected (one clear line
        naming the model and URL; never the key). Clients given by the caller are trusted."""
        from pageindex.llm import LLMError

        given = {id(self._retriever_llm), id(self._judge_llm)}
        flat = [c for x in clients for c in (x if isinstance(x, list) else [x])]
        for client in flat:
            if client is None or id(client) in given:
                continue
            try:
                busy = "a server that answers one request at a time may still be busy with an earlier one"
                if not await self._answered(client, busy):
                    self._stop_before_sampling("while waiting for the model endpoint to answer")
            except LLMError as exc:
                raise RunSetupError(str(exc)) from None
            found = getattr(client, "preflight_result", None)
            if found is not None and (said := found.unlisted(client.model)) and said not in self.warnings:
                # with the header, before the samples, again with the run's closing warnings, and in
                # run.json (its answers are filed under a name the server may not have answered with)
                self.setting_notes.append(said)
                self.warnings.append(said)
                self.endpoint_warnings.append(said)

    async def _answered(self, client: Any, why: str, *, say: bool = True) -> bool:
        """``client.check()``, said when it has not answered within :data:`PREFLIGHT_NOTICE_S` (a
        one-at-a-time server still busy with an earlier request answers only when idle, which may
        take minutes; ``why`` says which request it may be busy with). False when a stop (Ctrl-C)
        came first: the wait ends at once. The check's own error is raised."""
        check = asyncio.ensure_future(client.check())
        stop = asyncio.ensure_future(self.stop.wait())
        try:
            first = asyncio.FIRST_COMPLETED
            done, _ = await asyncio.wait({check, stop}, timeout=PREFLIGHT_NOTICE_S, return_when=first)
            if not done and say:
                where = redact_url(getattr(client, "base_url", None) or "") or "its endpoint"
                self.events.publish(RunEvent(
                    kind="waiting", run_id="", progress=RunProgress(),
                    message=f"waiting for {getattr(client, 'spec', 'the model')} at {where} to answer "
                    f"(no answer in {PREFLIGHT_NOTICE_S:g}s: {why}; Ctrl-C stops)",
                ))  # fmt: skip
            if not done:
                done, _ = await asyncio.wait({check, stop}, return_when=first)
            if check not in done:
                return False
            await check
            return True
        finally:
            for task in (check, stop):
                task.cancel()

    def _scripted_for(self, spec: str) -> Any:
        """The run's one scripted model (shared by every ``scripted`` client)."""
        from pageindex.llm import ScriptedModel

        if self._scripted_model is None:
            source = self._scripted if self._scripted is not None else self.config.scripted_policy
            if source is None:
                from pageindex.cli._common import SCRIPTED_POLICY_ENV

                raise RunSetupError(
                    f"model {spec!r} needs a scripted policy: pass --scripted-policy module:function "
                    f"(or ${SCRIPTED_POLICY_ENV})"
                )
            if isinstance(source, str):
                try:
                    source = load_policy(source)
                except ValueError as exc:
                    raise RunSetupError(str(exc)) from None
            # a policy given as a function answers for the run alone: nothing reads its requests, which
            # a ScriptedModel given whole keeps for its caller (a test)
            self._scripted_model = (
                source
                if isinstance(source, ScriptedModel)
                else ScriptedModel(policy=source, keep_requests=False)
            )
        return self._scripted_model

    def _cache(self) -> Any:
        """The run's LLM cache, checked before any work (a run would otherwise record every model
        call as an error)."""
        from pageindex.llm.cache import open_cache
        from pageindex.llm.types import LLMConfigError

        try:
            self._llm_cache = open_cache(self.config.cache, self.config.cache_path)
        except LLMConfigError as exc:
            raise RunSetupError(str(exc)) from None
        return self._llm_cache

    def _judge_name(self, model: str | None) -> str:
        return judge_for(self.config, with_model=bool(model) or self._judge_llm is not None)

    async def _build_trees(
        self, questions: list[Question], dataset: Dataset
    ) -> tuple[dict[str, Tree], list[DroppedQuestion]]:
        from pageindex.tree import build_tree
        from pageindex.tree.errors import PDFError

        trees: dict[str, Tree] = {}
        dropped: list[DroppedQuestion] = []
        doc_ids = list(dict.fromkeys(q.doc_id for q in questions))
        loaded = 0  # of the trees done, those the tree cache held
        for k, doc_id in enumerate(doc_ids):
            # Ctrl-C: the tree under way (in a thread) finishes, no other starts
            self._stop_before_sampling(
                f"while building the trees ({len(trees)} of {len(doc_ids)} built, kept in the tree cache)"
            )
            cached = await asyncio.to_thread(self._in_tree_cache, dataset.pdf_path(doc_id))
            self._tree_event(k, len(doc_ids), dataset.pdf_path(doc_id).name, loaded, cached)
            loaded += cached
            try:
                trees[doc_id] = await asyncio.to_thread(
                    build_tree, dataset.pdf_path(doc_id), cache_dir=self.config.tree_cache_dir
                )
            except Exception as exc:  # a bad filing drops its questions, never the run
                # a PDFError names its file already ("DIR/x.pdf: not a PDF file"); anything else is named
                detail = str(exc)
                if not isinstance(exc, PDFError):
                    detail = f"{dataset.pdf_path(doc_id).name}: {error_text(exc)}"
                dropped += [
                    DroppedQuestion.of(q, "tree_build_failed", detail)
                    for q in questions
                    if q.doc_id == doc_id
                ]
        self._tree_event(len(doc_ids), len(doc_ids), "", loaded)
        return trees, dropped

    def _in_tree_cache(self, pdf: Path) -> bool:
        """Whether ``build_tree(pdf)`` (as the run calls it: the default builder settings) will load the
        tree from the tree cache rather than build it: said so in the progress (a ``--resume`` said
        "building tree 1/55" of trees it only read back). Costs one more hash of the file."""
        from pageindex.tree import TreeCache
        from pageindex.tree.build import code_version
        from pageindex.tree.pdf import pdf_sha256

        try:
            return TreeCache(self.config.tree_cache_dir).path_for(pdf_sha256(pdf), code_version()).is_file()
        except Exception:  # an unusable filing: build_tree says why, and its questions are dropped
            return False

    def _tree_event(self, done: int, total: int, filing: str, loaded: int, cached: bool = False) -> None:
        progress = RunProgress(done=done, total=total, skipped=loaded)
        self.events.publish(
            RunEvent(kind="tree_building", run_id="", progress=progress, message=filing, cached=cached)
        )

    @staticmethod
    def _calls_model(retriever: str) -> bool:
        return get_retriever(retriever).needs_llm

    def _stop_before_sampling(self, when: str) -> None:
        """After a Ctrl-C during set-up, end the run there: nothing is written, and the folder a new
        run made for itself is removed as it ends (:class:`SetupInterrupted`, exit 130). ``when`` says
        where it stopped."""
        if self.stop.is_set():
            raise SetupInterrupted(f"{when}; no sample ran and nothing was written")

    # -- one sample --------------------------------------------------------------
    async def _one(
        self,
        q: Question,
        retriever: str,
        repeat: int,
        tree: Tree,
        retriever_llm: Any,
        judge: Any,
        run_id: str,
    ) -> Sample:
        opts = self.config.retriever_options.get(retriever, {})
        context = QuestionContext(
            question_id=q.question_id,
            evidence_pages=q.evidence_pages,
            doc_name=q.doc_id,
            question_type=q.question_type,
        )
        result = await aretrieve(
            tree, q.question, retriever=retriever, llm=retriever_llm, context=context,
            time_limit=self.config.time_limit_s, **opts,
        )
        # a retriever that calls no model ran with none, whatever the run's other retrievers use
        model = (getattr(retriever_llm, "spec", "") or "") if self._calls_model(retriever) else NO_VALUE
        sample = Sample.from_result(result, question=q, repeat=repeat, run_id=run_id, model=model)
        if result.status != "answer":
            return sample
        try:
            return sample.judged(await judge_sample(judge, sample.judge_input()))
        except BudgetExceeded:
            raise
        except Exception as exc:  # the judge's failure, recorded as such; the answer stays
            return sample.judged(None, judge_error_text(exc), spent=getattr(exc, "usage", None))

    async def _recorded(self, cache: Any) -> None:
        """Wait for the LLM cache's queued recordings (another process holding the file: at most its busy
        timeout), in a thread: the loop is not held; a Ctrl-C (before or meanwhile) stops waiting for
        that process (the records it holds back are said not written)."""
        flushing = asyncio.ensure_future(asyncio.to_thread(cache.flush))
        interrupted = asyncio.ensure_future(self.interrupted.wait())
        try:
            await asyncio.wait({flushing, interrupted}, return_when=asyncio.FIRST_COMPLETED)
            if not flushing.done():
                cache.give_up_waiting()
            await flushing
        finally:
            interrupted.cancel()

    # -- the loop ----------------------------------------------------------------
    def request_stop(self, reason: RunStatus) -> None:
        """Stop starting samples. The first reason stands, except an interrupt (Ctrl-C), which wins
        over any: the run ends ``interrupted`` (exit 130) and its samples in flight are cancelled,
        also after a budget stop that let them run on."""
        if self.stop_reason is None or reason == "interrupted":
            self.stop_reason = reason
        if reason in CANCELLING_STOPS:
            self.cancel.set()
        if reason == "interrupted":
            self.interrupted.set()
        self.stop.set()

    async def run(self) -> RunOutcome:
        """Open the run directory, settle the settings, choose retrievers and questions, make the
        models, build the trees, describe the run, then run the samples. The run folder is claimed
        for this run while it lasts (:class:`FolderClaim`)."""
        try:
            return await self._run()
        finally:
            self.remove_unused_folders()
            if self._claim is not None:
                self._claim.release()
                self._claim = None

    def _resumed(self, check: Callable[..., T], *args: Any) -> T:
        """``check(*args)`` of :mod:`bench.resume`, its refusal said as ``cannot resume RUN: why``."""
        try:
            return check(*args)
        except resume.ResumeRefused as exc:
            raise RunSetupError(f"cannot resume {self.resume_dir}: {exc}") from None

    def _claim_folder(
        self, run_dir: Path, busy: str, *, make: bool = False, error: type[RunSetupError] = RunSetupError
    ) -> None:
        """Hold ``run_dir`` for this run (made first when ``make``), or fail with ``error(busy)``
        (another run holds it)."""
        try:
            self._claim = FolderClaim.take(run_dir, make=make)
        except FolderInUse:
            raise error(busy) from None
        except RunLoadError as exc:
            raise RunSetupError(f"--out {exc}") from None

    async def _run(self) -> RunOutcome:
        run_dir, previous = self._open_run_dir()
        model, doctor_notes = self._settle_settings(previous)
        cfg = self.config
        retrievers, skipped = self._choose_retrievers(model)
        dataset, questions, dropped = self._choose_questions()
        # Only the models this run uses are made and preflighted (an extractive run judged by
        # rules needs none, even with OPENAI_API_KEY set).
        needs_model = any(self._calls_model(r) for r in retrievers)
        retriever_llm, judge_llm, budget = self._make_clients(model if needs_model else None, model)
        if cfg.model and not needs_model and judge_llm is None:
            self.setting_notes.append(
                f"--model {cfg.model} is not used: {', '.join(retrievers)} "
                f"{'calls' if len(retrievers) == 1 else 'call'} no model, nor does the "
                f"{self._judge_name(model)} judge"
            )
        judge_name = self._judge_name(model)
        from bench.judges.base import make_judge

        judge = make_judge(judge_name, model_client=judge_llm)
        if previous is not None:  # before the preflight and the trees (minutes on a real dataset);
            # the trees are built by today's builder (the tree cache is keyed by its version)
            self._resumed(resume.check_versions, previous, {
                "judge version": provenance.judge_version(judge),
                "tree builder version": provenance.builder_version(()),
                "dataset content hash": provenance.dataset_content_hash(dataset.path),
            }, dataset.sha256)  # fmt: skip
            self.plugin_changes = _plugin_code_changes(previous, retrievers, judge_name)
            self.setting_notes += self.plugin_changes
            if unrecorded := provenance.unrecorded_keeps(previous):
                self.setting_notes.append(
                    f"{run_dir} does not record its {', '.join(unrecorded)} (written by an older "
                    "pageindex-bench): its earlier samples may have been scored with other versions, so "
                    "they stay unrecorded in its run.json (compare and gate say so)"
                )
        self._warn_shared_key(retriever_llm, judge_llm)
        await self._preflight(retriever_llm, judge_llm)
        self._warn_tool_loops(retriever_llm, retrievers)
        self._stop_before_sampling("before the trees were built")

        trees, tree_dropped = await self._build_trees(questions, dataset)
        self._stop_before_sampling(f"after building the trees ({len(trees)}, kept in the tree cache)")
        dropped = [*dropped, *tree_dropped]
        questions = [q for q in questions if q.doc_id in trees]
        if not questions:
            raise RunSetupError(f"no question can run: {_drop_counts(dropped, dataset)}")

        run_id = previous.run_id if previous else run_dir.name
        info = self._describe(
            previous, run_id, dataset, questions, dropped, retrievers, skipped, trees,
            model if needs_model else None, judge_name, judge, judge_llm, doctor_notes,
        )  # fmt: skip
        self._stop_before_sampling("before the first sample")  # a Ctrl-C in the last set-up steps
        rundir = RunDir(run_dir)
        # checked at the start, but another run may have written here before this one claimed it
        if previous is None and (problem := rundir.problem()):
            raise RunSetupError(f"--out {run_dir}: {problem}; use --resume {run_dir} or another --out")
        with _event_log(rundir.events_path) as event_log:
            outcome = await self._run_samples(
                run_dir, info, cfg, questions, retrievers, skipped, trees, dropped, retriever_llm, judge,
                judge_llm, run_id,
            )  # fmt: skip
        if (lost := event_log.failed) is not None:
            outcome.warnings.append(
                f"{rundir.events_path} could not be written ({lost.strerror or lost}): the run's log lines "
                "from then on are lost (its samples are not)"
            )
        return outcome

    def _settle_settings(self, previous: RunInfo | None) -> tuple[str | None, list[str]]:
        """The answering model, and the settings ``pageindex doctor`` found for it (user flags >
        stored settings > doctor)."""
        cfg = self.config
        if self._retriever_llm is not None:
            model = getattr(self._retriever_llm, "spec", "scripted")
        elif previous is not None:  # the model the run stored, never today's $PAGEINDEX_MODEL
            model = cfg.model
        else:
            model = configured_model(cfg.model)
        if model and model.split("/", 1)[0] == "scripted" and self._retriever_llm is None:
            self._scripted_for(model)  # a missing policy is a set-up error, before any work
        doctor_notes: list[str] = []
        if previous is None and self._retriever_llm is None:
            # the run's model endpoint: the answering model's, else (-r extractive --judge llm) the judge's,
            # whose local-server profile the command line settled the same way
            judge_model = cfg.judge_model or next(iter(cfg.judge_models), None)
            if model or not judge_model or self._judge_llm is not None:
                cfg, doctor_notes = apply_doctor_findings(cfg, model)
            else:
                judge_url = cfg.judge_base_url
                cfg, doctor_notes = apply_doctor_findings(cfg, judge_model, judge_url, answering=False)
            cfg, recorded = apply_recording_settings(cfg, model or judge_model)
            self.config = cfg
            # said with the run's header, once the preflight passed (the CLI prints them at the
            # first event), and recorded in run.json; not repeated among the closing warnings
            self.setting_notes += [f"settings from pageindex doctor: {note}" for note in doctor_notes]
            self.setting_notes += [f"settings from the recording: {note}" for note in recorded]
        return model, doctor_notes

    def _choose_retrievers(self, model: str | None) -> tuple[list[str], dict[str, str]]:
        """The retrievers to run and those skipped; unknown retrievers or options fail now."""
        cfg = self.config
        retrievers, skipped = choose_retrievers(cfg, model)
        unknown_opts = set(cfg.retriever_options) - set(available_retrievers())
        if unknown_opts:
            raise RunSetupError(f"options given for unknown retriever(s): {', '.join(sorted(unknown_opts))}")
        # every option is checked, also those of a retriever this run skips for want of a model
        # (a typo in --opt agent.max_turn is an error whether or not agent runs this time)
        for name in sorted(set(retrievers) | set(cfg.retriever_options)):
            get_retriever(name).parse_options(cfg.retriever_options.get(name, {}))
        # options of a retriever that neither runs nor is reported skipped would go unused in silence
        idle = sorted(set(cfg.retriever_options) - set(retrievers) - set(skipped))
        if idle and self.resume_dir is None:
            raise RunSetupError(
                f"--opt {idle[0]}.*: {idle[0]} is not among this run's retrievers ({', '.join(retrievers)}); "
                "add it to --retrievers or drop the option"
            )
        return retrievers, skipped

    def _choose_questions(self) -> tuple[Dataset, list[Question], list[DroppedQuestion]]:
        """The dataset, the selected and validated questions (``--limit`` applied), and those dropped."""
        cfg = self.config
        dataset = load_dataset(cfg)
        from bench.datasets.validation import validate_dataset

        # what is wrong that drops no question (a documents.jsonl row ignored): said with the run's end
        self.warnings += dataset.problems
        selected = dataset.select(cfg.question_types, cfg.question_ids)
        explain_empty_selection(dataset, selected, cfg)
        validation = validate_dataset(selected, similarity_threshold=cfg.similarity_threshold)
        questions = validation.kept[: cfg.limit] if cfg.limit else validation.kept
        if not questions:
            raise RunSetupError(f"no question can run: {_drop_counts(validation.dropped, dataset)}")
        return dataset, questions, list(validation.dropped)

    def _describe(
        self,
        previous: RunInfo | None,
        run_id: str,
        dataset: Dataset,
        questions: list[Question],
        dropped: list[DroppedQuestion],
        retrievers: list[str],
        skipped: dict[str, str],
        trees: dict[str, Tree],
        model: str | None,
        judge_name: str,
        judge: Any,
        judge_llm: Any,
        doctor_notes: list[str],
    ) -> RunInfo:
        """The run's ``run.json``: settings and provenance (a resumed run keeps its identity)."""
        cfg = self.config
        judge_model = None
        if judge_model_need(judge_name) == "panel":
            judge_model = ",".join(cfg.judge_models)
        elif judge_model_need(judge_name) == "one":
            judge_model = getattr(judge_llm, "spec", None)
        resolved = self._resolved(model, judge_name, judge_model)
        endpoints = resolved.get("resolved_urls", {})
        urls = {
            "retriever": redact_url(cfg.base_url) or endpoints.get(resolved.get("model") or ""),
            "judge": redact_url(cfg.judge_base_url or cfg.base_url) or endpoints.get(judge_model or ""),
        }
        info = previous or RunInfo(run_id=run_id, started_at=_now())
        # a resumed run that did not record a version its samples were scored with keeps it unrecorded:
        # today's would claim its earlier samples for this install (review: upgrade)
        unknown = set(provenance.unrecorded_keeps(previous)) if previous else set()
        # A resume keeps the command that started the run (the one that reproduces it) and adds its
        # own to the list of resumes.
        command = redact_argv(self.command)
        changed = {"plugin_code_changed": self.plugin_changes} if self.plugin_changes else {}
        resumed = {"command": command, "at": _now(), **changed}
        resumes = [*previous.extra.get("resumes", []), resumed] if previous else []
        return info.model_copy(
            update={
                "command": previous.command if previous else command,
                "package_version": _package_version(),
                "git_commit": _git_commit(),
                "dataset": DatasetInfo(
                    name=dataset.name,
                    path=os.path.abspath(dataset.path),
                    sha256=dataset.sha256,
                    content_sha256=""
                    if "dataset content hash" in unknown
                    else provenance.dataset_content_hash(dataset.path),
                    questions=len(questions),
                    dropped=len(dropped),
                ),
                "retrievers": retrievers,
                "retriever_options": {r: cfg.retriever_options.get(r, {}) for r in retrievers},
                "prompt_versions": {r: get_retriever(r).prompt_version for r in retrievers},
                "retriever_code": {
                    r: code for r in retrievers if (code := registry.plugin_identity("retriever", r))
                },
                "model": model,
                "builder_version": None
                if "tree builder version" in unknown
                else provenance.builder_version(trees.values()),
                "judge": judge_name,
                "judge_version": None if "judge version" in unknown else provenance.judge_version(judge),
                "judge_model": judge_model,
                "judge_prompt_version": getattr(judge, "prompt_version", None),
                "judge_code": registry.plugin_identity("judge", judge_name),
                "base_urls": {k: v for k, v in urls.items() if v},
                "repeats": cfg.repeats,
                "concurrency": cfg.concurrency,
                "budget": {k: v for k, v in {"tokens": cfg.budget_tokens, "usd": cfg.budget_usd}.items() if v}
                or None,
                "cache_mode": cfg.cache,
                "status": "running",
                "ended_at": None,
                "skipped_retrievers": skipped,
                "extra": {
                    **(previous.extra if previous else {}),
                    **({"doctor": doctor_notes} if doctor_notes else {}),
                    **({"endpoint_warnings": self.endpoint_warnings} if self.endpoint_warnings else {}),
                    **({"doctor_warnings": self.doctor_warnings} if self.doctor_warnings else {}),
                    **({"resumes": resumes} if resumes else {}),
                    "config": cfg.model_copy(
                        update={
                            "base_url": redact_url(cfg.base_url),
                            "judge_base_url": redact_url(cfg.judge_base_url),
                            **resolved,
                            **absolute_paths(cfg),
                        }
                    ).model_dump(mode="json"),
                },
            }
        )

    def _resolved(self, model: str | None, judge_name: str, judge_model: str | None) -> dict[str, Any]:
        """What the run settled for itself, stored with its config so that ``--resume`` goes on with
        it rather than resolving it again from the environment: the answering model (``model``: the
        one its retrievers call, None when none does), the retrievers asked for (defaults included),
        the judge and its one model, and the endpoint each model's provider resolved where no base URL
        was given (``resolved_urls``). Clients given by the caller are the caller's: not stored."""
        cfg = self.config
        resolved: dict[str, Any] = {"retrievers": wanted_retrievers(cfg)}
        unnamed: list[str] = []  # model specs whose clients got no base URL: they resolved their own
        if self._retriever_llm is None:
            resolved["model"] = cfg.model or model
            if resolved["model"] and not cfg.base_url:
                unnamed.append(resolved["model"])
        if self._judge_llm is None:
            resolved["judge"] = judge_name
            if judge_model_need(judge_name) == "one":
                resolved["judge_model"] = cfg.judge_model or judge_model
            if not (cfg.judge_base_url or cfg.base_url):
                unnamed += [m for m in str(judge_model or "").split(",") if m]
        # what the run resolved first stays (a resume must not take today's environment's)
        urls = dict(cfg.resolved_urls)
        for spec in unnamed:
            if spec not in urls and (url := redact_url(endpoint_url(spec, None))):
                urls[spec] = url
        if urls:
            resolved["resolved_urls"] = urls
        return resolved

    async def _run_samples(
        self,
        run_dir: Path,
        info: RunInfo,
        cfg: RunConfig,
        questions: list[Question],
        retrievers: list[str],
        skipped: dict[str, str],
        trees: dict[str, Tree],
        dropped: list[DroppedQuestion],
        retriever_llm: Any,
        judge: Any,
        judge_llm: Any,
        run_id: str,
    ) -> RunOutcome:
        self.sampling = True
        rundir = RunDir(run_dir)
        info = rundir.write_info(info)
        rundir.write_dropped(dropped)
        store = rundir.sample_store()
        self.warnings += store.warnings
        retried = rundir.withdraw_errors(store) if self.retry_errors else []
        if retried:
            self.setting_notes.append(
                f"--retry-errors: {counted(len(retried), 'sample')} that ended in error "
                f"{'runs' if len(retried) == 1 else 'run'} again "
                f"(their records moved to {rundir.retried_path})"
            )
        todo = [
            (q, r, rep)
            for q in questions
            for r in retrievers
            for rep in range(cfg.repeats)
            if not store.has((q.question_id, r, rep))
        ]
        progress = RunProgress(total=len(todo), skipped=len(store.samples))
        self.events.publish(RunEvent(kind="run_started", run_id=run_id, progress=progress))
        written = 0
        session: list[Sample] = []  # the samples this invocation wrote, whose usage is in the ledger
        secrets = secrets_of(cfg)
        work: Iterator[tuple[Question, str, int]] = iter(todo)

        async def worker() -> None:
            nonlocal written
            abandoned: Sample | None = None  # this worker's last sample, if it may have left a request
            while True:
                await _let_signals_in()
                if self.stop.is_set():
                    return
                item = next(work, None)
                if item is None:
                    return  # no next sample to wait for: a request the last one abandoned is no matter
                if abandoned is not None:
                    await self._let_abandoned_finish(abandoned, retriever_llm, judge_llm)
                    abandoned = None
                    if self.stop.is_set():
                        return  # the item taken is not recorded: it runs on resume
                q, r, rep = item
                try:
                    sample = await self._one(q, r, rep, trees[q.doc_id], retriever_llm, judge, run_id)
                except BudgetExceeded:
                    self.request_stop("aborted_due_to_budget")
                    return
                if await self._endpoint_gone(sample, retriever_llm, judge_llm):
                    return  # not recorded: it runs again on resume, once the endpoint answers
                sample = scrub(sample, secrets)
                try:
                    stored = store.append(sample)  # finished is finished: kept even after a Ctrl-C
                except OSError as exc:  # a full disk: this sample is not recorded, it runs on resume
                    self._write_failed(store.path, exc)
                    return
                if stored:
                    written += 1
                    session.append(sample)
                    progress.add(sample)
                    self.events.publish(
                        RunEvent(kind="sample_finished", run_id=run_id, progress=progress, sample=sample)
                    )
                abandoned = sample

        tasks = [asyncio.create_task(worker()) for _ in range(min(cfg.concurrency, max(len(todo), 1)))]
        stopper = asyncio.create_task(self._cancel_on_stop(tasks))
        try:
            await asyncio.gather(*tasks, return_exceptions=True)
        finally:
            stopper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await stopper
        for t in tasks:
            if not t.cancelled() and t.exception() is not None:
                raise t.exception()  # a bug in the runner itself, not in a sample

        # A stop (Ctrl-C, budget) that came after the last sample finished changed nothing: the
        # run is complete, so it is "finished", not "interrupted".
        complete = all(store.has((q.question_id, r, rep)) for q, r, rep in todo)
        status: RunStatus = "finished" if complete else (self.stop_reason or "finished")
        unrecorded = self._unrecorded(session)
        if unrecorded is not None:
            info = info.model_copy(update={"unrecorded_usage": _add_usage(info.unrecorded_usage, unrecorded)})
        sent, cached = self._sent_and_cached()
        info = info.model_copy(update={
            "sent_usage": _add_usage(info.sent_usage, sent),
            "cached_usage": _add_usage(info.cached_usage, cached),
        })  # fmt: skip
        detail = None
        if status == "failed" and self.stopped_because:
            once = "once it can be written" if self.write_failed else "once it answers"
            detail = (
                f"{self.stopped_because}: no new sample started and the samples it cut are not recorded; "
                f"{once}, continue with: {resume_run_command(run_dir)}"
            )
        try:
            info, summary = rundir.finish(
                info.model_copy(update={"status": status, "status_detail": detail, "ended_at": _now()}),
                store.samples, dropped,
            )  # fmt: skip
        except OSError as exc:  # the disk is full still: run.json keeps "running" (said killed)
            raise RunWriteError(
                f"cannot write into {run_dir} ({exc.strerror or exc}): "
                f"{counted(len(store.samples), 'finished sample')} kept in {store.path.name}, the run's "
                f"status not written (said killed); once it can be written, continue with: "
                f"{resume_run_command(run_dir)}"
            ) from None
        self.events.publish(RunEvent(kind="run_finished", run_id=run_id, progress=progress, status=status))
        if self._llm_cache is not None:
            await self._recorded(self._llm_cache)
            if note := self._llm_cache.unwritten_note():
                self.warnings.append(note)
        return RunOutcome(
            run_dir=run_dir,
            run_id=run_id,
            status=status,
            summary=summary,
            samples_written=written,
            samples_skipped=progress.skipped,
            samples_retried=len(retried),
            stopped_because=self.stopped_because,
            dropped=dropped,
            skipped_retrievers=skipped,
            warnings=self.warnings,
            samples_total=len(store.samples),
            samples_errored=sum(errored(s) for s in store.samples),
            commonest_error=commonest_error(store.samples),
            max_error_rate=cfg.max_error_rate,
            unrecorded=unrecorded,
            sent=sent,
            cached=cached,
        )

    def _sent_and_cached(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """This invocation's calls sent to a model server, and those a cache hit or a shared call in
        flight answered (nothing spent on them, though the samples carry their tokens and cost)."""
        ledger = getattr(self, "_ledger", None)
        if ledger is None:
            return _usage_dict(None), _usage_dict(None)
        sent = _usage_dict(ledger.total(cached=False))
        unreported, estimated = ledger.unreported(cached=False)
        if unreported:
            sent["unreported_attempts"] = unreported
            sent["estimated_prompt_tokens"] = estimated
        return sent, _usage_dict(ledger.total(cached=True))

    def _unrecorded(self, written: list[Sample]) -> dict[str, Any] | None:
        """The model calls of this invocation that no written sample holds: those of samples a stop
        cut (a spent budget, Ctrl-C, an endpoint gone) and left out of samples.jsonl. The ledger holds
        every call; the written samples hold theirs. None when every call is in a sample."""
        ledger = getattr(self, "_ledger", None)
        if ledger is None:
            return None
        spent = ledger.total()
        calls = spent.calls - sum(s.llm_calls for s in written)
        prompt = spent.prompt_tokens - sum(s.retriever_prompt_tokens + s.judge_prompt_tokens for s in written)
        completion = spent.completion_tokens - sum(
            s.retriever_completion_tokens + s.judge_completion_tokens for s in written
        )
        if calls <= 0 and prompt <= 0 and completion <= 0:
            return None
        costs = [s.cost_usd for s in written]
        cost = (
            None if spent.cost_usd is None or None in costs
            else round(max(spent.cost_usd - sum(c for c in costs if c is not None), 0.0), 6)
        )
        return {"calls": max(calls, 0), "prompt_tokens": max(prompt, 0),
                "completion_tokens": max(completion, 0), "cost_usd": cost}

    @staticmethod
    def _failed_on(
        sample: Sample, kind: str, retriever_llm: Any, judge_llm: Any
    ) -> tuple[list[Any], str]:
        """The model clients whose call ended ``sample`` with an error of ``kind`` (``connection``,
        ``timeout``), and whose they are: the retrieval's (the sample is an ``error``) or the judge's
        (an answer whose judge call failed; every model of a panel). Only clients that can be
        probed; none when the sample did not fail that way."""
        if sample.status == "error" and sample.error_kind == kind:
            clients, whose = [retriever_llm], "model"
        elif sample.judge_error_kind == kind:
            clients, whose = (judge_llm if isinstance(judge_llm, list) else [judge_llm]), "judge model"
        else:
            return [], ""
        return [c for c in clients if c is not None and hasattr(c, "check")], whose

    def _write_failed(self, path: Path, exc: OSError) -> None:
        """A finished sample could not be appended to ``samples.jsonl`` (a full disk, a volume gone
        read-only): the run stops as it stops for an endpoint gone, status ``failed``, and the
        samples not recorded run on resume. It was an ``internal error: OSError``, exit 2, with
        run.json left ``running`` and a torn row at the end of the file."""
        if self.stopped_because is None:
            self.stopped_because = f"cannot write {path} ({exc.strerror or exc})"
            self.write_failed = True
        self.request_stop("failed")

    async def _endpoint_gone(self, sample: Sample, retriever_llm: Any, judge_llm: Any) -> bool:
        """Whether ``sample`` failed because a model endpoint is gone: the retrieval's call, or the
        judge's (the sample then has an answer but no verdict), could not reach its server, and a
        probe of that endpoint now fails too. Then the run stops (status ``failed``) and the sample
        is not recorded: it runs again, judged, on resume."""
        clients, whose = self._failed_on(sample, "connection", retriever_llm, judge_llm)
        if not clients:
            return False
        if self.stopped_because is not None:  # already found gone (the run may since be interrupted)
            return True
        self.stopped_because = await endpoint_gone(sample, whose, clients, during="the run")
        if self.stopped_because is None:
            return False
        self.request_stop("failed")
        return True

    async def _let_abandoned_finish(self, sample: Sample, retriever_llm: Any, judge_llm: Any) -> None:
        """After a call of ``sample`` timed out (or was cut at the sample's ``--time-limit``) against a
        server on this machine, wait until that server answers again before the next sample. A
        one-at-a-time server (llama.cpp, Ollama) goes on computing the request the client gave up on,
        and the next sample's first call would wait behind it and time out in its turn: its error
        would be the previous sample's. The wait is
        the preflight's probe (``GET /models``, which such a server answers only when idle), at most
        :data:`ABANDONED_WAITS` call timeouts. A server that has not answered after them hangs (a
        SIGSTOPped llama.cpp), or is stuck on that request for longer than the run can wait: the run
        stops ``failed``, as for an endpoint gone, rather than charging every sample left a timeout
        and the same wait (at the local profile's 600 s, 40 minutes a sample)."""
        from pageindex.llm import LLMError
        from pageindex.llm.profile import is_loopback

        clients, whose = self._failed_on(sample, "timeout", retriever_llm, judge_llm)
        if not clients:
            clients, whose = self._failed_on(sample, TIME_LIMIT, retriever_llm, judge_llm)
        for client in clients:
            if not is_loopback(getattr(client, "base_url", None)):
                continue
            log.info("waiting for %s to finish the request a timed-out call abandoned", client.spec)
            cause = sample.error_kind or sample.judge_error_kind
            why = (
                f"it may still be computing the request sample {sample.question_id} gave up on ({cause}); "
                "a server that answers one request at a time goes on with it"
            )
            started, last = time.monotonic(), None
            for attempt in range(ABANDONED_WAITS):
                try:
                    if not await self._answered(client, why, say=attempt == 0):
                        return
                    break
                except EndpointUnreachableError as exc:  # no HTTP answer: busy, hung or gone
                    last = exc
                except LLMError:  # it answered (an HTTP error status, a rejected key): not busy, not gone
                    break
            else:
                assert last is not None
                if last.timed_out:  # each probe waited its timeout: the server is there, silent
                    why = (
                        f"then the server answered none of {ABANDONED_WAITS} probes in "
                        f"{time.monotonic() - started:.0f}s: it hangs, or is still computing that request; "
                        "restart it if it does not recover"
                    )
                else:  # refused, reset: it went away meanwhile
                    why = f"then it went away; a probe after it: {last.reason}"
                self.stopped_because = self.stopped_because or (
                    f"the {whose} endpoint stopped answering during the run (sample {sample.question_id}'s "
                    f"call was abandoned ({cause}), and {why})"
                )
                self.request_stop("failed")
                return

    async def _cancel_on_stop(self, tasks: list[asyncio.Task[None]]) -> None:
        """Budget: in-flight samples may finish (they are paid for). Interrupt, or an endpoint that
        is gone, whenever it comes (a Ctrl-C after a budget stop too): cancel them (they run again
        on resume)."""
        await self.cancel.wait()
        for t in tasks:
            t.cancel()


async def endpoint_gone(sample: Sample, whose: str, clients: list[Any], *, during: str) -> str | None:
    """After ``sample``'s call (``whose``: "model" or "judge model") could not connect: None when a probe
    of each endpoint in ``clients`` gets an answer (the server is there: the call's failure was its
    own), else why a run or rejudge stops: ``the judge model endpoint stopped answering during the
    rejudge (what the call met; a probe after it: what the probe met)``."""
    from pageindex.llm import LLMError
    from pageindex.llm.preflight import check_upstream

    for client in clients:
        try:
            await client.check()
            spec = getattr(client, "model_spec", None)  # a proxy lists its models with its model server gone
            if spec is not None and hasattr(client, "probe_timeout"):
                found = getattr(client, "preflight_result", None)
                await check_upstream(spec, timeout=client.probe_timeout(), found=found)
        except LLMError as exc:
            return f"the {whose} endpoint stopped answering during {during} ({_what_cut(sample, whose, exc)})"
    return None


def _what_cut(sample: Sample, whose: str, probe: Exception) -> str:
    """What the call that ``sample`` lost met, then what the probe after it met, in one line: ``openai/m
    at URL: the server closed the connection without replying (attempt 1), then connection refused
    (attempts 2-4): the server went away during the call; a probe after it: connection refused``.
    A server killed mid-answer used to be said as only the probe's "cannot reach ...", as if it had
    never been there."""
    probed = str(probe).splitlines()[0]
    call = (sample.error if whose == "model" else sample.judge_error) or ""
    call = call.splitlines()[0] if call else ""
    for prefix in ("LLMCallError: ", "connection: "):
        call = call.removeprefix(prefix)
    call = call.replace(": no reply: ", ": ", 1).replace(": cannot connect: ", ": ", 1)
    if not call:
        return probed
    # the endpoint is named once, by the call: the probe says only what it met
    met = probe.reason if isinstance(probe, EndpointUnreachableError) else probed
    return f"{call}; a probe after it: {met}"


async def _let_signals_in() -> None:
    """Give the event loop the turns it needs to run a signal handler (Ctrl-C's) whose signal
    came while a sample ran without ever yielding (extractive, or a scripted model: no await
    there suspends). The loop reads a signal from its wake-up pipe in one turn and runs the
    handler in the next, so one ``sleep(0)`` is not enough: the worker would be resumed first
    and start another sample. Three turns put the handler (and the stop it requests) before the
    worker looks at ``stop`` again."""
    for _ in range(3):
        await asyncio.sleep(0)


class _EventLogHandler(logging.FileHandler):
    """``events.log``'s handler. A line that cannot be written (a full disk) is no error of the run:
    the first such failure is kept in ``failed`` and the log written no more. (logging printed a
    ``--- Logging error ---`` traceback for every line, and the close's flush ended a finished run
    in ``internal error: OSError``, exit 2.)"""

    failed: OSError | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if self.failed is None:
            super().emit(record)

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 (logging's name)
        exc = sys.exc_info()[1]
        if isinstance(exc, OSError):
            self.failed = self.failed or exc
        else:
            super().handleError(record)

    def flush(self) -> None:
        try:
            super().flush()
        except OSError as exc:
            self.failed = self.failed or exc

    def close(self) -> None:
        try:
            super().close()
        except OSError as exc:  # the lines still buffered met the full disk again
            self.failed = self.failed or exc


@contextlib.contextmanager
def _event_log(path: Path) -> Iterator[_EventLogHandler]:
    """Library log lines (instructor, HTTP retries, validation tracebacks) of this run go to the
    run's ``events.log``; the terminal shows them only with ``-v``. URL credentials and keys are
    masked in every line, whichever logger wrote it."""
    handler = _EventLogHandler(path, encoding="utf-8")
    redact_handler(handler)
    handler.setLevel(logging.INFO)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    if root.getEffectiveLevel() > logging.INFO:
        root.setLevel(logging.INFO)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
        handler.close()


def secrets_of(config: RunConfig) -> list[str]:
    """Strings that must never reach the results: API keys and tokens from the environment, and
    credentials written into the configured URLs (``user:KEY@host``, ``?api-key=KEY``)."""
    found = set(env_secrets())
    for url in (config.base_url, config.judge_base_url):
        found |= set(url_secrets(url))
    return sorted(found, key=len, reverse=True)


def scrub(sample: Sample, secrets: list[str]) -> Sample:
    """``sample`` with every secret masked (a last line of defence: the LLM layer already redacts
    keys from its errors)."""
    if not secrets:
        return sample
    text = sample.model_dump_json()
    if not any(secret in text for secret in secrets):
        return sample
    log.warning("removed a credential from sample %s before writing it", sample.key)
    return Sample.model_validate_json(redact(text, secrets))


async def run_benchmark(config: RunConfig, **kwargs: Any) -> RunOutcome:
    """Run a benchmark (see :class:`Runner` for the keyword arguments)."""
    return await Runner(config, **kwargs).run()
