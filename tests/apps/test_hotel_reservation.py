"""Hotel Reservation acceptance: healthy baseline and failure signatures.

Tests that need the data plane (D1: `twin.services.dataplane`) are written against its
documented interface (`entry_stats`, `connect`, `span_metrics`) and run as it lands.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

import sregym.twin.userland  # noqa: F401 - registers mongosh
from sregym.apps import APPS, deploy_app, get_app
from sregym.twin.datastores import MongoServer, datastore_for
from sregym.twin.node.runtime import runtime_of
from sregym.twin.node.shell import run_once
from sregym.twin.twin import Twin

NS = "hotel-reservation"
SERVICES = ("frontend", "search", "geo", "profile", "rate", "recommendation", "reservation", "user")


@pytest.fixture(scope="module")
def healthy() -> Twin:
    twin = Twin(seed=42)
    deploy_app(twin, "hotel-reservation")
    twin.advance(300)
    return twin


def _pod(twin: Twin, service: str) -> dict[str, Any]:
    pods = twin.list("pods", NS, label_selector=f"io.kompose.service={service}")
    return next(p for p in pods if not p["metadata"].get("deletionTimestamp"))


def test_registered_with_faithful_manifests() -> None:
    spec = get_app("hotel-reservation")
    assert "hotel-reservation" in APPS.names()
    docs = [d for d in yaml.safe_load_all(spec.manifests()) if d]
    names = {(d["kind"], d["metadata"]["name"]) for d in docs}
    for svc in SERVICES:
        assert ("Deployment", svc) in names and ("Service", svc) in names
        assert ("ConfigMap", f"{svc}-config") in names
    for db in ("geo", "profile", "rate", "recommendation", "reservation", "user"):
        assert ("PersistentVolumeClaim", f"{db}-pvc") in names
        assert ("Secret", f"mongodb-{db}-credentials") in names
        assert ("ConfigMap", f"mongo-{db}-script") in names
    for cache in ("memcached-profile", "memcached-rate", "memcached-reserve"):
        assert ("Deployment", cache) in names
    geo = next(d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "geo")
    assert geo["spec"]["template"]["metadata"]["labels"] == {"io.kompose.service": "geo"}
    assert geo["spec"]["template"]["spec"]["containers"][0]["command"] == ["geo"]
    loadgen = [d for d in docs if d["metadata"].get("namespace") == "sregym-system"]
    assert any(d["kind"] == "Deployment" for d in loadgen)
    assert sum(m.weight for m in spec.load.mix) == pytest.approx(1.0)
    assert spec.load.rate == 100


def test_baseline_all_pods_ready_and_databases_initialised(healthy: Twin) -> None:
    pods = healthy.list("pods", NS)
    assert len(pods) == 19
    for pod in pods:
        statuses = pod["status"].get("containerStatuses") or []
        assert statuses and all(s["ready"] for s in statuses), pod["metadata"]["name"]
        # A service that starts before its MongoDB is up waits 30 s (server selection), exits and
        # is restarted, as on a real cluster; nothing restarts once the app has settled.
        for status in statuses:
            assert status["restartCount"] <= 1, pod["metadata"]["name"]
            assert status["state"]["running"]["startedAt"] < "2026-01-05T09:02:00Z", pod["metadata"]["name"]
    store = datastore_for(healthy, _pod(healthy, "mongodb-geo"))
    assert isinstance(store, MongoServer) and store.auth
    assert ("readWrite", "geo-db") in store.mongo_state.users[("admin", "admin")].roles
    assert "Successfully registered in consul" in healthy.logs(NS, _pod(healthy, "geo")["metadata"]["name"])


def test_baseline_slo_and_usage(healthy: Twin) -> None:
    dataplane = healthy.services.dataplane
    stats = dataplane.entry_stats(60)
    slo = get_app("hotel-reservation").slo
    assert stats.success_ratio >= slo.success_ratio
    assert stats.p95_ms <= slo.p95_latency_ms
    runtime = runtime_of(healthy)
    for pod in healthy.list("pods", NS):
        for name, (cpu, memory) in runtime.pod_usage(NS, pod["metadata"]["name"]).items():
            assert cpu > 0 and memory > 0, (pod["metadata"]["name"], name)


def test_revoking_geo_role_with_mongosh_makes_geo_fail() -> None:
    twin = Twin(seed=7)
    deploy_app(twin, "hotel-reservation")
    twin.advance(120)
    pod = _pod(twin, "mongodb-geo")
    ctx = runtime_of(twin).shell_context(NS, pod["metadata"]["name"], "hotel-reserv-geo-mongo")
    assert ctx is not None
    result = run_once(ctx, ["mongosh", "admin", "-u", "root", "-p", "root", "--quiet", "--eval",
                            "db.revokeRolesFromUser('admin', [{role: 'readWrite', db: 'geo-db'}])"])
    assert result.stdout.strip() == "{ ok: 1 }"
    twin.advance(60)
    geo_logs = twin.logs(NS, _pod(twin, "geo")["metadata"]["name"])
    assert "not authorized on geo-db to execute command" in geo_logs
    stats = twin.services.dataplane.entry_stats(30)
    assert stats.success_ratio < 0.5


def test_wrong_mongo_credentials_are_logged_by_the_client_service() -> None:
    twin = Twin(seed=8)
    deploy_app(twin, "hotel-reservation")
    twin.advance(60)
    twin.patch("secrets", NS, "mongodb-rate-credentials", {"stringData": {"password": "wrong"}})
    twin.delete("pods", NS, _pod(twin, "rate")["metadata"]["name"])
    twin.advance(90)
    logs = twin.logs(NS, _pod(twin, "rate")["metadata"]["name"])
    assert "Authentication failed." in logs


def test_same_seed_same_logs() -> None:
    def run() -> str:
        twin = Twin(seed=3)
        deploy_app(twin, "hotel-reservation")
        twin.advance(90)
        return "\n".join(twin.logs(NS, p["metadata"]["name"]) for p in twin.list("pods", NS))

    assert run() == run()


# ----------------------------------------------------------------------- the load generator
def test_loadgen_script_mix_matches_the_app_workload() -> None:
    from sregym.apps.hotel_reservation import WORKLOAD, loadgen
    from sregym.twin.dataplane.loadgen import mix_from_script, parse_args

    mix = mix_from_script(loadgen.lua_script(WORKLOAD))
    assert [(m.method, m.operation) for m in mix] == [
        ("GET", "/hotels"), ("GET", "/recommendations"), ("POST", "/user"), ("POST", "/reservation")]
    assert [round(m.weight, 4) for m in mix] == [0.6, 0.39, 0.005, 0.005]
    args = parse_args(loadgen.wrk_args(WORKLOAD))
    assert (args.rate, args.threads, args.connections, args.dist) == (100.0, 3, 100, "exp")
    assert args.url == "http://frontend.hotel-reservation.svc.cluster.local:5000"


def test_traffic_comes_from_the_loadgen_pod_and_stops_with_it() -> None:
    from sregym.twin.telemetry.visibility import HIDDEN_JOBS, labels_visible

    twin = Twin(seed=11)
    deploy_app(twin, "hotel-reservation")
    twin.advance(150)
    dp = twin.services.dataplane
    assert dp.entry_stats(30).rps == pytest.approx(100.0)
    [gen] = twin.list("pods", "sregym-system", label_selector="app.kubernetes.io/name=sregym-loadgen")
    assert "Running 1h test @ http://frontend.hotel-reservation.svc.cluster.local:5000" in \
        twin.logs("sregym-system", gen["metadata"]["name"])
    ok, src = dp.workloads["hotel-reservation"].source_pod(twin)
    assert ok and src["metadata"]["name"] == gen["metadata"]["name"]
    # The generator's names are the ones the query APIs hide.
    assert "sregym-loadgen" in HIDDEN_JOBS
    assert not labels_visible({"job": "sregym-system/sregym-loadgen"})
    # Run-time knobs act on the generated load.
    dp.set_load("hotel-reservation", 2.0)
    twin.advance(20)
    assert dp.entry_stats(10).rps == pytest.approx(200.0)
    dp.set_load("hotel-reservation", 1.0)
    # Scaling the generator to zero stops the traffic; scaling it back restarts it.
    twin.patch("deployments", "sregym-system", "sregym-loadgen", {"spec": {"replicas": 0}})
    twin.advance(60)
    assert dp.entry_stats(20).rps == 0.0
    twin.patch("deployments", "sregym-system", "sregym-loadgen", {"spec": {"replicas": 2}})
    twin.advance(60)
    assert dp.entry_stats(20).rps == pytest.approx(200.0)  # two wrk2 processes, 100 req/s each
    twin.delete("deployments", "sregym-system", "sregym-loadgen")
    twin.advance(60)
    assert dp.entry_stats(20).rps == 0.0
