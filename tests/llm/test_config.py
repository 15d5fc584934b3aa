"""Model specs, pricing, the ledger and the budget."""

from __future__ import annotations

import json

import pytest

from pageindex.llm import (
    Budget,
    BudgetExceeded,
    LLMConfigError,
    Usage,
    UsageLedger,
    UsageRecord,
    load_pricing,
    make_client,
    parse_spec,
)
from pageindex.llm.spec import redact


def test_specs_resolve_urls_and_keys():
    env = {"OPENAI_API_KEY": "sk-env-key-123456", "OPENAI_BASE_URL": "http://vllm.local:8000/v1/"}
    spec = parse_spec("openai/Qwen2.5-7B", env=env)
    assert (spec.provider, spec.model, spec.base_url) == ("openai", "Qwen2.5-7B", "http://vllm.local:8000/v1")
    assert spec.api_key.get_secret_value() == "sk-env-key-123456" and "sk-env" not in repr(spec)
    explicit = parse_spec(
        "openai/gpt-4o", base_url="https://api.openai.com/v1", api_key="sk-arg-999999", env=env
    )
    assert (
        explicit.base_url == "https://api.openai.com/v1"
        and explicit.api_key.get_secret_value() == "sk-arg-999999"
    )
    ollama = parse_spec("ollama/llama3.1:8b", env={})
    assert (ollama.model, ollama.base_url) == ("llama3.1:8b", "http://localhost:11434/v1")
    assert parse_spec("replay/gpt-4o-mini", env={}).base_url is None
    assert parse_spec("scripted", env={}).provider == "scripted"
    # A local server needs no key; the official endpoint does.
    assert parse_spec("openai/local", base_url="http://127.0.0.1:9/v1", env={}).api_key is not None
    with pytest.raises(LLMConfigError, match=r"no API key for openai/gpt-4o at https://api.openai.com/v1"):
        parse_spec("openai/gpt-4o", env={})


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("gpt-4o-mini", "did you mean openai/gpt-4o-mini"),
        ("anthropic/claude", "unknown provider 'anthropic'"),
        ("openai/", "bad model spec 'openai/'"),
        ("", "expected openai/<model>"),
    ],
)
def test_bad_specs(spec, message):
    with pytest.raises(LLMConfigError, match=message):
        parse_spec(spec, env={})
    with pytest.raises(LLMConfigError, match=message):
        make_client(spec)


def test_scripted_spec_needs_a_scripted_model():
    with pytest.raises(LLMConfigError, match="scripted=ScriptedModel"):
        make_client("scripted")


def test_redact():
    assert redact("key sk-proj-abcdefghijklmnop here") == "key sk-proj*** here"
    assert redact("token my-weird-token-1 again", "my-weird-token-1") == "token *** again"


def test_pricing_lookup_and_override(tmp_path, monkeypatch):
    pricing = load_pricing()
    assert pricing.price("openai/gpt-4o-mini").input == 0.15
    assert pricing.price("openai/gpt-4o-mini-2024-07-18").output == 0.60  # dated snapshot
    assert pricing.price("replay/gpt-4o").input == 2.50
    assert pricing.price("ollama/llama3.1") is None
    usage = Usage(prompt_tokens=2000, completion_tokens=1000, cached_tokens=1000)
    assert pricing.cost("openai/gpt-4o-mini", usage) == pytest.approx(
        (1000 * 0.15 + 1000 * 0.075 + 1000 * 0.6) / 1e6
    )
    assert pricing.cost("ollama/llama3.1", usage) is None  # unknown, not zero
    assert pricing.cost("openai/gpt-4-turbo", usage) == pytest.approx(
        (2000 * 10 + 1000 * 30) / 1e6
    )  # no discount

    override = tmp_path / "prices.json"
    override.write_text(
        json.dumps(
            {
                "models": {
                    "ollama/llama3.1": {"input": 0, "output": 0},
                    "gpt-4o-mini": {"input": 1, "output": 2},
                }
            }
        )
    )
    monkeypatch.setenv("PAGEINDEX_PRICING", str(override))
    custom = load_pricing()
    assert custom.cost("ollama/llama3.1", usage) == 0.0
    assert custom.price("openai/gpt-4o-mini").input == 1 and custom.price("gpt-4o").input == 2.50
    override.write_text('{"models": {"x": {"input": "cheap"}}}')
    with pytest.raises(LLMConfigError, match=f"pricing file {override} is not valid"):
        load_pricing()
    with pytest.raises(LLMConfigError, match="does not exist"):
        load_pricing(tmp_path / "missing.json")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "is a directory"),
        (b"\x92\xff{}", "not UTF-8"),
        (b'{"models": {"m": {"input": -1, "output": 1}}}', "models.m.input: must be at least 0"),
        (b'{"models": {"m": {"input": NaN, "output": 1}}}', "models.m.input: must be a finite number"),
        # a misspelt key was dropped without a word: cached tokens priced as input
        (b'{"models": {"m": {"input": 1, "output": 1, "cahced_input": 0.1}}}',
         "models.m.cahced_input: is not a known key"),
        (b'{"modles": {}, "models": {}}', "modles: is not a known key"),
        # prices per 1K tokens would make every cost 1000 times too small
        (b'{"unit": "USD per 1K tokens", "models": {}}', "unit: must be 'USD per 1M tokens'"),
    ],
)
def test_an_unusable_pricing_file_is_one_config_error_naming_it(tmp_path, content, message):
    """A folder, a file that is not UTF-8, a negative or NaN price: one line naming the file (was an
    internal error, or costs below zero)."""
    path = tmp_path / "prices.json"
    if content is None:
        path.mkdir()
    else:
        path.write_bytes(content)
    with pytest.raises(LLMConfigError, match=f"pricing file {path} .*{message}"):
        load_pricing(path)


