"""The project's own demo dataset: three synthetic 10-K filings and questions about them,
written in FinanceBench format so the same loader reads it.

Gold answers and evidence pages come from the numbers the generator itself laid out, so they
are right by construction. Same seed -> byte-identical ``questions.jsonl`` and
``documents.jsonl`` and PDFs with the same content. ``hostile=True`` adds prompt-injection
pages (listed per filing in ``documents.jsonl`` as ``hostile_pages``, 1-based).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pymupdf

from bench.datasets.demo_filing import FilingLayout, write_filing
from bench.datasets.demo_financials import PROFILES, Financials, Profile, gross_margin, make_financials
from bench.datasets.financebench import DOCUMENTS_FILE, INFO_FILE, PDF_DIR, QUESTIONS_FILE, load_financebench
from bench.datasets.models import Dataset
from pageindex.atomic import write_atomic

DEMO_VERSION = 1  # bump when the generator's output changes, so cached copies are rebuilt
PDF_METADATA = {
    "producer": "pageindex-bench demo generator",
    "creator": "bench.datasets.demo",
    "creationDate": "D:20240101000000Z",
    "modDate": "D:20240101000000Z",
}

# One question: (type, reasoning, question text, answer, justification, evidence anchors)
QuestionSpec = tuple[str, str, str, str, str, list[str]]


def _m(value: int) -> str:
    return f"${value:,} million"


def _capex(p: Profile, f: Financials) -> QuestionSpec:
    y = f.years[0]
    return (
        "metrics-generated",
        "Information extraction",
        f"What is the FY{y} capital expenditure amount (in USD millions) for {p.short}? Give a response "
        "to the question by relying on the details shown in the cash flow statement.",
        _m(-f.cash["capex"][y]),
        "Line item 'Purchases of property, plant and equipment' in the statement of cash flows.",
        ["cash_flow"],
    )


def _operating_margin(p: Profile, f: Financials) -> QuestionSpec:
    y = f.years[0]
    margin = 100 * f.income["operating"][y] / f.income["revenue"][y]
    return (
        "metrics-generated",
        "Numerical reasoning",
        f"What is {p.short}'s FY{y} operating margin (operating income / net sales)? Round your answer "
        "to one decimal place and base it on the income statement.",
        f"{margin:.1f}%",
        f"Operating income {_m(f.income['operating'][y])} / net sales {_m(f.income['revenue'][y])}.",
        ["income"],
    )


def _asset_turnover(p: Profile, f: Financials) -> QuestionSpec:
    y = f.years[0]
    ppe = (f.balance["ppe"][y] + f.balance["ppe"][y - 1]) / 2
    ratio = f.income["revenue"][y] / ppe
    return (
        "metrics-generated",
        "Numerical reasoning",
        f"What is the FY{y} fixed asset turnover ratio for {p.short}? Fixed asset turnover ratio is "
        f"defined as: FY{y} net sales / (average PP&E, net between FY{y - 1} and FY{y}). Round your "
        "answer to two decimal places, using the income statement and the balance sheet.",
        f"{ratio:.2f}",
        f"Net sales {_m(f.income['revenue'][y])}; PP&E, net {_m(f.balance['ppe'][y])} and "
        f"{_m(f.balance['ppe'][y - 1])}.",
        ["income", "balance"],
    )


def _current_ratio(p: Profile, f: Financials) -> QuestionSpec:
    y = f.years[0]
    ca, cl = f.balance["current_assets"][y], f.balance["current_liabilities"][y]
    ratio = ca / cl
    verdict = "Yes" if round(ratio, 2) > 1 else "No"
    return (
        "domain-relevant",
        "Numerical reasoning",
        f"Is {p.short}'s current ratio above 1.0 at the end of FY{y}? Calculate it from the balance "
        "sheet and round to two decimal places.",
        f"{verdict}. The current ratio is {ratio:.2f} (total current assets {_m(ca)} / total current "
        f"liabilities {_m(cl)}).",
        "Total current assets and total current liabilities from the balance sheet.",
        ["balance"],
    )


def _margin_drivers(p: Profile, f: Financials) -> QuestionSpec:
    y = f.years[0]
    now, prev = gross_margin(f, y), gross_margin(f, y - 1)
    moved = "increased" if now >= prev else "decreased"
    return (
        "domain-relevant",
        "Information extraction",
        f"What drove the change in {p.short}'s gross margin in FY{y}?",
        f"Gross margin {moved} from {prev:.1f}% to {now:.1f}%, primarily due to {f.margin_drivers[0]} "
        f"and {f.margin_drivers[1]}.",
        "Stated in the Gross Margin discussion of MD&A.",
        ["gross_margin"],
    )


def _employees(p: Profile, f: Financials) -> QuestionSpec:
    y = f.years[0]
    return (
        "novel-generated",
        "",
        f"How many people did {p.short} employ at the end of FY{y}?",
        f"Approximately {f.employees:,} employees.",
        "Human Capital section of Item 1.",
        ["employees"],
    )


def _largest_segment(p: Profile, f: Financials) -> QuestionSpec:
    y = f.years[0]
    seg = max(p.segments, key=lambda s: f.segment_sales[s][y])
    return (
        "novel-generated",
        "",
        f"Which of {p.short}'s segments had the highest net sales in FY{y}, and how much were they?",
        f"{seg}, with net sales of {_m(f.segment_sales[seg][y])}.",
        "Net sales by reportable segment table in the notes.",
        ["segment_table"],
    )


def _debt_due(p: Profile, f: Financials) -> QuestionSpec:
    y = f.years[0]
    return (
        "novel-generated",
        "",
        f"How much of {p.short}'s debt is scheduled to be repaid in {y + 2}, according to the debt note?",
        _m(f.debt_maturities[str(y + 2)]),
        "Scheduled principal payments table in the Debt note.",
        ["debt_table"],
    )


def _rate_risk(p: Profile, f: Financials) -> QuestionSpec:
    return (
        "domain-relevant",
        "Information extraction",
        f"By how much would a 100 basis point rise in interest rates increase {p.short}'s annual "
        "interest expense?",
        f"About ${f.rate_sensitivity} million.",
        "Interest Rate Risk paragraph in Item 7A.",
        ["rate_risk"],
    )


QUESTION_MAKERS: list[Callable[[Profile, Financials], QuestionSpec]] = [
    _capex,
    _operating_margin,
    _asset_turnover,
    _current_ratio,
    _margin_drivers,
    _employees,
    _largest_segment,
    _debt_due,
    _rate_risk,
]
# Which makers each filing gets (6 each, 18 in all), so the three filings are not clones.
QUESTIONS_PER_FILING = [
    [0, 1, 3, 4, 5, 7],
    [0, 2, 3, 4, 6, 8],
    [1, 2, 4, 5, 6, 7],
]


def _question_rows(p: Profile, f: Financials, layout: FilingLayout, picks: list[int]) -> list[dict[str, Any]]:
    rows = []
    for n, index in enumerate(picks, start=1):
        qtype, reasoning, question, answer, justification, anchors = QUESTION_MAKERS[index](p, f)
        evidence = []
        for anchor in anchors:
            page = layout.anchors[anchor]
            full = layout.doc[page].get_text("text")
            evidence.append(
                {
                    "evidence_text": layout.texts.get(anchor, full),
                    "doc_name": p.doc_id,
                    "evidence_page_num": page,  # zero-based, as upstream
                    "evidence_text_full_page": full,
                }
            )
        rows.append(
            {
                "financebench_id": f"demo_{p.ticker.lower()}_{n:02d}",
                "company": p.short,
                "doc_name": p.doc_id,
                "question_type": qtype,
                "question_reasoning": reasoning or None,
                "domain_question_num": None,
                "question": question,
                "answer": answer,
                "justification": justification,
                "dataset_subset_label": "DEMO",
                "evidence": evidence,
            }
        )
    return rows


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    write_atomic(path, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))


def save_pdf(doc: pymupdf.Document, path: Path) -> None:
    """Save with fixed metadata and no fresh file id, so the bytes depend only on the content; written
    whole (temp file + rename), so a run reading the demo dataset while another process regenerates it,
    or after a regeneration that failed, never meets a half-written PDF."""
    doc.set_metadata(PDF_METADATA)
    write_atomic(path, doc.tobytes(garbage=3, deflate=True, no_new_id=True))


def write_demo_dataset(out_dir: str | Path, *, hostile: bool = False, seed: int = 0) -> Dataset:
    """Write the demo dataset (3 filings, 18 questions) into ``out_dir`` and load it back."""
    root = Path(out_dir)
    (root / PDF_DIR).mkdir(parents=True, exist_ok=True)
    questions: list[dict[str, Any]] = []
    documents: list[dict[str, Any]] = []
    for profile, picks in zip(PROFILES, QUESTIONS_PER_FILING, strict=True):
        fin = make_financials(profile, seed)
        layout = write_filing(profile, fin, hostile=hostile)
        questions.extend(_question_rows(profile, fin, layout, picks))
        row: dict[str, Any] = {
            "doc_name": profile.doc_id,
            "company": profile.short,
            "gics_sector": profile.sector,
            "doc_type": "10k",
            "doc_period": profile.fiscal_year,
            "doc_link": "",
            "synthetic": True,
        }
        if hostile:
            row["hostile_pages"] = [page + 1 for page in layout.hostile_pages]
        documents.append(row)
        save_pdf(layout.doc, root / PDF_DIR / f"{profile.doc_id}.pdf")
        layout.doc.close()
    _write_jsonl(root / QUESTIONS_FILE, questions)
    _write_jsonl(root / DOCUMENTS_FILE, documents)
    name = "demo-hostile" if hostile else "demo"
    info = {
        "name": name,
        "generator": "bench.datasets.demo",
        "version": DEMO_VERSION,
        "seed": seed,
        "hostile": hostile,
    }
    write_atomic(root / INFO_FILE, json.dumps(info, indent=2) + "\n")  # last: it marks the files complete
    return load_financebench(root)


def ensure_demo_dataset(out_dir: str | Path, *, hostile: bool = False, seed: int = 0) -> Dataset:
    """Load the demo dataset from ``out_dir``, (re)writing it first when it is missing or was
    written by another generator version, seed or mode."""
    root = Path(out_dir)
    try:
        info = json.loads((root / INFO_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        info = {}
    wanted = {"generator": "bench.datasets.demo", "version": DEMO_VERSION, "seed": seed, "hostile": hostile}
    current = all(info.get(key) == value for key, value in wanted.items())
    pdfs_present = all((root / PDF_DIR / f"{p.doc_id}.pdf").is_file() for p in PROFILES)
    if not (current and pdfs_present and (root / QUESTIONS_FILE).is_file()):
        return write_demo_dataset(root, hostile=hostile, seed=seed)
    return load_financebench(root)
