"""The code digest behind the tree builder's and the rules judge's versions: code counts, comments and
docstrings do not (trial 13: a comment in the tree code made a CI gate refuse to compare its runs)."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

from pageindex.digest import code_digest, code_text

CODE = '''"""Module docstring."""

import re  # a comment


class Rule:
    """Class docstring,
    on two lines."""

    limit = 3  # the limit

    def applies(self, text: str) -> bool:
        """Method docstring."""
        # a whole-line comment

        return len(text) > self.limit and "#" in text  # "#" in a string is code
'''


def _digest(tmp_path: Path, text: str) -> str:
    path = tmp_path / "rules.py"
    path.write_text(text)
    return code_digest([path])


def test_comments_docstrings_and_blank_lines_do_not_count(tmp_path: Path) -> None:
    assert code_text(CODE) == "\n".join(
        [
            "import re",
            "class Rule:",
            "    limit = 3",
            "    def applies(self, text: str) -> bool:",
            '        return len(text) > self.limit and "#" in text',
        ]
    )
    before = _digest(tmp_path, CODE)
    reworded = CODE.replace("# a comment", "# another comment").replace("Method docstring.", "Says if.")
    assert _digest(tmp_path, reworded + "\n\n# trailing note\n") == before
    assert _digest(tmp_path, CODE.replace("limit = 3", "limit = 4")) != before
    assert _digest(tmp_path, CODE.replace('"#" in text', '"%" in text')) != before


def test_lines_are_pythons_lines_and_literals_are_kept_exactly(tmp_path: Path) -> None:
    """Review 14: `splitlines` also broke at a form feed or a line separator, which Python does not, so
    the spans fell on the wrong lines (`def f():` and `def g(y):` hashed alike); `ast` columns are bytes;
    a file with a byte-order mark did not parse; and blank lines inside a literal were dropped."""
    feed = '\x0c\ndef f():\n    """Doc."""\n    return 1\n'
    assert code_text(feed) == "def f():\n    return 1"
    assert _digest(tmp_path, feed) != _digest(tmp_path, feed.replace("def f():", "def g(y):"))
    assert _digest(tmp_path, 'S = "a\u2028b"\nX = 1\n') != _digest(tmp_path, 'S = "a\u2028b"\nY = 1\n')
    accents = '"""\u00e9\u00e9\u00e9"""; X = 10\n'
    assert code_text(accents) == "; X = 10"
    (tmp_path / "bom").mkdir()
    (tmp_path / "bom" / "rules.py").write_bytes(b"\xef\xbb\xbfX = 1  # note\n")
    assert code_digest([tmp_path / "bom" / "rules.py"]) == _digest(tmp_path, "X = 1\n")
    with_blank = 'PROMPT = """Answer:\n\nthe value"""\n'
    assert _digest(tmp_path, with_blank) != _digest(tmp_path, with_blank.replace("\n\n", "\n"))
    assert code_text(with_blank) == with_blank.rstrip("\n")
    # a comment after a literal's closing quotes still does not count
    assert code_text('P = """a\n\nb"""  # note\n') == code_text('P = """a\n\nb"""\n')


def test_the_versions_are_taken_this_way() -> None:
    """The tree builder's and the rules judge's versions end with this digest of their files."""
    import bench.judges.numbers
    import pageindex.retrievers.numbers
    from bench.judges import rules
    from pageindex.tree import build

    tree_files = sorted(Path(build.__file__).parent.glob("*.py"))
    pymupdf = metadata.version("pymupdf")
    assert build.CODE_VERSION == f"{build.BUILDER_VERSION}+{code_digest(tree_files)}-pymupdf{pymupdf}"
    rule_files = [rules.__file__, bench.judges.numbers.__file__, pageindex.retrievers.numbers.__file__]
    assert rules.rules_source_hash() == code_digest(rule_files)


def test_importing_the_builder_does_not_read_its_code() -> None:
    """The digest reads and parses the builder's 18 files (about 0.3 s): taken when a version is first
    needed (a tree built or cached, a run recorded), not on import, which `pageindex tree tree.json`
    and every command that loads a tree JSON pay."""
    import subprocess
    import sys

    probe = "import pageindex.tree.build as b; print(b.code_version.cache_info().currsize)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "0"
