"""Both fake OpenAI servers (the scripted test server and the fault server) share one base:
same loopback rule, same ``/v1/models`` shape, same 401 for a wrong key."""

from __future__ import annotations

import httpx
import pytest

from bench.faults import FaultServer
from bench.faults import NonLoopbackError as BenchNonLoopbackError
from bench.faults.server import ensure_loopback as bench_ensure_loopback
from pageindex.llm.fakeserver import LoopbackServer, NonLoopbackError, ensure_loopback
from pageindex.llm.scripted import ScriptedModel
from pageindex.llm.testing import FakeOpenAIServer

KEY = "sk-right-key"
WRONG = "sk-WRONG-key-1234"


def servers(**kwargs):
    return [
        FakeOpenAIServer(ScriptedModel(replies=["hi"], name="scripted-model"), **kwargs),
        FaultServer(**kwargs),
    ]


def test_both_servers_are_loopback_servers_and_old_imports_still_work():
    assert all(isinstance(server, LoopbackServer) for server in servers())
    assert BenchNonLoopbackError is NonLoopbackError and bench_ensure_loopback is ensure_loopback


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.20", "example.com"])
def test_both_refuse_a_non_loopback_host_with_the_same_error(host):
    messages = []
    for cls in (FakeOpenAIServer, FaultServer):
        with pytest.raises(NonLoopbackError) as info:
            cls(host=host)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert (
        messages[0].startswith(f"refusing to bind {host!r}:") and "127.0.0.1, ::1 or localhost" in messages[0]
    )


def test_both_accept_localhost_and_ipv6_loopback():
    for server in servers(host="localhost"):
        assert server.host == "127.0.0.1"
    for server in servers(host="::1"):
        with server:
            assert server.base_url == f"http://[::1]:{server.port}/v1"
            assert httpx.get(f"{server.base_url}/models").status_code == 200


def test_both_list_models_in_the_same_shape():
    fake, fault = servers()
    with fake, fault:
        listings = [httpx.get(f"{server.base_url}/models").json() for server in (fake, fault)]
    assert listings[0] == {
        "object": "list",
        "data": [{"id": "scripted-model", "object": "model", "created": 0, "owned_by": "pageindex"}],
    }
    assert listings[1] == {
        "object": "list",
        "data": [{"id": "fault-model", "object": "model", "created": 0, "owned_by": "bench"}],
    }


def test_both_answer_a_wrong_key_with_the_same_401():
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    fake, fault = servers(require_key=KEY)
    with fake, fault:
        for server in (fake, fault):
            wrong = {"Authorization": f"Bearer {WRONG}"}
            for response in (
                httpx.get(f"{server.base_url}/models", headers=wrong),
                httpx.post(f"{server.base_url}/chat/completions", json=body, headers=wrong),
                httpx.post(f"{server.base_url}/chat/completions", json=body),  # no key at all
            ):
                assert response.status_code == 401
                got = WRONG if "Authorization" in response.request.headers else ""
                assert response.json() == {
                    "error": {
                        "message": f"Incorrect API key provided: {got}",
                        "type": "invalid_request_error",
                        "param": None,
                        "code": "invalid_api_key",
                    }
                }
            right = {"Authorization": f"Bearer {KEY}"}
            assert httpx.get(f"{server.base_url}/models", headers=right).status_code == 200
            assert (
                httpx.post(f"{server.base_url}/chat/completions", json=body, headers=right).status_code == 200
            )
        assert [e["status"] for e in fake.exchanges] == [401, 401, 401, 200, 200]
        stats = fault.stats()
        assert stats.chat_requests == 1  # a refused request never reaches the fault layer ...
        assert stats.by_status == {"401": 3, "200": 2}  # ... but it is counted
        assert httpx.get(f"{fault.url}/stats").status_code == 200  # /stats needs no key


def test_stop_then_the_port_is_free_and_start_is_idempotent():
    fake, fault = servers()
    for server in (fake, fault):
        assert server.start() is server.start()
        port = server.port
        assert port > 0 and httpx.get(f"{server.base_url}/models").status_code == 200
        server.stop()
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"{server.base_url}/models")
        server.stop()  # stopping twice is harmless
