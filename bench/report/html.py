"""One self-contained HTML report for one or more runs: inline CSS, inline SVG charts, no scripts,
nothing fetched from the network.

``render_html(runs) -> str`` and ``write_html(runs, path)``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from html import escape
from pathlib import Path

import pandas as pd

from bench.compare import run_differences
from bench.report import plots
from bench.samples import Sample
from bench.summary import Run, summary_table_frame

MAX_TRACE_DATA = 1500

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:24px auto;
max-width:1400px;color:#1d2330;padding:0 16px;line-height:1.4}
h1{font-size:1.6em;margin-bottom:4px} h2{margin-top:32px;border-bottom:1px solid #dde1e8;padding-bottom:4px}
table{border-collapse:collapse;font-size:13px;margin:8px 0}
th,td{border:1px solid #dde1e8;padding:4px 8px;text-align:right;vertical-align:top}
th{background:#f3f5f9} td:first-child,th:first-child{text-align:left}
table.questions td,table.questions th{text-align:left} .muted{color:#6b7385}
.warn{background:#fff1f0;border:2px solid #d4380d;padding:8px 12px;border-radius:4px;margin:12px 0}
.warn h3{margin:0 0 4px 0;color:#a8071a}
.figs{display:flex;flex-wrap:wrap;gap:16px} figure{margin:0;border:1px solid #eef0f4;padding:8px}
figure svg{max-width:100%;height:auto} figcaption{font-size:12px;color:#6b7385}
.v{padding:1px 6px;border-radius:3px;font-size:12px;font-weight:600}
.v-correct{background:#d9f7be;color:#135200} .v-incorrect{background:#ffccc7;color:#820014}
.v-refusal{background:#fff1b8;color:#614700} .v-error{background:#d6e4ff;color:#061178}
details>summary{cursor:pointer} details[open]>summary{font-weight:600}
dl{display:grid;grid-template-columns:140px 1fr;gap:4px 12px;margin:8px 0}
dt{font-weight:600;color:#3a4256} dd{margin:0;white-space:pre-wrap}
pre{background:#f6f8fa;padding:6px;overflow-x:auto;font-size:12px;max-height:300px}
ol.trace{font-size:12px;padding-left:20px}
"""


def _e(x: object) -> str:
    return escape("" if x is None else str(x))


def _table(frame: pd.DataFrame, cls: str = "summary") -> str:
    return frame.to_html(index=False, escape=True, classes=cls, border=0, na_rep="-")


def _run_info(runs: Sequence[Run]) -> str:
    rows = []
    for run in runs:
        i = run.info
        judge = i.judge + (f" / {i.judge_model}" if i.judge_model else "")
        judge += f" (prompt {i.judge_prompt_version})" if i.judge_prompt_version else ""
        rows.append(
            {
                "run": i.run_id,
                "status": i.status,
                "dataset": f"{i.dataset.name or '-'} ({(i.dataset.sha256 or '-')[:12]})",
                "model": i.model or "-",
                "retrievers": ", ".join(i.retrievers) or "-",
                "judge": judge,
                "started": i.started_at or "-",
                "ended": i.ended_at or "-",
                "commit": (i.git_commit or "-")[:10],
                "samples": run.summary.n_samples,
                "dropped": run.summary.n_dropped,
            }
        )
    return _table(pd.DataFrame(rows), "runs")


def _warnings(runs: Sequence[Run]) -> str:
    items = []
    for other in runs[1:]:
        items += run_differences(runs[0], other)
    for run in runs:
        items += [f"{run.run_id}: {w}" for w in run.warnings]
        if run.info.skipped_retrievers:
            items += [f"{run.run_id}: skipped {k}: {v}" for k, v in run.info.skipped_retrievers.items()]
    if not items:
        return ""
    lis = "".join(f"<li>{_e(w)}</li>" for w in dict.fromkeys(items))
    return f'<div class="warn"><h3>Read with care</h3><ul>{lis}</ul></div>'


def _summary_tables(runs: Sequence[Run]) -> str:
    parts = []
    for run in runs:
        head = f"<h3>{_e(run.run_id)}</h3>" if len(runs) > 1 else ""
        groups = run.summary.by_retriever_model or [run.summary.overall]
        parts.append(head + _table(summary_table_frame(groups)))
        for by in ("question_type", "doc_type"):
            groups = run.summary.groups(by)
            if len(groups) > 1:
                parts.append(
                    f"<details><summary>by {by.replace('_', ' ')}</summary>"
                    f"{_table(summary_table_frame(groups))}</details>"
                )
    return "\n".join(parts)


def _figures(runs: Sequence[Run]) -> str:
    figs = [
        (
            plots.accuracy_vs_tokens(runs),
            "Accuracy (Wilson 95% CI) against mean retriever tokens per question.",
        ),
        (plots.accuracy_by(runs, "question_type"), "Accuracy by question type."),
        (plots.accuracy_by(runs, "doc_type"), "Accuracy by document type."),
        (
            plots.effort_distribution(runs),
            "Iterations and tool calls per sample (box: quartiles, triangle: mean).",
        ),
    ]
    return (
        '<div class="figs">'
        + "".join(
            f'<figure class="chart">{svg}<figcaption>{_e(cap)}</figcaption></figure>' for svg, cap in figs
        )
        + "</div>"
    )


def _verdict(s: Sample) -> str:
    v = s.verdict or "error"
    return f'<span class="v v-{v}">{_e(v)}</span>'


