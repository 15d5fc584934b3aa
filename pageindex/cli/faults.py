"""``pageindex bench fault-server``: the fault-injecting model server as a command."""

from __future__ import annotations

import threading

import typer

from pageindex.cli._common import console, fail


def register(app: typer.Typer, bench: typer.Typer) -> None:
    @bench.command("fault-server")
    def fault_server(
        host: str = typer.Option("127.0.0.1", help="Loopback address to bind (127.0.0.1, ::1 or localhost)."),
        port: int = typer.Option(8089, help="Port to listen on (0 = any free port)."),
        rate: float = typer.Option(0.3, help="Probability that a chat request gets a fault (0..1)."),
        faults: str = typer.Option(
            "all",
            help="Comma-separated fault kinds, optionally with their own rate (stall=0.05). Kinds: 429, "
            "429-bare, 500, 502, 503, reset, stall, truncated, wrong_shape, unknown_tool, bad_args, "
            "bad_section, needs_more; groups: all, http, 5xx, tools.",
        ),
        seed: int = typer.Option(0, help="Seed of the fault choice; same seed, same faults per request."),
        stall_seconds: float = typer.Option(90.0, help="How long a 'stall' fault waits before answering."),
        retry_after: float = typer.Option(1.0, help="Seconds announced by a 429's Retry-After header."),
        echo_key: bool = typer.Option(
            False, help="Put the caller's API key into error messages (to test that results redact it)."
        ),
    ) -> None:
        """Run an OpenAI-compatible model server on loopback that injects faults, until Ctrl-C."""
        from bench.faults import FaultConfig, FaultServer, NonLoopbackError, parse_faults

        try:
            parsed = parse_faults(faults)
            config = FaultConfig(
                rate=rate,
                faults=[k for k, r in parsed.items() if r is None],
                rates={k: r for k, r in parsed.items() if r is not None},
                seed=seed,
                stall_seconds=stall_seconds,
                retry_after_seconds=retry_after,
                echo_api_key=echo_key,
            )
            server = FaultServer(config=config, host=host, port=port)
            server.start()
        except NonLoopbackError as exc:
            fail(str(exc))
        except (ValueError, OSError) as exc:
            fail(f"cannot start the fault server: {exc}".replace("\n", " "))
        kinds = ", ".join(f"{k.value}={w:.3f}" for k, w in config.weights().items())
        console.print(f"fault server listening on [bold]{server.base_url}[/] (Ctrl-C to stop)")
        console.print(f"fault rate {rate:g}, seed {seed}: {kinds}", highlight=False)
        console.print(f"stats: {server.url}/stats", highlight=False)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass
        finally:
            server.stop()
            console.print(f"stopped; {server.stats().summary_line()}", highlight=False)
