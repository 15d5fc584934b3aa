"""BM25 ranking of a tree's pages or sections (``bm25s``), shared by bm25, extractive and followup.

``ranker_for(tree, unit)`` returns a cached :class:`Ranker`; ``Ranker.search(query, k)`` the best
chunks with their PDF pages. Tokens are lower-cased words and numbers of any script (accents folded,
CJK as character bigrams) with a light suffix stemmer and English stop words removed; queries are
widened with a few finance synonyms (capex -> purchases of property, plant and equipment), since
filings rarely use the words questions use.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Callable, Hashable
from functools import cache
from typing import TYPE_CHECKING, Literal, TypeVar

from pydantic import BaseModel

from pageindex.tree.model import Tree

if TYPE_CHECKING:  # bm25s, numpy and rapidfuzz are imported when a ranker is first used
    import numpy as np

Unit = Literal["page", "section"]
T = TypeVar("T")

# a word is a run of letters or digits in any script (accents folded first: see _folded); numbers keep
# their separators; runs of CJK characters, written without spaces, are indexed as character bigrams
_TOKEN_RE = re.compile(r"[^\W_]+(?:[.,][0-9]+)*")
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")
# words of question boilerplate ("Give a response to the question by relying on the details shown in ...")
_QUESTION_WORDS = {
    "fy", "company", "give", "response", "based", "using", "answer", "question", "relying", "details",
    "shown", "assume", "analyst", "public", "equities", "following", "primarily", "information",
    "calculate", "calculated", "round", "decimal", "places", "units", "unit", "usd", "percent",
    "percentage", "what", "which", "how", "much", "many", "does", "did", "has", "have", "value",
    "amount", "respond", "provide", "provided", "stated", "reported", "answering", "resource",
    "resources", "only", "investment", "banker", "conclusions", "drawing", "statement", "statements",
    "use", "define", "defined", "terms", "term", "please", "state", "year", "fiscal",
}


@cache
def _stop_words() -> frozenset[str]:
    return _english_stop_words() | frozenset(_QUESTION_WORDS)

# question words -> words filings use for the same thing (extra query terms, never replacements)
FINANCE_SYNONYMS: dict[str, str] = {
    "capex": "purchases property plant equipment capital expenditures",
    "capital expenditure": "purchases property plant equipment additions",
    "revenue": "revenues net sales total",
    "sales": "revenue net sales",
    "profit": "income earnings",
    "net income": "net earnings attributable",
    "earnings per share": "eps diluted basic per share",
    "eps": "earnings per share diluted",
    "cogs": "cost of sales cost of goods sold",
    "cost of goods sold": "cost of sales",
    "operating income": "operating profit income from operations",
    "d&a": "depreciation amortization",
    "dividend": "dividends paid per share",
    "inventory": "inventories",
    "ppe": "property plant equipment net",
    "pp&e": "property plant equipment net",
    "total assets": "balance sheet total assets",
    "debt": "borrowings notes long-term debt",
    "cash flow": "cash provided operating activities",
    "free cash flow": "cash provided operating activities purchases property plant equipment",
    "gross margin": "gross profit net sales cost of sales",
    "operating margin": "operating income net sales",
    "working capital": "current assets current liabilities",
    "liquidity": "current assets current liabilities cash equivalents",
    "segment": "segments business segment",
    "headcount": "employees",
    "buyback": "repurchase treasury stock",
    "share repurchase": "purchases treasury stock",
    "cash flow statement": "consolidated statements cash flows operating investing financing activities",
    "statement of cash flows": "consolidated cash flows operating investing financing activities",
    "income statement": "consolidated statements operations income net sales revenue",
    "statement of income": "consolidated operations net sales revenue",
    "p&l": "consolidated statements operations income",
    "balance sheet": "consolidated balance sheets total assets liabilities equity",
    "statement of financial position": "balance sheets total assets liabilities",
    "quick ratio": "current assets current liabilities cash receivables marketable securities",
    "current ratio": "total current assets total current liabilities",
    "days payable": "accounts payable cost of sales",
    "dpo": "accounts payable cost of sales",
    "fixed asset": "property plant equipment net",
    "dividend payout": "dividends net income",
    "ebitda": "operating income depreciation amortization",
    "effective tax rate": "provision income taxes before",
    "roa": "net income total assets",
    "return on assets": "net income total assets",
}


def _stem(token: str) -> str:
    """A light stemmer: enough to join 'expenditures'/'expenditure', 'sales'/'sale',
    'repurchase'/'repurchased'/'repurchases', 'price'/'pricing': an inflection's ending is cut, and
    then a final silent "e" (the base form keeps it, "-ed", "-es" and "-ing" drop it)."""
    if token[0].isdigit() or len(token) <= 3:
        return token
    endings = (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ed", ""), ("ees", "ee"), ("es", ""), ("s", ""))
    for suffix, keep in endings:
        if token.endswith(suffix) and len(token) - len(suffix) >= 3:
            if suffix == "s" and token.endswith(("ss", "us", "is")):
                return token
            token = token[: -len(suffix)] + keep
            break
    return token[:-1] if len(token) >= 4 and token.endswith("e") and not token.endswith("ee") else token


@cache
def _raised_marks() -> dict[int, str]:
    """A space for each character printed above or below the line (Unicode's ``<super>``/``<sub>``
    forms: footnote marks "¹", "™", "℠", "m²"): folded as compatibility forms they would join the word
    they are printed on ("Azure™" -> "azureTM", "1,577¹" -> "15771")."""
    return {
        c: " " for c in range(0x80, 0x10000)
        if unicodedata.decomposition(chr(c)).startswith(("<super>", "<sub>"))
    }


def _folded(text: str) -> str:
    """``text`` lower-cased with its accents and compatibility forms folded: "Société" -> "societe",
    the "ﬁ" ligature PDFs print -> "fi", full-width letters and digits -> ASCII (a query typed either way
    matches); a superscript or subscript is a word break, as it was before folding."""
    if text.isascii():  # most filings' pages: nothing to fold
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text.translate(_raised_marks())).lower()
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _words(text: str) -> list[str]:
    """The raw word tokens of ``text`` (folded), a CJK run split into its character bigrams (a lone
    character stays itself): "营业收入" -> "营业", "业收", "收入"."""
    out: list[str] = []
    for raw in _TOKEN_RE.findall(_folded(text)):
        if not _CJK_RUN.search(raw):
            out.append(raw)
            continue
        for piece in re.split(f"({_CJK_RUN.pattern})", raw):
            if not piece:
                continue
            if _CJK_RUN.fullmatch(piece):
                out += [piece] if len(piece) == 1 else [piece[i : i + 2] for i in range(len(piece) - 1)]
            else:
                out.append(piece)
    return out


def tokenize(text: str) -> list[str]:
    """Lower-cased, stemmed content tokens, in any script; numbers keep their separators stripped
    ('1,577' -> '1577')."""
    out: list[str] = []
    stop = _stop_words()
    for raw in _words(text):
        token = raw.replace(",", "")
        if token in stop or (len(token) < 2 and not token.isdigit() and not _CJK_RUN.match(token)):
            continue
        out.append(_stem(token))
    return out


def expand_query(query: str) -> str:
    """The query plus the synonyms of any finance phrase it contains."""
    low = query.lower()
    extra = [
        words for phrase, words in FINANCE_SYNONYMS.items() if re.search(rf"\b{re.escape(phrase)}\b", low)
    ]
    return " ".join([query, *extra])


class Chunk(BaseModel):
    """One indexed unit: a page, or a leaf section with its pages."""

    key: str  # "p12" or the node_id
    pages: list[int]  # 1-based PDF pages
    node_id: str | None = None
    title: str = ""


class Hit(BaseModel):
    chunk: Chunk
    score: float
    rank: int  # 1-based


class Ranker:
    """BM25 over a tree's pages (``unit="page"``) or leaf sections (``unit="section"``)."""

    def __init__(self, tree: Tree, unit: Unit = "page"):
        self.tree = tree
        self.unit: Unit = unit
        self.chunks: list[Chunk] = []
        texts: list[str] = []
        if unit == "page":
            for page in range(1, tree.page_count + 1):
                leaf = tree.leaf_for_page(page)
                self.chunks.append(
                    Chunk(key=f"p{page}", pages=[page], node_id=leaf.node_id if leaf else None,
                          title=leaf.title if leaf else "")
                )
                texts.append(tree.page_text(page))
        else:
            for leaf in tree.leaves():
                self.chunks.append(
                    Chunk(key=leaf.node_id, pages=list(leaf.pages()), node_id=leaf.node_id, title=leaf.title)
                )
                texts.append(leaf.title + "\n" + tree.node_text(leaf.node_id))
        corpus = [tokenize(t) or ["_empty_"] for t in texts]
        self._vocab = {tok for doc in corpus for tok in doc}
        self._doc_freq: dict[str, int] = {}
        for doc in corpus:
            for tok in set(doc):
                self._doc_freq[tok] = self._doc_freq.get(tok, 0) + 1
        import bm25s

        self._bm25 = bm25s.BM25()
        self._bm25.index(corpus, show_progress=False) if corpus else None
        self._made: dict[Hashable, object] = {}  # see :meth:`kept`

    def kept(self, key: Hashable, make: Callable[[], T]) -> T:
        """``make()``, made once for this ranker under ``key`` and kept as long as the ranker is: what a
        retriever reads off the tree's pages for every question (extractive's rows and sentences of a
        page, with their words) lives with the tree's ranking index, in :func:`ranker_for`'s cache, not in
        a cache of its own that would outlive the tree. Two threads may make it at once; the first kept
        is the one every caller gets."""
        try:
            return self._made[key]  # type: ignore[return-value]
        except KeyError:
            pass
        return self._made.setdefault(key, make())  # type: ignore[return-value]

    def forget_kept(self) -> None:
        """Drop everything :meth:`kept` holds: the next call makes it again (a measurement of the cost
        of making it, ``bench/perf/extractive_speed.py``)."""
        self._made.clear()

    def idf(self, token: str) -> float:
        """Inverse document frequency of a (tokenized) word over this ranker's chunks; unseen words
        get the highest value."""
        import numpy as np

        n = len(self.chunks)
        df = self._doc_freq.get(token, 0)
        return float(np.log(1 + (n - df + 0.5) / (df + 0.5)))

    def scores(self, query: str, *, expand: bool = True) -> np.ndarray:
        """The BM25 score of every chunk for ``query`` (zeros when no query word is indexed)."""
        import numpy as np

        tokens = [t for t in tokenize(expand_query(query) if expand else query) if t in self._vocab]
        if not self.chunks or not tokens:
            return np.zeros(len(self.chunks))
        return np.asarray(self._bm25.get_scores(tokens), dtype=float)

    def search(self, query: str, k: int = 5, *, exclude_pages: set[int] | frozenset[int] = frozenset(),
               expand: bool = True) -> list[Hit]:
        """The ``k`` best chunks with a positive score, best first; ties keep reading order."""
        scores = self.scores(query, expand=expand)
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
        hits: list[Hit] = []
        for i in order:
            if len(hits) >= k or scores[i] <= 0:
                break
            chunk = self.chunks[i]
            if exclude_pages and set(chunk.pages) <= exclude_pages:
                continue
            hits.append(Hit(chunk=chunk, score=float(scores[i]), rank=len(hits) + 1))
        return hits

    def top_pages(
        self, query: str, k: int = 5, *, exclude_pages: set[int] | frozenset[int] = frozenset()
    ) -> list[int]:
        """The ``k`` best pages, best first (sections are unrolled into their pages in order)."""
        pages: list[int] = []
        wanted = max(k, 1) * (1 if self.unit == "page" else 4)
        for hit in self.search(query, k=wanted, exclude_pages=exclude_pages):
            for page in hit.chunk.pages:
                if page not in pages and page not in exclude_pages:
                    pages.append(page)
                if len(pages) >= k:
                    return pages
        return pages


