"""The Go GC cost model: GOGC and GOMEMLIMIT set what a request costs, a default process costs
what it always did, and the collector shows in the Go runtime metrics of /metrics."""

from __future__ import annotations

import pytest

from sregym.twin.dataplane.gc import BASE_GC_SHARE, GoGC, gc_load, go_gc_of
from support.problem_runs import deployed

GC_PROBLEM = "hotel-reservation/metastable-gc-capacity-v1"


@pytest.mark.parametrize(("env", "expected"), [
    ({}, GoGC(100.0, None)),
    ({"GOGC": "off"}, GoGC(None, None)),
    ({"GOGC": "1"}, GoGC(1.0, None)),
    ({"GOGC": "fifty"}, GoGC(100.0, None)),
    ({"GOMEMLIMIT": "12MiB"}, GoGC(100.0, 12.0)),
    ({"GOMEMLIMIT": "1GiB", "GOGC": "200"}, GoGC(200.0, 1024.0)),
    ({"GOMEMLIMIT": "12M"}, GoGC(100.0, None)),  # not a unit Go accepts: ignored
])
def test_settings_are_parsed_as_the_go_runtime_reads_them(env: dict[str, str], expected: GoGC) -> None:
    assert go_gc_of(env) == expected


def test_default_settings_cost_exactly_what_they_did() -> None:
    for live in (0.5, 9.0, 700.0):
        load = gc_load(GoGC(), live)
        assert load.cost_factor == 1.0 and load.gc_fraction == BASE_GC_SHARE


def test_a_tight_gogc_makes_the_collector_take_up_to_half_the_cpu() -> None:
    assert gc_load(GoGC(gogc=50.0), 9.0).cost_factor == pytest.approx(1.0 - BASE_GC_SHARE + 2 * BASE_GC_SHARE)
    one = gc_load(GoGC(gogc=1.0), 9.0)
    assert one.gc_fraction == pytest.approx(0.5)  # the GC CPU limiter's cap
    assert one.cost_factor == pytest.approx(2 * (1.0 - BASE_GC_SHARE))
    assert gc_load(GoGC(gogc=None), 9.0).cost_factor == pytest.approx(1.0 - BASE_GC_SHARE)  # GOGC=off


def test_a_heap_approaching_gomemlimit_costs_more_and_more() -> None:
    limited = GoGC(memlimit_mib=12.0)
    factors = [gc_load(limited, live).cost_factor for live in (5.0, 9.0, 11.0, 11.9, 30.0)]
    assert factors[0] == 1.0 or factors[0] == pytest.approx(1.0)  # the limit is above the GOGC goal
    assert factors == sorted(factors) and factors[1] < factors[2] < factors[3]
    assert factors[-1] == pytest.approx(2 * (1.0 - BASE_GC_SHARE))


def _profile(cluster):
    engine = cluster.twin.services.dataplane
    return next(p for k, p in sorted(engine.procs.items()) if k[2] == "hotel-reserv-profile")


def _set_env(cluster, env: dict[str, str]) -> None:
    cluster.patch("Deployment", "hotel-reservation", "profile", {"spec": {"template": {"spec": {"containers": [
        {"name": "hotel-reserv-profile", "env": [{"name": k, "value": v} for k, v in env.items()]}]}}}})


def test_gogc_one_raises_the_cpu_a_go_service_uses_and_shows_in_its_metrics() -> None:
    cluster, run = deployed(GC_PROBLEM)
    before = _profile(cluster).cpu_used
    assert _profile(cluster).gc.cost_factor == 1.0
    _set_env(cluster, {"GOGC": "1"})
    run.advance(60)
    proc = _profile(cluster)
    assert proc.gc_config == GoGC(gogc=1.0)
    assert proc.cpu_used > 1.8 * before  # the same requests, twice the CPU
    rows = {name: value for name, labels, value, _ in cluster.twin.services.dataplane.app_metrics()
            if labels.get("pod") == proc.inst.pod and name.startswith("go_") and "quantile" not in labels}
    assert rows["go_gc_gogc_percent"] == 1.0
    assert rows["go_memstats_gc_cpu_fraction"] == pytest.approx(0.5)
    assert rows["go_gc_duration_seconds_count"] > 1000  # ~100 cycles a second at 99 req/s
    assert rows["go_memstats_next_gc_bytes"] > rows["go_memstats_heap_alloc_bytes"]
    scraped = cluster.promql(f'go_memstats_gc_cpu_fraction{{pod="{proc.inst.pod}"}}')
    assert scraped and float(scraped[0]["value"][1]) == pytest.approx(0.5)


def test_the_same_seed_gives_the_same_collector() -> None:
    def figures() -> tuple[float, float, float]:
        cluster, run = deployed(GC_PROBLEM, seed=5)
        _set_env(cluster, {"GOMEMLIMIT": "10MiB"})
        run.advance(45)
        proc = _profile(cluster)
        return proc.gc.cost_factor, proc.gc_cycles_total, proc.gc_cpu_seconds_total

    assert figures() == figures()
