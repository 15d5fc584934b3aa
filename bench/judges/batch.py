"""Judge answers that already exist: read ANSWERS.jsonl rows, judge each, write one verdict row per input.

Input rows carry ``question``, ``gold_answer`` (text or number) and ``model_answer``; optionally ``label``
(a human label, as in FinanceBench's labels) and ``id`` or ``financebench_id``. A malformed row gets a
verdict row with ``status="error"`` and the reason; it never stops the others.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from bench.datasets.financebench import text_lines
from bench.judges.base import Judge, JudgeInput, JudgeVerdict, Verdict, judge_sample
from bench.judges.calibration import normalize_label
from pageindex.atomic import first_row_has, write_atomic
from pageindex.llm.types import Usage
from pageindex.wording import error_text


class AnswerRow(BaseModel):
    """One answer to judge."""

    question: str
    gold_answer: str | float | int
    model_answer: str
    label: str | None = None
    id: str | None = None
    financebench_id: str | None = None
    model_name: str | None = None
    source: str | None = Field(default=None, description="Label file the row came from (set by the reader).")

    @property
    def row_id(self) -> str | None:
        return self.id or self.financebench_id


class ParsedRow(BaseModel):
    """A line of the input: the row if it parsed, else the error."""

    line: int
    row: AnswerRow | None = None
    raw_id: str | None = None
    error: str | None = None
    source: str | None = None  # the label file's stem (--labels), also for a row that did not parse


class VerdictRow(BaseModel):
    """One line of VERDICTS.jsonl."""

    line: int
    id: str | None = None
    status: Literal["ok", "error"]
    verdict: Verdict | None = None
    label: Verdict | None = None
    judge: str | None = None
    confident: bool | None = None
    reasoning: str = ""
    prompt_version: str | None = None
    judge_version: str | None = None
    decided_by: str | None = None
    model_name: str | None = None
    source: str | None = None
    usage: Usage = Field(default_factory=Usage)
    error: str | None = None
    # what the judge recorded beside its verdict (hybrid's rules_verdict, a panel's agreement and votes)
    details: dict[str, Any] = Field(default_factory=dict)

    @property
    def where(self) -> str:
        """The row's place in what was read: ``line 3``, or ``gpt-4_oracle line 3`` for a label file."""
        return f"{self.source} line {self.line}" if self.source else f"line {self.line}"


def label_files(directory: Path, *, exclude: set[str] | frozenset[str] = frozenset()) -> list[Path]:
    """The label files of a FinanceBench-format directory, sorted: ``DIR/labels/*.jsonl`` when DIR has
    a ``labels`` folder, none when it is a dataset without one (its ``questions.jsonl`` is not a label
    file), else ``DIR/*.jsonl``. ``exclude`` holds file names or stems to leave out (a hold-out)."""
    if not (directory / "labels").is_dir() and (directory / "questions.jsonl").is_file():
        return []
    folder = directory / "labels" if (directory / "labels").is_dir() else directory
    return [
        p for p in sorted(folder.glob("*.jsonl")) if p.name not in exclude and p.stem not in exclude
    ]


def read_label_dir(
    directory: Path, *, exclude: set[str] | frozenset[str] = frozenset()
) -> list[ParsedRow]:
    """Every row of every label file (see :func:`label_files`), each tagged with its file's stem."""
    out: list[ParsedRow] = []
    for path in label_files(directory, exclude=exclude):
        for parsed in read_answer_rows(path):
            parsed.source = path.stem
            if parsed.row is not None:
                parsed.row.source = path.stem
            out.append(parsed)
    return out


def read_answer_rows(path: Path) -> list[ParsedRow]:
    """Every line of ``path`` (blank lines skipped), parsed or with the reason it could not be."""
    out: list[ParsedRow] = []
    for number, text, problem in text_lines(path):  # a byte-order mark, CRLF ends, UTF-16: as datasets
        if text is None:
            out.append(ParsedRow(line=number, error=problem or "not UTF-8 text"))
            continue
        if not text.strip():
            continue
        try:
            data: Any = json.loads(text)
        except json.JSONDecodeError as exc:
            out.append(ParsedRow(line=number, error=f"not JSON: {exc.msg} at column {exc.colno}"))
            continue
        if not isinstance(data, dict):
            out.append(ParsedRow(line=number, error=f"expected a JSON object, got {type(data).__name__}"))
            continue
        raw_id = data.get("id", data.get("financebench_id"))
        raw_id = None if raw_id is None else str(raw_id)
        if isinstance(data.get("id"), int):
            data["id"] = str(data["id"])
        try:
            out.append(ParsedRow(line=number, row=AnswerRow.model_validate(data), raw_id=raw_id))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'row'}: {e['msg']}" for e in exc.errors()
            )
            out.append(ParsedRow(line=number, raw_id=raw_id, error=problems))
    return out


def _verdict_row(parsed: ParsedRow, verdict: JudgeVerdict) -> VerdictRow:
    row = parsed.row
    assert row is not None
    return VerdictRow(
        line=parsed.line,
        id=row.row_id,
        status="ok",
        verdict=verdict.verdict,
        label=normalize_label(row.label),
        judge=verdict.judge,
        confident=verdict.confident,
        reasoning=verdict.reasoning,
        prompt_version=verdict.prompt_version,
        judge_version=verdict.judge_version,
        decided_by=verdict.details.get("decided_by"),
        model_name=row.model_name,
        source=row.source,
        usage=verdict.usage,
        details=verdict.details,
    )


async def judge_rows(judge: Judge, rows: list[ParsedRow], *, concurrency: int = 8) -> list[VerdictRow]:
    """Judge every parsed row, at most ``concurrency`` at a time; results in input order."""
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(parsed: ParsedRow) -> VerdictRow:
        if parsed.row is None:
            return VerdictRow(
                line=parsed.line, id=parsed.raw_id, status="error", error=parsed.error, source=parsed.source
            )
        row = parsed.row
        async with gate:
            try:
                inp = JudgeInput(question=row.question, gold_answer=row.gold_answer, answer=row.model_answer)
                verdict = await judge_sample(judge, inp)
            except Exception as exc:  # one failing row never stops the others
                return VerdictRow(
                    line=parsed.line,
                    id=row.row_id,
                    status="error",
                    label=normalize_label(row.label),
                    model_name=row.model_name,
                    source=row.source,
                    # what the failed call spent (its HTTP attempts, tokens, cost), as bench run counts it
                    usage=getattr(exc, "usage", None) or Usage(),
                    error=error_text(exc),
                )
        return _verdict_row(parsed, verdict)

    return list(await asyncio.gather(*(one(p) for p in rows)))


def is_verdicts_file(path: Path) -> bool:
    """Whether ``path`` holds VERDICTS.jsonl rows (what ``bench judge --out`` may replace): its first
    row has a verdict row's ``line`` and ``status``."""
    return first_row_has(path, ("line", "status"))


def write_verdict_rows(path: Path, rows: list[VerdictRow]) -> None:
    """VERDICTS.jsonl written whole (temp file + rename): a write that fails or is interrupted part-way
    leaves an earlier verdicts file as it was (it was truncated first, then half written)."""
    text = "".join(json.dumps(row.model_dump(mode="json"), ensure_ascii=False) + "\n" for row in rows)
    write_atomic(path, text)
