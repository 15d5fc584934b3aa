"""The run directory, the one owner of its on-disk format: create, open for resume, write
``run.json``, append samples, write ``dropped.jsonl`` and ``summary.json``, and load it back.

::

    results/RUN_ID/
      run.json        RunInfo: settings, provenance, status; ``format_version`` (FORMAT_VERSION)
      samples.jsonl   one Sample per line, appended and fsynced as each finishes (torn-line safe)
      dropped.jsonl   questions dropped before the run, with the reason
      summary.json    Summary of the samples (rewritten when the run ends)
      events.log      the library's log lines during the run
      retried.jsonl   samples that ended in ``error`` and were run again (``--retry-errors``): the
                      earlier attempts, kept for the record; absent until a retry

``run.json`` written before format versions existed has none and loads as it always did; a run
written by a newer pageindex-bench (a higher ``format_version``) fails with one line naming its
version and what to do. Everyone else reads and writes runs through this module.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import shlex
import tempfile
from collections.abc import Iterable
from functools import cached_property
from pathlib import Path

import jsonlines
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bench.datasets.models import DroppedQuestion
from bench.runinfo import RunInfo
from bench.samples import Sample, SampleStore, read_samples_file
from bench.summary import Summary, summarize
from pageindex.atomic import file_in_the_way, missing_folders, remove_empty, write_atomic
from pageindex.wording import counted, first_error

log = logging.getLogger(__name__)

FORMAT_VERSION = 1  # of the run directory; bump when a reader of today could misread a new run
RUN_JSON = "run.json"
SAMPLES = "samples.jsonl"
DROPPED = "dropped.jsonl"
SUMMARY = "summary.json"
EVENTS = "events.log"
RETRIED = "retried.jsonl"
RUN_FILES = (RUN_JSON, SAMPLES, DROPPED, SUMMARY, EVENTS, RETRIED)


def run_file_of(path: Path) -> Path | None:
    """The run directory ``path`` is one of the files of (``RUN/samples.jsonl``...), else None: a
    command that writes a file of its own must never overwrite a run's records."""
    path = Path(path)
    if path.name in RUN_FILES and (path.parent / RUN_JSON).is_file():
        return path.parent
    return None


class RunLoadError(Exception):
    """A run directory that cannot be used; the message names the file and the problem."""


