"""The HTTP client under the OpenAI SDK: connection pool, and key redaction of error replies.

Some servers echo the API key they were given in their 401 body ("Incorrect API key provided:
sk-..."). The SDK puts that body into its exception text, and instructor logs it. To keep keys out
of every message and log, error replies (status >= 400) pass through :class:`RedactingTransport`,
which rewrites their body with the key (and anything shaped like an OpenAI key) masked. Successful
replies are passed on untouched.
"""

from __future__ import annotations

import httpx2

from pageindex.llm.spec import redact

# Same pool the SDK uses by default.
CONNECTION_LIMITS = httpx2.Limits(max_connections=1000, max_keepalive_connections=100)
_DROP_HEADERS = {"content-encoding", "content-length", "transfer-encoding"}


class RedactingTransport(httpx2.AsyncBaseTransport):
    def __init__(self, inner: httpx2.AsyncBaseTransport, secret: str | None) -> None:
        self.inner = inner
        self.secret = secret

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self.inner.handle_async_request(request)
        if response.status_code < 400:
            return response
        decoded = httpx2.Response(
            response.status_code, headers=response.headers, stream=response.stream, request=request
        )
        try:
            await decoded.aread()
        finally:
            await decoded.aclose()
        headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in _DROP_HEADERS]
        return httpx2.Response(
            response.status_code,
            headers=headers,
            content=redact(decoded.text, self.secret).encode(),
            request=request,
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


def make_http_client(
    secret: str | None, inner: httpx2.AsyncBaseTransport | None = None
) -> httpx2.AsyncClient:
    """An ``httpx2.AsyncClient`` for ``openai.AsyncOpenAI(http_client=...)``."""
    transport = inner if inner is not None else httpx2.AsyncHTTPTransport(limits=CONNECTION_LIMITS)
    return httpx2.AsyncClient(transport=RedactingTransport(transport, secret), follow_redirects=True)
