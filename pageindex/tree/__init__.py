"""PDF filing -> section tree. ``build_tree`` is the entry point; ``Tree``/``Node`` the data."""

from pageindex.tree.build import BUILDER_VERSION, build_tree, load_tree
from pageindex.tree.cache import TreeCache, default_cache_dir
from pageindex.tree.errors import (
    NotAPDFError,
    PDFCorruptError,
    PDFEmptyError,
    PDFEncryptedError,
    PDFError,
    PDFMissingError,
    PDFNoTextError,
)
from pageindex.tree.model import Node, NodeKind, Tree

__all__ = [
    "BUILDER_VERSION",
    "NotAPDFError",
    "Node",
    "NodeKind",
    "PDFCorruptError",
    "PDFEmptyError",
    "PDFEncryptedError",
    "PDFError",
    "PDFMissingError",
    "PDFNoTextError",
    "Tree",
    "TreeCache",
    "build_tree",
    "default_cache_dir",
    "load_tree",
]
