"""Model specs as strings: ``openai/<model>``, ``ollama/<model>``, ``replay/<model>``, ``scripted``.

``openai/<model>`` reaches any OpenAI-compatible server (OpenAI, vLLM, llama.cpp, LM Studio,
a LiteLLM proxy): the base URL comes from the ``base_url`` argument, else ``OPENAI_BASE_URL``,
else ``https://api.openai.com/v1``; the key from ``api_key``, else ``OPENAI_API_KEY``. A key is
required only for the official OpenAI endpoint; other servers get a placeholder key (a server
that does want one answers 401, reported as :class:`LLMConfigError`). ``ollama/<model>`` is
shorthand for ``http://localhost:11434/v1`` (or ``OLLAMA_BASE_URL``). ``replay/<model>`` answers
only from the cache and never touches the network. ``scripted`` is the test model.

Errors name the spec and the base URL, never the key (keys are ``SecretStr`` and redacted) and
never URL credentials: :meth:`ModelSpec.where` shows the base URL with any ``user:key@`` part and
credential-like query values (``?api-key=...``) masked, and :meth:`ModelSpec.redact` masks the key
and those URL credentials wherever a server or library echoes them (see ``redact.py``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Literal

import httpx
from pydantic import BaseModel, SecretStr

from pageindex.llm.redact import redact, redact_url, url_secrets
from pageindex.llm.types import LLMConfigError

Provider = Literal["openai", "ollama", "replay", "scripted"]

OPENAI_BASE_URL = "https://api.openai.com/v1"
OLLAMA_BASE_URL = "http://localhost:11434/v1"
PLACEHOLDER_KEY = "not-needed"
SPEC_HELP = "expected openai/<model>, ollama/<model>, replay/<model> or scripted"


class ModelSpec(BaseModel):
    """A parsed model spec. ``api_key`` is a SecretStr: it never prints."""

    spec: str
    provider: Provider
    model: str
    base_url: str | None = None
    api_key: SecretStr | None = None

    @property
    def display_url(self) -> str | None:
        """The base URL with credentials masked (``https://***@host/v1?api-key=***``)."""
        return redact_url(self.base_url)

    def where(self) -> str:
        """``'openai/gpt-4o-mini at https://api.openai.com/v1'`` for error messages (credentials masked)."""
        return f"{self.spec} at {self.display_url}" if self.base_url else self.spec

    def secrets(self) -> list[str]:
        """Every credential this spec carries: the API key and those inside the base URL."""
        key = [self.api_key.get_secret_value()] if self.api_key else []
        return key + url_secrets(self.base_url)

    def redact(self, text: str) -> str:
        return redact(text, self.secrets())

    def __repr_args__(self):  # type: ignore[no-untyped-def]
        for name, value in super().__repr_args__():
            yield name, (self.display_url if name == "base_url" else value)


def parse_spec(
    spec: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    env: Mapping[str, str] | None = None,
) -> ModelSpec:
    """Parse and resolve a model spec; raises :class:`LLMConfigError` on a bad spec or missing key."""
    env = os.environ if env is None else env
    text = (spec or "").strip()
    if text == "scripted" or text.startswith("scripted/"):
        return ModelSpec(spec=text, provider="scripted", model=text.partition("/")[2] or "scripted")
    provider, sep, model = text.partition("/")
    if not sep or not model:
        hint = f" (did you mean openai/{text}?)" if text and "/" not in text else ""
        raise LLMConfigError(f"bad model spec {spec!r}: {SPEC_HELP}{hint}")
    if provider == "replay":
        return ModelSpec(spec=text, provider="replay", model=model)
    if provider == "ollama":
        url = (base_url or env.get("OLLAMA_BASE_URL") or OLLAMA_BASE_URL).rstrip("/")
        return ModelSpec(spec=text, provider="ollama", model=model, base_url=url, api_key=SecretStr("ollama"))
    if provider == "openai":
        url = (base_url or env.get("OPENAI_BASE_URL") or OPENAI_BASE_URL).rstrip("/")
        key = api_key or env.get("OPENAI_API_KEY")
        if not key:
            if _is_official_openai(url):
                raise LLMConfigError(
                    f"no API key for {text} at {redact_url(url)}: set OPENAI_API_KEY "
                    "or point --base-url / OPENAI_BASE_URL at a server that needs none"
                )
            key = PLACEHOLDER_KEY
        return ModelSpec(spec=text, provider="openai", model=model, base_url=url, api_key=SecretStr(key))
    raise LLMConfigError(f"bad model spec {spec!r}: unknown provider {provider!r}; {SPEC_HELP}")


def _is_official_openai(url: str) -> bool:
    host = httpx.URL(url).host
    return host == "api.openai.com" or host.endswith(".openai.com")


def check_reachable(spec: ModelSpec, *, timeout: float = 5.0) -> None:
    """Synchronous form of :func:`pageindex.llm.preflight.preflight` (the one preflight): raise
    :class:`LLMConfigError` unless ``spec``'s endpoint is an OpenAI-compatible API."""
    import asyncio

    from pageindex.llm.preflight import preflight

    asyncio.run(preflight(spec, timeout=timeout))
