"""Loader and validation: the real FinanceBench sample, and small datasets with planted problems."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bench.datasets import DatasetError, check_pdf, dataset_hash, load_financebench, validate_dataset
from bench.datasets.badfiles import write_huge_pdf


def test_financebench_loads_all_questions_with_one_based_pages(fb_dir: Path) -> None:
    ds = load_financebench(fb_dir)
    assert ds.name == "financebench"
    assert len(ds.questions) == 100
    assert ds.malformed == []
    assert len(ds.documents) == 55
    by_id = {q.question_id: q for q in ds.questions}
    capex = by_id["financebench_id_03029"]
    assert capex.doc_id == "3M_2018_10K"
    assert capex.doc_type == "10k"
    assert capex.gold_answer == "$1577.00"
    assert capex.question_type == "metrics-generated"
    assert capex.evidence_pages == [60]  # upstream evidence_page_num 59, zero-based
    assert "Purchases of property, plant and equipment" in capex.evidence_texts[0]
    assert capex.extra["question_reasoning"] == "Information extraction"
    assert ds.pdf_path("3M_2018_10K") == fb_dir / "pdfs" / "3M_2018_10K.pdf"
    types = {q.question_type for q in ds.questions}
    assert types == {"metrics-generated", "domain-relevant", "novel-generated"}


def test_financebench_evidence_pages_hold_the_evidence_text(fb_dir: Path) -> None:
    """The zero-to-one-based conversion is right: the 1-based page's text is the upstream full page."""
    import pymupdf

    ds = load_financebench(fb_dir)
    raw = [json.loads(line) for line in (fb_dir / "questions.jsonl").open()]
    rows = {r["financebench_id"]: r for r in raw}
    checked = 0
    for q in ds.questions[:6]:
        with pymupdf.open(ds.pdf_path(q.doc_id)) as doc:
            for ev in rows[q.question_id]["evidence"]:
                page_text = doc[ev["evidence_page_num"]].get_text()
                words = [w for w in ev["evidence_text_full_page"].split() if len(w) > 6][:15]
                hits = sum(w in page_text for w in words)
                assert hits >= len(words) * 0.6, (q.question_id, ev["evidence_page_num"])
                checked += 1
    assert checked >= 6


def test_financebench_validation_keeps_all_100(fb_dir: Path) -> None:
    ds = load_financebench(fb_dir)
    result = validate_dataset(ds)
    assert result.dropped == []
    assert len(result.kept) == 100
    assert len(result.pdfs) == 55
    assert all(check.ok and check.page_count > 0 for check in result.pdfs.values())
    assert result.pdfs["3M_2018_10K"].page_count >= 60


def test_dataset_hash_tracks_question_and_document_files(tmp_path: Path, fb_dir: Path) -> None:
    for name in ("questions.jsonl", "documents.jsonl"):
        shutil.copy(fb_dir / name, tmp_path / name)
    first = dataset_hash(tmp_path)
    assert first == load_financebench(fb_dir).sha256
    with (tmp_path / "documents.jsonl").open("a") as fh:
        fh.write("\n")
    assert dataset_hash(tmp_path) != first


def _row(qid: str, question: str, doc: str, pages: list[int], answer: str = "1") -> dict:
    return {
        "financebench_id": qid,
        "company": "Acme",
        "doc_name": doc,
        "question_type": "metrics-generated",
        "question": question,
        "answer": answer,
        "evidence": [{"evidence_text": "x", "doc_name": doc, "evidence_page_num": p} for p in pages],
    }


