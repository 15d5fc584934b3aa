"""Reports of runs (``pageindex bench report``): HTML (:mod:`bench.report.html`) and Markdown
(:mod:`bench.report.markdown`), both titled with :data:`TITLE_PREFIX`."""

from __future__ import annotations

from pathlib import Path

TITLE_PREFIX = "pageindex-bench report: "
GENERATOR = "pageindex-bench report"  # named in every HTML report's head, whatever its --title


def is_report_file(path: Path) -> bool:
    """Whether ``path`` holds a report written by ``bench report`` (what its ``--out`` may replace)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    return TITLE_PREFIX.encode() in head or GENERATOR.encode() in head
