"""The local-server profile and which settings win (issue 13)."""

from __future__ import annotations

from pageindex.llm.profile import is_loopback, profile_note, resolve_settings

LOCAL = "http://127.0.0.1:8080/v1"


def test_loopback_urls():
    assert is_loopback(LOCAL) and is_loopback("http://localhost:11434/v1") and is_loopback("http://[::1]:8/v1")
    assert not is_loopback("https://api.openai.com/v1") and not is_loopback("http://10.0.0.5/v1")
    assert not is_loopback(None)


def test_profile_fills_what_the_user_did_not_give():
    settings, sources = resolve_settings(LOCAL, {"timeout_s": None, "max_retries": None, "concurrency": None})
    assert (settings["concurrency"], settings["timeout_s"], settings["retry_timeouts"]) == (1, 600.0, False)
    assert settings["max_retries"] == 3 and sources["max_retries"] == "default"
    assert sources["timeout_s"] == "local-server profile"
    note = profile_note(LOCAL, sources, settings)
    assert note is not None and "timeout 600s" in note and "no retry after a client timeout" in note


def test_flags_then_resumed_run_then_profile_then_defaults():
    settings, sources = resolve_settings(
        LOCAL, {"timeout_s": 30.0, "max_retries": 1, "concurrency": None}, stored={"concurrency": 2}
    )
    assert (settings["timeout_s"], sources["timeout_s"]) == (30.0, "flag")
    assert (settings["concurrency"], sources["concurrency"]) == (2, "resumed run")
    assert settings["retry_timeouts"] is True  # --max-retries given: timeouts are retried
    remote, remote_sources = resolve_settings("https://api.openai.com/v1", {"timeout_s": None})
    assert remote["timeout_s"] == 60.0 and remote["concurrency"] == 4
    assert profile_note("https://api.openai.com/v1", remote_sources, remote) is None
