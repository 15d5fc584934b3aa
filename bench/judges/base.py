"""What every judge returns and the one protocol they share, plus a registry.

A judge compares a model's answer with the gold answer (and the question) and says whether it is
``correct``, ``incorrect`` or a ``refusal`` (the model did not answer); a judge allowed to abstain
(``rules`` with ``abstain=True``, always inside ``hybrid``) may also say ``uncertain``: its rules do not
settle the case. Every judge has a ``name`` and a ``version`` (which changes whenever the way it
decides changes); both are recorded on each verdict.

Judges are components of the one registry (:mod:`pageindex.registry`, kind ``"judge"``): a module
in this package, or a plug-in (``PAGEINDEX_PLUGINS``, a ``pageindex.plugins`` entry point),
registers a factory with :func:`register_judge`; callers build judges by name with
:func:`make_judge` and call them through :func:`judge_sample` with a :class:`JudgeInput` (the
question, gold and answer, and the sample's sources and fetched pages). A judge implements
``judge(question, gold_answer, answer)`` or, to see the rest of the input (a grounding judge:
are the cited pages real and read?), ``assess(JudgeInput)``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field, model_validator

from pageindex import registry
from pageindex.llm.types import Usage
from pageindex.retrievers.result import Source
from pageindex.wording import error_text

Verdict = Literal["correct", "incorrect", "refusal", "uncertain"]
# The three classes humans label with; ``uncertain`` is a judge abstaining, never a human label.
VERDICTS: tuple[Verdict, ...] = ("correct", "incorrect", "refusal")
ALL_VERDICTS: tuple[Verdict, ...] = (*VERDICTS, "uncertain")


class JudgeVerdict(BaseModel):
    """One judged answer."""

    verdict: Verdict
    reasoning: str = ""
    judge: str = Field(description='Which judge decided: "rules", "llm:<model>" or "panel".')
    confident: bool = True
    usage: Usage = Field(default_factory=Usage)
    prompt_version: str | None = None
    judge_version: str | None = Field(
        default=None, description="The deciding judge's version (rules source hash, LLM prompt version)."
    )
    details: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _abstaining_is_not_confident(self) -> JudgeVerdict:
        # a judge that abstains decided nothing: a plug-in's `uncertain` left at the default was written
        # `confident: true` beside it in bench judge's output
        if self.verdict == "uncertain":
            self.confident = False
        return self


class JudgeInput(BaseModel):
    """Everything a judge may look at for one sample."""

    question: str
    gold_answer: str | float | int
    answer: str
    sources: list[Source] = Field(default_factory=list, description="What the answer cites.")
    pages_fetched: list[int] = Field(
        default_factory=list, description="1-based PDF pages whose text a model was shown."
    )
    evidence_pages: list[int] = Field(default_factory=list, description="The gold evidence pages.")
    question_id: str | None = None
    doc_name: str | None = None


@runtime_checkable
class Judge(Protocol):
    name: str
    version: str

    async def judge(self, question: str, gold_answer: str | float | int, answer: str) -> JudgeVerdict: ...


JudgeFactory = Callable[..., Judge]
KIND = "judge"
registry.declare(KIND, "bench.judges")


ModelNeed = Literal["none", "one", "panel"]


def register_judge(name: str, *, model: ModelNeed = "none") -> Callable[[JudgeFactory], JudgeFactory]:
    """Decorator: make a judge factory available to :func:`make_judge` under ``name``. ``model``:
    whether the factory gets no model client, one (``--judge-model``) or a list (``--judge-models``)."""

    def _wrap(factory: JudgeFactory) -> JudgeFactory:
        factory.model_need = model  # type: ignore[attr-defined]
        registry.register(KIND, name, factory)
        return factory

    return _wrap


def judge_model_need(name: str) -> ModelNeed:
    """What model the judge ``name`` needs: ``none``, ``one`` or a ``panel`` of them."""
    factory = registry.lookup(KIND, name)
    return getattr(factory, "model_need", "none")


def judge_names() -> list[str]:
    return sorted(registry.names(KIND))


# The order judges are offered in (plug-ins follow by name): the default first, then by cost.
OFFER_ORDER = ("llm", "rules", "hybrid", "panel")


def judge_choices() -> str:
    """The judges as a choice in words, built-in ones first: ``'llm', 'rules', 'hybrid' or 'panel'``."""
    rank = {name: i for i, name in enumerate(OFFER_ORDER)}
    ordered = sorted(registry.names(KIND), key=lambda n: (rank.get(n, len(rank)), n))
    quoted = [repr(n) for n in ordered]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


class JudgeOutputError(ValueError):
    """A judge returned something that is no verdict: recorded as that answer's judge failure (the answer
    stays; the run counts it as a failed judge call), never written as a verdict."""

    kind = "invalid_verdict"


async def judge_sample(judge: Any, inp: JudgeInput) -> JudgeVerdict:
    """Ask ``judge`` about one sample: ``assess(inp)`` if it has one, else ``judge(question, gold,
    answer)`` (either may be a plain function or a coroutine). What it returns is checked here, for every
    judge a plug-in adds: a :class:`JudgeVerdict` whose verdict is one of :data:`ALL_VERDICTS` (re-checked,
    since pydantic does not check an assignment after construction), else :class:`JudgeOutputError`
    naming the judge and what is allowed."""
    assess = getattr(judge, "assess", None)
    out = assess(inp) if assess is not None else judge.judge(inp.question, inp.gold_answer, inp.answer)
    if inspect.isawaitable(out):
        out = await out
    name = getattr(judge, "name", None) or type(judge).__name__
    allowed = f"a JudgeVerdict whose verdict is one of {', '.join(ALL_VERDICTS)}"
    if not isinstance(out, JudgeVerdict):
        raise JudgeOutputError(f"judge {name!r} returned {type(out).__name__}, not {allowed}")
    if out.verdict not in ALL_VERDICTS:
        raise JudgeOutputError(f"judge {name!r} returned the verdict {out.verdict!r}, not {allowed}")
    return out


def make_judge(name: str, *, model_client: Any = None, **options: Any) -> Judge:
    """Build a judge by name (``rules``, ``llm``, ``hybrid``, ``panel``).

    ``model_client`` is a :class:`pageindex.llm.LLMClient` (or, for ``panel``, a list of them);
    judges that need a model raise ``ValueError`` without one.
    """
    factory = registry.lookup(KIND, name)
    if factory is None:
        choices = ", ".join(judge_names())
        raise ValueError(f"unknown judge {name!r}; choose one of {choices}{registry.missing_hint(KIND)}")
    module = getattr(factory, "__module__", "?")
    try:
        judge = factory(model_client=model_client, **options)
    except ValueError:  # a judge's own word on its options ("needs a model client"): as it is
        raise
    except Exception as exc:  # a plug-in's factory that breaks: say whose (trial 14: "internal error")
        why = error_text(exc)
        if isinstance(exc, TypeError):  # a judge class decorated itself, taking no model_client
            why += f"; {FACTORY_CONTRACT}"
        raise JudgeBuildError(f"judge {name!r} (from {module}) could not be built: {why}") from exc
    if not callable(getattr(judge, "assess", None)) and not callable(getattr(judge, "judge", None)):
        raise JudgeBuildError(  # every answer would be a judge failure, found only once judged
            f"judge {name!r} (from {module}) has neither assess(JudgeInput) nor judge(question, gold_answer, "
            f"answer); {FACTORY_CONTRACT}"
        )
    return judge


FACTORY_CONTRACT = (
    "@register_judge decorates a factory called as factory(model_client=..., **options) that returns the "
    "judge (see README, Adding a judge)"
)


class JudgeBuildError(registry.PluginError, ValueError):
    """A registered judge that cannot be built: its factory failed, or returned no judge. One line
    naming the judge and its module (the CLI's plug-in error, exit 2; a ``ValueError`` as before)."""


def gold_text(gold_answer: str | float | int) -> str:
    """The gold answer as text; floats printed without binary noise (0.10300000000000001 -> 0.103)."""
    if isinstance(gold_answer, bool):
        return str(gold_answer)
    if isinstance(gold_answer, float):
        return f"{gold_answer:.10g}"
    return str(gold_answer)
