"""pydantic's phrases said as what is allowed (pageindex.wording)."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field, ValidationError

from pageindex.wording import counted, error_text, plainly, shortened


class _Settings(BaseModel):
    limit: int = Field(ge=1)
    rate: float = Field(gt=0, le=1)
    strict: bool = False


@pytest.mark.parametrize(
    ("data", "said"),
    [
        ({"limit": 0, "rate": 0.5}, "must be at least 1"),
        ({"limit": "many", "rate": 0.5}, "must be a whole number"),
        ({"limit": 1, "rate": "soon"}, "must be a number"),
        ({"limit": 1, "rate": 0}, "must be more than 0"),
        ({"limit": 1, "rate": 2}, "must be at most 1"),
        ({"limit": 1, "rate": 0.5, "strict": "perhaps"}, "must be true or false"),
    ],
)
def test_what_pydantic_refused_is_said_as_what_is_allowed(data: dict, said: str) -> None:
    with pytest.raises(ValidationError) as caught:
        _Settings.model_validate(data)
    (error,) = caught.value.errors()
    assert plainly(error["msg"]) == said


def test_other_text_is_left_alone() -> None:
    assert plainly("0 is not a number of seconds > 0") == "0 is not a number of seconds > 0"
    assert plainly("Value error, 'pdf' is not one of 'html', 'md'.") == "'pdf' is not one of 'html', 'md'."


def test_a_count_says_its_noun_in_the_plural_unless_it_is_one() -> None:
    assert counted(1, "sample") == "1 sample"
    assert counted(0, "sample") == "0 samples"
    assert counted(18, "question") == "18 questions"
    assert counted(12345, "reply", "replies") == "12,345 replies"
    assert counted(2, "query", "queries") == "2 queries"
    assert counted(1, "query", "queries") == "1 query"


@pytest.mark.parametrize(
    ("items", "most", "said"),
    [
        ([], 3, ""),
        (["a"], 3, "a"),
        (["a", "b", "c"], 3, "a, b, c"),
        (["a", "b", "c", "d", "e"], 3, "a, b, c and 2 more"),
        ([f"m{i}" for i in range(1_502)], 1, "m0 and 1,501 more"),
    ],
)
def test_a_long_list_is_shortened_one_way(items: list[str], most: int, said: str) -> None:
    assert shortened(items, most) == said


def test_the_models_a_server_lists_are_shortened_the_same_way() -> None:
    from pageindex.llm.preflight import PreflightResult

    found = PreflightResult.model_construct(models=["m1", "m2", "m3", "m4", "m5", "m6"], url="http://x/v1")
    assert found.shown_models() == "m1, m2, m3, m4 and 2 more"
    assert PreflightResult.model_construct(models=[], url="http://x/v1").shown_models() == "no models"


def test_a_failure_is_recorded_on_one_line_with_its_kind() -> None:
    """A plug-in judge that built ``JudgeVerdict(verdict=...)`` without ``judge=`` left pydantic's
    four-line dump, with a link, in samples.jsonl's ``judge_error``; every recorded failure is one line."""
    from bench.judges.base import JudgeVerdict
    from bench.samples import judge_error_text

    with pytest.raises(ValidationError) as caught:
        JudgeVerdict(verdict="correct")
    assert judge_error_text(caught.value) == "ValidationError: JudgeVerdict judge: Field required"
    with pytest.raises(ValidationError) as caught:
        _Settings.model_validate({"limit": 0, "rate": 9})
    said = error_text(caught.value)
    assert said == "ValidationError: _Settings limit: must be at least 1 (and 1 more problem)"
    assert error_text(ValueError("two\n  lines"), "invalid_reply") == "invalid_reply: two lines"
