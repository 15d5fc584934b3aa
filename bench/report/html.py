"""One self-contained HTML report for one or more runs: inline CSS, inline SVG charts and a little
inline JavaScript; nothing is fetched from the network and no server is needed.

Sections: the runs; one summary table (runs x retrievers); for two or more runs an A-vs-B section
per later run against the first (paired difference with its bootstrap CI, exact McNemar p, the
flipped questions linked to their rows); charts; the questions, one row per question with every
run's verdicts side by side, filterable (all / disagreements / flips / errors, unusable replies or no
verdict) and searchable.
A row's details (answers, sources, traces) are stored once, gzip-compressed and base64-encoded,
and rendered only when the row is opened, which keeps 3 runs x 300 samples well under 1 MB.

``render_html(runs) -> str`` and ``write_html(runs, path)``.
"""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from html import escape
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel

from bench.compare import short_question
from bench.report import GENERATOR, TITLE_PREFIX, plots
from bench.report.ab import ABSection, ab_rows, combined_rows, comparisons, letters_of, report_warnings
from bench.rundir import Run, named_apart
from bench.runinfo import run_options
from bench.samples import Sample
from bench.summary import NO_VALUE

MAX_TRACE_DATA = 1500  # characters of one trace event's data kept in the report
MAX_FLIPS = 200  # per direction and comparison
MAX_ROW_QUESTION = 300  # characters of a question shown in its row (whole in the row's details)
VERDICT_MARK = {
    "correct": "✓", "incorrect": "✗", "refusal": "R", "uncertain": "?", "unjudged": "U", "error": "E",
    "unusable": "!",
}
UNUSABLE = "the model's reply was unusable (scored as a refusal)"  # a fail's Sample.outcome is its error kind


def badge_class(outcome: str) -> str:
    """The badge a :attr:`Sample.outcome` gets: its own, or ``unusable`` for the error kind of a ``fail``
    the model's unusable reply caused (``invalid_reply``: it read as an "R refusal" before session 26's
    fresh-user trial)."""
    return outcome if outcome in VERDICT_MARK else "unusable"


def badge_title(outcome: str) -> str:
    return outcome if outcome in VERDICT_MARK else f"{outcome}: {UNUSABLE}"

