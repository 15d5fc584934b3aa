"""Trees of the project's own demo filings (``bench.datasets.demo``), the main job's input.

BLUEFIN and GRANITEPEAK carry no bookmarks, so their trees come from the SEC rules alone;
GRANITEPEAK prints its statements after Part IV on "F-" pages (Item 8 only points there).
Every demo question's evidence page must fall in the leaf a reader would open for it.
"""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from bench.datasets.demo import write_demo_dataset
from pageindex.tree import Tree, build_tree

DOCS = ["NORTHWIND_2023_10K", "BLUEFIN_2022_10K", "GRANITEPEAK_2023_10K"]

# Items and their 1-based start pages in GRANITEPEAK (statements at the back); the other two
# print their statements inside Item 8, which moves Items 9-16 six pages on
ITEM_PAGES = {
    "item_1": 3,
    "item_1a": 4,
    "item_1b": 4,
    "item_2": 4,
    "item_3": 4,
    "item_4": 4,
    "item_5": 5,
    "item_6": 5,
    "item_7": 6,
    "item_7a": 7,
    "item_8": 7,
    "item_9": 8,
    "item_9a": 8,
    "item_9b": 8,
    "item_10": 9,
    "item_11": 9,
    "item_12": 9,
    "item_13": 9,
    "item_14": 9,
    "item_15": 9,
    "item_16": 9,
}
# statements and notes: (id, start page) per filing
_NOTE_PAGES = [(1, 12), (2, 12), (3, 12), (4, 12), (5, 12), (6, 13), (7, 13)]
FINANCIALS = {
    "NORTHWIND_2023_10K": [
        ("item_8/income", 9),
        ("item_8/balance_sheet", 10),
        ("item_8/cash_flows", 11),
        *[(f"item_8/note_{n}", p) for n, p in _NOTE_PAGES],
    ],
    "BLUEFIN_2022_10K": [
        ("item_8/income", 9),
        ("item_8/balance_sheet", 10),
        ("item_8/cash_flows", 11),
        *[(f"item_8/note_{n}", p) for n, p in _NOTE_PAGES],
    ],
    "GRANITEPEAK_2023_10K": [
        ("financial_statements/income", 11),
        ("financial_statements/balance_sheet", 12),
        ("financial_statements/cash_flows", 13),
        *[
            (f"financial_statements/note_{n}", p)
            for n, p in [(1, 14), (2, 14), (3, 14), (4, 14), (5, 14), (6, 15), (7, 15)]
        ],
    ],
}
# question evidence anchor (bench.datasets.demo_filing) -> the id of the leaf holding it
ANCHOR_NODE = {
    "employees": "item_1",
    "segments": "item_1",
    "dividends": "item_5",
    "net_sales": "item_7",
    "gross_margin": "item_7",
    "liquidity": "item_7",
    "rate_risk": "item_7a",
    "income": "{fs}/income",
    "balance": "{fs}/balance_sheet",
    "cash_flow": "{fs}/cash_flows",
    "segment_table": "{fs}/note_2",
    "ppe_table": "{fs}/note_3",
    "debt_table": "{fs}/note_5",
    "tax_rate": "{fs}/note_6",
}


def item_pages(doc: str) -> dict[str, int]:
    if doc.startswith("GRANITEPEAK"):
        return ITEM_PAGES
    return {k: p + 6 if p >= 8 else p for k, p in ITEM_PAGES.items()}


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("demo")
    write_demo_dataset(root)
    return root


@pytest.fixture(scope="module")
def demo_trees(demo_dir: Path) -> dict[str, Tree]:
    return {doc: build_tree(demo_dir / "pdfs" / f"{doc}.pdf", use_cache=False) for doc in DOCS}


def _squash(text: str) -> str:
    return "".join(text.split()).lower()


