"""Unusable input: each case raises its own PDFError naming the file, and leaves no cache entry."""

from __future__ import annotations

import os
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


def test_a_whole_pdf_padded_with_nul_bytes_builds_as_the_pdf_without_them(tmp_path):
    """A complete PDF followed by 20 KB of NUL bytes (pypdf's test file of a Selenium download is so:
    padded out to a block size) was `corrupt or truncated PDF (no %%EOF marker at the end)`, exit 2,
    since its %%EOF stood more than 4 KB before the end; read so, the reader also rebuilt its
    cross-reference table and the tree said the file damaged. It builds as the file without the
    padding does; a file cut short and then padded is still refused."""
    good = make_pdf(tmp_path / "good.pdf", [["Item 1. Business", "Hello World"], ["Item 2. Properties"]])
    data = good.read_bytes()
    padded = tmp_path / "padded.pdf"
    padded.write_bytes(data + b"\x00" * 20480)
    tree = build_tree(padded, use_cache=False)
    plain = build_tree(good, use_cache=False)
    assert tree.pages == plain.pages and tree.page_count == 2
    assert "Hello World" in tree.page_text(1)
    assert tree.warnings == []
    assert [(n.title, n.start_page, n.end_page) for n in tree.walk()] == [
        (n.title, n.start_page, n.end_page) for n in plain.walk()
    ]
    padded.write_bytes(data + b"\n" * 9000)  # white space pads too
    assert build_tree(padded, use_cache=False).warnings == []
    cut = tmp_path / "cut.pdf"
    cut.write_bytes(data[: len(data) // 2] + b"\x00" * 20480)
    with pytest.raises(PDFCorruptError) as info:
        build_tree(cut, use_cache=False)
    assert str(info.value) == f"{cut}: corrupt or truncated PDF (no %%EOF marker at the end)"
    cut.write_bytes(data + b"\x00" * (2 << 20))  # more than 1 MB of NULs: a preallocated download's
    with pytest.raises(PDFCorruptError) as info:
        build_tree(cut, use_cache=False)
    assert str(info.value) == (
        f"{cut}: corrupt or truncated PDF (no %%EOF marker at the end: it ends in more than 1 MB of NUL "
        "bytes or blanks, as an unfinished or preallocated download does; download it again)"
    )


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


def test_a_tree_says_what_its_pdf_did_not_let_the_builder_read(tmp_path, capsys):
    """Trial 15: a PDF cut short and "repaired" by the reader built silently with pages' text lost,
    and with none left it was called a scan to OCR; a filing whose pages 2-5 are images built
    silently too. The tree carries warnings (stored, so a cached tree keeps them), build prints them."""
    import pymupdf
    from typer.testing import CliRunner

    from pageindex.cli import app

    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "Item 1. Business\nThe company sells widgets.")
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 40, 40), False)
    for _ in range(4):
        doc.new_page().insert_image(pymupdf.Rect(0, 0, 612, 792), pixmap=pix)
    doc.save(tmp_path / "mostly_scanned.pdf")
    tree = build_tree(tmp_path / "mostly_scanned.pdf", cache_dir=tmp_path / "cache")
    assert tree.warnings == [
        "4 of 5 pages have no text layer (pages 2-5): scanned images? Their content is not in the tree; "
        "OCR the PDF first"
    ]
    scanned = tmp_path / "mostly_scanned.pdf"
    assert build_tree(scanned, cache_dir=tmp_path / "cache").warnings == tree.warnings  # from the cache
    result = CliRunner().invoke(app, ["build", str(scanned), "--no-cache"])
    assert result.exit_code == 0
    assert "warning: mostly_scanned: 4 of 5 pages have no text layer" in result.output

    pages = [["Item 1. Business", "text " * 80], ["Item 2. Properties", "x " * 80]]
    good = make_pdf(tmp_path / "good.pdf", pages)
    assert build_tree(good, use_cache=False).warnings == []
    data = good.read_bytes()
    cut = tmp_path / "cut.pdf"
    for fraction in (0.3, 0.6, 0.7):  # cut short, an end marker added back: the reader repairs it
        cut.write_bytes(data[: int(len(data) * fraction)] + b"\n%%EOF\n")
        try:
            damaged = build_tree(cut, use_cache=False)
        except PDFCorruptError as exc:  # nothing readable left: damaged, not "no text layer"
            assert "cross-reference table is broken" in str(exc) and "OCR" not in str(exc)
        else:
            assert damaged.warnings[0].startswith("the PDF is damaged")


