"""``pageindex ask FILE... ["question"]``: answer a question about one or more filings, or open an
interactive analyst session (see :mod:`pageindex.analyst`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from pageindex.atomic import same_file
from pageindex.cli._common import (
    NO_LIMIT,
    ExitCode,
    checked_model,
    concurrency_option,
    console,
    err_console,
    examples,
    fail,
    load_tree_file,
    model_client,
    opt_option,
    plain,
    scripted_policy_option,
    split_retriever_option,
    time_limit_option,
    timeout_option,
    warn_tree,
)


def parse_options(pairs: list[str], retriever: str | None = None) -> dict[str, Any]:
    """``["max_turns=5", "iterative.index_depth=none"]`` -> ``{"max_turns": "5", "index_depth": None}``
    for ``retriever`` (values are validated and converted by the retriever's options model).
    ``RETRIEVER.NAME=VALUE`` must name ``retriever`` when one is given."""
    out: dict[str, Any] = {}
    for pair in pairs:
        named, key, value = split_retriever_option(pair, [retriever or "?"])
        if retriever and named != retriever:
            raise ValueError(f"--opt {pair!r} is for retriever {named!r}, but --retriever is {retriever!r}")
        out[key] = None if value.lower() in {"none", "null"} else value
    return out


def _moved_short_flag(value: Any) -> None:
    """``ask -o`` meant ``--opt`` before ``-o`` became ``--out`` everywhere: say so, never guess."""
    if value:
        fail("-o no longer means --opt in ask; write --opt NAME=VALUE (e.g. --opt max_iterations=2)")


def split_inputs(args: list[str]) -> tuple[list[Path], str | None]:
    """``["A.pdf", "B.pdf", "compare ..."]`` -> ([A.pdf, B.pdf], "compare ..."). Leading arguments
    that name a PDF or tree JSON (or an existing file) are inputs; the rest is the question (None
    when nothing follows them: an interactive session)."""
    files: list[Path] = []
    rest = list(args)
    while rest and (rest[0].lower().endswith((".pdf", ".json")) or _is_file(rest[0])):
        files.append(Path(rest.pop(0)))
    if not rest:
        return files, None
    return files, " ".join(rest).strip()  # "" when given but blank: refused, not a session


def _is_file(arg: str) -> bool:
    """Whether ``arg`` names an existing file. A question is no file name: one longer than a file
    name may be (255 bytes without a '/') made ``is_file`` raise, and ask ended in an internal error."""
    try:
        return Path(arg).is_file()
    except (OSError, ValueError):
        return False


def register(app: typer.Typer, bench: typer.Typer) -> None:
    @app.command(
        "ask",
        epilog=examples(
            'pageindex ask 10k.pdf "What was total revenue in 2023?" -m openai/gpt-4o-mini',
            'pageindex ask a.pdf b.pdf "Compare their gross margins" -r agent --opt max_turns=8',
            "pageindex ask 10k.pdf -m ollama/llama3.1 -s acme  # interactive; /help lists the commands",
        ),
    )
    def ask(
        inputs: list[str] = typer.Argument(
            ...,
            help="One or more filing PDFs (or tree JSONs from `pageindex build --out`), then the question. "
            "Without a question: an interactive session.",
            metavar="FILE... [QUESTION]",
        ),
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
        json_mode: bool = typer.Option(
            False, "--json-mode", help="Structured outputs as JSON content, for servers without tool calls."
        ),
        option: list[str] = opt_option(
            help="Retriever option NAME=VALUE (or RETRIEVER.NAME=VALUE), repeatable "
            "(e.g. --opt max_iterations=2 for the default retriever, iterative)."
        ),
        _old_o: bool = typer.Option(
            False, "-o", hidden=True, is_eager=True, callback=_moved_short_flag, help="Was --opt: an error."
        ),
        scripted_policy: str = scripted_policy_option(),
        evidence_page: list[int] = typer.Option(
            [], "--evidence-page", help="Gold evidence PDF page (1-based), repeatable; used by the oracle."
        ),
        session_name: str = typer.Option(
            None,
            "--session",
            "-s",
            help="Save the session under this name and reopen it next time "
            "(in $PAGEINDEX_CACHE_DIR/sessions or ~/.cache/pageindex/sessions).",
        ),
        session_ttl: float = typer.Option(
            1440.0, "--session-ttl", min=0.01, help="Minutes of inactivity after which a session expires."
        ),
        session_max_chars: int = typer.Option(
            200_000,
            "--session-max-chars",
            min=0,
            help="Cap on what a session keeps (characters); the oldest material is evicted first.",
        ),
        no_reuse: bool = typer.Option(
            False, "--no-reuse", help="Do not answer from the session's material (always search the filing)."
        ),
        timeout: float = timeout_option(
            help="Seconds per model call (default 60; 600 for a loopback server)."
        ),
        time_limit: str = time_limit_option(
            "Seconds one question's whole retrieval may take, all its model calls (default: no "
            "limit); past it the answer is an error of kind time_limit."
        ),
        max_retries: int = typer.Option(
            None, "--max-retries", help="Retries per model call: 429, 5xx, timeouts (default 3)."
        ),
        concurrency: int = concurrency_option(
            None, "Model requests in flight at once (default 8; 1 for loopback)."
        ),
        context_window: int = typer.Option(
            None, "--context-window", help="The model's context window in tokens (default: from the "
            "server's metadata or a known table); the index is sized to fit it.",
        ),
        as_json: bool = typer.Option(False, "--json", help="Print the whole RetrievalResult as JSON."),
        trace: bool = typer.Option(False, "--trace", help="Also print every trace event."),
    ) -> None:
        """Answer a QUESTION about one or more filings (answer, confidence, numbered citations marked
        verified or not), or open an interactive session when no question is given."""
        from pageindex.analyst.engine import Analyst
        from pageindex.analyst.session import AnalystSession, SessionLimits
        from pageindex.analyst.store import (
            SessionElsewhereError,
            SessionInUseError,
            SessionNameError,
            SessionStore,
            SessionUnreadableError,
        )
        from pageindex.llm.types import BudgetExceeded, LLMError, is_model_failure
        from pageindex.retrievers.base import RetrieverConfigError, get_retriever

        files, question = split_inputs(inputs)
        if not files:
            fail(f"{inputs[0]}: not a PDF or tree JSON (give the filing first, then the question)")
        try:
            opts = parse_options(option, retriever)
            spec = get_retriever(retriever)
        except (ValueError, RetrieverConfigError) as exc:
            fail(str(exc))
        if question is not None and not question.strip():
            fail("the question is empty; give a question, or none at all for an interactive session")
        last = files[-1]
        if question is None and files[:-1] and " " in str(last) and not (last.exists() or last.is_symlink()):
            # "What is in the exhibit.pdf" is taken for a filing, as its name ends: say so, never guess
            fail(f"{last}: file not found (an argument ending in {last.suffix} is read as a filing; a "
                 "question that ends so must end otherwise, e.g. with '?')")  # fmt: skip
        store = SessionStore()
        if session_name is not None:  # before any work; `-s ''` was taken as no session, in silence
            try:
                store.path_for(session_name)
            except SessionNameError as exc:
                fail(f"--session: {exc}")
            try:  # held until the process ends; a saved file that cannot be read is never replaced
                store.lock(session_name)
                store.load(session_name)
            except (SessionInUseError, SessionUnreadableError) as exc:
                fail(str(exc))
        tree = _load_trees(files)
        pages = tree.page_count
        if bad := [p for p in evidence_page if not 1 <= p <= pages]:
            fail(f"--evidence-page {bad[0]}: the filing's pages are 1-{pages}")

        for name, value in (("--max-retries", max_retries), ("--context-window", context_window)):
            if value is not None and (value < 0 or (value == 0 and name != "--max-retries")):
                # said as bench run says it
                fail(f"{name} {value}: must be at least {0 if name == '--max-retries' else 1}")
        llm = None
        if not spec.needs_llm:  # the registry says: no model is resolved, preflighted or called
            if model:
                unused = f"--model {model} is not used: {retriever} calls no model"  # as bench run says it
                err_console.print(f"[yellow]note:[/] {plain(unused)}", highlight=False)
        else:
            from pageindex.llm.spec import MODEL_ENV

            needs = f"retriever {retriever!r} needs a model: pass --model (e.g. openai/gpt-4o-mini) or set "
            from pageindex.retrievers.base import plugin_model_hint

            needs += f"${MODEL_ENV}{plugin_model_hint(retriever)}"
            model = checked_model(model, base_url, needs)
            settings, notes = _client_settings(
                model, base_url, timeout=timeout, max_retries=max_retries, concurrency=concurrency,
                json_mode=json_mode, context_window=context_window,
            )  # fmt: skip
            json_mode = settings.pop("json_mode")
            if not settings["context_window"]:
                del settings["context_window"], settings["context_window_source"]
            try:
                llm = _client(model, base_url, scripted_policy, json_mode, **settings)
            except (ValueError, LLMError) as exc:
                fail(f"model {model}: {exc}")
            for note in notes:  # said once the endpoint passed its preflight: an error stays one line
                err_console.print(f"[dim]{note}[/]", highlight=False)
            _warn_unlisted(llm)
            from pageindex.llm.doctor import tool_loop_warning

            # the doctor found no tool calls there: agent and iterative end without an answer
            if said := tool_loop_warning(model, base_url, [retriever], outcome="each question ends"):
                err_console.print(f"[yellow]warning:[/] {plain(said)}", highlight=False)
        import time

        limits = SessionLimits(idle_ttl_s=session_ttl * 60, max_chars=session_max_chars)
        session = AnalystSession.for_tree(tree, limits=limits)
        if session_name is not None:
            try:
                opened = store.open(session_name, session, now=time.time())
            except (SessionElsewhereError, SessionUnreadableError) as exc:  # the name was checked first
                fail(str(exc))
            session = opened.session
            if opened.status == "reopened":
                err_console.print(
                    f"[dim]session {session_name}: reopened ({session.contents()})[/]",
                    highlight=False,
                )
            elif opened.status in ("expired", "rebuilt"):
                why = (
                    f"expired after {opened.idle_s / 60:.0f} idle minutes"
                    if opened.status == "expired"
                    else "saved with trees of another tree builder version (its sections may be named "
                    "otherwise now)"
                )
                kept = f" (the saved one is kept as {opened.kept})" if opened.kept else ""
                err_console.print(
                    f"[yellow]session {session_name}: {plain(why)}; starting afresh{plain(kept)}[/]",
                    highlight=False,
                )
        try:
            analyst = Analyst(
                tree,
                llm=llm,
                retriever=retriever,
                options=opts,
                session=session,
                use_session=not no_reuse,
                context={"evidence_pages": evidence_page},
                time_limit=None if time_limit in (None, NO_LIMIT) else float(time_limit),
            )
        except RetrieverConfigError as exc:
            fail(str(exc))

        def save() -> None:
            if session_name:
                try:
                    store.save(analyst.session)
                except OSError as exc:  # the answer is printed all the same: only the session lacks it
                    why = exc.strerror or exc
                    said = f"could not save session {session_name} ({why}): the answer is not in it"
                    err_console.print(f"[yellow]warning:[/] {plain(said)}", highlight=False)

        if question is None:
            from pageindex.analyst.repl import run_repl

            run_repl(
                analyst,
                console=console,
                progress_console=err_console,
                save=save,
                history_file=store.history_path(session_name)
                if session_name
                else store.directory / "history",
                prompt=f"{tree.doc_id}> " if len(files) == 1 else "filings> ",
            )
            raise typer.Exit(0)

        import asyncio

        from pageindex.analyst.progress import NullProgress, RichProgress
        from pageindex.analyst.render import print_answer

        progress = RichProgress(err_console, tree) if err_console.is_terminal else NullProgress()
        analyst.progress = progress
        try:
            if isinstance(progress, RichProgress):
                with progress:
                    answer = asyncio.run(analyst.ask(question))
            else:
                answer = asyncio.run(analyst.ask(question))
        except KeyboardInterrupt:
            err_console.print("interrupted: no answer", highlight=False)
            raise typer.Exit(ExitCode.INTERRUPTED) from None
        except RetrieverConfigError as exc:
            fail(str(exc))
        except BudgetExceeded as exc:
            fail(f"model {model}: budget exhausted ({exc})", code=ExitCode.BUDGET)
        save()
        outcome = answer.result
        # an option that does not fit this filing (--opt pages=999), or one a retriever needs and
        # ask cannot supply otherwise (-r oracle without --opt pages: no gold pages here)
        if outcome.status == "error" and outcome.error_kind in ("bad_input", "no_evidence"):
            fail(f"{outcome.error}", code=ExitCode.BAD_INPUT)
        unusable = outcome.status == "fail" and is_model_failure(outcome.error_kind)
        if as_json:
            out = answer.cited.model_copy(deep=True)
            out.extra["session_use"] = answer.use.model_dump(mode="json")
            if answer.searched is not None:
                out.extra["searched"] = answer.searched.model_dump(mode="json")
            typer.echo(out.model_dump_json(indent=2))
        else:
            print_answer(console, tree, answer, show_trace=trace)
        # Exit codes (issue 12's table): 0 answered or a justified "not found"; 2 an option that does
        # not fit this filing; 4 the retrieval ended in an error or the model's output was unusable
        # -- said on stderr, with the cause.
        if outcome.status == "error":
            fail(f"the retrieval failed ({outcome.error_kind}): {outcome.error}", code=ExitCode.ERRORS)
        if unusable:
            fail(
                f"the model's output was unusable ({outcome.error_kind}): {outcome.reason}",
                code=ExitCode.ERRORS,
            )
        raise typer.Exit(ExitCode.OK)

    @app.command(
        "retrievers",
        epilog=examples(
            "pageindex retrievers",
            'pageindex ask 10k.pdf "What was revenue?" -r iterative --opt max_iterations=2',
            "pageindex bench run -r agent,iterative --opt agent.max_turns=8 --opt iterative.max_iterations=2",
        ),
    )
    def retrievers() -> None:
        """List the registered retrievers with their options and defaults."""
        from rich.table import Table

        from pageindex.retrievers.base import available_retrievers

        table = Table(
            title="Retrievers (options: --opt NAME=VALUE for one retriever, RETRIEVER.NAME=VALUE anywhere)",
            show_lines=True,
        )
        for col in ("name", "what it does", "options (default)"):
            table.add_column(col)
        for name, spec in available_retrievers().items():
            opts = "\n".join(f"{n} ({d}): {h}" for n, d, h in spec.option_help())
            table.add_row(name, spec.description, opts or "-")
        console.print(table)
        from pageindex import registry

        # asked for, a name two modules registered is an error; a retriever module that failed to import
        # registered nothing
        for line in [*registry.conflicts("retriever"), *registry.import_failures("retriever")]:
            err_console.print(f"[yellow]warning:[/] {plain(line)}", highlight=False)


def _load_trees(files: list[Path]):
    """Trees of the input files (built from PDFs or read from tree JSONs), combined when several,
    with cached section summaries applied when there are any."""
    from pageindex.analyst.summaries import apply_cached_summaries
    from pageindex.tree import PDFError, build_tree
    from pageindex.tree.combine import combine_trees

    # a filing is known by its file's name: PDFs named alike are said before any build
    _check_distinct([(f.stem, f, None) for f in files if f.suffix.lower() != ".json"])
    trees = []
    for file in files:
        if not file.exists() and not file.is_symlink():  # a link that leads nowhere: build_tree says where
            fail(f"{file}: file not found")
        if file.suffix.lower() == ".json":
            trees.append(apply_cached_summaries(load_tree_file(file)))
            continue
        try:
            tree = build_tree(file)
        except PDFError as exc:
            fail(str(exc))
        except (OSError, ValueError) as exc:
            fail(f"{file}: cannot read tree ({exc})")
        warn_tree(tree)
        trees.append(apply_cached_summaries(tree))
    if len(trees) == 1:
        return trees[0]
    # and a tree by the name of the PDF it was built from (two tree JSONs, a filing and its own tree)
    _check_distinct([(t.doc_id, f, t.sha256) for t, f in zip(trees, files, strict=True)])
    try:
        return combine_trees(trees)
    except ValueError as exc:
        fail(str(exc))


def _check_distinct(named: list[tuple[str, Path, str | None]]) -> None:
    """Fail unless the (name, file, sha256 or None) given name distinct filings: two of one name are
    said with both files (``combine_trees`` said only "documents must be distinct, got ['x', 'x']")."""
    seen: dict[str, tuple[Path, str | None]] = {}
    for name, file, sha in named:
        for other, other_sha in seen.values():  # one filing by two names: a link, a copy
            if other != file and (same_file(other, file) or (sha and sha == other_sha)):
                fail(f"{other} and {file} are one filing, given twice")
        if name not in seen:
            seen[name] = (file, sha)
            continue
        other, other_sha = seen[name]
        if other == file or same_file(other, file):
            fail(f"{file} is given twice")
        if sha and sha == other_sha:  # (a tree made by hand may record none)
            fail(f"{other} and {file} are one filing, given twice")
        if {other.suffix.lower(), file.suffix.lower()} == {".pdf"}:
            fail(f"{other} and {file} are both named {name}: ask tells filings apart by their file names; "
                 "give one of them another name")  # fmt: skip
        fail(f"{other} and {file} are both named {name}: ask tells filings apart by their names (a tree "
             "keeps the name of the PDF it was built from); give one of them another name")  # fmt: skip


def _warn_unlisted(llm: Any) -> None:
    """A model the server does not list (a typo, another server) is said before any work: a
    llama.cpp server answers any name with the one model it serves, so ``-m openai/gemma-9b``
    against it answered with gemma-3-270m, in silence."""
    found = getattr(llm, "preflight_result", None)
    if found is not None and (said := found.unlisted(llm.model)):
        err_console.print(f"[yellow]warning:[/] {plain(said)}", highlight=False)


def _client(
    model: str, base_url: str | None, scripted_policy: str | None, json_mode: bool = False, **settings
):
    return model_client(
        model,
        role="retriever",
        base_url=base_url,
        scripted_policy=scripted_policy,
        json_mode=json_mode,
        **settings,
    )


def _client_settings(
    model: str,
    base_url: str | None,
    *,
    timeout: float | None,
    max_retries: int | None,
    concurrency: int | None,
    json_mode: bool,
    context_window: int | None = None,
) -> tuple[dict, list[str]]:
    """Client settings: the user's flags > the cached ``pageindex doctor`` findings > the
    local-server profile when the endpoint is on this machine (``ollama/`` included) > the
    defaults (:func:`pageindex.llm.profile.settle`); and the lines that say the doctor's and the
    profile's choices (for stderr, once the endpoint is known to answer)."""
    from pageindex.llm.profile import DOCTOR_WINDOW, settle

    given = {
        "timeout_s": timeout,
        "max_retries": max_retries,
        "concurrency": concurrency,
        "json_mode": True if json_mode else None,  # the flag's False is not a choice
        "context_window": context_window,
    }
    settled = settle(model, base_url, given, defaults={"concurrency": 8})
    # as bench run says them: the local-server profile first, then the doctor's settings as notes
    notes = [profile] if (profile := settled.note()) else []
    notes += [f"note: settings from pageindex doctor: {note}" for note in settled.doctor_notes]
    settings = settled.settings
    probed = settled.sources.get("context_window") == "pageindex doctor"
    return {
        "timeout": settings["timeout_s"],
        "max_retries": settings["max_retries"],
        "concurrency": settings["llm_concurrency"] or settings["concurrency"],
        "retry_timeouts": settings["retry_timeouts"],
        "json_mode": bool(settings.get("json_mode")),
        "context_window": settings.get("context_window"),  # the flag, else the doctor's probe
        "context_window_source": DOCTOR_WINDOW if probed else None,
    }, notes
