"""The ``panel`` judge: several judge models vote; the majority decides and the agreement is recorded.

Ties go to the more cautious verdict (``incorrect`` before ``refusal`` before ``correct``): a panel
that cannot agree an answer is right does not call it right. ``confident`` means unanimous.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from typing import Any

from bench.judges.base import JudgeVerdict, Verdict, register_judge
from bench.judges.llm import PROMPT_VERSION, LLMJudge
from pageindex.llm.types import BudgetExceeded, Usage

_TIE_ORDER: tuple[Verdict, ...] = ("incorrect", "refusal", "correct")


def majority(verdicts: Sequence[Verdict]) -> tuple[Verdict, float]:
    """The winning verdict and the share of votes it got."""
    if not verdicts:
        raise ValueError("no votes")
    counts = Counter(verdicts)
    top = max(counts.values())
    winner = next(v for v in _TIE_ORDER if counts.get(v) == top)
    return winner, top / len(verdicts)


class PanelJudge:
    name = "panel"

    def __init__(self, judges: Sequence[Any]) -> None:
        if len(judges) < 2:
            raise ValueError("a panel needs at least two judges")
        self.judges = list(judges)
        self.version = "+".join(sorted({str(getattr(j, "version", "?")) for j in self.judges}))
        # run.json's judge prompt version (it was left None): the members' prompt
        prompts = sorted({str(p) for j in self.judges if (p := getattr(j, "prompt_version", None))})
        self.prompt_version = "+".join(prompts) or None

    async def judge(self, question: str, gold_answer: str | float | int, answer: str) -> JudgeVerdict:
        outcomes = await asyncio.gather(
            *(j.judge(question, gold_answer, answer) for j in self.judges), return_exceptions=True
        )
        failed = [o for o in outcomes if isinstance(o, BaseException)]
        if failed:  # the panel fails with its first failure, carrying every member's spending
            for error in failed:
                if not isinstance(error, Exception):  # a cancellation is not the panel's to count
                    raise error
            spent = sum((o.usage for o in outcomes if isinstance(o, JudgeVerdict)), Usage())
            for error in failed:
                spent += getattr(error, "usage", None) or Usage()
            # a spent budget stops the run: it wins over another member's failure, which would only be
            # this answer's judge error and let the run go on
            first = next((e for e in failed if isinstance(e, BudgetExceeded)), failed[0])
            first.usage = spent  # type: ignore[attr-defined]
            raise first
        votes = [o for o in outcomes if isinstance(o, JudgeVerdict)]
        verdict, agreement = majority([v.verdict for v in votes])
        usage = sum((v.usage for v in votes), Usage())
        reasons = "; ".join(f"{v.judge}: {v.verdict}" for v in votes)
        return JudgeVerdict(
            verdict=verdict,
            reasoning=f"majority {verdict} ({agreement:.0%}): {reasons}",
            judge=self.name,
            confident=agreement == 1.0,
            usage=usage,
            prompt_version=votes[0].prompt_version,
            judge_version=self.version,
            details={
                "agreement": agreement,
                "votes": [{"judge": v.judge, "verdict": v.verdict, "reasoning": v.reasoning} for v in votes],
            },
        )


@register_judge("panel", model="panel")
def _make_panel(*, model_client: Any = None, prompt_version: str = PROMPT_VERSION, **_: Any) -> PanelJudge:
    clients = list(model_client or [])
    return PanelJudge([LLMJudge(c, prompt_version=prompt_version) for c in clients])
