"""Is the LLM client ever the bottleneck? Requests/s and per-call overhead against a slow server.

Usage: ``python bench/perf/llm_overhead.py [--delay 0.2] [--levels 1,8,32,64] [--calls-per-worker 8]``

Starts ``python -m pageindex.llm.testing`` (an OpenAI-compatible server that answers every chat
request after ``--delay`` seconds) in a subprocess, then for each concurrency level c runs c workers
through one ``LLMClient`` (``concurrency=c``), each making ``--calls-per-worker`` sequential
``chat()`` calls. Prints requests/s against the ideal ``c / delay`` and the overhead per call
(wall time of ``chat()`` minus the server delay; it includes the local network and the test
server's own work) and the client process's CPU time per call. Two reference rows at the target
level: a plain ``httpx2`` POST loop (the floor for network + server cost without any client logic),
and the client with an in-process transport that sleeps ``--delay`` (no sockets, no server: the
client's own overhead alone).

Two overhead figures per row: *wall* (latency minus the server delay: client + network + the test
server + waiting for a core) and *client CPU* (CPU seconds this process spent per call: the
client's own cost, whatever the machine is doing). Because the wall figure depends on the load of
the machine, every row also prints how busy the machine's cores were while it ran (from
``/proc/stat``) and how much of that was *other* processes (not this client, not the test
server), plus the load average before and after. Target: at c=32 and 200 ms, >= 90% of 160 rps
and < 2 ms overhead per call; exit status 1 if the c=32 row misses the throughput or the wall
overhead target.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import time

import httpx2
import typer
from rich.console import Console
from rich.table import Table

from pageindex.cli._common import fail
from pageindex.llm import Message, make_client
from pageindex.llm.wire import completion_body

console = Console(width=200)
TARGET_LEVEL = 32


def machine_cpu_s() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine since boot, over all cores (Linux /proc/stat)."""
    fields = [int(v) for v in open("/proc/stat").readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    tick = os.sysconf("SC_CLK_TCK")
    return (sum(fields) - idle) / tick, sum(fields) / tick


def load_text() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} / {five:.2f} / {fifteen:.2f} (1/5/15 min) on {os.cpu_count()} cores"


def process_cpu_s(pid: int) -> float:
    """User + system CPU seconds of another process (Linux /proc)."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_server(delay: float) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "pageindex.llm.testing", "--delay", str(delay)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if not line.startswith("listening on "):
        proc.kill()
        raise SystemExit(f"test server did not start: {line!r}")
    return proc, line.removeprefix("listening on ")


class CannedTransport(httpx2.AsyncBaseTransport):
    """Answers in-process after ``delay`` seconds: no sockets, no server process."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        reply = completion_body(model="bench-model", content="ok", prompt_tokens=9, completion_tokens=1)
        self.body = json.dumps(reply).encode()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        await request.aread()
        await asyncio.sleep(self.delay)
        headers = {"content-type": "application/json"}
        return httpx2.Response(200, content=self.body, headers=headers, request=request)


async def run_client(
    base_url: str,
    level: int,
    calls: int,
    transport: httpx2.AsyncBaseTransport | None = None,
    stagger: float = 0.0,
) -> tuple[float, list[float], float]:
    """``stagger``: worker w starts ``stagger * w / level`` seconds late, so replies arrive spread
    over the server delay instead of in bursts of ``level`` (the timed window starts once all run)."""
    client = make_client(
        "openai/bench-model",
        base_url=base_url,
        api_key="bench",
        concurrency=level,
        max_retries=0,
        timeout=30,
        transport=transport,
    )
    await client.chat([Message(role="user", content="warm up")])
    latencies: list[float] = []

    async def worker(w: int) -> None:
        await asyncio.sleep(stagger * w / level)
        for i in range(calls):
            started = time.perf_counter()
            await client.chat([Message(role="user", content=f"question {w}-{i}: what was revenue?")])
            latencies.append(time.perf_counter() - started)

    started, cpu_started = time.perf_counter(), time.process_time()
    await asyncio.gather(*(worker(w) for w in range(level)))
    wall = time.perf_counter() - started - stagger * (level - 1) / level / 2  # mean start delay
    return wall, latencies, time.process_time() - cpu_started


async def run_raw(base_url: str, level: int, calls: int) -> tuple[float, list[float], float]:
    """The same load with bare HTTP posts: the floor for network + test-server cost."""
    limits = httpx2.Limits(max_connections=1000, max_keepalive_connections=100)
    async with httpx2.AsyncClient(base_url=base_url, limits=limits, timeout=30) as http:
        latencies: list[float] = []

        async def post(text: str) -> None:
            body = {
                "model": "bench-model",
                "messages": [{"role": "user", "content": text}],
                "temperature": 0.0,
            }
            response = await http.post(
                "/chat/completions",
                content=json.dumps(body),
                headers={"Authorization": "Bearer bench", "Content-Type": "application/json"},
            )
            response.json()

        await post("warm up")

        async def worker(w: int) -> None:
            for i in range(calls):
                started = time.perf_counter()
                await post(f"question {w}-{i}: what was revenue?")
                latencies.append(time.perf_counter() - started)

        started, cpu_started = time.perf_counter(), time.process_time()
        await asyncio.gather(*(worker(w) for w in range(level)))
        return time.perf_counter() - started, latencies, time.process_time() - cpu_started


