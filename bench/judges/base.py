"""What every judge returns and the one protocol they share, plus a registry.

A judge compares a model's answer with the gold answer (and the question) and says whether it is
``correct``, ``incorrect`` or a ``refusal`` (the model did not answer); a judge allowed to abstain
(``rules`` with ``abstain=True``, always inside ``hybrid``) may also say ``uncertain``: its rules do not
settle the case. Every judge has a ``name`` and a ``version`` (which changes whenever the way it
decides changes); both are recorded on each verdict. Judges register themselves with
:func:`register_judge`; callers build them by name with :func:`make_judge`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from pageindex.llm.types import Usage

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


@runtime_checkable
class Judge(Protocol):
    name: str
    version: str

    async def judge(self, question: str, gold_answer: str | float | int, answer: str) -> JudgeVerdict: ...


JudgeFactory = Callable[..., Judge]
_REGISTRY: dict[str, JudgeFactory] = {}


def register_judge(name: str) -> Callable[[JudgeFactory], JudgeFactory]:
    """Decorator: make a judge factory available to :func:`make_judge` under ``name``."""

    def _wrap(factory: JudgeFactory) -> JudgeFactory:
        _REGISTRY[name] = factory
        return factory

    return _wrap


def judge_names() -> list[str]:
    _load_builtin()
    return sorted(_REGISTRY)


def make_judge(name: str, *, model_client: Any = None, **options: Any) -> Judge:
    """Build a judge by name (``rules``, ``llm``, ``hybrid``, ``panel``).

    ``model_client`` is a :class:`pageindex.llm.LLMClient` (or, for ``panel``, a list of them);
    judges that need a model raise ``ValueError`` without one.
    """
    _load_builtin()
    try:
        factory = _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown judge {name!r}; choose one of {', '.join(sorted(_REGISTRY))}") from None
    return factory(model_client=model_client, **options)


def _load_builtin() -> None:
    # Importing the modules runs their @register_judge decorators.
    from bench.judges import hybrid, llm, panel, rules  # noqa: F401


def gold_text(gold_answer: str | float | int) -> str:
    """The gold answer as text; floats printed without binary noise (0.10300000000000001 -> 0.103)."""
    if isinstance(gold_answer, bool):
        return str(gold_answer)
    if isinstance(gold_answer, float):
        return f"{gold_answer:.10g}"
    return str(gold_answer)
