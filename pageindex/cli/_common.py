"""Helpers shared by CLI modules: one console, one way to report a fatal error."""

from __future__ import annotations

import os
from typing import Any, NoReturn

import typer
from rich.console import Console

console = Console(soft_wrap=True)  # long lines are not hard-wrapped (logs, pipes, tests)
err_console = Console(stderr=True, soft_wrap=True)
SCRIPTED_POLICY_ENV = "PAGEINDEX_SCRIPTED_POLICY"


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one clear error line and exit with ``code`` (2 = bad input)."""
    err_console.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def scripted_client(policy_spec: str | None, *, role: str = "retriever", **kwargs: Any) -> Any:
    """A client answering from a scripted policy (``--model scripted``). The policy is
    ``module:function`` / ``file.py:function`` (a function of a ScriptedRequest, or a
    ScriptedModel) or ``$PAGEINDEX_SCRIPTED_POLICY``."""
    from pageindex.llm import ScriptedModel, make_client
    from pageindex.llm.scripted import load_policy

    spec = policy_spec or os.environ.get(SCRIPTED_POLICY_ENV)
    if not spec:
        fail(f"--model scripted needs --scripted-policy module:function (or ${SCRIPTED_POLICY_ENV})")
    try:
        policy = load_policy(spec)
    except ValueError as exc:
        fail(str(exc))
    scripted = policy if isinstance(policy, ScriptedModel) else ScriptedModel(policy=policy)
    return make_client("scripted", role=role, scripted=scripted, **kwargs)


def model_client(
    model: str,
    *,
    role: str = "retriever",
    base_url: str | None = None,
    scripted_policy: str | None = None,
    json_mode: bool = False,
    **settings: Any,
) -> Any:
    """The client for ``--model``; for a real server, checked reachable before any work starts
    (one clear line naming the model and URL, never the key, and exit 2 otherwise). ``settings``
    go to ``make_client`` (timeout, max_retries, concurrency, retry_timeouts, context_window)."""
    import asyncio

    from pageindex.llm import LLMError, make_client

    if model == "scripted":
        return scripted_client(scripted_policy, role=role, json_mode=json_mode, **settings)
    try:
        client = make_client(model, role=role, base_url=base_url, json_mode=json_mode, **settings)
        asyncio.run(client.check())
    except LLMError as exc:
        fail(str(exc))
    return client
