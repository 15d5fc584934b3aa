"""Printed page labels (``Tree.page_labels``): the number of a running header or footer, whatever
the words beside it, and never a year, a date or a figure of the page's text."""

from __future__ import annotations

from pathlib import Path

from pageindex.tree import build_tree
from tests.tree.pdf_factory import footed_pdf

PROSE = "The committee reviewed the programme during the year and reported its findings to the board."


def _labels(path: Path) -> dict[str, str]:
    return build_tree(path, use_cache=False).page_labels


def test_a_footer_of_the_number_and_the_page_count_gives_the_number(tmp_path):
    """SAP's compensation report prints "3/34" alone at the foot of each page: 0 of 34 labels were
    read (the reader took a number alone, "Page N", "N of M" or "A-12"). An excerpt's count is no
    page count of the PDF either: "Name 5/34" on its first page is printed page 5."""
    bodies = [[PROSE] * 3 for _ in range(5)]
    sap = _labels(footed_pdf(tmp_path / "sap.pdf", bodies, [f"{n}/5" for n in range(1, 6)], right=True))
    assert sap == {"1": "1", "2": "2", "3": "3", "4": "4", "5": "5"}
    named = [f"Compensation Report 2023 {n}/34" for n in range(5, 10)]
    assert _labels(footed_pdf(tmp_path / "named.pdf", bodies, named)) == {
        "1": "5", "2": "6", "3": "7", "4": "8", "5": "9"
    }


def test_a_running_title_beside_the_number_gives_the_number(tmp_path):
    """The JPMorgan prospectus prints "JPMORGAN INVESTMENT FUNDS 3" (0 of 261 labels); NIKE's 10-K
    sets "2019 FORM 10-K 13" on odd pages and "14 NIKE, INC." on even ones, the number after a year
    on the odd ones (the year is no label); a cover without a footer has none."""
    bodies = [[PROSE] * 3 for _ in range(6)]
    feet = [None] + [f"ACME INVESTMENT FUNDS {n}" for n in range(2, 7)]
    assert _labels(footed_pdf(tmp_path / "fund.pdf", bodies, feet, right=True)) == {
        "2": "2", "3": "3", "4": "4", "5": "5", "6": "6"
    }
    feet = [f"2019 FORM 10-K {n - 2}" if n % 2 else f"{n - 2} ACME, INC." for n in range(3, 9)]
    assert _labels(footed_pdf(tmp_path / "nike.pdf", bodies, feet)) == {
        "1": "1", "2": "2", "3": "3", "4": "4", "5": "5", "6": "6"
    }


def test_a_year_or_a_date_in_the_footer_is_not_read(tmp_path):
    """Mandarine's footer "Rapport annuel au 31 Décembre 2020 6" gives 6, not the day or the year;
    a footer with only the report's year and a header with the date give no label at all."""
    bodies = [[PROSE] * 3 for _ in range(4)]
    feet = [f"Rapport annuel au 31 Décembre 2020 {n}" for n in range(6, 10)]
    assert _labels(footed_pdf(tmp_path / "fr.pdf", bodies, feet)) == {"1": "6", "2": "7", "3": "8", "4": "9"}
    heads = [f"Report dated May {day}, 2023" for day in (4, 5, 6, 7)]
    assert _labels(footed_pdf(tmp_path / "year.pdf", bodies, ["ACME Annual Report 2023"] * 4, heads)) == {}


def test_a_number_of_the_body_is_not_read(tmp_path):
    """A page whose text ends in a table's lone figure ("250", "17") or whose last lines hold a
    count printed alone was given that figure as its printed number; numbers that do not rise with
    the page are none, and neither are section numbers heading consecutive pages ("Exhibit 21")."""
    bodies = [[PROSE, "Units shipped", n] for n in ("250", "17", "4", "980")]
    assert _labels(footed_pdf(tmp_path / "table.pdf", bodies, [None] * 4)) == {}
    heads = [f"Exhibit {n}" for n in (21, 22, 23, 24)]
    assert _labels(footed_pdf(tmp_path / "exhibits.pdf", [[PROSE] * 3] * 4, [None] * 4, heads)) == {}


def test_a_one_page_exhibit_keeps_a_folio_that_is_one_by_its_look(tmp_path):
    """One-page exhibits and appendices print "A-1", "C-2", "- 1 -" or "i" at their foot with no page
    near in that shape (Boeing's and PepsiCo's "A-1", American Water's "-1-", MGM's "i"): the rising
    rule lost them. A bare number alone on such a page stays unread (a stray "8" over an auditor's
    consent, a figure ending a page), and so does a folio-shaped line that is not at the foot."""
    bodies = [[PROSE] * 3 for _ in range(6)]
    feet = ["10", "11", "A-1", "- 1 -", "ii", "8"]
    assert _labels(footed_pdf(tmp_path / "exhibits.pdf", bodies, feet)) == {
        "1": "10", "2": "11", "3": "A-1", "4": "1", "5": "ii"
    }
    headed = _labels(footed_pdf(tmp_path / "head.pdf", [[PROSE] * 3] * 2, [None, None], ["A-1", "ii"]))
    assert headed == {}
