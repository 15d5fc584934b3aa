"""One status rule (issue 13): error = infrastructure, fail = the model, judge failures apart."""

from __future__ import annotations

from bench.datasets.models import Question
from bench.samples import Sample
from pageindex.retrievers.result import RetrievalResult

Q = Question(question_id="q1", question="What was revenue?", gold_answer="$1", doc_id="d")


def test_a_failed_judge_never_turns_an_answer_into_an_error():
    result = RetrievalResult(retriever="agent", query=Q.question, status="answer", answer="$1")
    sample = Sample.from_result(result, question=Q, judge_error="timeout: no reply within 60s")
    assert (sample.status, sample.verdict, sample.judge) == ("answer", None, "judge_error")
    assert sample.judge_error == "timeout: no reply within 60s" and sample.error is None


def test_model_failures_are_fail_and_infrastructure_failures_error():
    unusable = RetrievalResult(
        retriever="oracle", query="q", status="fail", reason="r", error_kind="invalid_reply"
    )
    broken = RetrievalResult(retriever="oracle", query="q", status="error", error="x", error_kind="http_500")
    assert Sample.from_result(unusable, question=Q).verdict == "refusal"
    assert Sample.from_result(broken, question=Q).error_kind == "http_500"


def test_old_error_kind_names_read_as_todays():
    old = Sample(question_id="q", retriever="r", status="fail", error_kind="invalid_output")
    assert old.error_kind == "invalid_reply"
    assert Sample.model_validate_json(old.model_dump_json()).error_kind == "invalid_reply"