_LOCK = threading.Lock()


_RANKERS: dict[tuple[str, str, str, str], Ranker] = {}


def ranker_for(tree: Tree, unit: Unit = "page") -> Ranker:
    """A ranker for ``tree``, built once per document and unit (thread-safe, kept for 64 trees)."""
    key = (tree.doc_id, tree.sha256, tree.builder_version, unit)
    with _LOCK:
        ranker = _RANKERS.get(key)
        if ranker is not None:
            return ranker
    ranker = Ranker(tree, unit)
    with _LOCK:
        if len(_RANKERS) >= 64:
            _RANKERS.pop(next(iter(_RANKERS)))
        _RANKERS[key] = ranker
    return ranker


class TitleMatch(BaseModel):
    node_id: str
    title: str
    score: float  # 0..100


@cache
def _english_stop_words() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN)


def _title_words(text: str) -> str:
    stop = _english_stop_words()
    words = [_stem(w) for w in _words(text) if w not in stop and (len(w) > 1 or _CJK_RUN.match(w))]
    return " ".join(words)


def match_titles(tree: Tree, text: str, *, min_score: float = 70.0, limit: int = 3) -> list[TitleMatch]:
    """Sections whose title matches ``text`` (fuzzy, word-order free), best first; ties go to the
    title closest overall, then to the deeper section."""
    from rapidfuzz import fuzz

    query = _title_words(text)
    if not query:
        return []
    scored: list[tuple[float, float, int, TitleMatch]] = []
    for node in tree.walk():
        title = _title_words(node.title)
        if not title:
            continue
        score = fuzz.token_set_ratio(query, title)
        if score >= min_score:
            match = TitleMatch(node_id=node.node_id, title=node.title, score=float(score))
            scored.append((-score, -fuzz.token_sort_ratio(query, title), -node.level, match))
    scored.sort(key=lambda t: t[:3])
    return [m for *_, m in scored[:limit]]
