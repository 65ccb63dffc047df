"""A client's connection pool to a datastore (the Go MongoDB driver's `maxPoolSize`), as a fluid
queue of calls waiting to check a connection out.

A call holds a connection for its round trip. While `open` connections can serve the offered rate
(`rate × hold < open`) nobody waits. When they cannot, calls wait in FIFO order; the call at the
head has waited as long as the queue holds arrivals (`waiting / rate`). Waiters whose context
deadline passes give up with the driver's checkout timeout. A call that gets a connection too
late — its deadline expires while the server is still answering — is cancelled mid-operation, and
the driver closes that connection: it cannot reuse a socket with a reply in flight. A replacement
needs a TCP handshake, `hello` and SCRAM authentication, and the driver establishes at most
`maxConnecting` (2) at a time.

That is the loop: once the queue reaches the deadline, every checkout is late, every late call
destroys its connection, and throughput falls to the rate at which connections can be rebuilt. If
the callers' retries keep the offered rate above that, the queue stays at the deadline after
whatever slowed the server has gone; a pool large enough to absorb the slowdown never queues.
"""

from __future__ import annotations

from dataclasses import dataclass

from sregym.twin.dataplane.queueing import exceed

DEFAULT_MAX_CONNECTING = 2  # go.mongodb.org/mongo-driver: maxConnecting default
# Establishing a connection: server-side SCRAM-SHA-256 key derivation and the driver's handshake
# work, plus round trips (TCP, hello, saslStart, two saslContinue).
CONNECT_BASE_MS = 25.0
CONNECT_ROUND_TRIPS = 5


@dataclass
class PoolState:
    """Carried across ticks for one (process, dependency) pool."""

    size: int
    open: float = -1.0  # established connections (-1: not yet started, filled on first use)
    waiting: float = 0.0  # calls queued for a checkout
    closed_total: float = 0.0  # connections closed by cancelled operations
    checkout_timeouts_total: float = 0.0
    at: float = -1.0  # the tick of `last`
    last: PoolResult | None = None


@dataclass(frozen=True)
class PoolResult:
    """One tick of a pool, as the calls through it see it."""

    wait_ms: float  # checkout wait of the calls served now
    timed_out: float  # share of the calls that gave up waiting for a connection
    late: float  # share of the served calls cancelled mid-operation (their connection closed)
    in_use: float  # connections checked out (for the driver's error text)
    deadline_ms: float = 0.0  # when the calls that failed gave up


def connect_ms(rtt_ms: float) -> float:
    return CONNECT_BASE_MS + CONNECT_ROUND_TRIPS * max(rtt_ms, 0.0)


def step(state: PoolState, rate: float, hold_ms: float, deadline_ms: float, dt: float, *, rtt_ms: float = 0.0,
         max_connecting: int = DEFAULT_MAX_CONNECTING) -> PoolResult:
    """Advance the pool one tick: `rate` calls/s arrive, each holds a connection `hold_ms`, and
    gives up at `deadline_ms` (its context deadline)."""
    size = float(max(state.size, 1))
    if state.open < 0:
        state.open = size  # the pool warmed up with the first requests (minPoolSize 0)
    state.open = min(size, state.open + max(max_connecting, 1) * dt * 1000.0 / connect_ms(rtt_ms))
    hold_s = max(hold_ms, 0.01) / 1000.0
    deadline_s = max(deadline_ms, 1.0) / 1000.0
    head_age_s = min(deadline_s, state.waiting / rate) if rate > 0 else 0.0
    late = exceed(head_age_s * 1000.0 + hold_ms * 0.7, hold_ms * 0.3, deadline_ms) if state.waiting > 0 else 0.0
    state.waiting += rate * dt
    # A late call takes its connection with it; an on-time one uses hold_s of it.
    per_call = late + (1.0 - late) * hold_s / dt
    served = min(state.waiting, state.open / max(per_call, 1e-9))
    state.waiting -= served
    closed = min(served * late, state.open)
    state.open -= closed
    state.closed_total += closed
    timed_out = max(0.0, state.waiting - rate * deadline_s)  # older than the deadline: gave up
    state.waiting -= timed_out
    state.checkout_timeouts_total += timed_out
    handled = served + timed_out
    in_use = min(size, rate * hold_s + (size - state.open))
    return PoolResult(wait_ms=head_age_s * 1000.0, timed_out=timed_out / handled if handled > 0 else 0.0,
                      late=late, in_use=in_use, deadline_ms=deadline_ms)


def checkout_timeout_error(size: int, in_use: float) -> str:
    """go.mongodb.org/mongo-driver (≥ 1.11) when the wait for a pooled connection hits the context deadline."""
    busy = max(0, min(size, round(in_use)))
    return ("timed out while checking out a connection from connection pool: context deadline exceeded; "
            f"maxPoolSize: {size}, connections in use by cursors: 0, connections in use by transactions: 0, "
            f"connections in use by other operations: {busy}")


def cancelled_read_error(host: str, port: int, closed_total: float) -> str:
    """The driver's error for an operation whose context expired while it read the reply (the
    connection, named by its pool-wide id, is then closed)."""
    return f"connection({host}:{port}[-{int(closed_total) + 1}]) incomplete read of message header: " \
           "context deadline exceeded"


__all__ = ["CONNECT_BASE_MS", "DEFAULT_MAX_CONNECTING", "PoolResult", "PoolState", "cancelled_read_error",
           "checkout_timeout_error", "connect_ms", "step"]
