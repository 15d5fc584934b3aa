"""Section summaries: one short LLM-written line per section, cached beside the tree.

``pageindex build --summaries --model M`` calls :func:`summarize_tree`. Each section's text (its
pages, at most ``max_chars`` characters) goes to the model with the versioned prompt
``prompts/summary_v1.md``; the reply becomes ``Node.summary``, which the section index shows to
agents (``pageindex.retrievers.index.render_index``). A reply that is no summary (cut at its
``max_tokens``, empty, or full of chat-template markers such as ``<|im_end|>``: a model that rambled) is
left out; when no reply is usable nothing is written and :class:`UnusableSummaries` is raised.
This module lives outside ``pageindex.tree``: the tree builder makes no LLM call, and its version
(a digest of that package's code) does not change with the summaries' code.

Cache: a sidecar JSON in the tree cache directory, named after the tree's sha256 and builder
version, the model and the prompt version
(``<sha256>-v<builder>.summaries.<model>.summary_v1.json``), holding the summaries, the usage and
the cost actually spent. :func:`estimate_summaries` gives the expected tokens and cost before any
call (prompt tokens ~ characters / 4, plus ``EXPECTED_COMPLETION_TOKENS`` per section);
:func:`apply_cached_summaries` puts the newest cached summaries of a tree back onto it.
"""

from __future__ import annotations

import asyncio
import math
import re
import time
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from pageindex.atomic import write_atomic
from pageindex.llm.types import Message
from pageindex.llm.wire import template_markers
from pageindex.retrievers.prompts import load_template
from pageindex.tree.cache import default_cache_dir
from pageindex.tree.model import Node, Tree

PROMPT_VERSION = "summary_v1"
PROMPT_DIR = Path(__file__).parent / "prompts"
MAX_SECTION_CHARS = 6000
EXPECTED_COMPLETION_TOKENS = 60
MAX_SUMMARY_CHARS = 400


class SummaryEstimate(BaseModel):
    model: str
    sections: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None  # None = the model's price is unknown


class SummaryUsage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    cost_usd: float | None = 0.0


class UnusableSummaries(Exception):
    """No section's reply was a usable summary (every one cut at ``max_tokens``, empty or full of
    chat-template markers): nothing was written."""


class SummaryFile(BaseModel):
    """The sidecar: summaries of one tree by one model and prompt version."""

    tree_sha256: str
    builder_version: str
    doc_id: str
    model: str
    prompt_version: str = PROMPT_VERSION
    summaries: dict[str, str] = Field(default_factory=dict)  # node_id -> summary
    # node_id -> why its reply was left out (cut at max_tokens, chat-template markers)
    left_out: dict[str, str] = Field(default_factory=dict)
    usage: SummaryUsage = Field(default_factory=SummaryUsage)
    estimate: SummaryEstimate | None = None
    created_at: float = Field(default_factory=time.time)


