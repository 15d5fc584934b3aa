"""Errors raised when a file cannot be turned into a tree. Each message names the file and the problem."""

from __future__ import annotations

from pathlib import Path


class PDFError(Exception):
    """Base class: the file at ``path`` cannot be read as a filing."""

    problem = "cannot be read as a PDF"

    def __init__(self, path: str | Path, detail: str | None = None) -> None:
        self.path = str(path)
        self.detail = detail
        message = f"{self.path}: {self.problem}"
        if detail:
            message += f" ({detail})"
        super().__init__(message)


class PDFMissingError(PDFError):
    problem = "file not found"


class PDFUnreadableError(PDFError):
    """The file system would not let it be read (a name too long, no permission, an I/O error)."""

    problem = "cannot be opened"


class NotAPDFError(PDFError):
    problem = "not a PDF file"


class PDFCorruptError(PDFError):
    problem = "corrupt or truncated PDF"


class PDFEncryptedError(PDFError):
    problem = (
        "PDF is encrypted (password protected); decrypt it first "
        "(qpdf --decrypt --password=PW in.pdf out.pdf)"
    )


class PDFEmptyError(PDFError):
    problem = "PDF has no pages"


class PDFNoTextError(PDFError):
    problem = "PDF has no text layer (scanned images only?); OCR it first"
