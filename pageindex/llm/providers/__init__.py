"""Model providers: how a model spec (``openai/<model>``, ``ollama/<model>``, ``replay/<model>``,
``scripted``, or a plug-in's ``<name>/<model>``) reaches a model.

A provider is one module holding a :class:`~pageindex.llm.providers.base.Provider` subclass
registered by name (``@register_provider("name")``, kind ``"provider"`` of :mod:`pageindex.registry`).
It resolves the spec (base URL, key), completes chat requests (the HTTP transport under the
OpenAI SDK: the network, the scripted model, or a plug-in's ``complete``) and lists models for
the preflight. :class:`~pageindex.llm.client.LLMClient` above it keeps what every provider
shares: cache and single-flight, budget, usage, limits and the error classes.

- ``openai_http.py`` -- any OpenAI-compatible server (``openai/``, ``ollama/``)
- ``scripted.py`` -- the scripted test model (``scripted``; :mod:`pageindex.llm.scripted`)
- ``replay.py`` -- answers only from the cache (``replay/``)
"""

from pageindex.llm.providers.base import (
    CompletionProvider,
    PassThrough,
    Provider,
    provider_class,
    provider_names,
    register_provider,
)

__all__ = [
    "CompletionProvider",
    "PassThrough",
    "Provider",
    "provider_class",
    "provider_names",
    "register_provider",
]
