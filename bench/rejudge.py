"""Re-score a stored run's answers with another (or a newer) judge, without calling any retriever.

``rejudge_run(run_dir, out_dir, judge, judge_name=...)`` reads the run, judges every stored answer
again and writes a new run directory: ``run.json`` (the original's, with the new judge's name,
version and model and ``extra["rejudge"]`` saying where it came from), ``samples.jsonl``,
``dropped.jsonl`` and ``summary.json``. This brings a baseline up to date after the judge changed,
so the gate can compare it with new runs again.

What is judged again: samples with status ``answer`` (those whose judge call had failed, with
``judge_error``, included), and samples of older runs that recorded a failed judge call as status
``error`` with ``judge failed: ...`` and an answer. A retriever's ``fail`` stays a ``refusal`` and
a retriever ``error`` stays an error: there is no answer to judge. A judge call that fails now
follows the rule of ``bench run`` (:mod:`bench.samples`): the sample stays ``answer`` with
``judge_error`` set and no verdict.
The retriever's figures (tokens, cost, latency) are kept; the judge token counts are the new
judge's, and ``extra["rejudge"]`` on each judged sample keeps the previous verdict and judge.
Samples are appended to ``samples.jsonl`` as they are judged, so an interrupted rejudge keeps
what it finished (``run.json`` then says ``interrupted``).
"""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from bench.judges.base import judge_sample
from bench.rundir import FolderClaim, FolderInUse, Run, RunDir, RunLoadError, load_run
from bench.runinfo import RunInfo, judge_version
from bench.runner import endpoint_gone
from bench.samples import Sample, judge_error_text
from bench.summary import Summary
from pageindex import registry
from pageindex.llm.redact import redact_argv

JUDGE_FAILED = "judge failed:"  # how older rejudged runs recorded a failed judge call (status error)


class RejudgeError(ValueError):
    """The rejudge cannot start (bad output directory); nothing was written."""

    exit_code = 2


class RejudgeWriteError(RejudgeError):
    """Answers were judged, but the end of the rejudge (run.json, summary.json) could not be written
    (a full disk): exit 4, the samples written kept for a ``--resume``."""

    exit_code = 4


class RejudgeOutcome(BaseModel):
    run_dir: Path
    run_id: str
    source_run_id: str
    judge_version: str
    judged: int  # answers judged again by this call
    judged_in_all: int = 0  # with the earlier attempts a --resume went on from
    kept: int  # samples copied unchanged (retriever fail or error)
    changed: int  # judged answers given a verdict that differs from the stored one (failed calls: none)
    judge_errors: int  # judged answers whose judge call failed now
    status: str
    summary: Summary


def resume_command(command: list[str]) -> str:
    """The rejudge ``command`` (its argv) again with ``--resume``, its secrets masked: then it says to
    give again what it shows as ``***``."""
    shown = redact_argv(command)
    again = " ".join(shlex.quote(a) for a in shown if a != "--resume") + " --resume"
    return again + ("; give again what it shows as ***" if shown != command else "")


def needs_judge(sample: Sample) -> bool:
    """Whether the sample holds an answer a judge should score."""
    if sample.status == "answer":
        return True
    return (
        sample.status == "error"
        and (sample.error or "").startswith(JUDGE_FAILED)
        and bool(sample.answer.strip())
    )


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _resumable(source: Run, out: Path, judge_name: str, version: str, judge_model: str | None) -> RunInfo:
    """The run.json of the interrupted rejudge in ``out`` that a ``--resume`` may continue."""
    try:
        info = RunDir(out).read_info()
    except RunLoadError as exc:
        raise RejudgeError(f"cannot resume -o {out}: {exc}") from None
    earlier = info.extra.get("rejudge") or {}
    if earlier.get("from_run") != source.info.run_id:
        raise RejudgeError(
            f"cannot resume -o {out}: it is not a rejudge of run {source.info.run_id} "
            f"({'of run ' + str(earlier['from_run']) if earlier else 'a run of its own'})"
        )
    theirs, ours = (info.judge, info.judge_version, info.judge_model), (judge_name, version, judge_model)
    if theirs != ours:
        raise RejudgeError(
            f"cannot resume -o {out}: it was judged by {_judge_text(*theirs)}, not {_judge_text(*ours)}; "
            "resume with the same judge options"
        )
    return info


def _judge_text(name: str | None, version: str | None, model: str | None) -> str:
    return f"{name} {version}" + (f" ({model})" if model else "")


def _check_out_dir(source: Run, out: Path) -> None:
    if out.resolve() == source.path.resolve():
        raise RejudgeError(f"-o {out} is the run being rejudged; choose a new directory")
    if problem := RunDir(out).problem():
        raise RejudgeError(f"-o {out}: {problem}")


