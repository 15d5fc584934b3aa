"""The LLM layer: any OpenAI-compatible model, structured outputs, usage, cache/replay, budget,
and a scripted model for tests. See ``client.py`` for behaviour, ``scripted.py`` for tests."""

from pageindex.llm.budget import Budget
from pageindex.llm.cache import CacheMode, CacheStats, LLMCache, default_cache_path
from pageindex.llm.client import LLMClient, make_client
from pageindex.llm.ledger import UsageLedger, sum_usage
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
    LLMCallError,
    LLMConfigError,
    LLMError,
    LLMTimeout,
    MalformedReply,
    Message,
    ReplayMiss,
    StructuredOutputError,
    StructuredResponse,
    ToolCall,
    ToolCallError,
    ToolSpec,
    Usage,
    UsageRecord,
)

__all__ = [
    "Budget",
    "BudgetExceeded",
    "CacheMode",
    "CacheStats",
    "ChatResponse",
    "LLMCache",
    "LLMCallError",
    "LLMClient",
    "LLMConfigError",
    "LLMError",
    "LLMTimeout",
    "MalformedReply",
    "Message",
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
    "StructuredResponse",
    "ToolCall",
    "ToolCallError",
    "ToolSpec",
    "Usage",
    "UsageLedger",
    "UsageRecord",
    "check_reachable",
    "default_cache_path",
    "load_pricing",
    "make_client",
    "parse_spec",
    "sum_usage",
]