class Run(BaseModel):
    """A run directory read back: run info, samples, dropped questions and their summary (computed
    from the samples on first use: gate, compare and rejudge never need it)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    path: Path
    info: RunInfo
    samples: list[Sample]
    dropped: list[DroppedQuestion] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)

    @property
    def run_id(self) -> str:
        return self.info.run_id

    def why_no_samples(self) -> str:
        """Said after "has no samples" where that is not plain: its samples file held lines, but
        none a sample (a line torn by an interrupted write, dropped with a warning)."""
        path = self.path / SAMPLES
        if not self.samples and self.warnings and path.is_file() and path.stat().st_size > 0:
            return f" ({self.warnings[0]})"
        return ""

    @cached_property
    def summary(self) -> Summary:
        return summarize(self.samples, self.info, self.dropped)

    def listed_samples(self) -> tuple[int, int]:
        """(the samples ``run.json`` says the run is made of: questions x retrievers x repeats, the
        number of them ``samples.jsonl`` holds); (0, 0) for a run that does not record its question count."""
        info = self.info
        if not info.dataset.questions or not info.retrievers:
            return 0, 0
        repeats = max(info.repeats, 1)
        held = {s.key for s in self.samples if s.retriever in info.retrievers and s.repeat < repeats}
        return info.dataset.questions * len(info.retrievers) * repeats, len(held)

    def samples_text(self) -> str:
        """``27 of 120 samples`` (of those ``run.json`` lists), or ``27 samples`` where it lists none."""
        listed, _ = self.listed_samples()
        n = len(self.samples)
        return f"{n} of {listed} samples" if listed else counted(n, "sample")

    @property
    def kept_status_from(self) -> str | None:
        """The run a finished ``bench rejudge`` took its status from (it keeps the status of the run it
        re-scored: "running" there means that run was killed, not that the rejudge goes on); else None."""
        source = self.info.extra.get("rejudge") or {}
        if source.get("ended_at") and source.get("from_status") == self.info.status:
            return str(source.get("from_run") or source.get("from_path") or "the run it rejudged")
        return None

    def status_text(self) -> str:
        """The run's status as said to a reader: ``interrupted``; a ``running`` run that no process
        holds (:func:`folder_held`: it was killed, or its machine stopped, and never ended) is said so,
        where run.json alone said "running" of a run nothing was running; a rejudge's kept status
        names the run it came from."""
        status = self.info.status
        if (source := self.kept_status_from) is not None:
            return f"{status} (kept from {source}, the run it rejudged)"
        if status == "running":
            held = folder_held(self.path)
            if held is False:
                return "running, but no process is running it (killed, or its machine stopped)"
            if held:
                return "still running"
        return status

    def continue_command(self) -> str | None:
        """The command that finishes an unfinished run: ``bench run --resume`` (``bench rejudge ...
        --resume`` for a rejudge that stopped part-way); None for a finished run, a run still running,
        and a rejudge that kept the status of the run it re-scored (finish that run, then rejudge it)."""
        status = self.info.status
        if status == "finished" or self.kept_status_from is not None:
            return None
        if status == "running" and folder_held(self.path):
            return None
        rejudge = self.info.extra.get("rejudge") or {}
        if command := rejudge.get("command"):
            from bench.rejudge import resume_command

            return resume_command(list(command))
        budget = " with a new --budget" if status == "aborted_due_to_budget" else ""
        return resume_run_command(self.path) + budget

    def unfinished_note(self) -> str | None:
        """One line for a run that did not finish (None for a finished one): its status as
        :meth:`status_text` says it, how many of its samples it holds, that figures are of those only,
        and the command that finishes it. What ``bench summary`` prints under its head line (it printed
        ``status=running`` of a killed run, and neither the count nor how to go on)."""
        if self.info.status == "finished":
            return None
        note = f"{self.status_text()} with {self.samples_text()}: the figures are of those only"
        if (command := self.continue_command()) is not None and not self.info.status_detail:
            note += f"; continue with: {command}"  # a failed run's status_detail gives its own
        return note


def resume_run_command(run_dir: str | Path) -> str:
    """``pageindex bench run --resume RUN``, the folder quoted for a shell where it needs it: the one
    wording of how to go on that the run's messages, its run.json and ``bench summary`` give."""
    return shlex.join(["pageindex", "bench", "run", "--resume", str(run_dir)])


def named_apart(runs: Iterable[Run]) -> list[Run]:
    """The runs as reports and comparisons name them: by run id, or, where runs share one (a baseline
    copied from a run folder keeps the id in its ``run.json``), by their folders, so each keeps its
    letter, its column and its verdicts (in memory only; nothing is written)."""
    runs = list(runs)
    ids = [r.run_id for r in runs]
    if len(set(ids)) == len(ids):
        return runs
    out: list[Run] = []
    for i, run in enumerate(runs):
        if ids.count(run.run_id) > 1:
            name = str(run.path)
            if any(str(other.path) == name for other in runs[:i]):  # one folder given twice
                name += f" ({i + 1})"
            run = run.model_copy(update={"info": run.info.model_copy(update={"run_id": name})})
        out.append(run)
    return out


