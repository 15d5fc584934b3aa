"""Agreement of the rules judge with independent sets of answers: a second check beside the label files.

Usage: ``python bench/perf/judge_independent.py DATA_DIR [--abstain]``

``bench/perf/data/independent_answers.jsonl`` holds answers to the FinanceBench questions written by
writers who had not seen the rules (helpers given only ``questions.jsonl``, the filings and the
graders' rubric, told not to open the judge or the label files), each with the label that rubric
gives it, an answer style and the set it belongs to:

* set 1 (160 answers, seven styles: closed-book refusals, answers from memory, hedges, "the context
  lacks it", units and formats, the gold as another quantity, yes/no and explanations);
* set 2 (200 answers, two per question, eight styles named after the systems they imitate: a
  closed-book chat model, retrieval with the wrong chunk, a verbose open model, a step-by-step
  calculator, a terse oracle, yes/no and explanation, hedged, markdown/structured);
* sets 3 and 4 (200 answers each): real closed-book answers. Writers given only the question texts
  (no gold, no filing) answered from their own memory, twice per question ("plain", and
  "best-effort" when told always to commit); other helpers then labelled them with the gold, the
  rubric and the filings. Set 4 is set 3's process run again by fresh writers and graders;
* set 5 (200 answers): closed-book answers written in the manner of GPT-4-Turbo (late 2023, no
  documents; two samples per question), labelled as set 3, with the rubric's note that FinanceBench's
  graders count a hedged guess after declining as a refusal.

The file has neither question nor gold: they are joined from ``DATA_DIR/questions.jsonl`` by
``financebench_id`` and judged with the gold as a run judges it (text, as the dataset writes it).
Sets 1, 2 and 5 are split in halves by a hash of the row id (sha256, odd = hold): ``setN-dev`` was
read while the rules were changed, ``setN-hold`` only measured. Set 3 is development whole (its
hash hold-out half was measured once, then read and folded in) and set 4 is hold-out whole. The
report is ``bench judge --per-file``'s, with the hold-out halves in a table of their own. No model is
called.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import jsonlines
import typer
from rich.console import Console

from bench.datasets.financebench import load_financebench
from bench.judges.batch import AnswerRow, ParsedRow, judge_rows
from bench.judges.report import print_label_report
from bench.judges.rules import RulesJudge

ANSWERS = Path(__file__).with_name("data") / "independent_answers.jsonl"
SETS = (1, 2, 3, 4, 5)
HELD = {f"set{n}-hold" for n in SETS}
console = Console(width=140)


def independent_rows(data_dir: Path) -> list[ParsedRow]:
    """The independent answers joined with their question and gold as the dataset loader reads them
    from ``data_dir/questions.jsonl`` (what ``bench run`` judges with); each row's ``source`` is its
    half (``independent-dev`` or ``independent-hold``)."""
    questions = {q.question_id: q for q in load_financebench(data_dir).questions}
    with jsonlines.open(ANSWERS) as reader:
        cases = list(reader)
    missing = sorted({c["financebench_id"] for c in cases} - set(questions))
    if missing:
        raise ValueError(
            f"{data_dir / 'questions.jsonl'} lacks {len(missing)} of the questions the independent answers "
            f"are to (e.g. {missing[0]}): give the FinanceBench directory"
        )
    out = []
    for i, case in enumerate(cases, start=1):
        question = questions[case["financebench_id"]]
        row = AnswerRow(
            question=question.question, gold_answer=question.gold_answer, model_answer=case["model_answer"],
            label=case["label"], id=case["id"], source=f"set{case['set']}-{case['half']}",
        )  # fmt: skip
        out.append(ParsedRow(line=i, row=row))
    return out


def main(
    data_dir: Path = typer.Argument(..., help="FinanceBench-format directory (its questions.jsonl)."),
    abstain: bool = typer.Option(False, "--abstain", help="Let the rules say 'uncertain'."),
) -> None:
    errors = Console(stderr=True)
    if not (data_dir / "questions.jsonl").is_file():
        errors.print(f"error: DATA_DIR {data_dir}: no questions.jsonl", highlight=False, markup=False)
        raise typer.Exit(2)
    try:
        parsed = independent_rows(data_dir)
    except ValueError as exc:
        errors.print(f"error: DATA_DIR {exc}", highlight=False, markup=False)
        raise typer.Exit(2) from None
    judge = RulesJudge(abstain=abstain)
    rows = asyncio.run(judge_rows(judge, parsed))
    console.print(f"judge {judge.name} version {judge.version}", highlight=False, markup=False)
    print_label_report(console, rows, holdout=HELD)


if __name__ == "__main__":
    typer.run(main)
