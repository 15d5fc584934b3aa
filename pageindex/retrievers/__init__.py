"""Retrievers: several ways of answering a question over a section tree, one interface.

``retrieve(tree, query, retriever="iterative", llm=client, **options) -> RetrievalResult``
(``aretrieve`` is the async form). See :mod:`pageindex.retrievers.base` for the registry
and how to add a retriever.
"""

from pageindex.retrievers.base import (
    DEFAULT_RETRIEVER,
    FetchOptions,
    QuestionContext,
    RetrievalRun,
    RetrieverConfigError,
    RetrieverOptions,
    aretrieve,
    available_retrievers,
    get_retriever,
    register_retriever,
    retrieve,
)
from pageindex.retrievers.result import FailedSearch, Finding, RetrievalResult, Source, TraceEvent

__all__ = [
    "DEFAULT_RETRIEVER",
    "FailedSearch",
    "FetchOptions",
    "Finding",
    "QuestionContext",
    "RetrievalResult",
    "RetrievalRun",
    "RetrieverConfigError",
    "RetrieverOptions",
    "Source",
    "TraceEvent",
    "aretrieve",
    "available_retrievers",
    "get_retriever",
    "register_retriever",
    "retrieve",
]
