"""The OpenAI-compatible HTTP provider: ``openai/<model>`` (OpenAI, vLLM, llama.cpp server, LM
Studio, a LiteLLM proxy: any server speaking the chat-completions API) and ``ollama/<model>``
(the same wire format at Ollama's default address).

``openai/``: the base URL comes from ``--base-url``, else ``OPENAI_BASE_URL``, else
``https://api.openai.com/v1``; the key from ``api_key``, else ``OPENAI_API_KEY``, required only
for the official OpenAI endpoint (other servers get a placeholder; one that wants a key answers
401, reported as ``LLMConfigError``); a judge's is given ``$PAGEINDEX_JUDGE_API_KEY`` instead when
that is set (:func:`pageindex.llm.spec.parse_spec` with ``role="judge"``). ``ollama/``: ``OLLAMA_BASE_URL`` or
``http://localhost:11434/v1``. Requests go over the network; the preflight lists the models.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlsplit

from pydantic import SecretStr

from pageindex.llm.preflight import response_json, same_model
from pageindex.llm.providers.base import Provider, environ, register_provider
from pageindex.llm.redact import redact_url
from pageindex.llm.spec import OLLAMA_BASE_URL, OPENAI_BASE_URL, PLACEHOLDER_KEY, ModelSpec, endpoint
from pageindex.llm.tokens import OLLAMA_FALLBACK_WINDOW, ServerWindow
from pageindex.llm.types import LLMConfigError

LMSTUDIO_LOADED = "LM Studio's loaded model"


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

    async def context_window(self, *, timeout: float) -> ServerWindow | None:
        """What ``/v1/models`` reports (vLLM ``max_model_len`` and similar), else, for an Ollama
        server (``openai/`` at Ollama's address as well as ``ollama/``), the window Ollama runs the
        model with (:meth:`ollama_window`), else, for LM Studio, the window it loaded the model with
        (:meth:`lmstudio_window`)."""
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
                        return ServerWindow(tokens=found, source="server metadata")
                version = await http.get(endpoint(base, "/api/version", root=True), headers=headers)
                said = _json_object(version) if version.status_code == 200 else None
                if said is not None and isinstance(said.get("version"), str):
                    return await self.ollama_window(http, base, headers)
                return await self.lmstudio_window(http, base, headers)
        except (httpx.HTTPError, ValueError, AttributeError):
            return None

    async def ollama_window(self, http: Any, base: str, headers: dict[str, str]) -> ServerWindow:
        """The context window an Ollama server runs the model with. Not ``/api/show``'s
        ``<arch>.context_length``: that is the window the model was trained with, and Ollama runs a
        model with a smaller one (its default follows the GPU's memory, ``OLLAMA_CONTEXT_LENGTH``, or
        a Modelfile's ``num_ctx``), cutting a longer prompt without an error. So: load the model as a
        chat request loads it (``POST /api/generate`` without a prompt, which reloads a model another
        client loaded with other options) and read the ``context_length`` ``/api/ps`` lists for it
        (``ollama ps``'s CONTEXT); a server too old to list it: the model's ``num_ctx`` parameter in
        ``/api/show``, else :data:`~pageindex.llm.tokens.OLLAMA_FALLBACK_WINDOW`."""
        import httpx

        model = self.spec.model
        try:
            await http.post(endpoint(base, "/api/generate", root=True), json={"model": model},
                            headers=headers)  # fmt: skip
        except httpx.TimeoutException:  # still loading: /api/ps may list it once loaded, else the fallback
            pass
        running = await http.get(endpoint(base, "/api/ps", root=True), headers=headers)
        listed = (_json_object(running) or {}).get("models") if running.status_code == 200 else None
        for entry in listed if isinstance(listed, list) else []:
            if not isinstance(entry, dict):
                continue
            names = [entry.get("name"), entry.get("model")]
            value = entry.get("context_length")
            if any(isinstance(n, str) and same_model(n, model) for n in names) and _positive(value):
                return ServerWindow(tokens=int(value), source="Ollama's loaded model (/api/ps)")
        show = await http.post(endpoint(base, "/api/show", root=True), json={"model": model}, headers=headers)
        parameters = (_json_object(show) or {}).get("parameters") if show.status_code == 200 else None
        found = re.search(r"^\s*num_ctx\s+(\d+)\s*$", parameters or "", re.MULTILINE) \
            if isinstance(parameters, str) else None  # fmt: skip
        if found and int(found.group(1)) > 0:
            return ServerWindow(tokens=int(found.group(1)), source="the model's num_ctx (Ollama /api/show)")
        said = "Ollama's smallest default: the server does not list its window"
        return ServerWindow(tokens=OLLAMA_FALLBACK_WINDOW, source=said)

    async def lmstudio_window(self, http: Any, base: str, headers: dict[str, str]) -> ServerWindow | None:
        """The context window LM Studio has the model loaded with: its ``/v1/models`` lists none, and
        its ``max_context_length`` is the window the model was trained with (131,072 for Llama 3.1),
        where LM Studio loads a model with the app's default (a few thousand tokens) and cuts or
        refuses a longer prompt. Read from its own API: ``/api/v1/models`` (LM Studio 0.4+: the
        ``context_length`` of the model's loaded instance), else ``/api/v0/models/{model}`` (0.3.6+:
        ``loaded_context_length`` once ``state`` is ``loaded``). A model LM Studio lists but has not
        loaded is loaded as a run would load it, by a chat request (one token), and read again.
        None: not LM Studio, or no window found (the known table then)."""
        known, window = await self._lmstudio_loaded(http, base, headers)
        if known and window is None:  # just-in-time loading: the first request loads the model
            import httpx

            hello = [{"role": "user", "content": "Hi"}]
            body = {"model": self.spec.model, "messages": hello, "max_tokens": 1}
            try:
                await http.post(endpoint(base, "/chat/completions"), json=body, headers=headers)
            except httpx.TimeoutException:  # still loading: read what is there
                pass
            _, window = await self._lmstudio_loaded(http, base, headers)
        return window

    async def _lmstudio_loaded(
        self, http: Any, base: str, headers: dict[str, str]
    ) -> tuple[bool, ServerWindow | None]:
        """Whether LM Studio's API knows the model, and the window of its loaded instance (None: not
        loaded)."""
        model = self.spec.model
        listing = await http.get(endpoint(base, "/api/v1/models", root=True), headers=headers)
        models = (_json_object(listing) or {}).get("models") if listing.status_code == 200 else None
        for entry in models if isinstance(models, list) else []:
            if not isinstance(entry, dict) or not isinstance(entry.get("loaded_instances"), list):
                continue
            instances = [i for i in entry["loaded_instances"] if isinstance(i, dict)]
            names = [entry.get("key"), *(i.get("id") for i in instances)]
            if not any(isinstance(n, str) and same_model(n, model) for n in names):
                continue
            for instance in instances:
                value = (instance.get("config") or {}).get("context_length")
                if _positive(value):
                    return True, ServerWindow(tokens=int(value), source=f"{LMSTUDIO_LOADED} (/api/v1/models)")
            return True, None
        if isinstance(models, list):
            return False, None
        path = f"/api/v0/models/{quote(model, safe='/')}"
        found = await http.get(endpoint(base, path, root=True), headers=headers)
        entry = _json_object(found) if found.status_code == 200 else None
        if entry is None or "state" not in entry or "max_context_length" not in entry:
            return False, None
        value = entry.get("loaded_context_length")
        if entry.get("state") == "loaded" and _positive(value):
            return True, ServerWindow(tokens=int(value), source=f"{LMSTUDIO_LOADED} (/api/v0/models)")
        return True, None


def _json_object(response: Any) -> dict[str, Any] | None:
    value = response_json(response)
    return value if isinstance(value, dict) else None


def _positive(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


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


def _is_official_openai(url: str) -> bool:
    """Whether ``url`` is OpenAI's own API (a URL too broken to parse is not: parse_spec names it)."""
    try:
        host = (urlsplit(url).hostname or "").lower()
    except ValueError:  # "Invalid IPv6 URL"
        return False
    return host == "api.openai.com" or host.endswith(".openai.com")
