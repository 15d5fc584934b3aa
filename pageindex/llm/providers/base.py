"""The :class:`Provider` protocol every model provider implements, and the provider registry.

A provider is made for one parsed :class:`~pageindex.llm.spec.ModelSpec` and answers what the
client needs to know about reaching it:

- :meth:`Provider.resolve` (class method) -- the spec text to a :class:`ModelSpec` (base URL, key);
- :meth:`Provider.transport` -- what completes a chat request under the OpenAI SDK: ``None`` for
  the network, else an ``httpx2`` transport (the scripted model, a plug-in's :meth:`complete`);
- :meth:`Provider.preflight` -- list the models (is the endpoint a usable OpenAI-compatible API?);
- ``remote`` -- whether there is a server to ask for its tokenizer and context window;
  ``replay_only`` -- whether it never reaches a model at all.

:class:`CompletionProvider` is the short way for a plug-in: implement ``async complete(request)``
(an OpenAI chat-completions request body in, a chat-completion JSON body out).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import httpx2
from pydantic import SecretStr

from pageindex import registry
from pageindex.llm.preflight import PreflightResult
from pageindex.llm.spec import PLACEHOLDER_KEY, ModelSpec
from pageindex.llm.tokens import ServerWindow
from pageindex.wording import error_text

KIND = "provider"
registry.declare(KIND, "pageindex.llm.providers")


class PassThrough:
    """Mixin for an exception a transport raises inside the SDK so that the client raises its
    ``error`` unchanged (the scripted model's scripted exceptions)."""

    error: BaseException


class ProviderFailure(Exception):
    """An in-process provider's ``complete`` raised (a plug-in's bug, or its own call failing). Raised
    inside the SDK, which retries it like a lost connection; the client's error then names it
    (``provider 'mine' (from my_plugin): complete() raised RuntimeError: ...``), not "Connection error"
    at the provider's placeholder URL."""


class Provider:
    """How one model spec reaches its model (see the module docstring). Subclass, set ``name``,
    override what differs, and register with :func:`register_provider`."""

    name: ClassVar[str] = ""
    remote: ClassVar[bool] = True
    replay_only: ClassVar[bool] = False
    bare: ClassVar[bool] = False  # the spec may be just the name (``scripted``)

    def __init__(
        self, spec: ModelSpec, *, transport: httpx2.AsyncBaseTransport | None = None, **options: Any
    ) -> None:
        self.spec = spec
        self._transport = transport
        self.options = options

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
        """The spec ``text`` (``<name>/<model>``) resolved; raise ``LLMConfigError`` when it cannot be."""
        key = SecretStr(api_key) if api_key else None
        return ModelSpec(spec=text, provider=cls.name, model=model, base_url=base_url, api_key=key)

    # -- reaching the model -----------------------------------------------------------------
    def transport(self) -> httpx2.AsyncBaseTransport | None:
        """What completes requests under the SDK (None: the network)."""
        return self._transport

    @property
    def base_url(self) -> str | None:
        return self.spec.base_url

    @property
    def display_url(self) -> str | None:
        return self.spec.display_url

    def sdk_key(self) -> str:
        return self.spec.api_key.get_secret_value() if self.spec.api_key else PLACEHOLDER_KEY

    def endpoint(self) -> str:
        """Requests to one endpoint share a concurrency limit (per event loop)."""
        return str(self.spec.base_url)

    def where(self) -> str:
        """The spec and URL for messages (credentials masked)."""
        return self.spec.where()

    def request_headers(self, response_model: str) -> dict[str, str]:
        """Extra HTTP headers of a structured request for ``response_model`` (none by default)."""
        return {}

    async def context_window(self, *, timeout: float) -> ServerWindow | None:
        """The context window the server reports and where (None: it reports none, or there is no
        server)."""
        return None

    async def preflight(self, *, timeout: float) -> PreflightResult:
        """List the models: raise ``LLMConfigError`` unless the endpoint is usable."""
        if not self.remote:
            return PreflightResult(url=self.display_url or "", via="none")
        from pageindex.llm.preflight import preflight

        return await preflight(self.spec, timeout=timeout)


class CompletionProvider(Provider):
    """A provider that answers in-process: implement :meth:`complete`."""

    remote: ClassVar[bool] = False

    @classmethod
    def resolve(cls, text, model, *, base_url=None, api_key=None, env=None) -> ModelSpec:  # type: ignore[override]
        url = base_url or f"http://{cls.name}.invalid/v1"
        return ModelSpec(spec=text, provider=cls.name, model=model, base_url=url)

    async def complete(self, request: dict[str, Any]) -> dict[str, Any]:
        """An OpenAI chat-completions request body -> a chat-completion response body."""
        raise NotImplementedError

    def transport(self) -> httpx2.AsyncBaseTransport | None:
        return self._transport or _CompletionTransport(self.complete, self.spec.model, self)


class _CompletionTransport(httpx2.AsyncBaseTransport):
    def __init__(self, complete: Callable[[dict[str, Any]], Any], model: str, owner: Any = None) -> None:
        self.complete = complete
        self.model = model
        self.owner = owner  # the provider, for naming it when complete() raises

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.method == "GET" and request.url.path.endswith("/models"):
            listing = {"object": "list", "data": [{"id": self.model}]}
            return httpx2.Response(200, json=listing, request=request)
        body = json.loads(await request.aread() or b"{}")
        try:
            reply = await self.complete(body)
        except Exception as exc:
            kind = type(self.owner)
            raise ProviderFailure(
                f"provider {getattr(kind, 'name', '?')!r} (from {kind.__module__}): complete() raised "
                f"{error_text(exc)}"
            ) from exc
        return httpx2.Response(200, json=reply, request=request)


def register_provider(name: str) -> Callable[[type[Provider]], type[Provider]]:
    """Class decorator: the provider of specs ``<name>/<model>`` (and the bare ``<name>``)."""

    def decorate(cls: type[Provider]) -> type[Provider]:
        if not cls.__dict__.get("name"):
            cls.name = name
        registry.register(KIND, name, cls)
        return cls

    return decorate


def provider_class(name: str) -> type[Provider] | None:
    return registry.lookup(KIND, name)


def provider_names() -> list[str]:
    return registry.names(KIND)


def environ(env: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if env is None else env
