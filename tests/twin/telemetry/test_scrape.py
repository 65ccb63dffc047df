"""The telemetry scraper: exporter names, labels, counters, staleness and determinism."""

from __future__ import annotations

import itertools
import math
import struct
from typing import Any

import pytest

from sregym.twin.telemetry.scrape import TelemetryScraper, scraper_of
from sregym.twin.telemetry.tsdb import TSDB, Matcher, Series, is_stale
from sregym.twin.twin import Twin

NODE = "kind-worker"


def deployment(name: str, replicas: int = 2, **container: Any) -> dict[str, Any]:
    spec = {"name": "app", "image": "nginx:1.27",
            "resources": {"requests": {"cpu": "100m", "memory": "64Mi"},
                          "limits": {"cpu": "500m", "memory": "128Mi"}}, **container}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [spec]}}}}


def bare_pod(name: str, **container: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeName": NODE, "containers": [{"name": "app", **container}]}}


def tsdb(twin: Twin) -> TSDB:
    return twin.services.tsdb  # type: ignore[no-any-return]


def select(twin: Twin, name: str, **labels: str) -> list[Series]:
    return tsdb(twin).select([Matcher("__name__", "=", name),
                              *(Matcher(k, "=", v) for k, v in labels.items())])


def last(series: Series) -> float:
    return series.values[-1]


def live(series: list[Series]) -> list[Series]:
    return [s for s in series if not is_stale(last(s))]


def pods(twin: Twin, namespace: str = "default") -> list[dict[str, Any]]:
    return twin.list("pods", namespace)


def pod_node(twin: Twin, namespace: str, name: str) -> str:
    return str(twin.get("pods", namespace, name)["spec"]["nodeName"])


@pytest.fixture(scope="module")
def steady() -> Twin:
    twin = Twin(seed=11)
    twin.apply(deployment("web", replicas=3))
    twin.advance(240)
    return twin


# --------------------------------------------------------------------------- scraping basics
def test_tsdb_registered_and_scrapes_aligned(steady: Twin) -> None:
    scraper = scraper_of(steady)
    assert isinstance(scraper, TelemetryScraper)
    assert steady.services.tsdb is scraper.tsdb
    up = select(steady, "up")
    jobs = {s.labels["job"] for s in up}
    assert {"kube-state-metrics", "kubelet", "node-exporter"} <= jobs
    for series in up:
        assert all(t % 15_000 == 0 for t in series.timestamps)
        assert last(series) == 1.0
    stamps = up[0].timestamps
    assert all(b - a == 15_000 for a, b in itertools.pairwise(stamps))
    assert len(stamps) == 240 // 15


def test_metadata_types(steady: Twin) -> None:
    meta = tsdb(steady).metadata
    assert meta["container_cpu_usage_seconds_total"].type == "counter"
    assert meta["kube_pod_container_status_restarts_total"].type == "counter"
    assert meta["kube_pod_status_phase"].type == "gauge"
    assert meta["node_cpu_seconds_total"].type == "counter"
    assert meta["traces_span_metrics_duration_milliseconds"].type == "histogram"
    assert meta["up"].type == "gauge"


def test_every_container_has_cpu_and_memory_series(steady: Twin) -> None:
    running = [(p["metadata"]["namespace"], p["metadata"]["name"], cs["name"], cs["containerID"])
               for ns in ("default", "kube-system") for p in pods(steady, ns)
               for cs in (p.get("status") or {}).get("containerStatuses") or [] if "running" in cs["state"]]
    assert len([r for r in running if r[0] == "default"]) == 3
    for ns, pod, container, cid in running:
        cpu = live(select(steady, "container_cpu_usage_seconds_total", namespace=ns, pod=pod, container=container))
        mem = live(select(steady, "container_memory_working_set_bytes", namespace=ns, pod=pod,
                          container=container))
        assert len(cpu) == 1 and len(mem) == 1, (ns, pod, container)
        labels = cpu[0].labels
        assert labels["job"] == "kubelet" and labels["metrics_path"] == "/metrics/cadvisor"
        assert labels["name"] == cid.removeprefix("containerd://")
        assert labels["id"].endswith(f"/cri-containerd-{labels['name']}.scope")
        assert labels["cpu"] == "total" and labels["node"] == pod_node(steady, ns, pod)
        assert last(mem[0]) > 0
    # A container with a memory limit reports it; its CPU limit is the CFS quota.
    web = next(r for r in running if r[0] == "default")
    limit = select(steady, "container_spec_memory_limit_bytes", pod=web[1], container="app")
    assert last(limit[0]) == 128 * 2**20
    quota = select(steady, "container_spec_cpu_quota", pod=web[1], container="app")
    assert last(quota[0]) == 50_000


def test_counters_are_monotonic(steady: Twin) -> None:
    meta = tsdb(steady).metadata
    checked = 0
    for series in tsdb(steady).all_series():
        name = series.name
        family = meta.get(name) or meta.get(name.rsplit("_", 1)[0])
        if family is None or (family.type not in ("counter", "histogram") and not name.endswith("_total")):
            continue
        values = [v for v in series.values if not is_stale(v)]
        assert all(b >= a for a, b in itertools.pairwise(values)), series.labels
        checked += 1
    assert checked > 50
    cpu = select(steady, "container_cpu_usage_seconds_total", namespace="default", container="app")
    assert all(s.values[-1] > s.values[0] for s in cpu)


def test_kube_pod_status_phase_matches_pods(steady: Twin) -> None:
    for pod in pods(steady, "default") + pods(steady, "kube-system"):
        meta = pod["metadata"]
        phases = select(steady, "kube_pod_status_phase", namespace=meta["namespace"], pod=meta["name"])
        assert {s.labels["phase"] for s in phases} == {"Pending", "Succeeded", "Failed", "Unknown", "Running"}
        for series in phases:
            assert series.labels["uid"] == meta["uid"]
            assert series.labels["job"] == "kube-state-metrics"
            assert last(series) == (1.0 if series.labels["phase"] == pod["status"]["phase"] else 0.0)
    info = select(steady, "kube_pod_info", namespace="default")
    assert len(info) == 3
    assert all(s.labels["created_by_kind"] == "ReplicaSet" and s.labels["node"] for s in info)


def test_ksm_workload_and_node_families(steady: Twin) -> None:
    assert last(select(steady, "kube_deployment_spec_replicas", deployment="web")[0]) == 3
    assert last(select(steady, "kube_deployment_status_replicas_available", deployment="web")[0]) == 3
    assert last(select(steady, "kube_deployment_status_replicas_unavailable", deployment="web")[0]) == 0
    ready = select(steady, "kube_node_status_condition", node=NODE, condition="Ready")
    assert {s.labels["status"]: last(s) for s in ready} == {"true": 1.0, "false": 0.0, "unknown": 0.0}
    cpu = select(steady, "kube_node_status_allocatable", node=NODE, resource="cpu")
    assert cpu[0].labels["unit"] == "core" and last(cpu[0]) == 4.0
    requests = select(steady, "kube_pod_container_resource_requests", namespace="default", resource="memory")
    assert len(requests) == 3 and all(s.labels["unit"] == "byte" and last(s) == 64 * 2**20 for s in requests)
    # ksm attaches its own target labels only where the metric has none (honor_labels).
    assert ready[0].labels["namespace"] == "monitoring"
    owner = select(steady, "kube_pod_owner", namespace="default")
    assert all(s.labels["owner_kind"] == "ReplicaSet" and s.labels["owner_is_controller"] == "true"
               for s in owner)


def test_node_exporter_series_per_node(steady: Twin) -> None:
    nodes = [n["metadata"]["name"] for n in steady.list("nodes")]
    assert len(nodes) == 4
    for node in nodes:
        cpu = select(steady, "node_cpu_seconds_total", node=node, job="node-exporter")
        assert {s.labels["mode"] for s in cpu} >= {"idle", "user", "system", "iowait"}
        assert {s.labels["cpu"] for s in cpu} == {"0", "1", "2", "3"}
        idle = next(s for s in cpu if s.labels["cpu"] == "0" and s.labels["mode"] == "idle")
        assert idle.values[-1] - idle.values[0] > 0.8 * (len(idle.values) - 1) * 15
        assert select(steady, "node_filesystem_avail_bytes", node=node, mountpoint="/")
        assert last(select(steady, "node_memory_MemAvailable_bytes", node=node)[0]) > 0
        assert last(select(steady, "node_nf_conntrack_entries_limit", node=node)[0]) == 131072
        assert select(steady, "node_timex_offset_seconds", node=node)
        assert select(steady, "node_load1", node=node)
        instance = select(steady, "up", job="node-exporter", node=node)[0].labels["instance"]
        assert instance.endswith(":9100") and instance.startswith("172.18.0.")


# ------------------------------------------------------------------------------ life cycle
def test_deleted_pod_series_get_staleness_markers() -> None:
    twin = Twin(seed=3)
    twin.apply(bare_pod("doomed", image="nginx:1.27"))
    twin.advance(60)
    info = select(twin, "kube_pod_info", pod="doomed")
    cpu = select(twin, "container_cpu_usage_seconds_total", pod="doomed", container="app")
    assert info and cpu and not is_stale(last(info[0])) and not is_stale(last(cpu[0]))
    twin.delete("pods", "default", "doomed", grace_period=0)
    twin.settle(60, until=lambda: twin.try_get("pods", "default", "doomed") is None)
    twin.advance(30)
    for series in select(twin, "kube_pod_info", pod="doomed") + select(
            twin, "container_cpu_usage_seconds_total", pod="doomed") + select(
            twin, "kube_pod_status_phase", pod="doomed"):
        assert is_stale(last(series)), series.labels
        assert sum(1 for v in series.values if is_stale(v)) == 1  # one marker, then nothing


def test_crash_loop_restarts_and_waiting_reason() -> None:
    twin = Twin(seed=5)
    # Runs long enough for cAdvisor to see each instance, then fails.
    twin.apply(bare_pod("crash", image="busybox:1.36", command=["sh", "-c", "echo boom; sleep 8; exit 1"]))
    twin.advance(360)
    restarts = select(twin, "kube_pod_container_status_restarts_total", pod="crash", container="app")
    assert len(restarts) == 1
    values = restarts[0].values
    assert values[-1] >= 4 and values[-1] > values[0]
    assert all(b >= a for a, b in itertools.pairwise(values))
    waiting = select(twin, "kube_pod_container_status_waiting_reason", pod="crash", reason="CrashLoopBackOff")
    assert waiting and 1.0 in waiting[0].values
    # Only the current reason exists (ksm v2): no 0-valued series for other reasons.
    assert all(v == 1.0 for s in select(twin, "kube_pod_container_status_waiting_reason", pod="crash")
               for v in s.values if not is_stale(v))
    last_reason = select(twin, "kube_pod_container_status_last_terminated_reason", pod="crash")
    assert last_reason and last_reason[0].labels["reason"] == "Error"
    exit_code = select(twin, "kube_pod_container_status_last_terminated_exitcode", pod="crash")
    assert last(exit_code[0]) == 1
    # Each container instance is its own cAdvisor series (distinct `name`/`id`).
    names = {s.labels["name"] for s in select(twin, "container_memory_working_set_bytes", pod="crash",
                                               container="app")}
    assert len(names) >= 2


def test_throttling_counters_grow_under_a_low_cpu_limit() -> None:
    twin = Twin(seed=9)
    twin.apply(bare_pod("hog", image="nginx:1.27",
                        resources={"limits": {"cpu": "100m", "memory": "256Mi"}}))
    twin.apply(bare_pod("calm", image="nginx:1.27",
                        resources={"limits": {"cpu": "2", "memory": "256Mi"}}))
    runtime = twin.services.runtime

    def load(ns: str, pod: str, container: str, instance: Any) -> tuple[float, float]:
        return (0.6, 0.0) if pod in ("hog", "calm") else (0.0, 0.0)

    runtime.add_usage_hook(load)
    twin.advance(180)
    hog_throttled = select(twin, "container_cpu_cfs_throttled_periods_total", pod="hog", container="app")[0]
    hog_periods = select(twin, "container_cpu_cfs_periods_total", pod="hog", container="app")[0]
    assert hog_throttled.values[-1] - hog_throttled.values[-5] > 0.5 * (hog_periods.values[-1] - hog_periods.values[-5])
    assert last(select(twin, "container_cpu_cfs_throttled_seconds_total", pod="hog")[0]) > 10
    calm = select(twin, "container_cpu_cfs_throttled_periods_total", pod="calm", container="app")[0]
    assert last(calm) == 0
    # CPU usage is capped at the quota: 0.1 core for the hog, the full 0.6 for the calm one.
    hog_cpu = select(twin, "container_cpu_usage_seconds_total", pod="hog", container="app")[0]
    calm_cpu = select(twin, "container_cpu_usage_seconds_total", pod="calm", container="app")[0]
    window = (hog_cpu.timestamps[-1] - hog_cpu.timestamps[-5]) / 1000
    assert (hog_cpu.values[-1] - hog_cpu.values[-5]) / window == pytest.approx(0.1, rel=0.05)
    assert (calm_cpu.values[-1] - calm_cpu.values[-5]) / window == pytest.approx(0.6, rel=0.05)
    # The node's busy CPU time reflects the load.
    user = sum(s.values[-1] - s.values[-5] for s in select(twin, "node_cpu_seconds_total", node=NODE, mode="user"))
    assert user / window > 0.4


def test_retention_drops_old_samples() -> None:
    twin = Twin(seed=2)
    scraper = scraper_of(twin)
    scraper.retention_ms = 120_000
    twin.advance(40 * 15 + 15)
    up = select(twin, "up", job="kube-state-metrics")[0]
    assert up.timestamps[0] >= up.timestamps[-1] - 120_000 - 15 * 40 * 1000
    assert len(up.timestamps) < 40


def _fingerprint(twin: Twin) -> list[tuple[Any, ...]]:
    out = []
    for series in tsdb(twin).all_series():
        values = tuple(struct.pack("<d", v) for v in series.values)
        out.append((tuple(sorted(series.labels.items())), tuple(series.timestamps), values))
    return out


def test_same_seed_identical_samples() -> None:
    def run() -> list[tuple[Any, ...]]:
        twin = Twin(seed=21)
        twin.apply(deployment("api", replicas=2))
        twin.apply(bare_pod("crash", image="busybox:1.36", command=["sh", "-c", "exit 2"]))
        twin.advance(150)
        twin.delete("deployments", "default", "api")
        twin.advance(60)
        return _fingerprint(twin)

    first, second = run(), run()
    assert len(first) > 500
    assert first == second
    assert any(math.isnan(struct.unpack("<d", v)[0]) for s in first for v in s[2])


# ------------------------------------------------------------------ data-plane providers
class FakeDataplane:
    """Stands in for `twin.services.dataplane`, with the documented provider methods."""

    def __init__(self) -> None:
        self.calls = 0.0
        self.with_errors = True
        self.cfs: dict[tuple[str, str, str], list[float]] = {}

    def span_metrics(self) -> list[tuple[str, dict[str, str], float, str]]:
        self.calls += 30
        base = {"service_name": "geo", "span_name": "/geo.Geo/Nearby", "span_kind": "SPAN_KIND_SERVER"}
        ok = {**base, "status_code": "STATUS_CODE_UNSET"}
        rows = [("traces_span_metrics_calls_total", ok, self.calls, "counter"),
                ("traces_span_metrics_duration_milliseconds_bucket", {**ok, "le": "10"}, self.calls * 0.9,
                 "counter"),
                ("traces_span_metrics_duration_milliseconds_bucket", {**ok, "le": "+Inf"}, self.calls, "counter")]
        if self.with_errors:
            rows.append(("traces_span_metrics_calls_total", {**base, "status_code": "STATUS_CODE_ERROR"},
                         self.calls / 10, "counter"))
        return rows

    def app_metrics(self) -> list[tuple[str, dict[str, str], float, str]]:
        labels = {"namespace": "default", "pod": "svc", "container": "app", "service": "geo"}
        return [("app_queue_depth", labels, 3.0, "gauge"), ("app_requests_total", labels, self.calls, "counter")]

    def cfs_counters(self, namespace: str, pod: str, container: str) -> tuple[float, float, float]:
        counters = self.cfs.setdefault((namespace, pod, container), [0.0, 0.0, 0.0])
        counters[0] += 50
        counters[1] += 40
        counters[2] += 2.0
        return counters[0], counters[1], counters[2]


def test_span_and_app_metrics_from_the_data_plane() -> None:
    twin = Twin(seed=4)
    twin.apply(bare_pod("svc", image="nginx:1.27", ports=[{"containerPort": 8083}],
                        resources={"limits": {"cpu": "1"}}))
    fake = FakeDataplane()
    twin.advance(30)
    twin.services.dataplane = fake
    twin.advance(90)
    calls = select(twin, "traces_span_metrics_calls_total", service_name="geo")
    assert {s.labels["status_code"] for s in calls} == {"STATUS_CODE_UNSET", "STATUS_CODE_ERROR"}
    ok = next(s for s in calls if s.labels["status_code"] == "STATUS_CODE_UNSET")
    assert ok.labels["job"] == "opentelemetry-collector" and ok.labels["span_kind"] == "SPAN_KIND_SERVER"
    assert ok.values[-1] > ok.values[0]
    buckets = select(twin, "traces_span_metrics_duration_milliseconds_bucket", service_name="geo")
    assert {s.labels["le"] for s in buckets} == {"10", "+Inf"}
    # A status code that stops being reported goes stale.
    fake.with_errors = False
    twin.advance(15)
    error = next(s for s in select(twin, "traces_span_metrics_calls_total", service_name="geo")
                 if s.labels["status_code"] == "STATUS_CODE_ERROR")
    assert is_stale(last(error))
    # App metrics: the pod is its own target (job = service, instance = podIP:port).
    depth = select(twin, "app_queue_depth", pod="svc")
    assert len(depth) == 1 and last(depth[0]) == 3.0
    pod_ip = twin.get("pods", "default", "svc")["status"]["podIP"]
    assert depth[0].labels["job"] == "geo" and depth[0].labels["instance"] == f"{pod_ip}:8083"
    assert tsdb(twin).metadata["app_requests_total"].type == "counter"
    assert last(select(twin, "up", job="geo")[0]) == 1.0
    # CFS counters come from the provider (its throttling beats the idle container's none).
    throttled = select(twin, "container_cpu_cfs_throttled_periods_total", pod="svc")[0]
    assert throttled.values[-1] - throttled.values[-3] == pytest.approx(2 * 3 * 40, rel=0.01)


def test_unreachable_node_is_down_and_its_series_go_stale() -> None:
    twin = Twin(seed=6)
    twin.advance(45)
    node = "kind-worker3"

    def lost(obj: dict[str, Any]) -> None:
        for cond in obj["status"]["conditions"]:
            cond["status"] = "Unknown"
            cond["reason"] = "NodeStatusUnknown"

    twin.store.mutate("Node", None, node, lost, status=True)
    # Scrape right away: the twin's own node heartbeat would report the node healthy again.
    scraper = scraper_of(twin)
    scraper.scrape(scraper.stats.last_scrape_ms + 15_000)
    up = select(twin, "up", job="node-exporter", node=node)
    assert last(up[0]) == 0.0
    assert all(is_stale(last(s)) for s in select(twin, "node_load1", node=node))
    assert not any(is_stale(last(s)) for s in select(twin, "node_load1", node="kind-worker"))
    ready = select(twin, "kube_node_status_condition", node=node, condition="Ready", status="unknown")
    assert last(ready[0]) == 1.0
