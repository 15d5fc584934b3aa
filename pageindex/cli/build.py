"""``pageindex build`` and ``pageindex tree``: PDF -> section tree, and a readable table of contents."""

from __future__ import annotations

from pathlib import Path

import typer

from pageindex.cli._common import (
    check_cache_dir,
    console,
    examples,
    fail,
    load_tree_file,
    out_option,
    output_file,
    scripted_policy_option,
    warn_tree,
)
from pageindex.wording import counted


def register(app: typer.Typer, bench: typer.Typer) -> None:
    app.command(
        "build",
        help="Build the section tree of a filing PDF (cached; no LLM calls).",
        epilog=examples(
            "pageindex build 10k.pdf",
            "pageindex build 10k.pdf -o tree.json --max-leaf-pages 3",
            "pageindex build 10k.pdf -o tree.json --summaries -m openai/gpt-4o-mini",
        ),
    )(build)
    app.command(
        "tree",
        help="Print a filing's section tree as an indented table of contents with page spans.",
        epilog=examples("pageindex tree 10k.pdf --depth 2", "pageindex tree tree.json"),
    )(tree)


def build(
    pdf: Path = typer.Argument(..., help="The filing PDF."),
    output: Path | None = out_option(help="Write the tree JSON here (default: print a summary)."),
    cache_dir: str | None = typer.Option(
        None,
        "--cache-dir",
        help="Tree cache directory (default $PAGEINDEX_CACHE_DIR/trees or ~/.cache/pageindex/trees).",
    ),
    no_cache: bool = typer.Option(False, "--no-cache", help="Neither read nor write the tree cache."),
    max_leaf_pages: int = typer.Option(
        5, "--max-leaf-pages", min=1, help="Split leaves longer than this many pages."
    ),
    no_outline: bool = typer.Option(
        False, "--no-outline", help="Ignore the PDF's embedded outline: headings from the page layout only."
    ),
    summaries: bool = typer.Option(
        False, "--summaries", help="Also write a one-line LLM summary per section (cached; cost shown first)."
    ),
    model: str | None = typer.Option(
        None, "--model", "-m", help="Model for --summaries, e.g. openai/gpt-4o-mini."
    ),
    base_url: str | None = typer.Option(
        None, "--base-url", help="OpenAI-compatible endpoint for --summaries."
    ),
    scripted_policy: str | None = scripted_policy_option(),
) -> None:
    from pageindex.atomic import write_atomic
    from pageindex.tree import PDFError, build_tree, is_tree_file

    cache_dir = check_cache_dir(cache_dir, "--cache-dir")
    if not summaries and (given := [o for o, v in (("--model", model), ("--base-url", base_url)) if v]):
        fail(f"{' and '.join(given)} {'apply' if len(given) > 1 else 'applies'} with --summaries only; "
             "add --summaries to write section summaries, or leave it out")  # fmt: skip
    if output is not None:
        output_file("--out", output, inputs=[pdf], replaces=is_tree_file, kind="a tree JSON")
    try:
        result = build_tree(
            pdf,
            cache_dir=cache_dir,
            use_cache=not no_cache,
            max_leaf_pages=max_leaf_pages,
            use_outline=not no_outline,
        )
    except PDFError as exc:
        fail(str(exc))
    warn_tree(result)
    if summaries:
        from pageindex.cli._summaries import build_summaries

        result = build_summaries(
            result, model=model, base_url=base_url, cache_dir=cache_dir, console=console,
            scripted_policy=scripted_policy,
        )  # fmt: skip
    if output is not None:
        try:
            write_atomic(output, result.model_dump_json(indent=1))
        except OSError as exc:
            fail(f"{output}: cannot write the tree ({exc.strerror or exc})")
    leaves = result.leaves()
    console.print(
        f"{result.doc_id}: {counted(result.page_count, 'page')}, "
        f"{counted(sum(1 for _ in result.walk()), 'section')}, "
        f"{counted(len(leaves), 'leaf', 'leaves')}, strategy {result.strategy}"
        + (f" -> {output}" if output is not None else ""),
        highlight=False,
        markup=False,  # a name in square brackets ("[draft] 10-K.pdf") is printed as written
    )


def tree(
    source: Path = typer.Argument(..., help="A filing PDF, or a tree JSON written by `pageindex build -o`."),
    cache_dir: str | None = typer.Option(None, "--cache-dir", help="Tree cache directory (for a PDF)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not use the tree cache (for a PDF)."),
    max_leaf_pages: int | None = typer.Option(
        None, "--max-leaf-pages", min=1, help="Split leaves longer than this (for a PDF; default 5)."
    ),
    no_outline: bool = typer.Option(
        False, "--no-outline", help="Ignore the PDF's embedded outline (for a PDF), as `build --no-outline`."
    ),
    depth: int = typer.Option(0, "--depth", min=0, help="Show only this many levels (0 = all)."),
) -> None:
    from pageindex.tree import PDFError, build_tree
    from pageindex.tree.errors import NotAPDFError
    from pageindex.tree.toc import render_toc

    cache_dir = check_cache_dir(cache_dir, "--cache-dir")
    try:
        if source.suffix.lower() == ".json":
            given = (("--no-outline", no_outline), ("--max-leaf-pages", max_leaf_pages),
                     ("--no-cache", no_cache), ("--cache-dir", cache_dir))  # fmt: skip
            pdf_only = [option for option, value in given if value]
            if pdf_only:
                fail(f"{', '.join(pdf_only)} {'apply' if len(pdf_only) > 1 else 'applies'} to a PDF; "
                     f"{source} is a tree already built")  # fmt: skip
            result = load_tree_file(source)
        else:
            result = build_tree(
                source, cache_dir=cache_dir, use_cache=not no_cache,
                max_leaf_pages=max_leaf_pages or 5, use_outline=not no_outline,
            )  # fmt: skip
    except NotAPDFError as exc:  # tree reads two kinds of file: name both
        fail(f"{exc}; tree takes a filing PDF or a tree JSON written by `pageindex build -o`")
    except PDFError as exc:
        fail(str(exc))
    warn_tree(result)
    console.print(render_toc(result, depth=depth), highlight=False, markup=False, soft_wrap=True)
