"""Datasets: FinanceBench-format loading, validation before any model call, the generated
demo dataset, bad-filing generators and the FinanceBench downloader.

Pages are 1-based PDF pages everywhere in this package's public types.
Names are imported on first use (validation opens PDFs with pymupdf; a run's summary only needs
the models).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pageindex.lazy import lazy_getattr

_EXPORTS = {
    "DEFAULT_SIMILARITY_THRESHOLD": "bench.datasets.validation",
    "DROP_REASONS": "bench.datasets.validation",
    "PdfCheck": "bench.datasets.validation",
    "ValidationResult": "bench.datasets.validation",
    "check_pdf": "bench.datasets.validation",
    "validate_dataset": "bench.datasets.validation",
    "Dataset": "bench.datasets.models",
    "DatasetError": "bench.datasets.models",
    "Document": "bench.datasets.models",
    "DroppedQuestion": "bench.datasets.models",
    "Question": "bench.datasets.models",
    "dataset_hash": "bench.datasets.financebench",
    "load_financebench": "bench.datasets.financebench",
}

__all__ = [
    "DEFAULT_SIMILARITY_THRESHOLD",
    "DROP_REASONS",
    "Dataset",
    "DatasetError",
    "Document",
    "DroppedQuestion",
    "PdfCheck",
    "Question",
    "ValidationResult",
    "check_pdf",
    "dataset_hash",
    "load_financebench",
    "validate_dataset",
]

if TYPE_CHECKING:
    from bench.datasets.financebench import dataset_hash, load_financebench
    from bench.datasets.models import Dataset, DatasetError, Document, DroppedQuestion, Question
    from bench.datasets.validation import (
        DEFAULT_SIMILARITY_THRESHOLD,
        DROP_REASONS,
        PdfCheck,
        ValidationResult,
        check_pdf,
        validate_dataset,
    )


__getattr__ = lazy_getattr(__name__, _EXPORTS)
