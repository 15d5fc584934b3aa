"""The one preflight: is this base URL really an OpenAI-compatible API serving this model?

A socket that answers is not enough (a static file server answers too). :func:`preflight` asks
``GET {base_url}/models`` and wants a JSON model list (``{"data": [...]}``); where a server has no
list (HTTP 404/405/501) it sends a one-token chat completion instead and wants a JSON reply with
``choices``. Anything else (an HTML page, a non-JSON body, a rejected key, no answer) raises
:class:`~pageindex.llm.types.LLMConfigError` with one line naming the URL (credentials masked) and
what came back. The run's preflight, ``ask``, ``bench judge``, ``build --summaries`` and any
endpoint probing share this module.
"""

from __future__ import annotations

import re
import time
from typing import Any, Literal

import httpx
from pydantic import BaseModel, Field

from pageindex.llm.http import (
    UPSTREAM_GONE,
    key_refusal,
    server_message,
    transport_failure,
    upstream_unreachable,
)
from pageindex.llm.profile import is_loopback
from pageindex.llm.redact import redact_library_logs
from pageindex.llm.spec import ModelSpec, endpoint
from pageindex.llm.types import EndpointUnreachableError, LLMConfigError
from pageindex.wording import shortened

NO_LIST_STATUSES = (404, 405, 501)
# How long the one-token check of a model the server does not list waits: a server that refuses the name
# says so at once (LiteLLM's 400, a 404), and llama.cpp, which answers any name, may be busy generating
# for another client for minutes; past it the check is left undecided (the warning says what may happen)
UNLISTED_CHECK_S = 10.0


class PreflightResult(BaseModel):
    """What the preflight found about one endpoint and model."""

    url: str = Field(description="The base URL, credentials masked.")
    via: Literal["models", "chat", "none"] = Field(
        description='"models": a JSON model list answered; "chat": no list, a one-token chat did; '
        '"none": nothing to check (scripted, replay).'
    )
    models: list[str] = Field(default_factory=list, description="Model ids the server listed.")
    model_listed: bool | None = Field(
        default=None, description="Whether the model is in the list (None: the server has no list)."
    )
    metadata: dict[str, Any] = Field(
        default_factory=dict, description="The model's entry in the list (context window hints etc.)."
    )
    answered_as: str | None = Field(
        default=None,
        description="An unlisted model's one-token check was answered: the model its reply names (\"\" "
        "for none); None: not checked, or no reply.",
    )
    latency_s: float = 0.0

    def shown_models(self, most: int = 4) -> str:
        """The listed model ids for a message: the first ``most`` of them ("no models" for none)."""
        return shortened(self.models, most) or "no models"

    def unlisted(self, model: str) -> str | None:
        """What to say of ``model`` when the server lists models but not it (a typo, another server),
        else None: a llama.cpp server answers any name with the one model it serves, so
        ``-m openai/gemma-9b`` against it was answered by gemma-3-270m, in silence (and a run's
        results were filed under the wrong model)."""
        if self.model_listed is not False:
            return None
        unlisted = f"{model} is not among the models {self.url} lists ({self.shown_models()})"
        if self.answered_as is None:  # no reply to the one-token check (busy, a 5xx): what may happen
            return f"{unlisted}: the server may answer with another model, or refuse it"
        if self.answered_as and not same_model(self.answered_as, model):  # llama-server: its model file
            by = "that model" if self.models == [self.answered_as] else self.answered_as
            return f"{unlisted}: a one-token request for {model} was answered by {by}"
        return f"{unlisted}: the server answered a one-token request for it, perhaps with another model"


def describe_response(response: httpx.Response) -> str:
    """A short, one-line account of an HTTP answer: status, kind of body and its gist."""
    ctype = response.headers.get("content-type", "").split(";")[0].strip() or "no content type"
    text = response.text if response.content else ""
    if "html" in ctype or re.match(r"\s*<(!doctype|html)", text, re.IGNORECASE):
        title = re.search(r"<title[^>]*>(.*?)</title>", text, re.IGNORECASE | re.DOTALL)
        gist = _squash(title.group(1)) if title else _squash(re.sub(r"<[^>]+>", " ", text))
        return f'HTTP {response.status_code} with an HTML page ("{_clip(gist)}")'
    try:
        data = response.json()
    except ValueError:
        if not text.strip():
            return f"HTTP {response.status_code} with an empty body"
        return f'HTTP {response.status_code} with a non-JSON {ctype} body ("{_clip(_squash(text))}")'
    message = _error_message(data)
    if message:
        return f'HTTP {response.status_code}: "{_clip(message)}"'
    return f"HTTP {response.status_code} with JSON that is not an OpenAI answer ({_clip(_squash(str(data)))})"


