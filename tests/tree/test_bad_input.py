"""Unusable input: each case raises its own PDFError naming the file, and leaves no cache entry."""

from __future__ import annotations

from pathlib import Path

import pytest

from pageindex.tree import (
    NotAPDFError,
    PDFCorruptError,
    PDFEmptyError,
    PDFEncryptedError,
    PDFError,
    PDFMissingError,
    PDFNoTextError,
    build_tree,
)
from tests.tree.pdf_factory import encrypted_pdf, make_pdf, scanned_pdf, zero_page_pdf


def _truncated(path: Path) -> Path:
    good = make_pdf(path.with_name("good.pdf"), [["Item 1. Business", "text"], ["Item 2. Properties"]])
    data = good.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return path


def _garbage(path: Path) -> Path:
    path.write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 8 + b"\n%%EOF\n")
    return path


CASES = [
    ("missing.pdf", lambda p: p, PDFMissingError, "file not found"),
    ("notes.pdf", lambda p: (p.write_text("just some text, not a PDF"), p)[1], NotAPDFError, "not a PDF"),
    ("truncated.pdf", _truncated, PDFCorruptError, "corrupt or truncated"),
    ("garbage.pdf", _garbage, PDFCorruptError, "corrupt or truncated"),
    ("locked.pdf", encrypted_pdf, PDFEncryptedError, "encrypted"),
    ("empty.pdf", zero_page_pdf, PDFEmptyError, "no pages"),
    ("scan.pdf", scanned_pdf, PDFNoTextError, "no text layer"),
]


@pytest.mark.parametrize(("name", "make", "error", "words"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_raises_named_error_and_caches_nothing(tmp_path, name, make, error, words):
    path = make(tmp_path / name)
    cache = tmp_path / "cache"
    with pytest.raises(error) as info:
        build_tree(path, cache_dir=cache)
    assert isinstance(info.value, PDFError)
    message = str(info.value)
    assert name in message and words in message
    assert "\n" not in message
    assert not cache.exists() or not any(cache.iterdir())


def test_directory_is_not_a_file(tmp_path):
    with pytest.raises(NotAPDFError, match="a directory: give one filing's PDF"):
        build_tree(tmp_path, cache_dir=tmp_path / "cache")


def test_owner_password_only_pdf_is_readable(tmp_path):
    """Encryption without a user password (print/copy restrictions) still opens: not an error."""
    import pymupdf

    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "Item 1. Business")
    path = tmp_path / "restricted.pdf"
    doc.save(path, encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="owner", user_pw="")
    tree = build_tree(path, use_cache=False)
    assert "Item 1. Business" in tree.page_text(1)


def test_load_tree_of_a_missing_file_is_an_os_error_not_a_pdf_error(tmp_path):
    """A tree JSON is no PDF: a missing one raises FileNotFoundError (which `load_tree_file` words as
    'cannot read'), a folder IsADirectoryError, and a file that is not a tree a ValueError."""
    from pageindex.tree import load_tree

    with pytest.raises(FileNotFoundError):
        load_tree(tmp_path / "tree.json")
    with pytest.raises(IsADirectoryError):
        load_tree(tmp_path)
    (tmp_path / "x.json").write_text('{"not": "a tree"}')
    with pytest.raises(ValueError):
        load_tree(tmp_path / "x.json")