CSS = """
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:24px auto;
max-width:1400px;color:#1d2330;padding:0 16px;line-height:1.4}
h1{font-size:1.5em;margin-bottom:4px;overflow-wrap:anywhere}
h2{margin-top:32px;border-bottom:1px solid #dde1e8;padding-bottom:4px}
table{border-collapse:collapse;font-size:13px;margin:8px 0;max-width:100%}
th,td{border:1px solid #dde1e8;padding:4px 8px;text-align:right;vertical-align:top;overflow-wrap:anywhere}
th{background:#f3f5f9} td:first-child,th:first-child{text-align:left}
table.runs td,table.runs th{text-align:left;overflow-wrap:break-word}
table.summary th{overflow-wrap:normal} table.summary td{white-space:nowrap}
table.summary:not(.multi) td:first-child,table.multi td:nth-child(2){white-space:normal;
overflow-wrap:break-word}
table.multi td:first-child,table.ab td:first-child{overflow-wrap:break-word}
table.multi td:nth-child(2),table.multi th:nth-child(2){text-align:left}
.muted{color:#6b7385}
.warn{background:#fff1f0;border:2px solid #d4380d;padding:8px 12px;border-radius:4px;margin:12px 0}
.warn h3{margin:0 0 4px 0;color:#a8071a}
.figs{display:flex;flex-wrap:wrap;gap:16px}
figure{margin:0;border:1px solid #eef0f4;padding:8px;max-width:100%;min-width:0}
figure svg{max-width:100%;height:auto;display:block} figcaption{font-size:12px;color:#6b7385;max-width:640px}
.v{display:inline-block;min-width:1.6em;text-align:center;padding:1px 5px;margin:1px;border-radius:3px;
font-size:12px;font-weight:600}
.v-correct{background:#d9f7be;color:#135200} .v-incorrect{background:#ffccc7;color:#820014}
.v-refusal{background:#fff1b8;color:#614700} .v-error{background:#d6e4ff;color:#061178}
.v-uncertain{background:#efdbff;color:#391085} .v-unjudged{background:#e6fffb;color:#00474f}
.v-unusable{background:#ffe7ba;color:#873800} .v-none{background:#f0f0f0;color:#888}
.controls{display:flex;flex-wrap:wrap;gap:8px;align-items:center;margin:8px 0;position:sticky;top:0;
background:#fff;padding:6px 0;z-index:2}
.controls button{border:1px solid #b8c0cf;background:#f7f8fb;border-radius:4px;padding:3px 10px;
cursor:pointer}
.controls button.on{background:#1d2330;color:#fff;border-color:#1d2330}
.controls input{flex:1 1 220px;min-width:0;padding:4px 8px;border:1px solid #b8c0cf;border-radius:4px}
table.questions{table-layout:fixed;width:100%}
table.questions td,table.questions th{text-align:left}
table.questions td.cell{text-align:center}
table.questions.narrow th.cell{writing-mode:vertical-rl;transform:rotate(180deg);white-space:nowrap;
text-align:left;vertical-align:bottom;overflow-wrap:normal}
.qdoc{display:none}
@media (max-width:640px){
table.questions .doc{display:none} table.questions col.doc{width:0!important}
.qdoc{display:block;font-size:12px}
table.questions th.cell{writing-mode:vertical-rl;transform:rotate(180deg);white-space:nowrap;text-align:left;
vertical-align:bottom;overflow-wrap:normal}
}
tr.q{cursor:pointer} tr.q:hover{background:#f8f9fc} tr.q.open{background:#eef3ff}
tr.q:target{outline:2px solid #2f54eb}
.qid{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}
.tw{color:#6b7385;display:inline-block;width:1em}
td.detail{background:#fbfcfe;padding:8px}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(340px,100%),1fr));gap:10px}
.card{border:1px solid #dde1e8;border-radius:4px;padding:8px;background:#fff;min-width:0}
.card h4{margin:0 0 6px 0;font-size:13px}
dl{display:grid;grid-template-columns:minmax(0,110px) minmax(0,1fr);gap:3px 10px;margin:6px 0}
dt{font-weight:600;color:#3a4256} dd{margin:0;white-space:pre-wrap;overflow-wrap:anywhere;min-width:0}
pre{background:#f6f8fa;padding:6px;font-size:11px;margin:2px 0;white-space:pre-wrap;overflow-wrap:anywhere;
max-height:220px;overflow:auto;max-width:100%}
ol.trace{font-size:12px;padding-left:20px;margin:0;max-height:420px;overflow:auto}
ul.flips{font-size:13px;columns:2 420px;column-gap:3em}
.scroll{max-width:100%;overflow-x:auto}
"""

