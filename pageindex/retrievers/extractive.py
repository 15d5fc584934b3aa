"""The extractive baseline: BM25 pages, then the table row or sentence that best matches the
question, returned with its page. No model at all: the floor every LLM retriever must beat,
and what runs offline.

A page's text is cut into candidates: table rows (a label line followed by its figures, as
PDF text extraction writes them, or a label and figures on one line) and sentences. Each is
scored by the inverse document frequency of the question words it contains (synonyms
included), with a bonus for rows when the question asks for an amount and for the column of
the fiscal year the question names. The answer is the best row's label and value (the
question year's column when the table header has years) or the best sentence.

Columns grouped by period ("Three Months Ended | Twelve Months Ended" over "2025 2024 2025 2024")
are told apart: the column is the one of the question's year *and* period ("twelve months ended
June 30, 2025", "Q4", "first half", "nine months"); a question naming a year but no period ("net
income in FY2025") takes the longest period, and one naming none of the header's years (no year, or
a fiscal year the header names by its calendar year) the header's latest year. Columns dated in one
year ("As of March 31, 2022 | As of September 30, 2022"; "July 30, | January 29," over "2023 2023")
are told apart by the date the question names ("as of September 30, 2022"). The words that name
a period or a date (months, "ended", "quarter", "half") choose the column, never the row, as the year
does.

A header naming each column's currency ("NT$ NT$ NT$ US$", a 20-F's convenience translation) makes the
first currency's columns the years'; years a change is measured from ("% Change from 2021") are no
columns; footnote marks and note references before a row's figures ("Audit Fees (1)") are dropped when
without them the figures line up with the columns. A page that writes decimals with a comma ("43,42 %",
"121.625,60") has its figures read that way; a table of contents' lines ("US Select Equity Fund 19")
and sentences wrapped after a date ("... of fiscal year" over "2023") are no rows. The answer states
the unit the table's header states ("Inventories: 295,347 (Sep 2022; million yen)").
"""

from __future__ import annotations

import re
import sys
from functools import cache
from typing import Literal

from pydantic import BaseModel, Field

from pageindex.retrievers.base import QuestionRun, RetrieverOptions, register_retriever
from pageindex.retrievers.numbers import EUROPEAN_NUMBER, decimal_comma, find_numbers, point_form
from pageindex.retrievers.ranking import Ranker, expand_query, ranker_for, tokenize
from pageindex.retrievers.replies import source_for_page
from pageindex.retrievers.result import RetrievalResult
from pageindex.wording import counted

