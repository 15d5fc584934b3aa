"""More than two sub-headings on one page of a long Item, when they are set as the Item's most prominent
sub-headings are (TSMC's 20-F opens Item 4 with four on one page: "Our History and Structure", "Our
Principal Office", ...; it had kept the first and the last). A page's other extra candidates stay
dropped: a heading set less prominently than the Item's top sub-headings, indented from the text edge, a
sentence (a risk factor's caption), a table's caption. Small PDFs made in the test."""

from __future__ import annotations

import pymupdf

from pageindex.tree import build_tree

_PROSE = "The Company designs and makes semiconductors for customers in many markets around the world"
_ROW = "Net revenue                                   1,234            1,120            1,050"


def _item_pdf(path, pages: dict[int, list[tuple]], count: int = 8):
    """Item 1 running over ``count`` pages of prose; page n (1-based) is ``pages[n]`` instead: rows of
    (text, font, x[, size]), where font "hebo" is bold and "prose" stands for three lines of body
    text; the size is 10 unless given."""
    doc = pymupdf.open()
    for n in range(1, count + 1):
        page = doc.new_page()
        y = 72.0
        if n == 1:
            page.insert_text((72, y), "Item 1. Business", fontname="hebo", fontsize=10)
            y += 20
        for text, font, x, *size in pages.get(n, [("prose", "helv", 72)] * 10):
            for line in [_PROSE, _PROSE, "and it ends here."] if text == "prose" else [text]:
                page.insert_text((x, y), line, fontname=font, fontsize=size[0] if size else 10)
                y += 14
            y += 6
    page = doc.new_page()
    page.insert_text((72, 72), "Item 2. Properties", fontname="hebo", fontsize=10)
    page.insert_text((72, 86), _PROSE, fontname="helv", fontsize=10)
    doc.save(path)
    doc.close()
    return path


def _children(path) -> list[tuple[str, int]]:
    tree = build_tree(path, use_cache=False)
    return [(c.title, c.start_page) for c in tree.get("item_1").children if not c.node_id.endswith("/intro")]


def _headed(*titles: str, x: float = 72) -> list[tuple[str, str, float]]:
    return [row for title in titles for row in ((title, "hebo", x), ("prose", "helv", 72))]


def test_an_items_sub_headings_on_one_page_are_all_kept(tmp_path):
    four = ("Our History and Structure", "Our Principal Office", "Business Overview", "Our Facilities")
    pdf = _item_pdf(tmp_path / "item.pdf", {2: _headed(*four), 5: _headed("Competition")})
    assert _children(pdf) == [*((title, 2) for title in four), ("Competition", 5)]


def test_a_pages_less_prominent_candidates_stay_dropped(tmp_path):
    caption = "If we cannot manage our capacity and production facilities, our revenue may fall"
    indented = _headed("Voting Rights", "Liquidation Rights", x=100)
    page = [
        *_headed("Markets and Customers"),
        *_headed(caption),  # a sentence: a risk factor's caption
        *indented,  # indented from the page's text edge
        ("Revenue by Product", "hebo", 72), (_ROW, "helv", 72), (_ROW, "helv", 72),  # a table's caption
        *_headed("Research and Development"),
    ]  # fmt: skip
    pdf = _item_pdf(tmp_path / "item.pdf", {3: page})
    assert _children(pdf) == [("Markets and Customers", 3), ("Research and Development", 3)]


def test_title_case_headings_under_capitals_stay_dropped(tmp_path):
    """The Item's most prominent sub-headings are set in capitals: on a page with more than two, one in
    capitals is kept, the title-case ones under it (a lower level) are not."""
    page = [
        *_headed("Net Sales"),
        *_headed("CRITICAL ACCOUNTING ESTIMATES"),
        *_headed("Operating Expenses", "Cost of Sales"),
        *_headed("Income Taxes"),
    ]
    pdf = _item_pdf(tmp_path / "item.pdf", {2: _headed("RESULTS OF OPERATIONS"), 4: page})
    kept = [("Net Sales", 4), ("CRITICAL ACCOUNTING ESTIMATES", 4), ("Income Taxes", 4)]
    assert _children(pdf) == [("RESULTS OF OPERATIONS", 2), *kept]