JS = r"""
(function(){
const $=(s,e)=>(e||document).querySelector(s), $$=(s,e)=>Array.from((e||document).querySelectorAll(s));
let DATA=null, filter='all';
async function load(){
  if(DATA) return DATA;
  const raw=atob($('#report-data').textContent.trim());
  const bytes=Uint8Array.from(raw,c=>c.charCodeAt(0));
  const stream=new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
  DATA=JSON.parse(await new Response(stream).text());
  return DATA;
}
const ENT={'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;',"'":'&#39;'};
const esc=s=>String(s==null?'':s).replace(/[&<>"']/g,c=>ENT[c]);
const count=(n,noun)=>n+' '+noun+(n===1?'':'s');  // 1 LLM call, 3 LLM calls
function field(k,v){return v==null||v===''?'':'<dt>'+esc(k)+'</dt><dd>'+v+'</dd>';}
function sources(ss){
  if(!ss||!ss.length) return '<span class="muted">none</span>';
  return '<ul>'+ss.map(s=>'<li>'+esc(s.where)+(s.quote?' &ldquo;'+esc(s.quote)+'&rdquo;':'')+
    ' <span class="muted">['+esc(s.flag)+']</span></li>').join('')+'</ul>';
}
function trace(tr){
  if(!tr||!tr.length) return '<span class="muted">no trace recorded</span>';
  return '<ol class="trace">'+tr.map(e=>'<li><span class="muted">'+esc(e[0])+' ['+esc(e[1])+']</span> '+
    esc(e[2])+(e[3]?'<pre>'+esc(e[3])+'</pre>':'')+'</li>').join('')+'</ol>';
}
function card(s,cols){
  const v=s.verdict||'error';
  return '<div class="card"><h4>'+esc(cols[s.col])+(s.rep?' #'+s.rep:'')+
    ' <span class="v v-'+esc(s.vc||v)+'">'+
    esc(v)+'</span></h4><dl>'+
    field('Answer', s.answer?esc(s.answer):'<span class="muted">(none)</span>')+
    field('Judge', esc(s.judge)+(s.jr?': '+esc(s.jr):''))+
    field('Judge failed', s.jerr?esc(s.jerr):'')+
    field('Why it failed', s.reason?esc(s.reason):'')+
    field('Error', s.error?esc(s.error):'')+
    field('Pages fetched', esc(s.pages)+
      (s.hit===true?' (evidence hit)':s.hit===false?' (evidence missed)':''))+
    field('Sources', sources(s.sources))+
    field('Figures', s.fig[0].toLocaleString('en')+' retriever tokens, '+count(s.fig[1],'LLM call')+
      (s.jc?' ('+s.jc+' of them the judge\'s)':'')+', '+count(s.fig[2],'iteration')+', '+
      count(s.fig[3],'tool call')+', '+s.fig[4].toFixed(2)+'s')+
    field('Trace', trace(s.trace==null?null:DATA.traces[s.trace]))+'</dl></div>';
}
async function open(row){
  let next=row.nextElementSibling;
  if(next&&next.classList.contains('detail-row')){next.remove();row.classList.remove('open');
    $('.tw',row).textContent='▸';return;}
  row.classList.add('open'); $('.tw',row).textContent='▾';
  const tr=document.createElement('tr'); tr.className='detail-row';
  const td=document.createElement('td'); td.className='detail'; td.colSpan=row.children.length;
  td.textContent='loading…'; tr.appendChild(td); row.after(tr);
  try{
    const d=await load(), q=d.questions[row.dataset.qid];
    td.innerHTML='<dl>'+field('Question',esc(q.question))+field('Gold answer',esc(q.gold))+
      field('Document',esc(q.doc)+(q.pages?', evidence pages '+esc(q.pages):''))+'</dl>'+
      '<div class="cards">'+q.samples.map(s=>card(s,d.columns)).join('')+'</div>';
  }catch(err){td.textContent='cannot show details in this browser: '+err;}
}
function apply(){
  const words=$('#q-search').value.toLowerCase().split(/\s+/).filter(Boolean);
  let shown=0;
  for(const row of $$('tr.q')){
    if(row._text===undefined) row._text=(row.textContent+' '+(row.dataset.full||'')).toLowerCase();
    const ok=(filter==='all'||row.dataset[filter]==='1')&&words.every(w=>row._text.includes(w));
    row.hidden=!ok; const next=row.nextElementSibling;
    if(next&&next.classList.contains('detail-row')) next.hidden=!ok;
    shown+=ok;
  }
  $('#q-count').textContent=shown+' of '+$$('tr.q').length+' questions';
}
function goto(id){
  const row=document.getElementById(id); if(!row) return;
  if(row.hidden){filter='all';$$('.controls button').forEach(b=>b.classList.toggle('on',b.dataset.f==='all'));
    $('#q-search').value='';apply();}
  if(!row.classList.contains('open')) open(row);
  row.scrollIntoView({block:'start'});
}
document.addEventListener('DOMContentLoaded',()=>{
  $$('.controls button').forEach(b=>b.addEventListener('click',()=>{filter=b.dataset.f;
    $$('.controls button').forEach(x=>x.classList.toggle('on',x===b));apply();}));
  $('#q-search').addEventListener('input',apply);
  $$('tr.q').forEach(r=>r.addEventListener('click',e=>{if(!e.target.closest('a')) open(r);}));
  $$('a[href^="#q-"]').forEach(a=>a.addEventListener('click',e=>{e.preventDefault();
    history.replaceState(null,'',a.getAttribute('href'));goto(a.getAttribute('href').slice(1));}));
  apply();
  if(location.hash.startsWith('#q-')) goto(location.hash.slice(1));
});
window.reportOpen=open; window.reportApply=apply;
})();
"""