_NUMERIC_LINE = re.compile(r"^[\s$€£¥%()\-\u2014\u2013\u2212.,\d]*\d[\s$€£¥%()\-\u2014\u2013\u2212.,\d]*$")
_DASH_ONLY = re.compile(r"^[\s$\-\u2014\u2013]*$")
_YEAR = re.compile(r"\b(?:FY\s?)?((?:19|20)\d{2})\b", re.IGNORECASE)
_INLINE_ROW = re.compile(
    r"^(?P<label>.*?[A-Za-z)][^\d$()]*?)\s+"
    r"(?P<nums>(?:\(\s*[$€£¥]|[$€£¥(\-\u2014])?\s*\d[\d,.\s$€£¥()%\-\u2014]*)$"
)
# a word that numbers what follows it: "Note 5", "Table 6", "Row 5", "Level 3", "Item 7A"
_NUMBERING_WORD = re.compile(
    r"\b(?:note|table|row|line|level|tier|item|class|phase|part|section|schedule|exhibit|step|stage|"
    r"page|type|series|tranche|article|chapter|appendix|annex|figure|no\.?)$",
    re.IGNORECASE,
)
_LABEL_NUMBER = re.compile(r"\d{1,3}[A-Za-z]?[.:]?")  # "5", "7A", "3:": a small bare number
# a year a change column is measured from, not a column of its own: "% Change in NT$ from 2021"
_REFERENCE_YEAR = re.compile(
    r"\b(?:from|vs\.?|versus|over|compared\s+(?:with|to))\s+(?:FY\s?)?(?:19|20)\d{2}\b", re.IGNORECASE
)
# a header line naming each column's currency: "NT$ NT$ NT$ US$" (the last a convenience translation)
_CODES = r"(?:USD|EUR|JPY|GBP|CHF|CNY|RMB|HKD|TWD|KRW|INR|CAD|AUD|SEK|NOK|DKK|BRL|MXN)\b"
_CURRENCY_LINE = re.compile(rf"^(?:(?:[A-Z]{{1,2}}\$|{_CODES}|[$€£¥])\s*){{2,}}$")
_CURRENCY = re.compile(rf"[A-Z]{{1,2}}\$|{_CODES}|[$€£¥]")
# the unit a table's header states: "(In millions, except per share amounts)", "($ in millions; except
# EPS)", "(Millions of JPY)", or a short line of its own, "million yen", "€ thousands"
_SCALE_WORD = r"(?i:thousands?|millions?|billions?)"
_UNIT_CURRENCY = rf"(?:[$€£¥]|[A-Z]{{1,2}}\$|{_CODES}|(?i:amounts|dollars|u\.s\. dollars))"
_UNIT_PARENS = re.compile(rf"\((\s*{_UNIT_CURRENCY}?\s*(?i:in\s+)?{_SCALE_WORD}\b[^()\d]*)\)")
_UNIT_LINE = re.compile(
    rf"^\(?\s*({_UNIT_CURRENCY}?\s*(?i:in\s+)?{_SCALE_WORD}(?:\s+(?i:of\s+)?[A-Za-z$€£¥.]+){{0,3}})\s*\)?$"
)
# a row whose figures are no amounts in the table's unit: "FX %", "as a percentage of", "per share", "ratio"
_UNITLESS_LABEL = re.compile(r"%|\bpercent|\bper[\s-]share\b|\bratio\b|\beps\b", re.IGNORECASE)
_TRAILING_YEARS = re.compile(r"(?:(?:FY\s?)?(?:19|20)\d{2}\*?\s*){2,}$")
_MONTH_END = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?,?$", re.IGNORECASE
)
# a column's date: "March 31, 2022", "July 30," (its year on the line below)
_MONTH_NAMES = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DATE = re.compile(
    r"\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2},?(?:\s+((?:19|20)\d{2})\b)?",
    re.IGNORECASE,
)
_RANGE = re.compile(r"\b(?:from|to|through|until)\b", re.IGNORECASE)  # "From April 1, 2023 to March 31, 2024"
# a date a question names: "as of September 30, 2022", "at June 2023"
_QUESTION_DATE = re.compile(
    r"\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(?:\d{1,2},?\s+)?(?:19|20)\d{2}\b",
    re.IGNORECASE,
)
# a period a column covers: "Three Months Ended", "Twelve Months Ended", "Year Ended", "13 Weeks Ended"
_PERIOD = re.compile(
    r"\b(three|six|nine|twelve|3|6|9|12)[\s-]+months?\b|\b(13|26|39|52|53)[\s-]+weeks?\b"
    r"|\b(?:fiscal\s+)?years?\s+ended\b",
    re.IGNORECASE,
)
_MONTHS = {"three": 3, "six": 6, "nine": 9, "twelve": 12, "3": 3, "6": 6, "9": 9, "12": 12}
_WEEKS = {"13": 3, "26": 6, "39": 9, "52": 12, "53": 12}
_QUARTER = re.compile(
    r"\bq[1-4]\b|\b(?:first|second|third|fourth|1st|2nd|3rd|4th)[\s-]+quarter\b|\bquarter(?:ly)?\b",
    re.IGNORECASE,
)
# a half year: "first half", "H1 2024", "half-year", "semi-annual"
_HALF = re.compile(
    r"\b(?:first|second|1st|2nd)[\s-]+half\b|\bhalf[\s-]+year(?:ly)?\b|\b[hH][12]\b|\b[12][hH]\b"
    r"|\bsemi-?annual\b",
    re.IGNORECASE,
)
_PERIOD_TEXT = (
    "three six nine twelve months month weeks ended ending quarter quarterly half fiscal year "
    "january february march april may june july august september october november december"
)


