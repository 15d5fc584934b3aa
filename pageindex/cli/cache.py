"""``pageindex cache stats|clear``: show or empty the on-disk LLM reply cache."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from pageindex.cli._common import cache_path_option, console, examples, fail, plain
from pageindex.wording import counted

if TYPE_CHECKING:
    from pageindex.llm import LLMCache

PATH_HELP = "Cache file (default: $PAGEINDEX_CACHE_DIR/llm.sqlite or ~/.cache/pageindex/llm.sqlite)."


def _when(stamp: float | None) -> str:
    return datetime.fromtimestamp(stamp).isoformat(timespec="seconds") if stamp is not None else "-"


def register(app: typer.Typer, bench: typer.Typer) -> None:
    cache_app = typer.Typer(
        help="Inspect or empty the LLM reply cache used for record / replay.",
        epilog=examples(
            "pageindex cache stats",
            "pageindex cache clear --model gpt-4o-mini --yes",
            "pageindex cache stats --cache-path results/llm.sqlite",
        ),
        no_args_is_help=True,
    )
    app.add_typer(cache_app, name="cache")

    @cache_app.command(
        "stats",
        epilog=examples("pageindex cache stats", "pageindex cache stats --cache-path results/llm.sqlite"),
    )
    def stats(path: Path | None = cache_path_option(help=PATH_HELP, old_path=True)) -> None:
        """Show how many replies the cache holds, per model and kind, and its size."""
        from rich.table import Table

        from pageindex.llm import LLMCache, LLMError

        cache = LLMCache(path)
        _refuse_unusable(cache, given=path is not None)
        try:
            info = cache.stats()
        except LLMError as exc:
            fail(str(exc))
        if not info.exists:
            console.print(f"cache {info.path}: empty (no file yet)", highlight=False, markup=False)
            return
        console.print(
            f"cache {info.path}: {counted(info.entries, 'reply', 'replies')}, "
            f"{info.size_bytes / 1e6:.2f} MB, "
            f"{info.prompt_tokens:,} prompt + {info.completion_tokens:,} completion tokens recorded, "
            f"{_when(info.oldest)} .. {_when(info.newest)}",
            highlight=False,
            markup=False,
        )
        if info.by_model:
            table = Table("model", "replies")
            for model, count in info.by_model.items():
                table.add_row(plain(model), f"{count:,}")
            console.print(table)
            console.print(
                "by kind: " + ", ".join(f"{k} {n:,}" for k, n in info.by_kind.items()), highlight=False,
                markup=False,
            )
        if info.failures:
            kinds = ", ".join(f"{k} {n}" for k, n in info.failures_by_kind.items())
            console.print(
                f"recorded failures: {info.failures} ({kinds}); replayed as the same error in replay mode, "
                "retried live in rw mode",
                highlight=False,
            )

    @cache_app.command(
        "clear",
        epilog=examples(
            "pageindex cache clear",
            "pageindex cache clear --model gpt-4o-mini --yes",
            "pageindex cache clear --cache-path results/llm.sqlite -y",
        ),
    )
    def clear(
        path: Path | None = cache_path_option(help=PATH_HELP, old_path=True),
        model: str | None = typer.Option(
            None,
            "--model",
            help="Delete only this model's replies: its name as `cache stats` lists it (gpt-4o-mini) or "
            "its model spec (openai/gpt-4o-mini).",
        ),
        yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
    ) -> None:
        """Delete cached replies and recorded failures (all, or one model's)."""
        from pageindex.llm import LLMCache, LLMError

        if model is not None and not model.strip():  # `--model "$UNSET"`: never "every model"
            fail(
                "--model is empty; give a model name (`pageindex cache stats` lists them), or leave "
                "--model out to delete every model's replies"
            )
        cache = LLMCache(path)
        _refuse_unusable(cache, given=path is not None)
        held = _held_models(cache) if model is not None else []
        names = _stored_names(model, held) if model is not None else []
        if model is not None and not names:  # said, not "deleted 0": a spec as a run takes it, unheld
            console.print(
                f"nothing deleted: {cache.path} holds no replies of {model}"
                + (f" (it holds {', '.join(held)})" if held else " (it is empty)"),
                highlight=False,
                markup=False,
            )
            raise typer.Exit(0)
        what = "all replies and failures" if model is None else f"{' and '.join(names)} replies and failures"
        if not yes:
            try:
                agreed = typer.confirm(f"Delete {what} from {cache.path}?")
            except typer.Abort:  # no answer (end of input, Ctrl-C): nothing is deleted
                console.print()
                agreed = False
            if not agreed:
                # declining is a choice, not an error: say so and exit 0
                console.print(
                    f"cancelled: nothing deleted from {cache.path} (--yes deletes without asking)",
                    highlight=False,
                    markup=False,
                )
                raise typer.Exit(0)
        try:
            deleted = cache.clear() if model is None else sum(cache.clear(name) for name in names)
        except LLMError as exc:
            fail(str(exc))
        said = counted(deleted, "reply or failure", "replies and failures")
        console.print(f"deleted {said} from {cache.path}", highlight=False, markup=False)


def _held_models(cache: LLMCache) -> list[str]:
    """The model names ``cache`` holds replies or recorded failures of, sorted."""
    stats = cache.stats()
    return sorted({*stats.by_model, *stats.failures_by_model})


def _stored_names(model: str, held: list[str]) -> list[str]:
    """The names of ``held`` (:func:`_held_models`) that ``model`` is stored under. The cache keeps a
    model by its name without the provider (``openai/gpt-4o-mini`` and ``ollama/...`` record
    ``gpt-4o-mini``), so a model spec as a run takes it names the same replies; a name that itself
    holds a slash (``meta-llama/Llama-3``) is taken as given too."""
    from pageindex.llm.providers.base import provider_class

    provider, sep, bare = model.partition("/")
    candidates = [model, *([bare] if sep and bare and provider_class(provider) is not None else [])]
    return [name for name in dict.fromkeys(candidates) if name in held]


def _refuse_unusable(cache: LLMCache, *, given: bool) -> None:
    """A path that is no LLM cache (a folder, another file) is named as such, before it is opened,
    with where it came from when no ``--cache-path`` was given. A missing file is an empty cache
    here (nothing is created), unless no file can be there (a folder on its way is a file)."""
    if problem := cache.problem(missing_ok=True):
        named = "--cache-path" if given else "the cache (under $PAGEINDEX_CACHE_DIR)"
        if not given and not os.environ.get("PAGEINDEX_CACHE_DIR"):
            named = "the cache (the default)"
        fail(f"{named} {cache.path} is not an LLM cache: {problem}")
