"""Datasets: FinanceBench-format loading, validation before any model call, the generated
demo dataset, bad-filing generators and the FinanceBench downloader.

Pages are 1-based PDF pages everywhere in this package's public types.
"""

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
