"""Model specs as strings: ``<provider>/<model>`` -- ``openai/<model>``, ``ollama/<model>``,
``replay/<model>``, ``scripted``, or a plug-in provider's name. Each provider (one module in
:mod:`pageindex.llm.providers`) resolves its own specs: base URL, key, defaults.

Errors name the spec and the base URL, never the key (keys are ``SecretStr`` and redacted) and
never URL credentials: :meth:`ModelSpec.where` shows the base URL with any ``user:key@`` part and
credential-like query values (``?api-key=...``) masked, and :meth:`ModelSpec.redact` masks the key
and those URL credentials wherever a server or library echoes them (see ``redact.py``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, SecretStr

from pageindex.llm.redact import has_userinfo, redact, redact_url, url_secrets
from pageindex.llm.types import BaseURLError, LLMConfigError

OPENAI_BASE_URL = "https://api.openai.com/v1"
OLLAMA_BASE_URL = "http://localhost:11434/v1"
PLACEHOLDER_KEY = "not-needed"
SPEC_HELP = "expected openai/<model>, ollama/<model>, replay/<model> or scripted"
MODEL_ENV = "PAGEINDEX_MODEL"  # the default answering model of ask, doctor and bench run
KEY_ENV = "OPENAI_API_KEY"  # the key of every openai/ endpoint
# the key of a judge's openai/ endpoint: when set, a judge gets it and never $OPENAI_API_KEY
JUDGE_KEY_ENV = "PAGEINDEX_JUDGE_API_KEY"


def model_choice(explicit: str | None) -> tuple[str | None, str]:
    """The model spec a command uses, and the name to say it by in an error: ``--model``, else
    ``$PAGEINDEX_MODEL`` (a bad spec in the variable was said as if typed, naming no variable)."""
    if explicit:
        return explicit, "--model"
    return os.environ.get(MODEL_ENV) or None, f"${MODEL_ENV}"


class ModelSpec(BaseModel):
    """A parsed model spec. ``api_key`` is a SecretStr: it never prints."""

    spec: str
    provider: str  # a registered provider's name (pageindex.llm.providers)
    model: str
    base_url: str | None = None
    api_key: SecretStr | None = None
    key_env: str = KEY_ENV  # the variable the key comes from, named when the endpoint refuses it
    # a judge sent $OPENAI_API_KEY: the variable that would give it its own key, named beside key_env
    own_key_env: str | None = None

    @property
    def display_url(self) -> str | None:
        """The base URL with credentials masked (``https://***@host/v1?api-key=***``)."""
        return redact_url(self.base_url)

    def where(self) -> str:
        """``'openai/gpt-4o-mini at https://api.openai.com/v1'`` for error messages (credentials masked)."""
        return f"{self.spec} at {self.display_url}" if self.base_url else self.spec

    def secrets(self) -> list[str]:
        """Every credential this spec carries: the API key and those inside the base URL."""
        key = [self.api_key.get_secret_value()] if self.api_key else []
        return key + url_secrets(self.base_url)

    def redact(self, text: str) -> str:
        return redact(text, self.secrets())

    def credentials_rejected(self, status: int) -> str:
        """The one line for an endpoint that refused this spec's credentials (HTTP 401, 403), naming
        those it sent: the base URL's user-info, when it has one (sent in place of the key), else the
        key and the variable it came from (it said "check OPENAI_API_KEY" of a URL's user-info too, and
        of a judge's key from $PAGEINDEX_JUDGE_API_KEY), and for a judge sent $OPENAI_API_KEY the
        variable of its own key; where no key was given (the placeholder sent to a
        server that needs none), that it needs one and which variable gives it."""
        if has_userinfo(self.base_url):
            return (
                f"{self.display_url} rejected the user-info of its URL for {self.spec} (HTTP {status}); "
                "check the user name and password in the base URL (sent as HTTP Basic auth in place of "
                f"{self.key_env})"
            )
        if self.api_key is None or self.api_key.get_secret_value() == PLACEHOLDER_KEY:
            return (  # no key was given: "rejected the API key" sent the user looking for one they never set
                f"{self.display_url} requires an API key for {self.spec} (HTTP {status}) and none was given "
                f"({self.key_env} is not set); set {self.key_env} to the server's key"
            )
        # a judge refusing the answering model's key: that key may be right for its own server
        own = f", or give the judge its own key in {self.own_key_env}" if self.own_key_env else ""
        return (
            f"{self.display_url} rejected the API key for {self.spec} (HTTP {status}); "
            f"check {self.key_env}{own}"
        )

    def auth_headers(self) -> dict[str, str]:
        """``Authorization: Bearer <key>`` for direct HTTP requests to the endpoint (none without a key)."""
        return {"Authorization": f"Bearer {self.api_key.get_secret_value()}"} if self.api_key else {}

    def __repr_args__(self):  # type: ignore[no-untyped-def]
        for name, value in super().__repr_args__():
            yield name, (self.display_url if name == "base_url" else value)


def parse_spec(
    spec: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    env: Mapping[str, str] | None = None,
    role: str | None = None,
) -> ModelSpec:
    """Parse and resolve a model spec through its registered provider
    (:mod:`pageindex.llm.providers`); raises :class:`LLMConfigError` on a bad spec or missing key.
    ``role="judge"``: an ``openai/`` spec given no ``api_key`` takes ``$PAGEINDEX_JUDGE_API_KEY`` when
    it is set, in place of ``$OPENAI_API_KEY`` (:func:`judge_api_key`); a refused key, or no key at all
    (the placeholder), is then said as that variable's."""
    from pageindex.llm.providers import provider_class

    text = (spec or "").strip()
    name, sep, model = text.partition("/")
    provider = provider_class(name) if name else None
    if provider is None or not provider.bare:
        if not sep or not model:
            hint = f" (did you mean openai/{text}?)" if text and "/" not in text else ""
            raise LLMConfigError(f"bad model spec {spec!r}: {SPEC_HELP}{hint}")
        if provider is None:
            raise LLMConfigError(f"bad model spec {spec!r}: unknown provider {name!r}; {SPEC_HELP}")
    judge = role == "judge" and api_key is None and provider.name == "openai"
    judge_key = judge_api_key(env) if judge else None
    resolved = provider.resolve(text, model, base_url=base_url, api_key=judge_key or api_key, env=env)
    keyless = resolved.api_key is not None and resolved.api_key.get_secret_value() == PLACEHOLDER_KEY
    if judge_key or (judge and keyless):  # a judge sent no key is told to set its own
        resolved = resolved.model_copy(update={"key_env": JUDGE_KEY_ENV})
    elif judge:  # sent $OPENAI_API_KEY: refused, it is told of its own variable too
        resolved = resolved.model_copy(update={"own_key_env": JUDGE_KEY_ENV})
    if resolved.base_url is not None and resolved.base_url != resolved.base_url.strip():
        resolved = resolved.model_copy(update={"base_url": resolved.base_url.strip()})  # pasted with a space
    problem = base_url_problem(resolved.base_url)
    if problem is not None:
        raise BaseURLError(
            f"base URL {resolved.display_url} of {resolved.spec} is not usable: {problem} "
            "(an endpoint looks like http://127.0.0.1:8080/v1)"
        )
    return resolved


def judge_api_key(env: Mapping[str, str] | None = None) -> str | None:
    """A judge's own key for its ``openai/`` endpoint (``$PAGEINDEX_JUDGE_API_KEY``), read from the
    environment each time a judge is made (a resumed run too: never stored); None when unset."""
    return (os.environ if env is None else env).get(JUDGE_KEY_ENV) or None


def shared_key_warning(
    model: ModelSpec | None, judges: Iterable[ModelSpec], env: Mapping[str, str] | None = None
) -> str | None:
    """The warning for a command whose one ``$OPENAI_API_KEY`` goes to the answering ``model``'s
    endpoint and to a judge's at another origin (scheme, host, port), one of them not on this machine:
    the key of one reaches the other's server. None when it does not: no key set, a judge with its
    own (``$PAGEINDEX_JUDGE_API_KEY``), a base URL whose user-info is sent in place of the key, both
    endpoints loopback, or no ``openai/`` model on one side."""
    from pageindex.llm.profile import is_loopback

    key = (os.environ if env is None else env).get(KEY_ENV)

    def sent_the_key(spec: ModelSpec | None) -> bool:
        return (
            spec is not None and spec.provider == "openai" and spec.key_env == KEY_ENV
            and spec.api_key is not None and spec.api_key.get_secret_value() == key
            and not has_userinfo(spec.base_url)
        )  # fmt: skip

    if not key or model is None or not sent_the_key(model):
        return None
    for judge in judges:
        if not sent_the_key(judge) or _origin(judge.base_url) == _origin(model.base_url):
            continue
        if is_loopback(judge.base_url) and is_loopback(model.base_url):
            continue
        return (
            f"{KEY_ENV} is sent to both {model.display_url} and {judge.display_url} (the judge); "
            f"set {JUDGE_KEY_ENV} to give the judge its own key"
        )
    return None


def _origin(url: str | None) -> tuple[str, str, int | None] | None:
    """``(scheme, host, port)`` of ``url``, the port the scheme's default when not written."""
    try:
        parts = urlsplit(url or "")
        scheme = parts.scheme.lower()
        return scheme, (parts.hostname or "").lower(), parts.port or {"http": 80, "https": 443}.get(scheme)
    except ValueError:
        return None


def endpoint(base_url: str, path: str, *, root: bool = False) -> str:
    """The URL of ``path`` on the server at ``base_url``: after the base URL's path (with ``root``,
    after it less a trailing ``/v1``: llama-cpp-python's ``/extras/tokenize``, Ollama's ``/api/show``),
    its query kept after the new path (``/v1?api-version=2`` + ``/models`` -> ``/v1/models?api-version=2``,
    as the SDK sends a chat request), never appended to the query."""
    parts = urlsplit(base_url)
    prefix = parts.path.rstrip("/")
    if root and prefix.endswith("/v1"):
        prefix = prefix[: -len("/v1")]
    return urlunsplit(parts._replace(path=prefix + path))


def base_url_problem(url: str | None) -> str | None:
    """Why ``url`` cannot be an endpoint's base URL (None when it can, or is not given): an http(s)
    scheme, a host and a port from 1 to 65535 (the HTTP library's own errors for these read as
    internal errors, or name the wrong part)."""
    if url is None:
        return None
    try:
        parts = urlsplit(url)
    except ValueError as exc:  # "Invalid IPv6 URL": a bracket not closed
        return f"it is not a URL ({exc})"
    if parts.scheme.lower() not in ("http", "https"):
        return "it must start with http:// or https://"
    if not parts.hostname:
        return "it names no host"
    try:
        port = parts.port
    except ValueError:
        port = 0
    if port == 0:
        return "its port must be a number from 1 to 65535"
    return None


def check_reachable(spec: ModelSpec, *, timeout: float = 5.0) -> None:
    """Synchronous form of :func:`pageindex.llm.preflight.preflight` (the one preflight): raise
    :class:`LLMConfigError` unless ``spec``'s endpoint is an OpenAI-compatible API."""
    import asyncio

    from pageindex.llm.preflight import preflight

    asyncio.run(preflight(spec, timeout=timeout))
