"""``pageindex cache stats|clear|prune``: show or empty the on-disk LLM reply cache, and show or prune
the tree cache (trees of older builder versions, temp files of killed writes)."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from pageindex.cli._common import (
    ExitCode,
    cache_path_option,
    check_cache_dir,
    console,
    err_console,
    examples,
    fail,
    plain,
)
from pageindex.wording import counted

if TYPE_CHECKING:
    from pageindex.cacheprune import TreeCacheStats, VersionFiles
    from pageindex.llm import LLMCache
    from pageindex.llm.cache import CacheStats

PATH_HELP = "Cache file (default: $PAGEINDEX_CACHE_DIR/llm.sqlite or ~/.cache/pageindex/llm.sqlite)."
# a folder two installs share (two checkouts, another pymupdf release) holds trees the other one reads
_SHARED = " (an install of another version that shares this folder would build its trees again)"
TREES_HELP = "Tree cache directory (default $PAGEINDEX_CACHE_DIR/trees or ~/.cache/pageindex/trees)."


def tree_cache_option() -> str | None:
    return typer.Option(None, "--tree-cache-dir", help=TREES_HELP, metavar="<path>")


def _when(stamp: float | None) -> str:
    return datetime.fromtimestamp(stamp).isoformat(timespec="seconds") if stamp is not None else "-"


def register(app: typer.Typer, bench: typer.Typer) -> None:
    cache_app = typer.Typer(
        help="Inspect or empty the LLM reply cache used for record / replay, and the tree cache.",
        epilog=examples(
            "pageindex cache stats",
            "pageindex cache clear --model gpt-4o-mini --yes",
            "pageindex cache prune --yes",
        ),
        no_args_is_help=True,
    )
    app.add_typer(cache_app, name="cache")

    @cache_app.command(
        "stats",
        epilog=examples("pageindex cache stats", "pageindex cache stats --cache-path results/llm.sqlite"),
    )
    def stats(
        path: Path | None = cache_path_option(help=PATH_HELP, old_path=True),
        trees: str | None = tree_cache_option(),
    ) -> None:
        """Show how many replies the LLM cache holds, per model and kind, and its size; then the tree
        cache: trees of this builder version, of others (this one never reads them), temp files."""
        from pageindex.llm import LLMCache, LLMError

        cache = LLMCache(path)
        _refuse_unusable(cache, given=path is not None)
        tree_info = _tree_stats(trees)  # a --tree-cache-dir that is no folder is refused before any output
        try:
            info = cache.stats()
        except LLMError as exc:
            fail(str(exc))
        if not info.exists:
            console.print(f"cache {info.path}: empty (no file yet)", highlight=False, markup=False)
        else:
            _print_llm_stats(info)
        _print_tree_stats(tree_info)

    @cache_app.command(
        "prune",
        epilog=examples("pageindex cache prune", "pageindex cache prune --tree-cache-dir trees/ -y"),
    )
    def prune(
        trees: str | None = tree_cache_option(),
        yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
    ) -> None:
        """Delete what no command reads any more from the tree cache: trees and section summaries of
        other builder versions, and temp files of killed writes (older than an hour). Trees of this
        builder version and files the cache did not write stay; the LLM cache is not touched."""
        from pageindex.cacheprune import PruneIncomplete, prune_tree_cache
        from pageindex.tree.build import code_version

        info = _tree_stats(trees)
        version = code_version()
        kept = info.by_version.get(version)
        old = info.total(but=version)
        if not info.exists:
            console.print(f"trees {info.directory}: empty (no folder yet)", highlight=False, markup=False)
        else:
            console.print(
                f"trees {info.directory}: this builder version ({version}) has "
                + (_files(kept) if kept else "no files")
                + "; other versions have "
                + (f"{_files(old)}, which this version never reads{_SHARED}" if old.files else "none")
                + "".join(f"; {part}" for part in _leftovers(info)),
                highlight=False,
                markup=False,
            )
        deleting = old.files + info.temp_files
        if not deleting:
            console.print(f"nothing to delete from {info.directory}", highlight=False, markup=False)
            raise typer.Exit(0)
        what = f"{counted(deleting, 'file')} ({(old.size_bytes + info.temp_size_bytes) / 1e6:.1f} MB)"
        if not yes:
            _confirm_or_exit("cache prune", what, info.directory)
        try:
            files, size = prune_tree_cache(info.directory, version)
        except PruneIncomplete as exc:
            named = _tree_cache_named(trees)
            done = f"{counted(exc.files, 'file')} ({exc.size / 1e6:.1f} MB)" if exc.files else "nothing"
            fail(
                f"{named} {info.directory}: {exc.failed} of {deleting} files could not be deleted "
                f"({exc.reason}); {done} deleted"
            )
        console.print(
            f"deleted {counted(files, 'file')} ({size / 1e6:.1f} MB) from {info.directory}",
            highlight=False,
            markup=False,
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
            _confirm_or_exit("cache clear", what, cache.path)
        try:
            deleted = cache.clear(*names)
        except LLMError as exc:
            fail(str(exc))
        said = counted(deleted, "reply or failure", "replies and failures")
        console.print(f"deleted {said} from {cache.path}", highlight=False, markup=False)
        if cache.not_compacted:
            err_console.print(
                f"note: {cache.path} keeps its size: another process was using it when it was to be "
                f"compacted ({cache.not_compacted}); `pageindex cache clear` again later compacts it",
                highlight=False, markup=False,
            )  # fmt: skip


def _print_llm_stats(info: CacheStats) -> None:
    from rich.table import Table

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
    if info.older_format:
        from pageindex.llm.wire import REQUEST_FORMAT

        console.print(
            f"note: {counted(info.older_format, 'reply', 'replies')} recorded with an older request "
            f"format (before v{REQUEST_FORMAT}, an earlier pageindex-bench): no --cache replay of this "
            "version matches them; record them again with --cache rw",
            highlight=False,
            markup=False,
        )
    if info.failures:
        kinds = ", ".join(f"{k} {n}" for k, n in info.failures_by_kind.items())
        console.print(
            f"recorded failures: {info.failures} ({kinds}); replayed as the same error in replay mode, "
            "retried live in rw mode",
            highlight=False,
        )


def _confirm_or_exit(command: str, what: str, where: Path) -> None:
    """Ask before deleting ``what`` from ``where``. "No" says that nothing was deleted and exits 0:
    declining is a choice. Ctrl-C at the question is an interrupted command (exit 130) and no answer
    at all (end of input: a script or CI step without ``--yes``) is a set-up error (exit 2), both
    saying that nothing was deleted: both exited 0, so a CI step that meant to empty the cache passed
    with the cache as it was."""
    try:
        agreed = typer.confirm(f"Delete {what} from {where}?")
    except typer.Abort as exc:  # click raises Abort from None: the cause is still its __context__
        console.print()
        if isinstance(exc.__context__, KeyboardInterrupt):
            err_console.print(f"interrupted: nothing deleted from {where}", highlight=False, markup=False)
            raise typer.Exit(int(ExitCode.INTERRUPTED)) from None
        fail(
            f"{command}: no answer to the question (input ended): nothing deleted from {where}; "
            "pass --yes to delete without asking"
        )
    if not agreed:
        said = f"cancelled: nothing deleted from {where} (--yes deletes without asking)"
        console.print(said, highlight=False, markup=False)
        raise typer.Exit(0)


def _tree_cache_named(given: str | None) -> str:
    """How an error line names the tree cache: the option that gave it, else where its default came
    from (prune's "could not be deleted" line said "the tree cache" where the other lines said "the
    tree cache (under $PAGEINDEX_CACHE_DIR)" of the same folder)."""
    if given is not None:
        return "--tree-cache-dir"
    under = " (under $PAGEINDEX_CACHE_DIR)" if os.environ.get("PAGEINDEX_CACHE_DIR") else ""
    return f"the tree cache{under}"


def _tree_stats(given: str | None) -> TreeCacheStats:
    """The tree cache's files by builder version; a path that is no folder (a file, an empty
    ``--tree-cache-dir``, a symbolic link to nowhere) is refused (exit 2), a missing one is an empty
    cache."""
    from pageindex.atomic import file_in_the_way
    from pageindex.cacheprune import tree_cache_stats
    from pageindex.tree.cache import default_cache_dir

    directory = check_cache_dir(given, "--tree-cache-dir")
    folder = directory if directory is not None else default_cache_dir()
    named = _tree_cache_named(given)
    if folder.exists() and not folder.is_dir():
        fail(f"{named} {folder} is not a folder (a tree cache is a folder of tree JSON files)")
    if not folder.exists() and (blocked := file_in_the_way(folder)) is not None:  # not "no folder yet"
        fail(f"{named} {folder} is not a folder: no folder can be there ({blocked} is a file, not a folder)")
    try:
        return tree_cache_stats(folder)
    except OSError as exc:
        fail(f"{named} {folder} cannot be read: {exc.strerror or exc}")


def _files(files: VersionFiles) -> str:
    """"3 files (2 trees, 1 summary file), 1.2 MB"."""
    summaries = files.files - files.trees
    also = f", {counted(summaries, 'summary file')}" if summaries else ""
    size = f"{files.size_bytes / 1e6:.1f} MB"
    return f"{counted(files.files, 'file')} ({counted(files.trees, 'tree')}{also}), {size}"


def _leftovers(info: TreeCacheStats) -> list[str]:
    said = []
    if not info.by_version and not info.temp_files and (info.directory / "trees").is_dir():
        # --tree-cache-dir given the cache root ($PAGEINDEX_CACHE_DIR, beside llm.sqlite): no tree is there
        said.append(f"the tree cache is its folder trees (--tree-cache-dir {info.directory / 'trees'})")
    if info.temp_files:
        said.append(
            f"{counted(info.temp_files, 'temp file')} of killed writes ({info.temp_size_bytes / 1e6:.1f} MB)"
        )
    if info.other_files:
        said.append(f"{counted(info.other_files, 'other file')} (not the cache's; left alone)")
    return said


def _print_tree_stats(info: TreeCacheStats) -> None:
    """What ``cache stats`` says of the tree cache. It names no version as this one: that takes the
    builder's code version, whose import (pymupdf) costs about 1 s; ``cache prune`` does."""
    if not info.exists:
        console.print(f"trees {info.directory}: empty (no folder yet)", highlight=False, markup=False)
        return
    total = info.total()
    versions = counted(len(info.by_version), "builder version")
    held = f"{_files(total)}, of {versions}" if total.files else "no trees"
    parts = [held, *_leftovers(info)]
    hint = (
        "; `pageindex cache prune` deletes the files of builder versions other than the running one "
        "and those of killed writes"
        if info.by_version or info.temp_files  # one version may be an older one: all of it, after an upgrade
        else ""
    )
    console.print(f"trees {info.directory}: " + "; ".join(parts) + hint, highlight=False, markup=False)


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