def test_links_that_lead_nowhere_and_unreadable_files_say_so(tmp_path, monkeypatch):
    """A dangling link and a link loop were both "file not found"; a file the process may not read
    raised a bare PermissionError from build_tree (the CLI's own check caught it first)."""
    from pageindex.tree import PDFUnreadableError

    (tmp_path / "loop.pdf").symlink_to("loop.pdf")
    loop = r"loop\.pdf: cannot be opened \(a loop of symbolic links\)$"
    with pytest.raises(PDFUnreadableError, match=loop):
        build_tree(tmp_path / "loop.pdf", use_cache=False)
    (tmp_path / "gone.pdf").symlink_to(tmp_path / "moved.pdf")
    gone = r"gone\.pdf: file not found \(a symbolic link to .*moved\.pdf, which does not exist\)$"
    with pytest.raises(PDFMissingError, match=gone):
        build_tree(tmp_path / "gone.pdf", use_cache=False)
    locked = make_pdf(tmp_path / "locked.pdf", [["Item 1. Business"]])

    def denied(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "open", denied)  # as chmod 000 does for a user who is not root
    with pytest.raises(PDFUnreadableError, match=r"locked\.pdf: cannot be opened \(Permission denied\)$"):
        build_tree(locked, use_cache=False)
    monkeypatch.undo()
    os.mkfifo(tmp_path / "pipe.pdf")  # never opened: reading a pipe with no writer would wait for ever
    with pytest.raises(NotAPDFError, match=r"pipe\.pdf: not a PDF file \(not a regular file\)$"):
        build_tree(tmp_path / "pipe.pdf", use_cache=False)


def test_a_file_cut_short_whose_pages_went_with_it_is_damaged_not_empty(tmp_path, fb_pdf):
    """The first half of a filing with its end marker put back: the reader repairs it and finds no page
    at all, which was "PDF has no pages" (pdf_empty in a dataset), as if the file were a well-formed empty
    PDF, and no hint to get the file again. A PDF that really holds no page is still pdf_empty."""
    from bench.datasets import check_pdf

    data = fb_pdf("FOOTLOCKER_2022_8K_dated-2022-05-20").read_bytes()
    cut = tmp_path / "cut.pdf"
    cut.write_bytes(data[: len(data) // 2] + b"\n%%EOF\n")
    with pytest.raises(PDFCorruptError) as info:
        build_tree(cut, cache_dir=tmp_path / "cache")
    assert str(info.value) == (
        f"{cut}: corrupt or truncated PDF (its cross-reference table is broken and no page is left in it)"
    )
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())
    check = check_pdf(cut)
    assert (check.reason, check.detail) == ("pdf_unreadable", str(info.value))
    assert check_pdf(zero_page_pdf(tmp_path / "none.pdf")).reason == "pdf_empty"


def _stamped_scan(path: Path, pages: int, text_first: bool = False) -> Path:
    """Pages that are one image each with a scanner's stamp and a page number over it (no OCR), the
    first a text page when ``text_first``."""
    import pymupdf

    doc = pymupdf.open()
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 40, 40), False)
    pix.clear_with(200)
    for n in range(1, pages + 1):
        page = doc.new_page()
        if text_first and n == 1:
            page.insert_text((72, 72), "Item 1. Business\nThe company sells widgets in 40 countries.")
            continue
        page.insert_image(page.rect, pixmap=pix)
        page.insert_text((20, 20), "Scanned with CamScanner", fontsize=8)
        page.insert_text((560, 780), f"Page {n}", fontsize=8)
    doc.save(path)
    return path


def test_a_scan_with_a_stamp_on_every_page_is_no_text_layer_not_an_empty_tree(tmp_path):
    """A scanner that prints "Scanned with CamScanner" and page numbers over its page images gives the
    file a few words of text a page: it built a tree of stamps (exit 0), `ask` answered "Not found in
    this filing" from it and `datasets validate` kept it, none saying the content was images."""
    from bench.datasets import check_pdf

    scan = _stamped_scan(tmp_path / "stamped.pdf", 4)
    with pytest.raises(PDFNoTextError) as info:
        build_tree(scan, cache_dir=tmp_path / "cache")
    assert str(info.value) == (
        f"{scan}: PDF has no text layer (scanned images only?); OCR it first (every page is an image with "
        "fewer than 100 letters of text on it: a scanner's stamp or page numbers?)"
    )
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())
    assert check_pdf(scan).reason == "pdf_no_text"
    mostly = _stamped_scan(tmp_path / "mostly.pdf", 5, text_first=True)
    assert build_tree(mostly, use_cache=False).warnings == [
        "4 of 5 pages have no text layer (pages 2-5): scanned images? Their content is not in the tree; "
        "OCR the PDF first"
    ]
    assert check_pdf(mostly).ok


