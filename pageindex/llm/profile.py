"""Settings for single-slot local servers (llama.cpp, llama-cpp-python, Ollama, LM Studio on this
machine), applied to a loopback base URL for every setting the user did not give.

A local server usually computes one request at a time. The cloud defaults fight it: a 60 s
timeout abandons requests the server keeps computing, retries queue behind them, and several
requests in flight only wait for each other. The profile: one request in flight, a 600 s
timeout, and no retry after a client timeout (other failures are still retried).

Which settings win: the user's flags, then the stored settings of a resumed run, then the cached
``pageindex doctor`` findings for the endpoint and model, then this profile, then the defaults.
:func:`resolve_settings` applies that order and says where each setting came from, for the run's
header; :func:`settle` is the one entry for a model spec as typed (``bench run``, ``ask``): it
finds the endpoint the spec talks to (``ollama/`` without ``--base-url`` is a local server too)
and the doctor's findings for it.
"""

from __future__ import annotations

import ipaddress
import os
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from pageindex.llm.redact import redact_url

LOCAL_PROFILE: dict[str, Any] = {
    "concurrency": 1,  # samples (bench run) / requests (ask) in flight
    "llm_concurrency": 1,  # HTTP requests in flight to the server
    "timeout_s": 600.0,
    "retry_timeouts": False,
}
DEFAULTS: dict[str, Any] = {
    "concurrency": 4,
    "llm_concurrency": None,  # None: twice the samples in flight
    "timeout_s": 60.0,
    "max_retries": 3,
    "retry_timeouts": True,
}


def is_loopback(base_url: str | None) -> bool:
    """True for ``localhost``, ``127.0.0.0/8`` and ``::1`` base URLs."""
    if not base_url:
        return False
    import httpx  # here, not at the top: every command imports this module, few parse a URL

    try:
        host = httpx.URL(base_url).host
    except Exception:
        return False
    if host in ("localhost", "localhost.localdomain") or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def resolve_settings(
    base_url: str | None,
    given: dict[str, Any],
    *,
    stored: dict[str, Any] | None = None,
    found: dict[str, Any] | None = None,
    defaults: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], dict[str, str]]:
    """The settings to use and where each came from (``flag``, ``resumed run``,
    ``pageindex doctor``, ``local-server profile``, ``default``). ``given`` holds the user's
    flags (None = not given), ``found`` the doctor's findings."""
    defaults = {**DEFAULTS, **(defaults or {})}
    profile = LOCAL_PROFILE if is_loopback(base_url) else {}
    given = dict(given)
    if given.get("max_retries") is not None and given.get("retry_timeouts") is None:
        given["retry_timeouts"] = True  # --max-retries given: timeouts are retried too
    settings: dict[str, Any] = {}
    sources: dict[str, str] = {}
    found = found or {}
    for name in sorted(set(defaults) | set(profile) | set(given) | set(found)):
        if given.get(name) is not None:
            settings[name], sources[name] = given[name], "flag"
        elif stored is not None and name in stored:
            settings[name], sources[name] = stored[name], "resumed run"
        elif name in found:
            settings[name], sources[name] = found[name], "pageindex doctor"
        elif name in profile:
            settings[name], sources[name] = profile[name], "local-server profile"
        else:
            settings[name], sources[name] = defaults.get(name), "default"
    return settings, sources


class Settled(BaseModel):
    """What :func:`settle` decided: each setting, where it came from, the endpoint, and one note
    per setting the doctor's findings decided (for the header and run.json)."""

    settings: dict[str, Any]
    sources: dict[str, str]
    base_url: str | None
    doctor_notes: list[str] = Field(default_factory=list)

    def note(self) -> str | None:
        """The local-server profile's header line (:func:`profile_note`)."""
        return profile_note(self.base_url, self.sources, self.settings)


def endpoint_url(model: str | None, base_url: str | None) -> str | None:
    """The base URL ``model``'s requests go to: its provider's resolution (``--base-url``, else
    ``$OPENAI_BASE_URL`` or OpenAI for ``openai/``, ``$OLLAMA_BASE_URL`` or this machine's
    Ollama for ``ollama/``); ``base_url`` itself when the spec does not resolve. Resolved without a
    key: where requests go does not depend on one (a judge at OpenAI's endpoint with only
    ``$PAGEINDEX_JUDGE_API_KEY`` set resolved to no URL, since ``$OPENAI_API_KEY`` was missing)."""
    from pageindex.llm.spec import PLACEHOLDER_KEY, parse_spec
    from pageindex.llm.types import LLMError

    if model:
        try:
            return parse_spec(model, base_url=base_url, api_key=PLACEHOLDER_KEY).base_url
        except LLMError:
            pass
    return base_url or os.environ.get("OPENAI_BASE_URL")


