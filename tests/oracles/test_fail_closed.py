"""Checks fail closed: missing, stale or non-numeric data is a failure with its reason, never a
pass; the workload and the healthy baseline's safeguards are held to the baseline."""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest

from sregym.cluster.base import EntryStats, ProbeResult
from sregym.oracles import baseline as healthy_baseline
from sregym.oracles.checks import CHECKS, CheckContext
from sregym.oracles.mitigation import run_check
from sregym.problems import all_problem_ids, get_problem
from sregym.problems.model import BASELINE_KEEP, CheckSpec

NS = "shop"
WINDOW = 60.0


def _deployment(name: str, *, probe: bool = True, cpu_limit: str | None = "500m", replicas: int = 1,
                namespace: str = NS, args: tuple[str, ...] = ()) -> dict[str, Any]:
    container: dict[str, Any] = {"name": name, "image": "nginx:1.27", "args": list(args),
                                 "resources": {"requests": {"cpu": "50m"}}}
    if probe:
        container["readinessProbe"] = {"tcpSocket": {"port": 80}}
    if cpu_limit:
        container["resources"]["limits"] = {"cpu": cpu_limit}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": namespace, "generation": 1},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [container]}}},
            "status": {"observedGeneration": 1, "replicas": replicas, "updatedReplicas": replicas,
                       "readyReplicas": replicas, "availableReplicas": replicas}}


class FakeCluster:
    """Just what the checks read: objects, entry statistics, PromQL answers, a connection."""

    user = "admin"

    def __init__(self) -> None:
        self.objects: dict[tuple[str, str | None, str], dict[str, Any]] = {}
        self.stats: EntryStats | None = EntryStats(requests=6000.0, success_ratio=1.0, p95_ms=80.0)
        self.answers: dict[str, list[dict[str, Any]]] = {}
        self.connect_ok = True

    def put(self, obj: dict[str, Any]) -> None:
        meta = obj["metadata"]
        self.objects[(obj["kind"], meta.get("namespace"), meta["name"])] = obj

    def get(self, kind: str, namespace: str | None, name: str) -> dict[str, Any] | None:
        obj = self.objects.get((kind, namespace, name))
        return copy.deepcopy(obj) if obj is not None else None

    def list(self, kind: str, namespace: str | None = None, *, label_selector: str | None = None) -> list[dict]:
        return [copy.deepcopy(o) for (k, ns, _), o in sorted(self.objects.items(), key=lambda kv: kv[0][2])
                if k == kind and (namespace is None or ns == namespace)]

    def delete(self, kind: str, namespace: str | None, name: str) -> None:
        del self.objects[(kind, namespace, name)]

    def entry_stats(self, window_s: float) -> EntryStats | None:
        return self.stats

    def promql(self, query: str) -> list[dict[str, Any]]:
        return next((v for k, v in self.answers.items() if k in query), [])

    def connect(self, namespace: str, host: str, port: int) -> ProbeResult:
        return ProbeResult(ok=self.connect_ok, error=None if self.connect_ok else "refused")


def _healthy_cluster() -> FakeCluster:
    cluster = FakeCluster()
    cluster.put(_deployment("web"))
    cluster.put(_deployment("db", probe=False))
    cluster.put(_deployment("loadgen", probe=False, cpu_limit=None, namespace="load", args=("-R", "100")))
    cluster.put({"kind": "NetworkPolicy", "metadata": {"name": "db-ingress", "namespace": NS}, "spec": {}})
    return cluster


def _context(cluster: FakeCluster) -> CheckContext:
    """A context whose healthy baseline is the cluster as it is now (100 req/s at the entry)."""
    healthy = healthy_baseline.record(cluster, NS, ("Deployment/load/loadgen",), WINDOW)  # type: ignore[arg-type]
    return CheckContext(cluster=cluster, namespace=NS,  # type: ignore[arg-type]
                        baseline={"Deployment/shop/web": 1, "Deployment/shop/db": 1},
                        entry_service="web", entry_port=80, slo_window_s=WINDOW, healthy=healthy)


def _verdict(ctx: CheckContext, name: str, **params: Any) -> tuple[bool, str]:
    result = run_check(ctx, CheckSpec(check=name, params=params), "must_keep")
    return result.passed, result.detail