async def _judge_one(judge: Any, sample: Sample, run_id: str, source_id: str) -> Sample:
    """``sample`` judged again: the old judge's verdict, tokens, calls and cost taken off (kept under
    ``extra.rejudge``), the new judge's put on."""
    previous = {
        "from_run": source_id,
        "judge": sample.judge,
        "verdict": sample.verdict,
        "status": sample.status,
        "judge_prompt_tokens": sample.judge_prompt_tokens,
        "judge_completion_tokens": sample.judge_completion_tokens,
        "llm_calls": sample.llm_calls,
        "cost_usd": sample.cost_usd,
    }
    extra = {**sample.extra, "rejudge": previous}
    answer = sample.without_judge().model_copy(
        update={"run_id": run_id, "status": "answer", "error": None, "extra": extra}
    )
    try:
        verdict = await judge_sample(judge, answer.judge_input())
    except Exception as exc:  # a judge failure is recorded, the answer stays
        return answer.judged(None, judge_error_text(exc), spent=getattr(exc, "usage", None))
    return answer.judged(verdict)


async def rejudge_run(
    source: str | Path | Run,
    out: str | Path,
    judge: Any,
    *,
    judge_name: str,
    judge_model: str | None = None,
    concurrency: int = 4,
    command: list[str] | None = None,
    resume: bool = False,
    clients: Sequence[Any] = (),
) -> RejudgeOutcome:
    """Judge ``source``'s stored answers with ``judge`` (built by :func:`bench.judges.base.make_judge`
    as ``judge_name``) and write the result as a new run in ``out``. Raises :class:`RejudgeError`
    (nothing written) when ``out`` is the source or holds a run's files, and
    :class:`bench.rundir.RunLoadError` when the source cannot be read.

    ``resume`` continues an interrupted rejudge in ``out``: it must be a rejudge of this source by
    the same judge (name, version, model); the samples it holds are kept and only the others are
    judged (the counts returned are this call's).

    ``clients`` are the judge's model clients: when a judge call cannot connect and a probe of its
    endpoint fails too, the endpoint is gone (a killed server), and the rejudge stops ``failed`` as
    ``bench run`` does, with why and how to go on in ``status_detail``, rather than recording every
    answer left as a failed judge call; the answers not judged are judged on ``--resume``."""
    run = source if isinstance(source, Run) else load_run(source)
    out = Path(out)
    if not run.samples:  # a run folder with an empty or missing samples.jsonl: no answer to judge
        raise RejudgeError(
            f"run {run.info.run_id} ({run.path}) has no samples{run.why_no_samples()}: no answer to rejudge"
        )
    version = judge_version(judge)
    earlier = _resumable(run, out, judge_name, version, judge_model) if resume else None
    if earlier is None:
        _check_out_dir(run, out)
    try:  # held while this rejudge writes: a second rejudge (or a bench run) into -o meanwhile is refused
        claim = FolderClaim.take(Path(out), make=True)
    except RunLoadError as exc:
        raise RejudgeError(f"-o {exc}") from None
    except FolderInUse:
        raise RejudgeError(
            f"-o {out}: another rejudge or bench run is using it now; wait for it to end"
        ) from None
    rundir = RunDir(out)
    try:
        # checked again now that -o is held: another rejudge may have written into it meanwhile
        earlier = _resumable(run, out, judge_name, version, judge_model) if resume else None
        if earlier is None:
            _check_out_dir(run, out)
        if problem := rundir.unwritable():
            raise RejudgeError(f"-o {out}: {problem}; nothing was written")
    except BaseException:  # a refusal, or anything else: not kept held, nor left made ("nothing was
        claim.remove_unused()  # written": not even the folders; one that is not empty stays)
        claim.release()
        raise
    try:
        return await _rejudge_into(
            run, out, rundir, judge, earlier, judge_name=judge_name, judge_model=judge_model,
            version=version, concurrency=concurrency, command=command, clients=clients,
        )  # fmt: skip
    finally:
        claim.release()


