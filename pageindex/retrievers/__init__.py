"""Retrievers: several ways of answering a question over a section tree, one interface.

``retrieve(tree, query, retriever="iterative", llm=client, **options) -> RetrievalResult``
(``aretrieve`` is the async form). See :mod:`pageindex.retrievers.base` for the registry
and how to add a retriever.

Names are imported on first use, so reading a stored result does not load the retriever machinery.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pageindex.lazy import lazy_getattr

_EXPORTS = {
    "DEFAULT_RETRIEVER": "pageindex.retrievers.base",
    "FetchOptions": "pageindex.retrievers.base",
    "QuestionContext": "pageindex.retrievers.base",
    "QuestionRun": "pageindex.retrievers.base",
    "RetrievalRun": "pageindex.retrievers.base",
    "RetrieverConfigError": "pageindex.retrievers.base",
    "RetrieverOptions": "pageindex.retrievers.base",
    "aretrieve": "pageindex.retrievers.base",
    "available_retrievers": "pageindex.retrievers.base",
    "get_retriever": "pageindex.retrievers.base",
    "register_retriever": "pageindex.retrievers.base",
    "retrieve": "pageindex.retrievers.base",
    "FailedSearch": "pageindex.retrievers.result",
    "Finding": "pageindex.retrievers.result",
    "RetrievalResult": "pageindex.retrievers.result",
    "Source": "pageindex.retrievers.result",
    "TraceEvent": "pageindex.retrievers.result",
}

__all__ = [
    "DEFAULT_RETRIEVER",
    "FailedSearch",
    "FetchOptions",
    "Finding",
    "QuestionContext",
    "RetrievalResult",
    "QuestionRun",
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

if TYPE_CHECKING:
    from pageindex.retrievers.base import (
        DEFAULT_RETRIEVER,
        FetchOptions,
        QuestionContext,
        QuestionRun,
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


__getattr__ = lazy_getattr(__name__, _EXPORTS)
