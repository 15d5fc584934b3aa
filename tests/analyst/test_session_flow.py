"""Follow-ups answered from the session, repeated failed searches, not-found, expiry and eviction,
with the scripted analyst model over the real 3M 2018 10-K."""

from __future__ import annotations

import asyncio

import pytest

from pageindex.analyst.engine import Analyst
from pageindex.analyst.session import AnalystSession, SessionFinding, SessionLimits
from pageindex.analyst.store import (
    SessionElsewhereError,
    SessionInUseError,
    SessionStore,
    SessionUnreadableError,
)
from pageindex.llm import ScriptedModel, make_client
from pageindex.retrievers.result import Finding
from tests.analyst.policies import CAPEX_Q, FOLLOWUP_Q, MISSING_Q, analyst_policy

CASH_FLOWS, PAGE = "item_8/cash_flows", 60


class Clock:
    def __init__(self, t: float = 1_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def make_analyst(
    tree, clock=None, limits: SessionLimits | None = None, **kw
) -> tuple[Analyst, ScriptedModel]:
    sm = ScriptedModel(policy=analyst_policy)
    clock = clock or Clock()
    session = AnalystSession.for_tree(tree, limits=limits, now=clock())
    analyst = Analyst(tree, llm=make_client("scripted", scripted=sm), session=session, clock=clock, **kw)
    return analyst, sm


def tokens(sm: ScriptedModel, start: int = 0) -> int:
    return sum(r.prompt_tokens + r.completion_tokens for r in sm.requests[start:])


def test_followup_from_session_costs_fewer_tokens_than_cold(analyst_tree):
    tree = analyst_tree("3M_2018_10K")
    analyst, sm = make_analyst(tree)
    first = asyncio.run(analyst.ask(CAPEX_Q))
    assert first.result.status == "answer" and first.use.mode == "cold"
    assert first.result.usage.total_tokens == tokens(sm) and len(sm.requests) == 3  # extract x2 + synthesis

    before = len(sm.requests)
    follow = asyncio.run(analyst.ask(FOLLOWUP_Q))
    session_requests = sm.requests[before:]
    assert [r.response_model for r in session_requests] == ["SessionReply"]  # one call, no index, no search
    assert "[page 60 | printed 60]" in session_requests[0].messages[-1].content  # section text re-offered
    result = follow.result
    assert result.status == "answer" and result.retriever == "session"
    assert [(s.node_id, s.page, s.quote, s.verified) for s in result.sources] == [
        (CASH_FLOWS, PAGE, "(1,577)", True)
    ]
    assert result.pages_fetched == [PAGE]
    spent = tokens(sm, before)
    assert result.usage.total_tokens == spent == follow.use.tokens_spent

    cold_analyst, cold_sm = make_analyst(tree)
    cold = asyncio.run(cold_analyst.ask(FOLLOWUP_Q))
    assert cold.result.status == "answer" and cold.use.mode == "cold" and len(cold_sm.requests) == 3
    assert cold.result.usage.total_tokens == tokens(cold_sm)
    assert spent < cold.result.usage.total_tokens / 5  # the figures: e.g. 1,020 vs 10,207 tokens

    use = follow.use
    assert use.mode == "session" and use.findings_reused == 2 and use.sections_reused == 1
    assert use.cache_hits == 3
    assert use.tokens_saved == first.result.usage.total_tokens - spent


def test_not_found_then_the_same_search_is_not_repeated(analyst_tree):
    tree = analyst_tree("3M_2018_10K")
    analyst, sm = make_analyst(tree)
    missing = asyncio.run(analyst.ask(MISSING_Q))
    assert missing.result.status == "fail" and missing.not_found
    assert missing.searched is not None and missing.searched.sections == ["item_1a"]
    assert missing.searched.pages == [10, 11]  # risk factors read as far as the first slice went
    assert "does not report" in (missing.result.reason or "")
    assert analyst.session.failures[-1].search.item == MISSING_Q

    asked = len(sm.requests)
    again = asyncio.run(analyst.ask("how many Bitcoin did 3M hold at the end of 2018"))
    assert len(sm.requests) == asked  # no model call at all
    assert again.use.mode == "repeat_failed" and again.use.cache_hits == 1
    assert again.use.tokens_saved == missing.result.usage.total_tokens > 0
    assert again.result.status == "fail" and "already searched in this session" in again.result.reason

    other_year = asyncio.run(analyst.ask("How many bitcoin did 3M hold at the end of 2017?"))
    assert other_year.use.mode == "session_then_retriever"  # different numbers: a new search
    assert len(sm.requests) > asked


def test_a_question_whose_answer_was_unusable_is_asked_again_not_called_not_found(analyst_tree):
    # Review (real llama.cpp server, gemma-3-270m): the model's output was unusable (invalid_reply),
    # and the same question asked again was answered "Not found in this filing ... already searched
    # in this session" with no model call, though the filing was never read.
    tree = analyst_tree("3M_2018_10K")
    sm = ScriptedModel(policy=lambda request: "The answer is somewhere in the filing.")
    analyst = Analyst(tree, llm=make_client("scripted", scripted=sm), options={"max_iterations": 1})
    first = asyncio.run(analyst.ask(CAPEX_Q))
    assert first.result.status == "fail" and first.result.error_kind == "invalid_reply"
    assert analyst.session.failures == []  # no search came back empty: none ran as asked

    asked = len(sm.requests)
    again = asyncio.run(analyst.ask(CAPEX_Q))
    assert again.use.mode == "cold" and len(sm.requests) > asked  # asked again, not "already searched"
    assert "already searched" not in (again.result.reason or "")
    assert [t.status for t in analyst.session.turns] == ["fail", "fail"]  # both turns are still recorded


def test_idle_session_expires(analyst_tree, tmp_path):
    tree = analyst_tree("3M_2018_10K")
    clock = Clock()
    analyst, sm = make_analyst(tree, clock=clock, limits=SessionLimits(idle_ttl_s=60))
    asyncio.run(analyst.ask(CAPEX_Q))
    assert analyst.session.has_material()

    store = SessionStore(tmp_path / "sessions")
    analyst.session.name = "expiring"
    store.save(analyst.session)
    clock.t += 61
    fresh = AnalystSession.for_tree(tree, limits=SessionLimits(idle_ttl_s=60), now=clock())
    opened = store.open("expiring", fresh, now=clock())
    assert opened.status == "expired" and opened.idle_s == 61 and not opened.session.turns
    assert opened.kept is not None and CAPEX_Q in opened.kept.read_text()
    store.save(opened.session)  # the fresh one, in the name's place
    assert (
        store.open("expiring", AnalystSession.for_tree(tree, now=clock()), now=clock()).status == "reopened"
    )

    follow = asyncio.run(analyst.ask(FOLLOWUP_Q))  # the live session expires too
    assert follow.expired and follow.use.mode == "cold" and follow.result.retriever == "iterative"
    assert [t.question for t in analyst.session.turns] == [FOLLOWUP_Q]


def test_size_cap_evicts_oldest_material_first(analyst_tree):
    tree = analyst_tree("3M_2018_10K")
    session = AnalystSession.for_tree(tree, limits=SessionLimits(max_chars=10_000), now=0)
    for t in (1.0, 2.0, 3.0):
        f = Finding(label=f"fact {t}", value="1" * 3500, page=PAGE, section=CASH_FLOWS)
        session.findings.append(SessionFinding(finding=f, question="q", turn=int(t), added_at=t))
    size = session.findings[0].size
    assert session.material_chars() == 3 * size > 10_000 >= 2 * size
    assert session.evict() == 1 and session.evicted == 1
    assert [f.finding.label for f in session.findings] == ["fact 2.0", "fact 3.0"]

    analyst, sm = make_analyst(tree, limits=SessionLimits(max_chars=0))  # keeps nothing
    asyncio.run(analyst.ask(CAPEX_Q))
    assert not analyst.session.has_material() and analyst.session.evicted == 3  # 2 findings + 1 section
    follow = asyncio.run(analyst.ask(FOLLOWUP_Q))
    assert follow.use.mode == "cold" and "SessionReply" not in [r.response_model for r in sm.requests]


def test_a_saved_session_about_other_filings_is_kept_and_the_name_refused(analyst_tree, tmp_path):
    """Opening it for another filing started a fresh session under its name, which replaced the
    saved one on the next save (review 18)."""
    tree = analyst_tree("3M_2018_10K")
    analyst, _ = make_analyst(tree)
    asyncio.run(analyst.ask(CAPEX_Q))
    store = SessionStore(tmp_path / "sessions")
    analyst.session.name = "q4"
    saved = store.save(analyst.session).read_text()
    other = tree.model_copy(update={"doc_id": "OTHER_10K", "sha256": "0" * 64})
    with pytest.raises(SessionElsewhereError) as refused:
        store.open("q4", AnalystSession.for_tree(other), now=2_000.0)
    assert str(refused.value).startswith("session 'q4' is about 3M_2018_10K, not OTHER_10K: give another")
    assert store.path_for("q4").read_text() == saved
    changed = tree.model_copy(update={"sha256": "1" * 64})  # the same filing, its file changed since
    with pytest.raises(SessionElsewhereError) as refused:
        store.open("q4", AnalystSession.for_tree(changed), now=2_000.0)
    assert str(refused.value).startswith(  # was "is about 3M_2018_10K, not 3M_2018_10K"
        f"session 'q4' was saved about another version of 3M_2018_10K ({tree.source} changed since): give "
    ), str(refused.value)
    assert store.path_for("q4").read_text() == saved


def test_a_session_saved_with_another_tree_builder_starts_afresh(analyst_tree, tmp_path):
    """Its sections are named by node ids of the builder that made them (review 18: reused as is)."""
    tree = analyst_tree("3M_2018_10K")
    analyst, _ = make_analyst(tree)
    asyncio.run(analyst.ask(CAPEX_Q))
    assert analyst.session.sections
    store = SessionStore(tmp_path / "sessions")
    analyst.session.name = "q4"
    store.save(analyst.session)
    assert store.open("q4", AnalystSession.for_tree(tree, now=1_001.0), now=1_001.0).status == "reopened"
    saved = store.path_for("q4").read_text()
    rebuilt = tree.model_copy(update={"builder_version": "999+other"})
    opened = store.open("q4", AnalystSession.for_tree(rebuilt, now=1_001.0), now=1_001.0)
    assert opened.status == "rebuilt" and not opened.session.sections and not opened.session.turns
    # the saved answers are kept aside, whole, where no session name reaches them (the upgrade review:
    # every builder upgrade replaced each saved session's answers at its next save)
    assert opened.kept is not None and opened.kept.read_text() == saved
    assert opened.kept.name.startswith("q4.json.rebuilt-") and not store.path_for("q4").exists()
    assert store.names() == []


def test_a_saved_session_that_cannot_be_read_is_kept_and_the_name_refused(analyst_tree, tmp_path):
    """A torn, hand-edited or other version's session file was started afresh in silence, and the fresh
    session saved over it: the answers it held were gone (review of ask on filings)."""
    tree = analyst_tree("3M_2018_10K")
    store = SessionStore(tmp_path / "sessions")
    store.directory.mkdir()
    path = store.path_for("q4")
    for text, why in (
        ('{"name": "q4", "documents": [', "not JSON: EOF while parsing a list at line 1 column 29"),
        ("[1, 2]", "not a session this version of pageindex saves: must be an object"),
        ('{"name": "q4"}', "it names no filing"),
        ('{"documents": [{"doc_id": "x"}]}', "not a session this version of pageindex saves: "
         "documents.0.source: Field required"),
    ):
        path.write_text(text)
        with pytest.raises(SessionUnreadableError) as refused:
            store.open("q4", AnalystSession.for_tree(tree), now=2_000.0)
        assert str(refused.value) == (
            f"session 'q4' cannot be read ({why}): give another --session name, or move {path} away to "
            "start it afresh"
        )
        assert path.read_text() == text
    assert store.load("absent") is None  # no file: a new session, as before
    (tmp_path / "not-a-folder").write_text("")
    assert SessionStore(tmp_path / "not-a-folder").load("q4") is None  # saving it says it cannot


def test_a_session_open_in_another_process_is_refused(tmp_path):
    """Two processes with one --session each saved what they had, and the last to save replaced the
    other's answers (two interactive sessions of one name: the first one's questions were gone)."""
    import fcntl

    store = SessionStore(tmp_path / "sessions")
    store.directory.mkdir()
    other = store.path_for("q4").with_suffix(".lock").open("a+")  # another process's hold
    other.write("4242")
    other.flush()
    fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
    with pytest.raises(SessionInUseError) as refused:
        store.lock("q4")
    assert str(refused.value) == (
        "session 'q4' is open in another pageindex ask (process 4242): give another --session name, or end "
        "that one first"
    )
    other.close()  # that process ended: the session is free
    store.lock("q4")
    store.lock("q4")  # held by this process: taken again
    try:
        again = store.path_for("q4").with_suffix(".lock").open("a+")
        with pytest.raises(OSError):
            fcntl.flock(again, fcntl.LOCK_EX | fcntl.LOCK_NB)
        again.close()
    finally:
        store.unlock("q4")
