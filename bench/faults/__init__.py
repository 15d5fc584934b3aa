"""A fault-injecting, OpenAI-compatible model server for reliability tests.

    from bench.faults import FaultServer, SectionSeekingPolicy
    with FaultServer(policy=SectionSeekingPolicy(), rate=0.3, seed=1) as srv:
        ...  # point any OpenAI client at srv.base_url; srv.stats() counts every request

See ``server.py`` (endpoints; built on the shared fake-server base ``pageindex.llm.fakeserver``),
``faults.py`` (fault kinds and the seeded choice), ``policies.py`` (how normal replies are made)
and ``stats.py`` (the counters).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pageindex.lazy import lazy_getattr

# names are imported on first use: the server needs aiohttp (about 0.5 s), which `pageindex --help` and
# every command importing `bench.faults.limits` for its option names would otherwise pay
_EXPORTS = {
    "ChatRequest": "bench.faults.protocol",
    "FaultConfig": "bench.faults.faults",
    "FaultKind": "bench.faults.faults",
    "FaultServer": "bench.faults.server",
    "NonLoopbackError": "bench.faults.server",
    "Policy": "bench.faults.policies",
    "Reply": "bench.faults.protocol",
    "SectionSeekingPolicy": "bench.faults.policies",
    "StatsSnapshot": "bench.faults.stats",
    "ToolCallOut": "bench.faults.protocol",
    "ensure_loopback": "bench.faults.server",
    "parse_faults": "bench.faults.faults",
    "logical_call_key": "bench.faults.protocol",
}

__all__ = [
    "ChatRequest",
    "FaultConfig",
    "FaultKind",
    "FaultServer",
    "NonLoopbackError",
    "Policy",
    "Reply",
    "SectionSeekingPolicy",
    "StatsSnapshot",
    "ToolCallOut",
    "ensure_loopback",
    "parse_faults",
    "logical_call_key",
]

if TYPE_CHECKING:
    from bench.faults.faults import FaultConfig, FaultKind, parse_faults
    from bench.faults.policies import Policy, SectionSeekingPolicy
    from bench.faults.protocol import ChatRequest, Reply, ToolCallOut, logical_call_key
    from bench.faults.server import FaultServer, NonLoopbackError, ensure_loopback
    from bench.faults.stats import StatsSnapshot

__getattr__ = lazy_getattr(__name__, _EXPORTS)