def _e(x: object) -> str:
    return escape("" if x is None else str(x))


def _table(frame: pd.DataFrame, cls: str = "summary") -> str:
    return frame.to_html(index=False, escape=True, classes=cls, border=0, na_rep=NO_VALUE)


def row_id(question_id: str) -> str:
    """The id of a question's row (target of the links from the A-vs-B section)."""
    return "q-" + "".join(c if c.isalnum() or c in "-_." else "_" for c in question_id)


def row_ids(question_ids: Sequence[str]) -> dict[str, str]:
    """Each question's row id, distinct: ids that :func:`row_id` makes alike (``a|b`` and ``a_b``)
    get ``-2``, ``-3``... in the order given, so a flip's link opens its own question's row."""
    out: dict[str, str] = {}
    taken: set[str] = set()
    for qid in question_ids:
        base = candidate = row_id(qid)
        k = 1
        while candidate in taken:
            k += 1
            candidate = f"{base}-{k}"
        taken.add(candidate)
        out[qid] = candidate
    return out


# ----------------------------------------------------------------------------- runs
def _run_info(runs: Sequence[Run]) -> str:
    letters = letters_of(runs)
    rows = []
    for run in runs:
        i = run.info
        judge = i.judge + (f" / {i.judge_model}" if i.judge_model else "")
        judge += f" (prompt {i.judge_prompt_version})" if i.judge_prompt_version else ""
        rows.append(
            {
                **({"": letters[run.run_id]} if len(runs) > 1 else {}),
                "run": i.run_id,
                "status": run.status_text(),
                "dataset": f"{i.dataset.name or NO_VALUE} ({(i.dataset.sha256 or NO_VALUE)[:12]})",
                "model": i.model or NO_VALUE,
                "retrievers": ", ".join(i.retrievers) or NO_VALUE,
                "options": run_options(i),
                "judge": judge,
                "started": i.started_at or NO_VALUE,
                "commit": (i.git_commit or NO_VALUE)[:10],
                "samples": run.summary.n_samples,
                "dropped": run.summary.n_dropped,
            }
        )
    return _table(pd.DataFrame(rows), "runs")


def _warnings(runs: Sequence[Run]) -> str:
    items = report_warnings(runs)
    if not items:
        return ""
    lis = "".join(f"<li>{_e(w)}</li>" for w in items)
    return f'<div class="warn"><h3>Read with care</h3><ul>{lis}</ul></div>'


# ----------------------------------------------------------------------------- summary
def _combined(runs: Sequence[Run], by: str) -> str:
    """The runs x groups table. Its figures never break inside ("2" over "0" for an n of 20, "unknow" over
    "n"), its headers only between words, and it scrolls in a window too narrow for it."""
    frame = pd.DataFrame(combined_rows(runs, by))
    if len(runs) == 1:
        table = _table(frame.drop(columns="run"), f"summary by-{by}")
    else:
        table = _table(frame, f"summary multi by-{by}")
    return f'<div class="scroll">{table}</div>'


