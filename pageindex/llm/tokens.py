"""Token counts and context windows: what sizes calls to the model.

Counting: :class:`TokenCounter` counts with the server's own tokenizer where it has one
(llama-cpp-python's ``POST /extras/tokenize``, llama.cpp's ``llama-server`` and vLLM's ``POST
/tokenize``; nothing is downloaded at run time), otherwise
estimates characters / 4, calibrated by the usage the server reports (``observe`` keeps the
running ratio of reported prompt tokens to prompt characters, so after the first reply the
estimate follows the model's real tokenizer: SmolLM2 makes ~3 characters per token of a 10-K
index, not 4).

Context windows: the ``--context-window`` the user gives (which always wins), else the server's
metadata where it offers it (vLLM's ``max_model_len`` in ``/v1/models``, llama.cpp's ``n_ctx``; the
window Ollama runs a model with, ``/api/ps``; the one LM Studio loaded it with, ``/api/v1/models``;
llama-cpp-python says none), else a known table by model name.

Completion caps: every call sends ``max_tokens``; :func:`default_max_tokens` gives the per-role
default (tool-using and answering roles more, the judge less).
"""

from __future__ import annotations

import math
import re
from typing import Any

from pydantic import BaseModel

from pageindex.llm.spec import endpoint

CHARS_PER_TOKEN = 4.0
# Prompts fitted by an estimate (no tokenizer) keep this much room: through a LiteLLM proxy, which lists
# no tokenizer, an agent's fetched table estimated at the index's characters per token came out past an
# 8,192-token window (llama-cpp-python, SmolLM2).
ESTIMATE_MARGIN = 1.2
# Context windows of models people run, by name pattern (first match wins; case-insensitive).
KNOWN_CONTEXT_WINDOWS: list[tuple[str, int]] = [
    (r"smollm2", 8192),
    (r"gemma-?3-?270m", 32768),
    (r"gemma-?3", 131072),
    (r"gpt-4o|gpt-4\.1|o[134]-", 128000),
    (r"gpt-4-turbo", 128000),
    (r"gpt-3\.5", 16385),
    (r"llama-?3\.[123]", 131072),
    (r"llama-?3\b", 8192),
    (r"qwen2\.5", 32768),
    (r"mistral", 32768),
    (r"phi-?3", 4096),
]
# Completion-token cap per role (the retriever's role label, or the client's role).
ROLE_MAX_TOKENS: dict[str, int] = {
    "judge": 512,
    "summarizer": 512,
    "planner": 1024,
    "extraction": 1024,
    "synthesis": 1024,
    "agent": 1024,
    "iteration": 1024,
    "retriever": 1024,
}
DEFAULT_MAX_TOKENS = 1024


def default_max_tokens(role: str | None) -> int:
    return ROLE_MAX_TOKENS.get(role or "", DEFAULT_MAX_TOKENS)


def known_context_window(model: str) -> int | None:
    for pattern, window in KNOWN_CONTEXT_WINDOWS:
        if re.search(pattern, model, re.IGNORECASE):
            return window
    return None


# Where servers put the context window in a model's /models entry, most specific first. Not
# llama.cpp's ``meta.n_ctx_train``: the window the model was trained with, not the server's own
# (``--ctx-size`` may be smaller), so taking it would size prompts past what the server accepts.
CONTEXT_KEYS = (
    "max_model_len",  # vLLM
    "context_length",  # OpenRouter, LiteLLM
    "context_window",
    "max_context_length",
    "max_input_tokens",
    "n_ctx",  # llama.cpp
    "max_sequence_length",
)


class ServerWindow(BaseModel):
    """A context window a server told (``tokens``), and where it said it (``source``: ``server
    metadata`` for a ``/models`` entry, or which of Ollama's own endpoints)."""

    tokens: int
    source: str


# Ollama's smallest default context (before its defaults followed the GPU's memory): taken when an
# Ollama server says nothing about the window it runs a model with. Past its window Ollama cuts the
# prompt without an error, so a window assumed too large is silently wrong; too small is only slower.
OLLAMA_FALLBACK_WINDOW = 2048


# A server that reports reading fewer than one token per CUT_CHARS_PER_TOKEN characters of a prompt of
# at least CUT_MIN_CHARS characters cut the prompt: tokenizers make 3-5 characters a token of English
# and far fewer of figures or other scripts.
CUT_MIN_CHARS = 8000
CUT_CHARS_PER_TOKEN = 8


def prompt_cut(prompt_chars: int, reported_tokens: int) -> int | None:
    """``reported_tokens`` when a server that read a prompt of ``prompt_chars`` characters says it read
    so few tokens that it must have cut the prompt (Ollama does so silently past its context length),
    else None (a server that reports none, 0, says nothing)."""
    if prompt_chars >= CUT_MIN_CHARS and 0 < reported_tokens * CUT_CHARS_PER_TOKEN < prompt_chars:
        return reported_tokens
    return None


