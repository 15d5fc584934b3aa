"""Page anchoring: is a quoted value or phrase really on the page a retriever cites?

Every page cited in ``sources`` (with a ``quote``) or in a ``finding`` (its ``value``) is
checked against that page's text. Matching is deliberately forgiving about *format* and
strict about *content*:

- numbers compare by value, ignoring thousands separators, currency signs, accounting
  parentheses and a leading minus: ``"1,577"``, ``"1577"``, ``"(1,577)"``, ``"$1,577.00"``
  and ``"-1577"`` all match a page showing ``(1,577)``;
- phrases compare case-insensitively with all whitespace removed (PDF text often splits
  words: ``"Cash Flow s"``), and with typographic dashes and quotes folded to ASCII.

A quote that is not found makes ``verified`` False; no quote leaves it None (nothing to
check), except that a page outside the document is always False.

The page is what is checked, so the page decides the section: a source or finding naming a section
that does not hold its page (a model's reply pairs a section id with another section's page) is put
under the section that does (:meth:`Tree.section_for_page`, by the quote where it is on the page).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from decimal import Decimal, InvalidOperation

from rapidfuzz import fuzz

from pageindex.retrievers.result import Finding, RetrievalResult, Source
from pageindex.tree.model import Tree

_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?(?!\d)|\d+(?:\.\d+)?|\.\d+"
_NUMBER = re.compile(_NUM)
_FOLD = str.maketrans(
    {
        "\u2013": "-",
        "\u2014": "-",
        "\u2212": "-",
        "\u2018": "'",
        "\u2019": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u00a0": " ",
        "\u200b": "",
    }
)
PHRASE_SIMILARITY = 90.0  # rapidfuzz partial_ratio for a phrase whose numbers are all on the page
_WS = re.compile(r"\s+")
# what may surround a bare number and still count as "just a number"
_NUMERIC_DECOR = re.compile(
    r"^[\s$€£¥(\-+]*(?P<num>" + _NUM + r")[\s)%]*"
    r"(?:[a-zA-Z]{0,3}|(?:million|billion|thousand|percent)s?)?\s*$",
    re.IGNORECASE,
)


def normalize_phrase(text: str) -> str:
    """Lower-case, typographic characters folded, every whitespace removed."""
    return _WS.sub("", text.translate(_FOLD).lower())


def parse_number(token: str) -> Decimal | None:
    """The absolute value of a formatted number (``"(1,577)"`` -> 1577), None if not a number."""
    match = _NUMBER.search(token)
    if match is None:
        return None
    try:
        return abs(Decimal(match.group(0).replace(",", "")))
    except InvalidOperation:
        return None


def numbers_on(text: str) -> set[Decimal]:
    """Every number printed in ``text``, by absolute value."""
    found: set[Decimal] = set()
    for raw in _NUMBER.findall(text.translate(_FOLD)):
        value = parse_number(raw)
        if value is not None:
            found.add(value.normalize())
    return found


def is_numeric_quote(quote: str) -> bool:
    """True for a quote that is only a number with currency/sign/unit decoration."""
    return _NUMERIC_DECOR.match(quote.strip().translate(_FOLD)) is not None


def quote_on_page(page_text: str, quote: str) -> bool:
    """Whether ``quote`` (a value or a phrase) appears in ``page_text``.

    A purely numeric quote matches by value. A phrase matches when its whitespace-free form
    is a substring of the page's, or, failing that, when every number in it is on the page
    and the phrase's letters and digits closely match the page's (rapidfuzz ``partial_ratio`` >=
    ``PHRASE_SIMILARITY``; ``"purchases of property plant and equipment 1577"`` matches
    ``Purchases of property, plant and equipment (PP&E) (1,577)``).
    """
    quote = quote.strip()
    if not quote:
        return False
    if is_numeric_quote(quote):
        value = parse_number(quote)
        return value is not None and value.normalize() in numbers_on(page_text)
    if normalize_phrase(quote) in normalize_phrase(page_text):
        return True
    quote_numbers = [parse_number(n) for n in _NUMBER.findall(quote)]
    if not quote_numbers:
        return False
    page_numbers = numbers_on(page_text)
    if not all(n is not None and n.normalize() in page_numbers for n in quote_numbers):
        return False
    quote_flat, page_flat = _alnum(quote), _alnum(page_text)
    return quote_flat in page_flat or fuzz.partial_ratio(quote_flat, page_flat) >= PHRASE_SIMILARITY


def _alnum(text: str) -> str:
    """Lower-case letters and digits only (punctuation, spaces, thousands separators dropped)."""
    return re.sub(r"[^a-z0-9.]", "", text.translate(_FOLD).lower())


def verify_quote(tree: Tree, page: int, quote: str | None) -> bool | None:
    """Check one citation: False if ``page`` is not in the document or the quote is not on it;
    None when there is no quote to check."""
    if not 1 <= page <= tree.page_count:
        return False
    if quote is None or not quote.strip():
        return None
    return quote_on_page(tree.page_text(page), quote)


def verify_sources(tree: Tree, sources: Iterable[Source]) -> list[Source]:
    """Copies of ``sources`` with ``verified`` set from their quotes, each under a section that holds
    its page."""
    out = []
    for s in sources:
        update: dict = {"verified": verify_quote(tree, s.page, s.quote)}
        node = tree.section_for_page(s.page, s.node_id, s.quote)
        if node is not None and node.node_id != s.node_id:
            update |= {"node_id": node.node_id, "title": node.title}
        out.append(s.model_copy(update=update))
    return out


def verify_findings(tree: Tree, findings: Iterable[Finding]) -> list[Finding]:
    """Copies of ``findings`` with ``verified`` set (the value must be on the finding's page), each
    under a section holding its page."""
    out = []
    for f in findings:
        update: dict = {"verified": verify_quote(tree, f.page, f.value)}
        node = tree.section_for_page(f.page, f.section, f.value)  # one with no section gets the page's
        if node is not None and node.node_id != f.section:
            update["section"] = node.node_id
        out.append(f.model_copy(update=update))
    return out


def verify_result(tree: Tree, result: RetrievalResult) -> RetrievalResult:
    """``result`` with every source and finding checked against the page text (in place)."""
    result.sources = verify_sources(tree, result.sources)
    result.findings = verify_findings(tree, result.findings)
    return result
