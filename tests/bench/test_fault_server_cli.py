"""``pageindex bench fault-server``: loopback only, runs until Ctrl-C, prints a stats line."""

from __future__ import annotations

import re
import signal

import httpx
import pytest
from typer.testing import CliRunner

from bench.faults import FaultServer, NonLoopbackError, ensure_loopback
from pageindex.cli import app
from tests.bench.fault_cli import serve_until_ctrl_c


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "10.0.0.1", "example.com", ""])
def test_non_loopback_hosts_are_refused(host: str):
    with pytest.raises(NonLoopbackError, match="loopback"):
        FaultServer(host=host)
    result = CliRunner().invoke(app, ["bench", "fault-server", "--host", host, "--port", "0"])
    assert result.exit_code == 2
    assert "refusing to bind" in result.output and "Traceback" not in result.output


@pytest.mark.parametrize(
    ("host", "bound"), [("localhost", "127.0.0.1"), ("127.0.0.1", "127.0.0.1"), ("::1", "::1")]
)
def test_loopback_hosts_are_accepted(host: str, bound: str):
    assert ensure_loopback(host) == bound


def test_ipv6_loopback_serves():
    with FaultServer(host="::1") as srv:
        assert srv.base_url.startswith("http://[::1]:")
        assert httpx.get(f"{srv.base_url}/models").json()["data"][0]["id"] == "fault-model"


def test_unknown_fault_kind_is_a_clear_error():
    result = CliRunner().invoke(app, ["bench", "fault-server", "--faults", "429,teapot", "--port", "0"])
    assert result.exit_code == 2
    assert "unknown fault kind 'teapot'" in result.output


def test_runs_until_ctrl_c_and_prints_stats():
    def work(base_url: str) -> None:
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        assert httpx.post(f"{base_url}/chat/completions", json=body).status_code == 503
        assert httpx.get(f"{base_url}/models").status_code == 200

    tail, status = serve_until_ctrl_c(["--rate", "1", "--faults", "503"], "503=1.000", work)
    assert "stopped; 2 requests (1 chat), 1 faults [503=1]" in tail
    assert status == 0  # Ctrl-C is a server's normal stop, as its --help says


def test_sigterm_stops_it_as_ctrl_c_does():
    """`kill PID` (SIGTERM: a CI step's clean-up, `timeout`, `docker stop`) is a server's normal stop
    too: the fault counts are printed and the exit status is 0 (trial: it died with 143, counts lost)."""

    def work(base_url: str) -> None:
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        assert httpx.post(f"{base_url}/chat/completions", json=body).status_code == 503

    args = ["--rate", "1", "--faults", "503"]
    tail, status = serve_until_ctrl_c(args, "503=1.000", work, stop=signal.SIGTERM)
    assert "stopped; 1 requests (1 chat), 1 faults [503=1]" in tail
    assert status == 0


def test_the_stop_line_lists_faults_whose_names_are_words():
    """The stop line's "[wrong_shape=1]" was read as a rich markup tag and dropped, leaving "1 faults ,
    1 distinct calls": only lists starting with an HTTP status ("[503=1]") were printed."""

    def work(base_url: str) -> None:
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        assert httpx.post(f"{base_url}/chat/completions", json=body).status_code == 200

    tail, _ = serve_until_ctrl_c(["--rate", "1", "--faults", "wrong_shape"], "wrong_shape=1.000", work)
    assert "stopped; 1 requests (1 chat), 1 faults [wrong_shape=1], 1 distinct calls" in tail


def test_its_help_gives_its_own_exit_codes():
    from typer.testing import CliRunner

    from pageindex.cli import app

    text = re.sub(r"[\s│]+", " ", CliRunner().invoke(app, ["bench", "fault-server", "--help"]).output)
    assert "Exit codes: 0 stopped by Ctrl-C or SIGTERM (a server's normal stop" in text


@pytest.mark.parametrize(
    "args,says",
    [
        (["--rate", "2"], "'--rate'"),
        (["--port", "80000"], "'--port'"),
        (["--stall-seconds", "-1"], "'--stall-seconds'"),
        (["--faults", "429=0.7,500=0.6"], "fault rates add up to more than 1"),
    ],
)
def test_bad_values_are_one_error_line_naming_what_is_wrong(args: list[str], says: str):
    """Never a pydantic dump or an 'internal error' (both happened for --rate 2 and --port 80000)."""
    result = CliRunner().invoke(app, ["bench", "fault-server", *args], terminal_width=200)
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2, result.output
    assert len(lines) == 1 and lines[0].startswith("error: ") and says in lines[0], result.output
    assert "pydantic" not in result.output and "internal error" not in result.output and "{" not in lines[0]
