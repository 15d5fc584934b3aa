"""What a benchmark run is asked to do: :class:`RunConfig`, stored in ``run.json`` so that
``--resume`` continues exactly the same run."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from pageindex.llm.cache import CacheMode, LLMCache
from pageindex.llm.profile import ClientSettings
from pageindex.wording import counted

DEFAULT_MODEL_WITH_KEY = "openai/gpt-4o-mini"
LLM_RETRIEVERS = ["agent", "planner", "iterative"]


class RunConfig(BaseModel):
    # a key it does not have is refused: RunConfig(retriever=["bm25"]) ran the default retrievers
    model_config = ConfigDict(extra="forbid")

    data_dir: Path | None = None  # None = the generated demo dataset
    retrievers: list[str] = Field(default_factory=list)  # empty = the defaults for the model set-up
    model: str | None = None
    base_url: str | None = None
    judge: str | None = None  # a registered judge (bench.judges.base); None = llm with a model, rules without
    judge_model: str | None = None
    judge_models: list[str] = Field(default_factory=list)  # panel
    judge_base_url: str | None = None
    # each judge model's own client settings where its endpoint is not the answering model's (settled for
    # that endpoint as the answering model's are for its own: flags, the doctor's findings, the
    # local-server profile, the defaults; a panel's models may be at several endpoints): a judge model
    # not named here uses the run's settings below
    judge_clients: dict[str, ClientSettings] = Field(default_factory=dict)
    # the endpoint each model spec resolved without --base-url/--judge-base-url ($OPENAI_BASE_URL,
    # $OLLAMA_BASE_URL, a provider's default), credentials masked: stored so that a resume does not
    # resolve it again from another shell's environment
    resolved_urls: dict[str, str] = Field(default_factory=dict)
    limit: int | None = Field(None, ge=1)
    question_types: list[str] = Field(default_factory=list)
    question_ids: list[str] = Field(default_factory=list)
    concurrency: int = Field(4, ge=1)
    budget_tokens: int | None = Field(None, ge=1)
    budget_usd: float | None = Field(None, gt=0, allow_inf_nan=False)
    repeats: int = Field(1, ge=1)
    out: Path | None = None
    cache: CacheMode = "off"
    cache_path: Path | None = None
    tree_cache_dir: Path | None = None
    retriever_options: dict[str, dict[str, Any]] = Field(default_factory=dict)
    timeout_s: float = Field(60.0, gt=0, allow_inf_nan=False)
    # seconds one sample's retrieval may take, all its calls and tool turns (None: no limit); past it
    # the sample is an error of kind time_limit (run again with --resume RUN --retry-errors)
    time_limit_s: float | None = Field(None, gt=0, allow_inf_nan=False)
    max_retries: int = Field(3, ge=0)
    retry_timeouts: bool = True  # False: a client timeout is final (local-server profile)
    llm_concurrency: int | None = Field(None, ge=1)  # HTTP requests in flight (None: 2 x concurrency)
    context_window: int | None = Field(None, ge=256)  # the model's, in tokens (None: discovered)
    # where context_window came from when not --context-window (the doctor's probe), as errors name it
    context_window_source: str | None = None
    json_mode: bool = False  # structured outputs as JSON content, for servers without tools/JSON schema
    similarity_threshold: float = Field(0.92, gt=0, le=1)
    # A finished run with more than this share of samples in error (or with a failed judge call)
    # exits 4: the infrastructure, not the model, decided too much of it.
    max_error_rate: float = Field(0.2, ge=0, le=1)
    scripted_policy: str | None = None  # module:function or file.py:function answering "scripted" models

    def with_overrides(self, overrides: dict[str, Any]) -> RunConfig:
        """This config with the operational settings a resumed run may change (others are refused)."""
        bad = sorted(set(overrides) - RESUME_OVERRIDES)
        if bad:
            raise ValueError(
                f"cannot change {', '.join(bad)} when resuming (the run keeps its stored settings); "
                f"only {', '.join(sorted(RESUME_OVERRIDES))} may change"
            )
        merged = {**self.model_dump(), **overrides}
        # a flag applies to every endpoint, as on a new run
        flags = ("timeout_s", "max_retries", "retry_timeouts")
        given = {name: overrides[name] for name in flags if name in overrides}
        merged["judge_clients"] = {
            spec: {**own.model_dump(), **given} for spec, own in self.judge_clients.items()
        }
        return self.model_validate(merged)

    @field_validator("judge")
    @classmethod
    def _registered_judge(cls, value: str | None) -> str | None:
        from bench.judges.base import judge_choices, judge_names
        from pageindex.registry import missing_hint

        if value is not None and value not in judge_names():
            raise ValueError(f"must be {judge_choices()}{missing_hint('judge')}")
        return value

    @field_validator("retrievers", "question_types", "question_ids", "judge_models", mode="before")
    @classmethod
    def _split_commas(cls, value: Any) -> Any:
        return comma_list(value) if isinstance(value, str) else value


# The settings that are paths (the dataset, the run folder, the caches): a run stores them absolute.
PATH_SETTINGS = tuple(name for name, f in RunConfig.model_fields.items() if f.annotation == Path | None)


def comma_list(text: str | None) -> list[str]:
    """The items of a comma-separated option value (``"agent, bm25,"`` -> ``["agent", "bm25"]``):
    stripped, empty ones dropped; ``None`` is no items."""
    return [item.strip() for item in (text or "").split(",") if item.strip()]


# The options ``--resume`` may change, in the order the CLI names them, with the RunConfig fields
# each sets: settings that do not change what a sample means. The one list (bench run reads it).
RESUMABLE_OPTIONS: dict[str, tuple[str, ...]] = {
    "--budget": ("budget_tokens", "budget_usd"),
    "--concurrency": ("concurrency",),
    "--timeout": ("timeout_s",),
    "--time-limit": ("time_limit_s",),
    "--max-retries": ("max_retries",),
    "--cache": ("cache",),
    "--cache-path": ("cache_path",),
    "--base-url": ("base_url",),
    "--judge-base-url": ("judge_base_url",),
    "--max-error-rate": ("max_error_rate",),
    "--scripted-policy": ("scripted_policy",),
}
# ... and those set by no option of their own (the local-server profile, the tree cache).
RESUME_OVERRIDES = frozenset(
    {field for fields in RESUMABLE_OPTIONS.values() for field in fields}
    | {"retry_timeouts", "llm_concurrency", "tree_cache_dir"}
)


def resumable_options_text() -> str:
    """``--budget, --concurrency, ... and --scripted-policy``."""
    names = list(RESUMABLE_OPTIONS)
    return f"{', '.join(names[:-1])} and {names[-1]}"


def configured_model(explicit: str | None) -> str | None:
    """The answering model: ``--model``, else ``$PAGEINDEX_MODEL``, else
    ``openai/gpt-4o-mini`` when ``OPENAI_API_KEY`` is set, else none (offline mode)."""
    from pageindex.llm.spec import model_choice

    if chosen := model_choice(explicit)[0]:
        return chosen
    if os.environ.get("OPENAI_API_KEY"):
        return DEFAULT_MODEL_WITH_KEY
    return None


_THOUSANDS = re.compile(r"[0-9]{1,3}(,[0-9]{3})+(\.[0-9]*)?")
_BUDGET = re.compile(r"^\s*(\$)?\s*([0-9][0-9_,.]*)\s*(k|m|tokens?|usd|\$)?\s*$", re.IGNORECASE)


def parse_budget(text: str) -> tuple[int | None, float | None]:
    """``"200000"``/``"200k tokens"`` -> token budget; ``"$2.50"``/``"2.5usd"`` -> dollar budget."""
    refused = f"--budget {text!r}: write a token count like 200000 or 200k, or dollars like $2.50"
    m = _BUDGET.match(text)
    if not m:
        raise ValueError(refused)
    dollar_prefix, number, suffix = m.groups()
    try:
        value = float(number.replace(",", "").replace("_", ""))
    except ValueError:  # "1.5.5k": said as float() says it, no option named (fresh-user trial)
        raise ValueError(refused) from None
    if "," in number and not _THOUSANDS.fullmatch(number):  # `$1,5`, a decimal comma, was read as $15
        raise ValueError(f"{refused} (a comma only groups thousands, as in 1,500; a decimal is written 1.50)")
    suffix = (suffix or "").lower()
    if dollar_prefix or suffix in {"usd", "$"}:
        return None, value
    if suffix == "k":
        value *= 1_000
    elif suffix == "m":
        value *= 1_000_000
    return int(value), None


def parse_option(text: str) -> tuple[str, str, Any]:
    """``agent.max_turns=8`` -> ("agent", "max_turns", 8). Values are JSON when they parse."""
    head, sep, raw = text.partition("=")
    retriever, dot, name = head.partition(".")
    if not sep or not dot or not retriever or not name:
        raise ValueError(f"option {text!r}: write RETRIEVER.NAME=VALUE, e.g. agent.max_turns=8")
    try:
        value: Any = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return retriever.strip(), name.strip(), value


def apply_recording_settings(config: RunConfig, model: str | None) -> tuple[RunConfig, list[str]]:
    """``config`` in JSON mode for a ``replay/MODEL`` run without ``--json-mode`` whose recording made
    every structured call of MODEL in JSON mode, with a note saying so. A replay asks no endpoint, so
    the ``pageindex doctor`` findings that chose JSON mode while recording (llama.cpp's server takes no
    forced tool call) are not there to choose it again, and every call missed (fresh-user trial,
    2026-11-27). A recording with calls in both modes, or none, leaves the config as it is."""
    provider, _, bare = (model or "").partition("/")
    if provider != "replay" or not bare or config.json_mode or config.cache == "rw":
        return config, []
    cache = LLMCache(config.cache_path, mode="replay")
    if cache.problem() is not None:  # said by the run's own cache check
        return config, []
    json_calls = cache.structured_mode_count(bare, "json")
    if not json_calls or cache.structured_mode_count(bare, "tools"):
        return config, []
    said = counted(json_calls, "structured call")
    return config.model_copy(update={"json_mode": True}), [
        f"JSON mode: the recording made its {said} of {bare} in JSON mode (a replay asks no endpoint; "
        "--json-mode says the same)"
    ]


def apply_doctor_findings(
    config: RunConfig, model: str | None, base_url: str | None = None, *, answering: bool = True
) -> tuple[RunConfig, list[str]]:
    """``config`` with the cached ``pageindex doctor`` findings for ``model`` filled in where the
    user set nothing (JSON mode where tool calls fail, concurrency 1 for a one-at-a-time server,
    a longer timeout for a slow one), and a note per setting taken. The user's flags win; a
    resumed run keeps its stored settings (callers apply this to new runs only). No cached
    findings: the config unchanged, and no call is made. ``base_url``: the endpoint ``model`` is
    called at, when it is not ``--base-url`` (a judge model's ``--judge-base-url``). The context window
    the doctor's probe found is taken only for the answering model (``answering``): the run's
    ``context_window`` is that model's."""
    from pageindex.llm.doctor import doctor_settings_for
    from pageindex.llm.profile import DOCTOR_WINDOW

    given = set(config.model_fields_set) | (set() if answering else {"context_window"})
    if not config.json_mode:  # --json-mode absent (False is the flag's default, not a choice)
        given.discard("json_mode")
    if answering and config.context_window is None:  # --context-window absent (the CLI passes its None)
        given.discard("context_window")
    values, notes = doctor_settings_for(model, base_url or config.base_url, given=given)
    if not values:
        return config, []
    if values.get("context_window"):
        values["context_window_source"] = DOCTOR_WINDOW
    return config.model_copy(update=values), notes
