"""pageindex: PDF filings -> section trees -> retrievers that answer questions with sources.

Public API (everything else lives in the subpackages)::

    from pageindex import build_tree, retrieve
    tree = build_tree("3M_2018_10K.pdf")
    result = retrieve(tree, "What was FY2018 capex?", retriever="iterative", llm="openai/gpt-4o-mini")

Names are imported on first use, so ``import pageindex`` (and the CLI's start-up) stays cheap.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from pageindex.lazy import lazy_getattr

# pymupdf imports onnxruntime (pymupdf-layout), whose telemetry, on by default, writes a device id
# and an event store under ~/.cache/Microsoft (outside every cache folder of ours) and, where the home
# folder is read-only, prints a coloured `[W:onnxruntime:...] Failed to persist telemetry device ID`
# line on standard error before any of ours. Off unless the user set the variable.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

_EXPORTS = {
    "build_tree": "pageindex.tree",
    "load_tree": "pageindex.tree",
    "Tree": "pageindex.tree.model",
    "Node": "pageindex.tree.model",
    "PDFError": "pageindex.tree",
    "retrieve": "pageindex.retrievers",
    "aretrieve": "pageindex.retrievers",
    "available_retrievers": "pageindex.retrievers",
    "QuestionContext": "pageindex.retrievers",
    "RetrievalResult": "pageindex.retrievers.result",
}

__all__ = [
    "Node",
    "PDFError",
    "QuestionContext",
    "RetrievalResult",
    "Tree",
    "aretrieve",
    "available_retrievers",
    "build_tree",
    "load_tree",
    "retrieve",
]

if TYPE_CHECKING:
    from pageindex.retrievers import QuestionContext, aretrieve, available_retrievers, retrieve
    from pageindex.retrievers.result import RetrievalResult
    from pageindex.tree import PDFError, build_tree, load_tree
    from pageindex.tree.model import Node, Tree


__getattr__ = lazy_getattr(__name__, _EXPORTS)