def _error_message(data: Any) -> str | None:
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and error.get("message"):
            return _squash(str(error["message"]))
        if isinstance(error, str):
            return _squash(error)
        if isinstance(data.get("detail"), str):
            return _squash(data["detail"])
    return None


def _squash(text: str) -> str:
    return " ".join(text.split())


def _clip(text: str, limit: int = 120) -> str:
    """Shorten at a word boundary, never mid-word."""
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0] or text[:limit]
    return cut + " …"


async def preflight(
    spec: ModelSpec,
    *,
    timeout: float = 10.0,
    transport: httpx.AsyncBaseTransport | None = None,
) -> PreflightResult:
    """Check ``spec``'s endpoint before any work starts; raise :class:`LLMConfigError` if it is
    not a usable OpenAI-compatible API. Messages name the spec and URL, never the key."""
    if spec.base_url is None:
        return PreflightResult(url="", via="none")
    redact_library_logs(spec.secrets())  # httpx logs each request's URL, credentials and all
    where = spec.where()
    url = spec.display_url or ""
    headers = spec.auth_headers()
    started = time.perf_counter()
    async with httpx.AsyncClient(timeout=timeout, transport=transport, headers=headers) as http:
        listing = await _request(http, spec, "GET", "/models", timeout)
        if refused := _key_refused(spec, listing):
            raise refused
        if listing.status_code == 200:
            data = response_json(listing)
            if isinstance(data, dict) and isinstance(data.get("data"), list):
                entries = [e for e in data["data"] if isinstance(e, dict)]
                ids = [str(e.get("id")) for e in entries if e.get("id") is not None]
                match = next((e for e in entries if same_model(str(e.get("id", "")), spec.model)), None)
                result = PreflightResult(
                    url=url,
                    via="models",
                    models=ids,
                    model_listed=match is not None,
                    metadata=dict(match or {}),
                )
                if match is None and ids:
                    await _check_unlisted(http, spec, timeout, result)
                result.latency_s = time.perf_counter() - started
                return result
            raise LLMConfigError(
                f"{where} is not an OpenAI-compatible API: GET /models answered "
                f"{_described(spec, listing)}, not a JSON model list; --base-url is usually the "
                "API's root ending in /v1"
            )
        if listing.status_code not in NO_LIST_STATUSES:
            answer = _described(spec, listing)
            raise LLMConfigError(f"{where} failed the preflight: GET /models answered {answer}")
        # No model list on this server: one token of chat must come back as an OpenAI reply.
        body = {"model": spec.model, "messages": [{"role": "user", "content": "ping"}], "max_tokens": 1}
        chat = await _request(http, spec, "POST", "/chat/completions", timeout, json=body)
        if refused := _key_refused(spec, chat):
            raise refused
        data = response_json(chat) if chat.status_code == 200 else None
        if isinstance(data, dict) and isinstance(data.get("choices"), list):
            return PreflightResult(url=url, via="chat", latency_s=time.perf_counter() - started)
        raise LLMConfigError(
            f"{where} is not an OpenAI-compatible API: GET /models answered "
            f"{_described(spec, listing)} and POST /chat/completions answered {_described(spec, chat)}"
        )


async def _check_unlisted(
    http: httpx.AsyncClient, spec: ModelSpec, timeout: float, found: PreflightResult
) -> None:
    """A model the server does not list: one token of chat asks whether it serves it anyway (llama.cpp
    answers any name with its one model). A server that refuses the name (a LiteLLM proxy: HTTP 400
    ``Invalid model name passed in model=...``; OpenAI, vLLM, Ollama: 404) fails the preflight with
    the models it lists; before, the run went on and every sample ended in that ``http_400``. Any
    other answer (a reply, a busy server, a 5xx) leaves it to the caller's warning; a reply is kept in
    ``found.answered_as`` (the model it names), for the warning to say what answered."""
    body = {"model": spec.model, "messages": [{"role": "user", "content": "ping"}], "max_tokens": 1}
    wait = min(timeout, UNLISTED_CHECK_S)  # a llama.cpp server busy for another client answers when done
    try:
        chat = await _request(http, spec, "POST", "/chat/completions", wait, json=body)
    except LLMConfigError:
        return
    if refused := _key_refused(spec, chat):
        raise refused
    data = response_json(chat) if chat.status_code == 200 else None
    if isinstance(data, dict) and isinstance(data.get("choices"), list):
        found.answered_as = str(data.get("model") or "")  # llama-server names its model file
        return
    said = (server_message(chat.text) if chat.content else "").lower()
    if chat.status_code in (400, 404, 422) and ("model" in said or spec.model.lower() in said):
        raise LLMConfigError(
            f"{spec.where()} is not served there: GET /models lists {found.shown_models()}, and a chat "
            f"request for {spec.model} answered {_described(spec, chat)}; name one of the listed models "
            f"({spec.provider}/{found.models[0]})"
        )