def test_a_section_that_is_no_item_keeps_two_a_page(tmp_path):
    """Deeper than an Item (here the notes to the statements, whose accounting-policy paragraphs are
    headed so), a page's sub-headings are a lower level: the first and the last are kept, as before."""
    doc = pymupdf.open()
    four = ("Basis of Presentation", "Use of Estimates", "Fiscal Year", "Receivables")
    for n in range(1, 10):
        page = doc.new_page()
        y = 72.0
        if n == 1:
            for title in ("Item 8. Financial Statements", "Notes to Consolidated Financial Statements"):
                page.insert_text((72, y), title, fontname="hebo", fontsize=10)
                y += 20
        for text, font, x in _headed(*four) if n == 2 else [("prose", "helv", 72)] * 10:
            for line in [_PROSE, _PROSE, "and it ends here."] if text == "prose" else [text]:
                page.insert_text((x, y), line, fontname=font, fontsize=10)
                y += 14
            y += 6
    doc.new_page().insert_text((72, 72), "Item 9. Controls and Procedures", fontname="hebo")
    doc.save(tmp_path / "notes.pdf")
    doc.close()
    notes = build_tree(tmp_path / "notes.pdf", use_cache=False).get("item_8/notes")
    assert notes.kind != "item"
    assert [c.title for c in notes.children if c.start_page == 2] == ["Basis of Presentation", "Receivables"]


def test_a_pages_sub_headings_all_set_alike_are_all_kept(tmp_path):
    """NVIDIA's 10-Q p. 33: "Capital Return to Shareholders", "Outstanding Indebtedness and Commercial
    Paper", "Material Cash Requirements and Other Obligations", all bold 9 pt, under the Item's 9.9 pt
    sub-headings: the middle one was dropped (the page kept its first and last), and its debt table fell
    under "Capital Return to Shareholders". Headings of a page all set alike are siblings."""
    three = ("Capital Return to Shareholders", "Outstanding Indebtedness", "Material Cash Requirements")
    top = [("Liquidity and Capital Resources", "hebo", 72, 11), ("prose", "helv", 72)]
    pdf = _item_pdf(tmp_path / "item.pdf", {2: top, 4: _headed(*three)})
    # (smaller than the Item's largest sub-heading, after it: its children)
    assert _tree_of(pdf) == [("Liquidity and Capital Resources", 2, 0), *((title, 4, 1) for title in three)]


def test_a_running_footer_set_above_the_margin_is_no_sub_heading(tmp_path):
    """NIKE's 2019 10-K sets its even pages' footer "2 NIKE, INC." halfway down the page, where the
    margin band that knows running footers does not reach: 25 of them were Item 1's sub-headings. A line
    that prints its page's number (the page-label reader's running header or footer) is none."""
    prose = [("prose", "helv", 72)] * 4
    pages = {n: [*prose, (f"{n} ACME, INC.", "helv", 72)] for n in range(1, 9)}
    pages[5] = [*_headed("Competition"), *prose, ("5 ACME, INC.", "helv", 72)]
    pdf = _item_pdf(tmp_path / "item.pdf", pages)
    assert _children(pdf) == [("Competition", 5)]
    assert build_tree(pdf, use_cache=False).page_labels["6"] == "6"


def _tree_of(path) -> list[tuple[str, int, int]]:
    """(title, start page, depth under the Item) of every section inside Item 1, intros left out."""
    item = build_tree(path, use_cache=False).get("item_1")

    def walk(node, depth):
        for child in node.children:
            if not child.node_id.endswith("/intro"):
                yield child.title, child.start_page, depth
            yield from walk(child, depth + 1)

    return list(walk(item, 0))


