"""The performance and measurement scripts of README's *Performance figures*: each prints its figures.

A script's folder arguments are checked before any work (:func:`pdf_folders`, :func:`dataset_folder`):
a path that is no folder, or a folder with nothing to measure, is one ``error:`` line and exit 2 (a
traceback, or a table of zeros and exit 0, before).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path


def pdf_folders(dirs: Iterable[Path], skip: Iterable[str] = ()) -> list[Path]:
    """The folder of PDFs each of ``dirs`` names (its ``pdfs/`` where it has one), or exit 2 with one
    error line where one is no folder or holds no PDF whose name is not in ``skip`` (the hold-outs)."""
    from pageindex.cli._common import fail

    left_out = set(skip)
    folders = []
    for given in dirs:
        if not given.is_dir():
            what = "a file" if given.exists() else "no such folder"
            fail(f"{given}: {what} (give FinanceBench-format folders, pdfs/ inside, or folders of PDFs)")
        folder = given / "pdfs" if (given / "pdfs").is_dir() else given
        if not any(p.stem not in left_out for p in folder.glob("*.pdf")):
            held = " but hold-outs, left out without --with-holdout" if any(folder.glob("*.pdf")) else ""
            fail(f"{given}: no PDF{held} in {folder} (give FinanceBench-format folders or folders of PDFs)")
        folders.append(folder)
    return folders


def dataset_folder(given: Path) -> Path:
    """``given``, a FinanceBench-format folder (``questions.jsonl``, ``pdfs/``), or exit 2 with one
    error line."""
    from pageindex.cli._common import fail

    if not given.is_dir():
        what = "a file" if given.exists() else "no such folder"
        fail(f"{given}: {what} (give a FinanceBench-format folder: questions.jsonl, pdfs/)")
    if not (given / "questions.jsonl").is_file():
        fail(f"{given}: no questions.jsonl (give a FinanceBench-format folder: questions.jsonl, pdfs/)")
    return given
