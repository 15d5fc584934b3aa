"""The scripted provider: ``scripted`` (or ``scripted/<name>``), and any spec given a
:class:`~pageindex.llm.scripted.ScriptedModel` (it then stands in for that model, so pricing
applies). Requests are completed in-process by the scripted model's HTTP transport, so they go
through the same SDK, retries, cache and budget as real ones."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pageindex.llm.providers.base import Provider, register_provider
from pageindex.llm.spec import ModelSpec
from pageindex.llm.types import LLMConfigError

SCRIPTED_BASE_URL = "http://scripted.invalid/v1"


@register_provider("scripted")
class Scripted(Provider):
    """The scripted test model (``ScriptedModel``: a queue of replies or a policy)."""

    remote: ClassVar[bool] = False
    bare: ClassVar[bool] = True

    def __init__(self, spec: ModelSpec, *, scripted: Any = None, **options: Any) -> None:
        if scripted is None:
            raise LLMConfigError("model spec 'scripted' needs scripted=ScriptedModel(...)")
        super().__init__(spec, **options)
        self.scripted = scripted

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
        return ModelSpec(spec=text, provider=cls.name, model=model or "scripted")

    def transport(self):  # type: ignore[no-untyped-def]
        from pageindex.llm.scripted import ScriptedTransport

        return ScriptedTransport(self.scripted)

    @property
    def base_url(self) -> str | None:
        return SCRIPTED_BASE_URL

    @property
    def display_url(self) -> str | None:
        return SCRIPTED_BASE_URL

    def sdk_key(self) -> str:
        return self.spec.api_key.get_secret_value() if self.spec.api_key else "scripted"

    def endpoint(self) -> str:
        return f"scripted:{id(self.scripted)}"

    def where(self) -> str:
        return f"{self.spec.spec} (scripted)"

    def request_headers(self, response_model: str) -> dict[str, str]:
        from pageindex.llm.scripted import RESPONSE_MODEL_HEADER

        return {RESPONSE_MODEL_HEADER: response_model}


def scripted_spec(spec: str, *, base_url: str | None = None, api_key: str | None = None) -> ModelSpec:
    """The spec a scripted model answers for: ``scripted``, or another spec it stands in for."""
    from pageindex.llm.spec import parse_spec

    return parse_spec(spec, base_url=base_url or SCRIPTED_BASE_URL, api_key=api_key or "scripted")

