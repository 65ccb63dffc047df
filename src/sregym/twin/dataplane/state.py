"""What the engine keeps per program process and per entry operation, and how a request names the
operation it reaches: shared by the engine, the exemplar traces and exec'd HTTP requests."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from sregym.twin.dataplane.gc import DEFAULT_LOAD, GcLoad, GoGC
from sregym.twin.dataplane.pools import PoolState
from sregym.twin.dataplane.programs import ProgramInstance
from sregym.twin.dataplane.queueing import QueueState, ServeResult
from sregym.twin.dataplane.spec import Operation


@dataclass
class OpResult:
    """Outcome of one operation at one process this tick: success probability and latency."""

    success: float = 1.0
    d: float = 1.0  # deterministic latency part (ms)
    m: float = 0.5  # exponential tail mean (ms)
    error: str = ""  # the dominant error text a caller receives
    error_class: str = ""

    @property
    def mean(self) -> float:
        return self.d + self.m


@dataclass
class EdgeResult:
    success: float
    d: float
    m: float
    attempts: float
    error: str = ""
    error_class: str = ""
    hit_ratio: float = 0.0
    # Attempts per call that reach a server (a refused or unroutable attempt costs it nothing),
    # the factor by which the caller's retries amplify the load on its callee.
    delivered: float | None = None


@dataclass
class Proc:
    """Engine state of one attached program process."""

    inst: ProgramInstance
    queue: QueueState = field(default_factory=QueueState)
    jvm_rules: list[dict[str, Any]] = field(default_factory=list)  # JVMChaos specs injected into it
    pod_ip: str = ""
    node: str = ""
    limit: float | None = None
    request: float = 0.0
    arrivals: dict[str, float] = field(default_factory=dict)
    served: dict[str, float] = field(default_factory=dict)
    serve_result: ServeResult | None = None
    results: dict[str, OpResult] = field(default_factory=dict)
    attempts: dict[tuple[str, str], float] = field(default_factory=dict)  # (dep, op) -> attempts/call
    delivered: dict[tuple[str, str], float] = field(default_factory=dict)  # (dep, op) -> attempts reaching a server
    cond: dict[tuple[str, str], tuple[float, float]] = field(default_factory=dict)  # (op, id) -> (ok, hit)
    # op -> (q, success) of each of its calls, last computed (reused lists: no allocation per tick)
    calls: dict[str, tuple[list[float], list[float]]] = field(default_factory=dict)
    demand_cores: float = 0.0
    cores: float = 1.0
    cpu_used: float = 0.0
    inflight: float = 0.0
    requests_total: float = 0.0
    served_total: dict[str, float] = field(default_factory=dict)  # op -> requests served so far
    served_rps: float = 0.0
    retries_total: float = 0.0
    errors_total: float = 0.0
    cancelled_total: float = 0.0  # queued calls discarded because their caller's deadline passed
    # {caller timeout ms: req/s} of the callers that cancel what they abandon, as of `deadlines_at`
    # (one dict, refilled by the first such caller of a tick: the queue keeps the last mix)
    deadlines: dict[float, float] = field(default_factory=dict)
    deadlines_at: float = -1.0
    pod_obj: dict[str, Any] | None = field(default=None, repr=False)  # the stored pod, refreshed per tick
    pools: dict[str, PoolState] = field(default_factory=dict)  # dependency -> its connection pool
    pool_demand: dict[str, float] = field(default_factory=dict)  # dependency -> calls/s sent this tick
    gc_config: GoGC | None = None  # a Go program's GOGC/GOMEMLIMIT, read once from its env
    gc: GcLoad = DEFAULT_LOAD  # this tick's collector cost (dataplane/gc.py)
    gc_cycles_total: float = 0.0
    gc_cpu_seconds_total: float = 0.0


@dataclass
class EntryTick:
    at: float
    rate: float
    success: float  # success rate (req/s)
    components: list[tuple[float, float, float]]  # (weight, d, m)


@dataclass(frozen=True)
class EntryStats:
    requests: float
    success_ratio: float
    p95_ms: float
    p50_ms: float
    rps: float


MATCH_MEMO_LIMIT = 4096  # specs, and names per spec, remembered before a memo starts over
_MATCHES: dict[int, tuple[Any, dict[tuple[str, str | None], Operation | None]]] = {}


def match_operation(proc: Proc, name: str, method: str | None) -> Operation | None:
    """The operation of `proc`'s program that a request for `name` (and `method`) reaches.

    Specs are frozen, so the answer for a (spec, name, method) never changes: the engine asks
    this for every edge and entry every tick, and the memo turns the route-template scan into
    one dict lookup. The entry keeps its spec so a recycled `id()` cannot alias another spec."""
    spec = proc.inst.spec
    entry = _MATCHES.get(id(spec))
    if entry is None or entry[0] is not spec:
        if len(_MATCHES) >= MATCH_MEMO_LIMIT:
            _MATCHES.clear()
        entry = _MATCHES[id(spec)] = (spec, {})
    memo = entry[1]
    key = (name, method)
    if key in memo:
        return memo[key]
    if len(memo) >= MATCH_MEMO_LIMIT:
        memo.clear()
    found = memo[key] = _match_operation(spec, name, method)
    return found


def _match_operation(spec: Any, name: str, method: str | None) -> Operation | None:
    op = spec.operation(name, method)
    if op is not None:
        return op
    if " " in name:  # "GET /hotels"
        verb, _, path = name.partition(" ")
        return spec.operation(path, verb)
    path = urlsplit(name).path if "://" in name else name.split("?", 1)[0]
    for candidate in spec.operations:
        if candidate.name == path and (method is None or candidate.method == method):
            return candidate
    return match_route(spec.operations, path, method)


def match_route(operations: Any, path: str, method: str | None) -> Operation | None:
    """A route template (`/api/products/{productId}`) matching a concrete path: each `{...}`
    segment stands for one non-empty path segment, as web frameworks' routers match them."""
    parts = path.rstrip("/").split("/")
    for candidate in operations:
        if "{" not in candidate.name or (method is not None and candidate.method != method):
            continue
        pattern = candidate.name.split("/")
        if len(pattern) == len(parts) and all(
                p == s or (p.startswith("{") and p.endswith("}") and s) for p, s in zip(pattern, parts, strict=True)):
            return candidate
    return None
