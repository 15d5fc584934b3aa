"""``pageindex build --summaries --model M``: the part that writes section summaries (kept out of
build.py so that command stays thin)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from rich.console import Console

from pageindex.cli._common import ExitCode, err_console, fail, model_client
from pageindex.tree.model import Tree


def _cost(value: float | None) -> str:
    return "unknown cost (model not in the pricing table)" if value is None else f"${value:.4f}"


def _spent(llm: Any) -> str:
    """What the calls made before a failure cost (every attempt the client made, the failed ones with
    the tokens the server reported): paid for although nothing is written."""
    ledger = getattr(llm, "ledger", None)
    if ledger is None:
        return "nothing written"
    u = ledger.total(cached=False)
    return f"spent {u.prompt_tokens:,}+{u.completion_tokens:,} tokens in {u.calls} calls, {_cost(u.cost_usd)}"


def _client_settings(model: str, base_url: str | None) -> tuple[dict[str, Any], list[str]]:
    """The summaries client's settings as ``ask`` and ``bench run`` settle them
    (``pageindex.llm.profile.settle_client``), and the lines that say where they came from: the cached
    ``pageindex doctor`` findings, else, for a server on this machine, the local-server profile (one
    request in flight, a 600 s timeout, no retry after a client timeout), else the defaults. With the
    cloud defaults (8 sections' requests at once, 60 s, timeouts retried) a one-at-a-time llama.cpp
    server timed out the queued sections, went on computing them, and was sent them again."""
    from pageindex.llm.profile import settle_client

    if model.split("/", 1)[0] == "scripted":
        return {}, []
    found, note, doctor_notes = settle_client(
        model, base_url, {"timeout_s": None, "max_retries": None, "json_mode": False},  # plain replies
        overrides="as in bench run and ask; a pageindex doctor finding wins",
    )  # fmt: skip
    said = [f"note: settings from pageindex doctor: {n}" for n in doctor_notes]
    return found.client_kwargs(8), [*([note] if note else []), *said]


def build_summaries(
    tree: Tree, *, model: str | None, base_url: str | None, cache_dir: Path | None, console: Console,
    scripted_policy: str | None = None,
) -> Tree:
    """Summarise every section of ``tree`` with ``model`` (cost estimate printed first, actual
    usage after); returns the tree with summaries. Cached per tree, model and prompt version."""
    from pageindex.analyst.summaries import (
        UnusableSummaries,
        apply_summaries,
        estimate_summaries,
        load_summaries,
        summarize_tree,
        summary_path,
    )
    from pageindex.llm import LLMError, ScriptedExhausted

    if not model:
        fail("--summaries needs --model (e.g. openai/gpt-4o-mini)")
    settings, notes = _client_settings(model, base_url)
    # scripted, or a real server checked reachable first
    llm = model_client(model, base_url=base_url, scripted_policy=scripted_policy, **settings)
    for note in notes:  # once the endpoint answered, as bench run and ask say them
        err_console.print(f"[dim]{note}[/]", highlight=False)
    path = summary_path(tree, llm.spec, cache_dir)
    cached = load_summaries(tree, llm.spec, cache_dir)
    if cached is None:
        est = estimate_summaries(tree, llm.spec, pricing=llm.pricing)
        console.print(
            f"summaries: {est.sections} sections with {llm.spec}: estimated {est.prompt_tokens:,} prompt + "
            f"{est.completion_tokens:,} completion tokens, {_cost(est.cost_usd)}",
            highlight=False,
        )
    try:
        out = asyncio.run(summarize_tree(tree, llm, cache_dir=cache_dir))
    except (LLMError, ScriptedExhausted, UnusableSummaries) as exc:  # a scripted policy's unusable reply too
        fail(f"model {model}: summaries failed ({exc}); {_spent(llm)}", code=ExitCode.ERRORS)
    if cached is None and out.left_out:
        reasons = sorted({why.split(" (")[0] for why in out.left_out.values()})
        err_console.print(
            f"[yellow]warning:[/] {len(out.left_out)} of {len(out.left_out) + len(out.summaries)} sections "
            "have "
            f"no summary: the model's reply was no summary ({'; '.join(reasons)})",
            highlight=False,
        )
    if cached is not None:
        said = f"summaries: {len(out.summaries)} cached in {path} (no model calls)"
        console.print(said, highlight=False, markup=False)
    else:
        u = out.usage
        console.print(
            f"summaries: {len(out.summaries)} written to {path}; actual {u.prompt_tokens:,}+"
            f"{u.completion_tokens:,} tokens in {u.calls} calls, {_cost(u.cost_usd)}",
            highlight=False,
            markup=False,
        )
    return apply_summaries(tree, out)
