"""Where a bookmark's title is printed on its page: after a label, never in the running footer."""

from __future__ import annotations

from pathlib import Path

import pymupdf

from pageindex.tree import build_tree
from tests.tree.pdf_factory import save_pdf
from tests.tree.test_layout import _body

FUNDS = [
    "Europe Select Equity Fund",
    "Europe Strategic Dividend Fund",
    "Global Core Equity Fund",
    "Japan Strategic Value Fund",
    "US Multi-Asset High Income Fund",
]


PREAMBLE = [
    "Template pre-contractual disclosure for the financial products referred to in Article 8, paragraphs 1,",
    "2 and 2a, of Regulation (EU) 2019/2088 and Article 6, first paragraph, of Regulation (EU) 2020/852.",
]


def _annexes(path: Path) -> Path:
    """A prospectus's annexes, six pages each (long enough to be split at sub-headings): under two lines
    of a template's preamble, "Product name: Acme Funds - Europe Strategic" in bold, "Dividend Fund"
    wrapped onto the next line, and every page's footer repeating the annex's name."""
    doc = pymupdf.open()
    toc = [[1, "Annexes", 1]]
    for fund in FUNDS:
        for half in range(6):
            page = doc.new_page()
            name = f"ACME FUNDS - {fund.upper()} {doc.page_count}"
            page.insert_text((72, page.rect.height - 20), name, fontname="helv", fontsize=7)
            y = 80.0
            if half == 0:
                for line in PREAMBLE:
                    page.insert_text((72, y), line, fontname="helv", fontsize=8)
                    y += 11
                first, _, rest = f"Acme Funds - {fund}".rpartition(" ")[0].rpartition(" ")
                page.insert_text((72, y + 14), f"Product name: {first}", fontname="hebo", fontsize=14)
                page.insert_text((72, y + 34), f"{rest} Fund", fontname="hebo", fontsize=14)
                toc.append([2, f"Acme Funds \\- {fund}", doc.page_count])
                y += 64
            _body(page, y, 40)
    page = doc.new_page()
    page.insert_text((72, 80), "Glossary", fontname="hebo", fontsize=14)
    _body(page, 110.0, 20)
    toc.append([1, "Glossary", doc.page_count])
    return save_pdf(doc, path, toc)


def test_a_bookmark_title_after_a_label_is_found_and_its_wrapped_end_is_no_section(tmp_path):
    tree = build_tree(_annexes(tmp_path / "prospectus.pdf"), use_cache=False)
    titles = [n.title for n in tree.walk()]
    # the producer's escape is gone, and each annex starts on its first page (under the preamble, so it
    # shares that page with the annex before it)
    for i, fund in enumerate(FUNDS):
        node = next(n for n in tree.walk() if n.title == f"Acme Funds - {fund}")
        assert (node.start_page, node.end_page) == (6 * i + 1, 6 * i + 6 + (i < len(FUNDS) - 1)), fund
    # neither the labelled first line nor the wrapped last words of a product name are a section
    assert not [t for t in titles if t.startswith("Product name") or t.endswith(" Fund")
                and not t.startswith("Acme Funds")], titles  # fmt: skip