@pytest.fixture()
def planted(tmp_path: Path, fb_dir: Path) -> Path:
    """A dataset over two real filings (links, not copies) with one planted problem per kind."""
    root = tmp_path / "planted"
    (root / "pdfs").mkdir(parents=True)
    for doc in ("3M_2018_10K", "AMCOR_2023Q2_10Q"):
        (root / "pdfs" / f"{doc}.pdf").symlink_to(fb_dir / "pdfs" / f"{doc}.pdf")
    (root / "pdfs" / "BROKEN_10K.pdf").write_bytes(b"<html>404 Not Found</html>")
    write_huge_pdf(root / "pdfs" / "HUGE_10K.pdf", pages=1200)
    q = "What is the FY2018 capital expenditure amount (in USD millions) for 3M?"
    q17 = q.replace("FY2018", "FY2017")
    exact = "  what is the FY2018 capital expenditure amount (in USD millions) for 3M?"
    near = "What is the FY2018 capital expenditure amount (in USD million) of 3M?"
    rows = [
        _row("ok_1", q, "3M_2018_10K", [59]),
        _row("ok_2", q17, "3M_2018_10K", [59]),
        _row("exact_dup", exact, "3M_2018_10K", [59]),
        _row("near_dup", near, "3M_2018_10K", [59]),
        _row("other_doc_same_text", q, "AMCOR_2023Q2_10Q", [3]),
        _row("out_of_range", "How many pages does the filing have?", "3M_2018_10K", [59, 5000]),
        _row("missing_pdf", "Net sales?", "NOT_THERE_10K", [1]),
        _row("unreadable", "Gross margin?", "BROKEN_10K", [1]),
        _row("too_big", "Cash?", "HUGE_10K", [1]),
        _row("ok_1", "A different question reusing an id?", "3M_2018_10K", [1]),
        {
            "financebench_id": "no_answer",
            "doc_name": "3M_2018_10K",
            "question": "Where is the answer?",
            "evidence": [],
        },
        _row("bad_page", "Negative page?", "3M_2018_10K", [-1]),
    ]
    lines = [json.dumps(r) for r in rows]
    lines.insert(3, "{not json")
    lines.insert(5, "")
    (root / "questions.jsonl").write_text("\n".join(lines) + "\n")
    (root / "documents.jsonl").write_text(
        json.dumps({"doc_name": "3M_2018_10K", "company": "3M", "doc_type": "10k", "doc_period": 2018})
        + "\n"
        + "{broken\n"
    )
    return root


def test_planted_problems_are_dropped_with_reasons(planted: Path) -> None:
    ds = load_financebench(planted)
    assert ds.name == "planted"
    assert ds.documents["3M_2018_10K"].period == "2018"
    malformed = {d.question_id: d.detail for d in ds.malformed}
    assert set(malformed) == {"line-4", "no_answer", "bad_page"}
    assert "not valid JSON" in malformed["line-4"]
    assert "'answer'" in malformed["no_answer"]
    assert "zero-based" in malformed["bad_page"]

    result = validate_dataset(ds)
    reasons = {d.question_id: d.reason for d in result.dropped}
    assert reasons == {
        "line-4": "malformed",
        "no_answer": "malformed",
        "bad_page": "malformed",
        "exact_dup": "duplicate",
        "near_dup": "near_duplicate",
        "out_of_range": "evidence_page_out_of_range",
        "missing_pdf": "pdf_missing",
        "unreadable": "pdf_unreadable",
        "too_big": "pdf_too_large",
    } | {"ok_1": "duplicate_id"}
    # the second "ok_1" is the one dropped; the first stays
    assert [q.question_id for q in result.kept] == ["ok_1", "ok_2", "other_doc_same_text"]
    assert result.kept[0].question.startswith("What is the FY2018")
    details = {d.question_id: d.detail for d in result.dropped}
    # the row's own number, zero-based, and what it means: it said "evidence page(s) [5001] (1-based)"
    # of a row that wrote 5000, and a row written 1-based (3 for the third of 3 pages) could not tell why
    assert details["out_of_range"] == (
        "evidence_page_num 5000 is page 5001, beyond the 160 pages of 3M_2018_10K.pdf "
        "(evidence_page_num counts from 0: 0 to 159 here)"
    )
    assert "ok_1" in details["exact_dup"] and "ok_1" in details["near_dup"]
    assert "NOT_THERE_10K.pdf" in details["missing_pdf"]
    assert "1200 pages" in details["too_big"]
    assert result.counts()["malformed"] == 3


