"""The LLM layer: any OpenAI-compatible model, structured outputs, usage, cache/replay, budget,
and a scripted model for tests. See ``client.py`` for behaviour, ``providers/`` for the model
providers, ``scripted.py`` for tests.

Names are imported on first use: the client pulls in openai and instructor, which a command that
only lists retrievers or reads the cache never needs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pageindex.lazy import lazy_getattr

_EXPORTS = {
    "Budget": "pageindex.llm.budget",
    "BudgetExceeded": "pageindex.llm.types",
    "CacheMode": "pageindex.llm.cache",
    "CacheStats": "pageindex.llm.cache",
    "ChatResponse": "pageindex.llm.types",
    "ContextLengthError": "pageindex.llm.types",
    "HTTPStatusError": "pageindex.llm.types",
    "LLMCache": "pageindex.llm.cache",
    "LLMCallError": "pageindex.llm.types",
    "LLMClient": "pageindex.llm.client",
    "LLMConfigError": "pageindex.llm.types",
    "LLMError": "pageindex.llm.types",
    "LLMTimeout": "pageindex.llm.types",
    "MalformedReply": "pageindex.llm.types",
    "Message": "pageindex.llm.types",
    "ModelPrice": "pageindex.llm.pricing",
    "ModelSpec": "pageindex.llm.spec",
    "OutputTruncated": "pageindex.llm.types",
    "Pricing": "pageindex.llm.pricing",
    "ReplayMiss": "pageindex.llm.types",
    "ScriptedCall": "pageindex.llm.scripted",
    "ScriptedExhausted": "pageindex.llm.scripted",
    "ScriptedModel": "pageindex.llm.scripted",
    "ScriptedReply": "pageindex.llm.scripted",
    "ScriptedRequest": "pageindex.llm.scripted",
    "StructuredOutputError": "pageindex.llm.types",
    "UnusableReply": "pageindex.llm.types",
    "StructuredResponse": "pageindex.llm.types",
    "ToolCall": "pageindex.llm.types",
    "ToolCallError": "pageindex.llm.types",
    "ToolSpec": "pageindex.llm.types",
    "Usage": "pageindex.llm.types",
    "UsageLedger": "pageindex.llm.ledger",
    "UsageRecord": "pageindex.llm.types",
    "check_reachable": "pageindex.llm.spec",
    "default_cache_path": "pageindex.llm.cache",
    "error_kind_name": "pageindex.llm.types",
    "is_model_failure": "pageindex.llm.types",
    "load_pricing": "pageindex.llm.pricing",
    "make_client": "pageindex.llm.make",
    "parse_spec": "pageindex.llm.spec",
    "sum_usage": "pageindex.llm.ledger",
}

__all__ = [
    "Budget",
    "BudgetExceeded",
    "CacheMode",
    "CacheStats",
    "ChatResponse",
    "ContextLengthError",
    "HTTPStatusError",
    "LLMCache",
    "LLMCallError",
    "LLMClient",
    "LLMConfigError",
    "LLMError",
    "LLMTimeout",
    "MalformedReply",
    "Message",
    "OutputTruncated",
    "ModelPrice",
    "ModelSpec",
    "Pricing",
    "ReplayMiss",
    "ScriptedCall",
    "ScriptedExhausted",
    "ScriptedModel",
    "ScriptedReply",
    "ScriptedRequest",
    "StructuredOutputError",
    "UnusableReply",
    "StructuredResponse",
    "ToolCall",
    "ToolCallError",
    "ToolSpec",
    "Usage",
    "UsageLedger",
    "UsageRecord",
    "check_reachable",
    "default_cache_path",
    "error_kind_name",
    "is_model_failure",
    "load_pricing",
    "make_client",
    "parse_spec",
    "sum_usage",
]

if TYPE_CHECKING:
    from pageindex.llm.budget import Budget
    from pageindex.llm.cache import CacheMode, CacheStats, LLMCache, default_cache_path
    from pageindex.llm.client import LLMClient
    from pageindex.llm.ledger import UsageLedger, sum_usage
    from pageindex.llm.make import make_client
    from pageindex.llm.pricing import ModelPrice, Pricing, load_pricing
    from pageindex.llm.scripted import (
        ScriptedCall,
        ScriptedExhausted,
        ScriptedModel,
        ScriptedReply,
        ScriptedRequest,
    )
    from pageindex.llm.spec import ModelSpec, check_reachable, parse_spec
    from pageindex.llm.types import (
        BudgetExceeded,
        ChatResponse,
        ContextLengthError,
        HTTPStatusError,
        LLMCallError,
        LLMConfigError,
        LLMError,
        LLMTimeout,
        MalformedReply,
        Message,
        OutputTruncated,
        ReplayMiss,
        StructuredOutputError,
        StructuredResponse,
        ToolCall,
        ToolCallError,
        ToolSpec,
        UnusableReply,
        Usage,
        UsageRecord,
        error_kind_name,
        is_model_failure,
    )


__getattr__ = lazy_getattr(__name__, _EXPORTS)
