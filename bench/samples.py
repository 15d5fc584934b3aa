"""One scored sample (question x retriever x repeat) as it is written to ``samples.jsonl``.

Status, one rule for every retriever: ``error`` = the infrastructure failed (HTTP error, timeout,
context overflow, no connection; ``error_kind`` names it); ``fail`` = the model answered but
unusably (``invalid_reply``, ``output_truncated``) or gave up -- a result, scored ``refusal``;
``answer`` = an answer, judged. A judge that fails records ``judge_error`` and leaves the sample
``answer`` with no verdict: a judge failure never turns an answered sample into an error.
Older runs' error kinds (``invalid_output``) read as today's names (``invalid_reply``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from bench.judges.base import JudgeInput, Verdict
from pageindex.atomic import write_atomic
from pageindex.llm.types import Usage, error_kind_name, is_model_failure
from pageindex.retrievers.result import FailedSearch, Finding, RetrievalResult, Source, Status
from pageindex.wording import counted, error_text, first_error

if TYPE_CHECKING:
    from bench.datasets.models import Question
    from bench.judges.base import JudgeVerdict


def unjudged_answers(samples: Sequence[Sample]) -> tuple[list[Sample], list[Sample]]:
    """(the answers among ``samples``, those of them without a verdict): a judge call that failed
    leaves an answer counted as wrong. What the gate's ``judged`` check and ``compare``'s warning
    count."""
    answers = [s for s in samples if s.status == "answer"]
    return answers, [s for s in answers if s.verdict is None]


def judge_error_text(exc: BaseException) -> str:
    """What ``judge_error`` records for a failed judge call: the error's kind (``timeout``,
    ``http_error``, ...) or class name, and its message."""
    return error_text(exc, getattr(exc, "kind", None))


class Sample(BaseModel):
    run_id: str = ""
    question_id: str
    retriever: str
    repeat: int = 0
    model: str = ""
    status: Status
    verdict: Verdict | None = None  # None for status == "error" and when the judge failed
    error_kind: str | None = None  # what failed: timeout, context_length, http_<status>, invalid_reply...
    judge_error: str | None = None  # the judge's own failure (the sample keeps its status)
    evidence_hit: bool | None = None  # None when the dataset gives no evidence pages
    question: str = ""
    question_type: str = ""
    doc_id: str = ""
    doc_type: str = ""
    gold_answer: str = ""
    evidence_pages: list[int] = Field(default_factory=list)  # 1-based PDF pages
    answer: str = ""
    reason: str | None = None
    error: str | None = None
    confidence: float | None = None
    sources: list[Source] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)
    failed_searches: list[FailedSearch] = Field(default_factory=list)
    pages_fetched: list[int] = Field(default_factory=list)
    judge: str | None = None  # which judge decided: rules, llm, llm:<model>, panel
    judge_reasoning: str = ""
    # what the judge recorded beside its verdict: hybrid's decided_by and rules_verdict (the rules' leaning),
    # a panel's agreement and votes, the rules' numbers found
    judge_details: dict[str, Any] = Field(default_factory=dict)
    retriever_prompt_tokens: int = 0
    retriever_completion_tokens: int = 0
    judge_prompt_tokens: int = 0
    judge_completion_tokens: int = 0
    llm_calls: int = 0
    iterations: int = 0
    turns: int = 0
    tool_calls: int = 0
    latency_s: float = 0.0
    cost_usd: float | None = 0.0  # retriever + judge; None = unknown
    # the retriever's share of llm_calls and cost_usd (what stays when `bench rejudge` puts a new judge's
    # on); retriever_llm_calls None = not recorded: a record written before these fields whose judge used
    # tokens (its retriever's cost is then unknown too)
    retriever_llm_calls: int | None = 0
    retriever_cost_usd: float | None = 0.0
    trace: list[dict[str, Any]] = Field(default_factory=list)
    extra: dict[str, Any] = Field(default_factory=dict)

    def judge_input(self) -> JudgeInput:
        """What a judge sees of this sample: question, gold, answer, what it cites and read, and the
        gold evidence pages. The one place a run's answer and a rejudged record become a judge's input."""
        return JudgeInput(
            question=self.question,
            gold_answer=self.gold_answer,
            answer=self.answer,
            sources=self.sources,
            pages_fetched=self.pages_fetched,
            evidence_pages=self.evidence_pages,
            question_id=self.question_id,
            doc_name=self.doc_id,
        )

    @classmethod
    def from_result(
        cls,
        result: RetrievalResult,
        *,
        question: Question,
        repeat: int = 0,
        run_id: str = "",
        model: str = "",
        verdict: JudgeVerdict | None = None,
        judge_error: str | None = None,
    ) -> Sample:
        """The sample for one retrieval and its verdict. A ``fail`` is scored ``refusal``
        without a judge; an ``error`` gets no verdict; an ``answer`` whose judge failed keeps
        its status, with ``judge_error`` set and no verdict."""
        failed = result.status == "fail"
        sample = cls(
            run_id=run_id,
            question_id=question.question_id,
            retriever=result.retriever,
            repeat=repeat,
            model=model,
            status=result.status,
            verdict="refusal" if failed else None,
            error_kind=result.error_kind,
            evidence_hit=bool(set(question.evidence_pages) & set(result.pages_fetched))
            if question.evidence_pages
            else None,
            question=question.question,
            question_type=question.question_type,
            doc_id=question.doc_id,
            doc_type=question.doc_type,
            gold_answer=question.gold_answer,
            evidence_pages=question.evidence_pages,
            answer=result.answer,
            reason=result.reason,
            error=result.error,
            confidence=result.confidence,
            sources=result.sources,
            findings=result.findings,
            failed_searches=result.failed_searches,
            pages_fetched=result.pages_fetched,
            judge="retriever_fail" if failed else None,
            judge_reasoning=(result.reason or "") if failed else "",
            retriever_prompt_tokens=result.usage.prompt_tokens,
            retriever_completion_tokens=result.usage.completion_tokens,
            llm_calls=result.usage.llm_calls,
            retriever_llm_calls=result.usage.llm_calls,
            retriever_cost_usd=result.usage.cost_usd,
            iterations=result.iterations,
            turns=result.turns,
            tool_calls=result.tool_calls,
            latency_s=result.latency_s,
            cost_usd=result.usage.cost_usd,
            trace=[e.model_dump(mode="json") for e in result.trace],
            extra={"prompt_version": result.prompt_version, **result.extra},
        )
        return sample.judged(verdict, judge_error)

    def judged(
        self, verdict: JudgeVerdict | None, judge_error: str | None = None, *, spent: Usage | None = None
    ) -> Sample:
        """This answer's sample with its judge's outcome: the verdict (its tokens, calls and cost
        added to the retriever's, in place of any earlier judge's), or the judge's failure (no verdict,
        ``judge_error`` set; what the failed judge call ``spent``, its HTTP attempts and tokens, counted
        the same way). A ``fail`` or ``error`` sample is returned as it is."""
        if self.status != "answer" or (verdict is None and judge_error is None):
            return self
        base = self.without_judge()
        if judge_error is not None:
            failure = {"verdict": None, "judge": "judge_error", "judge_error": judge_error}
            return base._with_judge_usage(spent or Usage()).model_copy(update=failure)
        assert verdict is not None
        return base._with_judge_usage(verdict.usage).model_copy(
            update={
                "verdict": verdict.verdict, "judge": verdict.judge, "judge_reasoning": verdict.reasoning,
                "judge_details": verdict.details,
            }  # fmt: skip
        )

    def _with_judge_usage(self, usage: Usage) -> Sample:
        """The judge's tokens set and its calls and cost added (to a sample without a judge's). A record
        whose retriever's share is not known still holds an older judge's calls: its calls stay as they
        are (adding would count two judges, and grow with every rejudge), its cost unknown."""
        known = self.retriever_llm_calls is not None
        cost = None if self.cost_usd is None or usage.cost_usd is None else self.cost_usd + usage.cost_usd
        return self.model_copy(
            update={
                "judge_prompt_tokens": usage.prompt_tokens,
                "judge_completion_tokens": usage.completion_tokens,
                "llm_calls": self.llm_calls + usage.calls if known else self.llm_calls,
                "cost_usd": cost,
            }
        )

    def without_judge(self) -> Sample:
        """This sample as the retriever left it: no verdict, no judge tokens, and ``llm_calls`` and
        ``cost_usd`` the retriever's. A record that did not keep the retriever's share (written before
        it was, by a judge that used tokens) keeps its calls and has its cost unknown (None)."""
        known = self.retriever_llm_calls is not None
        return self.model_copy(
            update={
                "verdict": None,
                "judge": None,
                "judge_reasoning": "",
                "judge_details": {},
                "judge_error": None,
                "judge_prompt_tokens": 0,
                "judge_completion_tokens": 0,
                "llm_calls": self.retriever_llm_calls if known else self.llm_calls,
                "cost_usd": self.retriever_cost_usd if known else None,
            }
        )

    @model_validator(mode="before")
    @classmethod
    def _older_record(cls, data: Any) -> Any:
        """A record written before the retriever's share was kept: when its judge used no tokens (no
        call: the rules, a retriever's ``fail``) the totals are the retriever's; otherwise not known."""
        if isinstance(data, dict) and "retriever_llm_calls" not in data:
            if data.get("judge_prompt_tokens") or data.get("judge_completion_tokens"):
                data = {**data, "retriever_llm_calls": None, "retriever_cost_usd": None}
            else:
                data = {
                    **data,
                    "retriever_llm_calls": data.get("llm_calls", 0),
                    "retriever_cost_usd": data.get("cost_usd", 0.0),
                }
        return data

    @field_validator("error_kind", mode="before")
    @classmethod
    def _today_name(cls, value: str | None) -> str | None:
        return error_kind_name(value)

    @property
    def outcome(self) -> str:
        """What a report shows for this sample: its verdict, ``unjudged`` for an answer without one (its
        judge call failed: the summary's ``unjudged`` column), ``error`` (no answer: the retriever's
        infrastructure failed), or the error kind of a ``fail`` the model's unusable reply caused
        (``invalid_reply``, ``output_truncated``, ``bad_tool_call``: scored ``refusal``, but not one the
        model chose; the summary counts it as failed)."""
        if self.status == "fail" and is_model_failure(self.error_kind):
            return str(self.error_kind)
        if self.verdict is not None:
            return self.verdict
        return "unjudged" if self.status == "answer" else "error"

    @property
    def judge_error_kind(self) -> str | None:
        """The kind of the judge's failure (``timeout``, ``connection``, ...), read back from the
        ``judge_error`` text :func:`judge_error_text` wrote; None when the judge did not fail."""
        return self.judge_error.split(":", 1)[0] if self.judge_error else None

    @property
    def unit(self) -> str:
        """What one observation is: a question run by one retriever (its repeats are not independent
        samples: intervals and paired tests count it once)."""
        return question_unit(self.question_id, self.retriever)

    @property
    def key(self) -> tuple[str, str, int]:
        """What identifies a sample within a run (and pairs samples across runs)."""
        return (self.question_id, self.retriever, self.repeat)

    @property
    def tokens(self) -> int:
        """Retriever tokens (what 'tokens per question' counts)."""
        return self.retriever_prompt_tokens + self.retriever_completion_tokens


# ----------------------------------------------------------------------------- storage
class SampleStore:
    """Append-only ``samples.jsonl``: every finished sample is written, flushed and fsynced
    at once, so a crash loses at most the samples in flight.

    On open, a torn last line (a crash mid-write) is detected, cut off the file and
    reported in ``warnings``; finished samples are loaded so a resumed run can skip them.
    """

    def __init__(self, path: Path):
        self.path = Path(path)
        self.warnings: list[str] = []
        self.samples: list[Sample] = []
        self._keys: set[tuple[str, str, int]] = set()
        if self.path.exists():
            self.samples, good_bytes, self.warnings = read_samples_file(self.path)
            with self.path.open("r+b") as fh:
                if good_bytes < self.path.stat().st_size:
                    fh.truncate(good_bytes)
                if good_bytes > 0:
                    fh.seek(good_bytes - 1)
                    if fh.read(1) != b"\n":  # a complete last row without its newline
                        fh.write(b"\n")
            self._keys = {s.key for s in self.samples}
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.touch()

    def has(self, key: tuple[str, str, int]) -> bool:
        return key in self._keys

    def append(self, sample: Sample) -> bool:
        """Write ``sample`` unless one with the same key is already stored. Returns whether written."""
        if sample.key in self._keys:
            return False
        data = memoryview((sample.model_dump_json() + "\n").encode("utf-8"))
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        try:
            start = os.fstat(fd).st_size
            try:
                while data:
                    data = data[os.write(fd, data) :]
                os.fsync(fd)
            except OSError:
                # a full disk (ENOSPC) wrote part of the line: cut it off again, so the file ends with
                # whole rows and a later append (once there is room) does not follow a torn one
                try:
                    os.ftruncate(fd, start)
                except OSError:
                    pass
                raise
        finally:
            os.close(fd)
        self._keys.add(sample.key)
        self.samples.append(sample)
        return True

    def withdraw(self, keys: set[tuple[str, str, int]], archive: Path) -> list[Sample]:
        """Take the samples with these keys out of the file so that they run again: they are first
        appended to ``archive`` (fsynced: the earlier attempt stays on record), then the samples file
        is rewritten atomically without them. A crash between the two leaves them in both files,
        never in neither. Returns the samples withdrawn."""
        taken = [s for s in self.samples if s.key in keys]
        if not taken:
            return []
        with Path(archive).open("a", encoding="utf-8") as fh:
            fh.write("".join(s.model_dump_json() + "\n" for s in taken))
            fh.flush()
            os.fsync(fh.fileno())
        self.samples = [s for s in self.samples if s.key not in keys]
        write_atomic(self.path, "".join(s.model_dump_json() + "\n" for s in self.samples))
        self._keys = {s.key for s in self.samples}
        return taken


def _why(exc: ValueError) -> str:
    return first_error(exc) if isinstance(exc, ValidationError) else str(exc).splitlines()[0]


def read_samples_file(path: Path, *, keep_repeats: bool = False) -> tuple[list[Sample], int, list[str]]:
    """Read ``samples.jsonl``. Returns the samples, the byte length of the well-formed prefix
    and warnings. A malformed last line with no newline after it is a torn write and is dropped
    with a warning; any other malformed line, a complete last one too, is an error (the file was
    edited or corrupted). A row repeating a sample's key is warned about and left out, or kept
    with ``keep_repeats`` (for checks that count them, as the soak does)."""
    data = Path(path).read_bytes()
    samples: list[Sample] = []
    warnings: list[str] = []
    seen: set[tuple[str, str, int]] = set()
    offset = 0
    lines = data.split(b"\n")
    for i, raw in enumerate(lines):
        is_last = i == len(lines) - 1
        end = offset + len(raw) + (0 if is_last else 1)
        if not raw.strip():
            offset = end
            continue
        try:
            sample = Sample.model_validate_json(raw)
        except ValueError as exc:
            if is_last:  # no newline after it: the write stopped part-way (a complete row ends in one)
                warnings.append(
                    f"{path}: dropped a partial last line ({len(raw)} bytes) left by an interrupted write"
                )
                return samples, offset, warnings
            raise ValueError(f"{path}: line {i + 1} is not a valid sample: {_why(exc)}") from exc
        if sample.key in seen:
            kept = "kept both" if keep_repeats else "kept the first"
            warnings.append(f"{path}: line {i + 1} repeats sample {sample.key}; {kept}")
            if keep_repeats:
                samples.append(sample)
        else:
            seen.add(sample.key)
            samples.append(sample)
        offset = end
    return samples, offset, warnings


def load_samples(path: Path) -> list[Sample]:
    """All samples of a ``samples.jsonl`` (a torn last line is skipped)."""
    return read_samples_file(path)[0]


def question_unit(question_id: str, retriever: str) -> str:
    """The id of a question run by one retriever (:attr:`Sample.unit`), for tables that hold the two
    columns rather than samples."""
    return f"{question_id}\x00{retriever}"


def above_error_rate(errors: int, total: int, max_error_rate: float) -> bool:
    """The rule of ``--max-error-rate`` (``bench run``, ``bench rejudge``, ``bench judge``, exit 4, and the
    report's note of it): more than that share of the samples (answers, rows) ended in error or a failed
    judge call; never when there are none."""
    return total > 0 and errors / total > max_error_rate


def errored(sample: Sample) -> bool:
    """The infrastructure decided this sample: the retrieval ended in ``error`` or the judge failed."""
    return sample.status == "error" or bool(getattr(sample, "judge_error", None))


def commonest_error(samples: list[Sample]) -> str | None:
    """The error kind most of the samples in error ended with, with how many and the first one's
    message (which says what to do: `give --context-window 4096`), for the line that ends a run with
    too many errors; None when no sample is in error."""
    found: dict[str, list[str]] = {}
    for sample in samples:
        if sample.status == "error":
            found.setdefault(sample.error_kind or "error", []).append(sample.error or "")
        elif getattr(sample, "judge_error", None):
            kind = f"judge {sample.judge_error_kind or 'error'}"
            found.setdefault(kind, []).append(sample.judge_error or "")
    if not found:
        return None
    from pageindex.llm.http import shorten

    kind, messages = max(found.items(), key=lambda item: len(item[1]))
    return f"{kind} in {counted(len(messages), 'sample')}, e.g. {shorten(messages[0], 400)}"


def over_error_rate(samples: list[Sample], max_error_rate: float | None) -> str | None:
    """What a report says of a finished run more than ``max_error_rate`` of whose samples ended in error or
    a failed judge call (``bench.runner.RunOutcome.too_many_errors``: ``bench run`` exits 4), with the
    commonest kind; None within the rate, or where the run's record keeps no rate (``None``)."""
    total, bad = len(samples), sum(errored(s) for s in samples)
    if max_error_rate is None or not above_error_rate(bad, total, max_error_rate):
        return None
    most = commonest_error(samples)
    said = (
        f"{bad} of {counted(total, 'sample')} ended in error or a failed judge call ({bad / total:.0%}, "
        f"above its --max-error-rate {max_error_rate:g}, where bench run exits 4)"
    )
    return f"{said}; most often {most}" if most else said
