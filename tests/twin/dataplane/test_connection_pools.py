"""Client connection pools: calls wait for a connection when the pool cannot carry the offered
rate, late calls close their connections, and a pool stuck at the deadline stays stuck while the
offered rate exceeds what rebuilding connections allows."""

from __future__ import annotations

import pytest

from sregym.twin.dataplane.pools import PoolState, checkout_timeout_error, connect_ms, step

DT = 0.1


def _run(state: PoolState, seconds: float, rate: float, hold_ms: float, deadline_ms: float = 1000.0):
    result = None
    for _ in range(round(seconds / DT)):
        result = step(state, rate, hold_ms, deadline_ms, DT)
    return result


def test_a_pool_with_room_never_queues() -> None:
    state = PoolState(size=4)
    result = _run(state, 30, rate=60, hold_ms=2.0)
    assert result.wait_ms == 0.0 and result.timed_out == 0.0 and result.late == 0.0
    assert state.open == 4 and state.closed_total == 0


def test_a_slow_backend_fills_the_queue_to_the_deadline_and_closes_connections() -> None:
    state = PoolState(size=4)
    result = _run(state, 20, rate=60, hold_ms=200.0)  # 4 connections carry 20 calls/s
    assert result.wait_ms == pytest.approx(1000.0)
    assert result.timed_out > 0.2 and result.late > 0.99
    assert state.closed_total > 100


def test_exhaustion_persists_while_retries_outpace_reconnects_and_ends_below_that() -> None:
    rebuild_rate = 2 * 1000.0 / connect_ms(0.0)  # maxConnecting 2
    stuck, calm = PoolState(size=4), PoolState(size=4)
    # The callers' retries (four attempts per search) were already part of the offered rate
    # while the backend was slow.
    _run(stuck, 20, rate=3 * rebuild_rate, hold_ms=200.0)
    _run(calm, 20, rate=60, hold_ms=200.0)
    after = _run(stuck, 120, rate=3 * rebuild_rate, hold_ms=2.0)  # the backend is fast again
    assert after.late > 0.99 and after.wait_ms == pytest.approx(1000.0)
    recovered = _run(calm, 120, rate=0.25 * rebuild_rate, hold_ms=2.0)
    assert recovered.late == 0.0 and recovered.timed_out == 0.0 and calm.open == 4


def test_a_large_pool_absorbs_the_slowdown() -> None:
    state = PoolState(size=100)
    result = _run(state, 20, rate=60, hold_ms=200.0)
    assert result.timed_out == 0.0 and result.late == 0.0


def test_same_inputs_same_pool() -> None:
    a, b = PoolState(size=4), PoolState(size=4)
    assert _run(a, 25, 60, 200.0) == _run(b, 25, 60, 200.0) and a == b


def test_the_checkout_timeout_reads_as_the_go_driver_writes_it() -> None:
    text = checkout_timeout_error(4, 4.0)
    assert text.startswith("timed out while checking out a connection from connection pool: context deadline exceeded")
    assert "maxPoolSize: 4" in text and "connections in use by other operations: 4" in text
