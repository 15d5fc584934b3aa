"""The cover's own structure: the blocks 10-K, 10-Q and 8-K covers print before the contents."""

from __future__ import annotations

import json
import re

import pymupdf
import pytest

from pageindex.tree import Tree, build_tree
from tests.tree.test_real_filings import squash

COVER_DOCS = [
    "AMERICANEXPRESS_2022_10K",
    "AMCOR_2023Q2_10Q",
    "JPMORGAN_2021Q1_10Q",
    "FOOTLOCKER_2022_8K_dated-2022-05-20",
    "VERIZON_2021_10K",
]
# what each block's first line says (whitespace removed), as the filings print it
BLOCK_TEXT = {
    "securities_12b": r"securitiesregisteredpursuanttosection12\(b\)",
    "securities_12g": r"securitiesregisteredpursuanttosection12\(g\)",
    "filer_status": r"indicatebycheckmark",
    "documents_incorporated_by_reference": r"documentsincorporatedbyreference",
}
TITLE_12B = "Securities registered pursuant to Section 12(b) of the Act"
TITLE_12G = "Securities registered pursuant to Section 12(g) of the Act"


def cover_ids(tree: Tree) -> list[str]:
    return [c.node_id for c in tree.get("cover").children]


def leaves_on(tree: Tree, page: int) -> list[str]:
    return [leaf.node_id for leaf in tree.leaves() if leaf.start_page <= page <= leaf.end_page]


@pytest.mark.parametrize("doc", COVER_DOCS)
def test_cover_children_cover_the_cover_in_order(built, doc):
    tree = built(doc)
    cover = tree.get("cover")
    children = cover.children
    assert children[0].node_id == "cover/title_page" and children[0].kind == "cover"
    assert children[0].start_page == 1 and children[-1].end_page == cover.end_page
    for prev, nxt in zip(children, children[1:], strict=False):
        assert nxt.start_page in (prev.end_page, prev.end_page + 1), (prev.node_id, nxt.node_id)
    for child in children[1:]:
        assert child.kind == ("cover" if child.node_id == "cover/front_matter" else "heading")
        key = child.node_id.split("/", 1)[1]
        if key in BLOCK_TEXT:  # the block's phrase is printed on its first page
            assert re.search(BLOCK_TEXT[key], squash(tree.page_text(child.start_page))), child.node_id
    # the first section after the cover starts where it did before the cover had children
    assert tree.nodes[1].start_page in (cover.end_page, cover.end_page + 1)


def test_amex_evidence_page_is_in_the_12b_block(built, fb_dir):
    """FinanceBench 00476 asks which debt securities AmEx registered on an exchange: the answer
    is the cover's Section 12(b) table, on zero-based evidence page 0."""
    tree = built("AMERICANEXPRESS_2022_10K")
    with (fb_dir / "questions.jsonl").open() as fh:
        question = next(q for q in map(json.loads, fh) if q["financebench_id"] == "financebench_id_00476")
    page = question["evidence"][0]["evidence_page_num"] + 1
    assert page == 1
    block = tree.get("cover/securities_12b")
    assert block.kind == "heading" and block.start_page <= page <= block.end_page
    assert block.title == TITLE_12B
    assert "cover/securities_12b" in leaves_on(tree, page)
    row = "Common Shares (par value $0.20 per Share) AXP New York Stock Exchange"
    assert row in tree.node_text(block.node_id)
    assert cover_ids(tree) == [
        "cover/title_page",
        "cover/securities_12b",
        "cover/securities_12g",
        "cover/filer_status",
        "cover/shares_outstanding",
        "cover/documents_incorporated_by_reference",
        "cover/table_of_contents",
        "cover/front_matter",  # page 3: forward-looking statements with no heading of their own
    ]
    assert tree.get("cover/securities_12g").title == f"{TITLE_12G}: None"
    contents = tree.get("cover/table_of_contents")
    assert (contents.start_page, contents.end_page) == (2, 2)
    assert tree.get("cover/front_matter").kind == "cover"
    assert tree.get("part_1").start_page == 4  # unchanged by the cover's children


def test_10q_cover_in_body_type_over_two_pages(built):
    """AMCOR's 10-Q prints its cover blocks in body type; the check marks run on to page 2."""
    tree = built("AMCOR_2023Q2_10Q")
    spans = {c.node_id: (c.start_page, c.end_page) for c in tree.get("cover").children}
    assert spans == {
        "cover/title_page": (1, 1),
        "cover/securities_12b": (1, 1),
        "cover/filer_status": (1, 2),
        "cover/shares_outstanding": (2, 2),
        "cover/table_of_contents": (3, 3),
        "cover/cautionary_statement_regarding_forward": (4, 4),
    }
    assert "1,485,779,968 ordinary shares" in tree.node_text("cover/shares_outstanding")
    assert "cover/securities_12g" not in tree  # 10-Q covers have no Section 12(g) block


