"""Settings for single-slot local servers (llama.cpp, llama-cpp-python, Ollama, LM Studio on this
machine), applied to a loopback base URL for every setting the user did not give.

A local server usually computes one request at a time. The cloud defaults fight it: a 60 s
timeout abandons requests the server keeps computing, retries queue behind them, and several
requests in flight only wait for each other. The profile: one request in flight, a 600 s
timeout, and no retry after a client timeout (other failures are still retried).

Which settings win: the user's flags, then the stored settings of a resumed run, then this
profile, then the defaults. :func:`resolve_settings` applies that order and says where each
setting came from, for the run's header.
"""

from __future__ import annotations

import ipaddress
from typing import Any

import httpx

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
    defaults: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], dict[str, str]]:
    """The settings to use and where each came from (``flag``, ``resumed run``,
    ``local-server profile``, ``default``). ``given`` holds the user's flags (None = not given)."""
    defaults = {**DEFAULTS, **(defaults or {})}
    profile = LOCAL_PROFILE if is_loopback(base_url) else {}
    given = dict(given)
    if given.get("max_retries") is not None and given.get("retry_timeouts") is None:
        given["retry_timeouts"] = True  # --max-retries given: timeouts are retried too
    settings: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for name in sorted(set(defaults) | set(profile) | set(given)):
        if given.get(name) is not None:
            settings[name], sources[name] = given[name], "flag"
        elif stored is not None and name in stored:
            settings[name], sources[name] = stored[name], "resumed run"
        elif name in profile:
            settings[name], sources[name] = profile[name], "local-server profile"
        else:
            settings[name], sources[name] = defaults.get(name), "default"
    return settings, sources


def profile_note(base_url: str | None, sources: dict[str, str], settings: dict[str, Any]) -> str | None:
    """One header line naming the profile's settings in use, or None when it applies to none."""
    used = [name for name, source in sources.items() if source == "local-server profile"]
    if not used:
        return None
    shown = {
        "concurrency": f"concurrency {settings.get('concurrency')}",
        "llm_concurrency": f"{settings.get('llm_concurrency')} request in flight",
        "timeout_s": f"timeout {settings.get('timeout_s'):g}s",
        "retry_timeouts": "no retry after a client timeout",
    }
    parts = [shown.get(name, f"{name}={settings.get(name)}") for name in used]
    return (
        f"local-server profile for {base_url} (loopback): {', '.join(parts)} "
        "(flags override it: --concurrency, --timeout, --max-retries)"
    )