def _summary(runs: Sequence[Run]) -> str:
    parts = [_combined(runs, "retriever_model")]
    for by in ("question_type", "doc_type"):
        if any(len(r.summary.groups(by)) > 1 for r in runs):  # type: ignore[arg-type]
            parts.append(
                f"<details><summary>by {by.replace('_', ' ')}</summary>{_combined(runs, by)}</details>"
            )
    return "\n".join(parts)


# ----------------------------------------------------------------------------- A vs B
def _flip_list(flips: Sequence[Any], title: str, ids: dict[str, str]) -> str:
    if not flips:
        return f"<p class='muted'>{_e(title)}: none</p>"
    items = [
        f'<li><a class="qid" href="#{ids[f.question_id]}">{_e(f.question_id)}</a> '
        f"{_e(f.retriever)}{f' #{f.repeat}' if f.repeat else ''} "
        f"<span class='muted'>({_e(f.verdict_a)} &rarr; {_e(f.verdict_b)})</span> "
        f"{_e(short_question(f.question))}</li>"
        for f in flips[:MAX_FLIPS]
    ]
    more = f"<li>… and {len(flips) - MAX_FLIPS} more</li>" if len(flips) > MAX_FLIPS else ""
    return f"<h4>{_e(title)}: {len(flips)}</h4><ul class='flips'>{''.join(items)}{more}</ul>"


def _ab(ab: Sequence[ABSection | str], letters: dict[str, str], ids: dict[str, str]) -> str:
    parts = []
    for item in ab:
        if isinstance(item, str):
            parts.append(f"<p class='warn'>{_e(item)}</p>")
            continue
        m = item.mcnemar
        la, lb = letters[m.run_a], letters[m.run_b]
        rows = ab_rows(item, la, lb)
        improved = [f for g in m.groups for f in g.improved]
        regressed = [f for g in m.groups for f in g.regressed]
        parts.append(
            f"<h3 id='ab-{_e(lb)}'>{_e(la)} = {_e(m.run_a)} vs {_e(lb)} = {_e(m.run_b)}</h3>"
            f"<p class='muted'>{_e(m.shared_text)} (same question, retriever and repeat); "
            f"only in {_e(la)}: {m.only_a}, only in {_e(lb)}: {m.only_b}. The interval resamples "
            f"whole documents; McNemar is exact on the discordant pairs.</p>"
            + (f"<p>Settings that differ: {_e('; '.join(m.settings))}</p>" if m.settings else "")
            # as the summary table: figures never break inside, headers only between words (three runs
            # named as a user names them split "retrieve" / "r"), and it scrolls in a window too narrow
            + f'<div class="scroll">{_table(pd.DataFrame(rows), "summary ab")}</div>'
            + "<div class='flipped'>"
            + _flip_list(improved, f"Correct only in {lb} (improved)", ids)
            + _flip_list(regressed, f"Correct only in {la} (regressed)", ids)
            + "</div>"
        )
    return "".join(parts)


# ----------------------------------------------------------------------------- charts
def _figures(runs: Sequence[Run]) -> str:
    figs = [
        (
            plots.accuracy_vs_tokens(runs),
            "Accuracy (95% CI) against mean retriever tokens per question; circled points are "
            "on the Pareto front (no other point is both cheaper and more accurate).",
        ),
        (plots.accuracy_by(runs, "question_type"), "Accuracy by question type (95% CI)."),
        (plots.accuracy_by(runs, "doc_type"), "Accuracy by document type (95% CI)."),
        (
            plots.effort_distribution(runs),
            "Iterations and tool calls per sample: share of samples at each count.",
        ),
        (
            plots.consistency(runs),
            "Questions asked several times: how many repeats were judged correct.",
        ),
    ]
    if not any(svg for svg, _ in figs):
        return "<p class='muted'>No samples: nothing to chart.</p>"
    return (
        '<div class="figs">'
        + "".join(
            f'<figure class="chart">{svg}<figcaption>{_e(cap)}</figcaption></figure>'
            for svg, cap in figs
            if svg
        )
        + "</div>"
    )