# ------------------------------------------------------------------------------ entry SLO
def test_the_healthy_baseline_passes_every_baseline_check() -> None:
    ctx = _context(_healthy_cluster())
    assert ctx.healthy is not None and ctx.healthy.entry_rps == pytest.approx(100.0)
    for spec in BASELINE_KEEP:
        assert _verdict(ctx, spec.check)[0], spec.check


@pytest.mark.parametrize(("stats", "reason"), [
    (None, "0.0 req/s"),
    (EntryStats(requests=0.0, success_ratio=1.0, p95_ms=0.0), "0.0 req/s"),
    (EntryStats(requests=2400.0, success_ratio=1.0, p95_ms=50.0), "40.0 req/s"),
    (EntryStats(requests=math.nan, success_ratio=1.0, p95_ms=50.0), "not numbers"),
    (EntryStats(requests=6000.0, success_ratio=math.nan, p95_ms=50.0), "not numbers"),
    (EntryStats(requests=6000.0, success_ratio=1.0, p95_ms=math.nan), "not numbers"),
])
def test_entry_slo_fails_without_real_traffic(stats: EntryStats | None, reason: str) -> None:
    cluster = _healthy_cluster()
    ctx = _context(cluster)
    cluster.stats = stats  # the load generator stopped, slowed down, or the numbers are broken
    passed, detail = _verdict(ctx, "entry_slo")
    assert not passed and reason in detail
    assert cluster.connect_ok  # a bare connection to the entry Service no longer passes


def test_entry_slo_falls_back_to_a_connection_only_for_apps_without_entry_statistics() -> None:
    cluster = _healthy_cluster()
    cluster.stats = None
    ctx = _context(cluster)
    assert ctx.healthy is not None and ctx.healthy.entry_rps is None
    assert _verdict(ctx, "entry_slo")[0]
    cluster.connect_ok = False
    assert not _verdict(ctx, "entry_slo")[0]


def test_checks_without_a_recorded_baseline_fail() -> None:
    ctx = CheckContext(cluster=_healthy_cluster(), namespace=NS)  # type: ignore[arg-type]
    for spec in BASELINE_KEEP:
        passed, detail = _verdict(ctx, spec.check)
        assert not passed and "recorded" in detail, spec.check


# ------------------------------------------------------------------------------- workload
@pytest.mark.parametrize("change", ["delete", "scale", "args", "rate"])
def test_workload_intact_fails_when_the_traffic_is_stopped_or_changed(change: str) -> None:
    cluster = _healthy_cluster()
    ctx = _context(cluster)
    generator = cluster.objects[("Deployment", "load", "loadgen")]
    if change == "delete":
        cluster.delete("Deployment", "load", "loadgen")
    elif change == "scale":
        generator["spec"]["replicas"] = 0
    elif change == "args":
        generator["spec"]["template"]["spec"]["containers"][0]["args"] = ["-R", "1"]
    else:
        cluster.stats = EntryStats(requests=3000.0, success_ratio=1.0, p95_ms=50.0)
    passed, detail = _verdict(ctx, "workload_intact")
    assert not passed and ("loadgen" in detail or "req/s" in detail)


def test_workload_intact_allows_more_traffic_and_a_restart_of_the_generator() -> None:
    cluster = _healthy_cluster()
    ctx = _context(cluster)
    generator = cluster.objects[("Deployment", "load", "loadgen")]
    generator["spec"]["replicas"] = 10
    generator["spec"]["template"]["metadata"]["annotations"] = {
        "kubectl.kubernetes.io/restartedAt": "2030-01-01T00:00:00Z"}
    cluster.stats = EntryStats(requests=60000.0, success_ratio=1.0, p95_ms=50.0)
    assert _verdict(ctx, "workload_intact") == (True, "1 load generator(s) as in the baseline, entry traffic "
                                                "at ≥ 80% of 100.0 req/s")


# ----------------------------------------------------------------------------- safeguards
def _web(cluster: FakeCluster) -> dict[str, Any]:
    return cluster.objects[("Deployment", NS, "web")]["spec"]["template"]["spec"]["containers"][0]


