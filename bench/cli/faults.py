"""``pageindex bench fault-server``: the fault-injecting model server as a command."""

from __future__ import annotations

import signal
import threading

import typer

from bench.faults.limits import LIMIT_NAMES
from pageindex.cli._common import console, examples, fail, validation_message
from pageindex.wording import error_text

# FaultConfig's fields as the command's options, for one-line errors
_OPTIONS = {"retry_after_seconds": "--retry-after", "echo_api_key": "--echo-key", "rates": "--faults"}


def register(app: typer.Typer, bench: typer.Typer) -> None:
    @bench.command(
        "fault-server",
        help="Run an OpenAI-compatible model server on loopback that injects faults, until Ctrl-C.\n\n"
        "Exit codes: 0 stopped by Ctrl-C or SIGTERM (a server's normal stop; its fault counts are printed); "
        "2 a bad option or an address it cannot bind (nothing started).",
        epilog=examples(
            "pageindex bench fault-server --port 8089 --rate 0.3",
            "pageindex bench fault-server --faults 429,stall=0.05 --stall-seconds 5 --seed 1",
            "pageindex bench fault-server --rate 0 --lacks tools --context-window 8192",
        ),
    )
    def fault_server(
        host: str = typer.Option("127.0.0.1", help="Loopback address to bind (127.0.0.1, ::1 or localhost)."),
        port: int = typer.Option(8089, min=0, max=65535, help="Port to listen on (0 = any free port)."),
        rate: float = typer.Option(
            0.3, min=0.0, max=1.0, help="Probability that a chat request gets a fault (0..1)."
        ),
        faults: str = typer.Option(
            "all",
            help="Comma-separated fault kinds, optionally with their own rate (stall=0.05). Kinds: 429, "
            "429-bare, 500, 502, 503, reset, stall, truncated, wrong_shape, unknown_tool, bad_args, "
            "bad_section, needs_more; groups: all, http, 5xx, tools.",
        ),
        seed: int = typer.Option(0, help="Seed of the fault choice; same seed, same faults per request."),
        stall_seconds: float = typer.Option(
            90.0, min=0.0, help="How long a 'stall' fault waits before answering."
        ),
        retry_after: float = typer.Option(
            1.0, min=0.0, help="Seconds announced by a 429's Retry-After header."
        ),
        echo_key: bool = typer.Option(
            False, help="Put the caller's API key into error messages (to test that results redact it)."
        ),
        policy: str = typer.Option(
            "competent",
            help="How normal replies are made: competent (answers like a capable model), section-seeking, "
            "scripted, or module:function / file.py:function (a policy of a ChatRequest, or a "
            "--scripted-policy function).",
        ),
        lacks: str = typer.Option(
            "",
            help=f"Abilities the served model lacks, comma-separated: {', '.join(LIMIT_NAMES)}.",
        ),
        context_window: int | None = typer.Option(
            None, help="Reject prompts longer than this many tokens (listed as max_model_len in /models)."
        ),
    ) -> None:
        """Run an OpenAI-compatible model server on loopback that injects faults, until Ctrl-C."""
        from bench.faults import FaultConfig, FaultServer, NonLoopbackError, parse_faults
        from bench.faults.competent import resolve_policy
        from bench.faults.limits import ServerLimits

        try:
            chosen = resolve_policy(policy)
        except ValueError as exc:
            fail(f"--policy: {exc}".replace("\n", " "))
        except Exception as exc:  # a user policy module that fails on import
            fail(f"--policy {policy}: cannot load it: {error_text(exc)}")
        if context_window is not None and context_window < 16:
            fail(f"--context-window must be at least 16 tokens, not {context_window}")
        try:
            limits = ServerLimits.parse(lacks, context_window=context_window)
        except ValueError as exc:
            fail(str(exc).splitlines()[0])
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
            server = FaultServer(chosen, config=config, limits=limits, host=host, port=port)
            server.start()
        except NonLoopbackError as exc:
            fail(str(exc))
        except ValueError as exc:  # pydantic's ValidationError included: one line naming the option
            fail(f"cannot start the fault server: {validation_message(exc, _OPTIONS)}")
        except OSError as exc:
            fail(f"cannot start the fault server on {host}:{port}: {exc.strerror or exc}")
        kinds = ", ".join(f"{k.value}={w:.3f}" for k, w in config.weights().items())
        console.print(f"fault server listening on [bold]{server.base_url}[/] (Ctrl-C to stop)")
        console.print(f"fault rate {rate:g}, seed {seed}: {kinds}", highlight=False)
        console.print(f"policy {policy}; model {limits.describe()}", highlight=False)
        console.print(f"stats: {server.url}/stats", highlight=False)
        def _terminated(signum: int, frame: object) -> None:
            raise KeyboardInterrupt  # `kill PID` (a CI step's clean-up, docker stop) stops it as Ctrl-C does

        before = signal.signal(signal.SIGTERM, _terminated)
        try:
            idle = threading.Event()
            while not idle.wait(timeout=0.5):  # short waits: Ctrl-C is seen within half a second
                pass
        except KeyboardInterrupt:
            pass
        finally:
            signal.signal(signal.SIGTERM, before)
            server.stop()
            stats = server.stats()
            # as written: "[wrong_shape=1, ...]" reads as a markup tag, and rich dropped it
            console.print(f"stopped; {stats.summary_line()}", highlight=False, markup=False)
            console.print(faults_by_kind(stats.by_fault), highlight=False, markup=False)


def faults_by_kind(by_fault: dict[str, int]) -> str:
    """``faults by kind: 429 2, 503 1 (normal answers 7)`` -- the exit summary, every kind counted."""
    kinds = sorted((k, n) for k, n in by_fault.items() if k not in {"none", "bad_request"})
    listed = ", ".join(f"{k} {n}" for k, n in kinds) or "none"
    extra = f"normal answers {by_fault.get('none', 0)}"
    if by_fault.get("bad_request"):
        extra += f", rejected requests {by_fault['bad_request']}"
    return f"faults by kind: {listed} ({extra})"