def test_a_bookmark_repeated_by_a_merge_is_one_section(tmp_path):
    """A PDF merged from copies repeats bookmarks (level, title and page the same, one after another):
    each was a section of its own, "Intro", "Intro", "Intro" on page 1 (ids intro, intro_2, intro_3).
    A title that recurs elsewhere (another page, another level) is kept."""
    import pymupdf

    from tests.tree.pdf_factory import save_pdf

    doc = pymupdf.open()
    for n in range(1, 9):
        doc.new_page().insert_text((72, 72), f"Part {n} heading\nBody text of part {n}.")
    toc = [[1, "Intro", 1]] * 3 + [[1, f"Part {n}", n] for n in range(2, 9)] + [[2, "Part 8", 8]]
    tree = build_tree(save_pdf(doc, tmp_path / "merged.pdf", toc), use_cache=False)
    assert tree.strategy == "outline"
    firsts = [(n.node_id, n.start_page) for n in tree.walk()][:3]
    assert firsts == [("intro", 1), ("part_2", 2), ("part_3", 3)]
    assert sum(1 for n in tree.walk() if n.title == "Intro") == 1
    assert [n.title for n in tree.walk()][-2:] == ["Part 8", "Part 8"]


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"\xef\xbb\xbf<!DOCTYPE html>\n<html><body>10-K</body></html>", "an HTML page (EDGAR filings"),
        (b"  <HTML><HEAD><TITLE>404 Not Found</TITLE>", "no %PDF header: an HTML page"),
        (b"PK\x03\x04\x14\x00\x00\x00", "no %PDF header: a ZIP archive (a .docx or .xlsx file?)"),
        (b"\x89PNG\r\n\x1a\n", "no %PDF header: a PNG image"),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF", "no %PDF header: a JPEG image"),
        (b"just some notes\n", "no %PDF header)"),
    ],
    ids=["html", "html-upper", "zip", "png", "jpeg", "text"],
)
def test_a_file_that_is_no_pdf_says_what_it_is(tmp_path, content, says):
    """A filing saved from EDGAR as HTML under a .pdf name, an Office file or a picture was "not a PDF
    file (no %PDF header)" alike: what the file is, where it can be told, tells the user what to do."""
    path = tmp_path / "filing.pdf"
    path.write_bytes(content)
    with pytest.raises(NotAPDFError) as info:
        build_tree(path, use_cache=False)
    assert str(info.value).startswith(f"{path}: not a PDF file (") and says in str(info.value)


def test_a_pdf_name_with_bytes_the_locale_cannot_read_is_refused_for_what_it_is(tmp_path):
    """A Latin-1 name on a UTF-8 system (byte 0xE9 for "é"): pymupdf takes names as UTF-8 text, so the file
    was `corrupt or truncated PDF (Failed to open file ...)`, and a tree of it from the cache could not be
    written out (an internal error). Now it is refused by its name, before any cache is read."""
    from pageindex.tree import PDFUnreadableError

    good = make_pdf(tmp_path / "good.pdf", [["Item 1. Business", "Hello World"]])
    named = Path(os.fsdecode(os.path.join(os.fsencode(tmp_path), b"r\xe9port.pdf")))
    named.write_bytes(good.read_bytes())
    assert named.is_file()
    with pytest.raises(PDFUnreadableError) as info:
        build_tree(named, cache_dir=tmp_path / "cache")
    assert str(info.value).endswith(
        "cannot be opened (its name has a byte that is not text in this locale's encoding (0xE9): rename the "
        "file, or run in a UTF-8 locale (LC_ALL=C.UTF-8) if the name is UTF-8)"
    )
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("*.json"))


def test_a_pdf_in_a_non_ascii_folder_builds_under_a_latin_1_locale(tmp_path):
    """Under a Latin-1 locale, Python reads the UTF-8 name "dé" as "dÃ©", which pymupdf (taking names as
    UTF-8) could not find: `corrupt or truncated PDF (Failed to open file ...)`, exit 2. The file is read
    from its content then. A real locale, made with localedef into the test's folder."""
    import shutil
    import subprocess
    import sys

    if shutil.which("localedef") is None:
        pytest.skip("localedef (glibc's locale compiler) is not installed")
    locales = tmp_path / "locales"
    locales.mkdir()
    made = subprocess.run(
        ["localedef", "-i", "en_US", "-f", "ISO-8859-1", str(locales / "en_US.ISO-8859-1")],
        capture_output=True, text=True,
    )  # fmt: skip
    if made.returncode not in (0, 1):  # 1: made, with warnings
        pytest.skip(f"localedef could not make a Latin-1 locale: {made.stderr.strip()}")
    folder = tmp_path / "dé"
    folder.mkdir()
    pdf = make_pdf(folder / "filing.pdf", [["Item 1. Business", "Hello World"], ["Item 2. Properties"]])
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LOCPATH": str(locales),
        "LC_ALL": "en_US.ISO-8859-1", "PAGEINDEX_CACHE_DIR": str(tmp_path / "cache"),
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
    }  # fmt: skip
    code = "import sys; print(sys.getfilesystemencoding())"
    seen = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert seen.stdout.strip() == "iso8859-1"
    out = tmp_path / "tree.json"
    # the path handed over as the bytes the file system holds, as a shell would
    done = subprocess.run(
        [sys.executable, "-m", "pageindex.cli", "build", os.fsencode(pdf), "-o", str(out)],
        env=env, capture_output=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert b"2 pages" in done.stdout and out.is_file()