def settle(
    model: str | None,
    base_url: str | None,
    given: dict[str, Any],
    *,
    stored: dict[str, Any] | None = None,
    defaults: dict[str, Any] | None = None,
) -> Settled:
    """The client settings for ``model`` at ``base_url`` as the user typed them: ``given`` (the
    flags, None = not given) > ``stored`` (a resumed run's; the doctor is not consulted then) >
    the cached ``pageindex doctor`` findings > the local-server profile when the endpoint is on
    this machine > ``defaults``."""
    from pageindex.llm.doctor import doctor_settings_for

    url = endpoint_url(model, base_url)
    found: dict[str, Any] = {}
    notes: list[str] = []
    if stored is None:
        decided = {name for name, value in given.items() if value is not None}
        found, notes = doctor_settings_for(model, base_url, given=decided)
    settings, sources = resolve_settings(url, given, stored=stored, found=found, defaults=defaults)
    return Settled(settings=settings, sources=sources, base_url=url, doctor_notes=notes)


OVERRIDES = "flags override it: --concurrency, --timeout, --max-retries"
# how a context window the doctor's probe found is named where an error says the window assumed
DOCTOR_WINDOW = "pageindex doctor --probe-context"


class ClientSettings(BaseModel):
    """One model client's settings as :func:`settle_client` decided them for its endpoint: the
    keywords of ``make_client`` that a server decides (a run stores them in run.json for a judge
    model whose endpoint is not the answering model's, so a resume keeps them)."""

    model_config = ConfigDict(extra="forbid")

    timeout_s: float = Field(gt=0, allow_inf_nan=False)
    max_retries: int = Field(ge=0)
    retry_timeouts: bool
    llm_concurrency: int | None = Field(None, ge=1)  # requests in flight; None: the caller's default
    json_mode: bool = False
    context_window: int | None = Field(None, ge=256)  # the doctor's probe found it; None: discovered

    def client_kwargs(self, in_flight: int) -> dict[str, Any]:
        """``make_client``'s keywords for these settings: ``in_flight`` requests at once where none was
        settled; the context window only where one was found (else the client discovers it)."""
        out: dict[str, Any] = {
            "timeout": self.timeout_s, "max_retries": self.max_retries, "retry_timeouts": self.retry_timeouts,
            "concurrency": self.llm_concurrency or in_flight, "json_mode": self.json_mode,
        }  # fmt: skip
        if self.context_window:
            out["context_window"], out["context_window_source"] = self.context_window, DOCTOR_WINDOW
        return out


def settle_client(
    model: str, base_url: str | None, given: dict[str, Any], *, overrides: str = OVERRIDES
) -> tuple[ClientSettings, str | None, list[str]]:
    """:func:`settle` for one client of ``model`` at ``base_url`` (a judge model's): its settings,
    the local-server profile's header line (None: the profile decided nothing; ``overrides`` ends
    it) and the doctor's notes. ``given`` holds the flags (None = not given) of ``timeout_s``,
    ``max_retries`` and ``json_mode``; the samples in flight (``concurrency``) are not a client's:
    what the doctor or the profile say of the server becomes its requests in flight."""
    settled = settle(model, base_url, {"concurrency": None, **given})
    settings, sources = settled.settings, settled.sources
    in_flight = settings["llm_concurrency"]
    if in_flight is None and sources.get("concurrency") == "pageindex doctor":
        in_flight = settings["concurrency"]  # the doctor's "one request at a time"
    shown = {name: source for name, source in sources.items() if name != "concurrency"}
    chosen = ClientSettings(
        timeout_s=settings["timeout_s"], max_retries=settings["max_retries"],
        retry_timeouts=settings["retry_timeouts"], llm_concurrency=in_flight,
        json_mode=bool(settings.get("json_mode")), context_window=settings.get("context_window"),
    )  # fmt: skip
    return chosen, profile_note(settled.base_url, shown, settings, overrides=overrides), settled.doctor_notes


def profile_note(
    base_url: str | None, sources: dict[str, str], settings: dict[str, Any], *, overrides: str = OVERRIDES
) -> str | None:
    """One header line naming the profile's settings in use, or None when it applies to none. The
    URL is shown with its credentials masked (``http://***@127.0.0.1:8080/v1``); ``overrides`` ends
    it in brackets (what a command offers against it)."""
    used = [name for name, source in sources.items() if source == "local-server profile"]
    if not used:
        return None
    shown = {
        "concurrency": f"concurrency {settings.get('concurrency')}",
        "llm_concurrency": f"{settings.get('llm_concurrency')} request in flight",
        "timeout_s": f"timeout {settings.get('timeout_s'):g}s",
        "retry_timeouts": "no retry after a client timeout",
    }
    ordered = [*(name for name in shown if name in used), *(name for name in used if name not in shown)]
    parts = [shown.get(name, f"{name}={settings.get(name)}") for name in ordered]  # one order, always
    return (
        f"local-server profile for {redact_url(base_url)} (loopback): {', '.join(parts)} ({overrides})"
    )