@cache
def _period_words() -> frozenset[str]:
    """Words that name a period or a date (tokenized as queries are): they choose the column, not
    the row. Made on first use: the tokenizer's stop words come from bm25s, which imports numpy and
    scipy (a third of a second) and so is not imported until a ranker is used."""
    return frozenset(tokenize(_PERIOD_TEXT))
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?;])\s+(?=[A-Z(\"'])")
_AMOUNT_WORDS = re.compile(
    r"\b(how much|how many|amount|total|value|what (?:is|was|were|are)\b|ratio|margin|percent|%|usd|"
    r"\$|million|billion|per share|number)\b",
    re.IGNORECASE,
)


class Candidate(BaseModel):
    """A table row or sentence from one page, with the answer text drawn from it."""

    kind: Literal["row", "sentence"]
    page: int
    text: str  # the row or sentence as found on the page (whitespace collapsed)
    label: str = ""  # row label
    values: list[str] = []  # row figures as printed, e.g. ["(1,577)", "(1,373)", "(1,420)"]
    years: list[str] = []  # the table header's years, when they line up with values
    months: list[int] = []  # the months each value's period covers, when the header groups them
    ends: list[int] = []  # the month (1-12) each value's column is dated, when the header dates them
    unit: str = ""  # the unit the table's header states ("in millions"), "" when it states none
    score: float = 0.0
    answer: str = ""
    quote: str = ""  # what the answer takes from the page (a figure or the sentence)


def _is_numeric(line: str) -> bool:
    return bool(_NUMERIC_LINE.match(line)) or (bool(line) and bool(_DASH_ONLY.match(line)) and "-" in line)


def _figures(line: str, comma: bool = False) -> list[str]:
    """The figures of a line as printed ("(1,577)", "43,42%"); on a page that writes decimals with a
    comma, each is read in that convention ("43,42%" one figure, not 43 and 42%)."""
    if not comma:
        return [n.text.replace("\n", "").replace(" ", "") for n in find_numbers(line)]
    # read the line rewritten in the decimal-point convention (the same length: each figure as printed
    # is where it was)
    read = EUROPEAN_NUMBER.sub(lambda m: point_form(m.group(0)), line)
    return [line[n.start : n.end].replace("\n", "").replace(" ", "") for n in find_numbers(read)]


def inline_row(line: str, comma: bool = False) -> tuple[str, list[str]] | None:
    """A table row printed on one line, as its label and figures ("Net sales 1,234 1,100"), or None.

    A number that belongs to the label stays in it: one inside a parenthesis the label opened
    ("Adjusted EPS (Table 6) $0.96 $0.90", with a footnote mark glued to it: "(Table 4)(1)"), and a
    small bare number after a word that numbers things ("Note 5 1,200 (35)", "Row 5 500 (35)"). A
    negative amount in parentheses may start the figures ("Operating loss ($479) $954"). A line whose
    figures end a sentence ("... target range is 2.30 to 2.50.") is prose, not a row."""
    m = _INLINE_ROW.match(line)
    if not m:
        return None
    label, nums = m.group("label").strip(), m.group("nums").strip()
    if nums.endswith("."):
        return None
    tokens = nums.split()
    while tokens and label.count("(") > label.count(")"):
        label += " " + tokens.pop(0)
    if tokens and _NUMBERING_WORD.search(label) and _LABEL_NUMBER.fullmatch(tokens[0]):
        label += " " + tokens.pop(0)
    figures = _figures(" ".join(tokens), comma)
    return (label, figures) if figures else None


def _prose_ending_in_a_date(label: str, figures: list[str]) -> bool:
    """A line of six words or more whose only figures are a date's year and day is a sentence wrapped
    after that date ("... no customers with 10% or more of total revenue for the first half of fiscal
    year" over "2023", "... as of December 31, 2022"), not a row: a row's figures are amounts. Two years
    or more are a header's columns ("(Amounts in millions, except per share data) 2025 2024")."""
    return (
        sum(bool(_YEAR.fullmatch(f)) for f in figures) == 1  # two years or more: a header's columns
        and all(re.fullmatch(r"(?:19|20)\d{2}|\d{1,2}", f) for f in figures)
        and len(tokenize(label)) >= 6
    )


_MARK = re.compile(r"\(?\d{1,2}\)?")  # a footnote mark "(1)" or a note reference "23"


def _with_marks_in_label(
    label: str, figures: list[str], years: list[str], currencies: list[str]
) -> tuple[str, list[str], list[int]]:
    """A row without its leading footnote marks and note references ("Audit Fees (1)" over "Fiscal 2024
    Fiscal 2023", "NET REVENUE 6, 22, 34, 37" in a "Notes 2021 2022 2023" table), when without them its
    figures line up with the header's year columns and with them they do not; else the row as it was. The
    marks are no words of the label either: a "(3)" matched the "3" of "3 year average"."""
    marks = 0
    while marks < len(figures) - 1 and _MARK.fullmatch(figures[marks]):
        marks += 1
    columns = _year_columns(figures[marks:], years, currencies) if marks else []
    if not columns:
        return label, figures, []
    return label, figures[marks:], columns


def _is_year_list(values: list[str]) -> bool:
    return len(values) >= 2 and all(re.fullmatch(r"(?:19|20)\d{2}", v) for v in values)


def period_months(text: str) -> list[int]:
    """The periods a header line names, in order, in months ("Three Months Ended Twelve Months
    Ended" -> [3, 12]; "52 Weeks Ended" -> [12]; "Year Ended" -> [12])."""
    out = []
    for m in _PERIOD.finditer(text):
        months, weeks = m.group(1), m.group(2)
        out.append(_MONTHS[months.lower()] if months else _WEEKS[weeks] if weeks else 12)
    return out


def _grouped(years: list[str], periods: list[int]) -> list[int]:
    """Each year column's period, when a header of two or more periods groups the columns evenly."""
    if len(periods) < 2 or not years or len(years) % len(periods):
        return []
    per = len(years) // len(periods)
    return [p for p in periods for _ in range(per)]


def _year_columns(figures: list[str], years: list[str], currencies: list[str] | None = None) -> list[int]:
    """The header year column of each figure (-1 for none), or [] when they do not line up: one figure
    a year, or one amount a year beside percentages ("2023 2022 % Change" over "$100 $90 11%"). When the
    header names a currency a column ("NT$ NT$ NT$ US$" under "2021 2022 2023"), the columns of the first
    currency are the years' and a column in another (a convenience translation) is no year's."""
    if not years:
        return []
    if len(figures) == len(years):
        return list(range(len(years)))
    amounts = [k for k, f in enumerate(figures) if not f.endswith("%")]
    if currencies and len(set(currencies)) > 1 and currencies.count(currencies[0]) == len(years):
        columns = next((c for c in (list(range(len(figures))), amounts) if len(c) == len(currencies)), None)
        if columns is not None:
            own = [k for k, currency in zip(columns, currencies, strict=True) if currency == currencies[0]]
            return [own.index(k) if k in own else -1 for k in range(len(figures))]
    if len(amounts) != len(years):
        return []
    return [amounts.index(k) if k in amounts else -1 for k in range(len(figures))]


def unit_of(line: str) -> str:
    """The unit a header line states for the table below it, as printed ("in millions, except per share
    amounts", "million yen", "€ thousands"), or "". A figure's own scale ("$76.4 billion") is none: the
    words must be in parentheses without figures, or the whole line."""
    found = _UNIT_PARENS.search(line) or _UNIT_LINE.match(line)
    if not found:
        return ""
    unit = " ".join(found.group(1).split()).rstrip(",;: ")
    if len(unit) > 60:  # "In Millions of New Taiwan Dollars or U.S. Dollars, Except Earnings Per ..."
        unit = re.split(r"[,;]", unit)[0]
    return unit if unit[:2].isupper() else unit[:1].lower() + unit[1:]  # "In millions": "in millions"


def page_candidates(text: str, page: int) -> list[Candidate]:
    """Every table row and sentence on a page, in reading order. A page that writes decimals with a
    comma (``decimal_comma``) has its figures read that way."""
    lines = [" ".join(line.split()) for line in text.splitlines()]
    comma = decimal_comma(text)
    out: list[Candidate] = []
    years: list[str] = []
    months: list[int] = []  # the period of each year column
    ends: list[int] = []  # the month each year column is dated ("March 31, 2022 | September 30, 2022")
    periods: list[int] = []  # the periods a header line named, waiting for its years
    currencies: list[str] = []  # the currency of each column, when a header line names them
    unit = ""  # the unit the current table's header states
    unit_rows = 0  # rows read under that unit
    prose: list[str] = []
    i = 0

    def set_years(found: list[str], dated: list[int] | None = None) -> None:
        nonlocal years, months, ends, periods, currencies, unit
        years, months, periods, currencies = found, _grouped(found, periods), [], []
        if unit_rows:  # a new table under a unit already used: it states its own or none
            unit = ""
        ends = dated if dated and len(dated) == len(found) else []

    def flush_prose() -> None:
        joined = " ".join(prose).strip()
        prose.clear()
        for sentence in _SENTENCE_SPLIT.split(joined):
            sentence = sentence.strip()
            if len(tokenize(sentence)) >= 3 and any(c.isalpha() for c in sentence):
                out.append(Candidate(kind="sentence", page=page, text=sentence))

    while i < len(lines):
        line = lines[i]
        if not line:
            i += 1
            continue
        if _is_numeric(line):
            # a header of years (each on its own line) sets the columns for the rows below
            run: list[str] = []
            j = i
            while j < len(lines) and (not lines[j] or _is_numeric(lines[j])):
                if lines[j]:
                    run.extend(_figures(lines[j], comma))
                j += 1
            if _is_year_list(run):
                set_years(run)
            i = j
            continue
        # a text line: a row label if figures follow (on the next lines or on this one)
        j = i + 1
        figures: list[str] = []
        while j < len(lines) and (not lines[j] or _is_numeric(lines[j])):
            if lines[j]:
                figures.extend(_figures(lines[j], comma))
            j += 1
        label = line
        dates = _DATE.findall(line)
        dated = [_MONTH_NAMES.index(m[:3].lower()) + 1 for m, _ in dates]
        if (not figures and len(dates) >= 2 and all(y for _, y in dates) and not _RANGE.search(line)
                and len(tokenize(_DATE.sub("", line))) <= 3):
            set_years([y for _, y in dates], dated)  # "As of March 31, 2022 As of September 30, 2022"
            i = j
            continue
        if stated := unit_of(line):
            unit, unit_rows = stated, 0
        if not figures and _CURRENCY_LINE.match(line):
            currencies = _CURRENCY.findall(line)  # "NT$ NT$ NT$ US$" under the years
            i = j
            continue
        column_years = _YEAR.findall(_REFERENCE_YEAR.sub("", line))
        if (not figures and len(column_years) >= 2 and len(tokenize(_YEAR.sub("", line))) <= 3
                and all(re.fullmatch(r"(?:19|20)\d{2}", f) for f in _figures(line))):
            # "2021 2022 from 2021 2023 from 2022": three columns; "Fiscal 2024 Fiscal 2023", whose last year
            # ends the line, was read as a row "Fiscal 2024 Fiscal: 2023"
            set_years(column_years, dated)
            i = j
            continue
        inline = None if figures else inline_row(line, comma)
        if inline:
            label, figures = inline
        header_years = _YEAR.findall(line)
        named = period_months(line)
        if not figures and len(named) >= 2 and len(tokenize(_PERIOD.sub("", line))) <= 6:
            periods = named  # "Three Months Ended Twelve Months Ended": the years follow
        if not figures and len(header_years) >= 2 and (
            len(tokenize(_YEAR.sub("", line))) <= 3 or _TRAILING_YEARS.search(line)
        ):
            set_years(header_years, dated)  # "Years ended December 31 2018 2017 2016"
            i = j
            continue
        is_date = bool(_MONTH_END.search(label)) and len(figures) == 1  # "as of December 31"
        if _prose_ending_in_a_date(label, figures):
            prose.append(line)  # "... for the first half of fiscal year" over "2023": a sentence wrapped
            i += 1
            continue
        if figures and len(label) <= 160 and not _is_year_list(figures) and not is_date:
            flush_prose()
            # a label wrapped over two lines: "Adjustments to reconcile ... to net cash / provided by ...";
            # its first line is a label, not the end of a paragraph ("... • Adjusted net earnings per
            # share of $4.45, including / a benefit of approximately $0.15")
            if (label[:1].islower() and out and out[-1].kind == "sentence" and out[-1].page == page
                    and len(out[-1].text) <= 160):
                label = out.pop().text + " " + label
            columns = _year_columns(figures, years, currencies)
            if years and not columns:  # "Audit Fees (1) $6,686,412 $6,858,279", "NET REVENUE 6, 22 $1,587.0"
                label, figures, columns = _with_marks_in_label(label, figures, years, currencies)
            out.append(
                Candidate(kind="row", page=page, text=f"{label} {' '.join(figures)}", label=label,
                          values=figures, years=[years[c] if c >= 0 else "" for c in columns],
                          months=[months[c] if c >= 0 else 0 for c in columns] if months else [],
                          ends=[ends[c] if c >= 0 else 0 for c in columns] if ends else [], unit=unit)
            )
            unit_rows += 1
            periods = []  # a header's periods wait for its years, not for a later table's
            i = j
            continue
        if _is_year_list(figures):
            set_years(figures, dated)  # "July 30, January 29," over "2023 2023"
            i = j
            continue
        if not named:
            periods = []  # running text between a periods header and a later table
        prose.append(line)
        i += 1
    flush_prose()
    return _without_contents_lines(out)


_PAGE_NUMBER = re.compile(r"\d{1,4}")


def _without_contents_lines(candidates: list[Candidate]) -> list[Candidate]:
    """The candidates without a table of contents' lines: on a page where most rows end in one bare
    small number and those numbers mostly increase line after line ("Europe Select Equity Fund 5",
    "Global Core Equity Fund 9", ...), the numbers are page numbers, not figures."""
    rows = [c for c in candidates if c.kind == "row"]
    numbered = [c for c in rows if len(c.values) == 1 and _PAGE_NUMBER.fullmatch(c.values[0])]
    if len(numbered) < 5 or 3 * len(numbered) < 2 * len(rows):
        return candidates
    pages = [int(c.values[0]) for c in numbered]
    rising = sum(b >= a for a, b in zip(pages, pages[1:], strict=False))
    if 5 * rising < 4 * (len(pages) - 1):
        return candidates
    dropped = {id(c) for c in numbered}
    return [c for c in candidates if id(c) not in dropped]


def question_years(query: str) -> list[str]:
    """Four-digit fiscal years the question names, in order (``FY2018`` -> ``2018``)."""
    return list(dict.fromkeys(_YEAR.findall(query)))


def question_date_month(query: str) -> int | None:
    """The month (1-12) of the first date the question names ("as of September 30, 2022" -> 9)."""
    m = _QUESTION_DATE.search(query)
    return _MONTH_NAMES.index(m.group(1)[:3].lower()) + 1 if m else None


def question_months(query: str) -> int | None:
    """The length in months of the period the question asks about, the first it names: 3 for a
    quarter ("Q4", "second quarter", "three months ended"), 6 for a half year ("first half", "H1"),
    6, 9 or 12 for the months or weeks it names, 12 for "year ended"; None when it names none (then
    the longest period in the table is taken)."""
    named = [(m.start(), 3) for m in _QUARTER.finditer(query)]
    named += [(m.start(), 6) for m in _HALF.finditer(query)]
    periods = zip(_PERIOD.finditer(query), period_months(query), strict=True)
    named += [(m.start(), months) for m, months in periods]
    return min(named)[1] if named else None  # "nine months ... versus the third quarter": nine


def _page_words(ranker: Ranker, page: int) -> list[tuple[Candidate, tuple[str, ...]]]:
    """The rows and sentences of a page (:func:`page_candidates`), each with the words it is scored by,
    read once per tree: kept with its ranker (:meth:`Ranker.kept`), as the ranking index is. Each
    question reads them as they are (its scores and answers go on copies). The words are a tuple in the
    order a set of them iterates, as :func:`_score` summed them (a set took 8 times the memory)."""

    def read() -> list[tuple[Candidate, tuple[str, ...]]]:
        candidates = page_candidates(ranker.tree.page_text(page), page)
        distinct = (set(tokenize(c.label if c.kind == "row" else c.text)) for c in candidates)
        return [(c, tuple(map(sys.intern, words))) for c, words in zip(candidates, distinct, strict=True)]

    return ranker.kept(("extractive.page_words", page), read)


def _score(
    candidate: Candidate, tokens: tuple[str, ...], weights: dict[str, float], wants_amount: bool,
    years: list[str],
) -> float:
    """``candidate``'s score for a question's word ``weights``; ``tokens`` are its distinct words."""
    matched = [t for t in tokens if t in weights]
    overlap = sum(weights[t] for t in matched)
    if overlap <= 0:
        return 0.0
    precision = len(matched) / len(tokens)  # a short label made of question words beats a long sentence
    score = overlap * (0.5 + precision)
    if candidate.kind == "row" and wants_amount:
        score *= 1.5
        if years and candidate.years and any(y in candidate.years for y in years):
            score *= 1.3
    return score


def _column(candidate: Candidate, years: list[str], months: int | None, dated: int | None = None) -> int:
    """The value to answer with: the question's first year found in the header (the header's latest
    year when none is: a question naming no year, or a fiscal year the header names by its calendar
    year, "first half of fiscal 2024" over "July 30, 2023"), of the question's period when the header
    groups columns by period (the longest period when the question names none, or one the table
    lacks), and of the question's date when the header dates columns of one year apart ("As of March 31,
    2022 | As of September 30, 2022")."""
    columns = next(
        (found for year in years if (found := [i for i, y in enumerate(candidate.years) if y == year])),
        [i for i, y in enumerate(candidate.years) if y == max(candidate.years)],
    )
    if candidate.ends and dated:
        columns = [i for i in columns if candidate.ends[i] == dated] or columns
    if candidate.months:
        longest = max(columns, key=lambda i: candidate.months[i])
        return next((i for i in columns if candidate.months[i] == months), longest)
    return columns[0]


def _answer_of(
    candidate: Candidate, years: list[str], months: int | None = None, dated: int | None = None
) -> tuple[str, str]:
    if candidate.kind == "sentence":
        return candidate.text, candidate.text
    if candidate.years:
        i = _column(candidate, years, months, dated)
        value, year = candidate.values[i], candidate.years[i]
        period = f"{candidate.months[i]} months, " if candidate.months else ""
        if candidate.ends and candidate.years.count(year) > 1:  # two dates of one year: say which
            period += _MONTH_NAMES[candidate.ends[i] - 1].title() + " "
        stated = candidate.unit and not value.endswith("%") and not _UNITLESS_LABEL.search(candidate.label)
        unit = f"; {candidate.unit}" if stated else ""
        return f"{candidate.label}: {value} ({period}{year}{unit})", value
    percents = all(v.endswith("%") for v in candidate.values) or _UNITLESS_LABEL.search(candidate.label)
    unit = f" ({candidate.unit})" if candidate.unit and not percents else ""
    return f"{candidate.label}: {' | '.join(candidate.values)}{unit}", candidate.values[0]


def extract_answer(ranker: Ranker, query: str, pages: list[int], *, top_n: int = 1) -> list[Candidate]:
    """The ``top_n`` best candidates on ``pages`` for ``query``, best first, with their answer text.

    Word weights are inverse document frequencies over the ranker's chunks; a candidate on a
    higher-ranked page wins ties.
    """
    weights: dict[str, float] = {}
    asked = set(tokenize(query))
    for token in tokenize(expand_query(query)):
        # the year and the period pick the column, not the row
        if not re.fullmatch(r"(?:19|20)\d{2}", token) and token not in _period_words():
            # words the question uses count fully, synonyms added for it at half weight
            weights[token] = ranker.idf(token) * (1.0 if token in asked else 0.5)
    wants_amount = bool(_AMOUNT_WORDS.search(query))
    years = question_years(query)
    months = question_months(query)
    dated = question_date_month(query)
    scored: list[Candidate] = []
    for rank, page in enumerate(pages):
        for cand, tokens in _page_words(ranker, page):
            score = _score(cand, tokens, weights, wants_amount, years)
            if score <= 0:
                continue
            answer, quote = _answer_of(cand, years, months, dated)
            scored.append(cand.model_copy(update={"score": score * (1.0 - 0.03 * rank), "answer": answer,
                                                  "quote": quote}))  # fmt: skip
    scored.sort(key=lambda c: -c.score)
    return scored[:top_n]


class ExtractiveOptions(RetrieverOptions):
    top_k: int = Field(5, ge=1, le=50, description="BM25 pages searched for the answer")
    unit: Literal["page", "section"] = Field("page", description="what BM25 ranks: pages or leaf sections")
    alternatives: int = Field(3, ge=0, le=20, description="runner-up candidates kept in extra")


@register_retriever("extractive", options=ExtractiveOptions, needs_llm=False)
async def extractive(run: QuestionRun, opts: ExtractiveOptions) -> RetrievalResult:
    """BM25 pages, then the best-matching table row or sentence with its page; no model at all."""
    ranker = ranker_for(run.tree, opts.unit)
    pages = ranker.top_pages(run.query, k=opts.top_k)
    run.event("decision", f"bm25 ({opts.unit}) top pages {pages}", pages=pages)
    # no model sees anything; the pages are recorded as read so page-recall figures compare
    run.show_pages(pages, why="read by the extractive matcher")
    best = extract_answer(ranker_for(run.tree, "page"), run.query, pages, top_n=1 + opts.alternatives)
    extra = {
        "retrieved_pages": pages,
        "alternatives": [c.model_dump(include={"kind", "page", "answer", "score"}) for c in best[1:]],
    }
    if not best:
        run.event("decision", "no row or sentence shares a word with the question")
        if not pages:  # BM25 found no page with a word of the question: nothing was read
            reason = "no page of the filing has a word of the question, so no page was searched"
        else:
            reason = f"no row or sentence on the {counted(len(pages), 'page')} searched matches the question"
        return run.result("fail", reason=reason, extra=extra)
    top = best[0]
    run.event("decision", f"best {top.kind} on page {top.page} (score {top.score:.2f}): {top.answer[:120]}")
    return run.result(
        "answer",
        answer=top.answer,
        confidence=None,
        sources=[source_for_page(run.tree, top.page, quote=top.quote)],
        extra=extra,
    )