class RunDir:
    """One run directory (which need not exist yet)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"RunDir({str(self.path)!r})"

    # -- files --------------------------------------------------------------------------------
    @property
    def info_path(self) -> Path:
        return self.path / RUN_JSON

    @property
    def samples_path(self) -> Path:
        return self.path / SAMPLES

    @property
    def dropped_path(self) -> Path:
        return self.path / DROPPED

    @property
    def summary_path(self) -> Path:
        return self.path / SUMMARY

    @property
    def events_path(self) -> Path:
        return self.path / EVENTS

    @property
    def retried_path(self) -> Path:
        return self.path / RETRIED

    def taken_by(self) -> list[str]:
        """The run files already here: a new run's folder must have none, or the run would write over
        files it did not make (a ``summary.json`` or ``events.log`` of the user's own included)."""
        return [name for name in RUN_FILES if (self.path / name).exists()]

    def holds_run(self) -> bool:
        """Whether a run started here (``--resume`` can go on with it)."""
        return any((self.path / name).exists() for name in (RUN_JSON, SAMPLES))

    def held_run(self) -> str | None:
        """``already holds a run (run.json, samples.jsonl, ...)`` when a run started here, else None: why
        no new run, and no dataset (``bench datasets demo|fetch -o``), may be written into this folder."""
        if not self.holds_run():
            return None
        return f"already holds a run ({', '.join(self.taken_by())})"

    def problem(self) -> str | None:
        """Why a new run cannot be written here, or None, checked before any work: no folder name
        (``-o ''`` or ``.`` would make an empty run id), a file in its place, a file where one of
        its parent folders should be, or a folder that already holds a run's files (a new or empty
        folder, or one with other files only, is fine: the run writes only its own file names)."""
        if self.path.name in {"", ".", ".."}:
            return "give the run a folder of its own (its name is the run id), e.g. results/first"
        if self.path.exists() and not self.path.is_dir():
            return "is a file; give a folder for the run (created if needed)"
        if blocker := file_in_the_way(self.path):
            return f"{blocker} is a file, not a folder"
        if held := self.held_run():
            return held
        if taken := self.taken_by():
            return (
                f"holds {', '.join(taken)}, which a run would write over, and no run of its own; "
                "give a new or empty folder"
            )
        return None

    def create(self) -> RunDir:
        """Make the folder; raises :class:`RunLoadError` naming it when it cannot be made."""
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise RunLoadError(f"{self.path}: cannot create the run folder ({_reason(exc)})") from None
        return self

    def unwritable(self) -> str | None:
        """Why this run cannot write its files here (a read-only folder or disk, a run file that is a
        folder or read-only), or None. Checked before a run or rejudge writes anything, so that one
        that could not go on is refused with its folder as it was (a resumed run's status kept): a
        file is made in the folder and removed, as every atomic write does, and each run file there
        is opened to append, which changes no byte of it."""
        try:
            with tempfile.TemporaryFile(dir=self.path):
                pass
        except OSError as exc:
            return f"cannot write into {self.path} ({_reason(exc)})"
        for path in (self.path / name for name in RUN_FILES):
            if not path.exists():
                continue
            try:
                with path.open("ab"):
                    pass
            except OSError as exc:
                return f"cannot write {path} ({_reason(exc)})"
        return None

    # -- run.json -----------------------------------------------------------------------------
    def read_info(self) -> RunInfo:
        """``run.json``; raises :class:`RunLoadError` naming the file when it is missing, invalid or
        written in a newer format."""
        if not self.info_path.exists():
            raise RunLoadError(f"{self.info_path} is missing: {self.path} is not a run directory")
        text = _text(self.info_path, "run.json")
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        version = data.get("format_version") if isinstance(data, dict) else None
        if isinstance(version, int) and version > FORMAT_VERSION:
            raise RunLoadError(
                f"{self.info_path} is run format version {version}, newer than this pageindex-bench reads "
                f"(up to {FORMAT_VERSION}): upgrade pageindex-bench to read it"
            )
        try:
            return RunInfo.model_validate_json(text)
        except ValidationError as exc:
            raise RunLoadError(f"{self.info_path} is not a valid run.json: {first_error(exc)}") from None

    def write_info(self, info: RunInfo) -> RunInfo:
        """Write ``run.json`` atomically, stamped with today's format version."""
        info = info.model_copy(update={"format_version": FORMAT_VERSION})
        write_atomic(self.info_path, info.model_dump_json(indent=2) + "\n")
        return info

    # -- samples and dropped questions ------------------------------------------------------------
    def sample_store(self) -> SampleStore:
        """The append-only samples file (existing samples read, a torn last line cut off)."""
        return SampleStore(self.samples_path)

    def withdraw_errors(self, store: SampleStore) -> list[Sample]:
        """Take the samples that ended in ``error`` out of ``store`` so that the run does them again;
        their records move to ``retried.jsonl`` (see :meth:`SampleStore.withdraw`)."""
        keys = {s.key for s in store.samples if s.status == "error"}
        return store.withdraw(keys, self.retried_path)

    def withdraw_judge_errors(self, store: SampleStore) -> list[Sample]:
        """Take the samples whose judge call failed out of ``store`` so that a resumed rejudge judges
        them again; their records move to ``retried.jsonl`` (see :meth:`SampleStore.withdraw`)."""
        keys = {s.key for s in store.samples if s.judge_error is not None}
        return store.withdraw(keys, self.retried_path)

    def read_samples(self, running: bool = False) -> tuple[list[Sample], list[str]]:
        """The samples and warnings (a torn last line, no samples file). ``running``: a process is running
        the run now, so one with no samples has none *yet* (``bench summary`` of a run at its first sample
        said "the run has none" under its note "still running with 0 of 2 samples")."""
        if not self.samples_path.exists():
            yet = " yet (it is still running)" if running else ""
            return [], [f"{self.samples_path} is missing: the run has no samples{yet}"]
        try:
            samples, _, warnings = read_samples_file(self.samples_path)
        except OSError as exc:
            raise RunLoadError(f"{self.samples_path}: cannot read it as samples ({_reason(exc)})") from None
        except ValueError as exc:
            raise RunLoadError(str(exc).splitlines()[0]) from None
        if not samples and not warnings:  # said as a missing file is: a summary of nothing is no result
            said = " yet: the run is still running" if running else ": the run has none"
            warnings.append(f"{self.samples_path} holds no samples{said}")
        return samples, warnings

    def write_dropped(self, dropped: Iterable[DroppedQuestion]) -> None:
        """Rewritten whole on every run and resume, so written atomically: a crash mid-write left a
        torn file that made the whole run unreadable (review 16)."""
        text = io.StringIO()
        jsonlines.Writer(text).write_all([d.model_dump(mode="json") for d in dropped])
        write_atomic(self.dropped_path, text.getvalue())

    def read_dropped(self) -> list[DroppedQuestion]:
        if not self.dropped_path.exists():
            return []
        out: list[DroppedQuestion] = []
        for i, line in enumerate(_text(self.dropped_path, "dropped questions").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                out.append(DroppedQuestion.model_validate_json(line))
            except ValidationError as exc:
                raise RunLoadError(
                    f"{self.dropped_path}: line {i} is not a dropped-question row: {first_error(exc)}"
                ) from None
        return out

    # -- summary.json -------------------------------------------------------------------------
    def write_summary(self, summary: Summary) -> Path:
        """Write ``summary.json`` atomically (temp file + rename)."""
        write_atomic(self.summary_path, summary.model_dump_json(indent=2) + "\n")
        return self.summary_path

    def finish(
        self, info: RunInfo, samples: Iterable[Sample], dropped: list[DroppedQuestion]
    ) -> tuple[RunInfo, Summary]:
        """Close a run: write ``info`` (its final status) and the summary of ``samples`` in key
        order; both as written."""
        info = self.write_info(info)
        summary = summarize(sorted(samples, key=lambda s: s.key), info, dropped)
        self.write_summary(summary)
        return info, summary

    def read_summary(self) -> Summary:
        """``summary.json`` as written when the run ended."""
        if not self.summary_path.exists():
            raise RunLoadError(f"{self.summary_path} is missing")
        text = _text(self.summary_path, "a summary")
        try:
            return Summary.model_validate(json.loads(text))
        except ValidationError as exc:  # one line, as run.json's: not pydantic's dump of every error
            raise RunLoadError(f"{self.summary_path} is not a valid summary: {first_error(exc)}") from None
        except ValueError as exc:
            raise RunLoadError(f"{self.summary_path} is not a valid summary: not JSON: {exc}") from None

    # -- the whole run ------------------------------------------------------------------------
    def load(self) -> Run:
        """Read the run. A torn last line of ``samples.jsonl`` (a crash mid-write) is dropped with a
        warning; anything else unusable raises :class:`RunLoadError` with a clear message."""
        if not self.path.exists():
            raise RunLoadError(f"run directory {self.path} does not exist")
        if not self.path.is_dir():
            raise RunLoadError(
                f"{self.path} is a file, not a run directory (give the folder bench run wrote)"
            )
        info = self.read_info()
        # held by a process (Run.status_text's "still running"): its samples are coming
        running = info.status == "running" and folder_held(self.path) is True
        samples, warnings = self.read_samples(running=running)
        for w in warnings:
            log.warning(w)
        dropped = self.read_dropped()
        return Run(
            path=self.path,
            info=info,
            samples=samples,
            dropped=dropped,
            warnings=warnings,
        )


def _reason(exc: Exception) -> str:
    return getattr(exc, "strerror", None) or str(exc)


def _text(path: Path, what: str) -> str:
    """The text of the run file ``path``; a file that cannot be read (a folder in its place, no
    permission) or is no UTF-8 raises :class:`RunLoadError` naming it as ``what``."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RunLoadError(f"{path}: cannot read it as {what} ({_reason(exc)})") from None


def load_run(run_dir: str | Path) -> Run:
    """Read a run directory (:meth:`RunDir.load`)."""
    return RunDir(run_dir).load()


def write_summary(run_dir: str | Path, summary: Summary) -> Path:
    """Write ``summary.json`` into ``run_dir``."""
    return RunDir(run_dir).write_summary(summary)


def read_summary(run_dir: str | Path) -> Summary:
    return RunDir(run_dir).read_summary()


class FolderInUse(Exception):
    """Another run holds the run folder (:meth:`FolderClaim.take`)."""


class FolderClaim:
    """A run folder held by this process while a run or a rejudge writes into it, with the folders
    it made for itself.

    The hold is an exclusive ``flock`` on the folder itself, taken without waiting and kept until
    :meth:`release` or the end of the process. Two runs (two new runs given one folder, a run and a
    resume of it, two rejudges into one ``-o``) can thus never write into one folder. The kernel
    drops it when the process ends in any way (SIGKILL, a crash), so no stale claim outlives a run,
    and nothing is written into the folder for it. Where the system cannot lock a folder (no
    ``fcntl``, a file system that refuses it) the claim holds nothing and the work goes on
    unclaimed.

    A claim taken with ``make=True`` made the folder and any missing parents; :meth:`remove_unused`
    removes those again while they are empty (a run that ended before run.json, a rejudge
    refused), before the claim is released: released first, a run started into the folder
    meanwhile would claim it and then lose it."""

    def __init__(self, path: Path, fd: int | None, made: list[Path]) -> None:
        self.path = path
        self._fd = fd
        self._made = made  # deepest first

    @classmethod
    def take(cls, path: Path, *, make: bool = False) -> FolderClaim:
        """Hold ``path`` (made first with its parents when ``make``). Raises :class:`FolderInUse`
        when another process holds it, :class:`RunLoadError` when it cannot be made. The folders
        made count as this claim's only once it holds them (otherwise they are the other run's)."""
        missing = missing_folders(path) if make else []
        if make:
            RunDir(path).create()
        return cls(path, _lock_folder(path), missing)

    def remove_unused(self) -> None:
        """Remove the folders this claim made, deepest first, as far as they are empty."""
        made, self._made = self._made, []
        remove_empty(made)

    def release(self) -> None:
        """Give up the hold (closing its descriptor drops the lock); a second call does nothing."""
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)


def folder_held(path: Path) -> bool | None:
    """Whether a process holds ``path`` as its run folder now (a ``bench run`` or ``bench rejudge``
    writing into it: :class:`FolderClaim`), probed with a shared non-blocking ``flock`` that is let go
    at once; None where it cannot be told (no ``fcntl``, a folder that cannot be opened or locked).
    A run killed by SIGKILL keeps ``running`` in its run.json, but its hold went with its process.
    (A ``--resume`` of the folder started in the very microseconds of the probe is refused as for a
    folder in use, and can be given again: the probe writes nothing and holds nothing after it.)"""
    try:
        import fcntl
    except ImportError:  # Windows
        return None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return None
    finally:
        os.close(fd)  # closing the descriptor lets the probe's lock go
    return False


def _lock_folder(path: Path) -> int | None:
    """The descriptor of ``path`` with an exclusive non-blocking ``flock`` on it, or None where
    folders cannot be locked. Raises :class:`FolderInUse`."""
    try:
        import fcntl
    except ImportError:  # Windows
        return None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except FileNotFoundError:  # made by this run, then removed by another that held it and ended
        raise FolderInUse(str(path)) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise FolderInUse(str(path)) from None
    except OSError as exc:
        os.close(fd)
        log.warning("cannot claim the run folder %s for this run (%s); going on without", path, exc)
        return None
    return fd
