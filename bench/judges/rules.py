"""The ``rules`` judge: deterministic, free and offline.

It reads what the answer asserts, not which strings it contains:

1. **Claimed values.** For a question that asks for a figure, the answer's claimed values are the
   figures it asserts: not formula operands ("(A + B) / 2", "x 100"), list numbers, hypotheticals
   ("if revenue were ..."), figures the question itself gives, and, for deciding whether it answered,
   not figures for a period other than the one asked. The value of a concluding sentence ("Therefore,
   the ratio is 3.45") is the final answer: the gold's figure elsewhere in the working is not a match.
2. **Numbers** compare after units (thousand .. trillion, "USD 1.577 billion" = "$1,577 million",
   percent vs ratio, "(473)" = -473) within stated tolerances: 1% relative (``rel_tol``) or the
   precision either side was written to; when the question asks for a rounding, one step of the
   requested digit (or 0.1%). A level written with a minus sign is not a positive gold unless the
   question is about a change ("effective tax rate" is a level). A range ("35–40%") states the gold
   only when both ends round to it; a plus set before a figure ("+65.3%") is its sign.
3. **Refusals** by structure: inability ("we cannot determine", "cannot be listed"), declining to
   commit ("I'd rather not commit to a figure"), no access ("I don't have the figures"), hand-back
   ("you would need to consult the 10-K", "if you can provide ..."), absence ("the document does not
   include ..."; not when a stated yes or no follows it); an apology. For a figure question the
   order decides: a claimed value for the asked period after a refusal is an answer anyway, an
   inability after the figures ("..., so the growth cannot be calculated") concludes a refusal,
   figures only for another period or only a method are a refusal. A bare qualifier ("as of my last
   update") is a hedge. Not recalling ("I don't recall ... well enough to say") is an inability; to a
   question that asks for no figure, not knowing a figure's exact value is a detail, not a refusal.
4. **Yes/no** stance (explicit -- "No.", "Not really." --, after a lead-in -- "By that measure, no." --,
   labelled -- "Result: No" --, concluded -- "So, probably not" --, or read from the sentence
   restating the question), direction of change (to an "increase or decrease?" question the
   direction is the stance), key names; an answer whose opening and concluding stances differ
   contradicts itself.
5. **Text overlap** of content words for the rest; an initialism and its words are the same words
   ("U.S." = "United States", "APAC" = "Asia Pacific"), and a gold that lists names needs them all.

Markdown emphasis ("**55.1%**") is removed before any of this: it is layout, not content.

``confident`` is False where only weak evidence decided (word overlap, an implied stance, a partial
figure match). With ``abstain=True`` such verdicts become ``uncertain`` (``hybrid`` always abstains
and sends exactly those to the LLM judge). ``version`` is :data:`RULES_VERSION` plus a hash of the
rules' source files, so it changes whenever a rule does. Nothing in the answer is ever obeyed: it is
only searched for numbers and words.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from functools import cache

from bench.judges.base import JudgeVerdict, Verdict, gold_text, register_judge
from bench.judges.numbers import (
    CURRENCY,
    CURRENCY_CODES,
    EUROPEAN_SCALE,
    Quantity,
    extract_quantities,
    implied_by_difference,
    in_point_form,
    number_quantity,
    quantities_match,
)

# ------------------------------------------------------------------ refusals
# A refusal is recognised by what a sentence asserts, built from slots rather than listed phrases:
#   * inability: a first person (or an impersonal "it is not possible") + a negated modal + a verb of
#     finding, working out or telling ("we cannot determine", "I was unable to locate", "it is not
#     possible to say", "cannot be calculated");
#   * no access: the speaker lacks the data or the means ("I don't have access to ...", "we do not
#     have the figures"). A bare qualifier ("as of my last update", "as an AI model") is a hedge, not
#     a refusal: what follows it decides;
#   * hand-back: the task is returned to the reader ("you would need to consult the 10-K", "if you
#     can provide ...", "please refer to ...", "I recommend checking ...");
#   * absence (weak): the source is said to lack something ("the document does not include ...",
#     "... is not disclosed", "no specific information").
# The first three are strong; absence is weak, since answers also say it of details they do not need.
_SELF = r"(?:I|we|one)"
_NEG_MODAL = (
    r"(?:cannot|can ?not|can't|could not|couldn't|(?:am|are|was|were|'m|'re) (?:not able|unable) to|"
    r"would not be able to|will not be able to|won't be able to|do not|don't|did not|didn't|"
    r"(?:am|are|was|were|'m|'re) not in a position to)"
)
_FIND = (
    r"(?:determine|calculate|compute|derive|provide|answer|find|locate|identify|confirm|verify|say|tell|"
    r"assess|give|know|access|estimate|offer|retrieve|ascertain|conclude|comment|state|quantify|"
    r"browse|look up|pull|obtain|evaluate|analy[sz]e|make|work out|figure out|pin down|list)"
)
_DONE = (
    r"(?:determined|calculated|computed|derived|provided|answered|found|located|identified|confirmed|"
    r"verified|assessed|ascertained|concluded|quantified|established|evaluated|estimated|worked out|"
    r"listed|pinned down)"
)
# What the speaker lacks or where its knowledge ends, said the same way by an inability (below) and by not
# knowing (:data:`_NOT_KNOWING`).
_NO_HAVE = rf"\b{_SELF} (?:do not|don't|did not|didn't|no longer) (?:currently )?(?:have|possess|hold)\b"
_NOT_HAVE_ENOUGH = r"\b(?:not|n't) have (?:enough|sufficient|the necessary|access)\b"
_MY_LIMITS = [
    r"\b(?:beyond|outside|after) (?:the scope of )?my (?:\w+ ){0,1}(?:knowledge|training|capabilit|abilit)",
    r"\bnot (?:within|in|part of|included in) my (?:\w+ ){0,1}(?:knowledge|training|data)\b",
]
_FIGURE_WORD = r"(?:figures?|numbers?|values?|estimates?|answers?|amounts?|ratios?|margins?|percentages?)\b"
_APOLOGY = [r"\bI(?:'m| am) sorry\b", r"\bI apologi[sz]e\b", r"\bunfortunately\b"]
_INABILITY = [
    rf"\b{_SELF} {_NEG_MODAL} (?:\w+ ){{0,2}}{_FIND}\b",
    rf"\bunable to (?:\w+ ){{0,1}}{_FIND}\b",
    rf"\b(?:not |im)possible (?:for (?:me|us) )?to (?:\w+ ){{0,1}}{_FIND}\b",
    # no means: "there is no way for me to determine", "I have no way of accessing"
    rf"\bno way (?:for (?:me|us) )?(?:to (?:\w+ ){{0,1}}{_FIND}\b|of (?:\w+ ){{0,1}}\w+ing\b)",
    # the inability turned round: "... is not something I can retrieve", "not information I have"
    rf"\bnot (?:something|information|data|a figure|a number) (?:that )?{_SELF} "
    r"(?:can|could|am able to|have)\b",
    rf"\bnot (?:able|feasible) to (?:\w+ ){{0,1}}{_FIND}\b",
    rf"\b(?:cannot|can ?not|can't|could not|couldn't) be (?:\w+ ){{0,1}}{_DONE}\b",
    r"\b(?:is|are|was|were) not (?:\w+ ){0,1}(?:determinable|calculable|ascertainable)\b",
    # the speaker declines to commit to a figure: "I would rather not commit to a specific figure", "I am
    # hesitant to put a number on this", "I would hold off on giving a value" (not "I would prefer not to
    # speculate beyond the 10-K, which names ...": declining what is not the answer)
    rf"\b{_SELF} (?:would |will )?(?:rather not|prefer not to|hold off on|refrain from|decline to|"
    rf"not commit to|not put) (?:\w+ ){{0,4}}{_FIGURE_WORD}",
    rf"\b{_SELF} (?:am|are) (?:hesitant|reluctant|unwilling|not comfortable) to "
    rf"(?:\w+ ){{0,4}}{_FIGURE_WORD}",
    # no access / no data on the speaker's side
    _NO_HAVE,
    r"\b(?:I|we) (?:lack|have no) (?:\w+ ){0,2}(?:access|ability|means|data|information|figures)\b",
    _NOT_HAVE_ENOUGH,
    r"\b(?:insufficient|not enough|lack of|limited) (?:\w+ ){0,1}(?:information|data|context|details)\b",
    # what the speaker would need and does not have: "I would need access to the 10-K"
    rf"\b{_SELF} would (?:need|require) (?:access|more|additional|further)\b",
    # the limits of what the speaker knows or can do: "beyond my capabilities", "not in my training data"
    *_MY_LIMITS,
]
# A filing or other source the reader is sent to: "the company's latest 10-K", "3M's 2018 Form 10-K".
_FILING = (
    r"(?:the |its |their )?(?:(?:\w+ ){0,2}\w+'s )?(?:\d{4} )?"
    r"(?:latest |most recent |official |annual |financial )*"
    r"(?:form )?(?:10-?[KQ]|annual report|filings?|financial statements|investor relations|website|SEC)\b"
)
_HAND_BACK = [
    r"\bif you (?:can |could |would )?(?:provide|share|supply|give me)\b",
    # asked back: "Could you paste the balance sheet lines?", "Can you share the figures?"
    r"\b(?:could|can|would) you (?:please )?(?:provide|share|supply|paste|send|give me|upload)\b",
    r"\b(?:you|the user) (?:haven't|have not|did not|didn't) (?:provided?|share|include)\b",
    r"\byou (?:would|will|may|might|could|should|can) (?:\w+ ){0,1}(?:need|want|have) to "
    r"(?:refer|consult|check|look|review|visit|access|obtain|find|search|examine|download|see|locate)\b",
    r"\byou (?:should|may want to|might want to) (?:refer|consult|check|look|review|visit|access)\b",
    r"\byou (?:can|could|may|might) (?:\w+ ){0,1}(?:find|obtain|access|locate|look up|refer to)\b",
    r"\b(?:I|we) (?:would )?(?:recommend|suggest|advise) (?:\w+ ){0,1}"
    r"(?:checking|consulting|referring|reviewing|looking|visiting|accessing)\b",
    r"\bplease (?:refer to|consult|provide)\b",
    # impersonal or imperative: "it is best to consult the 10-K", "Refer to the annual report"
    r"\bit (?:is|would be) (?:best|advisable|recommended|necessary|wise) to "
    r"(?:refer|consult|check|look|review|visit|access|obtain)\b",
    r"(?:^|[.!?:]\s+)(?:for (?:the )?(?:\w+ ){0,3}\w+,\s+)?(?:refer to|consult|check|visit|look up|review) "
    rf"{_FILING}",
    # where the reader would find it: "the exact figure would be found in 3M's 2018 Form 10-K"
    rf"\b(?:would|could|can|may) be (?:found|located|obtained) in {_FILING}",
]
_STRONG_REFUSAL = [*_APOLOGY, *_INABILITY, *_HAND_BACK]
# Weak: the source lacks something. A refusal only when it opens the answer.
_WEAK_REFUSAL = [
    r"\b(?:does|do|did) not (?:\w+ ){0,1}(?:include|contain|provide|mention|specify|state|give|show|disclose|"
    r"break (?:down|out)|detail|report|present|list|offer)\b",
    r"\b(?:is|are|was|were) not (?:\w+ ){0,1}"
    r"(?:provided|stated|mentioned|included|given|available|disclosed|specified|reported|presented|"
    r"shown|broken (?:down|out)|detailed)\b",
    r"\bno (?:specific |explicit |direct |such |relevant )?"
    r"(?:information|data|mention|details|evidence|figures?)\b",
    r"\bwe do not have\b",
    r"\b(?:is|are|was|were) (?:\w+ ){0,1}(?:missing|absent|unavailable|lacking)\b",
]
_STRONG = re.compile("|".join(_STRONG_REFUSAL), re.IGNORECASE)
# Not recalling: an inability when the answer opens with it ("I don't recall Foo's FY2023 commentary well
# enough to say"); after a committed answer it is a note on a detail ("Yes. I don't recall the amount.").
_NOT_RECALLED = re.compile(rf"\b{_SELF} {_NEG_MODAL} (?:\w+ ){{0,2}}(?:recall|remember)\b", re.IGNORECASE)
# A question that picks one of several ("which segment had the highest ...?"): not knowing the figures
# is not knowing which.
_PICKS = re.compile(
    r"\b(?:which|what)\b[^?]{0,80}?\b(?:highest|lowest|largest|smallest|biggest|most|least)\b", re.IGNORECASE
)


def opening_span(parts: list[str], question: str = "") -> int:
    """How many sentences open the answer: the first, or the first two when the first is only a
    heading or restates the question ("**Foo FY2023 capex**", "The question asks about ..."), so that
    the answer proper starts in the second."""
    return 2 if len(parts) > 1 and question and _restates_or_heads(parts[0], question) else 1


def _saying(parts: list[str], says: Callable[[str], object], question: str = "") -> list[int]:
    """Which of an answer's sentences ``says`` so, or open the answer (:func:`opening_span`) not recalling
    it."""
    zone = opening_span(parts, question)
    return [i for i, part in enumerate(parts) if says(part) or i < zone and _NOT_RECALLED.search(part)]


def declining(parts: list[str], question: str = "") -> list[int]:
    """Which of an answer's sentences say the speaker cannot know or work out the answer: an
    inability (a disclaimer on a stated figure, "I cannot verify this figure", is none), or not
    recalling when the answer opens with it."""
    return _saying(parts, lambda part: _CONCLUSIVE.search(_DISCLAIMER.sub("", part)), question)


# Not knowing, as against not finding: no access, no data, the limits of what the speaker knows ("I
# don't have access to the 10-K", "after my knowledge cut-off", "I can't know"), not "I could not find
# free cash flow stated", which is said of the source before working it out.
_NOT_KNOWING = re.compile(
    "|".join([
        rf"\b{_SELF} {_NEG_MODAL} (?:\w+ ){{0,2}}(?:know|access|browse|retrieve|look up|pull|obtain|quote|"
        r"recall|remember)\b",
        _NO_HAVE,
        r"\b(?:I|we) (?:lack|have no) (?:\w+ ){0,2}(?:access|data|information|figures)\b",
        _NOT_HAVE_ENOUGH,
        *_MY_LIMITS,
        r"\b(?:after|beyond|past) my (?:\w+ ){0,1}cut-?off\b",
    ]),
    re.IGNORECASE,
)


def guessing(parts: list[str], stating: list[int], question: str = "") -> bool:
    """The answer said it cannot know (:data:`_NOT_KNOWING`, or not recalling as its opening) before
    the first sentence of ``stating``: its figure is a guess from memory after declining, worked out
    or not (closed-book guesses often show rough working). Not finding a figure stated in the source
    and then working it out is an answer."""
    knows_not = _saying(parts, _NOT_KNOWING.search, question)
    return bool(knows_not and stating) and knows_not[0] < stating[0]


# A turn inside a sentence: "I don't have the 10-K, but ...", "...; however, ...".
_TURN = re.compile(r"(?:,|;|:|\s[-–—])\s*(?:but|however|though|yet)\b,?|\bbut\b", re.IGNORECASE)
# The speaker names its own memory as the source of what follows: "as of my last update", "based on my
# general knowledge", "from memory", "I believe", "my rough sense is".
_FROM_MEMORY = re.compile(
    r"\bas of my (?:\w+ ){0,2}(?:update|cut-?off|training|knowledge)\b|"
    r"\b(?:based on|from|according to) (?:my |what I )?(?:\w+ ){0,1}"
    r"(?:knowledge|memory|recollection|recall|know)\b|"
    r"\binformation available (?:up to|as of|until)\b|"
    r"\bI (?:believe|recall|think|understand)\b|\bas I recall\b|"
    r"\bmy (?:\w+ ){0,1}(?:sense|understanding|recollection|guess|impression) is\b",
    re.IGNORECASE,
)


# Where the reader would look, or the reader addressed: a pointer, not an answer ("I believe the figures
# are in the property note of the 10-K", "I think the EDGAR database has it", "it's best you look ...").
_POINTER = re.compile(rf"{_FILING}|\bEDGAR\b|\bdatabases?\b|\byou(?:r|'d|'ll)?\b", re.IGNORECASE)


def goes_on(answer: str) -> bool:
    """After saying it cannot know (:data:`_NOT_KNOWING`), the answer goes on to answer from its own
    memory: the rest of that sentence after a turn, or a later sentence, names memory as its source
    (:data:`_FROM_MEMORY`: "..., but as of my last update its PP&E did increase") and neither refuses
    nor points the reader elsewhere (:data:`_POINTER`). The text counterpart of :func:`guessing`: a
    refusal by the hedge rule that still committed to something, on which graders part."""
    parts = sentences(answer)
    knows_not = [i for i, part in enumerate(parts) if _NOT_KNOWING.search(part)]
    if not knows_not:
        return False
    first = knows_not[0]
    turn = _TURN.search(parts[first], _NOT_KNOWING.search(parts[first]).end())
    rest = ([parts[first][turn.end():]] if turn else []) + parts[first + 1 :]
    refuses = (_STRONG, _WEAK, _NOT_KNOWING, _POINTER)
    return any(_FROM_MEMORY.search(part) and not any(p.search(part) for p in refuses) for part in rest)


# What an inability may be about: only the precise value ("I don't know the exact Q2 balance"). To a
# question that asks for no figure (a nature, a cause, an outcome) that is a detail, not the answer.
_PRECISE_AFTER = re.compile(
    r"\s+(?:the |an? |its )?(?:exact|precise|specific)\s+(?:[\w&-]+\s+){0,3}?"
    r"(?:figures?|numbers?|amounts?|balances?|counts?|tall(?:y|ies)|values?|percentages?|totals?|dollars?)\b",
    re.IGNORECASE,
)
# What can conclude an answer as a refusal after figures ("..., so we cannot calculate it"); a closing
# pointer to the source ("you can find more in the 10-K") or apology does not withdraw a stated figure.
_CONCLUSIVE = re.compile("|".join(_INABILITY), re.IGNORECASE)
_WEAK = re.compile("|".join(_WEAK_REFUSAL), re.IGNORECASE)
_DISCLAIMER = re.compile(
    rf"\b(?:{_SELF} )?(?:{_NEG_MODAL}|unable to) (?:\w+ ){{0,2}}(?:confirm|verify|guarantee|vouch for)\b"
    r"(?! (?:whether|if|what|how|which|the (?:exact|specific|precise) (?:figure|amount|value|number)))",
    re.IGNORECASE,
)
# After a refusal, an attempt anyway ("However, we can calculate ...") makes it an answer.
_ATTEMPT = re.compile(
    r"\bhowever,? (?:we|i) can (?:\w+ ){0,2}(?:calculate|estimate|compute|determine|derive|infer|conclude|"
    r"see|say|note|state|tell|provide (?:an? )?(?:estimate|answer|figure))\b|"
    r"\bwe can (?:calculate|estimate|compute)\b|\bcan be calculated\b|"
    r"\bI can calculate\b|\bthe answer (?:is|would be) (?:likely |probably )?"
    r"(?:yes|no|\$?\(?-?\d)|"
    # A hedged conclusion is still an answer: "..., it can be inferred that ...", "suggests that it
    # likely ...".
    r"\bit can be (?:inferred|concluded)\b|\b(?:suggests?|indicates?) that (?:\w+ ){0,3}likely\b",
    re.IGNORECASE,
)
_NONE_GOLD = re.compile(r"^\W*(?:no\b|none\b|nil\b|there (?:are|is|were|was) (?:none|no)\b)", re.IGNORECASE)
# A question may offer a way out of its own premise ("If operating margin is not a useful metric
# for a company like this, then please state that and explain why"); a text takes it when it says
# the metric does not apply ("... is not a meaningful measure for a bank"). Texts are read through
# ``plain`` (contractions written out), so "isn't useful" is "is not useful".
_WAY_OUT_OFFERED = re.compile(
    r"\bif\b[^.?!]{0,120}\bnot\b[^.?!]{0,120}\b(?:state|say)\b"
    r"|\bif\b[^?]*\bis\s+not\s+(?:a\s+)?(?:useful|relevant|meaningful)\b",
    re.IGNORECASE,
)
_WAY_OUT_TAKEN = re.compile(
    r"\b(?:not|never)\s+(?:\w+\s+){0,2}(?:useful|meaningful|relevant|appropriate|applicable|suitable|"
    r"typical|commonly used|something|measured|reported|used|tracked|right|apply|applies|informative)\b",
    re.IGNORECASE,
)
# Words that take the way out only when said of the question's own metric, in the same clause:
# "Operating margin isn't a standard metric for a bank", "Foo does not present restructuring costs as a
# separate line item" (not "costs were not the main driver", not "the breakdown is not listed").
_WAY_OUT_SCOPED = re.compile(
    r"\b(?:not|never)\s+(?:\w+\s+){0,5}"
    r"(?:standard|key|primary|main|best|how (?:you|one|we|investors|analysts)|"
    r"shown|presented|outlined|itemi[sz]ed|separate(?:ly)?|broken out)\b",
    re.IGNORECASE,
)
_WAY_OUT_METRIC = re.compile(r"\bif\s+(?:the\s+)?([a-z][\w &'-]{2,60}?)\s+(?:is|are)\s+not\b", re.IGNORECASE)
_CLAUSE = re.compile(r"[.;:!?]\s+|\n")


def way_out_taken(question: str, text: str) -> bool:
    """The text takes the way out the question offers: says the metric does not apply (any of
    :data:`_WAY_OUT_TAKEN`), or says of the question's own metric, in one clause, that it is not the
    standard measure or not shown separately (:data:`_WAY_OUT_SCOPED`)."""
    if _WAY_OUT_TAKEN.search(text):
        return True
    m = _WAY_OUT_METRIC.search(question)
    metric = content_words(m.group(1)) if m else set()
    if not metric:
        return False
    said_before = False  # "Gross margin ... . It is not a standard metric": "it" is the metric
    for clause in _CLAUSE.split(text):
        names = metric <= content_words(clause) or said_before and bool(_PRONOUN_SUBJECT.match(clause))
        if names and _WAY_OUT_SCOPED.search(clause) and not _CONDITIONAL.match(clause):
            return True
        said_before = metric <= content_words(clause)
    return False


# A clause about "it" (the metric named just before), and a clause that only supposes: "If restructuring
# costs are not shown separately, the answer would be 0" takes no way out.
_PRONOUN_SUBJECT = re.compile(r"^\W*(?:it|this|that|this metric|the metric|this measure)\b", re.IGNORECASE)
_CONDITIONAL = re.compile(r"^\W*(?:if|whether|unless|in case)\b", re.IGNORECASE)


def premise_conflict(question: str, gold: str, answer: str) -> tuple[bool, str] | None:
    """For a question that offers a way out of its premise: (agrees, why) when the gold takes it
    (the metric does not apply to this company): the answer agrees only if it takes it too.
    None when the question offers no way out or the gold uses the metric."""
    if not _WAY_OUT_OFFERED.search(question) or not way_out_taken(question, plain(gold)):
        return None
    if way_out_taken(question, plain(answer)):
        return True, "gold and answer both say the metric does not apply"
    return False, "gold says the metric does not apply; the answer uses it"


_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"'])|\n\s*\n")
_CONTRACTIONS = [
    (re.compile(r"\b(w)on['’]t\b", re.IGNORECASE), r"\1ill not"),
    (re.compile(r"\b(c)an['’]t\b", re.IGNORECASE), r"\1annot"),
    (re.compile(r"n['’]t\b", re.IGNORECASE), " not"),
    (re.compile(r"\b(I|you|we|they|he|she|it)['’]d\b", re.IGNORECASE), r"\1 would"),
    (re.compile(r"\bI['’]m\b", re.IGNORECASE), "I am"),
    (re.compile(r"\b(you|we|they)['’]re\b", re.IGNORECASE), r"\1 are"),
    (re.compile(r"\b(I|you|we|they)['’]ve\b", re.IGNORECASE), r"\1 have"),
    (re.compile(r"\b(I|you|we|they|it)['’]ll\b", re.IGNORECASE), r"\1 will"),
]


def plain(text: str) -> str:
    """The text with contractions written out ("isn't" -> "is not", "you'd" -> "you would"), so
    that a refusal is recognised by its structure whatever the register; numbers are untouched."""
    for pattern, full in _CONTRACTIONS:
        text = pattern.sub(full, text)
    return text


# Markdown emphasis around words and figures ("**Three-year average: 55.1%**", "*yes*", "__no__"):
# layout, not content; a lone "*" between operands ("3 * 4", "3*4") stays a product.
_EMPHASIS = re.compile(r"\*\*|__|(?<![\w%)])\*(?=[\w$(])|(?<=[\w%).])\*(?![\w$(])")


def unmarked(text: str) -> str:
    """The text without markdown emphasis, so "55.1%**" is not read as a figure times something."""
    return _EMPHASIS.sub("", text)


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text.strip()) if s.strip()]


def _restates_or_heads(sentence: str, question: str) -> bool:
    """The sentence is a heading (a short line without a verb's full stop) or restates the question
    (most of its content words are the question's), so the answer proper starts after it. A sentence
    that states a figure of its own (not one the question gives: "**Revenue vs $5 billion**") or a yes
    or no ("Revenue was $4,900 million.") answers: it is no heading."""
    text = sentence.strip()
    given = {abs(q.value) for q in extract_quantities(question)}
    if any(abs(q.value) not in given for q in extract_quantities(text)) or stance(text):
        return False
    if text.startswith(("#", "**")) or len(text.split()) <= 6 and not text.endswith("."):
        return True
    words = content_words(text) - {"question", "ask", "asks", "asked", "regarding"}
    return bool(words) and len(words & content_words(question)) / len(words) >= 0.7


def refusal_hits(
    answer: str, *, opening_sentences: int = 3, closing_sentences: int = 0, question: str = ""
) -> list[str]:
    """Refusal phrases in the answer's opening or close: strong ones in the first
    ``opening_sentences`` sentences or the last ``closing_sentences`` (an answer that works through
    the task and concludes "so I cannot calculate it" refused; used for questions asking for a
    figure, where a closing "cannot" means no figure was given), weak ones ("the context does not
    include ...") in the first sentence (or the second when the first only restates the task)."""
    parts = sentences(answer)
    opening = " ".join(parts[:opening_sentences])
    closing = ""
    if closing_sentences:
        closing = " ".join(parts[max(opening_sentences, len(parts) - closing_sentences) :])
    # To a question asking for no figure (nor which is largest), not knowing a figure's precise value
    # is a detail.
    detail = bool(question) and not asks_for_figure(question) and not _PICKS.search(question)

    def strong(text: str, pattern: re.Pattern[str] = _STRONG) -> list[str]:
        return [
            m.group(0) for m in pattern.finditer(text) if not (detail and _PRECISE_AFTER.match(text, m.end()))
        ]

    # not recalling opens the answer: its first sentence, or its second after a heading or a sentence
    # that only restates the question ("**Foo FY2023 capex**", "The question asks about ...")
    recall_zone = parts[: opening_span(parts, question)]
    hits = strong(opening) + strong(closing) + strong(" ".join(recall_zone), _NOT_RECALLED)
    weak_zone = " ".join(parts[:2])
    hits += [m.group(0) for m in _WEAK.finditer(weak_zone)]
    # Wherever it stands, a sentence that declares the question itself unanswerable ("we cannot say
    # whether the quick ratio improved") refuses it: the inability restates what was asked.
    asked = content_words((sentences(question) or [question])[0]) if question else set()
    if len(asked) >= 3:
        for part in parts[opening_sentences:]:
            m = _CONCLUSIVE.search(part)
            if m and len(asked & content_words(part)) / len(asked) >= _RESTATES_REFUSAL:
                hits.append(m.group(0))
    # A question may offer a way out ("if gross margin is not a useful metric for it, say so and
    # explain why"); an answer that takes it ("... is not a useful metric for a bank") has answered.
    if hits and _WAY_OUT_OFFERED.search(question) and way_out_taken(question, answer):
        return []
    # An attempt counts unless its own sentence refuses ("if you provide X, I can calculate it").
    if hits and any(_ATTEMPT.search(part) for part in parts if not _STRONG.search(part)):
        return []
    return hits


# ------------------------------------------------------------------ yes / no
# A yes/no opened with a hedge is still one: "Probably yes.", "Largely, no".
_HEDGED = r"^\W*(?:(?:probably|likely|most likely|arguably|largely|mostly|broadly|generally),?\s+)?"
# A "no" softened, as a whole phrase: "Not really.", "Not especially — ...". (Not "Not much" or "Not
# significantly": they measure a change, and to "did it improve?" mean "yes, a little".)
_NOT_SO = r"(not (?:really|especially|particularly|exactly))\s*(?=[,.;:!—–-]|$)"
_YES = re.compile(rf"{_HEDGED}(?:(yes|no)\b|{_NOT_SO})", re.IGNORECASE)
# "the answer is no", or a conclusion that says it outright: "So yes, all three ...", "Therefore, no.",
# "So, as far as the filing shows, yes — ...", "So, probably not — ..." (a "no" must be followed by
# punctuation there: "so no dividend was paid" is not a stance).
_ANSWER_IS = re.compile(
    r"\bthe answer is:? ?\W?(yes|no)\b|"
    # a labelled conclusion: "Result: No — ...", "Short answer: yes", "Conclusion: No."
    r"(?:^|[.!?]\s+|\n\s*)\W*(?:(?:short |final )?answer|result|conclusion|verdict|bottom line)\s*:\s*\W?"
    r"(yes|no)\s*(?=[,.;:!—–-]|$)|"  # "Answer: no information is given" is no stance
    r"(?:^|[.!?;:]\s+|\n\s*)(?:so|thus|therefore|hence|in short|in summary|overall),?\s+"
    r"(?:[^.!?\n,]{1,60},\s+)?(?:(?:probably|likely|most likely)\s+(yes|no|not)|(yes|no))\s*[,.;:!—–]",
    re.IGNORECASE,
)


# The answer's opening yes or no after a short lead-in: "By the textbook measure, no.", "As far as I
# know, no.", "On that basis, yes — ..." (a yes/no said as such, punctuation after it).
_LEAD_IN = re.compile(
    r"^\W*[^.!?\n,;:]{1,60},\s+(?:(?:probably|likely|most likely)\s+)?(yes|no|not)\s*(?=[,.;:!—–-]|$)",
    re.IGNORECASE,
)


def _said(m: re.Match[str]) -> str:
    """The yes/no a stance pattern matched ("probably not" is a no)."""
    word = next(g for g in m.groups() if g).lower()
    return "no" if word.startswith("not") else word


_YES_NO_QUESTION = re.compile(
    r"^\s*(?:is|are|was|were|does|do|did|has|have|had|can|will|would|should)\b", re.IGNORECASE
)
_NEGATION = re.compile(r"\b(?:not|no|never|neither|nor)\b|n't\b", re.IGNORECASE)


# A yes or no said as such, punctuation or the end after it: "No." or "No — ...", not "No information ...".
_STATED = re.compile(rf"{_HEDGED}(?:(yes|no)\s*(?:[,.;:!—–-]|$)|{_NOT_SO})", re.IGNORECASE)


def stated_stance(text: str) -> str | None:
    """Like :func:`stance`, but an opening "no" counts only when said as such ("No, ...", "No."): a
    refusal that opens "No information on dividends is provided" states none."""
    return _stance(_STATED, text)


def stance(text: str) -> str | None:
    """``yes``/``no`` when the text opens with one (or says "the answer is no"), else None."""
    return _stance(_YES, text)


def _stance(opening: re.Pattern[str], text: str) -> str | None:
    """The yes/no the text opens with (``opening``), says after a short lead-in, or concludes."""
    m = opening.match(text.strip()) or _LEAD_IN.match(text.strip()) or _ANSWER_IS.search(text)
    return _said(m) if m else None


def implied_stance(question: str, answer: str) -> str | None:
    """For a yes/no question, the stance of an answer that does not open with yes or no, read from
    the sentence that restates the question's predicate ("... it is reasonable to conclude that the
    business is capital intensive", "... the margin profile is not improving"): ``no`` when that
    sentence is negated, else ``yes``. A concluding sentence ("therefore", "in summary", "this
    suggests") wins over an earlier one. None when no sentence restates the question (an answer
    about something else has no stance). Weaker evidence than :func:`stance`."""
    explicit = stance(answer)
    if explicit or not _YES_NO_QUESTION.match(question):
        return explicit
    asked = content_words((sentences(question) or [question])[0])
    if len(asked) < 2:
        return None
    restating = [
        s for s in sentences(answer) if len(asked & content_words(s)) / len(asked) >= _RESTATES
    ]
    if not restating:
        return None
    concluding = [s for s in restating if _CONCLUDES.search(s)]
    chosen = concluding[-1] if concluding else restating[0]
    return _restated_stance(question, chosen)


def _restated_stance(question: str, sentence: str) -> str:
    """The stance of a ``sentence`` that restates a yes/no ``question``: ``no`` when it is negated
    or turns the question's direction round ("has the debt increased?" -- "the debt decreased"),
    ``yes`` otherwise (both: yes, "the debt did not decrease")."""
    negated = bool(_NEGATION.search(_NOT_ONLY.sub("", sentence)))
    asked_way, said_way = direction((sentences(question) or [question])[0]), direction(sentence)
    if asked_way and said_way and asked_way != said_way:
        negated = not negated
    return "no" if negated else "yes"


_RESTATES = 0.6
_RESTATES_REFUSAL = 0.5


def concluded_stance(question: str, answer: str) -> str | None:
    """For a yes/no question, the stance of the answer's last concluding sentence that restates the
    question ("Therefore, Foo's margin is not improving"): :func:`_restated_stance`."""
    if not _YES_NO_QUESTION.match(question):
        return None
    asked = content_words((sentences(question) or [question])[0])
    if len(asked) < 2:
        return None
    parts = sentences(answer)[1:]
    concluding = [
        s
        for s in parts
        if _CONCLUDES.search(s) and len(asked & content_words(s)) / len(asked) >= _RESTATES
    ]
    if not concluding:
        return None
    last = concluding[-1]
    if m := _ANSWER_IS.search(last):
        return _said(m)
    return _restated_stance(question, last)
# Questions about a measured quantity: the figures in a yes/no answer to them are its substance.
_METRIC_QUESTION = re.compile(
    r"\b(?:margins?|working capital|ratio|percent(?:age)?|rates?|growth|return on)\b|%", re.IGNORECASE
)
_CONCLUDES = re.compile(
    r"\b(?:therefore|thus|hence|in summary|in conclusion|overall|conclude|suggests?|indicates?)\b",
    re.IGNORECASE,
)
_NOT_ONLY = re.compile(r"\bnot only\b|\bno longer\b", re.IGNORECASE)


# ------------------------------------------------------------------ names
_NAME = re.compile(r"\b[A-Z][a-z]+(?:\s+(?:[A-Z]\.|[A-Z][a-z]+))+\b")


def missing_names(question: str, gold: str, answer: str) -> list[str]:
    """Proper names in the gold ("Jane Q. Doe", "Acme Holdings") that the question does not
    already give and the answer never mentions (none of their words appear in it)."""
    asked = question.lower()
    said = answer.lower()
    missing = []
    for m in _NAME.finditer(gold):
        words = [w for w in re.findall(r"[A-Za-z]{2,}", m.group(0)) if w.lower() not in _STOP]
        if not words or any(w.lower() in asked for w in words):
            continue
        if not any(re.search(rf"\b{re.escape(w.lower())}\b", said) for w in words):
            missing.append(m.group(0))
    return missing


# A gold that is only a list of names: "Trillium, Array, and Therachon", "Jane Doe; John Roe and Acme".
# Items are split at commas, semicolons and the last "and" ("Johnson & Johnson" stays one item).
_LIST_SPLIT = re.compile(r"\s*(?:,\s*(?:and\s+)?|;\s*|\s+and\s+)")
# Corporate suffixes as written ("Kestrel, Inc."), case and all: "CO" or "SE" is a state or a region.
_CORPORATE = {"Inc", "Corp", "Co", "Ltd", "LLC", "L.L.C", "PLC", "plc", "LP", "L.P"}
_CORPORATE_WORDS = {s.lower() for s in _CORPORATE}
_LIST_ITEM = re.compile(r"^(?:[A-Z][\w.'-]*)(?:\s+(?:[A-Z][\w.'-]*|&)){0,3}$")


def missing_items(gold: str, answer: str) -> list[str]:
    """When the gold's first sentence is a list of three or more names and nothing else, the items
    the answer never mentions (none of their content words appear in it); else none."""
    first = (sentences(gold) or [gold])[0].strip().rstrip(".")
    parts = [i for i in _LIST_SPLIT.split(first) if i]
    if not all(_LIST_ITEM.match(i) for i in parts):
        return []
    items: list[str] = []
    for item in parts:
        if items and item.strip().rstrip(".") in _CORPORATE:
            items[-1] = f"{items[-1]}, {item}"  # "Kestrel, Inc." is one name
        else:
            items.append(item)
    if len(items) < 3:
        return []
    said = content_words(answer) | _shared_initialisms(first, answer)
    return [i for i in items if _name_words(i) and not _name_words(i) & said]


def _name_words(item: str) -> set[str]:
    """The words that name a list item, without a corporate suffix ("Kestrel, Inc." is "kestrel")."""
    return {w for w in content_words(item) if w.strip(".") not in _CORPORATE_WORDS}


# ------------------------------------------------------------------ direction
_UP = r"increas|rise|rose|risen|grew|grow|improv|higher|expand"
_DOWN = r"decreas|declin|fell|fall|drop|lower|shrank|shrink|contract|deteriorat"
_DIRECTION = re.compile(rf"\b(?:(?P<up>{_UP})|(?P<down>{_DOWN}))\w*", re.IGNORECASE)
_DIRECTION_QUESTION = re.compile(
    rf"\b(?:{_UP})\w*\s+or\s+(?:{_DOWN})|\b(?:{_DOWN})\w*\s+or\s+(?:{_UP})", re.IGNORECASE
)


def direction(text: str) -> str | None:
    """``up``/``down``: the first direction word of the text's first sentence that has one."""
    for part in sentences(text):
        m = _DIRECTION.search(part)
        if m:
            return "up" if m.group("up") else "down"
    return None


# An answer that opens with the direction as its verb: "Increased.", "**Decreased** —", "It rose ...".
# The verb is followed by the end of a clause, a figure or what says by how much or when; not by a
# noun ("Higher input costs squeezed it", "Lower borrowing costs helped").
_SAYS_DIRECTION = re.compile(
    rf"^\W*(?:(?:it|they|this|that)\s+(?:has\s+|have\s+|had\s+)?)?(?:(?P<up>{_UP})|(?P<down>{_DOWN}))"
    r"(?:ed|d|s|ped|pped)?\b(?=\W*$|\s*[.,;:!—–(*-]|\s+(?:by|from|to|in|over|during|year|slightly|"
    r"modestly|significantly|sharply|materially|somewhat|marginally)\b|\s+[$\d])",
    re.IGNORECASE,
)


def shared_direction(question: str, gold: str, answer: str) -> str | None:
    """For an "increase or decrease?" question, the direction the gold and the answer both give, the
    answer opening with it as its verb ("Increased.", "It rose ..."), unnegated: not "Increasing costs
    forced it to cut capex", not "It did not increase"."""
    if not _DIRECTION_QUESTION.search(question):
        return None
    first = (sentences(plain(answer)) or [""])[0]
    m = _SAYS_DIRECTION.match(first)
    if not m or _NEGATION.search(first[: m.end()]):  # not "It did not increase"; "Increased, if not by much"
        return None
    said = "up" if m.group("up") else "down"
    return said if direction(gold) == said else None


def direction_conflict(question: str, gold: str, answer: str) -> str | None:
    """For an "increase or decrease?" question, the gold's and the answer's direction when they
    differ ("up vs down"), else None."""
    if not _DIRECTION_QUESTION.search(question):
        return None
    want, got = direction(gold), direction(answer)
    return f"gold says {want}, answer says {got}" if want and got and want != got else None


# ------------------------------------------------------------------ text overlap
_STOP = set(
    """a an the and or of in on at to for from by with as is are was were be been being it its this that
    these those which who whom what when where how why has have had do does did not no yes than then there
    their they them he she his her we our you your i me my will would can could should may might also
    such any all each
    per into over under about after before between during while both more most less other some only very so
    fy fiscal year years company company's total amount""".split()
)
_WORD = re.compile(r"[a-z][a-z&'-]+")


def content_words(text: str) -> set[str]:
    return {_stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 2}


def _stem(word: str) -> str:
    word = word.strip("'-")
    for suffix in ("'s", "ing", "ed", "es", "s"):
        if suffix == "es" and not re.search(r"(?:[xz]|[cs]h|ss)es$", word) or word.endswith("ss"):
            continue  # "nominees", "expenses": + "s"; "branches", "businesses": + "es"; "business"
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


# An initialism ("U.S.", "EMEA", "LACC") and the capitalised words it stands for ("United States",
# "Europe, Middle East and Africa"): joining words and punctuation between them do not count.
_INITIALISM = re.compile(r"\b(?:[A-Z]\.){2,6}|\b[A-Z]{2,6}\b")
_CAPITALISED = re.compile(r"\b[A-Z][a-z]+(?:(?:\s*[,&/]\s*|\s+)(?:(?:and|of|the|&)\s+)*[A-Z][a-z]+)+")


def _abbreviates(short: str, words: list[str]) -> bool:
    """``short`` is the start of each of ``words`` in turn: their initials ("EMEA": Europe, Middle
    East, Africa), or the last word's start longer ("APAC": Asia Pacific), or every word's start two
    letters or more ("LATAM": Latin America, "NORAM"). Not a longer start before a lone initial, so
    "SEC" is not "Sears Canada"."""
    short = short.lower()
    return _initials_then_last(short, words) or _long_starts(short, words)


def _initials_then_last(short: str, words: list[str]) -> bool:
    head = words[0].lower()
    if len(words) == 1:
        return bool(short) and head.startswith(short)
    return bool(short) and short[0] == head[0] and _initials_then_last(short[1:], words[1:])


def _long_starts(short: str, words: list[str]) -> bool:
    if not words:
        return not short
    head = words[0].lower()
    return any(
        short[:k] == head[:k] and _long_starts(short[k:], words[1:])
        for k in range(2, min(len(short), len(head)) + 1)
    )


def _spelled_out(text: str, initialisms: set[str]) -> set[str]:
    """The content words of runs of two or more capitalised words in ``text`` that one of
    ``initialisms`` abbreviates (a run's words from any start, so "the United States" is "US")."""
    out: set[str] = set()
    for m in _CAPITALISED.finditer(text):
        words = re.findall(r"[A-Z][a-z]+", m.group(0))
        for i in range(len(words)):
            for j in range(i + 2, min(len(words), i + 6) + 1):
                if any(_abbreviates(short, words[i:j]) for short in initialisms):
                    out |= content_words(" ".join(words[i:j]))
    return out


def _initialisms(text: str) -> set[str]:
    return {m.group(0).replace(".", "") for m in _INITIALISM.finditer(text)}


def _shared_initialisms(gold: str, answer: str) -> set[str]:
    """Gold content words the answer says in another form: the gold spells out what the answer
    abbreviates ("United States" for "U.S."), or abbreviates what the answer spells out."""
    said = _spelled_out(gold, _initialisms(answer))
    said |= {w.lower() for w in _initialisms(gold) if content_words(w) and _spelled_out(answer, {w})}
    return said


def overlap(gold: str, answer: str) -> float:
    """Share of the gold's content words that the answer contains: the best of the whole gold and
    its first sentence (golds often state the answer first, then a justification or assumption).
    An initialism and its spelled-out words are the same words (:func:`_shared_initialisms`)."""
    words = content_words(answer) | _shared_initialisms(gold, answer)
    scores = []
    for part in {gold, (sentences(gold) or [gold])[0]}:
        g = content_words(part)
        if g:
            scores.append(len(g & words) / len(g))
    return max(scores, default=0.0)


# ------------------------------------------------------------------ gold numbers
_QUESTION_SCALE = re.compile(
    rf"(?:\bin|{CURRENCY})\s*(?:(?:{CURRENCY_CODES})\s*)?(thousands|millions|billions)\b", re.IGNORECASE
)


_REQUESTED_PRECISION = re.compile(
    r"\bround(?:ed|ing)?\b[^.?!]{0,60}?\b(?:decimal|places?|significant|digits?)\b|"
    r"\bto (?:one|two|three|\d) decimal",
    re.IGNORECASE,
)


_ASKS_FIGURE = re.compile(
    r"\bhow (?:much|many|did .{0,80}\b(?:compare|change))\b|"
    r"\b(?:amount|ratio|margin|rate|percent(?:age)?|value|total|number|growth|change|turnover|cagr|"
    r"average|sum|per share|in (?:usd|millions|billions|thousands))\b|%",
    re.IGNORECASE,
)
_EXPLAINS = re.compile(
    r"^\W*(?:why|what (?:drove|drives|caused|causes|explains)|explain|describe)\b", re.IGNORECASE
)


def asks_for_figure(question: str) -> bool:
    """The question asks for a quantity (how much, what ratio, how did X change), not for a cause,
    a name or a description."""
    first = (sentences(question) or [question])[0]
    return bool(_ASKS_FIGURE.search(first)) and not _EXPLAINS.search(first)


# A question that asks for a ratio or a percentage, and for no amount of money.
_ASKS_RATIO = re.compile(r"\b(?:ratio|percent(?:age)?s?|per cent)\b|%", re.IGNORECASE)


def asks_for_ratio(question: str) -> bool:
    return bool(_ASKS_RATIO.search(question)) and not _QUESTION_SCALE.search(question)


def requested_precision(question: str) -> bool:
    """The question asks for a rounding ("round to one decimal place", "to two decimals")."""
    return bool(_REQUESTED_PRECISION.search(question))


# Whole words after the stems: "effective tax rate" is a level, not an effect; "network" is not net.
_CHANGE_QUESTION = re.compile(
    rf"\b(?:change|{_UP}|{_DOWN}|differ)|"
    r"\b(?:gap|loss|losses|deficits?|net|netted|flows?|flowed|impact(?:s|ed|ing)?|effects?|gain(?:s|ed)?|"
    r"variances?|delta)\b",
    re.IGNORECASE,
)
_PERIOD = re.compile(r"^\s*(?:months?|weeks?)\b", re.IGNORECASE)


# A gold that is one figure and nothing else, as questions.jsonl writes the golds of metrics
# questions ("$1577.00", "24.26", "1.9%", "(0.4)", "$0.40 billion"); label files give the same golds
# as JSON numbers. Both are one claim to check, whichever way the dataset wrote it.
_LONE_FIGURE = re.compile(
    rf"^\s*[-−–]?\s*\(?\s*(?:{CURRENCY})?\s*[-−–]?\s*\(?\s*(?:\d[\d,]*(?:\.\d+)?|\.\d+)\s*\)?\s*"
    rf"(?:%|percent\b|(?:thousands?|millions?|billions?|trillions?|mn|bn|{EUROPEAN_SCALE})(?![a-z]))?\s*"
    rf"(?:(?:{CURRENCY_CODES})\b|[€$£¥])?\s*\)?\s*$",
    re.IGNORECASE,
)


def is_figure_gold(gold_answer: str | float | int) -> bool:
    """The gold is a single figure: a JSON number, or a string that is one figure and nothing else."""
    if not isinstance(gold_answer, str):
        return _json_number(gold_answer)
    # "1.234,5 Mio. EUR": a decimal comma read as the figures are (:func:`in_point_form`)
    return bool(_LONE_FIGURE.match(in_point_form(gold_answer))) and len(extract_quantities(gold_answer)) == 1


def _json_number(gold_answer: object) -> bool:
    """A gold given as a JSON number (a bool is not one)."""
    return isinstance(gold_answer, int | float) and not isinstance(gold_answer, bool)


def _question_scale(question: str) -> float | None:
    """The scale the question asks figures in ("in USD millions"), if any."""
    m = _QUESTION_SCALE.search(question)
    return {"thousands": 1e3, "millions": 1e6, "billions": 1e9}[m.group(1).lower()] if m else None


def gold_quantities(question: str, gold_answer: str | float | int) -> list[Quantity]:
    scale = _question_scale(question)
    if _json_number(gold_answer):
        if scale:
            return [number_quantity(gold_answer, scale=scale, scale_stated=True)]
        return [number_quantity(gold_answer)]
    text = str(gold_answer)
    if is_figure_gold(text):
        (figure,) = extract_quantities(text)
        # Trailing zeros are the dataset's formatting ("$0.40", "$1577.00": every money gold has two
        # decimals), not a precision the answer must reach; as a JSON number the same gold is 0.4.
        fraction = figure.text.rpartition(".")[2] if "." in figure.text else ""
        figure = dataclasses.replace(figure, decimals=len(fraction.rstrip("0")))
        if scale and not figure.scale_stated and not figure.percent:
            # "$1577.00" for a question "in USD millions" is 1,577 million, as the number 1577 is
            figure = dataclasses.replace(figure, value=figure.value * scale, scale=scale, scale_stated=True)
        return [figure]
    # "the 12 months ended ..." describes the period, it is not a figure the answer must state.
    return [q for q in extract_quantities(text) if not _is_period_length(text, q)]


def _signed(q: Quantity) -> str:
    """A figure as a verdict's reason shows it: with the sign it was written or worded with ("-45" for
    "(45)" or "a loss of 45", "+45" for "a profit of 45"), so "states +45, gold is -45" is readable."""
    return {-1: "-", 1: "+"}.get(q.sign, "") + q.text


def _is_period_length(text: str, q: Quantity) -> bool:
    if q.decimals or q.percent or q.scale_stated:
        return False
    written = re.finditer(rf"(?<![\d.,]){re.escape(q.text)}(?![\d.,])", text)
    return any(_PERIOD.match(text[m.end() :]) for m in written)


_CONCLUSION = re.compile(
    r"\b(?:therefore|thus|hence|in summary|in conclusion|so,|the answer is|final answer|overall)\b",
    re.IGNORECASE,
)


# ------------------------------------------------------------------ claimed values
# A figure is claimed as a value when the answer asserts it, not when it is an operand of a formula
# ("(A + B) / 2", "x 100"), part of a hypothetical ("If revenue were $5 billion, ..."), or about a
# period other than the one asked for.
_OPERAND_BEFORE = re.compile(
    r"(?:[/÷*×+^]|\bx|\b(?:divid|multipl)\w*(?: \S+){0,8} by|\btimes|\bover|\bminus|\bplus)\s*[$(\[]*\s*$",
    re.IGNORECASE,
)
# A plus with no operand before it is a sign: set tight ("+65.3%"), or spaced after a colon, an equals
# sign or a verb ("growth was + 3.4%"); "income + 1,200" adds.
_SIGN_PLUS = re.compile(
    r"(?:^|[\s(:=≈~])\+[$(]?$|(?:^|[(:=≈~]|\b(?:was|were|is|are|of|by|at)\b)\s*\+\s[$(]?$", re.IGNORECASE
)


def _operand_before(before: str) -> bool:
    """What stands before a figure makes it an operand of a formula ("x 365", "/ 2", "+ 1,200")."""
    return bool(_OPERAND_BEFORE.search(before)) and not (
        _SIGN_PLUS.search(before) and not _PLUS_AFTER_FIGURE.search(before)
    )


# A plus after a figure adds to it: "5 + 6", "$1.2B + $0.3B", "(4) + 2", "12% + 3%".
_PLUS_AFTER_FIGURE = re.compile(
    r"(?:\d|\d\s?(?:[kmb]n?|thousands?|millions?|billions?)|[)\]%])\s*\+\s?[$(]?$", re.IGNORECASE
)


_OPERAND_AFTER = re.compile(
    r"^\s*%?\s*(?:thousands?|millions?|billions?|mn|bn)?\s*[)\]]*\s*"
    r"(?:[/÷*×+^]|x\s*[$(]?\d|x\s+(?!(?:in|at|for|on|by|as|of|and|or|vs|versus|compared|the|a|an|"
    r"last|this|that|from|to|during|over|under|while|with)\b)[a-z(]|(?:divid|multipl)\w* by|times\b|"
    r"minus\b|plus\b)",
    re.IGNORECASE,
)
_HYPOTHETICAL = re.compile(
    r"^\W*(?:if|assuming|assume|suppose|supposing|for (?:example|instance)|e\.g\.|say|let(?:'s| us))\b|"
    r"\bhypothetical(?:ly)?\b|\bfor illustration\b",
    re.IGNORECASE,
)
_METHOD = re.compile(
    r"\bto (?:calculate|compute|determine|find|derive|work out)\b|\bformula\b|"
    r"\b(?:you|we|one) (?:would |will )?need (?:to|the)\b",
    re.IGNORECASE,
)


def _enumerator(text: str, q: Quantity) -> bool:
    """"2." or "(3)" opening a line: a list item's number (also when the sentence split after it)."""
    line_start = text.rfind("\n", 0, q.start) + 1
    after = text[q.end : q.end + 2]
    return (
        not text[line_start : q.start].strip(" \t-*•(")
        and q.decimals == 0
        and after[:1] in {".", ")"}
        and (len(after) < 2 or after[1].isspace())
    )


_YEAR = re.compile(r"(?<![\d$.,])(?:FY\s?'?)?((?:19[5-9]|20\d)\d)(?![\d%])|\bFY\s?'?(\d{2})\b", re.IGNORECASE)


def years(text: str) -> set[int]:
    """Calendar or fiscal years named in the text ("2022", "FY2022", "FY22"); a range of two years in
    a question ("from FY2016 to FY2018") covers the years between."""
    found = {int(m.group(1)) if m.group(1) else 2000 + int(m.group(2)) for m in _YEAR.finditer(text)}
    return found


def asked_years(question: str) -> set[int]:
    found = years(question)
    if len(found) >= 2 and max(found) - min(found) <= 10:
        found |= set(range(min(found), max(found) + 1))
    return found


def claimed_quantities(sentence: str, question: str = "") -> list[Quantity]:
    """The figures a sentence asserts: none in a hypothetical, no formula operands, and none the
    question itself states ("the 3 year average", "two decimal places")."""
    if _HYPOTHETICAL.search(sentence):
        return []
    given = {(q.text, _next_word(question, q)) for q in extract_quantities(question)}
    return [
        q
        for q in extract_quantities(sentence)
        if (q.text, _next_word(sentence, q)) not in given
        and not _enumerator(sentence, q)
        and not _operand_before(sentence[max(0, q.start - 60) : q.start])
        and not _OPERAND_AFTER.match(sentence[q.end : q.end + 30])
    ]


def _next_word(text: str, q: Quantity) -> str:
    m = re.match(r"[\s%-]*([A-Za-z]+)", text[q.end : q.end + 20])
    return m.group(1).lower() if m else ""


def other_period(question: str, sentence: str) -> bool:
    """The sentence names years, none of which the question asks about (an answer for FY2021 when
    FY2022 was asked)."""
    asked, named = asked_years(question), years(sentence)
    return bool(asked and named and not asked & named)


# The result of a computation closing the answer: "Three-year average = 6.8%" (the figure after its
# last "=", nothing but units after it).
_RESULT = re.compile(r"=\s*[^=]*$")


def final_claim(answer: str, question: str = "") -> list[Quantity]:
    """The figures of the answer's conclusion: its last sentence that claims a figure, when that
    sentence concludes ("Therefore, the ratio is 3.45") or, as the answer's last sentence, ends in
    a computed result ("Three-year average = 6.8%": the figures after its last "="); none otherwise."""
    parts = sentences(answer)
    claiming = [(s, q) for s in parts if (q := claimed_quantities(s, question))]
    if not claiming:
        return []
    last, figures = claiming[-1]
    if _CONCLUSION.search(last):
        return figures
    if last == parts[-1] and (m := _RESULT.search(last)) and len(extract_quantities(m.group(0))) == 1:
        return [q for q in figures if q.start >= m.start()]
    return []


def stated_quantities(answer: str) -> list[Quantity]:
    """The numbers an answer states as its answer, not those of its working: those of the first
    sentence with a claimed figure (answers that lead with the result), of the last concluding
    sentence ("Therefore, ... is 65.2%") and of the last two sentences with one."""
    with_numbers = [(s, q) for s in sentences(answer) if (q := claimed_quantities(s))]
    if not with_numbers:
        return []
    picked = [with_numbers[0][1], *(q for _, q in with_numbers[-2:])]
    concluding = [q for s, q in with_numbers if _CONCLUSION.search(s)]
    if concluding:
        picked.append(concluding[-1])
    return [q for qs in picked for q in qs]


# Stated tolerances. Without a requested rounding a figure agrees within 1% of the gold (the low end
# of what FinanceBench studies allow: rounding of intermediate steps, "about $1.6 billion"); when the
# question asks for a rounding, within one step of the requested digit or 0.1%.
_DEFAULT_REL_TOL = 0.01
_ROUNDED_REL_TOL = 0.001
# Raise by hand when the rules change meaning; the source hash below changes with any edit anyway.
RULES_VERSION = "5"


@cache
def rules_source_hash() -> str:
    """Short hash of the code the rules are made of (this module and the number parsing), so the version
    changes whenever a rule does, even if :data:`RULES_VERSION` was not raised, and not for a comment or
    a docstring (:func:`pageindex.digest.code_digest`)."""
    import bench.judges.numbers as judge_numbers
    import pageindex.retrievers.numbers as retriever_numbers
    from pageindex.digest import code_digest

    return code_digest(str(f) for f in (__file__, judge_numbers.__file__, retriever_numbers.__file__))


class RulesJudge:
    """Deterministic judge; see the module docstring for its rules."""

    name = "rules"

    def __init__(
        self, *, rel_tol: float = _DEFAULT_REL_TOL, overlap_correct: float = 0.5, implied_stance: bool = True,
        answer_precision: bool = True, abstain: bool = False,
    ) -> None:
        self.abstain = abstain
        options = [f"rel_tol={rel_tol:g}"] if rel_tol != _DEFAULT_REL_TOL else []
        options += ["abstain"] if abstain else []
        suffix = f"[{','.join(options)}]" if options else ""
        self.version = f"{RULES_VERSION}+{rules_source_hash()}{suffix}"
        self.implied_stance = implied_stance
        self.answer_precision = answer_precision
        self.rel_tol = rel_tol
        self.rounded_rel_tol = min(rel_tol, _ROUNDED_REL_TOL)
        self.overlap_correct = overlap_correct

    async def judge(self, question: str, gold_answer: str | float | int, answer: str) -> JudgeVerdict:
        return self.judge_sync(question, gold_answer, answer)

    def judge_sync(self, question: str, gold_answer: str | float | int, answer: str) -> JudgeVerdict:
        verdict, confident, reasoning, details = self._decide(question, gold_answer, unmarked(answer or ""))
        if self.abstain and not confident:
            # The rules reached a verdict only by weak evidence (word overlap, an implied stance,
            # a partial figure match): say so instead of guessing; hybrid asks the LLM judge.
            details = {**details, "rules_verdict": verdict}
            verdict, reasoning = "uncertain", f"not settled by the rules (leaning {verdict}: {reasoning})"
        return JudgeVerdict(
            verdict=verdict, reasoning=reasoning, judge=self.name, confident=confident, details=details,
            judge_version=self.version,
        )

    def _decide(
        self, question: str, gold_answer: str | float | int, answer: str
    ) -> tuple[Verdict, bool, str, dict[str, object]]:
        gold = gold_text(gold_answer)
        if not answer.strip():
            return "refusal", True, "empty answer", {}
        numeric_gold = is_figure_gold(gold_answer)
        golds = gold_quantities(question, gold_answer)
        found = extract_quantities(answer)
        # a text answer's figures, but not those it only supposes ("If costs are not shown, it is 0")
        asserted = [
            q for s in sentences(answer) if not _HYPOTHETICAL.search(s) for q in extract_quantities(s)
        ]
        stated = stated_quantities(answer) if numeric_gold else asserted
        matched = self._matched(golds, stated, question=question, supporting=not numeric_gold)
        refusals = refusal_hits(
            plain(answer), closing_sentences=1 if numeric_gold else 0, question=question
        )
        details: dict[str, object] = {
            "gold_numbers": [g.text for g in golds],
            "answer_numbers": len(found),
            "matched_numbers": [g.text for g in matched],
            "refusal_phrases": refusals[:5],
        }
        if numeric_gold:
            final = final_claim(answer, question)
            if matched and final and not any(self._found(g, final, question=question) for g in golds):
                # The gold's figure is in the answer, but the answer concludes with another value:
                # it was working or a different quantity.
                why = f"gold number {golds[0].text} appears, but the answer concludes {final[-1].text}"
                return "incorrect", True, why, details
            if matched:
                if guess := self._guessed(question, answer, golds):
                    why = f"declines ({refusals[0] if refusals else '?'}), then {guess}"
                    return "refusal", False, why, details
                return "correct", True, f"gold number {golds[0].text} stated in the answer", details
            return self._numeric_without_gold(question, plain(answer), golds, stated, refusals, details)

        # A firm refusal that quotes part of the answer ("20% in FY2021, but FY2022 is not given, so
        # I cannot determine the change") is still a refusal; only all of the gold's figures beat it.
        # A soft "is not explicitly stated" after a partial answer is an answer.
        strong = any(_STRONG.search(h) or _NOT_RECALLED.search(h) for h in refusals)
        if (
            refusals and not strong and _NONE_GOLD.match(gold) and len(sentences(answer)) >= 2
            and not _STRONG.search(plain(answer))
        ):
            # The gold says there is none ("No, ...", "There are none"): an answer that says the
            # filing shows none and goes on to say what it does show agrees with it. An absence
            # alone, or with an inability or a hand-back anywhere ("I cannot tell"), is a refusal.
            return "correct", False, f"gold says none; answer finds none ({refusals[0]})", details
        if refusals and not strong and _YES_NO_QUESTION.match(question) and stated_stance(answer):
            # Only the source's silence on a detail ("the 10-K does not give a retention rate"), then a
            # stated yes or no: the answer committed.
            refusals = []
        if refusals and (not matched or strong and len(matched) < len(golds)):
            if goes_on(plain(answer)):
                # "I don't have the 10-K, but as of my last update its PP&E did increase ...": a
                # refusal by the hedge rule, but one that committed to something after it; graders part
                # on these (judged on the content, or as a hedge), so the rules do not settle it.
                why = f"declines ({refusals[0]}), then answers from what it recalls"
                return "refusal", False, why, details
            return "refusal", True, f"refusal phrases: {'; '.join(refusals[:3])}", details
        guess = strong and matched and asks_for_figure(question) and self._guessed(question, answer, golds)
        if guess:
            return "refusal", False, f"declines ({refusals[0]}), then {guess}", details
        if premise := premise_conflict(question, gold, answer):
            agrees, why = premise
            return ("correct" if agrees else "incorrect"), True, why, details
        gold_stance, answer_stance = stance(gold), stance(answer)
        explicit = bool(answer_stance)
        if gold_stance and not answer_stance and self.implied_stance:
            answer_stance = implied_stance(question, answer)
        if conflict := direction_conflict(question, gold, answer):
            return "incorrect", True, conflict, details
        if not gold_stance and not (golds and found) and (way := shared_direction(question, gold, answer)):
            # "Did it increase or decrease?" -- "Increased.": without figures to check, the direction
            # is the answer, as a yes or no is (names the gold gives are still checked).
            gold_stance = answer_stance = way
            explicit = True
        if explicit and (concluded := concluded_stance(question, answer)) and concluded != answer_stance:
            why = f"answer contradicts itself: opens with {answer_stance}, concludes {concluded}"
            return "incorrect", True, why, details
        if gold_stance and answer_stance and gold_stance != answer_stance:
            # A stance read from a restating sentence is weaker evidence: not confident (hybrid asks).
            how = "says" if explicit else "implies"
            return "incorrect", explicit, f"gold says {gold_stance}, answer {how} {answer_stance}", details
        same_stance = bool(gold_stance) and gold_stance == answer_stance
        if golds and found:
            share = len(matched) / len(golds)
            if share == 1:
                return "correct", True, f"{len(matched)}/{len(golds)} gold numbers found", details
            # Some of the gold's figures but not all: the missing ones are usually stated as other
            # values (a comparison answered with the right first figure and a wrong second), so
            # that is incorrect, unless the answer also reaches the gold's yes/no conclusion.
            if same_stance and share >= 0.5:
                why = f"both say {gold_stance}; {len(matched)}/{len(golds)} gold numbers found"
                return "correct", False, why, details
            if same_stance:
                # Same yes/no but other figures: right only if the gold's figure is a change the
                # answer's own figures imply (margins of 22.5% and 21.4%: a 1.1 point decline).
                # When the question is about a metric, figures that differ from the gold's are the
                # answer and they are wrong; otherwise they are supporting detail.
                if not _METRIC_QUESTION.search(question):
                    return "correct", explicit, f"both say {gold_stance}; gold numbers not all found", details
                if any(implied_by_difference(g, found) for g in golds):
                    return "correct", explicit, f"both say {gold_stance}; gold change implied", details
                return "incorrect", False, f"both say {gold_stance} but with other figures", details
            # The gold's figures are the answer only when the question asks for a figure; to a
            # "what / who / why" question they are supporting detail an answer may word otherwise.
            sure = not matched and asks_for_figure(question)
            return "incorrect", sure, f"{len(matched)}/{len(golds)} gold numbers found", details
        if same_stance:
            if names := missing_names(question, gold, answer):
                return "incorrect", False, f"both say {gold_stance}; answer lacks {names[0]}", details
            return "correct", explicit, f"both say {gold_stance}", details
        if missing := missing_items(gold, answer):
            # The gold lists names ("Trillium, Array, and Therachon"): an answer that leaves one out
            # named other ones, however many words it shares with the gold.
            return "incorrect", False, f"answer lacks {missing[0]} of the gold's list", details
        score = overlap(gold, answer)
        details["overlap"] = round(score, 3)
        verdict: Verdict = "correct" if score >= self.overlap_correct else "incorrect"
        return verdict, False, f"content-word overlap {score:.2f}", details

    def _numeric_without_gold(
        self,
        question: str,
        answer: str,
        golds: list[Quantity],
        stated: list[Quantity],
        refusals: list[str],
        details: dict[str, object],
    ) -> tuple[Verdict, bool, str, dict[str, object]]:
        """A figure was asked for and the gold's is not among the answer's claims. Whichever comes
        last decides between refusal and answer: a claimed figure for the asked period after a
        refusal is an answer anyway ("not stated; however, capex was about $1.5 billion"), a firm
        refusal after the figures concludes that there is none ("revenue was $812 million, so I
        cannot calculate the growth"). Figures only for other periods, in hypotheticals or as formula
        operands answer nothing."""
        parts = sentences(answer)
        # "I cannot verify this figure" after a figure is a disclaimer on it, not a withdrawal.
        firm = declining(parts, question)
        refusing = sorted(
            {i for i, part in enumerate(parts) if _STRONG.search(part) or _WEAK.search(part)} | set(firm)
        )
        answering = [
            i
            for i, part in enumerate(parts)
            if i not in refusing and claimed_quantities(part, question) and not other_period(question, part)
        ]
        gold = _signed(golds[0]) if golds else "?"
        if refusals:
            phrases = "; ".join(refusals[:3])
            if not answering:
                return "refusal", True, f"refusal ({phrases}) and no figure for the question", details
            if firm and firm[-1] > answering[-1]:
                return "refusal", True, f"concludes with a refusal ({phrases})", details
            said = _signed(stated[-1]) if stated else "?"
            if guessing(parts, answering, question):
                # The speaker said it cannot know ("I do not have access to the 10-K") and then gave a
                # figure anyway, not the gold's: a guess after declining, which graders count as a
                # refusal (issue 14: "answers that hedge"). Not settled by rules alone (hybrid asks).
                why = f"declines ({phrases}), then guesses {said}; gold is {gold}"
                return "refusal", False, why, details
            return "incorrect", True, f"answers despite a hedge: states {said}, gold is {gold}", details
        if answering and stated:
            return "incorrect", True, f"answer states {_signed(stated[-1])}, gold is {gold}", details
        if not answering and _METHOD.search(answer):
            # Only how to work it out ("to calculate X you need Y and Z"), never a result.
            return "refusal", True, "gives a method but no figure for the question", details
        if stated:
            return "incorrect", False, "figures only for other periods or hypotheticals", details
        return "incorrect", False, "no number in the answer", details

    def _guessed(self, question: str, answer: str, golds: list[Quantity]) -> str | None:
        """The speaker first said it cannot know or has no access ("I don't have access to the 10-K")
        and only later gave the gold's figure ("From memory, total assets were roughly $59 billion"):
        a guess after declining, which graders count as a refusal (issue 14: "answers that hedge")
        however close it falls. The same rule as for a guess that misses the gold
        (:meth:`_numeric_without_gold`), wording and all: whether the figure is put as an estimate
        does not decide it."""
        parts = sentences(plain(answer))
        stating = [
            i
            for i, part in enumerate(parts)
            if any(self._found(g, claimed_quantities(part, question), question=question) for g in golds)
        ]
        return "guesses the gold's figure" if guessing(parts, stating, question) else None

    def _matched(
        self, golds: list[Quantity], candidates: list[Quantity], *, question: str, supporting: bool
    ) -> list[Quantity]:
        """The golds some candidate states. A range stands for one figure: once it has matched a gold it
        matches no other ("38%-46%" is not both 41.2% and 43.7%)."""
        used: set[int] = set()
        out = []
        single = [a for a in candidates if a.other_end is None]
        for g in golds:
            if self._found(g, single, question=question, supporting=supporting):
                out.append(g)
                continue
            if g.other_end is not None and self._same_range(g, golds, candidates, question=question):
                out.append(g)  # a range gold ("£200-£250 million") stated as that range
                continue
            for a in candidates:
                if a.other_end is not None and a.start not in used:
                    if self._found(g, [a], question=question, supporting=supporting):
                        used |= {a.start}
                        used |= {b.start for b in candidates if b.other_end == a.value}
                        out.append(g)
                        break
        return out

    def _same_range(
        self, end: Quantity, golds: list[Quantity], candidates: list[Quantity], *, question: str
    ) -> bool:
        """Whether an answer's range states the gold range ``end`` is one end of: its two ends, each read
        as a figure, state the gold's two ends (an answer identical to the gold "$1.0-$1.1 billion" found
        1 of its 2 figures, a range matching no single figure: judged incorrect)."""
        partner = next((g for g in golds if g.other_end == end.value and g.value == end.other_end), None)
        if partner is None:
            return False
        ends = {a.start: a for a in candidates if a.other_end is not None}

        def states(gold: Quantity, answer: Quantity) -> bool:
            one = dataclasses.replace(answer, other_end=None)
            return self._found(dataclasses.replace(gold, other_end=None), [one], question=question)

        return any(
            states(end, a) and states(partner, b)
            for a in ends.values()
            for b in ends.values()
            if b is not a and b.other_end == a.value and a.other_end == b.value
        )

    def _found(
        self, gold: Quantity, candidates: list[Quantity], *, question: str = "", supporting: bool = False
    ) -> bool:
        """Whether one of ``candidates`` states ``gold``. ``supporting``: the gold's figures back a text
        answer, so a narrow range that holds the gold agrees with it ("about 0.5-0.6" for 0.54)."""
        if gold.sign:
            # Signs written on both sides must agree: "+4.1%" is not -4.1%, nor "a profit of $45 million" a
            # gold loss "(45)"; "$(45) million" and "-45" are the same loss. An unsigned side agrees with
            # either sign (a gold "45" for a cash outflow that the answer writes "(45)", as statements do).
            candidates = [a for a in candidates if a.sign != -gold.sign]
        if not gold.percent and asks_for_ratio(question):
            # A ratio or percentage is not a sum of money: "net income of $12.5 million" does not
            # state a 12.5% margin, whatever its digits.
            candidates = [a for a in candidates if not (a.money or a.scale_stated)]
        if gold.sign >= 0 and not _CHANGE_QUESTION.search(question):
            # A level (a margin, a ratio) written with a minus sign is the opposite value, not a
            # sign convention: only questions about a change or a loss admit either sign.
            candidates = [a for a in candidates if not a.minus]
        # A bare fraction gold (0.308, no scale) is a ratio: thousands/millions do not apply to it.
        rescale = gold.scale_stated or gold.percent or abs(gold.value) >= 1
        # "Round to one decimal place": the question fixes the precision, so the answer must reach it:
        # one step of the last digit is allowed (rounded intermediate results), no relative tolerance
        # and no tolerance from a coarser answer's own precision. Otherwise ``rel_tol`` applies.
        if requested_precision(question):
            return any(
                quantities_match(
                    gold, a, rel_tol=self.rounded_rel_tol, answer_precision=False, rescale=rescale,
                    gold_steps=1.0, within_range=supporting,
                )
                for a in candidates
            )
        return any(
            quantities_match(
                gold, a, rel_tol=self.rel_tol, answer_precision=self.answer_precision, rescale=rescale,
                within_range=supporting,
            )
            for a in candidates
        )


@register_judge("rules")
def _make_rules(*, model_client: object = None, **options: object) -> RulesJudge:
    return RulesJudge(**options)  # type: ignore[arg-type]
