"""The code digest behind the tree builder's and the rules judge's versions: code counts, comments and
docstrings do not (trial 13: a comment in the tree code made a CI gate refuse to compare its runs)."""

from __future__ import annotations

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


def test_the_versions_are_taken_this_way() -> None:
    """The tree builder's and the rules judge's versions end with this digest of their files."""
    import bench.judges.numbers
    import pageindex.retrievers.numbers
    from bench.judges import rules
    from pageindex.tree import build

    tree_files = sorted(Path(build.__file__).parent.glob("*.py"))
    assert build.CODE_VERSION == f"{build.BUILDER_VERSION}+{code_digest(tree_files)}"
    rule_files = [rules.__file__, bench.judges.numbers.__file__, pageindex.retrievers.numbers.__file__]
    assert rules.rules_source_hash() == code_digest(rule_files)