@pytest.mark.parametrize("removal", ["probe", "limit", "policy"])
def test_removing_a_baseline_safeguard_is_collateral_damage(removal: str) -> None:
    cluster = _healthy_cluster()
    ctx = _context(cluster)
    if removal == "probe":
        del _web(cluster)["readinessProbe"]
        expected = "Deployment/web/web: readinessProbe"
    elif removal == "limit":
        del _web(cluster)["resources"]["limits"]
        expected = "Deployment/web/web: limits.cpu"
    else:
        cluster.delete("NetworkPolicy", NS, "db-ingress")
        expected = "NetworkPolicy/db-ingress"
    passed, detail = _verdict(ctx, "safeguards_kept")
    assert not passed and expected in detail
    assert _verdict(ctx, "safeguards_kept", may_remove=[expected])[0]  # unless the gold does the same


def test_fixing_a_safeguard_or_removing_an_injected_one_is_fine() -> None:
    cluster = _healthy_cluster()
    ctx = _context(cluster)
    # The fault: a bad probe port on web, a tiny limit on db, a deny-all policy and a liveness probe.
    _web(cluster)["readinessProbe"] = {"tcpSocket": {"port": 8080}}
    cluster.objects[("Deployment", NS, "db")]["spec"]["template"]["spec"]["containers"][0]["livenessProbe"] = {}
    cluster.put({"kind": "NetworkPolicy", "metadata": {"name": "deny-all", "namespace": NS}, "spec": {}})
    # The fix: correct the probe, raise the limit, remove what the fault added.
    _web(cluster)["readinessProbe"] = {"tcpSocket": {"port": 80}, "periodSeconds": 5}
    _web(cluster)["resources"]["limits"]["cpu"] = "2"
    cluster.delete("NetworkPolicy", NS, "deny-all")
    del cluster.objects[("Deployment", NS, "db")]["spec"]["template"]["spec"]["containers"][0]["livenessProbe"]
    assert _verdict(ctx, "safeguards_kept") == (True, "4 safeguard(s) of the healthy baseline kept")


# ------------------------------------------------------------------- data-driven checks
@pytest.mark.parametrize(("answer", "reason"), [
    ([], "no CFS period samples"),
    ([{"metric": {}, "value": [0, "NaN"]}], "not a number"),
    ([{"metric": {}, "value": [0, "+Inf"]}], "not a number"),
])
def test_cpu_not_throttled_fails_without_data(answer: list[dict[str, Any]], reason: str) -> None:
    import sregym.oracles.checks_platform  # noqa: F401 - registers cpu_not_throttled

    cluster = _healthy_cluster()
    ctx = _context(cluster)
    cluster.answers["container_cpu_cfs"] = answer
    passed, detail = _verdict(ctx, "cpu_not_throttled", deployment="web")
    assert not passed and reason in detail
    cluster.answers["container_cpu_cfs"] = [{"metric": {}, "value": [0, "0.02"]}]
    assert _verdict(ctx, "cpu_not_throttled", deployment="web")[0]


def test_service_error_free_fails_on_nan_samples() -> None:
    import sregym.oracles.checks_app_config  # noqa: F401 - registers service_error_free

    cluster = _healthy_cluster()
    ctx = _context(cluster)
    cluster.answers["traces_span_metrics_calls_total"] = [{"metric": {}, "value": [0, "NaN"]}]
    passed, detail = _verdict(ctx, "service_error_free", service="web")
    assert not passed and "no requests" in detail


def test_cronjob_check_fails_without_a_run_to_judge() -> None:
    import sregym.oracles.checks_platform  # noqa: F401 - registers cronjob_runs_complete

    cluster = _healthy_cluster()
    cluster.now = lambda: 1000.0  # type: ignore[attr-defined]
    cluster.put({"kind": "CronJob", "metadata": {"name": "archiver", "namespace": NS, "uid": "u1"},
                 "spec": {"schedule": "*/1 * * * *"}})
    passed, detail = _verdict(_context(cluster), "cronjob_runs_complete")
    assert not passed and "no run started" in detail


def test_a_check_that_returns_no_verdict_fails() -> None:
    CHECKS.register("returns_nan", lambda ctx: (math.nan, "a number, not a verdict"), replace=True)
    try:
        passed, detail = _verdict(_context(_healthy_cluster()), "returns_nan")
    finally:
        CHECKS.unregister("returns_nan")
    assert not passed and "not a verdict" in detail


# -------------------------------------------------------------------------- the catalogue
@pytest.mark.parametrize("problem_id", all_problem_ids())
def test_every_problem_keeps_the_baseline_checks(problem_id: str) -> None:
    keep = {spec.check for spec in get_problem(problem_id).mitigation.must_keep}
    assert keep >= {spec.check for spec in BASELINE_KEEP}
