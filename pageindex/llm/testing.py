"""A real OpenAI-compatible HTTP server on 127.0.0.1 for tests and benchmarks.

``FakeOpenAIServer`` runs aiohttp in a background thread and answers ``POST /v1/chat/completions``
from a :class:`ScriptedModel` (queued replies or a policy; ``ScriptedModel.http_error(429,
retry_after=0.1)``, ``ScriptedModel.timeout()`` and delays work over the wire) and
``GET /v1/models``. Every HTTP exchange is recorded in ``.exchanges`` (path, headers, body, status).
With ``require_key`` it answers 401 to any other key -- and, like some real servers, echoes the
key it got in the error body, so tests can check the client never repeats it.

    with FakeOpenAIServer(ScriptedModel(replies=["hi"])) as server:
        client = make_client("openai/test-model", base_url=server.base_url, api_key="k")

Run standalone (used by ``bench/perf/llm_overhead.py``)::

    python -m pageindex.llm.testing --delay 0.2 --port 8765
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import threading
from typing import Any

from aiohttp import web

from pageindex.llm.scripted import ScriptedModel

TIMEOUT_SLEEP_S = 30.0  # how long a scripted "timeout" reply keeps the client waiting


class Exchange(dict):
    """One HTTP exchange the server saw: ``path``, ``headers``, ``body``, ``status``, ``reply`` (text)."""


class FakeOpenAIServer:
    def __init__(
        self,
        scripted: ScriptedModel | None = None,
        *,
        delay_s: float = 0.0,
        require_key: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.scripted = scripted if scripted is not None else ScriptedModel(policy=lambda request: "ok")
        self.delay_s = delay_s
        self.require_key = require_key
        self.host = host
        self.port = port
        self.exchanges: list[Exchange] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    @property
    def chat_requests(self) -> list[Exchange]:
        return [e for e in self.exchanges if e["path"].endswith("/chat/completions")]

    # ------------------------------------------------------------------ handlers
    def _app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        return app

    def _unauthorised(self, request: web.Request) -> web.Response | None:
        if self.require_key is None:
            return None
        got = request.headers.get("Authorization", "").removeprefix("Bearer ")
        if got == self.require_key:
            return None
        message = f"Incorrect API key provided: {got}"
        return web.json_response({"error": {"message": message, "type": "invalid_request_error"}}, status=401)

    async def _models(self, request: web.Request) -> web.Response:
        exchange = Exchange(path=request.path, headers=dict(request.headers), body=None)
        self.exchanges.append(exchange)
        denied = self._unauthorised(request)
        exchange["status"] = denied.status if denied else 200
        exchange["reply"] = denied.text if denied else None
        return denied or web.json_response({"object": "list", "data": [{"id": self.scripted.name}]})

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        exchange = Exchange(path=request.path, headers=dict(request.headers), body=body)
        self.exchanges.append(exchange)
        denied = self._unauthorised(request)
        if denied is not None:
            exchange["status"], exchange["reply"] = denied.status, denied.text
            return denied
        headers = {k.lower(): v for k, v in request.headers.items()}
        wire = await self.scripted.respond(body, headers)
        delay = self.delay_s + wire.delay_s + (TIMEOUT_SLEEP_S if wire.timeout else 0.0)
        if delay:
            await asyncio.sleep(delay)
        if wire.raise_error is not None:
            message = f"{type(wire.raise_error).__name__}: {wire.raise_error}"
            exchange["status"], exchange["reply"] = 500, message
            return web.json_response({"error": {"message": message}}, status=500)
        exchange["status"] = wire.status
        return web.Response(
            status=wire.status,
            headers=wire.headers,
            body=wire.content(),
            content_type="application/json",
        )

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> FakeOpenAIServer:
        self._thread = threading.Thread(target=self._serve, name="fake-openai-server", daemon=True)
        self._thread.start()
        if not self._ready.wait(10.0):
            raise RuntimeError("fake OpenAI server did not start within 10 s")
        if self._error is not None:
            raise RuntimeError(f"fake OpenAI server failed to start: {self._error}") from self._error
        return self

    def _serve(self) -> None:
        self._loop = asyncio.new_event_loop()
        try:
            self._loop.run_until_complete(self._startup())
        except BaseException as exc:  # report to start()
            self._error = exc
            self._ready.set()
            return
        self._ready.set()
        self._loop.run_forever()
        self._loop.run_until_complete(self._runner.cleanup() if self._runner else asyncio.sleep(0))
        self._loop.close()

    async def _startup(self) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self.port))
        self.port = sock.getsockname()[1]
        self._runner = web.AppRunner(self._app(), access_log=None, shutdown_timeout=0.1)
        await self._runner.setup()
        await web.SockSite(self._runner, sock).start()

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10.0)
        self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description="Serve a fake OpenAI-compatible endpoint answering 'ok'.")
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port (0 = any free port)")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds to wait before every reply")
    args = parser.parse_args()
    server = FakeOpenAIServer(delay_s=args.delay, host=args.host, port=args.port).start()
    print(f"listening on {server.base_url}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