async def _rejudge_into(
    run: Run,
    out: Path,
    rundir: RunDir,
    judge: Any,
    earlier: RunInfo | None,
    *,
    judge_name: str,
    judge_model: str | None,
    version: str,
    concurrency: int,
    command: list[str] | None,
    clients: Sequence[Any] = (),
) -> RejudgeOutcome:
    """The body of :func:`rejudge_run`, with ``out`` made, checked and held."""
    old = run.info
    run_id = out.name
    info = old.model_copy(
        update={
            "run_id": run_id,
            "judge": judge_name,
            "judge_version": version,
            "judge_model": judge_model,
            "judge_prompt_version": getattr(judge, "prompt_version", None),
            "judge_code": registry.plugin_identity("judge", judge_name),
            "status": "running",
            # the source run's calls are not this run's: its retriever figures come from them, its
            # judge's from calls made here (not counted in these fields: null, not recorded)
            "sent_usage": None,
            "cached_usage": None,
            "unrecorded_usage": None,
            "extra": {
                **old.extra,
                "rejudge": {
                    "from_run": old.run_id,
                    "from_path": str(run.path),
                    "from_status": old.status,
                    "previous_judge": {
                        "name": old.judge,
                        "version": old.judge_version,
                        "model": old.judge_model,
                        "prompt_version": old.judge_prompt_version,
                    },
                    "command": redact_argv(list(command or [])),
                    "started_at": _now(),
                },
            },
        }
    )
    if earlier is not None:  # the first command and start stay; this one is listed as a resume
        first = earlier.extra["rejudge"]
        resumes = [*first.get("resumes", []), {"command": redact_argv(list(command or [])), "at": _now()}]
        kept_from_first = {"command": first.get("command"), "started_at": first.get("started_at")}
        rejudge = {**info.extra["rejudge"], **kept_from_first, "resumes": resumes}
        info = info.model_copy(update={"extra": {**info.extra, "rejudge": rejudge}})
    info = rundir.write_info(info)
    rundir.write_dropped(run.dropped)
    store = rundir.sample_store()
    if earlier is not None:  # answers whose judge call failed before the interrupt are judged again
        rundir.withdraw_judge_errors(store)
    done = {s.key for s in store.samples}
    todo = [s for s in run.samples if needs_judge(s) and s.key not in done]
    kept = [s for s in run.samples if not needs_judge(s) and s.key not in done]
    gone: str | None = None  # why the rejudge stopped: the judge's endpoint went away, or a full disk
    unwritten = False  # it stopped because a sample could not be written

    def append(sample: Sample) -> bool:
        """Write ``sample``; on a full disk (the row cut off again) stop: no new judge call starts."""
        nonlocal gone, unwritten
        try:
            store.append(sample)
        except OSError as exc:
            if gone is None:
                gone, unwritten = f"cannot write {store.path} ({exc.strerror or exc})", True
            return False
        return True

    for s in kept:
        if not append(s.model_copy(update={"run_id": run_id})):
            break
    gate = asyncio.Semaphore(max(concurrency, 1))
    changed = errors = judged = 0
    probed = [c for c in clients if hasattr(c, "check")]

    async def one(sample: Sample) -> None:
        nonlocal changed, errors, judged, gone
        async with gate:
            if gone is not None:  # no new judge call once the endpoint is gone
                return
            new = await _judge_one(judge, sample, run_id, old.run_id)
            if new.judge_error_kind == "connection" and probed and gone is None:
                gone = await endpoint_gone(new, "judge model", probed, during="the rejudge")
        if gone is not None and (unwritten or new.judge_error is not None):  # judged on --resume
            return
        if not append(new):
            return
        judged += 1
        changed += new.verdict is not None and new.verdict != sample.verdict  # a failed call changes nothing
        errors += new.judge_error is not None

    status = old.status
    detail = old.status_detail
    try:
        await asyncio.gather(*(one(s) for s in todo))
        if gone is not None:
            status = "failed"
            once = "once it can be written" if unwritten else "once it answers"
            detail = (
                f"{gone}: the answers it did not judge are not recorded; {once}, continue with: "
                f"{resume_command(command or [])}"
            )
    except BaseException:
        status = "interrupted"
        raise
    finally:
        before = earlier.extra["rejudge"] if earlier is not None else {}  # a resume adds to the counts
        judged_all = before.get("judged", 0) + judged  # those written (an interrupt cuts the rest)
        rejudge = {**info.extra["rejudge"], "ended_at": _now(), "judged": judged_all,
                   "changed": before.get("changed", 0) + changed}  # fmt: skip
        info = info.model_copy(
            update={"status": status, "status_detail": detail, "extra": {**info.extra, "rejudge": rejudge}}
        )
        try:
            info, summary = rundir.finish(info, store.samples, run.dropped)
        except OSError as exc:  # the disk is full still: run.json keeps "running"
            raise RejudgeWriteError(
                f"cannot write into {out} ({exc.strerror or exc}): {len(store.samples):,} samples kept in "
                f"{store.path.name}, the rejudge's status not written; once it can be written, continue "
                f"with: {resume_command(command or [])}"
            ) from None
    return RejudgeOutcome(
        run_dir=out,
        run_id=run_id,
        source_run_id=old.run_id,
        judge_version=version,
        judged=judged,
        judged_in_all=judged_all,
        kept=len(kept),
        changed=changed,
        judge_errors=errors,
        status=status,
        summary=summary,
    )