# ----------------------------------------------------------------------------- questions
def _trace(s: Sample) -> list[list[str]]:
    out = []
    for ev in s.trace:
        data = ev.get("data") or {}
        text = ""
        if data:
            text = json.dumps(data, ensure_ascii=False, default=str)
            if len(text) > MAX_TRACE_DATA:
                text = text[:MAX_TRACE_DATA] + " …"
        t = ev.get("t")
        out.append(
            [
                f"{t:.2f}s" if isinstance(t, int | float) else "",
                str(ev.get("kind", "")),
                str(ev.get("message", "")),
                text,
            ]
        )
    return out


def _sources(s: Sample) -> list[dict[str, str]]:
    out = []
    for src in s.sources:
        label = f" (printed {src.page_label})" if src.page_label else ""
        doc = f"{src.doc_id} " if src.doc_id else ""
        out.append(
            {
                "where": f"{doc}p. {src.page}{label} · {src.node_id} {src.title}",
                "quote": src.quote or "",
                "flag": {True: "verified", False: "NOT found on page", None: "no quote"}[src.verified],
            }
        )
    return out


def _sample_data(s: Sample, col: int, traces: dict[str, int]) -> dict[str, Any]:
    """A sample's details; its trace is an index into the report's one list of distinct traces
    (a replayed or cached run repeats its baseline's traces: they are stored once)."""
    trace = _trace(s)
    key = json.dumps(trace, ensure_ascii=False)
    index = traces.setdefault(key, len(traces)) if trace else None
    return {
        "col": col,
        "rep": s.repeat,
        "verdict": s.outcome,
        "vc": badge_class(s.outcome),
        "answer": s.answer,
        "judge": s.judge or NO_VALUE,
        "jr": s.judge_reasoning,
        "jerr": s.judge_error,  # why an answer has no verdict (unjudged)
        "reason": s.reason,
        "error": s.error,
        "pages": ", ".join(map(str, s.pages_fetched)) or NO_VALUE,
        "hit": s.evidence_hit,
        "sources": _sources(s),
        "fig": [s.tokens, s.llm_calls, s.iterations, s.tool_calls, round(s.latency_s, 2)],
        # the judge's calls among llm_calls, said beside "retriever tokens" (extractive, which calls no
        # model, read "0 retriever tokens, 3 LLM calls": its judge's three attempts)
        "jc": None if s.retriever_llm_calls is None else s.llm_calls - s.retriever_llm_calls,
        "trace": index,
    }


class QuestionRow(BaseModel):
    question_id: str
    question: str
    doc: str
    question_type: str
    cells: list[list[str]]  # per column, the verdicts of its repeats
    disagree: bool
    flip: bool
    error: bool


def question_rows(runs: Sequence[Run], flipped: set[str]) -> tuple[list[str], list[QuestionRow], dict]:
    """The columns (``"A agent"``), one row per question and the compressed-to-be detail data."""
    letters = letters_of(runs)
    several = len(runs) > 1
    columns: list[tuple[str, str]] = []
    for run in runs:
        for r in dict.fromkeys(s.retriever for s in sorted(run.samples, key=lambda s: s.retriever)):
            columns.append((run.run_id, r))
    col_index = {c: i for i, c in enumerate(columns)}
    labels = [f"{letters[run_id]} {r}" if several else r for run_id, r in columns]
    by_q: dict[str, list[tuple[int, Sample]]] = {}
    for run in runs:
        for s in run.samples:
            by_q.setdefault(s.question_id, []).append((col_index[(run.run_id, s.retriever)], s))
    rows: list[QuestionRow] = []
    data: dict[str, Any] = {"columns": labels, "questions": {}}
    traces: dict[str, int] = {}
    for qid in sorted(by_q):
        items = sorted(by_q[qid], key=lambda t: (t[0], t[1].repeat))
        first = items[0][1]
        cells: list[list[str]] = [[] for _ in columns]
        for col, s in items:
            cells[col].append(s.outcome)
        correct = {s.verdict == "correct" for _, s in items}
        rows.append(
            QuestionRow(
                question_id=qid,
                question=first.question,
                doc=first.doc_id or NO_VALUE,
                question_type=first.question_type or NO_VALUE,
                cells=cells,
                disagree=len(correct) > 1,
                flip=qid in flipped,
                error=any(
                    s.status == "error" or s.verdict is None or badge_class(s.outcome) == "unusable"
                    for _, s in items
                ),
            )
        )
        data["questions"][qid] = {
            "question": first.question,
            "gold": first.gold_answer,
            "doc": f"{first.doc_id or NO_VALUE} ({first.doc_type or NO_VALUE})",
            "pages": ", ".join(map(str, first.evidence_pages)),
            "samples": [_sample_data(s, col, traces) for col, s in items],
        }
    data["traces"] = [json.loads(t) for t in traces]  # in index order (dicts keep insertion order)
    return labels, rows, data


