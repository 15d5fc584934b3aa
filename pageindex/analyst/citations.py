"""Citations that name their document: map a result over a combined tree back to the filings."""

from __future__ import annotations

from pageindex.retrievers.result import RetrievalResult
from pageindex.tree.combine import CombinedTree
from pageindex.tree.model import Tree


def localize_result(tree: Tree, result: RetrievalResult) -> RetrievalResult:
    """A copy of ``result`` whose sources and findings name their document: ``doc_id`` set,
    ``page`` and ``node_id``/``section`` as in that document (``extra["pages_by_doc"]`` lists
    the pages read per document). Over a single filing only ``doc_id`` is filled in."""
    out = result.model_copy(deep=True)
    if not isinstance(tree, CombinedTree):
        for item in [*out.sources, *out.findings]:
            item.doc_id = item.doc_id or tree.doc_id
        return out
    pages_by_doc: dict[str, list[int]] = {}
    for page in out.pages_fetched:
        doc, local = tree.locate(page)
        if doc is not None:
            pages_by_doc.setdefault(doc, []).append(local)
    for source in out.sources:
        source.doc_id, source.page = tree.locate(source.page)
        source.node_id = tree.split_id(source.node_id)[1]
    for finding in out.findings:
        finding.doc_id, finding.page = tree.locate(finding.page)
        finding.section = tree.split_id(finding.section)[1]
    out.extra["pages_by_doc"] = pages_by_doc
    return out