def test_outline_strategy_cover_gets_blocks_too(built):
    tree = built("JPMORGAN_2021Q1_10Q")
    assert tree.strategy == "outline"
    assert cover_ids(tree) == [
        "cover/title_page",
        "cover/securities_12b",
        "cover/filer_status",
        "cover/shares_outstanding",
    ]
    assert "3,027,128,112" in tree.node_text("cover/shares_outstanding")


def test_8k_cover_blocks_and_items_unchanged(built):
    tree = built("FOOTLOCKER_2022_8K_dated-2022-05-20")
    assert cover_ids(tree) == ["cover/title_page", "cover/securities_12b", "cover/filer_status"]
    assert tree.get("item_5_07").start_page == 2


def test_continued_12b_table_is_one_block(built):
    """Verizon's 12(b) table runs on to page 2 under "(continued)": one block, not two."""
    tree = built("VERIZON_2021_10K")
    block = tree.get("cover/securities_12b")
    assert (block.start_page, block.end_page) == (1, 2)
    assert "cover/securities_12b_2" not in tree
    assert tree.get("cover/securities_12g").start_page == 2


@pytest.mark.parametrize("doc", ["ULTABEAUTY_2023Q4_EARNINGS", "AMCOR_2023Q4_EARNINGS"])
def test_earnings_release_has_no_cover_blocks(built, doc):
    tree = built(doc)
    assert not [n.node_id for n in tree.walk() if n.node_id.startswith("cover")]


# --- small PDFs made in the test -------------------------------------------------------------


def _cover_pdf(path, cover_lines: list[str], body_lines: list[str]):
    """Page 1: ``cover_lines`` in body type; page 2: a bold Item 1 heading, then ``body_lines``."""
    doc = pymupdf.open()
    page = doc.new_page()
    for i, line in enumerate(cover_lines):
        page.insert_text((72, 72 + 14 * i), line, fontname="helv", fontsize=9)
    page = doc.new_page()
    page.insert_text((72, 72), "PART I", fontname="hebo", fontsize=10)
    page.insert_text((72, 86), "Item 1. Business", fontname="hebo", fontsize=10)
    for i, line in enumerate(body_lines):
        page.insert_text((72, 100 + 14 * i), line, fontname="helv", fontsize=10)
    doc.save(path)
    doc.close()
    return path


def test_split_words_in_body_type_are_found_only_on_the_cover(tmp_path):
    cover = [
        "UNITED STATES SECURITIES AND EXCHANGE COMMISSION",
        "FORM 10-K",
        "Acme Corp",
        "Securi ties regis tered pursuant to Sec tion 12(b) of the Act:",
        "Common Stock ACME New York Stock Exchange",
        "If securities are registered pursuant to Section 12(b) of the Act, indicate by check mark",
        "DOCUMENTS INCORPO RATED BY REFERENCE",
        "Portions of the proxy statement are incorporated into Part III.",
    ]
    body = ["Our business makes widgets.", "Securities registered pursuant to Section 12(g) of the Act: None"]
    tree = build_tree(_cover_pdf(tmp_path / "cover.pdf", cover, body), use_cache=False)
    assert cover_ids(tree) == [
        "cover/title_page",
        "cover/securities_12b",
        "cover/documents_incorporated_by_reference",
    ]
    assert tree.get("cover/securities_12b").title == TITLE_12B  # not the split words as printed
    assert "cover/securities_12g" not in tree  # printed after Item 1: not a cover block
    leaves = tree.leaves()
    assert [leaf.node_id for leaf in leaves][:3] == cover_ids(tree)
    assert leaves[-1].end_page == tree.page_count == 2


def test_cover_without_blocks_stays_one_leaf(tmp_path):
    cover = ["UNITED STATES SECURITIES AND EXCHANGE COMMISSION", "FORM 10-K", "Acme Corp", "Annual report"]
    tree = build_tree(_cover_pdf(tmp_path / "plain.pdf", cover, ["Our business."]), use_cache=False)
    cover_node = tree.get("cover")
    assert cover_node.is_leaf and cover_node.kind == "cover" and cover_node.end_page == 1
