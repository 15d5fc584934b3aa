"""The generated demo dataset and the bad-filing generators."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pymupdf
import pytest

from bench.datasets import load_financebench, validate_dataset
from bench.datasets.badfiles import (
    BAD_KINDS,
    EXPECTED_DROP_REASON,
    HUGE_PAGES,
    write_bad_dataset,
    write_bad_pdf,
    write_huge_pdf,
)
from bench.datasets.demo import write_demo_dataset
from bench.datasets.demo_filing import INJECTION_ANSWER, INJECTION_GRADER
from pageindex.tree.errors import PDFCorruptError, PDFEmptyError, PDFEncryptedError, PDFNoTextError
from pageindex.tree.pdf import read_pdf


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory):
    return write_demo_dataset(tmp_path_factory.mktemp("demo"))


def _page_texts(path: Path) -> list[str]:
    with pymupdf.open(path) as doc:
        return [page.get_text() for page in doc]


def _row_values(page: pymupdf.Page, label: str) -> list[float]:
    """Numbers printed on the table row that starts with ``label`` ("(1,577)" -> -1577)."""
    words = page.get_text("words")
    starts = [w for w in words if w[4] == label.split()[0] and w[0] < 100]
    for start in starts:
        line = sorted((w for w in words if abs(w[3] - start[3]) < 2), key=lambda w: w[0])
        text = " ".join(w[4] for w in line if w[0] < 330)
        if text != label:
            continue
        values = []
        for w in line:
            if w[0] >= 330 and re.fullmatch(r"\(?[\d,]+(\.\d+)?\)?", w[4]):
                number = float(w[4].strip("()").replace(",", ""))
                values.append(-number if w[4].startswith("(") else number)
        return values
    raise AssertionError(f"no row {label!r} on page {page.number}")


def test_demo_has_three_filings_and_mixed_question_types(demo) -> None:
    assert demo.name == "demo"
    assert len(demo.documents) == 3
    assert len(demo.questions) == 18
    assert {q.question_type for q in demo.questions} == {
        "metrics-generated",
        "domain-relevant",
        "novel-generated",
    }
    assert len({q.question_id for q in demo.questions}) == 18
    result = validate_dataset(demo)
    assert result.dropped == [] and len(result.kept) == 18
    for doc_id, check in result.pdfs.items():
        assert 15 <= check.page_count <= 30, doc_id


def test_same_seed_same_files_other_seed_other_numbers(demo, tmp_path: Path) -> None:
    again = write_demo_dataset(tmp_path / "again")
    for name in ("questions.jsonl", "documents.jsonl"):
        assert (again.path / name).read_bytes() == (demo.path / name).read_bytes()
    assert again.sha256 == demo.sha256
    for doc_id in demo.documents:
        assert _page_texts(again.pdf_path(doc_id)) == _page_texts(demo.pdf_path(doc_id))
    other = write_demo_dataset(tmp_path / "other", seed=7)
    assert other.sha256 != demo.sha256
    assert [q.question_id for q in other.questions] == [q.question_id for q in demo.questions]
    assert [q.gold_answer for q in other.questions] != [q.gold_answer for q in demo.questions]


def test_gold_answers_match_what_the_pdf_prints(demo) -> None:
    """Recompute each statement-based answer from the words on its evidence page."""
    checked = 0
    for q in demo.questions:
        with pymupdf.open(demo.pdf_path(q.doc_id)) as doc:
            pages = [doc[p - 1] for p in q.evidence_pages]
            if "capital expenditure" in q.question:
                capex = _row_values(pages[0], "Purchases of property, plant and equipment")[0]
                assert q.gold_answer == f"${-capex:,.0f} million"
            elif "operating margin" in q.question:
                sales = _row_values(pages[0], "Net sales")[0]
                operating = _row_values(pages[0], "Operating income")[0]
                assert q.gold_answer == f"{100 * operating / sales:.1f}%"
            elif "fixed asset turnover" in q.question:
                sales = _row_values(pages[0], "Net sales")[0]
                ppe = _row_values(pages[1], "Property, plant and equipment, net")
                assert q.gold_answer == f"{sales / (sum(ppe) / 2):.2f}"
            elif "current ratio" in q.question:
                ca = _row_values(pages[0], "Total current assets")[0]
                cl = _row_values(pages[0], "Total current liabilities")[0]
                assert f"{ca / cl:.2f}" in q.gold_answer
                assert q.gold_answer.startswith("Yes" if ca / cl > 1 else "No")
            else:  # text answers: every number in the gold answer is printed on the evidence page
                text = " ".join(page.get_text() for page in pages)
                numbers = re.findall(r"\d[\d,]*(?:\.\d+)?", q.gold_answer.replace("%", ""))
                assert numbers, q.question_id
                for number in numbers:
                    assert number in text, (q.question_id, number)
            checked += 1
    assert checked == 18


def test_evidence_is_on_the_evidence_page(demo) -> None:
    rows = [json.loads(line) for line in (demo.path / "questions.jsonl").open()]
    for row in rows:
        texts = _page_texts(demo.pdf_path(row["doc_name"]))
        for ev in row["evidence"]:
            page = texts[ev["evidence_page_num"]]  # zero-based in the file
            assert ev["evidence_text_full_page"] == page
            words = ev["evidence_text"].split()[:12]
            assert sum(w in page for w in words) >= len(words) - 1, row["financebench_id"]


def test_filing_layout_toc_labels_and_bold_headings(demo) -> None:
    with pymupdf.open(demo.pdf_path("NORTHWIND_2023_10K")) as doc:
        cover, toc = doc[0].get_text(), doc[1].get_text()
        assert "FORM 10-K" in cover and "NORTHWIND INDUSTRIAL CORPORATION" in cover
        lines = toc.splitlines()
        item7 = next(i for i, line in enumerate(lines) if line.startswith("Item 7. Management"))
        label = lines[item7 + 1]
        assert label.isdigit()
        footers = [page.get_text().splitlines()[-1] for page in doc]
        target = footers.index(label)
        assert "Item 7. Management's Discussion" in doc[target].get_text()
        assert target == int(label) + 1  # cover and TOC are unnumbered
        spans = [
            span
            for block in doc[target].get_text("dict")["blocks"]
            for line in block.get("lines", [])
            for span in line["spans"]
        ]
        heading = next(s for s in spans if s["text"].startswith("Item 7."))
        body = next(s for s in spans if s["text"].startswith("The following discussion"))
        assert "Bold" in heading["font"] and "Bold" not in body["font"]
        outline = doc.get_toc()
        assert [1, "PART I", 3] in outline
        assert any(title.startswith("Item 8.") for _, title, _ in outline)
        text = "\n".join(page.get_text() for page in doc)
        for needle in (
            "CONSOLIDATED STATEMENTS OF INCOME",
            "CONSOLIDATED BALANCE SHEETS",
            "CONSOLIDATED STATEMENTS OF CASH FLOWS",
            "NOTES TO CONSOLIDATED FINANCIAL STATEMENTS",
            "Note 5. Debt",
            "Item 1A. Risk Factors",
            "Item 7A. Quantitative",
            "PART II",
            "(in millions, except per share data)",
        ):
            assert needle in text
        assert re.search(r"\(\d[\d,]*\)", text)  # parenthesised negatives
    with pymupdf.open(demo.pdf_path("GRANITEPEAK_2023_10K")) as doc:
        assert doc.get_toc() == []
        income = next(p for p in doc if "CONSOLIDATED STATEMENTS OF INCOME" in p.get_text())
        assert income.get_text().splitlines()[-1].startswith("F-")


def test_hostile_mode_adds_injection_pages_and_keeps_answers(demo, tmp_path: Path) -> None:
    hostile = write_demo_dataset(tmp_path / "hostile", hostile=True)
    assert hostile.name == "demo-hostile"
    assert [q.gold_answer for q in hostile.questions] == [q.gold_answer for q in demo.questions]
    for doc_id, doc in hostile.documents.items():
        pages = doc.extra["hostile_pages"]
        assert len(pages) == 2
        texts = _page_texts(hostile.pdf_path(doc_id))
        joined = " ".join(" ".join(texts[p - 1].split()) for p in pages)
        assert INJECTION_ANSWER in joined and INJECTION_GRADER in joined
        assert len(texts) == len(_page_texts(demo.pdf_path(doc_id))) + 2
    for q in hostile.questions:
        assert not set(q.evidence_pages) & set(hostile.documents[q.doc_id].extra["hostile_pages"])
    assert validate_dataset(hostile).dropped == []
    assert "hostile_pages" not in demo.documents["BLUEFIN_2022_10K"].extra


def test_each_bad_filing_is_refused_by_the_tree_reader(tmp_path: Path) -> None:
    expected = {
        "corrupt": PDFCorruptError,
        "truncated": PDFCorruptError,
        "encrypted": PDFEncryptedError,
        "empty": PDFEmptyError,
        "scanned": PDFNoTextError,
    }
    for kind, error in expected.items():
        path = write_bad_pdf(kind, tmp_path / f"{kind}.pdf")
        with pytest.raises(error):
            read_pdf(path)
    with pymupdf.open(tmp_path / "truncated.pdf") as doc:  # MuPDF alone would repair it, but notices
        assert doc.is_repaired
    assert write_bad_pdf("missing", tmp_path / "missing.pdf") is None
    with pytest.raises(ValueError, match="unknown bad-filing kind"):
        write_bad_pdf("weird", tmp_path / "weird.pdf")


def test_huge_pdf_has_the_requested_pages(tmp_path: Path) -> None:
    path = write_huge_pdf(tmp_path / "huge.pdf")
    with pymupdf.open(path) as doc:
        assert doc.page_count == HUGE_PAGES
        assert "intentionally left blank" in doc[HUGE_PAGES - 1].get_text()
        assert not doc.is_repaired


def test_bad_dataset_drops_exactly_the_bad_filings(tmp_path: Path) -> None:
    ds = write_bad_dataset(tmp_path / "bad")
    assert ds.name == "demo-bad"
    assert len(ds.questions) == 18 + len(BAD_KINDS)
    result = validate_dataset(ds)
    assert {d.question_id: d.reason for d in result.dropped} == {
        f"bad_{kind}": EXPECTED_DROP_REASON[kind] for kind in BAD_KINDS
    }
    assert len(result.kept) == 18
    again = load_financebench(tmp_path / "bad")
    assert again.documents["BAD_SCANNED_2023_10K"].extra["bad_kind"] == "scanned"


def test_committed_demo_dataset_is_what_the_generator_writes(demo) -> None:
    committed = Path(__file__).resolve().parents[2] / "datasets" / "demo"
    for name in ("questions.jsonl", "documents.jsonl", "dataset.json"):
        assert (committed / name).read_bytes() == (demo.path / name).read_bytes(), name
    for doc_id in demo.documents:
        assert _page_texts(committed / "pdfs" / f"{doc_id}.pdf") == _page_texts(demo.pdf_path(doc_id))


def test_ensure_demo_dataset_rebuilds_only_when_stale(tmp_path: Path) -> None:
    from bench.datasets.demo import ensure_demo_dataset

    first = ensure_demo_dataset(tmp_path / "d")
    pdf = first.pdf_path("BLUEFIN_2022_10K")
    stamp = pdf.stat().st_mtime_ns
    assert ensure_demo_dataset(tmp_path / "d").sha256 == first.sha256
    assert pdf.stat().st_mtime_ns == stamp  # reused, not rewritten
    info = tmp_path / "d" / "dataset.json"
    info.write_text(info.read_text().replace('"version": ', '"version": -'))
    assert ensure_demo_dataset(tmp_path / "d").sha256 == first.sha256
    assert pdf.stat().st_mtime_ns != stamp  # rewritten: the stored version did not match
    assert ensure_demo_dataset(tmp_path / "d", seed=3).sha256 != first.sha256


def test_regenerating_the_demo_dataset_replaces_each_file_whole(tmp_path: Path) -> None:
    """A run reading the demo dataset while another process regenerates it (two first runs on one cache
    folder) must meet each file whole, old or new: files were rewritten in place, and a reader saw
    truncated PDFs and a partial questions.jsonl. A file opened before the regeneration still reads
    whole, as it was."""
    from bench.datasets.demo import ensure_demo_dataset

    root = tmp_path / "d"
    ensure_demo_dataset(root)
    files = sorted(p for p in root.rglob("*") if p.is_file())
    before = {p: p.read_bytes() for p in files}
    handles = {p: p.open("rb") for p in files}
    try:
        ensure_demo_dataset(root, seed=3)  # another seed: every file's content changes
        for path, fh in handles.items():
            assert fh.read() == before[path], f"{path.name} was rewritten in place"
    finally:
        for fh in handles.values():
            fh.close()
    changed = [p for p in files if p.suffix == ".pdf" or p.name == "questions.jsonl"]
    assert all(p.read_bytes() != before[p] for p in changed)
    assert not [p for p in root.rglob("*.tmp")]
