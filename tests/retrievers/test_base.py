"""The registry and the recorder: class-based retrievers, option checking, page_texts."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field

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