def _badges(verdicts: list[str]) -> str:
    if not verdicts:
        return '<span class="v v-none" title="not run">·</span>'
    return "".join(
        f'<span class="v v-{_e(badge_class(v))}" title="{_e(badge_title(v))}">'
        f"{VERDICT_MARK[badge_class(v)]}</span>"
        for v in verdicts
    )


def _questions(labels: list[str], rows: list[QuestionRow], several: bool, ids: dict[str, str]) -> str:
    # "errors": a sample in error, a fail on the model's unusable reply, or an answer without a verdict (its
    # judge call failed): the rows to look at
    filters = [
        ("all", "all"), ("dis", "disagreements"), ("flip", "flips"),
        ("err", "errors, unusable replies or no verdict"),
    ]
    if not several:
        filters = [f for f in filters if f[0] != "flip"]
    counts = {
        "all": len(rows),
        "dis": sum(r.disagree for r in rows),
        "flip": sum(r.flip for r in rows),
        "err": sum(r.error for r in rows),
    }
    buttons = "".join(
        f'<button type="button" data-f="{k}" class="{"on" if k == "all" else ""}">'
        f"{_e(name)} ({counts[k]})</button>"
        for k, name in filters
    )
    controls = (
        f'<div class="controls">{buttons}<input id="q-search" type="search" '
        f'placeholder="search question, id, document, type" aria-label="search questions">'
        f'<span id="q-count" class="muted"></span></div>'
    )
    # the verdict columns share 60% at most (12% each): the question keeps 28% or more however many
    # runs and retrievers there are (review 20: with 15 columns it had no width set and got 1/17, a word
    # per line)
    share = min(12.0, 60 / max(1, len(labels)))
    cols = (
        f'<colgroup><col style="width:{100 - 12 - share * len(labels):.2f}%">'
        '<col class="doc" style="width:12%">'
        + "".join(f'<col style="width:{share:.2f}%">' for _ in labels)
        + "</colgroup>"
    )
    # a column narrower than its label's words (under 8%: 8 or more columns) turns its header upright,
    # one line read bottom to top: across 15 columns "planner" was split as "plann / er"
    narrow = " narrow" if share < 8 else ""
    head = "<th>question (click a row for answers and traces)</th><th class='doc'>document / type</th>"
    head += "".join(f'<th class="cell">{_e(lab)}</th>' for lab in labels)
    body = []
    for r in rows:
        # a long question is cut in its row (opening the row shows it whole); the search still reads all
        shown = short_question(r.question, MAX_ROW_QUESTION)
        full = f' data-full="{_e(r.question)}"' if shown != r.question else ""
        body.append(
            f'<tr class="q" id="{ids[r.question_id]}" data-qid="{_e(r.question_id)}" '
            f'data-dis="{int(r.disagree)}" data-flip="{int(r.flip)}" data-err="{int(r.error)}"{full}'
            f'><td><span class="tw">▸</span>'
            f'<span class="qid">{_e(r.question_id)}</span> '
            # on a phone the document and type go under the question (their 12% column was ~27 px wide)
            f"{_e(shown)}<span class='qdoc muted'>{_e(r.doc).replace('_', '_<wbr>')} · "
            f"{_e(r.question_type)}</span></td>"
            f"<td class='doc'>{_e(r.doc)}<br><span class='muted'>{_e(r.question_type)}</span></td>"
            + "".join(f'<td class="cell">{_badges(c)}</td>' for c in r.cells)
            + "</tr>"
        )
    legend = " ".join(
        f'<span class="v v-{v}">{m}</span> {"unusable reply (its error kind)" if v == "unusable" else v}'
        for v, m in VERDICT_MARK.items()
    )
    if any(not c for r in rows for c in r.cells):  # a run that did not ask a question of a retriever
        legend += ' <span class="v v-none">·</span> not run'
    return (
        f"<p class='muted'>{legend}; one badge per repeat.</p>{controls}"
        f'<table class="questions{narrow}">{cols}<thead><tr>{head}</tr></thead>'
        f'<tbody>{"".join(body)}</tbody></table>'
    )


