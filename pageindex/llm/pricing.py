"""Cost of a call from a pricing table: shipped ``pricing.json`` plus an optional user file.

Prices are USD per 1M tokens: ``input``, ``cached_input`` (defaults to ``input`` when a model
has no cache discount) and ``output``. Cost of a call =
``(prompt - cached) * input + cached * cached_input + completion * output`` / 1e6.

A model is looked up by its full spec first (``ollama/llama3.1``), then by bare name
(``gpt-4o-mini``), then with a dated snapshot suffix removed (``gpt-4o-mini-2024-07-18``).
A model in neither table costs ``None`` ("unknown"), never 0 -- local Ollama/vLLM models are
unknown unless the user's file prices them (``{"models": {"ollama/llama3.1": {"input": 0, "output": 0}}}``).
The user file comes from the ``path`` argument or ``PAGEINDEX_PRICING``; its entries win.
"""

from __future__ import annotations

import json
import os
import re
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pageindex.llm.types import LLMConfigError, Usage
from pageindex.wording import first_error

_SNAPSHOT = re.compile(r"-\d{4}-\d{2}-\d{2}$")


class ModelPrice(BaseModel):
    # a price is a finite number >= 0: a negative or NaN one made every cost of the model wrong; an
    # unknown key is refused (a misspelt "cahced_input" left cached tokens at the input price, unsaid)
    model_config = ConfigDict(extra="forbid")

    input: float = Field(ge=0, allow_inf_nan=False)
    output: float = Field(ge=0, allow_inf_nan=False)
    cached_input: float | None = Field(default=None, ge=0, allow_inf_nan=False)

    def cost(self, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0) -> float:
        cached = min(cached_tokens, prompt_tokens)
        cached_price = self.input if self.cached_input is None else self.cached_input
        return (
            (prompt_tokens - cached) * self.input + cached * cached_price + completion_tokens * self.output
        ) / 1_000_000


UNIT = "USD per 1M tokens"


class PricingFile(BaseModel):
    """The shipped table's format: ``models``, and what it says about itself (``unit``, which must be
    :data:`UNIT` when given, ``as_of``, ``source``); any other key is refused."""

    model_config = ConfigDict(extra="forbid")

    models: dict[str, ModelPrice]
    unit: Literal["USD per 1M tokens"] = UNIT  # a file priced per 1K tokens would cost 1000x too little
    as_of: str | None = None
    source: str | None = None


class Pricing(BaseModel):
    models: dict[str, ModelPrice]
    sources: list[str] = []

    def price(self, spec: str, model: str | None = None) -> ModelPrice | None:
        model = model or spec.partition("/")[2] or spec
        for name in (spec, model, _SNAPSHOT.sub("", model)):
            if name in self.models:
                return self.models[name]
        return None

    def cost(self, spec: str, usage: Usage, model: str | None = None) -> float | None:
        price = self.price(spec, model)
        if price is None:
            return None
        return price.cost(usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens)


def _read(path: Path) -> PricingFile:
    """The user's pricing file, or one :class:`LLMConfigError` line naming it (a folder, an unreadable
    file or one that is not UTF-8 was an internal error)."""
    try:
        return PricingFile.model_validate(json.loads(path.read_text(encoding="utf-8-sig")))  # a mark allowed
    except FileNotFoundError:
        raise LLMConfigError(f"pricing file {path} does not exist") from None
    except IsADirectoryError:
        raise LLMConfigError(f"pricing file {path} is a directory; give a JSON file") from None
    except OSError as exc:
        raise LLMConfigError(f"pricing file {path} cannot be read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise LLMConfigError(f"pricing file {path} is not valid: not UTF-8 (byte {exc.start + 1})") from None
    except json.JSONDecodeError as exc:
        raise LLMConfigError(f"pricing file {path} is not valid: {str(exc).splitlines()[0]}") from None
    except ValidationError as exc:  # the field and what it takes, as the run files' errors say it
        raise LLMConfigError(f"pricing file {path} is not valid: {first_error(exc)}") from None


@lru_cache(maxsize=1)
def _shipped() -> PricingFile:
    text = resources.files("pageindex.llm").joinpath("pricing.json").read_text(encoding="utf-8")
    return PricingFile.model_validate(json.loads(text))


def load_pricing(path: str | Path | None = None) -> Pricing:
    """The shipped table, overridden by ``path`` or ``$PAGEINDEX_PRICING`` when given."""
    models = dict(_shipped().models)
    sources = ["pageindex/llm/pricing.json"]
    override = path or os.environ.get("PAGEINDEX_PRICING")
    if override:
        models.update(_read(Path(override)).models)
        sources.append(str(override))
    return Pricing(models=models, sources=sources)