def test_near_duplicate_threshold_is_configurable(planted: Path) -> None:
    ds = load_financebench(planted)
    strict = validate_dataset(ds, similarity_threshold=0.999)
    assert "near_dup" in {q.question_id for q in strict.kept}
    loose = validate_dataset(ds, similarity_threshold=0.5, max_pages=None)
    dropped = {d.question_id: d.reason for d in loose.dropped}
    assert dropped["near_dup"] == "near_duplicate"
    assert "too_big" not in dropped  # no page limit
    # FY2017 vs FY2018: different numbers are never near-duplicates, even at a low threshold
    assert "ok_2" in {q.question_id for q in loose.kept}


def test_missing_directory_or_questions_file_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="no such dataset directory"):
        load_financebench(tmp_path / "nope")
    with pytest.raises(DatasetError, match="no questions.jsonl"):
        load_financebench(tmp_path)


def test_check_pdf_on_a_real_filing(fb_pdf) -> None:
    check = check_pdf(fb_pdf("3M_2018_10K"))
    assert check.ok and check.reason is None and check.page_count > 60
    assert check_pdf(fb_pdf("3M_2018_10K"), max_pages=10).reason == "pdf_too_large"


def test_a_row_that_is_not_utf8_is_dropped_not_the_dataset(planted: Path) -> None:
    """One row with bytes that are not UTF-8 (a bad export) is malformed like a row that is not
    JSON; the others load. A byte-order mark before the first row is read as text, not an error."""
    path = planted / "questions.jsonl"
    good = path.read_bytes()
    before = len(load_financebench(planted).questions)
    path.write_bytes(b"\xef\xbb\xbf" + good + b'{"financebench_id": "x\xff\xfe", "question": "?"}\n')
    ds = load_financebench(planted)
    malformed = {d.question_id: d.detail for d in ds.malformed}
    bad_line = good.count(b"\n") + 1
    assert malformed[f"line-{bad_line}"] == f"questions.jsonl line {bad_line} is not UTF-8 text (byte 23)"
    assert set(malformed) == {"line-4", "no_answer", "bad_page", f"line-{bad_line}"}
    assert len(ds.questions) == before > 0


