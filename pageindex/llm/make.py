"""``make_client``: a model spec string -> its provider (:mod:`pageindex.llm.providers`) -> an
:class:`~pageindex.llm.client.LLMClient`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pageindex.llm.budget import Budget
from pageindex.llm.cache import CacheMode, LLMCache
from pageindex.llm.client import LLMClient
from pageindex.llm.ledger import UsageLedger
from pageindex.llm.pricing import Pricing
from pageindex.llm.providers import provider_class
from pageindex.llm.spec import parse_spec
from pageindex.llm.types import Role

if TYPE_CHECKING:
    import httpx2

    from pageindex.llm.scripted import ScriptedModel


def make_client(
    spec: str,
    *,
    role: Role = "retriever",
    base_url: str | None = None,
    api_key: str | None = None,
    cache: LLMCache | CacheMode | None = None,
    ledger: UsageLedger | None = None,
    budget: Budget | None = None,
    scripted: ScriptedModel | None = None,
    timeout: float = 60.0,
    max_retries: int = 3,
    concurrency: int = 8,
    json_mode: bool = False,
    pricing: Pricing | None = None,
    tag: dict[str, Any] | None = None,
    transport: httpx2.AsyncBaseTransport | None = None,
    max_tokens: int | None = None,
    context_window: int | None = None,
    retry_timeouts: bool = True,
    context_window_source: str | None = None,
) -> LLMClient:
    """Build a client from a spec string; raises :class:`LLMConfigError` on a bad spec or missing key.

    ``cache`` is an :class:`LLMCache`, a mode string (``"rw"``, ``"replay"``, ``"off"``; default path)
    or None (no cache). ``replay/<model>`` without a cache uses the default cache file read-only.
    ``scripted`` answers every request from a :class:`ScriptedModel` (required for ``scripted``;
    with another spec, e.g. ``openai/gpt-4o-mini``, the scripted model stands in for that model so
    pricing applies). ``transport`` replaces the HTTP transport under the SDK (fault injection,
    benchmarks); retries, redaction and everything above it stay the same. A ``role="judge"``
    client of an ``openai/`` spec given no ``api_key`` sends ``$PAGEINDEX_JUDGE_API_KEY`` when it is
    set (never ``$OPENAI_API_KEY`` then).
    """
    if scripted is not None:
        from pageindex.llm.providers.scripted import Scripted, scripted_spec

        parsed = scripted_spec(spec, base_url=base_url, api_key=api_key)
        provider: Any = Scripted(parsed, scripted=scripted, transport=transport)
    else:
        parsed = parse_spec(spec, base_url=base_url, api_key=api_key, role=role)
        cls = provider_class(parsed.provider)
        assert cls is not None  # parse_spec found it
        provider = cls(parsed, transport=transport)
    if isinstance(cache, str):
        cache = None if cache == "off" else LLMCache(mode=cache)
    if provider.replay_only and cache is None:
        cache = LLMCache(mode="replay")
    return LLMClient(
        parsed,
        role=role,
        cache=cache,
        ledger=ledger,
        budget=budget,
        provider=provider,
        timeout=timeout,
        max_retries=max_retries,
        concurrency=concurrency,
        json_mode=json_mode,
        pricing=pricing,
        tag=tag,
        max_tokens=max_tokens,
        context_window=context_window,
        retry_timeouts=retry_timeouts,
        context_window_source=context_window_source,
    )
