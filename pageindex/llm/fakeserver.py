"""The one fake OpenAI-compatible HTTP server base, shared by every fake server in the project.

Three layers, each adding to the one before:

* :mod:`pageindex.llm.wire` -- the JSON: ``chat.completion`` bodies, error bodies (including the
  401 for a wrong key), the ``/v1/models`` listing. Pure data.
* this module -- the server: :class:`LoopbackServer` runs an aiohttp app on a loopback-only socket
  in a daemon thread (``start``/``stop``/``with``, ``port``, ``url``, ``base_url``; any other host
  raises :class:`NonLoopbackError`), and :func:`openai_app` builds the OpenAI surface every fake
  server shares: ``POST /v1/chat/completions`` (handler supplied), ``GET /v1/models`` (entries
  supplied; ``None`` answers 404) and, with ``require_key``, the bearer-key check that answers any
  other key with HTTP 401 in the :func:`~pageindex.llm.wire.bad_key_body` shape. The same routes
  are also served without the ``/v1`` prefix.
* its users -- :class:`pageindex.llm.testing.FakeOpenAIServer` answers from a ``ScriptedModel`` and
  records every exchange; ``bench.faults.server.FaultServer`` injects faults, imitates model limits
  and adds ``/stats``. ``pageindex`` never imports ``bench``; the dependency runs one way.

    class EchoServer(LoopbackServer):
        def build_app(self):
            return openai_app(chat=self.chat, models=lambda: [wire.model_entry("echo")],
                              require_key=self.require_key)
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Self

from aiohttp import web

from pageindex.llm import wire

CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
MODELS_PATHS = ("/v1/models", "/models")
OPENAI_PATHS = frozenset(CHAT_PATHS + MODELS_PATHS)  # the paths the key check guards

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class NonLoopbackError(ValueError):
    """Raised when asked to bind anything but a loopback address."""


def ensure_loopback(host: str) -> str:
    """``host`` if it is a loopback address (``localhost`` -> ``127.0.0.1``), else raise."""
    if host.strip().lower() == "localhost":
        return "127.0.0.1"
    try:
        address = ipaddress.ip_address(host.strip().strip("[]"))
    except ValueError:
        raise NonLoopbackError(
            f"refusing to bind {host!r}: fake model servers only listen on loopback addresses "
            "(127.0.0.1, ::1 or localhost)"
        ) from None
    if not address.is_loopback:
        raise NonLoopbackError(
            f"refusing to bind {host!r}: it is not a loopback address; fake model servers only "
            "listen on 127.0.0.1, ::1 or localhost"
        )
    return str(address)


def bearer_key(request: web.Request) -> str | None:
    """The key of an ``Authorization: Bearer <key>`` header, or None."""
    header = request.headers.get("Authorization", "")
    return header[7:] if header.lower().startswith("bearer ") else None


def openai_app(
    *,
    chat: Handler,
    models: Callable[[], list[dict[str, Any]] | None],
    require_key: str | Callable[[], str | None] | None = None,
    middlewares: Iterable[Any] = (),
) -> web.Application:
    """The OpenAI surface every fake server shares (see the module docstring).

    ``models()`` gives the ``/v1/models`` entries (``None``: answer 404, a server without the
    listing). ``require_key`` may be a function, read on every request, so it can change while
    the server runs. ``middlewares`` run outside the key check, so they also see refused requests.
    """
    current_key = require_key if callable(require_key) else (lambda: require_key)

    @web.middleware
    async def check_key(request: web.Request, handler: Handler) -> web.StreamResponse:
        expected = current_key()
        if expected is not None and request.path in OPENAI_PATHS:
            got = bearer_key(request)
            if got != expected:
                return web.json_response(wire.bad_key_body(got), status=401)
        return await handler(request)

    async def list_models(request: web.Request) -> web.Response:
        entries = models()
        if entries is None:
            return web.json_response(wire.error_body("Not Found", kind="not_found_error"), status=404)
        return web.json_response(wire.models_body(entries))

    app = web.Application(middlewares=[*middlewares, check_key], client_max_size=64 * 1024 * 1024)
    for path in CHAT_PATHS:
        app.router.add_post(path, chat)
    for path in MODELS_PATHS:
        app.router.add_get(path, list_models)
    return app


class LoopbackServer:
    """Runs :meth:`build_app` on a loopback port in a daemon thread. ``port=0`` picks a free port.

    Subclasses implement :meth:`build_app` (usually with :func:`openai_app`) and may override
    :meth:`closing` (called on the server's loop when ``stop()`` begins, before open requests are
    cancelled after ``shutdown_timeout`` seconds).
    """

    name = "fake-openai-server"  # the thread's name and how errors call the server
    shutdown_timeout = 1.0

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, require_key: str | None = None) -> None:
        self.host = ensure_loopback(host)
        self.port = port
        self.require_key = require_key
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop_event: asyncio.Event | None = None
        self._started = threading.Event()
        self._error: BaseException | None = None

    # -- what subclasses provide ----------------------------------------------------------
    def build_app(self) -> web.Application:
        raise NotImplementedError

    def closing(self) -> None:
        """Hook: the server is stopping (runs on its loop)."""

    # -- addresses ------------------------------------------------------------------------
    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def base_url(self) -> str:
        """What to give an OpenAI client as ``base_url``."""
        return f"{self.url}/v1"

    # -- control --------------------------------------------------------------------------
    def start(self) -> Self:
        if self._thread is not None:
            return self
        self._started.clear()
        self._error = None
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()
        self._started.wait(timeout=10)
        if self._error is not None:
            self._thread = None
            raise self._error
        if not self._started.is_set():
            raise RuntimeError(f"{self.name} did not start within 10 s")
        return self

    def stop(self) -> None:
        loop, thread, stop_event = self._loop, self._thread, self._stop_event
        if loop is None or thread is None:
            return
        if thread.is_alive() and stop_event is not None:
            loop.call_soon_threadsafe(stop_event.set)
        thread.join(timeout=10)
        self._thread = None

    def wait_for(self, ready: Callable[[], bool], timeout_s: float = 30.0) -> bool:
        """Wait until ``ready()`` holds (True), at most ``timeout_s`` (then False). A server sees a
        request when its handler starts, on the server's own thread: one a client wrote just before it
        cut the call (a time limit, a failed ``build --summaries`` cancelling its other sections) is
        seen a moment after the client returned, so a test waits for what it expects the server saw,
        then asserts on what it did see."""
        deadline = time.monotonic() + timeout_s
        while not (done := ready()) and time.monotonic() < deadline:
            time.sleep(0.01)
        return done

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- the thread -----------------------------------------------------------------------
    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self._serve())
        except BaseException as exc:  # surfaced to start()
            self._error = exc
            self._started.set()
        finally:
            # Handlers still open after the runner's cleanup (a stalled request) are cancelled
            # and awaited here, as asyncio.run does, so none is destroyed while pending.
            pending = asyncio.all_tasks(loop)
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.close()

    async def _serve(self) -> None:
        self._stop_event = asyncio.Event()
        runner = web.AppRunner(
            self.build_app(), access_log=None, shutdown_timeout=self.shutdown_timeout, handle_signals=False
        )
        await runner.setup()
        try:
            sock = _bind(self.host, self.port)
            self.port = sock.getsockname()[1]
            await web.SockSite(runner, sock, backlog=1024).start()
            self._started.set()
            await self._stop_event.wait()
            self.closing()
        finally:
            await runner.cleanup()


def _bind(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock
