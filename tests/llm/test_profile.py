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


def test_profile_note_masks_credentials_in_the_url(monkeypatch, tmp_path):
    """A base URL with user-info or a credential query value is named masked: ``bench run`` and
    ``ask`` print this line on stderr even without -v (it showed ``bob:pwSECRET`` in clear)."""
    from pageindex.cli.ask import _client_settings
    from pageindex.llm.profile import settle

    url = "http://bob:pwSECRET@127.0.0.1:8080/v1?api-key=QUERYSECRET&api-version=2"
    settings, sources = resolve_settings(url, {"timeout_s": None})
    note = profile_note(url, sources, settings)
    assert note is not None and note.startswith(
        "local-server profile for http://***@127.0.0.1:8080/v1?api-key=***&api-version=2 (loopback): "
    )
    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(tmp_path))  # no doctor findings
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123456789")
    monkeypatch.setenv("OPENAI_BASE_URL", url)  # the environment's URL, as --base-url's
    for base_url in (url, None):
        settled = settle("openai/x", base_url, {"concurrency": None})
        assert settled.base_url == url and "http://***@127.0.0.1:8080/v1" in (settled.note() or "")
        unset = {"timeout": None, "max_retries": None, "concurrency": None, "json_mode": False}
        _, notes = _client_settings("openai/x", base_url, **unset)
        assert notes == [settled.note()]
        assert "pwSECRET" not in " ".join(notes) and "QUERYSECRET" not in " ".join(notes)


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


def test_ollama_without_base_url_is_a_local_server(monkeypatch, tmp_path):
    """``ollama/`` resolves to this machine's Ollama: the profile applies in bench run and ask
    alike (ask used to look only at --base-url and $OPENAI_BASE_URL and missed it)."""
    from pageindex.cli.ask import _client_settings
    from pageindex.llm.profile import endpoint_url, settle

    monkeypatch.setenv("PAGEINDEX_CACHE_DIR", str(tmp_path))  # no doctor findings
    monkeypatch.delenv("OLLAMA_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert endpoint_url("ollama/llama3.1", None) == "http://localhost:11434/v1"
    settled = settle("ollama/llama3.1", None, {"concurrency": None, "timeout_s": None})
    assert settled.base_url == "http://localhost:11434/v1"
    assert (settled.settings["concurrency"], settled.settings["timeout_s"]) == (1, 600.0)
    assert "localhost:11434" in (settled.note() or "")
    unset = {"timeout": None, "max_retries": None, "concurrency": None, "json_mode": False}
    ask, notes = _client_settings("ollama/llama3.1", None, **unset)
    assert notes == [settled.note()]
    assert (ask["concurrency"], ask["timeout"], ask["retry_timeouts"]) == (1, 600.0, False)
    remote, notes = _client_settings("openai/gpt-4o-mini", "https://api.example.com/v1", **unset)
    assert notes == []
    assert (remote["concurrency"], remote["timeout"]) == (8, 60.0)
    monkeypatch.setenv("OLLAMA_BASE_URL", "http://10.1.2.3:11434/v1")  # Ollama on another machine
    assert settle("ollama/llama3.1", None, {"concurrency": None}).settings["concurrency"] == 4


def test_doctor_findings_rank_between_resumed_run_and_profile():
    unset = {"concurrency": None, "timeout_s": None}
    settings, sources = resolve_settings(LOCAL, unset, found={"concurrency": 2})
    assert (settings["concurrency"], sources["concurrency"]) == (2, "pageindex doctor")
    assert sources["timeout_s"] == "local-server profile"
    settings, sources = resolve_settings(
        LOCAL, {"concurrency": None}, stored={"concurrency": 5}, found={"concurrency": 2}
    )
    assert (settings["concurrency"], sources["concurrency"]) == (5, "resumed run")


def test_profile_note_names_its_settings_in_one_order_whatever_order_they_were_settled_in():
    """The trial found the header in another order than the README's (the sources' order)."""
    settings = {"concurrency": 1, "llm_concurrency": 1, "timeout_s": 600.0, "retry_timeouts": False}
    names = ["retry_timeouts", "timeout_s", "llm_concurrency", "concurrency"]
    note = profile_note(LOCAL, dict.fromkeys(names, "local-server profile"), settings)
    assert note == (
        f"local-server profile for {LOCAL} (loopback): concurrency 1, 1 request in flight, timeout 600s, "
        "no retry after a client timeout (flags override it: --concurrency, --timeout, --max-retries)"
    )
