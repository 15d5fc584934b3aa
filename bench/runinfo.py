"""``run.json``: everything needed to reproduce a run, and its final state.

Provenance (what decides whether two runs' scores can be compared like for like):

- ``builder_version``: the tree builder that made the trees (``Tree.builder_version``: the
  builder's version plus a digest of its code and the pymupdf release that read the PDFs);
- ``judge`` (name), ``judge_version`` and ``judge_model``: who scored the answers;
- ``prompt_versions``: each retriever's prompt version;
- ``retriever_code`` and ``judge_code``: for a plug-in, its module and a digest of its code (the
  package's own components are identified by ``git_commit``);
- ``model``: the answering model;
- ``dataset.content_sha256``: :func:`dataset_content_hash` of the dataset directory.

Runs written before these fields existed load with them empty (``None`` / ``""``); comparisons
then warn that they cannot check them instead of refusing.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

RunStatus = Literal["running", "finished", "aborted_due_to_budget", "interrupted", "failed"]

CONTENT_HASH_PDF_DIR = "pdfs"
CONTENT_HASH_METHOD = "sha256(questions.jsonl, documents.jsonl, pdfs/*.pdf names and sizes)"


def dataset_content_hash(path: str | Path) -> str:
    """sha256 over the bytes of ``questions.jsonl`` and ``documents.jsonl`` and, for every
    ``pdfs/*.pdf`` in name order, its name and size in bytes.

    PDFs are hashed by size, not content, so starting a run never reads gigabytes of filings; a
    PDF replaced by another of exactly the same size is not noticed here (the tree cache, keyed
    by each PDF's sha256, still builds a new tree for it). Independent of ``--limit`` and the
    question filters, so runs over subsets of one dataset stay comparable."""
    from bench.datasets.financebench import hash_dataset_files

    root = Path(path)
    digest = hash_dataset_files(hashlib.sha256(), root)
    pdf_dir = root / CONTENT_HASH_PDF_DIR
    pdfs = sorted(pdf_dir.glob("*.pdf")) if pdf_dir.is_dir() else []
    for pdf in pdfs:
        try:
            size = str(pdf.stat().st_size)
        except OSError:  # a dangling link no question uses stopped every run ("No such file or directory")
            size = "unreadable"
        digest.update(f"{CONTENT_HASH_PDF_DIR}/{pdf.name}\0{size}\0".encode())
    return digest.hexdigest()


class DatasetInfo(BaseModel):
    name: str = ""  # financebench, demo, ...
    path: str = ""
    sha256: str = ""  # hash of the questions and documents files
    content_sha256: str = ""  # dataset_content_hash(): questions, documents and PDF sizes; "" = not recorded
    questions: int = 0  # questions kept after validation
    dropped: int = 0


class RunInfo(BaseModel):
    run_id: str
    # The run directory's format (bench.rundir.FORMAT_VERSION); None: written before versions existed.
    format_version: int | None = None
    command: list[str] = Field(default_factory=list)
    package_version: str = ""
    git_commit: str | None = None
    dataset: DatasetInfo = Field(default_factory=DatasetInfo)
    retrievers: list[str] = Field(default_factory=list)
    retriever_options: dict[str, dict[str, Any]] = Field(default_factory=dict)
    prompt_versions: dict[str, str] = Field(default_factory=dict)  # retriever or judge -> version
    # plug-in retriever -> its module and code digest (pageindex.registry.plugin_identity); built-ins absent
    retriever_code: dict[str, str] = Field(default_factory=dict)
    model: str | None = None  # answering model spec
    builder_version: str | None = None  # tree builder version of the trees used; None = not recorded
    judge: str = "rules"  # llm | rules | hybrid | panel
    judge_version: str | None = None  # the judge's own version; None = not recorded
    judge_model: str | None = None
    judge_prompt_version: str | None = None
    judge_code: str | None = None  # a plug-in judge's module and code digest; None: built-in or not recorded
    base_urls: dict[str, str] = Field(default_factory=dict)  # role -> URL; never keys
    repeats: int = 1
    concurrency: int = 1
    budget: dict[str, float] | None = None
    cache_mode: str = "off"
    started_at: str = ""
    ended_at: str | None = None
    status: RunStatus = "running"
    # why a run stopped when that is not said by its status alone: for ``failed``, the endpoint that
    # went away and the error the probe got (and how to continue)
    status_detail: str | None = None
    skipped_retrievers: dict[str, str] = Field(default_factory=dict)  # name -> why
    # model calls paid for by samples a stop (budget, Ctrl-C, an endpoint gone) cut before they were
    # written, so in no row of samples.jsonl (they run again on resume): calls, prompt_tokens,
    # completion_tokens, cost_usd (None: unknown), summed over the run's sessions; None: there were none
    unrecorded_usage: dict[str, Any] | None = None
    # what the model servers were asked, summed over the run's sessions (same keys): ``sent_usage`` the
    # calls sent (what was spent), ``cached_usage`` the calls a cache hit or an identical call in flight
    # answered (their tokens and cost are in the samples' figures, as the calls' own, yet nothing was
    # spent on them); None: not recorded (a run written before these fields). ``sent_usage`` also has
    # ``unreported_attempts`` and ``estimated_prompt_tokens`` when some attempts timed out or were cut
    # after the server took them: no usage came back, so their prompts are in no token or cost total
    sent_usage: dict[str, Any] | None = None
    cached_usage: dict[str, Any] | None = None
    extra: dict[str, Any] = Field(default_factory=dict)


def usage_said(usage: dict[str, Any]) -> str:
    """A run.json usage total (``unrecorded_usage``, ``sent_usage``, ``cached_usage``) in words."""
    from pageindex.wording import counted

    cost = usage.get("cost_usd")
    price = "cost unknown" if cost is None else f"${cost:,.4f}"
    return (
        f"{counted(int(usage['calls']), 'model call')} ({int(usage['prompt_tokens']):,} prompt + "
        f"{int(usage['completion_tokens']):,} completion tokens, {price})"
    )


def spend_notes(
    unrecorded: dict[str, Any] | None, sent: dict[str, Any] | None, cached: dict[str, Any] | None
) -> list[str]:
    """What was spent that the samples' totals do not say: the calls of samples a stop cut (paid for,
    in no row), and the calls the cache answered (in the rows' figures, yet not sent), with what was
    sent. ``bench run`` says them of its invocation, ``bench summary`` of the whole run (run.json)."""
    from pageindex.wording import counted

    notes = []
    if unrecorded and unrecorded.get("calls"):
        notes.append(
            f"{usage_said(unrecorded)} went to samples the stop cut: they are not in samples.jsonl or the "
            "summary's totals (run.json: unrecorded_usage) and run again on resume"
        )
    if sent and sent.get("unreported_attempts"):
        n = int(sent["unreported_attempts"])  # "1 attempt ... was cut ... its prompt" (it said "were")
        were, them, their, prompts, are = ("was", "it", "its", "prompt", "is") if n == 1 else (
            "were", "them", "their", "prompts", "are")  # fmt: skip
        notes.append(
            f"{counted(n, 'attempt')} timed out or {were} cut after the server took {them}: no usage came "
            f"back, so {their} {prompts}, about {int(sent.get('estimated_prompt_tokens') or 0):,} tokens by "
            f"estimate, {are} in no token or cost total (run.json: sent_usage.unreported_attempts, "
            "estimated_prompt_tokens)"
        )
    if cached and cached.get("calls") and sent is not None:
        were = "was" if int(cached["calls"]) == 1 else "were"
        notes.append(
            f"{usage_said(cached)} {were} answered from the cache, not sent: the samples' tokens and cost "
            f"count them, nothing was spent on them; sent to the model: {usage_said(sent)} (run.json: "
            "sent_usage, cached_usage)"
        )
    return notes


def provenance(info: RunInfo) -> dict[str, str | None]:
    """What decides whether two runs' verdicts can be compared (None: not recorded)."""
    return {
        "judge": info.judge or None,
        "judge version": info.judge_version,
        "judge model": info.judge_model,
        "tree builder version": info.builder_version,
        "dataset content hash": info.dataset.content_sha256 or None,
    }


def stored_config(info: RunInfo, run_dir: str | Path | None = None) -> dict[str, Any]:
    """The settings a run keeps for ``--resume`` (``extra.config``), with what the run resolved for
    itself where the stored config left it to the defaults: the answering model, the judge and its
    model, the retrievers (those that ran, then those skipped). A run stores these since review 16;
    for an older run.json they come from its recorded ``model``, ``judge``, ``judge_model``,
    ``retrievers`` and ``skipped_retrievers``, so a resume never takes them from today's environment
    (``$PAGEINDEX_MODEL``, ``OPENAI_API_KEY``). Relative paths, stored by runs made before they were
    stored absolute, are taken from the folder the run was started in where ``run_dir`` (the run
    folder being resumed) says which. Empty: the run stored no config."""
    config = dict(info.extra.get("config") or {})
    if not config:
        return config
    from bench.judges.base import judge_model_need

    if (start := _started_in(info, config, run_dir)) is not None:  # stored before paths were absolute
        from bench.config import PATH_SETTINGS

        for name in PATH_SETTINGS:
            if config.get(name) and not Path(config[name]).is_absolute():
                config[name] = str(start / config[name])

    if not config.get("model") and info.model:
        config["model"] = info.model
    if not config.get("judge") and info.judge:
        config["judge"] = info.judge
    if not config.get("judge_model") and info.judge_model and judge_model_need(info.judge) == "one":
        config["judge_model"] = info.judge_model
    if not config.get("retrievers") and info.retrievers:
        skipped = [r for r in info.skipped_retrievers if r not in info.retrievers]
        config["retrievers"] = [*info.retrievers, *skipped]
    return config


RESUME_KEEPS = ("judge version", "tree builder version", "dataset content hash")


def _started_in(info: RunInfo, config: dict[str, Any], run_dir: str | Path | None = None) -> Path | None:
    """The folder a run was started from, where its stored settings hold a relative ``--data-dir``
    (runs made before commit 13b703d stored it, ``--out`` and the dataset path as given): the run
    folder resumed (``run_dir``) without its stored ``--out`` (``results/RUN_ID`` where none was
    given). None when the stored paths are absolute, or the folder was moved (they do not match)."""
    given = config.get("data_dir")
    if not given or Path(given).is_absolute() or run_dir is None:
        return None
    out = config.get("out") or str(Path("results") / info.run_id)
    return _without_tail(Path(os.path.abspath(run_dir)), Path(out))


def _without_tail(full: Path, relative: Path) -> Path | None:
    """``full`` (absolute, normalized) without its last parts ``relative``, or None where they are
    not its end."""
    if relative.is_absolute():
        return None
    tail, parts = Path(os.path.normpath(relative)).parts, full.parts
    if not tail or ".." in tail or parts[-len(tail) :] != tail or len(parts) <= len(tail):
        return None
    return Path(*parts[: -len(tail)])


def unrecorded_keeps(stored: RunInfo) -> list[str]:
    """The :data:`RESUME_KEEPS` a run does not record (written before runs recorded them): a resume
    cannot check them, and keeps them unrecorded rather than stamp today's on the earlier samples."""
    recorded = provenance(stored)
    return [what for what in RESUME_KEEPS if recorded[what] is None]


def resume_changes(stored: RunInfo, now: dict[str, str | None]) -> list[str]:
    """How this install would score a resumed run differently from how it started (recorded
    fields only): its samples would mix judge, tree builder or dataset versions. ``now`` holds
    today's :data:`RESUME_KEEPS` values, known before the trees are built."""
    old, new = provenance(stored), now
    return [
        f"{what} {old[what]} -> {new[what]}"
        for what in RESUME_KEEPS
        if old[what] is not None and old[what] != new[what]
    ]


def options_text(options: dict[str, Any] | None) -> str:
    """A retriever's options as given (``top_k=1, max_turns=2``), or ``defaults`` where none was."""
    return ", ".join(f"{k}={v}" for k, v in sorted((options or {}).items())) or "defaults"


def run_options(info: RunInfo) -> str:
    """The retriever options a run was given (``extractive.top_k=1; agent.max_turns=2``), ``-`` for none:
    what a report's runs table shows, so two runs of one dataset, model and judge tell apart."""
    options = sorted(info.retriever_options.items())
    given = [f"{r}.{k}={v}" for r, given in options for k, v in sorted(given.items())]
    return "; ".join(given) or "-"


def rejudge_command(run: str | Path, info: RunInfo, judge: str | None = None) -> str:
    """The command that judges a run's answers again with the judge it recorded (for answers whose
    judge call failed), or with ``judge`` (a judge that decides every answer, where the recorded one
    abstained), complete enough to run as printed: the judge, its model or panel, the endpoint the run
    judged through (a stored URL carries no credentials), an output folder; paths quoted."""
    import shlex

    from bench.judges.base import judge_model_need

    config = info.extra.get("config") or {}
    recorded = judge in (None, info.judge)  # the recorded judge's model and endpoint go with it only
    parts = ["pageindex", "bench", "rejudge", str(run), "--judge", judge or info.judge]
    if recorded and info.judge_model:
        parts += ["--judge-models" if info.judge == "panel" else "--judge-model", info.judge_model]
    # given (--judge-base-url, --base-url), or the one the judge model's provider resolved ($OPENAI_BASE_URL)
    url = config.get("judge_base_url") or config.get("base_url")
    url = url or (config.get("resolved_urls") or {}).get(info.judge_model or "")
    if recorded and url and judge_model_need(info.judge) != "none":
        parts += ["--judge-base-url", url]
    parts += ["-o", f"{str(run).rstrip('/')}-rejudged"]
    return shlex.join(parts)


def judge_version(judge: Any) -> str:
    """A judge object's version: its ``version`` attribute, else its prompt version, else "1"."""
    version = getattr(judge, "version", None) or getattr(judge, "prompt_version", None)
    return str(version) if version else "1"


def builder_version(trees: Any) -> str | None:
    """The builder version of the trees used (several joined with "," if they differ; with no
    trees, the current builder's)."""
    versions = sorted({t.builder_version for t in trees if getattr(t, "builder_version", None)})
    if versions:
        return ",".join(versions)
    from pageindex.tree.build import code_version

    return code_version()