def test_smaller_sub_headings_after_a_larger_one_are_its_children(tmp_path):
    """NVIDIA's 10-Q sets its MD&A's main sub-headings in 9.9 pt ("Results of Operations", "Liquidity and
    Capital Resources") and the ones inside them in 9 pt ("Revenue", "Liquidity"): the 9 pt ones were the
    Item's children beside them ("Liquidity" a sibling of "Liquidity and Capital Resources"). A sub-heading
    set smaller than the Item's largest ones, after one of those, is its child; one before any of those
    stays the Item's."""
    big = [("prose", "helv", 72)]
    pages = {
        2: [("Forward-Looking Statements", "hebo", 72), *big],
        3: [("Results of Operations", "hebo", 72, 11), *big],
        4: _headed("Revenue"),
        5: _headed("Gross Margin"),
        6: [("Liquidity and Capital Resources", "hebo", 72, 11), *big, *_headed("Liquidity")],
        7: _headed("Capital Return to Shareholders"),
    }
    pdf = _item_pdf(tmp_path / "item.pdf", pages)
    assert _tree_of(pdf) == [
        ("Forward-Looking Statements", 2, 0),
        ("Results of Operations", 3, 0),
        ("Revenue", 4, 1),
        ("Gross Margin", 5, 1),
        ("Liquidity and Capital Resources", 6, 0),
        ("Liquidity", 6, 1),
        ("Capital Return to Shareholders", 7, 1),
    ]
    tree = build_tree(pdf, use_cache=False)
    results = tree.get("item_1/results_of_operations")
    assert (results.start_page, results.end_page) == (3, 5)
    # Results' own page 3 is its opening leaf; the leaves still cover every page, in order
    assert [(leaf.title, leaf.start_page) for leaf in tree.leaves()][2:4] == [
        ("Results of Operations", 3), ("Revenue", 4)
    ]
    assert [leaf.start_page for leaf in tree.leaves()] == [1, 2, 3, 4, 5, 6, 7, 9]
    liquidity = tree.get("item_1/liquidity_and_capital_resources")
    assert (liquidity.start_page, liquidity.end_page) == (6, 8)


def test_a_smaller_heading_after_a_larger_one_left_out_is_not_given_the_one_before(tmp_path):
    """Pfizer's "Cost of Sales" (7.1 pt) is under "Costs and Expenses" (7.8 pt), which its page did not keep
    (a page keeps its first and last sub-headings): it is not made a child of the last 7.8 pt heading kept
    before it, which is not its parent; it stays the Item's, as before."""
    big = [("prose", "helv", 72)]
    page = [
        *_headed("Revenue"),
        ("Costs and Expenses", "hebo", 72, 11), (_ROW, "helv", 72), (_ROW, "helv", 72),  # a table's caption
        *_headed("Cost of Sales", "Income Taxes"),
    ]  # fmt: skip
    pdf = _item_pdf(tmp_path / "item.pdf", {3: [("Results of Operations", "hebo", 72, 11), *big], 4: page})
    assert _tree_of(pdf) == [("Results of Operations", 3, 0), ("Revenue", 4, 1), ("Income Taxes", 4, 0)]


def test_a_smaller_heading_set_bolder_than_the_larger_one_before_is_not_its_child(tmp_path):
    """MGM's exhibit list, headed by a bold 7.3 pt "Exhibit Number", follows a blue 8.7 pt link to the
    auditor's report: the bold line stands out in a way the larger one does not, so it is none of its."""
    doc = pymupdf.open()
    for n in range(1, 9):
        page = doc.new_page()
        first = ("Item 1. Business", "hebo") if n == 1 else (_PROSE, "helv")
        page.insert_text((72, 72), first[0], fontname=first[1])
        if n == 3:
            blue = (0, 0, 1)
            page.insert_text((72, 100), "Report of the Auditors", fontname="helv", fontsize=11, color=blue)
            page.insert_text((72, 120), _PROSE, fontname="helv", fontsize=10)
        if n == 5:
            page.insert_text((72, 100), "Exhibit Index", fontname="hebo", fontsize=10)
            page.insert_text((72, 120), _PROSE, fontname="helv", fontsize=10)
    doc.new_page().insert_text((72, 72), "Item 2. Properties", fontname="hebo", fontsize=10)
    doc.save(tmp_path / "item.pdf")
    doc.close()
    assert _tree_of(tmp_path / "item.pdf") == [("Report of the Auditors", 3, 0), ("Exhibit Index", 5, 0)]
