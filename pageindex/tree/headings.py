"""SEC filing structure from visual lines: Parts, Items, financial statements, notes.

Rules (measured on real filings, see ``filing-structure.md``): emphasis (bold, all caps,
centring) and sequence, never font size alone. Titles are matched on text with the
whitespace removed, because some renderers split words ("Busines s", "PART II I").
Table-of-contents pages and running headers are not headings.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from pageindex.tree.pdf import Line, Page, compact

# kinds of heading, and their nesting level in the tree
LEVEL = {
    "part": 1,
    "item": 2,
    "exhibit": 2,
    "financials": 2,  # statements printed after the last Item ("F-pages")
    "back": 2,  # exhibit index / signatures closing those F-pages
    "opening": 3,  # auditor's report / index opening those F-pages
    "statement": 3,
    "notes": 3,
    "note": 3,
}

_ROMAN = {"i": 1, "ii": 2, "iii": 3, "iv": 4}
_PART = re.compile(r"^part\s*(i\s?v|i\s?i\s?i|i\s?i|i)(?![a-z])", re.IGNORECASE)  # "PART I V" is IV
_ITEM = re.compile(
    # the letter runs to "K": a 20-F has Items 4A, 12D and 16A-16K (a 10-K's go to 1C and 9C)
    r"^items?\s*(\d{1,2})\s*(?:(\.\s*\d{2})(?!\d)|\(?([a-k])(?![a-z])\)?)?\s*(?=[\.,:\-–—\s]|$)",
    re.IGNORECASE,
)
_PART_TITLED = re.compile(r"^(?i:part)\s*[IV](?:\s?[IV])*\s*[–—\-.:]\s*[A-Z][a-z]")
_ENDS_IN_PAGE_NUMBER = re.compile(r"(?:\.{2,}|\s)\s*(?:[A-Z]-)?\d{1,3}\s*$")
_NOTE = re.compile(r"^note\s*(\d{1,2})(?!\d)\s*(?:[\.:\-–—]|\s|$)", re.IGNORECASE)
_NUMBERED = re.compile(r"^(\d{1,2})\s?\.\s+[A-Z]")
_NOTES_TITLE = re.compile(
    r"^(?!see)[a-z0-9&,.'’\-]{0,40}?notesto(?:the)?(?:unaudited)?(?:condensed)?(?:consolidated)?(?:condensed)?financialstatements"
)
# what may precede a statement title on its line: a company name, "consolidated", "condensed"...
_STATEMENT_PREFIX = re.compile(
    r"^(?:.*?(?:inc\.?|corporation|company|corp\.?|co\.|subsidiaries|ltd\.?|plc|llc|group|n\.v\.|s\.a\.)[,.]?)?"
    r"(?:u\.?s\.?)?(?:gaap)?(?:the)?(?:unaudited)?(?:condensed)?(?:consolidated)?(?:combined)?(?:condensed)?(?:and)?$"
)
# An exhibit's number may carry a letter, as Form 20-F's instructions number them ("2(a)", "2(d)") and
# filers print them ("Exhibit 2a.1", "Exhibit 4(b)", "Exhibit 10.1a").
_EXHIBIT = re.compile(r"^exhibit(\d{1,3}(?:[a-z]|\([a-z]\))?(?:\.\d{1,2}[a-z]?)?)$", re.IGNORECASE)

# financial statements: compact (no whitespace, lower case) patterns -> statement key
_STATEMENTS: list[tuple[str, re.Pattern[str]]] = [
    (
        "comprehensive_income",
        re.compile(
            r"statements?of(?:consolidated)?comprehensive(?:income|loss|earnings)|comprehensive(?:income|loss)statements?"
        ),
    ),
    ("cash_flows", re.compile(r"statements?of(?:consolidated)?cashflows?|cashflows?statements?")),
    (
        "balance_sheet",
        re.compile(
            r"balancesheets?|statements?of(?:consolidated)?financial(?:position|condition)|statements?ofcondition"
        ),
    ),
    (
        "equity",
        re.compile(
            r"statements?of(?:consolidated)?(?:changesin)?(?:total)?(?:share(?:holders|owners)|stockholders|shareowners|members)?['’]?(?:equity|deficit)|(?:equity|stockholders['’]?equity)statements?"
        ),
    ),
    (
        "income",
        re.compile(
            r"statements?of(?:consolidated)?(?:income|operations|earnings|(?:net)?income|profitorloss|profitandloss)"
            r"|incomestatements?|statementsofoperations"
        ),
    ),
]
STATEMENT_TITLES = {
    "income": "Income statement",
    "comprehensive_income": "Statement of comprehensive income",
    "balance_sheet": "Balance sheet",
    "cash_flows": "Cash flow statement",
    "equity": "Statement of equity",
}


@dataclass(slots=True)
class Heading:
    """A detected section start: ``key`` is stable and readable (``item_7``, ``note_3``)."""

    kind: str
    key: str
    title: str
    page: int
    y: float
    at_top: bool  # nothing but running-header material above it on its page
    order: tuple = ()  # sequence key (items, notes)

    @property
    def level(self) -> int:
        return LEVEL.get(self.kind, 4)


def _emphasised(line: Line) -> bool:
    return line.bold or line.caps


# a line that begins inside a sentence: a lower-case word, then two more words ("and investing in our
# associates, ..."): the text of the page before running on, never a running header
_CARRIED_OVER = re.compile(r"[a-z][a-z'’-]*\s+\S+\s+\S")


def at_top(page: Page, line: Line) -> bool:
    """True when little text precedes ``line`` on its page (a running header at most).

    Little means under 120 characters, or at most three short lines (a running header, a
    company name; body lines are longer) when the line still sits in the top 18% of the page;
    and no line of it carries a sentence over from the page before (the section before then
    ends on this page: a release's paragraph ending in two short lines above the next heading).
    """
    before = count = longest = 0
    for other in page.lines:
        if other is line:
            break
        if _CARRIED_OVER.match(other.text):
            return False
        before += len(other.text)
        count += 1
        longest = max(longest, len(other.text))
    return before < 120 or (count <= 3 and longest < 100 and line.y0 < page.height * 0.18)


def _is_notes_index(page: Page) -> bool:
    """A page listing the notes with page numbers (an index, not the notes themselves)."""
    return (
        sum(1 for line in page.lines if _NOTE.match(line.text) and _ENDS_IN_PAGE_NUMBER.search(line.text))
        >= 5
    )


def _listed_without_body(page: Page, item_rows: list[int]) -> bool:
    """True when the Item lines follow one another with (almost) no text between them.

    A contents page lists Items back to back (a wrapped title at most); a page that really
    holds several short Items (Part III "incorporated by reference") has body text between
    them. Measured: median gap 0 characters on every FinanceBench contents page, 99+ on
    every content page with 5+ Items.
    """
    lines = page.lines
    gaps = sorted(
        sum(len(lines[k].text) for k in range(a + 1, b))
        for a, b in zip(item_rows, item_rows[1:], strict=False)
    )
    return not gaps or gaps[len(gaps) // 2] < 40


def is_toc_page(page: Page) -> bool:
    """A contents page: many Items listed back to back or with page numbers, many notes, or 3+ Parts."""
    item_rows = [i for i, line in enumerate(page.lines) if _ITEM.match(line.text)]
    numbered = sum(1 for i in item_rows if _ENDS_IN_PAGE_NUMBER.search(page.lines[i].text))
    listed = len(item_rows) >= 8 and _listed_without_body(page, item_rows)
    items = len(item_rows) if listed or numbered >= 3 else 0
    notes = 0 if _is_notes_index(page) else sum(1 for line in page.lines if _NOTE.match(line.text))
    parts = {compact(line.text) for line in page.lines if _PART.match(line.text) and len(line.text) < 60}
    return items >= 5 or notes >= 8 or len(parts) >= 3


def part_rank(m: re.Match[str]) -> int:
    """1..4 for a ``_PART`` match ("PART II I" counts as III)."""
    return _ROMAN[re.sub(r"\s", "", m.group(1)).lower()]


def _item_order(m: re.Match[str]) -> tuple[int, int]:
    num = int(m.group(1))
    if m.group(2):
        return (num, int(m.group(2).replace(".", "").strip()))
    if m.group(3):
        return (num, ord(m.group(3).lower()) - ord("a") + 1)
    return (num, 0)


def item_key(m: re.Match[str]) -> str:
    num = m.group(1)
    if m.group(2):
        return f"item_{num}_{m.group(2).replace('.', '').strip()}"
    if m.group(3):
        return f"item_{num}{m.group(3).lower()}"
    return f"item_{num}"


def slug(text: str, limit: int = 40) -> str:
    """A readable id fragment: lower case, underscores, at most ``limit`` characters; accented letters
    lose their accents ("Décembre" -> ``decembre``, not ``d_cembre``)."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    s = re.sub(r"[^a-z0-9]+", "_", plain.lower()).strip("_")
    if len(s) > limit:
        s = s[:limit].rsplit("_", 1)[0] or s[:limit]
    return s or "section"


def _clean_title(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text[:120]


def _longest_increasing(cands: list[Heading]) -> list[Heading]:
    """Longest strictly increasing run by ``order``; ties resolved towards earlier candidates."""
    n = len(cands)
    if n == 0:
        return []
    best = [1] * n
    prev = [-1] * n
    for i in range(n):
        for j in range(i):
            if cands[j].order < cands[i].order and best[j] + 1 > best[i]:
                best[i] = best[j] + 1
                prev[i] = j
    top = max(best)
    i = best.index(top)
    out = []
    while i >= 0:
        out.append(cands[i])
        i = prev[i]
    return out[::-1]


# after a statement's name, a word saying the heading discusses it (MD&A's "Consolidated Balance Sheets and
# Cash Flows Analysis" in JPMorgan's 10-Qs; "Balance sheet data" in selected financial data): no statement.
# The word ends the heading, bracketed text taken out first (a unit line "(In millions, except per share
# data)" says nothing of the kind), so a company named "Datadog" stays a name
_DISCUSSES = re.compile(
    r"(?:analysis|analyses|discussion|review|overview|highlights|data|summary|trends)[^a-z]*$"
)
_BRACKETED = re.compile(r"\([^()]*\)?")


def statement_key(c: str) -> str | None:
    """The statement a compact heading (lower case, no spaces) names, or None: the name may carry a
    company name and "consolidated", "condensed"... before it and a short tail ("(unaudited)", a date)
    after it, but no word saying the heading discusses the statement (``_DISCUSSES``)."""
    if "notesto" in c or "continued" in c or "indexto" in c or "reportof" in c:
        return None
    if c.startswith("note"):
        return None
    for key, pattern in _STATEMENTS:
        m = pattern.search(c)
        if m and m.start() <= 45 and len(c) - m.end() <= 40 and _STATEMENT_PREFIX.match(c[: m.start()]):
            return None if _DISCUSSES.search(_BRACKETED.sub("", c[m.end() :])) else key
    return None


def detect_sec(pages: list[Page]) -> list[Heading]:
    """Parts, Items, statements, notes and exhibits, in reading order."""
    toc_pages = {p.number for p in pages if is_toc_page(p)}
    parts: list[Heading] = []
    items: list[Heading] = []
    exhibits: list[Heading] = []
    for page in pages:
        if page.number in toc_pages:
            continue
        for idx, line in enumerate(page.lines):
            text = line.text
            if len(text) > 160:
                continue
            head = text[:12].lower()
            if head.startswith("part"):
                m = _PART.match(text)
                plain_start = (
                    (line.x0 < page.width * 0.2 or _column_start(page, line))
                    and len(text) < 60
                    and _PART_TITLED.match(text)
                )  # "Part II – Other Information" set in body type at a column's left edge
                if (
                    m
                    and (_emphasised(line) or line.centred or plain_start)
                    and not _ENDS_IN_PAGE_NUMBER.search(text)
                ):
                    rank = _ROMAN[re.sub(r"\s", "", m.group(1)).lower()]
                    parts.append(
                        Heading(
                            "part",
                            f"part_{rank}",
                            _clean_title(text),
                            page.number,
                            line.ry,
                            at_top(page, line),
                            (rank,),
                        )
                    )
                    # "PART II Item 5. ..." on one line: the item is detected below too
                    rest = text[m.end() :].strip(" .:-–—")
                    mi = _ITEM.match(rest)
                    if mi and len(rest) < 120:
                        items.append(
                            Heading(
                                "item",
                                item_key(mi),
                                _clean_title(rest),
                                page.number,
                                line.ry,
                                at_top(page, line),
                                _item_order(mi),
                            )
                        )
                continue
            if head.startswith("item"):
                m = _ITEM.match(text)
                if (
                    not m
                    or _ENDS_IN_PAGE_NUMBER.search(text)
                    and not text.rstrip().endswith(m.group(0).strip())
                ):
                    continue
                strong = _emphasised(line) or (
                    (line.x0 < page.width * 0.2 or _column_start(page, line))
                    and len(text) < 90
                    and re.match(r"^item\s*\S+\s*[\.:]\s+[A-Z]", text, re.IGNORECASE)
                )
                if not strong:
                    continue
                items.append(
                    Heading(
                        "item",
                        item_key(m),
                        _clean_title(text),
                        page.number,
                        line.ry,
                        at_top(page, line),
                        _item_order(m),
                    )
                )
                continue
            # among the page's first four lines by height: a label at the top right may be read after a
            # column the page seems to have (a table's cells of long text taken for a second column)
            if (
                head.startswith("exhibit")
                and len(text) < 20
                and (idx < 4 or sum(1 for other in page.lines if other.y0 < line.y0 - 1.0) < 4)
            ):
                m = _EXHIBIT.match(compact(text))
                if m:
                    exhibits.append(
                        Heading(
                            "exhibit",
                            "exhibit_" + re.sub(r"[().]+", "_", m.group(1).lower()).strip("_"),
                            _clean_title(text),
                            page.number,
                            min(line.ry, line.y0),  # over the page's text, in whichever column it was read
                            True,
                            (),
                        )
                    )
    # Sequence: (part rank, item order) strictly increasing; running headers repeat and drop out.
    accepted_parts = _longest_increasing(parts)

    def part_rank_at(h: Heading) -> int:
        rank = 0
        for p in accepted_parts:
            if (p.page, p.y) <= (h.page, h.y):
                rank = p.order[0]
        return rank

    for h in items:
        h.order = (part_rank_at(h),) + h.order
    items = _longest_increasing(items)
    repeats = len({h.key for h in items}) < len(items)
    if not repeats:
        for h in items:
            h.order = h.order[1:]
    headings = accepted_parts + items
    index_pages = toc_pages | {p.number for p in pages if _is_notes_index(p)}
    exhibits = _dedupe_exhibits(exhibits, items)
    financials = _detect_financials(pages, index_pages, *_financial_zone(items, pages), lower=not items)
    if items and len(_statement_kinds(financials)) < 2:
        # Item 8 may only point to statements printed after the last Item ("see page F-1")
        financials = _back_matter_financials(pages, index_pages, items, exhibits) or financials
    headings += financials
    headings += exhibits
    if not any(h.key == "signatures" for h in headings):
        headings += _closing_signatures(pages, toc_pages, items)
    headings.sort(key=lambda h: (h.page, h.y, h.level))
    return headings


def _column_start(page: Page, line: Line) -> bool:
    """The line starts where a text column starts (5+ lines of the page share its left edge):
    the right column of a two-column page, not a cell in the middle of a table."""
    return sum(1 for other in page.lines if abs(other.x0 - line.x0) < 2.0) >= 5


_SIGNATURES = re.compile(r"^signatures?$")


def _closing_signatures(pages: list[Page], toc_pages: set[int], items: list[Heading]) -> list[Heading]:
    """The signatures page that closes a filing: the first one after the last Item."""
    if not items:
        return []
    last_item = max(h.page for h in items)
    for page in pages[last_item - 1 :]:
        if page.number in toc_pages:
            continue
        for line in page.lines[:6]:
            if (_emphasised(line) or line.centred) and _SIGNATURES.match(line.compact):
                if page.number == last_item and any(h.page == page.number and h.y > line.ry for h in items):
                    continue
                return [
                    Heading(
                        "back",
                        "signatures",
                        _clean_title(line.text),
                        page.number,
                        line.ry,
                        at_top(page, line),
                    )
                ]
    return []


def _dedupe_exhibits(exhibits: list[Heading], items: list[Heading]) -> list[Heading]:
    last_item_page = max((h.page for h in items), default=0)
    out: list[Heading] = []
    seen: set[str] = set()
    for h in exhibits:
        if h.page <= last_item_page or h.key in seen:
            continue
        seen.add(h.key)
        out.append(h)
    return out


def _financial_zone(items: list[Heading], pages: list[Page]) -> tuple[int, int]:
    """Pages where statements and notes are looked for: before Item 9 (10-K) / Part II (10-Q)."""
    end = pages[-1].number if pages else 0
    for h in items:
        num = h.order[-2] if len(h.order) >= 2 else 0
        part = h.order[0] if len(h.order) == 3 else 0
        if (num >= 9 and part != 2) or (part == 2 and len(h.order) == 3 and num >= 1):
            end = h.page
            break
    return 1, end


def _statement_kinds(headings: list[Heading]) -> set[str]:
    return {h.key.split("_")[0] for h in headings if h.kind == "statement"}


_FINANCIALS_START = re.compile(
    r"^(?:reportofindependentregisteredpublicaccountingfirm|indextoconsolidatedfinancialstatements"
    r"|indextofinancialstatements|(?:consolidated)?financialstatements(?:andsupplementarydata)?$)"
)
_BACK_MATTER = re.compile(r"^(?:exhibitindex|indextoexhibits|exhibits?|signatures?)$")


def _back_matter_financials(
    pages: list[Page], index_pages: set[int], items: list[Heading], exhibits: list[Heading]
) -> list[Heading]:
    """Statements and notes printed after the last Item (the "F-pages" many 10-Ks attach after
    Part IV, Item 8 saying "begin on page F-1"), under one ``financials`` section.

    Used only when the Item 8 zone holds fewer than two kinds of statement; the section
    starts at the auditor's report or an index to the statements when one precedes them,
    and ends at an exhibit index, signatures or the first exhibit after the notes.
    """
    last_item = max(h.page for h in items)
    end = min((h.page for h in exhibits), default=pages[-1].number + 1) - 1
    if end <= last_item:
        return []
    found = _detect_financials(pages, index_pages, last_item + 1, end)
    if len(_statement_kinds(found)) < 2:
        return []
    first = min(found, key=lambda h: (h.page, h.y))
    opening: list[Heading] = []  # the auditor's report, an index to the statements
    for page in pages[last_item : first.page]:
        for idx, line in enumerate(page.lines[:6]):
            if (line.bold or line.caps or line.centred or idx < 3) and _FINANCIALS_START.match(line.compact):
                if page.number == first.page and line.ry >= first.y:
                    break
                title = _clean_title(line.text)
                opening.append(
                    Heading("opening", slug(title), title, page.number, line.ry, at_top(page, line))
                )
                break
    head = opening[0] if opening else first
    start = Heading(
        "financials", "financial_statements", "Financial Statements", head.page, head.y, head.at_top
    )
    found = opening + found
    last = max(found, key=lambda h: (h.page, h.y))
    for page in pages[last.page - 1 : end]:
        for idx, line in enumerate(page.lines):
            if page.number == last.page and line.ry <= last.y:
                continue
            if (line.bold or line.caps) and idx < 6 and _BACK_MATTER.match(line.compact):
                key = "exhibit_index" if "exhibit" in line.compact else "signatures"
                found.append(
                    Heading("back", key, _clean_title(line.text), page.number, line.ry, at_top(page, line))
                )
                return [start, *found]
    return [start, *found]


def _detect_financials(
    pages: list[Page], toc_pages: set[int], zone_start: int, zone_end: int, lower: bool = False
) -> list[Heading]:
    """Statements, the notes title and the notes on pages ``zone_start..zone_end``; with
    ``lower`` (documents with no Items: releases, reports) also a second statement printed
    below the first one's table on the same page."""
    out: list[Heading] = []
    seen_statements: dict[str, int] = {}
    last_statement_page = -10
    last_statement_key = ""
    notes_title: Heading | None = None
    note_cands: list[Heading] = []
    numbered_cands: list[Heading] = []
    for page in pages[zone_start - 1 : zone_end]:
        if page.number in toc_pages:
            continue
        page_statements: list[tuple[str, Line]] = []
        below: list[tuple[str, Line]] = []
        for idx, line in enumerate(page.lines):
            text = line.text
            if len(text) > 130:
                continue
            c = compact(text)
            if idx < 8 and (line.bold or line.caps or line.centred or idx < 4):
                key = statement_key(c)
                if key and not _ENDS_IN_PAGE_NUMBER.search(text):
                    page_statements.append((key, line))
                    continue
            elif lower and page_statements and (line.bold or line.caps) and _between_tables(page.lines, idx):
                key = statement_key(c)  # a second statement printed below the first one's table
                if key and key not in {k for k, _ in page_statements}:
                    below.append((key, line))
                    continue
            if (
                notes_title is None
                and (line.bold or line.caps or idx < 4)
                and _NOTES_TITLE.match(c)
                and not _ENDS_IN_PAGE_NUMBER.search(text)
            ):
                notes_title = Heading(
                    "notes", "notes", _clean_title(text), page.number, line.ry, at_top(page, line)
                )
                continue
            if text[:4].lower() == "note" and (line.bold or line.caps):
                m = _NOTE.match(text)
                rest = text[m.end() :].strip() if m else ""
                if m and not (rest and _ENDS_IN_PAGE_NUMBER.search(rest)):
                    n = int(m.group(1))
                    title = text
                    if sum(c.isalpha() for c in rest) < 3 and idx + 1 < len(page.lines):
                        nxt = page.lines[idx + 1]  # "NOTE 1" on its own line, the title below it
                        if (nxt.bold or nxt.caps) and len(nxt.text) < 120:
                            title = f"{text} {nxt.text}"
                    note_cands.append(
                        Heading(
                            "note",
                            f"note_{n}",
                            _clean_title(title),
                            page.number,
                            line.ry,
                            at_top(page, line),
                            (n,),
                        )
                    )
                    continue
            if line.bold and text[:1].isdigit():
                m = _NUMBERED.match(text)
                if m and len(text) < 100:
                    n = int(m.group(1))
                    numbered_cands.append(
                        Heading(
                            "note",
                            f"note_{n}",
                            _clean_title(text),
                            page.number,
                            line.ry,
                            at_top(page, line),
                            (n,),
                        )
                    )
        kinds = {k for k, _ in page_statements}
        if len(kinds) >= 3:  # an index of the statements, not a statement
            continue
        for key, line in page_statements[:1] + below[:2]:
            if key == last_statement_key and page.number - last_statement_page <= 2:
                last_statement_page = page.number  # continuation page
                continue
            if key in seen_statements and page.number - seen_statements[key] <= 3:
                continue
            count = sum(1 for h in out if h.kind == "statement" and h.key.startswith(key))
            skey = key if count == 0 else f"{key}_{count + 1}"
            out.append(
                Heading("statement", skey, _clean_title(line.text), page.number, line.ry, at_top(page, line))
            )
            seen_statements[key] = page.number
            last_statement_page = page.number
            last_statement_key = key
    statements = out
    first_statement = min((h.page for h in statements), default=None)
    start = first_statement if first_statement is not None else (notes_title.page if notes_title else None)
    notes: list[Heading] = []
    if start is not None:
        notes = _note_sequence([h for h in note_cands if h.page >= start])
        if len(notes) < 3:
            notes = _note_sequence([h for h in numbered_cands if h.page >= start])
        if len(notes) < 3:
            notes = []
    if notes:  # statements inside the notes (restated, supplemental) are not the primary statements
        first_note = (notes[0].page, notes[0].y)
        statements = [h for h in statements if (h.page, h.y) < first_note]
    result = statements + notes
    if notes_title is not None and (first_statement is None or notes_title.page >= first_statement):
        if not notes or notes_title.page < notes[0].page:
            result.append(notes_title)
    return result


def _row_like(line: Line) -> bool:
    """A table row: cells spread over the line, or two or more figures."""
    return line.cells >= 2 or line.figures >= 2


def _between_tables(lines: list[Line], idx: int) -> bool:
    """The line at ``idx`` follows a table row and one of the next three lines is one."""
    return idx > 0 and _row_like(lines[idx - 1]) and any(_row_like(n) for n in lines[idx + 1 : idx + 4])


def _note_sequence(cands: list[Heading]) -> list[Heading]:
    """Notes run 1, 2, 3, ... (a skipped number happens); the first of each number wins."""
    out: list[Heading] = []
    last = 0
    for h in cands:
        n = h.order[0]
        if last < n <= last + 3 and (out or n <= 2):
            out.append(h)
            last = n
    return out
