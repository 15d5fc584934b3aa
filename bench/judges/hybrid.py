"""The ``hybrid`` judge: ``rules`` (abstaining) where the rules settle the answer, the LLM judge on
exactly the answers the rules call ``uncertain``.

``details["decided_by"]`` says which one decided (``rules`` or ``llm``); the rules verdict is kept in
``details["rules_verdict"]`` when the LLM decided, so one can see where they would have disagreed.
"""

from __future__ import annotations

from typing import Any

from bench.judges.base import JudgeVerdict, register_judge
from bench.judges.llm import PROMPT_VERSION, LLMJudge
from bench.judges.rules import RulesJudge


class HybridJudge:
    name = "hybrid"

    def __init__(self, rules: RulesJudge, llm: LLMJudge) -> None:
        if not rules.abstain:
            raise ValueError("hybrid needs a rules judge built with abstain=True")
        self.rules = rules
        self.llm = llm
        self.version = f"rules {rules.version} + llm {llm.version}"
        self.prompt_version = llm.prompt_version  # run.json's judge prompt version (it was left None)

    async def judge(self, question: str, gold_answer: str | float | int, answer: str) -> JudgeVerdict:
        first = await self.rules.judge(question, gold_answer, answer)
        if first.verdict != "uncertain":
            return first.model_copy(update={"details": {**first.details, "decided_by": "rules"}})
        second = await self.llm.judge(question, gold_answer, answer)
        details = {
            **second.details,
            "decided_by": "llm",
            "rules_verdict": first.details.get("rules_verdict", first.verdict),
            "rules_reasoning": first.reasoning,
        }
        return second.model_copy(update={"details": details})


@register_judge("hybrid", model="one")
def _make_hybrid(
    *, model_client: Any = None, prompt_version: str = PROMPT_VERSION, **rules_options: Any
) -> HybridJudge:
    rules_options = {**rules_options, "abstain": True}
    return HybridJudge(RulesJudge(**rules_options), LLMJudge(model_client, prompt_version=prompt_version))
