"""Astronomy Shop telemetry under the demo's names: each language runtime's metrics as Prometheus'
OTLP receiver stores them, faults moving them (adManualGc's full collections), the app's alert
rules (loaded only where the app runs, valid for promtool, firing on a real fault)."""

from __future__ import annotations

import shutil
import subprocess
from typing import Any

import pytest

from sregym.apps import deploy_app
from sregym.apps.astronomy_shop import RULES
from sregym.twin import Twin
from sregym.twin.telemetry.alerts import rule_manager
from sregym.twin.telemetry.promql import Engine
from support.astro_twin import flip_flag

pytestmark = pytest.mark.xdist_group("astro_telemetry")  # the tests share one twin, in order
NS = "astronomy-shop"


@pytest.fixture(scope="module")
def shop() -> Twin:
    twin = Twin(seed=11)
    deploy_app(twin, NS)
    twin.advance(120)
    return twin


def _query(twin: Twin, expr: str) -> list[Any]:
    result: Any = Engine(twin.services.tsdb).instant(expr, int(twin.clock.now * 1000))
    return list(result.value)


def _value(twin: Twin, expr: str) -> float:
    return sum(sample.value for sample in _query(twin, expr))


@pytest.mark.parametrize(("service", "expr"), [
    ("ad", 'jvm_memory_used_bytes{jvm_memory_type="heap", jvm_memory_pool_name="Tenured Gen"}'),
    ("fraud-detection", "jvm_cpu_recent_utilization_ratio"),
    ("ad", 'jvm_thread_count{jvm_thread_daemon="true"}'),
    ("cart", 'dotnet_gc_collections_total{gc_heap_generation="gen0"}'),
    ("accounting", "dotnet_thread_pool_thread_count"),
    ("payment", "nodejs_eventloop_delay_p99_seconds"),
    ("payment", 'v8js_memory_heap_used_bytes{v8js_heap_space_name="old_space"}'),
    ("recommendation", 'process_runtime_cpython_memory_bytes{type="rss"}'),
    ("product-reviews", 'process_runtime_cpython_cpu_time_seconds_total{type="user"}'),
    ("checkout", "go_goroutine_count"),
    ("product-catalog", 'go_memory_used_bytes{go_memory_type="other"}'),
])
def test_runtime_family_per_language(shop: Twin, service: str, expr: str) -> None:
    selector = f'service_name="{service}"'
    found = _query(shop, expr.replace("}", f", {selector}}}") if "{" in expr else f"{expr}{{{selector}}}")
    assert found and all(sample.value > 0 for sample in found)
    labels = found[0].labels
    # What Prometheus' OTLP receiver makes of the chart's resource attributes: no scrape target.
    assert labels["job"] == f"opentelemetry-demo/{service}"
    assert labels["instance"] == labels["service_instance_id"]
    assert labels["k8s_namespace_name"] == NS and labels["k8s_pod_name"].startswith(service + "-")
    pod = shop.get("pods", NS, labels["k8s_pod_name"])
    assert pod["metadata"]["uid"] == labels["instance"]
    assert not _query(shop, f'up{{job="opentelemetry-demo/{service}"}}')


def test_go_memory_limit_is_the_charts_gomemlimit(shop: Twin) -> None:
    assert _value(shop, 'go_memory_limit_bytes{service_name="checkout"}') == 16 * 2**20


def test_app_rules_are_loaded_and_valid_for_promtool(shop: Twin, tmp_path: Any) -> None:
    names = {r["name"] for g in rule_manager(shop).api_rules(lambda _labels: True) for r in g["rules"]}
    assert {"NoRequestsReceived", "HighKafkaConsumerLag", "KafkaConsumerGroupInactive", "CPUThrottlingHigh",
            "KubeDeploymentRolloutStuck", "KubePodCrashLooping", "HighRequestErrorRate", "NoDatabaseOperations"} <= names
    assert "NoRequestsReceived" not in {r["name"] for g in rule_manager(Twin(seed=1)).api_rules(lambda _l: True)
                                        for r in g["rules"]}
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool is not installed")
    done = subprocess.run([promtool, "check", "rules", str(RULES)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_healthy_shop_fires_none_of_its_alerts(shop: Twin) -> None:
    firing = {a["labels"]["alertname"] for a in rule_manager(shop).api_alerts(lambda _labels: True)}
    assert not firing & {"NoRequestsReceived", "HighKafkaConsumerLag", "KafkaConsumerGroupInactive",
                         "KubeDeploymentRolloutStuck", "CPUThrottlingHigh", "NoDatabaseOperations"}


def test_manual_gc_flag_shows_as_full_collections(shop: Twin) -> None:
    major = 'sum(jvm_gc_duration_seconds_count{service_name="ad", jvm_gc_action="end of major GC"})'
    before = _value(shop, major)
    flip_flag(shop, "adManualGc", "on")
    shop.advance(90)
    assert _value(shop, major) > before + 10
    assert 0.1 < _value(shop, 'histogram_quantile(0.99, sum by (le) (rate(jvm_gc_duration_seconds_bucket'
                              '{service_name="ad", jvm_gc_name="MarkSweepCompact"}[1m])))') <= 1
    flip_flag(shop, "adManualGc", "off")


def test_scaled_away_service_fires_no_requests_received(shop: Twin) -> None:
    shop.patch("deployments", NS, "quote", {"spec": {"replicas": 0}})
    shop.advance(300)
    alerts = [a for a in rule_manager(shop).api_alerts(lambda _labels: True)
              if a["labels"]["alertname"] == "NoRequestsReceived"]
    firing = {a["labels"]["service_name"] for a in alerts if a["state"] == "firing"}
    # Without quote, shipping cannot price an order, so checkout stops before charging and mailing.
    assert "quote" in firing and firing <= {"quote", "payment", "email"}
    assert not _query(shop, 'go_goroutine_count{service_name="quote"}')  # quote is PHP: no Go runtime
