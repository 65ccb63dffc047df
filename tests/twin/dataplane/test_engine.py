"""The fluid engine: healthy baseline, failure signatures at the caller, CPU, memory, determinism."""

from __future__ import annotations

from sregym.twin.dataplane.synthetic import synthetic_app
from sregym.twin.twin import Twin


def _deploy(seed: int = 1, **kw) -> tuple[Twin, object]:
    twin = Twin(seed=seed)
    app = synthetic_app(kw.pop("name", "eng"), **kw)
    app.deploy(twin)
    twin.advance(60)
    return twin, app


def _gateway_logs(twin: Twin, ns: str) -> str:
    pod = twin.list("pods", ns, label_selector="app=gateway")[0]["metadata"]["name"]
    return twin.logs(ns, pod)


def test_healthy_app_serves_everything_with_usage_and_telemetry() -> None:
    twin, _ = _deploy(layers=(1, 2, 2), rps=100, with_store=True)
    dp = twin.services.dataplane
    stats = dp.entry_stats(30)
    assert stats.success_ratio > 0.999 and 50 < stats.rps * 30 / 30 <= 101
    assert stats.p95_ms < 200
    runtime = twin.services.runtime
    for pod in twin.list("pods", "eng"):
        name = pod["metadata"]["name"]
        container = pod["spec"]["containers"][0]["name"]
        cpu, memory = runtime.container_usage("eng", name, container)
        assert memory > 0 and cpu > 0, name
    def calls() -> dict:
        return {(labels["service_name"], labels["span_kind"], labels["status_code"]): value
                for metric, labels, value, _ in dp.span_metrics() if metric == "traces_span_metrics_calls_total"}

    before = calls()
    twin.advance(30)
    after = calls()
    delta = {key: after[key] - before.get(key, 0.0) for key in after}
    assert 2900 < delta[("gateway", "SPAN_KIND_SERVER", "STATUS_CODE_UNSET")] <= 3001
    assert delta[("gateway", "SPAN_KIND_CLIENT", "STATUS_CODE_UNSET")] > 2900
    assert sum(v for (_, _, status), v in delta.items() if status == "STATUS_CODE_ERROR") < 1
    spans = list(twin.services.traces.spans())
    assert {s.service for s in spans} >= {"gateway", "svc-1-0", "svc-2-0"}
    child = next(s for s in spans if s.parent_span_id and s.kind == "server")
    assert child.trace_id in twin.services.traces.trace_ids()
    assert any(name == "app_cache_hit_ratio" for name, *_ in dp.app_metrics())


def test_wrong_target_port_fails_fast_with_refused_in_caller_logs() -> None:
    twin, _ = _deploy(name="ref", layers=(1, 1), rps=50)
    twin.patch("Service", "ref", "svc-1-0", {"spec": {"ports": [{"name": "grpc", "port": 9000, "targetPort": 9001}]}})
    twin.advance(30)
    stats = twin.services.dataplane.entry_stats(20)
    assert stats.success_ratio < 0.01
    assert stats.p95_ms < 50  # refused is immediate
    logs = _gateway_logs(twin, "ref").splitlines()[-3:]
    assert any("ERR services/gateway/server.go:88 > request to svc-1-0 failed: rpc error: code = Unavailable "
               "desc = connection error: desc = \"transport: Error while dialing: dial tcp" in line
               and "connect: connection refused" in line for line in logs)


def test_network_policy_deny_gives_slow_timeouts() -> None:
    twin, _ = _deploy(name="np", layers=(1, 1), rps=50)
    twin.apply({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                "metadata": {"name": "deny", "namespace": "np"},
                "spec": {"podSelector": {"matchLabels": {"app": "svc-1-0"}}, "policyTypes": ["Ingress"]}})
    twin.advance(20)
    stats = twin.services.dataplane.entry_stats(10)
    assert stats.success_ratio < 0.01
    assert stats.p95_ms >= 900  # the caller's 1 s timeout
    assert "code = DeadlineExceeded desc = context deadline exceeded" in _gateway_logs(twin, "np")


def test_low_cpu_limit_throttles_and_raises_upstream_latency() -> None:
    twin, _ = _deploy(name="cpu", layers=(1, 1), rps=40, cpu_ms=10)
    dp = twin.services.dataplane
    before = dp.entry_stats(20).p95_ms
    pod = twin.list("pods", "cpu", label_selector="app=svc-1-0")[0]["metadata"]["name"]
    assert dp.cfs_counters("cpu", pod, "svc-1-0")[1] == 0
    twin.patch("Deployment", "cpu", "svc-1-0", {"spec": {"template": {"spec": {"containers": [
        {"name": "svc-1-0", "resources": {"limits": {"cpu": "300m"}}}]}}}})
    twin.advance(60)
    pod = twin.list("pods", "cpu", label_selector="app=svc-1-0")[0]["metadata"]["name"]
    periods, throttled, seconds = dp.cfs_counters("cpu", pod, "svc-1-0")
    assert periods > 100 and throttled > 0.5 * periods and seconds > 0
    assert dp.entry_stats(20).p95_ms > 3 * before


def test_memory_leak_ends_in_oom_kill() -> None:
    twin, _ = _deploy(name="leak", layers=(1, 1), rps=10, leak_mib_per_min=300.0, memory_limit="128Mi")
    twin.advance(60)
    pod = twin.list("pods", "leak", label_selector="app=svc-1-0")[0]
    status = pod["status"]["containerStatuses"][0]
    assert status["restartCount"] >= 1
    terminated = status["lastState"].get("terminated") or status["state"].get("terminated")
    assert terminated["reason"] == "OOMKilled" and terminated["exitCode"] == 137


def test_same_seed_gives_identical_spans_logs_and_counters() -> None:
    def run() -> tuple:
        twin, _ = _deploy(seed=11, name="det", layers=(1, 2), rps=30)
        twin.patch("Service", "det", "svc-1-1", {"spec": {"ports": [{"name": "grpc", "port": 9000,
                                                                    "targetPort": 9001}]}})
        twin.advance(20)
        dp = twin.services.dataplane
        spans = [(s.trace_id, s.span_id, s.service, s.operation, s.start_us, s.duration_us, s.error, s.message)
                 for s in twin.services.traces.spans()]
        return spans, _gateway_logs(twin, "det"), dp.span_metrics(), dp.app_metrics()

    first, second = run(), run()
    assert first[0] and first == second
