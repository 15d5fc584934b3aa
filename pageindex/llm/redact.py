"""Keeping credentials out of every message the LLM layer produces.

Three kinds of secret reach the layer: the API key, credentials in a base URL's user-info
(``https://user:KEY@proxy/v1``) and credential-like query values (``?api-key=KEY``,
``?token=...``, ``?sig=...``). :func:`redact_url` masks the last two in a URL for display;
:func:`url_secrets` lists them so they can be masked wherever they are echoed (a server's error
body, an exception text); :func:`redact` masks given secrets plus anything *shaped* like a
credential: OpenAI-style keys, URL user-info and credential query values;
:func:`redact_library_logs` does the same to the log records of httpx, httpx2, openai and
instructor (which print request URLs at INFO/DEBUG). It runs when this module is imported, so the
filter is in place before any request the project makes (the preflight's included), and
:func:`redact_handler` puts the same filter on a log handler, so every record reaching it is masked
whichever logger emitted it. This module imports nothing from the layer, so the error types can use
it as a last safety net.
"""

from __future__ import annotations

import base64
import functools
import logging
import os
import re
from collections.abc import Iterable
from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit

MASK = "***"
MIN_SECRET_LEN = 4
# Placeholder keys sent to servers that need none: not secrets, and too common to mask.
NOT_SECRETS = frozenset({"not-needed", "ollama", "scripted"})

# Variables that hold a credential: OPENAI_API_KEY, a plug-in provider's MYPROVIDER_KEY, HF_TOKEN, ...
_SECRET_ENV = re.compile(r"(?:^|_)(?:API_?KEY|KEY|TOKEN|SECRET|PASSWORD)$", re.IGNORECASE)
MIN_ENV_SECRET_LEN = 8
_SENSITIVE_NAME = re.compile(r"key|token|secret|pass|pwd|sig|auth|cred|session", re.IGNORECASE)
_KEY_PATTERN = re.compile(r"\b(sk-[A-Za-z0-9_\-]{4})[A-Za-z0-9_\-*]{4,}")
# scheme://userinfo@  ->  scheme://***@ (to the last "@" before the path: a user name may hold one)
_USERINFO = re.compile(r"(\b[a-zA-Z][a-zA-Z0-9+.\-]*://)[^/\s?#'\"<>]+@")
# The http(s) scheme as typed before a user-info a URL without "//" holds (``http:/bob:pw@host``).
_LOOSE_SCHEME = re.compile(r"https?:/*", re.IGNORECASE)
# ?api-key=VALUE / &access_token=VALUE  ->  ?api-key=***
_QUERY_VALUE = re.compile(r"([?&;]([^=&\s#'\"<>]*)=)([^&\s#'\"<>]+)")


def is_sensitive_param(name: str) -> bool:
    """Whether a query parameter name looks like it carries a credential (``api-version`` does not)."""
    return bool(_SENSITIVE_NAME.search(name)) and name.lower() not in {"api-version", "api_version"}


def redact_url(url: str | None) -> str | None:
    """``https://u:KEY@host/v1?api-key=K&api-version=1`` -> ``https://***@host/v1?api-key=***&api-version=1``."""
    if not url:
        return url
    try:
        parts = urlsplit(url)
    except ValueError:
        return redact(url)
    query = _QUERY_VALUE.sub(_mask_query_value, "?" + parts.query)[1:] if parts.query else ""
    loose = _loose_userinfo(url)
    if loose is not None:  # no host part to mask it in: said as typed, up to its last "@"
        scheme, _, after = loose
        rest = urlsplit(after)
        return scheme + f"{MASK}@" + urlunsplit(("", "", rest.path, query, rest.fragment))
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{MASK}@{netloc.rpartition('@')[2]}"
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _loose_userinfo(url: str) -> tuple[str, str, str] | None:
    """``(scheme as typed, user-info, the rest)`` of a URL whose user-info no host part holds
    (``bob:KEY@host:8080/v1``, ``http:/bob:KEY@host/v1``, ``http//bob:KEY@host/v1``: urlsplit reads
    the user name as the scheme, or the credentials as the path); None for any other URL."""
    if "@" not in url or urlsplit(url).netloc:
        return None
    stem = re.split(r"[?#]", url, maxsplit=1)[0]
    if "@" not in stem:
        return None
    scheme = _LOOSE_SCHEME.match(stem)
    start = scheme.end() if scheme else 0
    userinfo, _, after = stem[start:].rpartition("@")
    return stem[:start], userinfo, after + url[len(stem) :]


def has_userinfo(url: str | None) -> bool:
    """Whether ``url`` holds user-info (``http://user:pw@host/v1``, or as typed without ``//``): the
    HTTP client sends it as Basic auth in place of the API key."""
    if not url:
        return False
    try:
        netloc = urlsplit(url).netloc
    except ValueError:
        return False
    return "@" in netloc or _loose_userinfo(url) is not None