def test_bookmarks_only_where_expected(demo_dir):
    counts = {doc: len(pymupdf.open(demo_dir / "pdfs" / f"{doc}.pdf").get_toc()) for doc in DOCS}
    assert counts["NORTHWIND_2023_10K"] >= 20
    assert counts["BLUEFIN_2022_10K"] == 0 and counts["GRANITEPEAK_2023_10K"] == 0


@pytest.mark.parametrize("doc", DOCS)
def test_every_item_found_at_its_page(demo_trees, doc):
    tree = demo_trees[doc]
    items = {n.node_id: n for n in tree.walk() if n.kind == "item"}
    assert {k: n.start_page for k, n in items.items()} == item_pages(doc)
    for node_id, node in items.items():
        label = node_id.split("_", 1)[1].upper()
        assert _squash(f"Item {label}.") in _squash(tree.page_text(node.start_page)), node_id
    # Items sit under their Part, never under another Item
    parts = {n.node_id: [c.node_id for c in n.children] for n in tree.nodes if n.kind == "part"}
    assert parts["part_1"] == ["item_1", "item_1a", "item_1b", "item_2", "item_3", "item_4"]
    assert parts["part_3"] == ["item_10", "item_11", "item_12", "item_13", "item_14"]
    assert parts["part_2"][-3:] == ["item_9", "item_9a", "item_9b"]
    assert all(not c.children for n in tree.nodes for c in n.children if c.node_id.startswith("item_9"))


@pytest.mark.parametrize("doc", DOCS)
def test_statements_and_notes_at_their_pages(demo_trees, doc):
    tree = demo_trees[doc]
    found = [(n.node_id, n.start_page) for n in tree.walk() if n.kind in ("statement", "note")]
    assert found == FINANCIALS[doc]
    for node_id, page in found:
        node = tree.get(node_id)
        text = _squash(tree.page_text(page))
        if node.kind == "note":
            assert _squash(f"Note {node_id.rsplit('_', 1)[1]}.") in text
        else:
            assert _squash(node.title) in text and "consolidated" in _squash(node.title)


def test_statements_after_part_iv_get_their_own_section(demo_trees):
    """GRANITEPEAK's Item 8 only says "begin on page F-1": the F-pages form a section of
    their own after Item 16 (not children of Item 16), starting at the auditor's report."""
    tree = demo_trees["GRANITEPEAK_2023_10K"]
    item_16 = tree.get("item_16")
    assert (item_16.start_page, item_16.end_page, item_16.children) == (9, 9, [])
    fs = tree.get("financial_statements")
    assert (fs.start_page, fs.end_page) == (10, 15)
    assert tree.parent_of("financial_statements").node_id == "part_4"
    first = fs.children[0]
    assert first.start_page == 10 and "reportofindependent" in _squash(first.title)
    assert tree.page_label(fs.start_page) == "F-1"
    assert "begin on page F-1" in tree.node_text("item_8")


@pytest.mark.parametrize("doc", DOCS)
def test_question_evidence_falls_in_the_right_leaf(demo_dir, demo_trees, doc):
    from bench.datasets.demo_filing import write_filing
    from bench.datasets.demo_financials import PROFILES, make_financials

    profile = next(p for p in PROFILES if p.doc_id == doc)
    layout = write_filing(profile, make_financials(profile, 0))
    layout.doc.close()
    tree = demo_trees[doc]
    fs = "financial_statements" if doc.startswith("GRANITEPEAK") else "item_8"
    assert set(layout.anchors) == set(ANCHOR_NODE)
    for anchor, zero_based in layout.anchors.items():
        page = zero_based + 1
        want = ANCHOR_NODE[anchor].format(fs=fs)
        leaves = [leaf for leaf in tree.leaves() if leaf.start_page <= page <= leaf.end_page]
        assert want in [leaf.node_id for leaf in leaves], (anchor, page, [leaf.node_id for leaf in leaves])
        assert tree.get(want).kind in ("item", "statement", "note")
