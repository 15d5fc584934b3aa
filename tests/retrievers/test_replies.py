"""Model replies: a figure given as a JSON number where text is expected is taken as its text."""

from __future__ import annotations

import json

import pytest

from pageindex.retrievers.iterative import ExtractionReply, SynthesisReply
from pageindex.retrievers.planner import ExtractReply
from pageindex.retrievers.replies import AnswerWithSources, ReplyParseError, parse_json_reply


def parsed(model, data):
    return parse_json_reply(json.dumps(data), model)


def test_a_json_number_where_text_is_expected_is_its_text():
    answer = parsed(AnswerWithSources, {"answer": 1577, "sources": [{"page": 60, "quote": -1577.5}]})
    assert (answer.answer, answer.sources[0].quote) == ("1577", "-1577.5")
    assert parsed(SynthesisReply, {"decision": "answer", "answer": 4.8, "pages": [60]}).answer == "4.8"
    finding = {"label": "capex", "value": 1577, "page": 60}
    assert parsed(ExtractionReply, {"status": "found", "findings": [finding]}).findings[0].value == "1577"
    value = {"name": "capex_2018", "value": 1577, "page": 60, "quote": 1577}
    assert parsed(ExtractReply, {"values": [value]}).values[0].quote == "1577"
    # what the model is asked for does not change: the schemas still say string
    assert AnswerWithSources.model_json_schema()["properties"]["answer"]["type"] == "string"


def test_true_or_false_is_not_a_number():
    for model, data in [
        (ExtractionReply, {"status": "found", "findings": [{"label": "paid", "value": True, "page": 60}]}),
        (AnswerWithSources, {"answer": True}),
        (AnswerWithSources, {"answer": "x", "sources": [{"page": 60, "quote": False}]}),
        (SynthesisReply, {"decision": "answer", "answer": True}),
    ]:
        with pytest.raises(ReplyParseError, match="valid string"):
            parsed(model, data)


@pytest.mark.parametrize(
    ("reply", "field"),
    [({"status": "answer", "answer": "<short answer with the figure and its unit>"}, "answer"),
     ({"status": "fail", "reason": " <what is missing> "}, "reason")],
)
def test_a_prompt_placeholder_copied_as_it_stands_is_not_a_reply(reply, field):
    with pytest.raises(ReplyParseError, match=f'"{field}" is the prompt\'s placeholder'):
        parse_json_reply(json.dumps(reply), AnswerWithSources)
    assert parse_json_reply(json.dumps({"status": "fail", "reason": "no <table> of it"}), AnswerWithSources)


@pytest.mark.parametrize(
    "answer",
    ["<$1,577 million>", "<1,577>", "<0.1%>", "<1%", "<$5 million", "<b>12.5</b>", "less than <1% of revenue",
     "<FY2018: $1,577 million>"],
)
def test_a_real_answer_in_angle_brackets_is_no_placeholder(answer):
    """A figure the model wrote inside the template's brackets ("<$1,577 million>" for "<short answer with
    the figure and its unit>"), a value printed "<1>" in a filing or "<1%" is an answer: it was refused
    as "the prompt's placeholder", asked again and then invalid_reply, a correct answer lost."""
    from pageindex.retrievers.followup import FollowupReply

    reply = parse_json_reply(json.dumps({"status": "answer", "answer": answer}), AnswerWithSources)
    assert reply.answer == answer
    assert FollowupReply(status="answer", answer=answer).answer == answer
    finding = {"label": "capex", "value": answer, "page": 60}
    assert ExtractionReply(status="found", findings=[finding]).findings[0].value == answer


def test_a_placeholder_in_a_field_the_status_does_not_use_leaves_the_reply_usable():
    """A reply's "reason" counts only when it fails, its "answer" only when it answers: a complete answer
    whose unused reason is the template's "<what is missing>" was refused."""
    from pageindex.retrievers.followup import FollowupReply

    reply = {"status": "answer", "answer": "$1,577 million", "reason": "<what is missing>"}
    assert parse_json_reply(json.dumps(reply), AnswerWithSources).answer == "$1,577 million"
    assert FollowupReply(**reply).answer == "$1,577 million"
    failed = {"status": "fail", "answer": "<short answer with the figure and its unit>",
              "reason": "no cash flow"}
    assert parse_json_reply(json.dumps(failed), AnswerWithSources).reason == "no cash flow"
    found = {"status": "found", "findings": [{"label": "capex", "value": "1,577", "page": 60}],
             "reason": "<what you looked for and why it is not there>"}
    assert ExtractionReply(**found).findings[0].value == "1,577"
    # still refused: the placeholders themselves, and a word-only one a little changed
    for text in ["<the value exactly as printed, e.g. (1,577)>", "<your answer>"]:
        with pytest.raises(ReplyParseError, match="placeholder"):
            parse_json_reply(json.dumps({"status": "answer", "answer": text}), AnswerWithSources)