def _sources(s: Sample) -> str:
    if not s.sources:
        return '<span class="muted">none</span>'
    items = []
    for src in s.sources:
        label = f" (printed {src.page_label})" if src.page_label else ""
        flag = {True: "verified", False: "NOT found on page", None: "no quote"}[src.verified]
        quote = f" &ldquo;{_e(src.quote)}&rdquo;" if src.quote else ""
        doc = f"{_e(src.doc_id)} " if src.doc_id else ""
        items.append(
            f"<li>{doc}p. {src.page}{_e(label)} &middot; {_e(src.node_id)} {_e(src.title)}{quote} "
            f"<span class='muted'>[{flag}]</span></li>"
        )
    return "<ul>" + "".join(items) + "</ul>"


def _trace(s: Sample) -> str:
    if not s.trace:
        return '<span class="muted">no trace recorded</span>'
    items = []
    for ev in s.trace:
        data = ev.get("data") or {}
        extra = ""
        if data:
            text = json.dumps(data, ensure_ascii=False, default=str)
            if len(text) > MAX_TRACE_DATA:
                text = text[:MAX_TRACE_DATA] + " ..."
            extra = f"<pre>{_e(text)}</pre>"
        t = ev.get("t")
        when = f"{t:.2f}s " if isinstance(t, int | float) else ""
        items.append(
            f"<li><span class='muted'>{when}[{_e(ev.get('kind', ''))}]</span> "
            f"{_e(ev.get('message', ''))}{extra}</li>"
        )
    return '<ol class="trace">' + "".join(items) + "</ol>"


def _details(s: Sample) -> str:
    fields = [
        ("Question", _e(s.question)),
        ("Gold answer", _e(s.gold_answer)),
        ("Answer", _e(s.answer) or '<span class="muted">(none)</span>'),
        ("Verdict", f"{_verdict(s)} <span class='muted'>by {_e(s.judge or '-')}</span>"),
        ("Judge reasoning", _e(s.judge_reasoning) or '<span class="muted">-</span>'),
    ]
    if s.reason:
        fields.append(("Why it failed", _e(s.reason)))
    if s.error:
        fields.append(("Error", _e(s.error)))
    fields += [
        (
            "Document",
            f"{_e(s.doc_id)} ({_e(s.doc_type or '-')}), evidence pages {_e(s.evidence_pages or '-')}",
        ),
        ("Pages fetched", _e(s.pages_fetched or "-") + (" (evidence hit)" if s.evidence_hit else "")),
        ("Sources", _sources(s)),
        (
            "Figures",
            f"{s.tokens:,} retriever tokens, {s.llm_calls} LLM calls, {s.iterations} iterations, "
            f"{s.tool_calls} tool calls, {s.latency_s:.2f}s",
        ),
        ("Trace", _trace(s)),
    ]
    body = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in fields)
    short = s.question if len(s.question) <= 110 else s.question[:109] + "…"
    return f"<details><summary>{_e(short) or _e(s.question_id)}</summary><dl>{body}</dl></details>"


def _questions(runs: Sequence[Run]) -> str:
    several = len(runs) > 1
    head = ("<th>run</th>" if several else "") + (
        "<th>question id</th><th>retriever</th><th>repeat</th><th>verdict</th><th>status</th>"
        "<th>tokens</th><th>evidence</th><th>question (click to expand)</th>"
    )
    rows = []
    for run in runs:
        for s in sorted(run.samples, key=lambda s: (s.question_id, s.retriever, s.repeat)):
            hit = {True: "hit", False: "miss", None: "-"}[s.evidence_hit]
            rows.append(
                '<tr class="sample">'
                + (f"<td>{_e(run.run_id)}</td>" if several else "")
                + f"<td>{_e(s.question_id)}</td><td>{_e(s.retriever)}</td><td>{s.repeat}</td>"
                f"<td>{_verdict(s)}</td><td>{_e(s.status)}</td><td>{s.tokens:,}</td><td>{hit}</td>"
                f"<td>{_details(s)}</td></tr>"
            )
    return f'<table class="questions"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def _dropped(runs: Sequence[Run]) -> str:
    rows = [
        {"run": r.run_id, "question_id": d.question_id, "reason": d.reason} for r in runs for d in r.dropped
    ]
    if not rows:
        return "<p class='muted'>No question was dropped by validation.</p>"
    return _table(pd.DataFrame(rows), "dropped")


def render_html(runs: Sequence[Run], title: str | None = None) -> str:
    """The report as one HTML document."""
    if not runs:
        raise ValueError("no runs to report")
    title = title or "pageindex-bench report: " + ", ".join(r.run_id for r in runs)
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    n = sum(len(r.samples) for r in runs)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(title)}</title><style>{CSS}</style></head>
<body>
<h1>{_e(title)}</h1>
<p class="muted">Generated {now}. Accuracy counts errors as not correct; intervals are Wilson 95%.</p>
<section id="runs"><h2>Runs</h2>{_run_info(runs)}{_warnings(runs)}</section>
<section id="summary"><h2>Summary</h2>{_summary_tables(runs)}</section>
<section id="charts"><h2>Charts</h2>{_figures(runs)}</section>
<section id="questions"><h2>Per question ({n} samples)</h2>{_questions(runs)}</section>
<section id="dropped"><h2>Dropped questions</h2>{_dropped(runs)}</section>
</body></html>
"""


def write_html(runs: Sequence[Run], path: str | Path, title: str | None = None) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html(runs, title), encoding="utf-8")
    return path
