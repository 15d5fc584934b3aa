"""One interface for every retriever: the registry, ``retrieve``/``aretrieve``, and the
per-question recorder :class:`QuestionRun`.

Adding a retriever = one module in ``pageindex/retrievers/`` that registers itself::

    class MyOptions(RetrieverOptions):          # extra="forbid": unknown options are an error
        max_turns: int = Field(12, ge=1, description="...")

    @register_retriever("mine", options=MyOptions, prompt_version="mine_v1")
    async def mine(run: QuestionRun, opts: MyOptions) -> RetrievalResult:
        reply = await run.chat([...], tools=[FETCH_SECTION_TOOL], role="agent")
        messages += await run.run_tool_calls(reply.tool_calls)
        return run.result("answer", answer="...", sources=[...])

A class works too: ``@register_retriever("mine")`` on a class with an ``Options`` attribute,
an optional ``prompt_version`` attribute and an ``async def run(self, run, opts)`` method.
Every module of the package is imported on the first registry lookup (``pageindex.registry``,
kind ``"retriever"``), and so are plug-ins (``PAGEINDEX_PLUGINS``, ``pageindex.plugins`` entry
points): a retriever outside the package registers the same way, so nothing else needs editing.

What the recorder does for every retriever (so none of them repeats it):

- wraps the LLM client for one question: :meth:`QuestionRun.chat` / :meth:`structured`
  tag each call (retriever, question id, role, retrieval id) and add its usage to
  ``usage.by_role[role]`` (the role is the retriever's own label: ``agent``, ``extraction``,
  ``synthesis``...; default the client's role). Failed structured calls count the tokens
  the LLM layer reports on the error.
- records ``pages_fetched`` (every page whose text a model was shown: the fetcher reports
  its slices, which a tool loop holds until the request carrying them is answered; a retriever
  that puts page text into a prompt itself calls :meth:`QuestionRun.page_texts`, or
  :meth:`show_pages`), ``tool_calls`` and ``turns``
  (read-only; a retriever counts through :meth:`QuestionRun.count_turn` and
  :meth:`QuestionRun.count_tool_calls`), trace events with timestamps, and latency.
- after the retriever returns, checks every cited page (``verify.verify_result``).

Status, the same in every retriever: ``error`` = the infrastructure failed (HTTP error,
timeout, context overflow, no connection): ``error`` holds the message and ``error_kind`` the
cause (``http_<status>``, ``timeout``, ``context_length``, ...); ``fail`` = the model answered
but unusably or gave up: a structured reply that never validated (``invalid_reply``, with the
validation messages in ``reason``) or was cut at ``max_tokens`` (``output_truncated``), or a
retriever's own "not found". Any exception inside a retriever is turned into one of these; the
caller never sees it raised. The one exception is
:class:`~pageindex.llm.types.BudgetExceeded`: it **propagates** out of ``aretrieve`` so the
bench runner stops starting new work; the partial result (status ``error``, kind
``budget``, usage so far) is attached to the exception as ``exc.partial_result``.
Configuration mistakes (unknown retriever, unknown or invalid option, a model-based retriever
without a model, a time limit that is not a finite number > 0, a query that is empty or not text, a
tree that is no :class:`Tree`, a context that cannot be read or names another document than the
tree's, an ``llm`` that is neither a model spec nor a client) raise :class:`RetrieverConfigError`
in one line before any work starts.

``time_limit`` (seconds, default none) bounds one question's whole retrieval, every model call and
tool turn of it: a retriever still working then is cancelled and the result is an ``error`` of kind
``time_limit``, with the usage, pages and trace recorded so far (the call cut short is one call, error
``cancelled``, its attempts that came back with their tokens and the one in flight with its
estimated prompt tokens charged to the budget). Each call keeps its own client timeout as well.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import math
import os
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from pageindex import registry
from pageindex.llm.ledger import UsageLedger, sum_usage
from pageindex.llm.tokens import default_max_tokens
from pageindex.llm.types import (
    BudgetExceeded,
    ChatResponse,
    ContextLengthError,
    LLMError,
    Message,
    ToolCall,
    ToolSpec,
    UnusableReply,
    UsageRecord,
    is_model_failure,
)
from pageindex.retrievers.index import render_index
from pageindex.retrievers.replies import AnswerWithSources, sources_from_citations
from pageindex.retrievers.result import RetrievalResult, RoleUsage, Status, TraceEvent
from pageindex.retrievers.tools import (
    DEFAULT_SLICE_CHARS,
    PageHold,
    SectionFetcher,
    SectionSlice,
    report_pages,
)
from pageindex.retrievers.verify import verify_result
from pageindex.tree.model import Tree
from pageindex.wording import error_text, first_error, plainly

if TYPE_CHECKING:
    from pageindex.llm import LLMClient

T = TypeVar("T", bound=BaseModel)
DEFAULT_RETRIEVER = "iterative"
TEMPLATE_TOKENS = 8  # a chat template's own tokens around each message (role markers), kept free
MIN_CUT_CHARS = 200  # a text cut to fit keeps at least this much, else it is left out
SHARE_FLOOR = 256  # tokens of page text a first pass keeps of its room, whatever its share
MIN_SLICE_CHARS = 1000  # fetch_section slices fitted to a small context window are at least this long


class RetrieverConfigError(ValueError):
    """Unknown retriever, unknown or invalid option, or a missing model: raised before work starts."""


class QuestionContext(BaseModel):
    """What the caller knows about the question besides its text (the oracle reads the
    gold ``evidence_pages``; other retrievers must not)."""

    model_config = ConfigDict(extra="forbid")  # a misspelt field (evidence_page) is an error, not dropped

    question_id: str | None = None
    evidence_pages: list[int] = Field(default_factory=list)  # 1-based PDF pages (gold)
    doc_name: str | None = None
    question_type: str | None = None
    extra: dict[str, Any] = Field(default_factory=dict)


class RetrieverOptions(BaseModel):
    """Base of every retriever's options: unknown names are an error, never ignored. A list option given
    as text (``--opt pages=2,3`` on the command line) is its comma-separated items, and a dict option
    given as text is a JSON object (``--opt 'weights={"a": 1}'``), unless the option converts text itself
    (a ``field_validator(mode="before")``, as the oracle's ``pages``) or also takes text (``str | list``)."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _containers_from_text(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        own = {f for v in cls.__pydantic_decorators__.field_validators.values() for f in v.info.fields}
        out = dict(data)
        for name, value in data.items():
            field = cls.model_fields.get(name)
            if field is None or name in own or not isinstance(value, str):
                continue
            kind = _container_kind(field.annotation)
            if kind == "list":
                out[name] = [item.strip() for item in value.split(",") if item.strip()]
            elif kind == "dict":
                with contextlib.suppress(ValueError):  # not JSON: pydantic says "must be a valid dictionary"
                    out[name] = json.loads(value)
        return out


def _container_kind(annotation: Any) -> str | None:
    """``"list"`` for a list, tuple or set annotation (optionally ``| None``), ``"dict"`` for a mapping;
    None for anything else, and for a union that also takes text."""
    import collections.abc
    import types
    import typing

    args = [annotation]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if any(a is str for a in args) or len(args) != 1:
        return None
    origin = typing.get_origin(args[0]) or args[0]
    if origin in (list, tuple, set, frozenset, collections.abc.Sequence, collections.abc.Set):
        return "list"
    if origin in (dict, collections.abc.Mapping):
        return "dict"
    return None


class ModelCallOptions(RetrieverOptions):
    """Options of retrievers that call a model: the completion cap of each call."""

    max_tokens: int | None = Field(
        None, ge=1, description="completion-token cap per model call (None = the role's default)"
    )


class FetchOptions(ModelCallOptions):
    """Options of retrievers that read sections through ``fetch_section`` (and an index)."""

    slice_chars: int = Field(DEFAULT_SLICE_CHARS, ge=200, description="characters per fetch_section slice")
    index_tokens: int | None = Field(
        None,
        ge=64,
        description="tokens the section index may use (None = half of what the model's context "
        "leaves for the prompt, when the context window is known)",
    )


RetrieverFn = Callable[["QuestionRun", Any], Awaitable[RetrievalResult]]


@dataclass(frozen=True)
class RetrieverSpec:
    name: str
    run: RetrieverFn
    options: type[RetrieverOptions]
    prompt_version: str
    description: str
    needs_llm: bool

    def parse_options(self, opts: dict[str, Any]) -> RetrieverOptions:
        try:
            return self.options.model_validate(opts)
        except ValidationError as exc:
            problems = []
            for e in exc.errors():
                loc = ".".join(str(p) for p in e["loc"])
                if e["type"] == "extra_forbidden":
                    problems.append(f"unknown option {loc!r}")
                elif not loc:  # the options model's own rule, of the options together (it said "option ''")
                    given = ", ".join(f"{k}={v!r}" for k, v in opts.items()) or "by default"
                    problems.append(f"the options {given} are refused together: {plainly(e['msg'])}")
                else:
                    problems.append(f"option {loc!r}: {plainly(e['msg'])}")
            known = ", ".join(self.options.model_fields) or "none"
            raise RetrieverConfigError(
                f"retriever {self.name!r}: {'; '.join(problems)} (known options: {known})"
            ) from None

    def option_help(self) -> list[tuple[str, str, str]]:
        """(name, default, description) of every option, for ``--help`` text and the README."""
        return [  # a default_factory's value, not PydanticUndefined
            (n, repr(f.get_default(call_default_factory=True)), f.description or "")
            for n, f in self.options.model_fields.items()
        ]


KIND = "retriever"
# Every module of these is imported on the first lookup (they register themselves); plug-ins too.
registry.declare(KIND, "pageindex.retrievers", "pageindex.analyst.session_retriever")


def register_retriever(
    name: str,
    *,
    options: type[RetrieverOptions] | None = None,
    prompt_version: str = "",
    description: str = "",
    needs_llm: bool = True,
) -> Callable[[Any], Any]:
    """Register a retriever function or class under ``name`` (see the module docstring)."""

    if not name or name != name.strip() or any(c in name for c in ", =\t\n"):
        # --retrievers splits at commas and --opt at "=": such a name could never be asked for
        raise TypeError(f"retriever {name!r}: a name is a word without spaces, commas or '=' (e.g. 'mine')")

    def decorate(obj: Any) -> Any:
        if inspect.isclass(obj):
            instance = obj()
            fn = instance.run
            opts_cls = options or getattr(obj, "Options", RetrieverOptions)
            version = prompt_version or getattr(obj, "prompt_version", "")
        else:
            fn, opts_cls, version = obj, options or RetrieverOptions, prompt_version
        if not inspect.iscoroutinefunction(fn):
            raise TypeError(f"retriever {name!r}: run must be an async function")
        try:
            inspect.signature(fn).bind(None, None)
            # two arguments named as the public call's are a run written for retrieve(tree, query): its
            # every sample would fail (trial 14: `async def f(query, tree)` registered)
            first_two = list(inspect.signature(fn).parameters)[:2]
            if set(first_two) & {"query", "tree", "question"}:
                raise TypeError
        except TypeError:
            raise TypeError(
                f"retriever {name!r}: run must take (run, opts), a QuestionRun and its options "
                f"(run.tree, run.query), not {inspect.signature(fn)}"
            ) from None
        if opts_cls.model_config.get("extra") != "forbid":
            raise TypeError(
                f"retriever {name!r}: its Options must forbid extra fields (subclass RetrieverOptions)"
            )
        if problem := _invalid_default(opts_cls):
            # pydantic does not validate defaults: every run would use a value no --opt could give
            raise TypeError(f"retriever {name!r}: {problem}; give a valid default")
        doc = description or (inspect.getdoc(obj) or "").split("\n\n")[0].replace("\n", " ")
        spec = RetrieverSpec(name, fn, opts_cls, version, doc, needs_llm)
        registry.register(KIND, name, spec, origin=getattr(obj, "__module__", None))
        return obj

    return decorate


def _invalid_default(options: type[RetrieverOptions]) -> str | None:
    """The first option whose default its own field refuses (``pages: int = Field(0, ge=1)``), said
    as ``the default of option 'pages' (0) is refused: must be at least 1``, or the defaults a rule of
    the whole options model refuses together (a ``model_validator``: ``low`` above ``high``, which
    registered, and every run stopped with ``option '': ...``); None when all hold.
    Options without a default are left to the caller."""
    fields = options.model_fields.items()
    defaults = {n: f.get_default(call_default_factory=True) for n, f in fields if not f.is_required()}
    try:
        options.model_validate(defaults)
    except ValidationError as exc:
        for e in exc.errors():
            if e["type"] != "missing" and e["loc"] and e["loc"][0] in defaults:
                field = str(e["loc"][0])
                said = f"({defaults[field]!r}) is refused: {plainly(e['msg'])}"
                return f"the default of option {field!r} {said}"
            if not e["loc"]:  # the model's own rule, of the defaults together
                return f"its options' defaults are refused together: {plainly(e['msg'])}"
    return None


def load_retrievers() -> None:
    """Import every retriever module and plug-in once (they register themselves). A module that
    fails to import is remembered and named when its retriever is asked for."""
    registry.discover(KIND)


def available_retrievers() -> dict[str, RetrieverSpec]:
    return dict(sorted(registry.entries(KIND).items()))


def get_retriever(name: str) -> RetrieverSpec:
    spec = registry.lookup(KIND, name)
    if spec is None:
        known = ", ".join(sorted(registry.names(KIND))) or "none"
        msg = f"unknown retriever {name!r} (available: {known}){registry.missing_hint(KIND)}"
        failed = registry.import_error(KIND, name)
        if failed:
            msg = f"retriever module {name!r} failed to import: {failed}"
        raise RetrieverConfigError(msg)
    return spec


def plugin_model_hint(name: str) -> str:
    """What is said after "needs a model" of a plug-in retriever: registered as the README's example is,
    without ``needs_llm=False``, one that calls no model was skipped or refused for want of one, and no
    line said how it tells the harness (trial 23). Empty for the package's own retrievers."""
    module = registry.plugin_identity(KIND, name)
    if not module:
        return ""
    return (
        f" ({name} is a plug-in, {module.split()[0]}: one that calls no model says so with "
        "@register_retriever(..., needs_llm=False))"
    )


# ----------------------------------------------------------------------------- recorder
class QuestionRun:
    """Everything one retrieval of one question records; handed to the retriever."""

    def __init__(
        self,
        *,
        spec: RetrieverSpec,
        tree: Tree,
        query: str,
        options: RetrieverOptions,
        llm: LLMClient | None,
        context: QuestionContext,
    ):
        self.spec = spec
        self.tree = tree
        self.query = query
        self.options = options
        self.context = context
        self.prompt_version = spec.prompt_version
        self.retrieval_id = uuid.uuid4().hex[:12]
        self.trace: list[TraceEvent] = []
        self.pages_fetched: list[int] = []  # in the order first shown
        self._turns = 0
        self._tool_calls = 0
        self._llm = llm
        # Usage is not counted here: every call the client makes is one record in its ledger,
        # tagged with this retrieval's id (see :meth:`_tag`); :meth:`usage` reads them back.
        self._ledger: UsageLedger | None = getattr(llm, "ledger", None) if llm is not None else None
        if self._ledger is not None:  # a ledger that keeps only the retrievals under way keeps this one's
            self._ledger.hold(self.retrieval_id)
        # Cost: None ("unknown") from the start when the model has no price, so a sample of an
        # unpriced model is never 0.0, however many calls it made (none included).
        self._priced = llm is None or _priced(llm)
        self._fetcher: SectionFetcher | None = None
        self._fetcher_sized = False  # slices fitted to the model's context window (see fetcher)
        self._t0 = time.perf_counter()

    # -- recording ------------------------------------------------------------------
    @property
    def turns(self) -> int:
        """Model turns so far (read-only: :meth:`count_turn`)."""
        return self._turns

    @property
    def tool_calls(self) -> int:
        """Tool calls executed so far (read-only: :meth:`count_tool_calls`)."""
        return self._tool_calls

    def count_turn(self, reached: int | None = None) -> int:
        """One more model turn (or, with ``reached``, at least that many); the count."""
        self._turns = self._turns + 1 if reached is None else max(self._turns, reached)
        return self._turns

    def count_tool_calls(self, n: int = 1) -> int:
        """``n`` more tool calls (executed elsewhere than :meth:`run_tool_call`); the count."""
        self._tool_calls += n
        return self._tool_calls

    def elapsed(self) -> float:
        return time.perf_counter() - self._t0

    def event(self, kind: str, message: str, /, **data: Any) -> None:
        """Add a trace event (kind: model_call, tool_call, decision, error, info)."""
        self.trace.append(TraceEvent(kind=kind, message=message, data=data, t=round(self.elapsed(), 4)))  # type: ignore[arg-type]

    def show_pages(self, pages: Iterable[int], *, why: str = "") -> None:
        """Record that the text of ``pages`` was shown to a model."""
        for page in pages:
            if page not in self.pages_fetched:
                self.pages_fetched.append(page)

    def page_texts(self, pages: Iterable[int], *, max_chars_per_page: int | None = None) -> str:
        """Text of whole pages, each after its ``[page N | printed L]`` marker, inside
        ``<document>`` tags, and recorded as shown (held instead while :func:`holding_pages` is open,
        until the request carrying them is answered). For retrievers that answer from pages. Pages
        the filing does not have are left out, and said in the trace (an ``info`` event)."""
        chunks = self._page_chunks(pages, max_chars_per_page)
        return self._show_chunks(chunks)

    def _page_chunks(self, pages: Iterable[int], max_chars_per_page: int | None) -> list[tuple[int, str]]:
        """Each page the filing has with its marked text; the others said in the trace."""
        chunks, absent = [], []
        for page in pages:
            if not 1 <= page <= self.tree.page_count:
                absent.append(page)
                continue
            text = self.tree.page_text(page).strip()
            if max_chars_per_page is not None:
                text = text[:max_chars_per_page]
            chunks.append((page, f"{self._section_fetcher().marker(page)}\n{text}"))
        if absent:
            self.event(
                "info", f"pages {absent} not shown: {self.tree.doc_id} has pages 1-{self.tree.page_count}",
                absent=absent,
            )  # fmt: skip
        return chunks

    def _show_chunks(self, chunks: list[tuple[int, str]]) -> str:
        from pageindex.retrievers.prompts import wrap_document

        report_pages(self, [page for page, _ in chunks], "pages shown")
        return wrap_document("\n".join(text for _, text in chunks), doc_id=self.tree.doc_id)

    async def text_room(
        self, messages: list[Message], *, role: str, reply: type[BaseModel] | None = None,
        max_tokens: int | None = None,
    ) -> int | None:
        """Tokens of document text that still fit beside ``messages`` (the prompt without that text)
        in the model's known context window, room for the reply kept free (:meth:`reply_room`); the
        schema of ``reply`` counts too (instructor puts it in the prompt or the tool list). None when
        the window is unknown. Counted as the index is (:meth:`index`): the server's tokenizer where it
        has one, every count recorded in the cache, so a replay fits text exactly as the recording did."""
        llm = self._llm
        if llm is None:
            return None
        await llm.ensure_limits()
        if not llm.context_window:
            return None
        fixed = "\n".join(m.content or "" for m in messages)
        if reply is not None:
            fixed += "\n" + json.dumps(reply.model_json_schema())
        used = await llm.count_tokens(fixed) + TEMPLATE_TOKENS * (len(messages) + 1)
        return llm.context_window - self.reply_room(role, max_tokens) - used

    def reply_room(self, role: str, max_tokens: int | None = None) -> int:
        """Tokens a prompt of document text keeps free for the reply: its cap (:meth:`max_tokens_for`),
        at most a quarter of the window (the call's ``max_tokens`` is lowered to what the prompt leaves,
        as every call's is): a 2,048-token window less a 1,024-token cap left a FinanceBench question's
        followup prompt, with its reply schema, no room for a page."""
        window = self.llm.context_window or 0
        return min(self.max_tokens_for(role, max_tokens), window // 4)

    async def fit_texts(self, texts: list[str], room: int | None) -> list[str]:
        """The leading part of ``texts`` that fits ``room`` tokens: whole texts while they fit, the
        next cut at a line break (when a useful part of it fits) with a note that the rest was left
        out, none after it. All of them when ``room`` is None (no known window); [] when none fits."""
        if room is None or not texts:
            return list(texts)
        llm = self.llm
        whole = "\n".join(texts)
        total = await llm.count_tokens(whole)
        if total <= room:
            return list(texts)
        chars = int(room * len(whole) / max(total, 1))
        for _ in range(4):  # the ratio of a cut part differs a little from the whole's: count again
            kept = _text_prefix(texts, chars)
            if not kept:
                return []
            used = await llm.count_tokens("\n".join(kept))
            if used <= room:
                return kept
            chars = int(chars * room / used * 0.95)
        return []

    async def fitted_pages(
        self, pages: Iterable[int], build: Callable[[str, list[int]], list[Message]], *, role: str,
        reply: type[BaseModel] | None = None, max_chars_per_page: int | None = None,
        max_tokens: int | None = None, required: bool = True, share: float = 1.0,
    ) -> list[Message] | None:
        """The messages ``build(text, pages_shown)`` makes around the marked text of ``pages`` (as
        :meth:`page_texts` renders it), with as much of that text as the model's known context window
        holds beside the rest of the prompt and the reply's cap (:meth:`fit_texts`): pages cut or
        left out are said in the trace, and only the pages shown are recorded (held while
        :func:`holding_pages` is open). When no page fits: a :class:`ContextLengthError` naming the
        window and what to do, before anything is sent, or None when not ``required`` (a later pass).
        ``share`` of the room is used (a first pass leaves the rest to the pages later passes add)."""
        chunks = self._page_chunks(pages, max_chars_per_page)
        all_pages = [page for page, _ in chunks]
        room = await self.text_room(build("", all_pages), role=role, reply=reply, max_tokens=max_tokens)
        # the <document> tags around the text; a share of the room, unless that is too little to show much
        share_of = None if room is None else max(int(room * share), min(room, SHARE_FLOOR)) - 16
        kept = await self.fit_texts([text for _, text in chunks], share_of)
        if chunks and not kept:
            if not required:
                self.event("info", f"{role}: pages {all_pages} left out: no room is left "
                                   f"in the model's {self.llm.context_window:,}-token context window")
                return None
            raise self.no_room_error(role, room or 0, max_tokens)
        shown = [(page, text) for (page, _), text in zip(chunks, kept, strict=False)]
        if len(kept) < len(chunks) or (kept and kept[-1] != chunks[len(kept) - 1][1]):
            whole = [p for (p, t), k in zip(chunks, kept, strict=False) if t == k]
            cut = [p for (p, t), k in zip(chunks, kept, strict=False) if t != k]
            left = [p for p, _ in chunks[len(kept):]]
            said = [f"pages {whole} whole"] if whole else []
            said += [f"page {cut[0]} cut"] if cut else []
            said += [f"pages {left} left out"] if left else []
            self.event(
                "info",
                f"{role}: page text cut to fit the model's {self.llm.context_window:,}-token context window: "
                + ", ".join(said),
                pages_whole=whole, pages_cut=cut, pages_left_out=left, context_window=self.llm.context_window,
            )
        return build(self._show_chunks(shown), [page for page, _ in shown])

    def no_room_error(self, role: str, room: int, max_tokens: int | None = None) -> ContextLengthError:
        """The error of a prompt that leaves no room (``room`` tokens, from :meth:`text_room`) for
        document text in the known window."""
        llm = self.llm
        window = llm.context_window or 0
        kept = self.reply_room(role, max_tokens)
        source = f" ({llm.context_window_source})" if llm.context_window_source else ""
        what = f"{role} prompt of {self.spec.name}" if role != self.spec.name else f"{role} prompt"
        return ContextLengthError(
            f"{llm.provider.where()}: the prompt does not fit the model's context: the {what} takes about "
            f"{window - kept - room:,} tokens without document text and {kept:,} are kept for the reply, "
            f"which leaves no room for a page in the {window:,}-token window{source}; nothing was sent. "
            f"Use a server with a larger context (and give it as --context-window), or a smaller reply "
            f"cap (--opt {self.spec.name}.max_tokens=N)"
        )

    def records(self) -> list[UsageRecord]:
        """The ledger's records of this retrieval's model calls (failed ones that spent tokens too)."""
        if self._ledger is None:
            return []
        return self._ledger.records(retrieval_id=self.retrieval_id)

    def release(self) -> None:
        """The retrieval is over (its result finalized): a ledger that keeps only the retrievals under way
        lets its records go (their usage is in the result and in the ledger's totals)."""
        if self._ledger is not None:
            self._ledger.release(self.retrieval_id)

    def usage(self) -> dict[str, RoleUsage]:
        """Tokens and calls so far, by the role each call was made under."""
        return _by_role(self.records())

    def tokens_used(self) -> int:
        """Prompt + completion tokens so far (all roles): for per-iteration records."""
        return sum(r.prompt_tokens + r.completion_tokens for r in self.records())

    # -- the model ------------------------------------------------------------------
    @property
    def llm(self) -> LLMClient:
        if self._llm is None:
            raise RetrieverConfigError(f"retriever {self.spec.name!r} needs a model (pass llm=...)")
        return self._llm

    @property
    def has_llm(self) -> bool:
        return self._llm is not None

    def _tag(self, role: str, tag: dict[str, Any] | None) -> dict[str, Any]:
        out: dict[str, Any] = {"retriever": self.spec.name, "role": role, "retrieval_id": self.retrieval_id}
        if self.context.question_id is not None:
            out["question_id"] = self.context.question_id
        out.update(tag or {})
        return out

    async def chat(
        self,
        messages: list[Message],
        *,
        tools: list[ToolSpec] | None = None,
        tool_choice: str = "auto",
        role: str | None = None,
        tag: dict[str, Any] | None = None,
        temperature: float = 0.0,
        max_tokens: int | None = None,
    ) -> ChatResponse:
        """``client.chat`` with usage, tags and a trace event recorded under ``role``."""
        role = role or self.llm.role
        extra = {"tool_choice": tool_choice} if tools and tool_choice != "auto" else {}
        try:
            resp = await self.llm.chat(
                messages,
                tools=tools,
                **extra,
                tag=self._tag(role, tag),
                temperature=temperature,
                max_tokens=self.max_tokens_for(role, max_tokens),
            )
        except LLMError as exc:
            self._record_failure(role, exc)
            raise
        calls = [f"{c.name}({c.raw_arguments or c.arguments})" for c in resp.tool_calls]
        preview = (resp.content or "").strip().replace("\n", " ")[:160]
        self.event(
            "model_call",
            f"{role}: {len(messages)} messages -> "
            + (f"tool calls {calls}" if calls else f"text {preview!r}"),
            role=role,
            prompt_tokens=resp.usage.prompt_tokens,
            completion_tokens=resp.usage.completion_tokens,
            tool_calls=[c.name for c in resp.tool_calls],
            finish_reason=resp.finish_reason,
            attempts=resp.attempts,
            cached=resp.usage.cached,
        )
        return resp

    async def structured(
        self,
        messages: list[Message],
        response_model: type[T],
        *,
        role: str | None = None,
        tag: dict[str, Any] | None = None,
        max_retries: int = 2,
        max_tokens: int | None = None,
        shows: PageHold | None = None,
    ) -> T:
        """``client.structured``: the validated reply; usage and a trace event recorded. The pages
        ``shows`` holds (their text is in ``messages``) count as shown once the model answered, usably
        or not; a request that failed (refused, timed out, never sent) showed them nothing."""
        role = role or self.llm.role
        try:
            out = await self.llm.structured(
                messages,
                response_model=response_model,
                tag=self._tag(role, tag),
                max_retries=max_retries,
                max_tokens=self.max_tokens_for(role, max_tokens),
            )
        except LLMError as exc:
            if shows is not None and isinstance(exc, UnusableReply):
                shows.release()
            self._record_failure(role, exc)
            raise
        if shows is not None:
            shows.release()
        self.event(
            "model_call",
            f"{role}: {len(messages)} messages -> {response_model.__name__} ({out.attempts} attempt(s))",
            role=role,
            prompt_tokens=out.usage.prompt_tokens,
            completion_tokens=out.usage.completion_tokens,
            attempts=out.attempts,
            http_attempts=out.http_attempts,
            cached=getattr(out.usage, "cached", False),
            reply=out.value.model_dump(mode="json"),
        )
        return out.value

    def max_tokens_for(self, role: str, given: int | None = None) -> int:
        """The completion cap of a call: the call's own, else the ``max_tokens`` option, else the
        client's chain (:meth:`pageindex.llm.client.LLMClient.cap_for`: its own cap, else the
        role's default, ``pageindex.llm.tokens.ROLE_MAX_TOKENS``)."""
        chosen = given or getattr(self.options, "max_tokens", None)
        if self._llm is None:
            return chosen or default_max_tokens(role)
        return self._llm.cap_for(chosen, role)

    async def index(
        self, *, max_depth: int | None = None, summaries: bool = True, role: str | None = None
    ) -> str:
        """The section index, sized to the model: at most the ``index_tokens`` option, else half of
        what the model's context window leaves for the prompt after the reply (role's cap); the
        whole index when the window is unknown. Counted with the server's tokenizer where it has
        one, else a chars/4 estimate calibrated by the server's usage reports."""
        budget = getattr(self.options, "index_tokens", None)
        llm = self._llm
        if llm is not None:
            await llm.ensure_limits()
            if budget is None:
                room = llm.prompt_budget(self.max_tokens_for(role or llm.role))
                budget = room // 2 if room is not None else None
        full = render_index(self.tree, max_depth=max_depth, summaries=summaries)
        if budget is None:
            return full
        # Tokens of the whole index (the server's tokenizer where it has one); shorter renderings
        # are counted at the same characters-per-token ratio: deterministic, so a replay sizes the
        # index exactly as the recorded run did.
        full_tokens = await llm.count_tokens(full) if llm is not None else math.ceil(len(full) / 4)
        ratio = max(full_tokens, 1) / max(len(full), 1)

        def count(text: str) -> int:
            return math.ceil(len(text) * ratio)

        text = render_index(
            self.tree, max_depth=max_depth, summaries=summaries, max_tokens=budget, count=count
        )
        self.event(
            "info",
            f"index: {count(text)} of {full_tokens} tokens (budget {budget})",
            index_tokens=count(text),
            full_index_tokens=full_tokens,
            budget=budget,
            shortened=text != full,
        )
        return text

    def _record_failure(self, role: str, exc: LLMError) -> None:
        """A trace event for a failed call (its usage, if it spent any, is already in the ledger), with
        its HTTP attempts and tokens as a call that succeeded lists them."""
        usage = getattr(exc, "usage", None)
        self.event(
            "error",
            f"{role}: model call failed: {error_text(exc)}",
            role=role,
            kind=getattr(exc, "kind", None),
            raw=(getattr(exc, "raw", None) or "")[:500],
            prompt_tokens=usage.prompt_tokens if usage is not None else 0,
            completion_tokens=usage.completion_tokens if usage is not None else 0,
            attempts=list(getattr(exc, "attempts", []) or []),
        )

    # -- the tool -------------------------------------------------------------------
    @property
    def fetcher(self) -> SectionFetcher:
        """The question's ``fetch_section`` (memory shared by every agent of this retrieval)."""
        fetcher = self._section_fetcher()
        if not self._fetcher_sized:
            self._size_fetcher(fetcher)
        return fetcher

    def _section_fetcher(self) -> SectionFetcher:
        if self._fetcher is None:
            slice_chars = getattr(self.options, "slice_chars", DEFAULT_SLICE_CHARS)
            self._fetcher = SectionFetcher(self.tree, slice_chars=slice_chars, recorder=self)
        return self._fetcher

    def _size_fetcher(self, fetcher: SectionFetcher) -> None:
        """Slices (and sub-section lists) that fit a small known context window: a slice at most twice
        the prompt's token budget in characters (the window less the reply's cap), its sub-section
        list half that, so one fetched slice fits beside the index. A 6,000-character slice never fitted
        a 2,048-token window: every tool loop stopped at its first fetch. Decided once the window is
        known (before any fetch: the index, which every tool-using retriever renders first, learns it)."""
        llm = self._llm
        window = llm.context_window if llm is not None else None
        if llm is None or not window:
            return
        self._fetcher_sized = True
        budget = llm.prompt_budget(self.max_tokens_for(llm.role)) or window
        fit = max(MIN_SLICE_CHARS, 2 * budget)
        if fit < fetcher.slice_chars:
            chosen, fetcher.slice_chars, fetcher.children_chars = fetcher.slice_chars, fit, fit // 2
            self.event(
                "info",
                f"fetch_section slices are {fit:,} characters (not {chosen:,}) to fit the model's "
                f"{window:,}-token context window",
                slice_chars=fit, context_window=window,
            )  # fmt: skip

    def run_tool_call(
        self, call: ToolCall, *, withhold_repeats: bool = False
    ) -> tuple[Message, SectionSlice | None]:
        """Execute one tool call (counted); returns the tool message and the slice, if any."""
        self.count_tool_calls()
        if call.error is not None:
            text = f"error: your call to {call.name!r} was unusable ({call.error}); check the arguments."
            self.event("error", text, tool=call.name, raw=call.raw_arguments)
            return Message(role="tool", content=text, tool_call_id=call.id, name=call.name), None
        return self.fetcher.call(call, withhold_repeats=withhold_repeats)

    async def run_tool_calls(self, calls: list[ToolCall], *, withhold_repeats: bool = False) -> list[Message]:
        """Execute tool calls in order; the tool messages to append to the conversation."""
        return [self.run_tool_call(c, withhold_repeats=withhold_repeats)[0] for c in calls]

    # -- the result -----------------------------------------------------------------
    def result(self, status: Status, **fields: Any) -> RetrievalResult:
        """A result of this retrieval; the recorder's figures are filled in by :meth:`finalize`."""
        return RetrievalResult(retriever=self.spec.name, query=self.query, status=status, **fields)

    def result_from_answer(self, reply: AnswerWithSources, **fields: Any) -> RetrievalResult:
        """Turn the shared answer-with-sources reply into a result."""
        if reply.status == "fail":
            return self.result("fail", reason=reply.reason, confidence=reply.confidence, **fields)
        return self.result(
            "answer",
            answer=reply.answer.strip(),
            confidence=reply.confidence,
            sources=sources_from_citations(self.tree, reply.sources),
            **fields,
        )

    def finalize(self, result: RetrievalResult) -> RetrievalResult:
        """Fill usage, pages, counters, trace, latency, options and version; verify citations."""
        records = self.records()  # the ledger's, read once
        total = sum_usage(records)
        result.retriever = self.spec.name
        result.query = self.query
        result.usage.by_role = _by_role(records)
        result.usage.prompt_tokens = total.prompt_tokens
        result.usage.completion_tokens = total.completion_tokens
        result.usage.cached_tokens = total.cached_tokens
        result.usage.llm_calls = total.calls
        # None ("unknown") when the model has no price or any call's cost is unknown; a retriever that
        # needs no model and called none costs nothing, whatever model the run names (bench run -r
        # bm25,extractive --model M prices every sample by M's price)
        free = not self.spec.needs_llm and total.calls == 0
        result.usage.cost_usd = total.cost_usd if self._priced or free else None
        result.pages_fetched = sorted(self.pages_fetched)
        result.turns = max(result.turns, self.turns)
        result.tool_calls = max(result.tool_calls, self.tool_calls)
        result.trace = self.trace + [e for e in result.trace if e not in self.trace]
        result.latency_s = round(self.elapsed(), 4)
        if records and all(r.cached and not r.shared for r in records):
            # A replay: keep the recorded model time (plus this run's local work), and show the
            # replay's own wall time apart. A call shared with an identical one in flight was waited
            # for live: its wall time is the sample's.
            recorded = total.latency_s
            result.extra["recorded_latency_s"] = round(recorded, 4)
            result.extra["replay_latency_s"] = result.latency_s
            result.latency_s = round(recorded + self.elapsed(), 4)
        result.prompt_version = result.prompt_version or self.prompt_version
        result.options = self.options.model_dump(mode="json")
        if self.context.question_id and "question_id" not in result.extra:
            result.extra["question_id"] = self.context.question_id
        return verify_result(self.tree, result)


def _by_role(records: list[UsageRecord]) -> dict[str, RoleUsage]:
    """Tokens and calls of ``records`` by the role each call was made under (its tag's ``role``)."""
    out: dict[str, RoleUsage] = {}
    for record in records:
        slot = out.setdefault(str(record.tag.get("role", record.role)), RoleUsage())
        slot.prompt_tokens += record.prompt_tokens
        slot.completion_tokens += record.completion_tokens
        slot.cached_tokens += record.cached_tokens
        slot.calls += record.calls
    return out


RetrievalRun = QuestionRun  # the recorder's former name, kept for code written against it


def _priced(llm: Any) -> bool:
    pricing = getattr(llm, "pricing", None)
    if pricing is None:
        return True
    try:
        return pricing.price(llm.spec, llm.model) is not None
    except Exception:  # a stand-in client without a spec
        return True


# ----------------------------------------------------------------------------- entry points
TIME_LIMIT = "time_limit"  # the error kind of a retrieval cut at aretrieve's time_limit


def _check_query(query: Any) -> None:
    """A question in words, or :class:`RetrieverConfigError` (an empty one was answered: the extractive
    baseline said "no row matches", a model retriever spent its calls on nothing)."""
    if not isinstance(query, str):
        raise RetrieverConfigError(f"query must be text (the question), got {type(query).__name__} {query!r}")
    if not query.strip():
        raise RetrieverConfigError(f"query {query!r} is empty: give the question as text")


def _check_tree(tree: Any) -> None:
    """A :class:`Tree`, or :class:`RetrieverConfigError` (a PDF's path was ``'str' object has no attribute
    'doc_id'``)."""
    if not isinstance(tree, Tree):
        hint = f"; build it first: build_tree({str(tree)!r})" if isinstance(tree, str | os.PathLike) else ""
        raise RetrieverConfigError(
            f"tree must be a Tree (build_tree(pdf) or load_tree(json)), got {type(tree).__name__}{hint}"
        )


def _question_context(context: Any) -> QuestionContext:
    """``context`` as a :class:`QuestionContext`; one it cannot be is :class:`RetrieverConfigError` in one
    line (it was pydantic's four-line ValidationError, and a misspelt field was dropped in silence)."""
    if isinstance(context, QuestionContext):
        return context
    try:
        return QuestionContext.model_validate({} if context is None else context)
    except ValidationError as exc:
        known = ", ".join(QuestionContext.model_fields)
        raise RetrieverConfigError(f"context: {first_error(exc)} (known fields: {known})") from None


def _check_document(tree: Tree, ctx: QuestionContext) -> None:
    """A context naming its document (``doc_name``) must be asked of that document's tree: the oracle
    read another filing's gold pages, and any retriever answered about the wrong filing."""
    docs = [part.doc_id for part in getattr(tree, "parts", None) or []] or [tree.doc_id]
    if ctx.doc_name is not None and ctx.doc_name not in docs:
        raise RetrieverConfigError(
            f"context doc_name {ctx.doc_name!r} is not this tree's document ({', '.join(map(repr, docs))}): "
            f"give the tree of {ctx.doc_name!r}, or no doc_name"
        )


def _error_kind(exc: BaseException) -> str:
    return getattr(exc, "kind", None) or type(exc).__name__


async def aretrieve(
    tree: Tree,
    query: str,
    *,
    retriever: str = DEFAULT_RETRIEVER,
    llm: LLMClient | str | None = None,
    context: QuestionContext | dict[str, Any] | None = None,
    time_limit: float | None = None,
    **opts: Any,
) -> RetrievalResult:
    """Answer ``query`` over ``tree`` with the named retriever (see the module docstring).

    ``llm`` is an LLM client or a model spec string (``"openai/gpt-4o-mini"``; a spec string given to
    a retriever registered with ``needs_llm=False`` is not resolved: it calls no model), ``context``
    the question's id and gold pages, ``time_limit`` the seconds the whole retrieval may take
    (none by default), ``opts`` the retriever's options.
    """
    if time_limit is not None and (
        isinstance(time_limit, bool) or not isinstance(time_limit, int | float)  # "5" was a bare TypeError
        or not (math.isfinite(time_limit) and time_limit > 0)
    ):
        raise RetrieverConfigError(f"time_limit {time_limit!r}: must be a finite number of seconds > 0")
    _check_query(query)
    _check_tree(tree)
    ctx = _question_context(context)
    _check_document(tree, ctx)
    spec = get_retriever(retriever)
    options = spec.parse_options(opts)
    if isinstance(llm, str) and not spec.needs_llm:
        llm = None  # a retriever that needs no model never calls one: the spec is not resolved
    if isinstance(llm, str):
        from pageindex.llm import make_client

        llm = make_client(llm, role="retriever")
    if llm is None and spec.needs_llm:
        needs = f"retriever {retriever!r} needs a model: pass llm=<client or model spec>"
        raise RetrieverConfigError(needs + plugin_model_hint(retriever))
    if llm is not None and not all(callable(getattr(llm, m, None)) for m in ("chat", "structured")):
        # an LLMClient or what wraps one (ask's progress); an SDK's AsyncOpenAI was every question's error,
        # "'AsyncOpenAI' object has no attribute 'ensure_limits'"
        raise RetrieverConfigError(
            "llm must be a model spec ('openai/gpt-4o-mini') or an LLMClient "
            f"(pageindex.llm.make_client), got {type(llm).__name__}"
        )
    run = QuestionRun(spec=spec, tree=tree, query=query, options=options, llm=llm, context=ctx)
    run.event("info", f"{retriever} on {tree.doc_id}: {query}", options=options.model_dump(mode="json"))
    try:
        return await _run_retrieval(run, spec, options, retriever, time_limit)
    finally:
        run.release()  # its usage is in the result: the ledger may let its records go


async def _run_retrieval(
    run: QuestionRun, spec: RetrieverSpec, options: RetrieverOptions, retriever: str, time_limit: float | None
) -> RetrievalResult:
    """Run ``run``'s retriever and finalize its result (the body of :func:`aretrieve`)."""
    limit = asyncio.timeout(time_limit)
    try:
        async with limit:
            result = await spec.run(run, options)
        if not isinstance(result, RetrievalResult):
            raise TypeError(f"retriever {retriever!r} returned {type(result).__name__}, not RetrievalResult")
    except BudgetExceeded as exc:
        run.event("error", f"budget exhausted: {exc}", kind="budget")
        exc.partial_result = run.finalize(  # type: ignore[attr-defined]
            run.result("error", error=f"BudgetExceeded: {exc}", error_kind="budget")
        )
        raise
    except LLMError as exc:
        kind = _error_kind(exc)
        run.event("error", error_text(exc), kind=kind)
        if is_model_failure(kind):  # the model answered, but unusably: a result, not an error
            result = run.result("fail", reason=f"the model's reply was unusable: {exc}", error_kind=kind)
        else:
            result = run.result("error", error=error_text(exc), error_kind=kind)
    except (asyncio.CancelledError, SystemExit) as exc:
        task = asyncio.current_task()
        if isinstance(exc, asyncio.CancelledError) and (task is None or task.cancelling()):
            raise  # a cancellation someone asked for (Ctrl-C, a stop, an outer time limit): it goes on
        # the retriever's own CancelledError (trial 14: its sample was lost and the run said "finished") or
        # sys.exit() (which ended the run with exit 3, the budget's code): its failure, an error sample
        what = "raised CancelledError, no cancellation was asked for"
        if isinstance(exc, SystemExit):
            what = f"called exit({exc.code!r}); a retriever returns a result or raises"
        message = f"{type(exc).__name__}: retriever {retriever!r} {what}"
        run.event("error", message, kind=_error_kind(exc))
        result = run.result("error", error=message, error_kind=_error_kind(exc))
    except Exception as exc:
        if isinstance(exc, TimeoutError) and limit.expired():
            message = f"TimeLimit: {retriever} did not finish within its time limit of {time_limit:g}s"
            run.event("error", message, kind=TIME_LIMIT)
            result = run.result("error", error=message, error_kind=TIME_LIMIT)
        else:
            run.event("error", error_text(exc), kind=_error_kind(exc))
            result = run.result("error", error=error_text(exc), error_kind=_error_kind(exc))
    try:
        return run.finalize(result)
    except Exception as exc:  # e.g. a retriever citing nonsense the verifier cannot read
        return run.finalize(
            run.result("error", error=error_text(exc), error_kind=_error_kind(exc))
        )


def retrieve(
    tree: Tree,
    query: str,
    *,
    retriever: str = DEFAULT_RETRIEVER,
    llm: LLMClient | str | None = None,
    context: QuestionContext | dict[str, Any] | None = None,
    time_limit: float | None = None,
    **opts: Any,
) -> RetrievalResult:
    """Synchronous :func:`aretrieve` (not callable from inside a running event loop)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no loop running: what retrieve() is for
        pass
    else:
        raise RuntimeError("retrieve() called inside an event loop; use `await aretrieve(...)`")
    # run outside the handler, so an error of the retrieval is not chained to "no running event loop"
    return asyncio.run(
        aretrieve(tree, query, retriever=retriever, llm=llm, context=context, time_limit=time_limit, **opts)
    )


# re-exported so retrievers import their plumbing from one place
__all__ = [
    "AnswerWithSources",
    "DEFAULT_RETRIEVER",
    "FetchOptions",
    "QuestionContext",
    "QuestionRun",
    "RetrievalRun",
    "RetrieverConfigError",
    "RetrieverOptions",
    "RetrieverSpec",
    "aretrieve",
    "available_retrievers",
    "get_retriever",
    "load_retrievers",
    "register_retriever",
    "retrieve",
]


def _text_prefix(texts: list[str], chars: int) -> list[str]:
    """Whole texts while ``chars`` (joined by line breaks) hold them, then the next one cut at a line
    break with a note, when at least :data:`MIN_CUT_CHARS` of it fit."""
    kept: list[str] = []
    left = chars
    for text in texts:
        if len(text) <= left:
            kept.append(text)
            left -= len(text) + 1
            continue
        note = "\n[... the rest is left out here: the model's context window is full]"
        cut = text[: max(left - len(note), 0)].rsplit("\n", 1)[0]
        if len(cut) >= MIN_CUT_CHARS:
            kept.append(cut + note)
        break
    return kept
