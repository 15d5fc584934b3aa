"""``pageindex ask FILE "question"``: answer one question about one filing with a retriever."""

from __future__ import annotations

import importlib
import importlib.util
import os
from pathlib import Path
from typing import Any

import typer

from pageindex.cli._common import console, fail

SCRIPTED_POLICY_ENV = "PAGEINDEX_SCRIPTED_POLICY"


def load_object(spec: str) -> Any:
    """``package.module:name`` or ``path/to/file.py:name`` -> the object."""
    target, sep, attr = spec.rpartition(":")
    if not sep or not target or not attr:
        raise ValueError(f"{spec!r} is not of the form module:function or file.py:function")
    if target.endswith(".py"):
        path = Path(target)
        if not path.exists():
            raise ValueError(f"policy file {path} not found")
        module_spec = importlib.util.spec_from_file_location(f"_pageindex_policy_{path.stem}", path)
        if module_spec is None or module_spec.loader is None:
            raise ValueError(f"cannot import {path}")
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
    else:
        module = importlib.import_module(target)
    try:
        return getattr(module, attr)
    except AttributeError:
        raise ValueError(f"{target} has no attribute {attr!r}") from None


def parse_options(pairs: list[str]) -> dict[str, Any]:
    """``["max_turns=5", "index_depth=none"]`` -> ``{"max_turns": "5", "index_depth": None}``
    (values are validated and converted by the retriever's options model)."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"option {pair!r} is not of the form name=value")
        out[key.strip().replace("-", "_")] = (
            None if value.strip().lower() in {"none", "null"} else value.strip()
        )
    return out


def register(app: typer.Typer, bench: typer.Typer) -> None:
    @app.command("ask")
    def ask(
        file: Path = typer.Argument(..., help="A filing PDF, or a tree JSON written by `pageindex build`."),
        question: str = typer.Argument(..., help="The question to answer."),
        retriever: str = typer.Option(
            "iterative",
            "--retriever",
            "-r",
            help="Retriever name (`pageindex retrievers` lists them with their options).",
        ),
        model: str = typer.Option(
            None,
            "--model",
            "-m",
            help="Model spec: openai/<model>, ollama/<model>, replay/<model>, or scripted (tests). "
            "Default: $PAGEINDEX_MODEL.",
        ),
        base_url: str = typer.Option(
            None, "--base-url", help="OpenAI-compatible endpoint (else $OPENAI_BASE_URL)."
        ),
        option: list[str] = typer.Option(
            [], "--opt", "-o", help="Retriever option name=value, repeatable (e.g. --opt max_turns=6)."
        ),
        scripted_policy: str = typer.Option(
            None,
            "--scripted-policy",
            help=f"With --model scripted: module:function or file.py:function, called with each request "
            f"(a ScriptedRequest) and returning the reply. Default: ${SCRIPTED_POLICY_ENV}.",
        ),
        evidence_page: list[int] = typer.Option(
            [], "--evidence-page", help="Gold evidence PDF page (1-based), repeatable; used by the oracle."
        ),
        as_json: bool = typer.Option(False, "--json", help="Print the whole RetrievalResult as JSON."),
        trace: bool = typer.Option(False, "--trace", help="Also print every trace event."),
    ) -> None:
        """Answer QUESTION about FILE and print the answer, its sources and a trace summary."""
        from pageindex.llm.types import BudgetExceeded, LLMError
        from pageindex.retrievers.base import QuestionContext, RetrieverConfigError, aretrieve, get_retriever
        from pageindex.tree import PDFError, load_tree

        try:
            opts = parse_options(option)
            get_retriever(retriever)
        except (ValueError, RetrieverConfigError) as exc:
            fail(str(exc))
        if not file.exists():
            fail(f"{file}: file not found")
        try:
            tree = load_tree(file) if file.suffix.lower() == ".json" else _build(file)
        except PDFError as exc:
            fail(str(exc))
        except (OSError, ValueError) as exc:
            fail(f"{file}: cannot read tree ({exc})")

        llm = None
        spec = get_retriever(retriever)
        model = model or os.environ.get("PAGEINDEX_MODEL")
        if spec.needs_llm or model:
            if not model:
                fail(f"retriever {retriever!r} needs a model: pass --model (e.g. openai/gpt-4o-mini)")
            try:
                llm = _client(model, base_url, scripted_policy)
            except (ValueError, LLMError) as exc:
                fail(f"model {model}: {exc}")

        import asyncio

        context = QuestionContext(evidence_pages=evidence_page)
        try:
            result = asyncio.run(
                aretrieve(tree, question, retriever=retriever, llm=llm, context=context, **opts)
            )
        except RetrieverConfigError as exc:
            fail(str(exc))
        except BudgetExceeded as exc:
            result = exc.partial_result  # type: ignore[attr-defined]

        if as_json:
            typer.echo(result.model_dump_json(indent=2))
        else:
            _print_result(result, show_trace=trace)
        raise typer.Exit(0 if result.status != "error" else 1)

    @app.command("retrievers")
    def retrievers() -> None:
        """List the registered retrievers with their options and defaults."""
        from rich.table import Table

        from pageindex.retrievers.base import available_retrievers

        table = Table(title="Retrievers (options: --opt name=value)", show_lines=True)
        for col in ("name", "what it does", "options (default)"):
            table.add_column(col)
        for name, spec in available_retrievers().items():
            opts = "\n".join(f"{n} ({d}): {h}" for n, d, h in spec.option_help())
            table.add_row(name, spec.description, opts or "-")
        console.print(table)


def _build(path: Path):
    from pageindex.tree import build_tree

    return build_tree(path)


def _client(model: str, base_url: str | None, scripted_policy: str | None):
    from pageindex.llm import ScriptedModel, make_client

    if model == "scripted":
        policy_spec = scripted_policy or os.environ.get(SCRIPTED_POLICY_ENV)
        if not policy_spec:
            raise ValueError(
                f"--model scripted needs --scripted-policy module:function (or ${SCRIPTED_POLICY_ENV})"
            )
        policy = load_object(policy_spec)
        scripted = policy if isinstance(policy, ScriptedModel) else ScriptedModel(policy=policy)
        return make_client("scripted", role="retriever", scripted=scripted)
    return make_client(model, role="retriever", base_url=base_url)


def _print_result(result, *, show_trace: bool) -> None:
    from rich.table import Table

    style = {"answer": "bold green", "fail": "bold yellow", "error": "bold red"}[result.status]
    console.print(
        f"[{style}]{result.status}[/] ({result.retriever}, {result.prompt_version})", highlight=False
    )
    if result.status == "answer":
        console.print(result.answer, highlight=False, markup=False)
    else:
        console.print(result.reason or result.error or "", highlight=False, markup=False)
    if result.sources:
        table = Table(title="Sources", show_lines=False)
        for col in ("page", "printed", "section", "quote", "verified"):
            table.add_column(col)
        for s in result.sources:
            verified = {True: "yes", False: "NO", None: "-"}[s.verified]
            table.add_row(
                str(s.page), s.page_label or "-", f"{s.node_id} {s.title}".strip(), s.quote or "", verified
            )
        console.print(table)
    u = result.usage
    console.print(
        f"iterations {result.iterations} · turns {result.turns} · tool calls {result.tool_calls} · "
        f"llm calls {u.llm_calls} · tokens {u.prompt_tokens}+{u.completion_tokens} · "
        f"pages {result.pages_fetched} · {result.latency_s:.2f}s",
        highlight=False,
    )
    if show_trace:
        for e in result.trace:
            console.print(f"{e.t:7.3f}s {e.kind:<10} {e.message}", highlight=False, markup=False)