async def check_upstream(
    spec: ModelSpec, *, timeout: float, transport: httpx.AsyncBaseTransport | None = None,
    found: PreflightResult | None = None,
) -> None:
    """One token of chat, after a proxy said that it could not reach the model server behind it (its
    ``GET /models`` answers all the same: a LiteLLM proxy lists its configured models whatever their
    servers do): raise :class:`EndpointUnreachableError` when the proxy still says so, or gives no answer.
    Not sent again when the preflight that ``found`` is just had its one-token check of an unlisted model
    answered (:attr:`PreflightResult.answered_as`): the model server answered it."""
    if spec.base_url is None or (found is not None and found.answered_as is not None):
        return
    body = {"model": spec.model, "messages": [{"role": "user", "content": "ping"}], "max_tokens": 1}
    async with httpx.AsyncClient(timeout=timeout, transport=transport, headers=spec.auth_headers()) as http:
        chat = await _request(http, spec, "POST", "/chat/completions", timeout, json=body)
    said = server_message(chat.text, limit=200) if chat.content else ""
    if upstream_unreachable(chat.status_code, said):
        reason = f"{UPSTREAM_GONE} (HTTP {chat.status_code})"  # the failed call quoted the proxy's words
        raise EndpointUnreachableError(f"{spec.where()}: {reason}: {spec.redact(said)}", reason=reason)


def same_model(listed: str, wanted: str) -> bool:
    """Ollama lists ``llama3.1:latest`` for ``llama3.1``; llama.cpp lists a file path or alias."""
    return listed == wanted or listed.removesuffix(":latest") == wanted or listed.rsplit("/", 1)[-1] == wanted


async def _request(
    http: httpx.AsyncClient, spec: ModelSpec, method: str, path: str, timeout: float, **kwargs: Any
) -> httpx.Response:
    try:
        return await http.request(method, endpoint(spec.base_url or "", path), timeout=timeout, **kwargs)
    except httpx.TimeoutException:
        silent = f"no answer within {timeout:g}s"
        if is_loopback(spec.base_url):
            # connected, but no answer: a one-at-a-time local server may still be computing a request
            # an interrupted or killed run left behind (it answers nothing else until that is done)
            raise EndpointUnreachableError(
                f"{spec.where()} did not answer within {timeout:g}s: a server on this machine that serves "
                "one request at a time may still be finishing an abandoned request (an interrupted run's, "
                "or another client's); wait for it (or restart the server), or give a larger --timeout",
                reason=silent, timed_out=True,
            ) from None
        message = f"cannot reach {spec.where()}: {silent}"
        raise EndpointUnreachableError(message, reason=silent, timed_out=True) from None
    except httpx.HTTPError as exc:
        said = transport_failure(exc).said if isinstance(exc, httpx.TransportError) else str(exc)
        reason = spec.redact(_squash(said)) or type(exc).__name__
        raise EndpointUnreachableError(f"cannot reach {spec.where()}: {reason}", reason=reason) from None


def _described(spec: ModelSpec, response: httpx.Response) -> str:
    """:func:`describe_response` with ``spec``'s credentials masked: an error page may quote the
    request's ``Authorization`` header (the key, or a URL's user-info as ``Basic`` credentials)."""
    return spec.redact(describe_response(response))


def response_json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


def _key_refused(spec: ModelSpec, response: httpx.Response) -> LLMConfigError | None:
    """The one line for an answer refusing ``spec``'s credentials (:func:`key_refusal`), else None."""
    said = key_refusal(response.status_code, response.text if response.content else "")
    if said is None:
        return None
    return LLMConfigError(spec.credentials_rejected(response.status_code) + spec.redact(said))
