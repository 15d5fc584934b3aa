from pathlib import Path

import pytest

from bench.samples import Sample, SampleStore, load_samples


def _sample(qid: str, retriever: str = "agent", repeat: int = 0) -> Sample:
    return Sample(question_id=qid, retriever=retriever, repeat=repeat, status="answer", verdict="correct")


def test_append_then_reopen_skips_finished(tmp_path: Path) -> None:
    path = tmp_path / "samples.jsonl"
    store = SampleStore(path)
    assert store.append(_sample("q1"))
    assert store.append(_sample("q1", repeat=1))
    assert not store.append(_sample("q1"))  # same key: never duplicated
    reopened = SampleStore(path)
    assert reopened.has(("q1", "agent", 0)) and reopened.has(("q1", "agent", 1))
    assert not reopened.has(("q2", "agent", 0))
    assert [s.key for s in load_samples(path)] == [("q1", "agent", 0), ("q1", "agent", 1)]


def test_torn_last_line_is_dropped_with_warning(tmp_path: Path) -> None:
    path = tmp_path / "samples.jsonl"
    store = SampleStore(path)
    store.append(_sample("q1"))
    with path.open("a") as fh:
        fh.write(_sample("q2").model_dump_json()[:40])  # crash mid-write
    reopened = SampleStore(path)
    assert [s.question_id for s in reopened.samples] == ["q1"]
    assert len(reopened.warnings) == 1 and "partial last line" in reopened.warnings[0]
    reopened.append(_sample("q3"))
    assert [s.question_id for s in load_samples(path)] == ["q1", "q3"]


def test_complete_last_line_without_newline_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "samples.jsonl"
    path.write_text(_sample("q1").model_dump_json())  # no trailing newline
    store = SampleStore(path)
    store.append(_sample("q2"))
    assert [s.question_id for s in load_samples(path)] == ["q1", "q2"]


def test_corruption_in_the_middle_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "samples.jsonl"
    path.write_text("{not json}\n" + _sample("q1").model_dump_json() + "\n")
    with pytest.raises(ValueError, match="line 1"):
        SampleStore(path)