def record(role="retriever", cost=0.01, **tag):
    return UsageRecord(
        prompt_tokens=100,
        completion_tokens=10,
        calls=1,
        latency_s=0.5,
        cost_usd=cost,
        model="openai/gpt-4o-mini",
        role=role,
        tag=tag,
    )


def test_ledger_totals_per_sample_retriever_role():
    ledger = UsageLedger()
    ledger.add(record(sample_id="q1", retriever="agent", iteration=0))
    ledger.add(record(sample_id="q1", retriever="agent", iteration=1))
    ledger.add(record(sample_id="q2", retriever="bm25"))
    ledger.add(record(role="judge", sample_id="q1"))
    assert ledger.total().calls == 4 and ledger.total().cost_usd == pytest.approx(0.04)
    assert ledger.total(sample_id="q1").prompt_tokens == 300
    assert ledger.total(sample_id="q1", role="retriever").calls == 2
    by_retriever = ledger.by("retriever", role="retriever")
    assert {k: v.calls for k, v in by_retriever.items()} == {"agent": 2, "bm25": 1}
    assert ledger.by("role")["judge"].completion_tokens == 10
    ledger.add(record(sample_id="q3", cost=None))
    assert ledger.total().cost_usd is None and ledger.total(sample_id="q1").cost_usd == pytest.approx(0.03)
    frame = ledger.to_frame()
    assert list(frame["tag.sample_id"]) == ["q1", "q1", "q2", "q1", "q3"] and len(frame) == 5


def test_budget_counts_and_refuses():
    budget = Budget(max_tokens=200)
    budget.check()
    budget.add(record())
    budget.check()
    budget.add(record())
    assert budget.spent_tokens == 220 and budget.exhausted
    with pytest.raises(BudgetExceeded, match="220 of 200 tokens"):
        budget.check("judge")
    dollars = Budget(max_usd=0.015)
    dollars.add(record())
    dollars.check()
    dollars.add(record())
    with pytest.raises(BudgetExceeded, match=r"\$0.0200 of \$0.0150"):
        dollars.check()


@pytest.mark.parametrize(
    "url,why",
    [
        ("http://127.0.0.1:99999/v1", "port must be a number from 1 to 65535"),
        ("http://u:pw@127.0.0.1:abc/v1", "port must be a number from 1 to 65535"),
        ("http://:18300/v1", "names no host"),
        ("127.0.0.1:8080/v1", "must start with http:// or https://"),
        ("ftp://127.0.0.1/v1", "must start with http:// or https://"),
        ("http://[::1:8080/v1", "it is not a URL"),
    ],
)
def test_a_base_url_no_server_can_have_is_named_before_any_request(url, why):
    """Trial 15: a port out of range ended `bench run`, `ask` and `doctor` with "internal error:
    ExceptionGroup ..."; "http://:18300/v1" was said to lack its scheme. From --base-url or from
    OPENAI_BASE_URL, the spec names the URL (credentials masked) and what is wrong with it."""
    for spec in (lambda: parse_spec("openai/m", base_url=url, env={}),
                 lambda: parse_spec("openai/m", env={"OPENAI_BASE_URL": url})):  # fmt: skip
        with pytest.raises(LLMConfigError, match=why) as info:
            spec()
        assert "pw" not in str(info.value) and "is not usable" in str(info.value)
    assert parse_spec("openai/m", base_url="https://example.org:8443/v1/", env={}).base_url
    # a URL pasted with a space around it is the URL
    assert parse_spec("openai/m", base_url=" http://127.0.0.1:8080/v1\n", env={}).base_url == (
        "http://127.0.0.1:8080/v1"
    )


def test_a_pricing_file_saved_with_a_byte_order_mark_is_read(tmp_path):
    """Notepad's UTF-8 was `pricing file ... is not valid: Unexpected UTF-8 BOM (decode using utf-8-sig)`."""
    path = tmp_path / "prices.json"
    path.write_bytes(b'\xef\xbb\xbf{"models": {"m\xc3\xa9": {"input": 1, "output": 2}}}\r\n')
    assert load_pricing(path).price("openai/m\u00e9").output == 2
