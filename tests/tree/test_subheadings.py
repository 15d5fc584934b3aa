"""Sub-headings inside long sections: the last line of a paragraph is not a heading, whether it sits over a
rule (read as underlined) or stands out only by its capitals or colour (trial 12: TSMC's 20-F had "R.O.C.
FSC)." and, in an exhibit printed in black where the body is grey, "New Taiwan Dollars each, and may be
paid-up in installments." as sections). Pages made of lines, written from the rule. (A paragraph set in
bold is left a heading: 10-K risk factors are captioned so.)"""

from __future__ import annotations

import pytest

from pageindex.tree.pdf import Line, Page
from pageindex.tree.split import SubheadingRules, is_plain_subheading, subheading_drafts

WIDE = "further issuance would be treated as part of the same issue as the relevant series of the Notes for"


def _page(rows: list[tuple[str, bool, bool]], color: int = 0) -> Page:
    """Lines from (text, bold, underlined), 11 points apart, in ``color``; long lines run to the right
    edge; a line all in capitals is marked so."""
    lines = []
    for i, (text, bold, underlined) in enumerate(rows):
        x1 = 72 + 4.6 * len(text)
        y = 100 + 11 * i
        right = min(x1, 540)
        caps = text.isupper()
        lines.append(Line(1, text, bold, caps, False, 72, right, y, y + 9, 9.0, color, underlined=underlined))
    return Page(1, 612, 792, lines)


def test_an_underlined_line_that_ends_a_paragraph_is_no_heading():
    last = "States federal income tax purposes."
    page = _page([(WIDE, False, False), (last, False, True), (WIDE, False, False)])
    assert not is_plain_subheading(page, 1, frozenset())
    # after a finished paragraph an underlined line is a heading, as before
    done = "The Notes are issued in registered form."
    page = _page([(done, False, False), ("Optional Redemption", False, True), (WIDE, False, False)])
    assert is_plain_subheading(page, 1, frozenset())


@pytest.mark.parametrize("color,body", [(0, 0x212529), (0x212529, 0x212529)])
def test_a_paragraphs_last_line_in_capitals_or_another_colour_is_no_heading(color, body):
    """Body grey (0x212529): a black page (an exhibit) makes every short line "a colour of its own";
    on a grey page a short line in capitals ("R.O.C. FSC).") stands out the same way."""
    rules = SubheadingRules(frozenset(), body, 9.0)
    tail = "NEW TAIWAN DOLLARS EACH." if color == body else "New Taiwan Dollars each, and may be paid-up."
    rows = [(WIDE, False, False), (tail, False, False), ("Article 7", True, False), (WIDE, False, False)]
    page = _page(rows, color)
    assert [d.title for d in subheading_drafts([page], 1, 1, 0.0, 2, rules)] == ["Article 7"]
    # after a finished sentence the same line is a heading, as before, unless it reads as a sentence itself
    # and stands out by its colour alone (a one-line paragraph: the review of the non-10-K filings)
    done = (
        "The Corporation is organised under the Company Law, and all of its shares are "
        "issued in registered form."
    )
    assert len(done) >= 100  # a long line is never "a heading in a colour of its own"
    page = _page([(done, False, False), (tail, False, False), (WIDE, False, False)], color)
    expected = [tail] if color == body else []
    assert [d.title for d in subheading_drafts([page], 1, 1, 0.0, 2, rules)] == expected
    title = "NEW TAIWAN DOLLAR SHARES" if color == body else "New Taiwan Dollar Shares"
    page = _page([(done, False, False), (title, False, False), (WIDE, False, False)], color)
    assert [d.title for d in subheading_drafts([page], 1, 1, 0.0, 2, rules)] == [title]


def test_a_heading_in_capitals_after_a_table_row_is_a_heading():
    """Review 12: a table row ending in a figure at the right edge does not run on into the next line."""
    rules = SubheadingRules(frozenset(), 0, 9.0)
    row = "Total current liabilities                                                      12,345      11,002"
    heading = "LIQUIDITY AND CAPITAL RESOURCES"
    page = _page([(WIDE, False, False), (row, False, False), (heading, False, False), (WIDE, False, False)])
    assert [d.title for d in subheading_drafts([page], 1, 1, 0.0, 2, rules)] == [heading]