def _slug(model: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", model)


def summary_path(tree: Tree, model: str, cache_dir: str | Path | None = None) -> Path:
    directory = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    return directory / f"{tree.sha256}-v{tree.builder_version}.summaries.{_slug(model)}.{PROMPT_VERSION}.json"


def section_messages(tree: Tree, node: Node, *, max_chars: int = MAX_SECTION_CHARS) -> list[Message]:
    """The prompt for one section (its page text, cut at ``max_chars``)."""
    text = tree.node_text(node.node_id).strip()[:max_chars]
    span = f"page {node.start_page}" if node.page_count == 1 else f"pages {node.start_page}-{node.end_page}"
    values = {
        "node_id": node.node_id,
        "title": node.title,
        "span": span,
        "text": f'<document node_id="{node.node_id}">\n{text}\n</document>',
    }
    return load_template(PROMPT_DIR, PROMPT_VERSION).messages(**values)


def estimate_summaries(
    tree: Tree, model: str, *, max_chars: int = MAX_SECTION_CHARS, pricing: Any = None
) -> SummaryEstimate:
    """Expected tokens and cost of summarising every section of ``tree`` with ``model``."""
    prompts = [section_messages(tree, node, max_chars=max_chars) for node in tree.walk()]
    return _estimate(prompts, model, pricing)


def _estimate(prompts: list[list[Message]], model: str, pricing: Any) -> SummaryEstimate:
    """The estimate for these rendered section prompts, one per section (see :func:`estimate_summaries`)."""
    from pageindex.llm.pricing import load_pricing
    from pageindex.llm.spec import parse_spec

    prompt = sum(math.ceil(sum(len(m.content or "") for m in messages) / 4) for messages in prompts)
    completion = EXPECTED_COMPLETION_TOKENS * len(prompts)
    pricing = pricing or load_pricing()
    try:
        bare = parse_spec(model, api_key="estimate").model
    except Exception:
        bare = model.partition("/")[2] or model
    price = pricing.price(model, bare)
    cost = None if price is None else price.cost(prompt, completion)
    return SummaryEstimate(
        model=model, sections=len(prompts), prompt_tokens=prompt, completion_tokens=completion, cost_usd=cost
    )


def load_summaries(tree: Tree, model: str, cache_dir: str | Path | None = None) -> SummaryFile | None:
    path = summary_path(tree, model, cache_dir)
    try:
        return SummaryFile.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


async def summarize_tree(
    tree: Tree,
    llm: Any,
    *,
    cache_dir: str | Path | None = None,
    max_chars: int = MAX_SECTION_CHARS,
    force: bool = False,
) -> SummaryFile:
    """Summaries of every section of ``tree`` by ``llm`` (an LLM client), cached in the sidecar.
    A cached sidecar for the same tree, model and prompt version is returned without any call."""
    cached = None if force else load_summaries(tree, llm.spec, cache_dir)
    if cached is not None:
        return cached
    nodes = list(tree.walk())
    prompts = {node.node_id: section_messages(tree, node, max_chars=max_chars) for node in nodes}
    estimate = _estimate(list(prompts.values()), llm.spec, getattr(llm, "pricing", None))
    usage = SummaryUsage()

    async def one(node: Node) -> tuple[str, str, str | None]:
        resp = await llm.chat(
            prompts[node.node_id],
            tag={"task": "summary", "node_id": node.node_id, "prompt_version": PROMPT_VERSION},
        )
        usage.prompt_tokens += resp.usage.prompt_tokens
        usage.completion_tokens += resp.usage.completion_tokens
        usage.calls += resp.usage.calls
        if usage.cost_usd is not None:
            usage.cost_usd = None if resp.usage.cost_usd is None else usage.cost_usd + resp.usage.cost_usd
        text = " ".join((resp.content or "").split())[:MAX_SUMMARY_CHARS]
        return node.node_id, text, unusable_reason(resp.content, resp.finish_reason)

    done = await asyncio.gather(*(one(n) for n in nodes))
    left_out = {node_id: why for node_id, _text, why in done if why}
    summaries = {node_id: text for node_id, text, why in done if not why}
    if left_out and not summaries:
        counts = Counter(why.split(" (")[0] for why in left_out.values())
        said = ", ".join(f"{n} {why}" for why, n in counts.most_common())
        raise UnusableSummaries(f"no reply of {len(nodes)} was a usable summary ({said}); nothing written")
    out = SummaryFile(
        tree_sha256=tree.sha256,
        builder_version=tree.builder_version,
        doc_id=tree.doc_id,
        model=llm.spec,
        summaries=summaries,
        left_out=left_out,
        usage=usage,
        estimate=estimate,
    )
    write_atomic(summary_path(tree, llm.spec, cache_dir), out.model_dump_json(indent=1))
    return out


def unusable_reason(content: str | None, finish_reason: str | None) -> str | None:
    """Why a reply is no summary, or None: cut at its ``max_tokens`` (a one-sentence summary that ran
    that long rambled), empty (it was neither stored nor counted: every section's empty reply wrote a
    sidecar of no summaries, exit 0), or chat-template markers written out (``<|im_end|>``: the server's
    template did not end the model's turn). gemma-3-270m on llama.cpp wrote ``<document node_id=...>
    <document ...`` up to the cap for every section, and those were stored as the summaries ``ask`` then
    showed."""
    if finish_reason == "length":
        return "cut at max_tokens"
    if not (content or "").strip():  # a reasoning model's whole reply in its reasoning, or nothing at all
        return "empty"
    if markers := template_markers(content):
        return f"chat-template markers ({', '.join(markers)})"
    return None


def apply_summaries(tree: Tree, summaries: SummaryFile | dict[str, str]) -> Tree:
    """A copy of ``tree`` with ``Node.summary`` set from ``summaries`` (node_id -> text)."""
    mapping = summaries.summaries if isinstance(summaries, SummaryFile) else summaries
    out = tree.model_copy(deep=True)
    for node in out.walk():
        if node.node_id in mapping:
            node.summary = mapping[node.node_id]
    return out


def apply_cached_summaries(tree: Tree, cache_dir: str | Path | None = None) -> Tree:
    """``tree`` with the newest cached summaries of it (any model), or unchanged when there are none."""
    directory = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    pattern = f"{tree.sha256}-v{tree.builder_version}.summaries.*.{PROMPT_VERSION}.json"
    try:
        candidates = sorted(directory.glob(pattern), key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return tree
    for path in candidates:
        try:
            return apply_summaries(tree, SummaryFile.model_validate_json(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue
    return tree