def url_secrets(url: str | None) -> list[str]:
    """The credentials inside a URL (user-info parts and credential-like query values)."""
    if not url:
        return []
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found = [parts.username, parts.password, parts.netloc.rpartition("@")[0] if "@" in parts.netloc else None]
    if "@" in parts.netloc:
        user, _, password = (unquote(p) for p in parts.netloc.rpartition("@")[0].partition(":"))
        # as the HTTP client sends them (``Authorization: Basic base64(user:password)``), which a
        # proxy's error page may quote; and percent-decoded, as a server may say them
        found += [user, password, basic_credentials(user, password)]
    if (loose := _loose_userinfo(url)) is not None:
        userinfo = loose[1]
        found += [userinfo, *userinfo.partition(":")[::2]]
    found += [
        value for name, value in parse_qsl(parts.query, keep_blank_values=False) if is_sensitive_param(name)
    ]
    return [s for s in dict.fromkeys(found) if s and len(s) >= MIN_SECRET_LEN]


def env_secrets() -> list[str]:
    """The values of the environment's credential variables (``*_API_KEY``, ``*_KEY``, ``*_TOKEN``,
    ``*_SECRET``, ``*_PASSWORD``) of at least 8 characters: a key of any shape (a plug-in provider's
    from its own variable, a proxy's ``AIza...`` or hex key) that an error may quote."""
    return [
        value
        for name, value in os.environ.items()
        if len(value) >= MIN_ENV_SECRET_LEN and _secret_variable(name) and value not in NOT_SECRETS
    ]


@functools.lru_cache(maxsize=1024)
def _secret_variable(name: str) -> bool:
    return bool(_SECRET_ENV.search(name))  # asked on every masked message: a name is read once


def basic_credentials(user: str, password: str) -> str:
    """The value after ``Basic`` in the ``Authorization`` header the HTTP client makes of a URL's
    user-info (base64 of ``user:password``, UTF-8)."""
    return base64.b64encode(f"{user}:{password}".encode()).decode("ascii")


def redact(text: str, secrets: str | Iterable[str | None] | None = None) -> str:
    """Mask ``secrets`` (one or several), the environment's credentials (:func:`env_secrets`) and
    anything shaped like a credential in ``text``."""
    if not text:
        return text
    if isinstance(secrets, str):
        secrets = [secrets]
    # Longest first, so a secret that contains another one is masked whole.
    for secret in sorted({s for s in [*(secrets or ()), *env_secrets()] if s}, key=len, reverse=True):
        if len(secret) >= MIN_SECRET_LEN and secret not in NOT_SECRETS and secret in text:
            text = text.replace(secret, MASK)
    if "sk-" in text:
        text = _KEY_PATTERN.sub(r"\1***", text)
    if "://" in text:
        text = _USERINFO.sub(rf"\1{MASK}@", text)
    if "=" in text and ("?" in text or "&" in text):
        text = _QUERY_VALUE.sub(_mask_query_value, text)
    return text


def _mask_query_value(match: re.Match[str]) -> str:
    return f"{match.group(1)}{MASK}" if is_sensitive_param(match.group(2)) else match.group(0)


# Loggers of the libraries under the client that print request URLs or error bodies.
LIBRARY_LOGGERS = (
    "httpx2",
    "httpx",
    "openai",
    "openai._base_client",
    "instructor",
    "instructor.v2",
    "instructor.v2.retry",
    "instructor.v2.patch",
)


class RedactingFilter(logging.Filter):
    """Masks credential-shaped text (URL user-info, ``?api-key=`` values, ``sk-`` keys) and the
    registered secrets in every record of the logger it is attached to."""

    def __init__(self) -> None:
        super().__init__()
        self.secrets: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: the handler reports it, the filter must not raise
            return True
        cleaned = redact(message, self.secrets)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        if record.exc_info and not record.exc_text:  # tracebacks quote the URL too
            record.exc_text = logging.Formatter().formatException(record.exc_info)
            record.exc_info = None
        if record.exc_text:
            record.exc_text = redact(record.exc_text, self.secrets)
        return True


_FILTER = RedactingFilter()


def redact_library_logs(secrets: Iterable[str] = ()) -> None:
    """Attach the redacting filter to :data:`LIBRARY_LOGGERS` (once) and register ``secrets``."""
    _FILTER.secrets.update(s for s in secrets if s and len(s) >= MIN_SECRET_LEN and s not in NOT_SECRETS)
    for name in LIBRARY_LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)


def redact_handler(handler: logging.Handler) -> logging.Handler:
    """``handler`` with the redacting filter attached: every record it writes is masked, whichever
    logger emitted it (a filter on a logger sees only that logger's own records)."""
    if _FILTER not in handler.filters:
        handler.addFilter(_FILTER)
    return handler


def redact_argv(argv: list[str]) -> list[str]:
    """A command line as it may be stored (``run.json``): URLs stripped of credentials, secrets
    masked, and the value of ``--api-key``/``--key``/``--token`` hidden. The credentials of every
    URL given (``--base-url=URL`` too) are masked wherever they appear, also where their shape is
    no URL's (a password with a space, a user-info without ``//``)."""
    values = [arg.partition("=")[2] if arg.startswith("-") else arg for arg in argv]
    secrets = [secret for value in values for secret in url_secrets(value)]
    out: list[str] = []
    hide_next = False
    for arg in argv:
        if hide_next:
            out.append(MASK)
            hide_next = False
            continue
        name, eq, value = arg.partition("=")
        if name in {"--api-key", "--key", "--token"}:
            out.append(f"{name}={MASK}" if eq else name)
            hide_next = not eq
            continue
        out.append(redact(arg, secrets))
    return out


# Installed on import: the preflight, the doctor and any other request made before a client opens
# its session log through these loggers too.
redact_library_logs()
