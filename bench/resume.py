"""What a stored run allows ``bench run --resume``.

A resume continues a run as it started: with its stored settings (flags given now win where they are
no change to what was scored), on the endpoints it called, with the judge, tree builder and dataset
versions its first samples were scored with, and only in a folder whose records are its own. Each
check here gives the reason a resume is refused as :class:`ResumeRefused` (one line, said by the
runner after ``cannot resume RUN:``); :mod:`bench.runner` owns the flow, :mod:`bench.rundir` the
files, :mod:`bench.runinfo` what ``run.json`` records.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from pydantic import ValidationError

from bench import runinfo as provenance
from bench.config import RunConfig
from bench.rundir import RunDir, RunLoadError
from bench.runinfo import RunInfo
from bench.summary import NO_VALUE
from pageindex.llm.profile import endpoint_url
from pageindex.llm.redact import MASK, redact_url
from pageindex.wording import plainly


class ResumeRefused(Exception):
    """Why a run cannot be resumed (said after ``cannot resume RUN:``)."""


def check_records(rundir: RunDir, info: RunInfo) -> None:
    """The folder holds this run's records as ``bench run`` wrote them: not a folder ``bench
    rejudge`` made (its settings are its source's), nor ``samples.jsonl`` rows of another run."""
    if isinstance(made := info.extra.get("rejudge"), dict):
        raise ResumeRefused(rejudged_remedy(made))
    if foreign := foreign_samples(rundir, info):
        raise ResumeRefused(foreign)


def foreign_samples(rundir: RunDir, info: RunInfo) -> str | None:
    """Why ``samples.jsonl`` cannot be continued under ``run.json`` (None: it can): a row of
    another run (its ``run_id``), or of a retriever or model the run does not have, means the
    files of two runs were put together, and resuming would adopt samples the run never made.
    Rows without a run id or model (older runs), or with model ``-`` (a retriever that calls no model),
    are not held against it."""
    try:
        samples, _ = rundir.read_samples()  # no file: no samples, nothing foreign
    except RunLoadError as exc:
        return str(exc)
    model = info.model or "none"
    for i, s in enumerate(samples):
        why = None
        if s.run_id and s.run_id != info.run_id:
            why = f"run {s.run_id}"
        elif info.retrievers and s.retriever not in info.retrievers:
            why = f"retriever {s.retriever}"
        elif info.model and s.model and s.model not in (info.model, NO_VALUE):  # "-": a model-free retriever
            why = f"model {s.model}"
        if why:
            return (
                f"sample {i + 1} of {rundir.samples_path} is of {why}, but {rundir.info_path} is run "
                f"{info.run_id} (retrievers {', '.join(info.retrievers) or 'unknown'}, model {model}); "
                "resume only a run directory as bench run wrote it, or start a new run"
            )
    return None


def rejudged_remedy(made: dict[str, Any]) -> str:
    """How to go on with a folder ``bench rejudge`` wrote (its ``extra["rejudge"]``): the command that
    made it, again with ``--resume`` (as recorded: a URL's credentials masked)."""
    said = f"bench rejudge wrote it (from {made.get('from_path')}); continue it with bench rejudge --resume"
    command = [str(part) for part in made.get("command") or []]
    if "rejudge" not in command:
        return f"{said}, the source, judge options and -o it was made with, or resume the run it rejudged"
    again = shlex.join([*command, *([] if "--resume" in command else ["--resume"])])
    masked = " (give its URL's credentials again)" if MASK in again else ""
    return f"{said}: {again}{masked}"


def stored_settings(info: RunInfo, config: RunConfig, run_dir: Path | None = None) -> RunConfig:
    """The settings the run stored (with the model, judge and retrievers it resolved), or ``config``
    where it stored none (an old run); flags given now are put on by the caller
    (:meth:`RunConfig.with_overrides`). A stored URL whose credentials were masked must be given again.
    ``run_dir`` is the run folder resumed: an old run's relative paths are found from it."""
    stored = provenance.stored_config(info, run_dir)
    if stored:
        given = stored.get("data_dir")
        if given and not Path(given).is_absolute() and not Path(given).is_dir():
            raise ResumeRefused(  # read from the current folder, it was "ds: no such dataset directory"
                f"its stored --data-dir {given} is relative to the folder it was started in (a run made "
                "before paths were stored absolute); resume it from that folder"
            )
        try:
            config = RunConfig.model_validate(stored)
        except ValidationError as exc:  # e.g. a plug-in judge that is not loaded now
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc']))} {e.get('input')!r} {plainly(e['msg'])}" for e in exc.errors()
            )
            raise ResumeRefused(f"its stored settings: {problems}") from None
    return config


