"""Display titles: re-join words some PDF renderers split ("Busines s", "PART II I").

Only titles shown to people and models are repaired; node ids and heading matching keep
working on text with the whitespace removed, which the repair never changes. A split is
re-joined only when the joined word is a known filing word or appears unsplit in the
same document, and the pieces are not both words of their own ("in to" stays).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

# words filings set as titles; a joined word from this list needs no evidence in the text
FILING_WORDS = frozenset(
    """
    accounting acquisitions activities analysis area assets balance benefits business cash changes
    comments commitments compensation comprehensive condition consolidated contingencies controls
    data debt derivatives directors disclosures discussion earnings equity executive exhibits
    factors financial flows governance goodwill income independence information instruments
    intangible leases legal liabilities liquidity management market notes officers operations
    overview ownership pension principal procedures proceedings pronouncements properties qualitative
    quantitative relationships results revenue revenues risk schedules segment segments security
    selected sheet sheets shareholders statement statements stockholders summary supplementary
    taxes transactions unresolved
    """.split()
)
# short words that stand alone: a one- or two-letter piece that is one of these stays apart
_SHORT_WORDS = frozenset("a an as at be by do go he if in is it me my no of on or so to up us we i".split())
_ROMAN_SPLIT = re.compile(r"\b(PART|Part)\s+(I{1,3})\s+(I{1,2}|V)\b")
_TOKEN = re.compile(r"\S+")
_WORD = re.compile(r"[A-Za-z]+")
_ROMANS = {"I", "II", "III", "IV"}
_ROMAN_LABELS = frozenset("ii iv vi ix xi".split())  # "Article II": a label, not a split word
_CUT_AT = 115  # titles are cut at 120 characters


def _parts(token: str) -> tuple[str, str, str] | None:
    """(leading punctuation, letters, trailing punctuation) for a token that is one word."""
    m = re.fullmatch(r"([(\[“\"']?)([A-Za-z]+)([.,:;)\]”\"'’]*)", token)
    return (m.group(1), m.group(2), m.group(3)) if m else None


def _candidates(title: str) -> list[tuple[str, str]]:
    tokens = _TOKEN.findall(title)
    out = []
    for a, b in zip(tokens, tokens[1:], strict=False):
        pa, pb = _parts(a), _parts(b)
        if pa and pb and not pa[2] and not pb[0]:
            out.append((pa[1].lower(), pb[1].lower()))
    return out


def _plausible(a: str, b: str) -> bool:
    """Pieces worth counting: a one- or two-letter tail that is no word of its own, or longer
    pieces that join into a filing word (most adjacent words in a title are just words)."""
    if len(b) <= 2:
        return b not in _SHORT_WORDS and b not in _ROMAN_LABELS
    return a + b in FILING_WORDS


def word_counts(titles: Iterable[str], texts: Iterable[str]) -> Counter[str]:
    """How often each word a repair of ``titles`` would consult appears in ``texts``."""
    wanted: set[str] = set()
    for title in titles:
        for a, b in _candidates(title):
            if _plausible(a, b):
                wanted.update((a, b, a + b))
    counts: Counter[str] = Counter()
    if not wanted:
        return counts
    pattern = re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, wanted), key=len, reverse=True)) + r")\b")
    counts.update(pattern.findall("\n".join(texts).lower()))
    return counts


def _joins(a: str, b: str, counts: Counter[str], label: bool = False) -> bool:
    """Whether pieces ``a`` and ``b`` (lower case) are one split word. ``label``: ``b`` is a
    single capital letter, which after a word of its own is a label ("SCHEDULE D", "Class A")."""
    joined = a + b
    if not _plausible(a, b) or label and (a in FILING_WORDS or counts[a] >= 2):
        return False
    if joined not in FILING_WORDS and counts[joined] < 2:
        return False
    if len(b) <= 2:
        return b not in _SHORT_WORDS
    # longer pieces ("CONSOLID ATED", "OVERVI EW" has a 2-letter one): the joined word must be
    # at least as common in the document as either piece, so two real words stay apart
    return counts[joined] >= max(counts[a], counts[b]) and not (a in FILING_WORDS and b in FILING_WORDS)


def _join_roman(m: re.Match[str]) -> str:
    numeral = m.group(2) + m.group(3)
    return f"{m.group(1)} {numeral}" if numeral in _ROMANS else m.group(0)


def repair_title(title: str, counts: Counter[str]) -> str:
    """``title`` with split words re-joined; unchanged when nothing is safe to join."""
    title = _ROMAN_SPLIT.sub(_join_roman, title)
    tokens = _TOKEN.findall(title)
    if len(tokens) < 2:
        return title
    # a title cut at the length limit ends in a cut word ("... the market price of our s")
    last = len(tokens) - 1 if len(title) >= _CUT_AT else len(tokens)
    out = [tokens[0]]
    joined = False
    for i, token in enumerate(tokens[1:], start=1):
        pa, pb = _parts(out[-1]), _parts(token)
        if (
            i < last
            and pa
            and pb
            and not pa[2]
            and not pb[0]
            and not (out[-1].isupper() and pb[1] in _ROMANS and len(pa[1]) <= 2)
            and _joins(pa[1].lower(), pb[1].lower(), counts, label=len(pb[1]) == 1 and pb[1].isupper())
        ):
            out[-1] = out[-1] + token
            joined = True
        else:
            out.append(token)
    return " ".join(out) if joined else title
