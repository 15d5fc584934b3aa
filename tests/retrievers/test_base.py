"""The registry and the recorder: class-based retrievers, option checking, page_texts."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field, model_validator

from pageindex.retrievers import RetrieverConfigError, RetrieverOptions, register_retriever, retrieve
from pageindex.retrievers.base import available_retrievers, get_retriever


class EchoOptions(RetrieverOptions):
    pages: list[int] = Field(default_factory=lambda: [60], description="pages to show")


@register_retriever("test_echo_pages", needs_llm=False)
class EchoPages:
    """Shows fixed pages and answers with their first line (no model)."""

    Options = EchoOptions
    prompt_version = "echo_v0"

    async def run(self, run, opts: EchoOptions):
        text = run.page_texts(opts.pages)
        run.event("decision", "echo", chars=len(text))
        return run.result("answer", answer=text.splitlines()[2], sources=[])


def test_class_retriever_registers_and_records_pages(tree_3m):
    spec = get_retriever("test_echo_pages")
    assert spec.description.startswith("Shows fixed pages") and spec.needs_llm is False
    assert ("pages", "<factory>", "pages to show") in [(n, "<factory>", d) for n, _, d in spec.option_help()]
    assert "test_echo_pages" in available_retrievers()
    result = retrieve(tree_3m, "q", retriever="test_echo_pages", pages=[60, 58, 999])
    assert result.status == "answer" and result.answer == "Table of Contents"
    assert result.pages_fetched == [58, 60] and result.prompt_version == "echo_v0"
    assert result.usage.llm_calls == 0 and result.options == {"pages": [60, 58, 999]}
    # trial 11: the page the filing does not have was dropped without a word
    said = [e for e in result.trace if e.kind == "info" and e.data.get("absent")]
    expected = f"pages [999] not shown: {tree_3m.doc_id} has pages 1-{tree_3m.page_count}"
    assert [e.message for e in said] == [expected]
    with pytest.raises(RetrieverConfigError, match=r"unknown option 'page'.*known options: pages"):
        retrieve(tree_3m, "q", retriever="test_echo_pages", page=[1])


def test_options_must_forbid_extras():
    class Loose(BaseModel):
        x: int = 1

    with pytest.raises(TypeError, match="forbid"):

        @register_retriever("test_loose", options=Loose)  # type: ignore[arg-type]
        async def loose(run, opts):  # pragma: no cover
            return run.result("fail")


def test_retriever_crash_becomes_error_result(tree_3m):
    @register_retriever("test_crash", needs_llm=False)
    async def crash(run, opts):
        run.show_pages([3])
        raise ZeroDivisionError("boom")

    result = retrieve(tree_3m, "q", retriever="test_crash")
    assert result.status == "error" and result.error == "ZeroDivisionError: boom"
    assert result.error_kind == "ZeroDivisionError" and result.pages_fetched == [3]
    assert result.trace[-1].kind == "error"


@pytest.mark.parametrize("params", ["run", "run, opts, extra", "", "query, tree", "tree, question"])
def test_a_retriever_that_does_not_take_run_and_opts_is_refused_when_it_registers(params):
    """Trial 11: ``async def badsig(run)`` was listed, then every sample failed with a TypeError; trial 14:
    so was ``async def badsig(query, tree)`` (two arguments, named as `retrieve`'s)."""
    namespace: dict = {}
    exec(f"async def badsig({params}):\n    return None", namespace)
    refused = (
        r"retriever 'test_badsig': run must take \(run, opts\), a QuestionRun and its options "
        rf"\(run.tree, run.query\), not \({params}\)"
    )
    with pytest.raises(TypeError, match=refused):
        register_retriever("test_badsig", needs_llm=False)(namespace["badsig"])
    assert "test_badsig" not in available_retrievers()


@pytest.mark.parametrize("name", ["", "a,b", "my retriever", " mine", "x=1"])
def test_a_retriever_name_no_option_can_ask_for_is_refused_when_it_registers(name):
    """A plug-in's "a,b" was listed by `pageindex retrievers` but `-r a,b` asked for a and b; "" was
    offered as a choice (`choose from , a,b, agent, ...`)."""
    with pytest.raises(TypeError, match="a name is a word without spaces, commas or '='"):

        @register_retriever(name, needs_llm=False)
        async def named(run, opts):  # pragma: no cover
            return run.result("fail")

    assert name not in available_retrievers()


def test_an_option_default_its_own_field_refuses_is_refused_when_it_registers():
    """pydantic does not validate defaults: ``pages: int = Field(0, ge=1)`` registered, and every run used
    pages=0, a value no ``--opt`` could give (``--opt pages=0`` is refused)."""

    class BadDefault(RetrieverOptions):
        top: int = 3
        pages: int = Field(0, ge=1)
        names: list[str] = Field(default_factory=list)

    with pytest.raises(TypeError, match=r"retriever 'test_bad_default': the default of option 'pages' \(0\) "
                       r"is refused: must be at least 1; give a valid default"):

        @register_retriever("test_bad_default", options=BadDefault, needs_llm=False)
        async def bad_default(run, opts):  # pragma: no cover
            return run.result("fail")

    assert "test_bad_default" not in available_retrievers()


def test_defaults_the_options_models_own_rule_refuses_are_refused_when_it_registers():
    """A rule of the whole options model (a ``model_validator``) that the defaults break registered, and
    every run without ``--opt`` stopped with ``retriever 'x': option '': low must not exceed high``."""

    class Crossed(RetrieverOptions):
        low: int = 5
        high: int = 3

        @model_validator(mode="after")
        def _ordered(self) -> Crossed:
            if self.low > self.high:
                raise ValueError("low must not exceed high")
            return self

    with pytest.raises(TypeError) as raised:

        @register_retriever("test_crossed_defaults", options=Crossed, needs_llm=False)
        async def crossed(run, opts):  # pragma: no cover
            return run.result("fail")

    assert str(raised.value) == (
        "retriever 'test_crossed_defaults': its options' defaults are refused together: low must not exceed "
        "high; give a valid default"
    )
    assert "test_crossed_defaults" not in available_retrievers()


def test_options_the_options_models_own_rule_refuses_are_said_together_not_as_option_empty():
    """``--opt low=9`` against a rule of the whole options model said ``option '': low must not exceed
    high``, naming no option; now it names what was given."""

    class Ordered(RetrieverOptions):
        low: int = 1
        high: int = 3

        @model_validator(mode="after")
        def _ordered(self) -> Ordered:
            if self.low > self.high:
                raise ValueError("low must not exceed high")
            return self

    @register_retriever("test_ordered_options", options=Ordered, needs_llm=False)
    async def ordered(run, opts):  # pragma: no cover
        return run.result("fail")

    with pytest.raises(RetrieverConfigError) as raised:
        get_retriever("test_ordered_options").parse_options({"low": 9})
    assert str(raised.value) == (
        "retriever 'test_ordered_options': the options low=9 are refused together: low must not exceed high "
        "(known options: low, high)"
    )

    class Required(RetrieverOptions):  # an option without a default is the caller's to give
        pages: list[int]
        top: int = Field(2, ge=1)

    @register_retriever("test_required_option", options=Required, needs_llm=False)
    async def required(run, opts):  # pragma: no cover
        return run.result("fail")

    assert "test_required_option" in available_retrievers()


def test_a_class_retriever_is_checked_on_its_bound_run():
    class Fine:
        async def run(self, run, opts):
            return run.result("fail")

    class Bad:
        async def run(self, run):
            return run.result("fail")

    register_retriever("test_class_fine", needs_llm=False)(Fine)
    with pytest.raises(TypeError, match=r"run must take \(run, opts\), .* not \(run\)"):
        register_retriever("test_class_bad", needs_llm=False)(Bad)


def test_an_error_from_retrieve_is_not_chained_to_the_event_loop_probe(tree_3m):
    # retrieve() ran the retrieval inside its `except RuntimeError` for "no running event loop", so every
    # error a library user saw came with that RuntimeError's traceback, "During handling of ... another"
    with pytest.raises(RetrieverConfigError, match="unknown retriever 'test_nope'") as raised:
        retrieve(tree_3m, "q", retriever="test_nope")
    assert raised.value.__context__ is None


@pytest.mark.parametrize(
    ("query", "said"),
    [("", "query '' is empty"), ("  \n", r"query '  \\n' is empty"),
     (None, "query must be text .*got NoneType"), (5, "query must be text .*got int 5")],
)
def test_a_query_that_is_no_question_is_refused_before_any_work(tree_3m, query, said):
    # an empty query was answered (extractive: status "fail", "no row or sentence ... matches"), and one
    # that is no text was pydantic's four-line ValidationError about RetrievalResult.query
    with pytest.raises(RetrieverConfigError, match=said) as raised:
        retrieve(tree_3m, query, retriever="extractive")
    assert "\n" not in str(raised.value)


def test_a_tree_that_is_no_tree_is_refused_in_one_line(tree_3m, fb_pdf):
    # a PDF's path given for the tree was "AttributeError: 'str' object has no attribute 'doc_id'"
    path = str(fb_pdf("3M_2018_10K"))
    said = r"tree must be a Tree .*got str; build it first: build_tree\("
    with pytest.raises(RetrieverConfigError, match=said):
        retrieve(path, "What was capex?", retriever="extractive")
    with pytest.raises(RetrieverConfigError, match="tree must be a Tree .*got NoneType$"):
        retrieve(None, "What was capex?", retriever="extractive")


def test_a_question_about_another_filing_is_refused(tree_3m, fb_tree):
    # the oracle read the other filing's gold pages and answered from them, in silence
    amcor = fb_tree("AMCOR_2023Q4_EARNINGS")
    said = (r"context doc_name '3M_2018_10K' is not this tree's document \('AMCOR_2023Q4_EARNINGS'\): "
            "give the tree of '3M_2018_10K', or no doc_name")
    with pytest.raises(RetrieverConfigError, match=said):
        retrieve(amcor, "What was capex?", retriever="extractive", context={"doc_name": "3M_2018_10K"})
    mine = retrieve(tree_3m, "What was capex?", retriever="extractive", context={"doc_name": "3M_2018_10K"})
    assert mine.status == "answer" and mine.sources[0].page == 49
    from pageindex.tree.combine import combine_trees

    both = combine_trees([tree_3m, amcor])  # a combined tree holds each of its documents
    amcor_ctx = {"doc_name": "AMCOR_2023Q4_EARNINGS"}
    result = retrieve(both, "What was capex?", retriever="extractive", context=amcor_ctx)
    assert result.status == "answer" and result.error is None


@pytest.mark.parametrize(
    ("context", "said"),
    [({"evidence_pages": ["x"]}, "context: evidence_pages.0: must be a whole number"),
     ({"evidence_page": [60]}, "context: evidence_page: is not a known key"),
     ([60], "context: must be a valid dictionary")],
)
def test_a_context_that_cannot_be_read_is_refused_in_one_line(tree_3m, context, said):
    # was pydantic's four-line ValidationError; a misspelt field was dropped, so the oracle said "no gold
    # evidence pages for this question" of pages it had been given
    said += r".*\(known fields: question_id, evidence_pages"
    with pytest.raises(RetrieverConfigError, match=said) as raised:
        retrieve(tree_3m, "What was capex?", retriever="extractive", context=context)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize("retriever", ["bm25", "extractive"])
def test_an_llm_that_is_no_client_is_refused_in_one_line(tree_3m, retriever):
    # an SDK's own client (or any object) given as llm was a result of status "error" for every question:
    # "AttributeError: 'AsyncOpenAI' object has no attribute 'ensure_limits'"
    class AsyncOpenAI:
        chat = object()  # the SDK's client.chat is a resource (client.chat.completions), not a call

    said = r"llm must be a model spec \('openai/gpt-4o-mini'\) or an LLMClient .*got AsyncOpenAI$"
    with pytest.raises(RetrieverConfigError, match=said):
        retrieve(tree_3m, "What was capex?", retriever=retriever, llm=AsyncOpenAI())


class ContainerOptions(RetrieverOptions):
    words: list[str] = Field(default_factory=list, description="words")
    limit: list[int] | None = Field(None, description="optional list")
    weights: dict[str, float] = Field(default_factory=dict, description="weights")
    either: str | list[str] = Field("x", description="text or a list: left as given")


def test_list_and_dict_options_of_a_plugin_can_be_given_on_the_command_line():
    """Review rev-plugin: a plug-in's list option was "must be a valid list" for every ``--opt pages=2,3``
    (the command line gives text; only the oracle's own ``pages`` split it), and ``pageindex retrievers``
    listed a ``default_factory`` default as ``PydanticUndefined``."""
    spec = get_retriever("test_echo_pages")
    assert spec.parse_options({"pages": "5, 7"}).pages == [5, 7]
    assert spec.option_help() == [("pages", "[60]", "pages to show")]
    from pageindex.retrievers.base import RetrieverSpec

    containers = RetrieverSpec("containers", spec.run, ContainerOptions, "", "", False)
    opts = containers.parse_options({"words": "a,b", "limit": "3", "weights": '{"a": 1}', "either": "p,q"})
    assert opts.model_dump() == {"words": ["a", "b"], "limit": [3], "weights": {"a": 1.0}, "either": "p,q"}
    assert containers.parse_options({"limit": None, "words": ""}).model_dump()["limit"] is None
    assert containers.parse_options({"words": ""}).words == []
    with pytest.raises(RetrieverConfigError, match="option 'weights': must be a valid dictionary"):
        containers.parse_options({"weights": "a:1"})
    assert [d for _, d, _ in containers.option_help()] == ["[]", "None", "{}", "'x'"]
