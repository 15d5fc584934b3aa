"""A fault-injecting, OpenAI-compatible model server for reliability tests.

    from bench.faults import FaultServer, SectionSeekingPolicy
    with FaultServer(policy=SectionSeekingPolicy(), rate=0.3, seed=1) as srv:
        ...  # point any OpenAI client at srv.base_url; srv.stats() counts every request

See ``server.py`` (endpoints; built on the shared fake-server base ``pageindex.llm.fakeserver``),
``faults.py`` (fault kinds and the seeded choice), ``policies.py`` (how normal replies are made)
and ``stats.py`` (the counters).
"""

from bench.faults.faults import FaultConfig, FaultKind, parse_faults
from bench.faults.policies import Policy, SectionSeekingPolicy
from bench.faults.protocol import ChatRequest, Reply, ToolCallOut, logical_call_key
from bench.faults.server import FaultServer, NonLoopbackError, ensure_loopback
from bench.faults.stats import StatsSnapshot

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