def _dropped(runs: Sequence[Run]) -> str:
    rows = [
        {"run": r.run_id, "question_id": d.question_id, "reason": d.reason} for r in runs for d in r.dropped
    ]
    if not rows:
        return "<p class='muted'>No question was dropped by validation.</p>"
    return _table(pd.DataFrame(rows), "dropped")


def pack(data: Any) -> str:
    """JSON, gzip-compressed, base64-encoded (the page unpacks it with DecompressionStream)."""
    raw = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return base64.b64encode(gzip.compress(raw, compresslevel=9, mtime=0)).decode("ascii")


def render_html(runs: Sequence[Run], title: str | None = None) -> str:
    """The report as one HTML document."""
    if not runs:
        raise ValueError("no runs to report")
    runs = named_apart(runs)
    title = title or TITLE_PREFIX + ", ".join(r.run_id for r in runs)
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    letters = letters_of(runs)
    several = len(runs) > 1
    ab = comparisons(runs) if several else []
    flipped = {
        f.question_id
        for item in ab
        if not isinstance(item, str)
        for g in item.mcnemar.groups
        for f in (*g.improved, *g.regressed)
    }
    labels, rows, data = question_rows(runs, flipped)
    n = sum(len(r.samples) for r in runs)
    ids = row_ids([r.question_id for r in rows])
    ab_section = f'<section id="ab"><h2>A vs B</h2>{_ab(ab, letters, ids)}</section>' if several else ""
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="{_e(GENERATOR)}">
<title>{_e(title)}</title><style>{CSS}</style></head>
<body>
<h1>{_e(title)}</h1>
<p class="muted">Generated {now}. Accuracy counts errors as not correct; intervals are 95% (Wilson's, or
over whole questions when they were repeated) unless said otherwise.</p>
<section id="runs"><h2>Runs</h2><div class="scroll">{_run_info(runs)}</div>{_warnings(runs)}</section>
<section id="summary"><h2>Summary</h2>{_summary(runs)}</section>
{ab_section}
<section id="charts"><h2>Charts</h2>{_figures(runs)}</section>
<section id="questions"><h2>Questions ({len(rows)} questions, {n} samples)</h2>
{_questions(labels, rows, several, ids)}</section>
<section id="dropped"><h2>Dropped questions</h2>{_dropped(runs)}</section>
<script type="application/octet-stream" id="report-data">{pack(data)}</script>
<script>{JS}</script>
</body></html>
"""


def write_html(runs: Sequence[Run], path: str | Path, title: str | None = None) -> Path:
    """Write the report to ``path`` whole (a temp file renamed over it, as ``bench report`` writes):
    a failure part-way leaves an earlier report as it was."""
    from pageindex.atomic import write_atomic

    path = Path(path)
    write_atomic(path, render_html(runs, title))
    return path
