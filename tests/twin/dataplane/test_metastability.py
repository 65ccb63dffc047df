"""Retry-storm metastability: a transient burst leaves a short-timeout/many-retries system stuck."""

from __future__ import annotations

from sregym.twin.dataplane.synthetic import synthetic_app
from sregym.twin.twin import Twin

BASE_RPS = 30.0  # the backend serves 100 req/s (10 ms of CPU on 1 core): 30 % utilisation


def _system(name: str, timeout: str, retries: int) -> Twin:
    twin = Twin(seed=21)
    synthetic_app(name, layers=(1, 1), rps=BASE_RPS, cpu_ms=10, cpu_limit="1", memory_limit="4Gi",
                  timeout=timeout, retries=retries).deploy(twin)
    twin.advance(60)
    assert twin.services.dataplane.entry_stats(20).success_ratio > 0.999
    twin.services.dataplane.burst(name, 5.0, 10)
    twin.advance(10)
    return twin


def test_short_timeout_and_many_retries_stay_degraded_after_the_burst() -> None:
    twin = _system("storm", "100ms", 3)
    dp = twin.services.dataplane
    for _ in range(10):  # 5 simulated minutes at base load, sampled every 30 s
        twin.advance(30)
        assert dp.entry_stats(30).success_ratio < 0.5
    assert dp.workloads["storm"].rate(twin.clock.now) == BASE_RPS
    retries = sum(v for name, _, v, _ in dp.app_metrics() if name == "app_client_retries_total")
    assert retries > 3 * BASE_RPS * 300


def test_sane_policy_recovers_within_a_minute() -> None:
    twin = _system("sane", "1s", 1)
    twin.advance(60)
    stats = twin.services.dataplane.entry_stats(10)
    assert stats.success_ratio > 0.99 and stats.p95_ms < 100


def test_policy_change_and_rollout_recover_the_stuck_system() -> None:
    twin = _system("fix", "100ms", 3)
    dp = twin.services.dataplane
    twin.advance(120)
    assert dp.entry_stats(30).success_ratio < 0.5
    twin.patch("Deployment", "fix", "gateway", {"spec": {"template": {"spec": {"containers": [
        {"name": "gateway", "env": [{"name": "CLIENT_TIMEOUT", "value": "2s"},
                                    {"name": "CLIENT_RETRIES", "value": "0"}]}]}}}})
    twin.advance(180)
    stats = dp.entry_stats(30)
    assert stats.success_ratio > 0.99 and stats.p95_ms < 100