def test_a_pdf_name_the_file_system_refuses_is_that_question_s_drop_not_a_crash(tmp_path: Path) -> None:
    """A doc_name longer than a file name may be (ENAMETOOLONG) stopped `datasets validate` and `bench
    run` with "internal error: OSError: File name too long"; an empty file was "no %PDF header"."""
    root = tmp_path / "ds"
    (root / "pdfs").mkdir(parents=True)
    (root / "pdfs" / "EMPTY.pdf").write_bytes(b"")
    long_name = "L" * 300
    rows = [_row("long", "Net sales?", long_name, [0]), _row("empty", "Cash?", "EMPTY", [0])]
    (root / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = validate_dataset(load_financebench(root))
    dropped = {d.question_id: d for d in result.dropped}
    assert dropped["long"].reason == "pdf_unreadable"
    assert "cannot be opened (File name too long)" in dropped["long"].detail
    assert dropped["empty"].reason == "pdf_unreadable"
    assert dropped["empty"].detail.endswith("EMPTY.pdf: not a PDF file (empty file, 0 bytes)")


def test_a_doc_name_with_folders_is_malformed_even_when_the_file_is_there(tmp_path: Path, fb_pdf) -> None:
    """``pdfs/{doc_name}.pdf`` is one file of pdfs/: ``../../other/pdfs/X`` was kept and read a PDF
    outside the dataset (and fetch wrote there)."""
    (tmp_path / "other" / "pdfs").mkdir(parents=True)
    (tmp_path / "other" / "pdfs" / "X.pdf").symlink_to(fb_pdf("AMCOR_2023Q2_10Q"))
    root = tmp_path / "ds"
    (root / "pdfs").mkdir(parents=True)
    rows = [_row("escape", "Net sales?", "../../other/pdfs/X", [0])]
    (root / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (root / "documents.jsonl").write_text(json.dumps({"doc_name": "../../other/pdfs/X"}) + "\n")
    ds = load_financebench(root)
    assert ds.questions == [] and ds.documents == {}
    [bad] = ds.malformed
    assert bad.question_id == "escape"
    assert bad.detail == (
        "questions.jsonl line 1: doc_name '../../other/pdfs/X' is not a file name: "
        "the filing must be pdfs/<doc_name>.pdf, with no folder"
    )


def test_a_gold_answer_of_nan_is_malformed_and_every_drop_names_its_file(tmp_path: Path) -> None:
    """JSON's NaN (Python's json reads it) became the gold answer "nan", kept; a line that is not JSON
    said "line 2 ..." where a row's own problem says "questions.jsonl line 3: ..."."""
    root = tmp_path / "ds"
    root.mkdir()
    rows = [json.dumps(_row("nan", "Net sales?", "X", [0])).replace('"answer": "1"', '"answer": NaN')]
    rows += ["{not json", json.dumps(_row("inf", "Cash?", "X", [0], answer="1")).replace('"1"', "Infinity")]
    (root / "questions.jsonl").write_text("\n".join(rows) + "\n")
    ds = load_financebench(root)
    assert ds.questions == []
    assert [(d.question_id, d.detail) for d in ds.malformed] == [
        ("nan", "questions.jsonl line 1: field 'answer' must be text, got nan"),
        ("line-2", "questions.jsonl line 2 is not valid JSON (Expecting property name enclosed in double"
         " quotes)"),
        ("inf", "questions.jsonl line 3: field 'answer' must be text, got inf"),
    ]


def test_documents_rows_that_are_ignored_are_said_not_silent(tmp_path: Path, fb_pdf) -> None:
    """A documents.jsonl row that could not be read, or repeated a doc_name, was skipped without a word:
    its filing's questions lost their doc type (a summary by doc type filed them under none)."""
    from typer.testing import CliRunner

    from pageindex.cli import app

    root = tmp_path / "ds"
    (root / "pdfs").mkdir(parents=True)
    for doc in ("A", "B", "C"):
        (root / "pdfs" / f"{doc}.pdf").symlink_to(fb_pdf("AMCOR_2023Q2_10Q"))
    rows = [_row("q1", "Net sales?", "A", [0]), _row("q2", "Cash?", "B", [0]), _row("q3", "Debt?", "C", [0])]
    (root / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    docs = [{"doc_name": "A", "doc_type": "10k"}, {"doc_name": "B", "doc_type": ["10q"]}, "{broken",
            {"doc_name": "A", "doc_type": "8k"}]  # fmt: skip
    lines = [d if isinstance(d, str) else json.dumps(d) for d in docs]
    (root / "documents.jsonl").write_text("\n".join(lines) + "\n")
    ds = load_financebench(root)
    assert ds.documents["A"].doc_type == "10k" and len(ds.questions) == 3
    assert ds.problems == [
        "documents.jsonl line 2: field 'doc_type' must be text, got list; the row is ignored",
        "documents.jsonl line 3 is not valid JSON (Expecting property name enclosed in double quotes); "
        "the row is ignored",
        "documents.jsonl line 4: doc_name 'A' repeats line 1; the first row is kept",
        "documents.jsonl does not list 2 of the questions' filings (B, C): their doc type, company and "
        "period are unknown",
    ]
    res = CliRunner().invoke(app, ["bench", "datasets", "validate", str(root)], terminal_width=200)
    assert res.exit_code == 0, res.output
    assert "warning: documents.jsonl line 4: doc_name 'A' repeats line 1; the first row is kept" in res.output
    (root / "documents.jsonl").unlink()
    assert load_financebench(root).problems == [
        "no documents.jsonl: the questions' filings have no doc type, company or period"
    ]


def test_a_dangling_link_in_pdfs_that_no_question_uses_does_not_stop_a_run(tmp_path: Path, fb_pdf) -> None:
    """The dataset content hash took the size of every pdfs/*.pdf: a dangling link there (a filing moved
    away) stopped `bench run` with "error: [Errno 2] No such file or directory" and nothing run."""
    from typer.testing import CliRunner

    from bench.runinfo import dataset_content_hash
    from pageindex.cli import app

    root = tmp_path / "ds"
    (root / "pdfs").mkdir(parents=True)
    (root / "pdfs" / "A.pdf").symlink_to(fb_pdf("AMCOR_2023Q2_10Q"))
    (root / "questions.jsonl").write_text(json.dumps(_row("q1", "Net sales?", "A", [0])) + "\n")
    before = dataset_content_hash(root)
    (root / "pdfs" / "GONE.pdf").symlink_to(tmp_path / "nowhere.pdf")
    assert dataset_content_hash(root) != before
    env = {"OPENAI_API_KEY": "", "PAGEINDEX_MODEL": "", "PAGEINDEX_CACHE_DIR": str(tmp_path / "cache")}
    args = ["bench", "run", "-q", "-d", str(root), "-r", "extractive", "--judge", "rules"]
    args += ["-o", str(tmp_path / "r")]
    res = CliRunner().invoke(app, args, env=env)
    assert res.exit_code == 0, res.output
    assert (tmp_path / "r" / "samples.jsonl").read_text().count("\n") == 1


def test_a_folder_or_a_broken_link_in_pdfs_is_dropped_saying_what_it_is(tmp_path: Path) -> None:
    """A folder named X.pdf was "file not found (not a regular file)" (pdf_missing) although it was
    there, and a link loop and a dangling link were both a bare "file not found"."""
    root = tmp_path / "ds"
    (root / "pdfs" / "ADIR.pdf").mkdir(parents=True)
    (root / "pdfs" / "LOOP.pdf").symlink_to("LOOP.pdf")
    (root / "pdfs" / "GONE.pdf").symlink_to(tmp_path / "moved" / "GONE.pdf")
    rows = [_row(n.lower(), f"Net sales of {n}?", n, [0]) for n in ("ADIR", "LOOP", "GONE", "ABSENT")]
    (root / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    dropped = {d.question_id: d for d in validate_dataset(load_financebench(root)).dropped}
    assert (dropped["adir"].reason, dropped["adir"].detail) == (
        "pdf_unreadable", f"{root}/pdfs/ADIR.pdf: not a PDF file (a directory: give one filing's PDF)"
    )
    assert (dropped["loop"].reason, dropped["loop"].detail) == (
        "pdf_unreadable", f"{root}/pdfs/LOOP.pdf: cannot be opened (a loop of symbolic links)"
    )
    assert (dropped["gone"].reason, dropped["gone"].detail) == (
        "pdf_missing",
        f"{root}/pdfs/GONE.pdf: file not found "
        f"(a symbolic link to {tmp_path}/moved/GONE.pdf, which does not exist)",
    )
    assert (dropped["absent"].reason, dropped["absent"].detail) == (
        "pdf_missing", f"{root}/pdfs/ABSENT.pdf: file not found"
    )


@pytest.mark.parametrize("kind", ["missing", "file", "loop", "dangling"])
def test_a_pdfs_folder_that_is_not_there_is_said_once(tmp_path: Path, kind: str) -> None:
    """With no pdfs/ folder (or a file, a link loop, a link to nowhere there) every question was dropped
    "file not found" one by one, and nothing said the folder itself was the problem."""
    root = tmp_path / "ds"
    root.mkdir()
    pdfs = root / "pdfs"
    if kind == "file":
        pdfs.write_text("not a folder")
    elif kind == "loop":
        pdfs.symlink_to("pdfs")
    elif kind == "dangling":
        pdfs.symlink_to(tmp_path / "moved")
    rows = [_row("q1", "Net sales?", "A", [0]), _row("q2", "Cash?", "B", [0])]
    (root / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    ds = load_financebench(root)
    said = {"missing": "there is none", "file": "it is a file", "loop": "it is a loop of symbolic links",
            "dangling": f"it is a symbolic link to {tmp_path}/moved, which does not exist"}[kind]  # fmt: skip
    assert [p for p in ds.problems if "pdfs" in p] == [
        f"{pdfs} is not a folder ({said}): the filings are looked for as pdfs/<doc_name>.pdf, so every "
        "question's filing is missing"
    ]
    assert {d.reason for d in validate_dataset(ds).dropped} == {"pdf_missing"}


def test_a_missing_filing_says_what_lies_beside_it_when_that_is_why(tmp_path: Path, fb_pdf) -> None:
    """Each was only "file not found": the partial download of an interrupted fetch, a doc_name written
    with its .pdf, a name that differs from the file's in case."""
    root = tmp_path / "ds"
    (root / "pdfs").mkdir(parents=True)
    (root / "pdfs" / "PART_2023_10K.pdf.part").write_bytes(b"%PDF-1.7\n" + b"x" * 100)
    (root / "pdfs" / "SUFFIX_2023_10K.pdf").symlink_to(fb_pdf("AMCOR_2023Q2_10Q"))
    (root / "pdfs" / "CASE_2023_10K.pdf").symlink_to(fb_pdf("AMCOR_2023Q2_10Q"))
    rows = [
        _row("part", "Net sales?", "PART_2023_10K", [0]),
        _row("suffix", "Net sales?", "SUFFIX_2023_10K.pdf", [0]),
        _row("case", "Net sales?", "case_2023_10k", [0]),
        _row("gone", "Net sales?", "GONE_2023_10K", [0]),
    ]
    (root / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    dropped = {d.question_id: d for d in validate_dataset(load_financebench(root)).dropped}
    assert {d.reason for d in dropped.values()} == {"pdf_missing"}
    pdfs = root / "pdfs"
    assert dropped["part"].detail == (
        f"{pdfs / 'PART_2023_10K.pdf'}: file not found; PART_2023_10K.pdf.part is a partial download: run "
        "pageindex bench datasets fetch again"
    )
    assert dropped["suffix"].detail == (
        f"{pdfs / 'SUFFIX_2023_10K.pdf.pdf'}: file not found; SUFFIX_2023_10K.pdf is there: the doc_name "
        "must not end in .pdf"
    )
    assert dropped["case"].detail == (
        f"{pdfs / 'case_2023_10k.pdf'}: file not found; CASE_2023_10K.pdf is there (the doc_name must match "
        "its case)"
    )
    assert dropped["gone"].detail == f"{pdfs / 'GONE_2023_10K.pdf'}: file not found"


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_a_utf16_questions_file_loads_as_its_utf8_twin(tmp_path: Path, encoding: str) -> None:
    """Windows PowerShell's ``>`` writes UTF-16 with a byte-order mark: every row was dropped as "not UTF-8
    text" or "not valid JSON", and the file counted one row more than it has (7 questions of 6)."""
    rows = [_row(f"q{i}", f"Net sales in {2018 + i}?", "ACME_2023_10K", [0], answer="café") for i in range(3)]
    questions = "".join(json.dumps(r, ensure_ascii=False) + "\r\n" for r in rows)
    documents = json.dumps({"doc_name": "ACME_2023_10K", "doc_type": "10k"}) + "\n"
    twins = {}
    for name, encode in {"utf8": str.encode, "utf16": lambda t: ("\ufeff" + t).encode(encoding)}.items():
        root = tmp_path / name
        (root / "pdfs").mkdir(parents=True)
        (root / "questions.jsonl").write_bytes(encode(questions))
        (root / "documents.jsonl").write_bytes(encode(documents))
        twins[name] = load_financebench(root)
    assert twins["utf16"].malformed == [] and twins["utf16"].problems == []
    assert twins["utf16"].questions == twins["utf8"].questions
    assert [q.gold_answer for q in twins["utf16"].questions] == ["café"] * 3
    assert twins["utf16"].questions[0].doc_type == "10k"


def test_the_readme_question_row_loads_as_documented(tmp_path: Path) -> None:
    """The README's Datasets section shows a question row and its documents row, the format a user
    writes their own dataset in (it named no field a row needs): they load with the gold page the text
    says (evidence_page_num 2 is the third page), and the same row written 1-based is dropped with the
    line the README quotes."""
    import pymupdf

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Datasets\n", 1)[1]
    block = section.split("```json\n", 1)[1].split("```", 1)[0]
    question_row, document_row = (json.loads(line) for line in block.strip().splitlines())
    root = tmp_path / "mine"
    (root / "pdfs").mkdir(parents=True)
    pdf = pymupdf.open()
    for n in range(3):
        text = f"Page {n + 1}. The net total debt to adjusted EBITDA ratio is 1.31."
        pdf.new_page().insert_text((72, 72), text)
    pdf.save(root / "pdfs" / "KROGER_Q2.pdf")
    (root / "documents.jsonl").write_text(json.dumps(document_row) + "\n")
    (root / "questions.jsonl").write_text(json.dumps(question_row) + "\n")
    ds = load_financebench(root)
    result = validate_dataset(ds)
    assert [q.question_id for q in result.kept] == ["my_01"] and not result.dropped
    assert result.kept[0].evidence_pages == [3] and result.kept[0].gold_answer == "1.31"
    assert result.kept[0].doc_type == "earnings" and result.kept[0].question_type == "novel-generated"

    question_row["evidence"][0]["evidence_page_num"] = 3  # the third page, written 1-based
    (root / "questions.jsonl").write_text(json.dumps(question_row) + "\n")
    [dropped] = validate_dataset(load_financebench(root)).dropped
    assert dropped.reason == "evidence_page_out_of_range"
    assert f"`{dropped.detail}`" in " ".join(section.split())


def test_an_evidence_page_written_as_text_says_to_write_it_as_a_number(tmp_path: Path) -> None:
    """A row converted from a CSV writes "evidence_page_num": "2"; it is malformed, and the line said
    "got '2'", which reads as the number the line asks for."""
    from bench.datasets.financebench import MalformedRow, parse_question

    row = _row("q", "What was revenue?", "DOC", [0])
    row["evidence"][0]["evidence_page_num"] = " 2"
    with pytest.raises(MalformedRow) as info:
        parse_question(row, {})
    assert str(info.value) == (
        "evidence_page_num must be a zero-based page number, got the text ' 2' (write it as a JSON number: 2)"
    )
    row["evidence"][0]["evidence_page_num"] = "two"
    with pytest.raises(MalformedRow) as info:
        parse_question(row, {})
    assert str(info.value) == "evidence_page_num must be a zero-based page number, got 'two'"


def test_an_evidence_page_written_as_a_decimal_or_left_out_says_how_to_write_it(tmp_path: Path) -> None:
    """A row exported by pandas from a column with a gap writes "evidence_page_num": 2.0, and one without
    the key has none: the lines said "got 2.0" (which reads as the page number it asks for) and "got
    None"."""
    from bench.datasets.financebench import MalformedRow, parse_question

    row = _row("q", "What was revenue?", "DOC", [0])
    row["evidence"][0]["evidence_page_num"] = 2.0
    with pytest.raises(MalformedRow) as info:
        parse_question(row, {})
    assert str(info.value) == (
        "evidence_page_num must be a zero-based page number, got 2.0 (write it as a whole number: 2)"
    )
    del row["evidence"][0]["evidence_page_num"]
    with pytest.raises(MalformedRow) as info:
        parse_question(row, {})
    assert str(info.value) == (
        "evidence_page_num must be a zero-based page number, got none (each evidence item needs one)"
    )
    row["evidence"][0]["evidence_page_num"] = 2.5
    with pytest.raises(MalformedRow) as info:
        parse_question(row, {})
    assert str(info.value) == "evidence_page_num must be a zero-based page number, got 2.5"


def test_the_scripts_default_financebench_folder(tmp_path: Path, monkeypatch) -> None:
    """``$PAGEINDEX_FINANCEBENCH`` when it holds questions.jsonl, else none; unset, ../shared/financebench
    beside the repository, as the tests find it (three scripts had /work/shared written into them)."""
    from bench.datasets.financebench import default_financebench_dir

    monkeypatch.setenv("PAGEINDEX_FINANCEBENCH", str(tmp_path))
    assert default_financebench_dir() is None
    (tmp_path / "questions.jsonl").write_text("")
    assert default_financebench_dir() == tmp_path
    monkeypatch.delenv("PAGEINDEX_FINANCEBENCH")
    beside = Path(__file__).resolve().parents[2].parent / "shared" / "financebench"
    assert default_financebench_dir() == (beside if (beside / "questions.jsonl").exists() else None)