def check_credentials(config: RunConfig) -> None:
    """A base URL stored without its credentials (``***`` would be sent as them) must be given again."""
    for option, url in (("--base-url", config.base_url), ("--judge-base-url", config.judge_base_url)):
        if masked_url(url):
            raise ResumeRefused(
                f"it was started with {option} {url}, whose credentials are not stored; give {option} "
                "again, credentials included"
            )


def settings_note(config: RunConfig) -> str:
    """The settings a resume goes on with, said with the run's header."""
    return (
        f"resumed with its stored settings (flags given now win): concurrency {config.concurrency}, "
        f"timeout {config.timeout_s:g}s, {config.max_retries} retries"
        f"{'' if config.retry_timeouts else ' (timeouts not retried)'}"
        f"{f', time limit {config.time_limit_s:g}s per sample' if config.time_limit_s else ''}"
        f"{', JSON mode' if config.json_mode else ''}"
        f"{f', model {config.model}' if config.model else ''}"
    )


DATASET_CHANGE = "dataset content hash"


def check_versions(previous: RunInfo, now: dict[str, str | None], dataset_sha256: str | None = None) -> None:
    """A resume that would score its samples with another judge, tree builder or dataset than the
    run's first samples is refused (:func:`bench.runinfo.resume_changes`). A changed dataset is said
    as such, with what changed (``dataset_sha256``: today's hash of its questions and documents
    files) and what to do: it was "scored with other versions ...; finish it with the install that
    started it", advice for a new install, not for a filing deleted or replaced since."""
    changed = provenance.resume_changes(previous, now)
    versions = [c for c in changed if not c.startswith(DATASET_CHANGE)]
    why = []
    if versions:
        why.append(
            f"its samples were scored with other versions ({'; '.join(versions)}); finish it with the "
            "install that started it"
        )
    if len(versions) < len(changed):
        data = previous.dataset
        which = (
            "questions.jsonl or documents.jsonl"
            if data.sha256 and dataset_sha256 and data.sha256 != dataset_sha256
            else "a PDF in pdfs/ was added, removed or changed size"
        )
        old, new = (data.content_sha256 or "")[:12], (now.get(DATASET_CHANGE) or "")[:12]
        why.append(
            f"its dataset {data.path or 'folder'} changed since the run started ({which}; content hash "
            f"{old} -> {new}): put the dataset back as it was to finish the run"
        )
    if why:
        raise ResumeRefused(f"{'; and '.join(why)}, or start a new run (and bench rejudge the old one)")


def masked_url(url: str | None) -> bool:
    """Whether ``url`` is a stored URL whose credentials were masked (``http://***@host/v1``,
    ``?api-key=***``): a display form, never a URL to send requests to."""
    if not url or MASK not in url:
        return False
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.netloc.rpartition("@")[0] == MASK or MASK in dict(parse_qsl(parts.query)).values()


def stored_endpoint(spec: str, role: str, stored: str | None) -> str | None:
    """The endpoint a resumed run's model is called at where no base URL is given: the one it
    resolved when it started (``stored``), or None (the provider's default, from the environment).
    A stored URL whose credentials were masked comes from the environment again, which must still
    name it: another server would answer the rest of the run."""
    if stored is None or not masked_url(stored):
        return stored
    now = redact_url(endpoint_url(spec, None))
    if now != stored:
        option = "--base-url" if role == "retriever" else "--judge-base-url"
        variable = "OLLAMA_BASE_URL" if spec.split("/", 1)[0] == "ollama" else "OPENAI_BASE_URL"
        raise ResumeRefused(
            f"{spec} was called at {stored} (its credentials are not stored), but the environment now "
            f"gives {now or 'no base URL'}; set ${variable} back, or give {option} with its credentials"
        )
    return None
