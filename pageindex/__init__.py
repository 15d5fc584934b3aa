"""pageindex: PDF filings -> section trees -> retrievers that answer questions with sources.

Public API (everything else lives in the subpackages)::

    from pageindex import build_tree, retrieve
    tree = build_tree("3M_2018_10K.pdf")
    result = retrieve(tree, "What was FY2018 capex?", retriever="iterative", llm="openai/gpt-4o-mini")
"""

from pageindex.retrievers import (
    QuestionContext,
    RetrievalResult,
    aretrieve,
    available_retrievers,
    retrieve,
)
from pageindex.tree import Node, PDFError, Tree, build_tree, load_tree

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
