"""Numbers as filings write them: ``$1,577 million``, ``(473)``, ``10.3%``, ``$2,018mn``, ``0.54x``.

:func:`extract_quantities` finds them in free text with their scale (thousand .. trillion), whether
they are percentages, and the precision they were written with; :func:`quantities_match` says whether
two quantities agree within the precision either was stated to, allowing for an unstated scale
(``1577`` vs ``$1.577 billion``) and for ratio vs percent (``0.103`` vs ``10.3%``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

from pageindex.retrievers.numbers import EUROPEAN_NUMBER, decimal_comma, point_form
from pageindex.retrievers.numbers import SCALES as _RETRIEVER_SCALES

# The scale words of the languages that write a decimal comma: German Tsd./Mio./Mrd., Dutch and Italian
# mln/mld (mrd), French milliard(s). ("Bio." is left out: a German trillion, an English biology.)
EUROPEAN_SCALES: dict[str, float] = {
    "tsd": 1e3, "mio": 1e6, "mln": 1e6, "mrd": 1e9, "mld": 1e9, "milliard": 1e9, "milliards": 1e9,
}
EUROPEAN_SCALE = r"(?:tsd|mio|mrd|mln|mld)\.?|milliards?"
# The retrievers' scale words, plus two the judge also meets in model answers ("$5 mil", "$2T"), and the
# decimal-comma languages' ("1.234,5 Mio. EUR").
SCALES: dict[str, float] = {**_RETRIEVER_SCALES, "mil": 1e6, "t": 1e12, **EUROPEAN_SCALES}
_SINGLE_LETTER = {"k", "m", "b", "t"}

# The currencies a figure may carry: a dollar sign with its country's letters (US$, NT$, HK$, C$, R$),
# the euro, pound, yen/yuan, won and rupee signs, and the ISO 4217 codes of the currencies filings report
# in, before or after the figure ("EUR 1.2 billion", "1,601,688 million JPY"). FinanceBench is all US
# dollars; a 20-F or another country's annual report is not, and a gold in yen was read as words.
CURRENCY_CODES = "USD|EUR|GBP|JPY|CHF|CNY|RMB|TWD|NTD|HKD|CAD|AUD|INR|KRW|SEK|NOK|DKK|BRL|MXN|ZAR|SGD"
CURRENCY_SIGN = r"(?<![A-Za-z])[A-Z]{0,2}\$|[€£¥₩₹]"
CURRENCY = rf"{CURRENCY_SIGN}|(?<![A-Za-z])(?:{CURRENCY_CODES})(?![A-Za-z])"

# Blanks only after a part that matched (no run of blanks can be split between optional parts: a
# long run of spaces would otherwise take minutes), and a sign only set tight to its figure ("-$473",
# "–10%"): a spaced dash is punctuation ("$2.45 – 10% above consensus").
_NUMBER = re.compile(
    rf"""
    (?:(?P<open>\()\s*)?
    (?P<sign>[-−–](?=(?:{CURRENCY_SIGN}|\()?\d))?
    (?:(?P<cur>{CURRENCY})\s*)?
    (?:(?P<paren>\()\s*)?
    (?P<num>\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)
    (?P<close>\))?
    (?P<pct>\s?%(?:\s?points?\b)?|\s(?:percent(?:age)?\s?points?|percent|per\s?cent|pct)\b|\s?pp\b)?
    (?:\s?(?P<scale>thousands?|millions?|billions?|trillions?|mn|bn|mm|mil|tn|[kmbt]|{EUROPEAN_SCALE})(?![a-z]))?
    (?P<code>\s?(?:{CURRENCY_CODES}|US\$|[€$£¥])(?![A-Za-z])(?!\s?\d))?
    """,
    re.VERBOSE | re.IGNORECASE,
)
_MONTHS = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_MONTH_BEFORE = re.compile(rf"\b{_MONTHS}\s+$", re.IGNORECASE)
_MONTH_AFTER = re.compile(rf"\s+{_MONTHS}\b", re.IGNORECASE)
# A range's dash: an en dash, spaced or not ("35–40%", "35 – 40%"), or a hyphen set tight ("35-40%"),
# the second figure's currency sign written again or not ("$1.0-$1.1 billion", "£200-£250 million").
_RANGE_DASH = re.compile(rf"x?(?:\s*–\s*|-)(?:{CURRENCY_SIGN})?")  # "x": multiples, "2.1x-2.4x"
# What may not stand before a range's first figure: a letter or a digit glued on ("FY22-23", "10b5-1"),
# or another dash ("2022-12-31", "1-800-555-0199": identifiers and dates, not ranges).
_GLUED = re.compile(r"[\w.\-–/]$")
_SIGN_AHEAD = re.compile(rf"(?:{CURRENCY_SIGN})\d")


# What tells a figure's convention when its shape does not: a unit glued to it, before ("EUR 1,2 billion",
# "€1,5") or after ("43,42 %", "1,2 billion", "5,5 EUR", "109,36 $"; a sign after a figure is its currency
# unless a figure follows it), and a scale word only decimal-comma languages write ("1,234 Mio." is 1.234
# million, "1.234 Mrd." 1,234 billion).
_UNIT_BEFORE = re.compile(rf"(?:{CURRENCY})\s?$")
_UNIT_AFTER = re.compile(
    rf"\s?(?:%|[€$£¥](?!\s?\d)|(?:thousands?|millions?|billions?|trillions?|mn|bn|{EUROPEAN_SCALE}|{CURRENCY_CODES})"
    r"(?![A-Za-z]))",
    re.IGNORECASE,
)
_EUROPEAN_AFTER = re.compile(rf"\s?(?:{EUROPEAN_SCALE})(?![A-Za-z])", re.IGNORECASE)
# "1,234 Mio.": the English thousands' shape, read as a decimal comma only before such a scale word
_COMMA_THOUSAND = re.compile(r"(?<![\d.,])\d{1,3},\d{3}(?![\d]|[.,]\d)")
# "1 234 567" grouped by no-break, narrow or thin spaces (typesetting, never a list of numbers)
_SPACED = re.compile(r"(?<![\d.,])\d{1,3}(?:[\u00a0\u202f\u2009]\d{3})+(?![\d]|[.,]\d)")


def in_point_form(text: str) -> str:
    """``text`` with every number of the decimal-comma convention rewritten in the decimal point's,
    character for character (:func:`~pageindex.retrievers.numbers.point_form`: positions stay), so
    ``1.234,5 Mio. EUR`` reads as 1,234.5 million euros and ``43,42 %`` as 43.42%. Each number is read
    by its own shape, then its context:

    - a decimal comma after grouped thousands (``1.234,5``, ``1 234,5``), two dot-groups or more
      (``1.234.567``) and thousands grouped by no-break, narrow or thin spaces (``1 234``) can only be
      the decimal comma's: always read so;
    - a comma and one or two digits (``43,42``, ``1,2``) is a decimal comma when a currency or a scale
      is glued to the figure (``EUR 1,2 billion``, ``43,42 %``) or the whole text writes decimals with a
      comma (:func:`~pageindex.retrievers.numbers.decimal_comma`, the extractive baseline's page test);
      bare in an English text it is a list ("notes 3,5"), as before;
    - one dot-group (``1.234``) and a comma with three digits (``1,234``) are ambiguous: read as the
      decimal point writes them (``1.234`` one point two three four, ``1,234`` one thousand two hundred
      thirty-four), in any text, a text of decimal commas too, unless a scale word only decimal-comma
      languages write follows (``1,234 Mio.`` is 1.234 million, ``1.234 Mrd.`` 1,234 billion). An
      answer is short: two list-like commas ("pages 12,13 and 45,46") make it a text of decimal commas
      by the page test, and must not turn "$1.234 billion" into 1,234 billion (the extractive baseline,
      reading whole pages of figures, does read ``1.234`` there as thousands);
    - a number glued to a letter before it (``FY2021,12%``) is left as it is.

    A gold and an answer are each read so, whichever convention either uses."""
    if not any(c in text for c in ",.\u00a0\u202f\u2009"):
        return text
    whole = decimal_comma(text)

    def european(m: re.Match[str]) -> bool:
        number = m.group(0)
        if m.start() and text[m.start() - 1].isalnum():
            return False  # glued to a name: "FY2021,12%" is FY2021 and 12%
        if "," in number and any(c in number for c in ". \u00a0\u202f\u2009") or number.count(".") >= 2:
            return True  # its shape says so
        named = bool(_EUROPEAN_AFTER.match(text, m.end()))
        if "," not in number:  # "1.234": a few list-like commas must not turn "$1.234 billion"
            return named
        before = _UNIT_BEFORE.search(text, max(0, m.start() - 8), m.start())
        return whole or named or bool(before or _UNIT_AFTER.match(text, m.end()))

    read = [m for m in EUROPEAN_NUMBER.finditer(text) if european(m)]
    read += [m for m in _COMMA_THOUSAND.finditer(text) if _EUROPEAN_AFTER.match(text, m.end())]
    read += list(_SPACED.finditer(text))  # the three shapes never overlap
    if not read:
        return text
    chars = list(text)
    for m in read:
        chars[m.start() : m.end()] = point_form(m.group(0))
    return "".join(chars)


def _range_start(text: str, m: re.Match[str], found: list[Quantity]) -> Quantity | None:
    """The figure a dash before ``m`` joins into a range, if it does: the last figure read, standing
    alone, right before the dash; smaller than ``m``'s ("120-80 = 40", "ASC 842-10", "a 2-1 vote" are
    no ranges); in a unit ``m`` agrees with ("35–40%", "$1.0–1.1 billion"; not "$2.45 – 10% above
    consensus" or "42.3% – 1.2 points higher": a dash as punctuation)."""
    if m.group("sign") == "−" or not found:
        return None
    prev = found[-1]
    if not _RANGE_DASH.fullmatch(text[prev.end : m.start("num")]):
        return None
    if prev.other_end is not None or prev.minus or _GLUED.search(text[: prev.lead]):
        return None
    if re.match(r"[-–]\d", text[m.end() :]):
        return None  # a chain of dashed numbers: "1-800-555-0199"
    if _MONTH_BEFORE.search(text[max(0, prev.lead - 12) : prev.lead]):
        return None  # "March 1-15": days of a date
    pct, money = bool(m.group("pct")), bool(m.group("cur") or m.group("code"))
    if not same_currency(prev.currency, currency_of(m.group("code") or m.group("cur") or "")):
        return None  # "$5-€6 billion": two amounts, not a range
    scaled = bool(m.group("scale"))
    if prev.percent and not pct or (prev.money or prev.scale_stated) and pct or money and prev.percent:
        return None
    raw = float(m.group("num").replace(",", ""))
    scale_word = (m.group("scale") or "").lower().rstrip(".")
    if prev.scale_stated and scale_word in SCALES:  # "$900 million–$1.1 billion": compare amounts
        if prev.value >= raw * SCALES[scale_word]:
            return None
    elif prev.value / prev.scale >= raw:
        return None
    return prev if (pct or money or scaled or not (prev.percent or prev.money or prev.scale_stated)) else None
_LIST_MARKER = re.compile(r"(?m)^[ \t]*[-*•]?[ \t]*\(?(\d{1,2})[.)][ \t]")
# "(1) Current Health and (2) Two Peaks": a one-digit enumerator inside running text.
_INLINE_ENUMERATOR = re.compile(
    r"\((\d)\)[ \t]+(?!(?:thousands?|millions?|billions?|trillions?|percent)\b)[A-Za-z]"
)


@dataclass(frozen=True)
class Quantity:
    """A number as written. ``value`` is in base units (scale applied; a percent stays in percent)."""

    value: float
    decimals: int  # digits after the decimal point as written
    scale: float  # 1.0 when no scale word was written
    scale_stated: bool
    percent: bool
    negative: bool
    text: str
    minus: bool = False  # written with a minus sign ("-55.2%"), not parentheses or words
    money: bool = False  # written with a currency sign or code ("$", "US$", "USD")
    start: int = -1  # where the digits begin and end in the text they were read from
    end: int = -1
    lead: int = -1  # where the figure's match begins (its sign, bracket or currency)
    plus: bool = False  # written with a plus sign ("+4.1%")
    worded: int = 0  # the sign its words give it: -1 "a loss of 45", +1 "a profit of 45" (:data:`_WORDED`)
    other_end: float | None = None  # one end of a range ("35–40%"): the other end's value
    currency: str = ""  # the currency written with it (:func:`currency_of`): "" when none

    @property
    def sign(self) -> int:
        """-1 written negative ("-45", "(45)", "a loss of 45"), +1 written positive ("+45", "a profit of
        45"), 0 unsigned ("45"). A sign written on the figure comes before its words ("a gain of $(45)"
        is -1)."""
        if self.negative:
            return -1
        return 1 if self.plus else self.worded

    @property
    def unit(self) -> float:
        """The size of one step of the last written digit, in base units."""
        return 10.0 ** (-self.decimals) * self.scale

    @property
    def significant_digits(self) -> int:
        digits = self.text_digits.lstrip("0")
        return len(digits)

    @property
    def text_digits(self) -> str:
        return re.sub(r"[^0-9]", "", self.text)


def _times(after: str) -> bool:
    """``0.54x``: a multiple, not part of a name."""
    return after[:1] in {"x", "X"} and not after[1:2].isalnum()


# Words right before a figure that give it a sign: what it is ("a loss of", "net loss was", "a profit of",
# "a gain of") or how it moved ("a decrease of", "declined by", "grew"; not "rose to": that is a level).
# Only these, next to the figure: "income (loss) of" and "net loss per share of" say nothing.
_LOSS = r"loss(?:es)?|deficits?|outflows?|decreases?|declines?"
_GAIN = r"profits?|gains?|surplus(?:es)?|income|inflows?|increases?"
_MOVE = r"(?:was|were|totall?ing|totall?ed|amounting\s+to|came\s+to)"
_WORDED = re.compile(
    rf"\b(?:(?P<loss>{_LOSS})\s+(?:of|{_MOVE})|(?P<gain>{_GAIN})\s+(?:of|{_MOVE})"
    r"|(?P<fell>decreased|declined|fell|dropped)(?:\s+by)?|(?P<rose>increased|grew|rose)(?:\s+by)?)"
    r"\s+(?:(?:about|approximately|roughly|around|nearly|almost)\s+)?$",
    re.IGNORECASE,
)


def _worded(before: str) -> int:
    """The sign the words right before a figure give it (:data:`_WORDED`): -1, +1 or 0."""
    m = _WORDED.search(before)
    if not m:
        return 0
    return -1 if m.group("loss") or m.group("fell") else 1


def _is_year(num: str, m: re.Match[str]) -> bool:
    if m.group("cur") or m.group("pct") or m.group("scale") or "," in num or "." in num:
        return False
    return len(num) == 4 and 1900 <= int(num) <= 2100


def extract_quantities(text: str) -> list[Quantity]:
    """Every number in ``text`` except years, days of dates, list markers and parts of names
    (``FY2019``, ``10-K``, ``Q2``), a decimal comma read as :func:`in_point_form` says."""
    text = in_point_form(text)
    markers = {m.start(1) for m in _LIST_MARKER.finditer(text)}
    markers |= {m.start(1) for m in _INLINE_ENUMERATOR.finditer(text)}
    found: list[Quantity] = []
    for m in _NUMBER.finditer(text):
        num = m.group("num")
        start = m.start("num")
        before = text[max(0, start - 1) : start]
        after = text[m.end("num") : m.end("num") + 2]
        first = _range_start(text, m, found)
        glued = before in {"-", "/"} and start >= 2 and text[start - 2].isalnum() and not first
        if before.isalpha() or glued:
            continue  # FY2019, Q2, 10-K's "10" is fine but "FY-2019"/"2019/20" tails are not numbers
        if after[:1] in {"-", "/"} and after[1:2].isalpha() and not _SIGN_AHEAD.match(text, m.end("num") + 1):
            continue  # 10-K, 8-K, 10-Q (not "NT$5-NT$6 billion": a range's second figure)
        unit = m.group("scale") or m.group("pct") or m.group("code")  # "1271,78CHF": a code glued on
        if after[:1].isalpha() and not unit and not _times(after):
            continue  # 737MAX, 3Q22
        if start in markers:
            continue
        if _MONTH_BEFORE.search(text[max(0, start - 12) : start]) or _MONTH_AFTER.match(text[m.end("num") :]):
            continue  # the day of a date: "January 28, 2023", "28 January"
        if _is_year(num, m):
            continue
        scale_word = (m.group("scale") or "").lower().rstrip(".")
        scale = 1.0
        if scale_word:
            # A lone letter (m, b, k) is a scale only with a currency sign or code: "$8.7B",
            # "5.818 B USD"; without one, "3M" is a name, not a figure.
            money = m.group("cur") or m.group("code") or first and first.money
            if scale_word in _SINGLE_LETTER and not money:
                continue
            scale = SCALES[scale_word]
        clean = num.replace(",", "")
        value = float(clean)
        ranged: float | None = None
        decimals = len(clean.split(".")[1]) if "." in clean else 0
        sign = bool(m.group("sign"))
        if first:
            # "35–40%", "$1.0-1.1 billion": a dash between two figures joins a range, it is no minus;
            # the first figure is in the second's unit.
            sign = False
            found.pop()
            if not (first.percent or first.scale_stated) and (m.group("pct") or scale_word):
                first = replace(
                    first, value=first.value / first.scale * scale, scale=scale,
                    scale_stated=bool(scale_word), percent=bool(m.group("pct")),
                )
            found.append(replace(first, other_end=value * scale))
            ranged = first.value
        negative = sign or bool((m.group("open") or m.group("paren")) and m.group("close"))
        lead = m.start() + len(m.group(0)) - len(m.group(0).lstrip())
        found.append(
            Quantity(
                value=value * scale,
                decimals=decimals,
                scale=scale,
                scale_stated=bool(scale_word),
                percent=bool(m.group("pct")),
                negative=negative,
                text=num,
                minus=sign,
                other_end=ranged,
                money=bool(m.group("cur") or m.group("code")),
                currency=currency_of(m.group("code") or m.group("cur") or "")
                or (first.currency if first else ""),
                start=start,
                end=m.end(),
                lead=lead,
                plus=text[:lead].endswith("+"),
                worded=_worded(text[max(0, lead - 40) : lead]),
            )
        )
    return found


def number_quantity(value: float | int, *, scale: float = 1.0, scale_stated: bool = False) -> Quantity:
    """A gold answer given as a bare number (``1577``, ``0.103``)."""
    text = f"{value:.10g}" if isinstance(value, float) else str(value)
    decimals = len(text.split(".")[1]) if "." in text and "e" not in text else 0
    return Quantity(
        value=float(value) * scale,
        decimals=decimals,
        scale=scale,
        scale_stated=scale_stated,
        percent=False,
        negative=value < 0,
        text=text,
    )


_POWERS = [10.0**k for k in (-12, -9, -6, -3, 0, 3, 6, 9, 12)]


def _forms(q: Quantity) -> list[tuple[float, float]]:
    """(value, unit) pairs the quantity may stand for: itself, and a percent as a ratio."""
    forms = [(q.value, q.unit)]
    if q.percent:
        forms.append((q.value / 100.0, q.unit / 100.0))
    return forms


def _pairs(gold: Quantity, answer: Quantity) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    """The (gold form, answer form) pairs worth comparing. Two percents compare as written; a percent
    gold against a plain answer only as a ratio ("40%" is "0.4", not a bare "40")."""
    if gold.percent and answer.percent:
        return [(_forms(gold)[0], _forms(answer)[0])]
    if gold.percent:
        return [(_forms(gold)[1], _forms(answer)[0])]
    return [(g, a) for g in _forms(gold) for a in _forms(answer)]


# What a currency's sign or code is written as, by the currency: the signs a dollar or a yen stands for
# in more than one country are their own families ("$" is any dollar, "¥" yen or yuan).
_CURRENCY_NAMES = {
    "US$": "USD", "NT$": "TWD", "NTD": "TWD", "HK$": "HKD", "C$": "CAD", "CA$": "CAD", "A$": "AUD",
    "AU$": "AUD", "S$": "SGD", "R$": "BRL", "RMB": "CNY", "€": "EUR", "£": "GBP", "₩": "KRW", "₹": "INR",
}
_DOLLARS = {"USD", "TWD", "HKD", "CAD", "AUD", "SGD", "BRL", "MXN"}
_YEN_OR_YUAN = {"JPY", "CNY"}


def currency_of(written: str) -> str:
    """The currency a figure's sign or code names: an ISO code (``USD``, ``EUR``, ``TWD`` for
    ``NT$``), ``$`` for a bare dollar sign, ``¥`` for the yen/yuan sign, ``""`` for none."""
    token = re.sub(r"\s+", "", written).upper()
    return _CURRENCY_NAMES.get(token, token)


def same_currency(a: str, b: str) -> bool:
    """Two figures' currencies do not contradict each other: either is unwritten, they are the same,
    or one is a sign several currencies share (``$`` any dollar, ``¥`` yen or yuan) and the other
    one of those. ``EUR 1.2 billion`` is not ``$1.2 billion``, nor ``NT$`` ``US$``."""
    if not a or not b or a == b:
        return True
    family = {"$": _DOLLARS, "¥": _YEN_OR_YUAN}
    return b in family.get(a, ()) or a in family.get(b, ())


def quantities_match(
    gold: Quantity, answer: Quantity, *, rel_tol: float = 0.001, answer_precision: bool = True,
    rescale: bool = True, gold_steps: float = 0.5, within_range: bool = False,
) -> bool:
    """True when ``answer`` states ``gold`` to the precision either was written with.

    The tolerance is ``gold_steps`` steps of the gold's last digit (half a step: the gold's rounding;
    one step also allows for rounded intermediate results), or of the answer's last digit when the
    answer has at least two significant digits (so "$1.6 billion" matches 1,577 million but a bare
    "1" does not match 1.33), or ``rel_tol`` of the gold value. Magnitudes are compared (signs are
    written too many ways: "(473)", "-$473", "a decline of 473"). When either side has no stated
    scale, the answer may be off by a power of 1,000 ("1577" in a question "in USD millions") —
    unless ``rescale`` is False or either side is a percent (a percent has no thousands scale).
    A range ("35–40%") states the gold only when both its ends round to it: "1–2%" does not state
    0.01, however coarse that gold is. With ``within_range`` (a figure that supports an answer rather
    than being it), a narrow range that holds the gold agrees with it: "about 0.5-0.6" with 0.54 (the
    range at most a fifth of its upper end wide). A figure in another currency than the gold's is
    another amount (:func:`same_currency`).
    """
    if not same_currency(gold.currency, answer.currency):
        return False  # the same number in another currency is another amount
    if answer.other_end is not None and within_range:
        low, high = sorted((answer.value, answer.other_end))
        if high - low > 0.2 * abs(high):
            return False
        # points across the range, finer than the 1% tolerance, each compared as a figure of its own
        points = (low + (high - low) * i / 40 for i in range(41))
        return any(
            quantities_match(
                gold, replace(answer, value=v, other_end=None, decimals=answer.decimals + 2),
                rel_tol=rel_tol, answer_precision=False, rescale=rescale, gold_steps=gold_steps,
            )
            for v in points
        )
    if answer.other_end is not None:
        ends = (replace(answer, other_end=None), replace(answer, value=answer.other_end, other_end=None))
        return all(
            quantities_match(
                gold, end, rel_tol=rel_tol, answer_precision=answer_precision, rescale=rescale,
                gold_steps=min(gold_steps, 0.5),
            )
            for end in ends
        )
    both_scaled = gold.scale_stated and answer.scale_stated
    fixed = both_scaled or not rescale or gold.percent or answer.percent
    powers = [1.0] if fixed else _POWERS
    for (g_val, g_unit), (a_val, a_unit) in _pairs(gold, answer):
        g_abs = abs(g_val)
        for p in powers:
            a_abs = abs(a_val) * p
            tol = gold_steps * g_unit
            if answer_precision and (answer.significant_digits >= 2 or answer.decimals):
                tol = max(tol, 0.5 * a_unit * p)
            tol = max(tol, rel_tol * g_abs) * (1 + 1e-9) + 1e-12
            if math.isclose(a_abs, g_abs) or abs(a_abs - g_abs) <= tol:
                if g_abs == 0 and a_abs != 0:
                    continue
                return True
    return False


def implied_by_difference(gold: Quantity, quantities: list[Quantity], *, limit: int = 24) -> bool:
    """Whether ``gold`` is the gap between two stated figures of the same kind: an answer that gives a
    margin of 22.5% and then 21.4% has stated a 1.1 point change without writing it. Both figures
    are rounded, so the gap may be off by one step of their last digit (plus half a step of the
    gold's). Percent golds pair with percent figures, amounts with amounts; only the first
    ``limit`` figures are paired."""
    head = [q for q in quantities[:limit] if q.percent == gold.percent]
    for i, a in enumerate(head):
        for b in head[i + 1 :]:
            if a.value == b.value or (a.scale_stated and b.scale_stated and a.scale != b.scale):
                continue
            gap = abs(a.value - b.value)
            if not gold.percent and not (a.scale_stated and b.scale_stated and gold.scale_stated):
                continue  # amounts only when every scale is written out
            tol = max(a.unit, b.unit) + 0.5 * gold.unit
            if abs(gap - abs(gold.value)) <= tol * (1 + 1e-9):
                return True
    return False
