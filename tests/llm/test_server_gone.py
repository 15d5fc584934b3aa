"""A server that dies while it computes a reply (a llama.cpp server killed mid-answer): the call's error
says the server took the request and went away, not "cannot connect"; a server that is not there says
"connection refused". A real socket on 127.0.0.1 that accepts one request and closes (or resets) it, then
stops listening, so the retries that follow are refused as by a killed server."""

from __future__ import annotations

import asyncio
import socket
import struct
import threading

import pytest

from pageindex.llm import LLMCallError, Message, check_reachable, make_client, parse_spec


class DyingServer:
    """Accepts one connection, reads the request, stops listening, then closes the connection without
    a reply (``reset=True``: with a TCP reset, as a killed process's socket may be)."""

    def __init__(self, *, reset: bool = False) -> None:
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(1)
        self.port = self.listener.getsockname()[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.reset = reset
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        conn, _ = self.listener.accept()
        data = b""
        while b"\r\n\r\n" not in data:
            data += conn.recv(65536)
        head, _, body = data.partition(b"\r\n\r\n")
        length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                       if line.lower().startswith(b"content-length:")), 0)  # fmt: skip
        while len(body) < length:  # the whole request: closing with unread bytes is a reset on Linux
            body += conn.recv(65536)
        self.listener.close()  # gone: every later connection is refused
        if self.reset:
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        conn.close()


def _chat(base_url: str, max_retries: int = 2):
    client = make_client("openai/m", base_url=base_url, api_key="k", max_retries=max_retries, timeout=10)
    return asyncio.run(client.chat([Message(role="user", content="hi")]))


def _refusing_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


@pytest.mark.parametrize(
    ("reset", "first"),
    [
        (False, "the server closed the connection without replying"),
        (True, "the server reset the connection before its reply was complete"),
    ],
)
def test_a_server_that_dies_mid_answer_is_said_so_not_cannot_connect(reset, first):
    server = DyingServer(reset=reset)
    with pytest.raises(LLMCallError) as caught:
        _chat(server.base_url)
    message = str(caught.value)
    assert caught.value.kind == "connection"
    assert message == (
        f"openai/m at {server.base_url}: no reply: {first} (attempt 1), then connection refused "
        "(attempts 2-3): the server went away during the call"
    )
    assert "\n" not in message


def test_a_server_that_is_not_there_is_connection_refused():
    url = _refusing_url()
    with pytest.raises(LLMCallError) as caught:
        _chat(url, max_retries=1)
    assert str(caught.value) == f"openai/m at {url}: cannot connect: connection refused (all 2 attempts)"


def test_the_preflight_says_connection_refused():
    url = _refusing_url()
    with pytest.raises(Exception) as caught:
        check_reachable(parse_spec("openai/m", base_url=url, api_key="k"), timeout=5)
    assert str(caught.value) == f"cannot reach openai/m at {url}: connection refused"


def test_whether_a_connection_was_made_is_a_field_not_read_back_from_the_words():
    """``connected`` and ``went_away`` are facts of the attempts, whatever words say them: the call's
    error is "no reply" once any attempt reached the server, "cannot connect" when none did."""
    import httpx2

    from pageindex.llm.http import connection_failures, transport_failure

    refused = httpx2.ConnectError("All connection attempts failed")
    refused.__cause__ = ConnectionRefusedError(111, "Connection refused")
    cut = httpx2.RemoteProtocolError("Server disconnected without sending a response.")
    assert transport_failure(refused).model_dump() == {"said": "connection refused", "connected": False}
    assert transport_failure(cut).model_dump() == {
        "said": "the server closed the connection without replying", "connected": True}  # fmt: skip
    odd = {"outcome": "connection", "error": "refused by a proxy", "connected": True}  # words that mislead
    none = {"outcome": "connection", "error": "no route to host", "connected": False}
    assert connection_failures([odd]).model_dump() == {
        "said": "refused by a proxy (1 attempt)", "connected": True, "went_away": False}  # fmt: skip
    gone = connection_failures([{"outcome": "http_503"}, none, none])
    assert (gone.connected, gone.went_away) == (True, True)
    assert gone.said == "no route to host (attempts 2-3): the server went away during the call"
    never = connection_failures([none, none])
    assert (never.connected, never.went_away) == (False, False)
    assert never.said == "no route to host (all 2 attempts)"
    assert connection_failures([{"outcome": "http_500"}]) is None