def context_window_from_metadata(metadata: Any) -> tuple[int | None, str]:
    """The context window in one model's ``/models`` entry (or its ``meta`` / ``metadata``
    object), and the key it was under; (None, "") when the entry says nothing. The one reader
    for the preflight, the client and ``pageindex doctor``."""
    if not isinstance(metadata, dict):
        return None, ""
    for where in (metadata, metadata.get("meta") or {}, metadata.get("metadata") or {}):
        if not isinstance(where, dict):
            continue
        for key in CONTEXT_KEYS:
            value = where.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
                return int(value), key
    return None, ""


def context_window_from_models(data: Any, model: str) -> int | None:
    """The context window for ``model`` (or the only model listed) out of a ``/v1/models``
    listing (:func:`context_window_from_metadata`)."""
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        return None
    entries = [e for e in data["data"] if isinstance(e, dict)]
    chosen = [e for e in entries if e.get("id") == model] or (entries if len(entries) == 1 else [])
    for entry in chosen:
        window, _ = context_window_from_metadata(entry)
        if window is not None:
            return window
    return None


class TokenCounter:
    """Counts tokens for one model: the server's tokenizer when it has one, else a calibrated
    chars/4 estimate (see the module docstring)."""

    def __init__(
        self, *, base_url: str | None = None, model: str = "", headers: dict[str, str] | None = None
    ):
        self.base_url = base_url
        self.model = model
        self.headers = dict(headers or {})
        self._chars = 0
        self._tokens = 0
        self._remote: bool | None = None if base_url else False  # unknown until tried
        self._way: int | None = None  # which of _tokenizers answered

    @property
    def chars_per_token(self) -> float:
        if self._chars >= 200 and self._tokens > 0:
            return self._chars / self._tokens
        return CHARS_PER_TOKEN

    @property
    def calibrated(self) -> bool:
        return self.chars_per_token != CHARS_PER_TOKEN

    def observe(self, chars: int, prompt_tokens: int) -> None:
        """Learn from a reply: ``prompt_tokens`` reported for a prompt of ``chars`` characters."""
        if chars > 0 and prompt_tokens > 0:
            self._chars += chars
            self._tokens += prompt_tokens

    def estimate(self, text: str | int) -> int:
        """Tokens of ``text`` (or of that many characters) by the calibrated estimate."""
        chars = text if isinstance(text, int) else len(text)
        return math.ceil(chars / self.chars_per_token)

    def fitting_estimate(self, text: str | int) -> int:
        """:meth:`estimate` with :data:`ESTIMATE_MARGIN` more: what prompts are fitted to a window by
        when no tokenizer counts them. The estimate is an average over what was read so far; a page
        of figures makes more tokens a character than the prose it was calibrated on."""
        return math.ceil(self.estimate(text) * ESTIMATE_MARGIN)

    def _tokenize_url(self, path: str = "/extras/tokenize") -> str | None:
        """A tokenizer endpoint beside the ``/v1`` of the base URL (llama-cpp-python's
        ``/extras/tokenize`` by default)."""
        if not self.base_url:
            return None
        return endpoint(self.base_url, path, root=True)

    def _tokenizers(self, text: str) -> list[tuple[int, str, dict[str, Any]]]:
        """Where servers count tokens, and the body each takes: llama-cpp-python's
        ``/extras/tokenize``, llama.cpp's ``llama-server`` ``/tokenize`` (``content``) and vLLM's
        ``/tokenize`` (``model`` and ``prompt``; it refuses a body without them), without the special
        tokens a chat template adds; the one that answered first is asked from then on."""
        vllm = {"model": self.model, "prompt": text, "add_special_tokens": False}
        ways = [("/extras/tokenize", {"input": text, "model": self.model}),
                ("/tokenize", {"content": text, "add_special": False}), ("/tokenize", vllm)]  # fmt: skip
        numbered = [(i, path, body) for i, (path, body) in enumerate(ways)]
        return [numbered[self._way]] if self._way is not None else numbered

    async def count(self, text: str, *, timeout: float = 30.0) -> int:
        """Exact tokens from the server's tokenizer when it has one, else :meth:`fitting_estimate`."""
        if self.base_url is None or self._remote is False:
            return self.fitting_estimate(text)
        import httpx

        tokens = None
        async with httpx.AsyncClient(timeout=timeout) as http:
            for way, path, body in self._tokenizers(text):
                url = self._tokenize_url(path) or ""
                try:
                    response = await http.post(url, json=body, headers=self.headers)
                    tokens = response.json().get("tokens") if response.status_code == 200 else None
                except (httpx.HTTPError, ValueError, AttributeError):
                    tokens = None
                if isinstance(tokens, list) and (tokens or not text):
                    self._way = way
                    break
                tokens = None
        if not isinstance(tokens, list):
            self._remote = False
            return self.fitting_estimate(text)
        self._remote = True
        if len(text) >= 200:
            self.observe(len(text), len(tokens))
        return len(tokens)

    @property
    def method(self) -> str:
        """How counts are made: ``server tokenizer``, ``chars/N (calibrated)`` or ``chars/4``."""
        if self._remote:
            return "server tokenizer"
        return f"chars/{self.chars_per_token:.2f} (calibrated)" if self.calibrated else "chars/4"
