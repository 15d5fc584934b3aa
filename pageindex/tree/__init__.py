"""PDF filing -> section tree. ``build_tree`` is the entry point; ``Tree``/``Node`` the data.

Names are imported on first use (building needs pymupdf; reading a tree's model does not)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pageindex.lazy import lazy_getattr

_EXPORTS = {
    "NotAPDFError": "pageindex.tree.errors",
    "PDFCorruptError": "pageindex.tree.errors",
    "PDFEmptyError": "pageindex.tree.errors",
    "PDFEncryptedError": "pageindex.tree.errors",
    "PDFError": "pageindex.tree.errors",
    "PDFMissingError": "pageindex.tree.errors",
    "PDFNoTextError": "pageindex.tree.errors",
    "PDFUnreadableError": "pageindex.tree.errors",
    "BUILDER_VERSION": "pageindex.tree.build",
    "Node": "pageindex.tree.model",
    "NodeKind": "pageindex.tree.model",
    "Tree": "pageindex.tree.model",
    "TreeCache": "pageindex.tree.cache",
    "build_tree": "pageindex.tree.build",
    "default_cache_dir": "pageindex.tree.cache",
    "load_tree": "pageindex.tree.build",
    "is_tree_file": "pageindex.tree.build",
}

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
    "PDFUnreadableError",
    "Tree",
    "TreeCache",
    "build_tree",
    "default_cache_dir",
    "is_tree_file",
    "load_tree",
]

if TYPE_CHECKING:
    from pageindex.tree.build import BUILDER_VERSION, build_tree, is_tree_file, load_tree
    from pageindex.tree.cache import TreeCache, default_cache_dir
    from pageindex.tree.errors import (
        NotAPDFError,
        PDFCorruptError,
        PDFEmptyError,
        PDFEncryptedError,
        PDFError,
        PDFMissingError,
        PDFNoTextError,
        PDFUnreadableError,
    )
    from pageindex.tree.model import Node, NodeKind, Tree


__getattr__ = lazy_getattr(__name__, _EXPORTS)
