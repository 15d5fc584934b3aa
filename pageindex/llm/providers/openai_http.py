"""The OpenAI-compatible HTTP provider: ``openai/<model>`` (OpenAI, vLLM, llama.cpp server, LM
Studio, a LiteLLM proxy: any server speaking the chat-completions API) and ``ollama/<model>``
(the same wire format at Ollama's default address).

``openai/``: the base URL comes from ``--base-url``, else ``OPENAI_BASE_URL``, else
``https://api.openai.com/v1``; the key from ``api_key``, else ``OPENAI_API_KEY``, required only
for the official OpenAI endpoint (other servers get a placeholder; one that wants a key answers
401, reported as ``LLMConfigError``). ``ollama/``: ``OLLAMA_BASE_URL`` or
``http://localhost:11434/v1``. Requests go over the network; the preflight lists the models.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from pydantic import SecretStr

from pageindex.llm.providers.base import Provider, environ, register_provider
from pageindex.llm.redact import redact_url
from pageindex.llm.spec import OLLAMA_BASE_URL, OPENAI_BASE_URL, PLACEHOLDER_KEY, ModelSpec, endpoint
from pageindex.llm.types import LLMConfigError


@register_provider("openai")
class OpenAICompatible(Provider):
    """Any OpenAI-compatible server over HTTP."""

    @classmethod
    def resolve(
        cls,
        text: str,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> ModelSpec:
        env = environ(env)
        url = (base_url or env.get("OPENAI_BASE_URL") or OPENAI_BASE_URL).rstrip("/")
        key = api_key or env.get("OPENAI_API_KEY")
        if not key:
            if _is_official_openai(url):
                raise LLMConfigError(
                    f"no API key for {text} at {redact_url(url)}: set OPENAI_API_KEY "
                    "or point --base-url / OPENAI_BASE_URL at a server that needs none"
                )
            key = PLACEHOLDER_KEY
        return ModelSpec(spec=text, provider=cls.name, model=model, base_url=url, api_key=SecretStr(key))

    async def context_window(self, *, timeout: float) -> int | None:
        """What ``/v1/models`` reports (vLLM ``max_model_len`` and similar), else what the
        server's own metadata endpoint reports (:meth:`metadata_window`)."""
        import httpx

        from pageindex.llm.tokens import context_window_from_models

        spec = self.spec
        headers = spec.auth_headers()
        base = spec.base_url or ""
        try:
            async with httpx.AsyncClient(timeout=timeout) as http:
                response = await http.get(endpoint(base, "/models"), headers=headers)
                if response.status_code == 200:
                    found = context_window_from_models(response.json(), spec.model)
                    if found:
                        return found
                return await self.metadata_window(http, base, headers)
        except (httpx.HTTPError, ValueError, AttributeError):
            return None

    async def metadata_window(self, http: Any, base: str, headers: dict[str, str]) -> int | None:
        return None


@register_provider("ollama")
class Ollama(OpenAICompatible):
    """A local Ollama server (its OpenAI-compatible API)."""

    @classmethod
    def resolve(
        cls,
        text: str,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> ModelSpec:
        url = (base_url or environ(env).get("OLLAMA_BASE_URL") or OLLAMA_BASE_URL).rstrip("/")
        return ModelSpec(spec=text, provider=cls.name, model=model, base_url=url, api_key=SecretStr("ollama"))

    async def metadata_window(self, http: Any, base: str, headers: dict[str, str]) -> int | None:
        """Ollama's ``/api/show`` (``<arch>.context_length``)."""
        show = await http.post(endpoint(base, "/api/show", root=True), json={"model": self.spec.model},
                               headers=headers)  # fmt: skip
        info = show.json().get("model_info", {}) if show.status_code == 200 else {}
        for name, value in info.items():
            if name.endswith(".context_length") and isinstance(value, int):
                return value
        return None


def _is_official_openai(url: str) -> bool:
    """Whether ``url`` is OpenAI's own API (a URL too broken to parse is not: parse_spec names it)."""
    try:
        host = (urlsplit(url).hostname or "").lower()
    except ValueError:  # "Invalid IPv6 URL"
        return False
    return host == "api.openai.com" or host.endswith(".openai.com")