def _levels(given: str) -> list[int]:
    """The concurrency levels of ``--levels``, or exit 2 with one error line."""
    parts = [part.strip() for part in given.split(",")]
    if not all(part.isdigit() and int(part) > 0 for part in parts):
        fail(f"--levels {given!r}: give whole numbers above 0, comma-separated, e.g. 1,8,32,64")
    return [int(part) for part in parts]


def main(
    delay: float = typer.Option(0.2, min=0.001, help="Server delay per reply, seconds."),
    levels: str = typer.Option("1,8,32,64", help="Comma-separated concurrency levels."),
    calls_per_worker: int = typer.Option(
        25, min=1, help="Sequential calls each worker makes (enough to reach a steady state)."
    ),
) -> None:
    concurrency = _levels(levels)  # before the server starts: --levels 0 waited for ever
    proc, base_url = start_server(delay)
    table = Table(
        "client",
        "c",
        "calls",
        "req/s",
        "ideal",
        "% ideal",
        "wall overhead mean / p50 / p95 ms",
        "client CPU ms/call",
        "server CPU ms/call",
        "machine busy (of all cores)",
        "other processes (cores)",
        title=f"LLM client against a {delay * 1000:.0f} ms server ({base_url})",
    )
    load_before = load_text()
    missed = False
    verdict = ""
    try:
        rows = [("LLMClient", level) for level in concurrency]
        rows += [
            ("LLMClient staggered", TARGET_LEVEL),
            ("raw httpx2", TARGET_LEVEL),
            ("LLMClient in-process", TARGET_LEVEL),
        ]
        for name, level in rows:
            server_started = process_cpu_s(proc.pid)
            busy_started, total_started = machine_cpu_s()
            if name == "raw httpx2":
                run = run_raw(base_url, level, calls_per_worker)
            elif name == "LLMClient":
                run = run_client(base_url, level, calls_per_worker)
            elif name == "LLMClient staggered":
                run = run_client(base_url, level, calls_per_worker, stagger=delay)
            else:
                run = run_client(base_url, level, calls_per_worker, CannedTransport(delay))
            wall, latencies, cpu_s = asyncio.run(run)
            busy_now, total_now = machine_cpu_s()
            busy, total = busy_now - busy_started, total_now - total_started
            server_s = process_cpu_s(proc.pid) - server_started
            cores = os.cpu_count() or 1
            # busy/total is the share of all cores; "other" is what neither side of the benchmark used
            # (the client's CPU is measured over the timed part only, so this slightly overstates it).
            other_cores = max(busy - server_s - cpu_s, 0.0) / max(total, 1e-9) * cores
            cpu_ms = cpu_s * 1000 / len(latencies)
            server_ms = server_s * 1000 / (len(latencies) + 1)
            rps = len(latencies) / wall
            ideal = level / delay
            overhead = [(lat - delay) * 1000 for lat in latencies]
            mean = statistics.fmean(overhead)
            p50 = statistics.median(overhead)
            p95 = statistics.quantiles(overhead, n=20)[-1] if len(overhead) >= 20 else max(overhead)
            table.add_row(
                name,
                str(level),
                str(len(latencies)),
                f"{rps:.1f}",
                f"{ideal:.0f}",
                f"{100 * rps / ideal:.1f}%",
                f"{mean:.2f} / {p50:.2f} / {p95:.2f}",
                f"{cpu_ms:.2f}",
                f"{server_ms:.2f}",
                f"{100 * busy / max(total, 1e-9):.0f}%",
                f"{other_cores:.2f}",
            )
            if name == "LLMClient" and level == TARGET_LEVEL:
                missed = rps < 0.9 * ideal or mean >= 2.0
                verdict = (
                    f"c={level}: {rps:.1f} req/s (target >= {0.9 * ideal:.0f}), "
                    f"wall overhead {mean:.2f} ms/call (target < 2 ms), "
                    f"client CPU {cpu_ms:.2f} ms/call"
                )
            elif name != "LLMClient":
                verdict += f"; {name}: {rps:.1f} req/s, wall overhead {mean:.2f} ms, CPU {cpu_ms:.2f} ms/call"
    finally:
        proc.terminate()
        proc.wait(10)
    console.print(table)
    console.print(f"machine before: {load_before}; after: {load_text()}", highlight=False)
    console.print(
        "wall overhead = latency - server delay (client + sockets + test server + waiting for a core); "
        "client CPU = this process's CPU per call; 'other processes' = cores busy with neither.",
        highlight=False,
    )
    if TARGET_LEVEL in [int(level) for level in levels.split(",")]:
        console.print(("[red]MISSED[/] " if missed else "[green]OK[/] ") + verdict, highlight=False)
    raise typer.Exit(1 if missed else 0)


if __name__ == "__main__":
    typer.run(main)
