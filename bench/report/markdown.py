"""The report's tables as Markdown (for pull requests): ``render_markdown(runs) -> str``."""

from __future__ import annotations

import re
from collections.abc import Sequence

from bench.report import TITLE_PREFIX
from bench.report.ab import ab_rows, combined_rows, comparisons, letters_of, report_warnings
from bench.rundir import Run, named_apart
from bench.runinfo import run_options
from bench.summary import summary_rows

MAX_CELL = 90
# the report's own figures: 12, 1,234, 38.9% [20.3, 61.4], $0.0123, +4.0 pp, [-1.0 pp, +9.5 pp],
# 3.2e-05, 1/0/2, 5 / 1 (right-aligned, never escaped)
_NUMERIC = re.compile(
    r"^[-+$]?[\d,.]*%?( \[[\d., ]+\])?$|^-$|^unknown$|^\d+/\d+/\d+$|^\d+ / \d+$|^[\d.]+e[-+]\d+$"
    r"|^[-+]?[\d.]+ pp$|^\[[-+]?[\d.]+ pp, [-+]?[\d.]+ pp\]$"
)
# What Markdown or the HTML inside it would read as markup in a question, an answer or an id:
# backslash first (so an escaped pipe stays escaped), code, emphasis, links and images, strikethrough,
# tags (<script>, <img ...>), table cells (|), entities (&amp;); an underscore only where it can
# start or end emphasis (not inside a word: financebench_id_00476 stays as it is).
_MARKUP = re.compile(r"[\\`*\[\]<|~]|&(?=#?\w+;)|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")


def md_text(x: object) -> str:
    """``x`` as literal Markdown text on one line: every character that would be read as markup is
    escaped with a backslash, so a dataset's question, answer or id shows as written (a ``<script>``
    or ``[link](url)`` in it is text, and a ``|`` never splits a table cell)."""
    text = " ".join(str("" if x is None else x).split())
    return _MARKUP.sub(lambda m: "\\" + m.group(0), text)


def _cell(x: object) -> str:
    """One table cell: a figure as it is, anything else cut to MAX_CELL characters and escaped."""
    text = " ".join(str("" if x is None else x).split())
    if _NUMERIC.match(text):
        return text
    return md_text(text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…")


def md_table(rows: Sequence[dict[str, object]]) -> str:
    """A GitHub-flavoured Markdown table; numbers right-aligned."""
    if not rows:
        return "_(none)_\n"
    cols = list(dict.fromkeys(k for r in rows for k in r))
    head = "| " + " | ".join(_cell(c) for c in cols) + " |"
    numeric = [i > 0 and all(_NUMERIC.match(_cell(r.get(c, "-"))) for r in rows) for i, c in enumerate(cols)]
    sep = "|" + "|".join("---:" if num else ":---" for num in numeric) + "|"
    body = ["| " + " | ".join(_cell(r.get(c, "-")) for c in cols) + " |" for r in rows]
    return "\n".join([head, sep, *body]) + "\n"


def render_markdown(runs: Sequence[Run], questions: bool = True) -> str:
    if not runs:
        raise ValueError("no runs to report")
    runs = named_apart(runs)
    out = ["# " + TITLE_PREFIX + md_text(", ".join(r.run_id for r in runs)), ""]
    warnings = [md_text(w) for w in report_warnings(runs)]
    if len(warnings) == 1:
        out += [f"> **Warning:** {warnings[0]}", ""]
    elif warnings:  # one item each: joined by "; " they ran into one line a reader could not take apart
        out += ["> **Read with care:**", ">", *(f"> - {w}" for w in warnings), ""]
    if len(runs) > 1:
        out += ["## Summary (runs x retrievers)", "", md_table(combined_rows(runs))]
        letters = letters_of(runs)
        for item in comparisons(runs):
            if isinstance(item, str):
                out += [f"> {md_text(item)}", ""]
                continue
            m = item.mcnemar
            la, lb = letters[m.run_a], letters[m.run_b]
            flips = [
                f"{md_text(f.question_id)} {md_text(f.retriever)}{f' #{f.repeat}' if f.repeat else ''} "
                f"({f.verdict_a} -> {f.verdict_b})"
                for g in m.groups
                for f in (*g.improved, *g.regressed)
            ]
            out += [
                f"## A vs B: {la} = {md_text(m.run_a)}, {lb} = {md_text(m.run_b)}",
                "",
                f"{md_text(m.shared_text)}; only in {la}: {m.only_a}, only in {lb}: {m.only_b}; "
                "paired bootstrap CI (resampling documents), exact McNemar p.",
                "",
                *([f"Settings that differ: {md_text('; '.join(m.settings))}", ""] if m.settings else []),
                md_table(ab_rows(item, la, lb)),
                f"Flipped: {', '.join(flips) if flips else 'none'}",
                "",
            ]
    for run in runs:
        s = run.summary
        judge = s.judge + (f" / {s.judge_model}" if s.judge_model else "")
        out += [
            f"## {md_text(run.run_id)}",
            "",
            md_text(
                f"status {s.status}, dataset {s.dataset or '-'}, model {s.model or '-'}, judge {judge}, "
                f"options {run_options(run.info)}, {s.n_samples} samples, {s.n_dropped} dropped"
            ),
            "",
            md_table(summary_rows(s.by_retriever_model or [s.overall])),
        ]
        for by in ("question_type", "doc_type"):
            groups = s.groups(by)
            if len(groups) > 1:
                out += [f"### by {by.replace('_', ' ')}", "", md_table(summary_rows(groups))]
        if run.dropped:
            out += [
                "### dropped questions",
                "",
                md_table(
                    [
                        {"question_id": d.question_id, "reason": d.reason, "detail": d.detail}
                        for d in run.dropped
                    ]
                ),
            ]
        if questions:
            rows = [
                {
                    "question id": x.question_id,
                    "retriever": x.retriever,
                    "repeat": x.repeat,
                    "verdict": x.outcome,
                    "tokens": f"{x.tokens:,}",
                    "question": x.question,
                    "answer": x.answer or x.reason or x.error or "",
                    "gold": x.gold_answer,
                }
                for x in sorted(run.samples, key=lambda x: (x.question_id, x.retriever, x.repeat))
            ]
            out += ["### per question", "", md_table(rows)]
    return "\n".join(out)
