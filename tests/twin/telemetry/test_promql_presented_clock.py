"""The PromQL engine's presentation offset (`present_offset_s`): what the served Prometheus API
computes on the client's clock, while in-process engines (offset 0) keep simulated time."""

from __future__ import annotations

import pytest

from sregym.twin.telemetry.promql import Engine
from sregym.twin.telemetry.promql.clock_valued import is_clock_valued
from sregym.twin.telemetry.tsdb import STALE_NAN, TSDB

SIM = 1_000_000  # simulated now, seconds
OFFSET = 5_000_000


@pytest.fixture
def tsdb() -> TSDB:
    db = TSDB()
    for t in range(SIM - 120, SIM + 1, 15):
        db.append({"__name__": "up", "job": "a"}, t * 1000, 1.0)
        db.append({"__name__": "kube_pod_created", "pod": "p"}, t * 1000, SIM - 600)
        db.append({"__name__": "requests_total", "pod": "p"}, t * 1000, float(t))
    return db


def _value(engine: Engine, query: str) -> float:
    result = engine.instant(query, SIM * 1000)
    return float(result.value.value if result.type == "scalar" else result.value[0].value)


@pytest.mark.parametrize("query, sim_value", [
    ("time()", SIM),
    ("max(timestamp(up))", SIM),
    ("max(timestamp(vector(1)))", SIM),
    ("max(kube_pod_created)", SIM - 600),
    ("max_over_time(kube_pod_created[1m])", SIM - 600),
    ("max(requests_total)", SIM),             # an ordinary value is never moved
    ("time() - max(kube_pod_created)", 600),  # differences are unchanged
])
def test_offset_moves_instants_only(tsdb: TSDB, query: str, sim_value: float) -> None:
    assert _value(Engine(tsdb), query) == sim_value
    moved = sim_value + OFFSET if "time() -" not in query and "requests" not in query else sim_value
    assert _value(Engine(tsdb, present_offset_s=OFFSET), query) == moved


def test_at_modifier_is_read_on_the_presented_clock(tsdb: TSDB) -> None:
    engine = Engine(tsdb, present_offset_s=OFFSET)
    assert _value(engine, f"max(timestamp(up @ {SIM - 60 + OFFSET}))") == SIM - 60 + OFFSET
    assert _value(Engine(tsdb), f"max(timestamp(up @ {SIM - 60}))") == SIM - 60


def test_stale_markers_stay_stale(tsdb: TSDB) -> None:
    tsdb.append({"__name__": "kube_pod_created", "pod": "p"}, (SIM + 5) * 1000, STALE_NAN)
    result = Engine(tsdb, present_offset_s=OFFSET).instant("kube_pod_created", (SIM + 10) * 1000)
    assert result.value == []


@pytest.mark.parametrize("name, expected", [
    ("kube_pod_created", True), ("kube_deployment_created", True), ("node_boot_time_seconds", True),
    ("container_last_seen", True), ("prometheus_config_last_reload_success_timestamp_seconds", True),
    ("kube_pod_container_status_restarts_total", False), ("node_cpu_seconds_total", False),
    ("container_cpu_usage_seconds_total", False), ("", False),
])
def test_clock_valued_families(name: str, expected: bool) -> None:
    assert is_clock_valued(name) is expected
