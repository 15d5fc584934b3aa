"""A real OpenAI-compatible HTTP server on 127.0.0.1 for tests and benchmarks.

``FakeOpenAIServer`` is a thin user of the shared fake-server base
(:mod:`pageindex.llm.fakeserver`: the loopback socket in a daemon thread, ``GET /v1/models``, the
``require_key`` check and the JSON shapes). What it adds: ``POST /v1/chat/completions`` answered
from a :class:`ScriptedModel` (queued replies or a policy; ``ScriptedModel.http_error(429,
retry_after=0.1)``, ``ScriptedModel.timeout()`` and delays work over the wire), ``delay_s`` before
every reply, and a record of every HTTP exchange in ``.exchanges`` (path, headers, body, status,
reply). With ``require_key`` it answers 401 to any other key -- and, like some real servers,
echoes the key it got in the error body, so tests can check the client never repeats it.

    with FakeOpenAIServer(ScriptedModel(replies=["hi"])) as server:
        client = make_client("openai/test-model", base_url=server.base_url, api_key="k")

Run standalone (used by ``bench/perf/llm_overhead.py``)::

    python -m pageindex.llm.testing --delay 0.2 --port 8765
"""

from __future__ import annotations

import argparse
import asyncio
import threading
from typing import Any

from aiohttp import web

from pageindex.llm import wire
from pageindex.llm.fakeserver import LoopbackServer, NonLoopbackError, openai_app
from pageindex.llm.scripted import ScriptedModel

TIMEOUT_SLEEP_S = 30.0  # how long a scripted "timeout" reply keeps the client waiting


class Exchange(dict):
    """One HTTP exchange the server saw: ``path``, ``headers``, ``body``, ``status`` and ``reply`` (the
    text of an error reply, else None)."""


class FakeOpenAIServer(LoopbackServer):
    """A :class:`LoopbackServer` answering chat requests from a :class:`ScriptedModel`."""

    shutdown_timeout = 0.1

    def __init__(
        self,
        scripted: ScriptedModel | None = None,
        *,
        delay_s: float = 0.0,
        require_key: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        super().__init__(host=host, port=port, require_key=require_key)
        self.scripted = scripted if scripted is not None else ScriptedModel(policy=lambda request: "ok")
        self.delay_s = delay_s
        self.exchanges: list[Exchange] = []

    @property
    def chat_requests(self) -> list[Exchange]:
        return [e for e in self.exchanges if e["path"].endswith("/chat/completions")]

    def build_app(self) -> web.Application:
        return openai_app(
            chat=self._chat,
            models=lambda: [wire.model_entry(self.scripted.name)],
            require_key=lambda: self.require_key,
            middlewares=[self._record],
        )

    @web.middleware
    async def _record(self, request: web.Request, handler: Any) -> web.StreamResponse:
        body = await request.json() if request.method == "POST" else None
        exchange = Exchange(path=request.path, headers=dict(request.headers), body=body)
        self.exchanges.append(exchange)
        response = await handler(request)
        exchange["status"] = response.status
        failed = isinstance(response, web.Response) and response.status >= 400
        exchange["reply"] = response.text if failed else None
        return response

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        headers = {k.lower(): v for k, v in request.headers.items()}
        reply = await self.scripted.respond(body, headers)
        delay = self.delay_s + reply.delay_s + (TIMEOUT_SLEEP_S if reply.timeout else 0.0)
        if delay:
            await asyncio.sleep(delay)
        if reply.raise_error is not None:
            message = f"{type(reply.raise_error).__name__}: {reply.raise_error}"
            return web.json_response(wire.error_body(message, kind="server_error"), status=500)
        return web.Response(
            status=reply.status,
            headers=reply.headers,
            body=reply.content(),
            content_type="application/json",
        )


def main() -> None:
    parser = argparse.ArgumentParser(description="Serve a fake OpenAI-compatible endpoint answering 'ok'.")
    parser.add_argument("--host", default="127.0.0.1", help="loopback address to bind")
    parser.add_argument("--port", type=int, default=0, help="port (0 = any free port)")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds to wait before every reply")
    args = parser.parse_args()
    try:
        server = FakeOpenAIServer(delay_s=args.delay, host=args.host, port=args.port).start()
    except NonLoopbackError as exc:
        parser.error(str(exc))
    print(f"listening on {server.base_url}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
