"""Faults and checks of the Hotel Reservation app/config/database problems, on a live twin."""

from __future__ import annotations

import json

import pytest

from sregym.apps import get_app
from sregym.cluster.twin import TwinCluster
from sregym.faults.base import make_fault
from sregym.oracles.checks import CheckContext
from sregym.oracles.checks_app_config import service_error_free
from sregym.twin.dataplane.spec import Call

NS = "hotel-reservation"


@pytest.fixture
def cluster() -> TwinCluster:
    c = TwinCluster.new(0)
    app = get_app("hotel-reservation")
    app.push_images(c)
    for obj in app.objects():
        c.apply(obj)
    c.advance(90)
    return c


def _ctx(c: TwinCluster) -> CheckContext:
    return CheckContext(cluster=c, namespace=NS)


def _pod(c: TwinCluster, service: str) -> str:
    pods = [p for p in c.list("Pod", NS, label_selector=f"io.kompose.service={service}")
            if not p["metadata"].get("deletionTimestamp")]
    return sorted(p["metadata"]["name"] for p in pods)[-1]


def test_feature_guard_on_calls() -> None:
    on = Call(dependency="search", operation="/search.Search/NearbyV2", feature="search_backend=v2")
    off = Call(dependency="search", operation="/search.Search/Nearby", feature="search_backend!=v2")
    assert on.feature_enabled({"search_backend": "v2"}) and not off.feature_enabled({"search_backend": "v2"})
    assert off.feature_enabled({"search_backend": "v1"}) and not on.feature_enabled({})
    with pytest.raises(ValueError):
        Call(dependency="search", operation="x", feature="no-operator")


def test_revoked_role_breaks_queries_and_recover_grants_it_back(cluster: TwinCluster) -> None:
    assert service_error_free(_ctx(cluster), service="geo")[0]
    fault = make_fault("mongo_revoke_role", {"namespace": NS, "deployment": "mongodb-geo", "db": "geo-db"})
    state = fault.inject(cluster)
    cluster.advance(60)
    ok, detail = service_error_free(_ctx(cluster), service="geo")
    assert not ok and "failed" in detail
    assert "not authorized on geo-db" in cluster.logs(NS, _pod(cluster, "geo"), tail=20)
    fault.recover(cluster, state)
    cluster.advance(70)
    assert service_error_free(_ctx(cluster), service="geo")[0]


def test_dropped_config_key_crashes_geo_with_its_own_log(cluster: TwinCluster) -> None:
    before = cluster.get("ConfigMap", NS, "geo-config")["data"]
    fault = make_fault("drop_config_json_key", {"namespace": NS, "configmap": "geo-config",
                                                 "json_key": "GeoMongoAddress",
                                                 "restart_selector": "io.kompose.service=geo"})
    state = fault.inject(cluster)
    assert "GeoMongoAddress" not in json.loads(cluster.get("ConfigMap", NS, "geo-config")["data"]["config.json"])
    cluster.advance(30)
    pod = _pod(cluster, "geo")
    assert "must have at least 1 host" in cluster.logs(NS, pod)
    fault.recover(cluster, state)
    assert cluster.get("ConfigMap", NS, "geo-config")["data"] == before


def test_shadowed_env_var_wins_and_recover_removes_it(cluster: TwinCluster) -> None:
    fault = make_fault("shadow_env_var", {"namespace": NS, "name": "frontend", "env": "PROFILE_ADDR",
                                          "value": "localhost:8081"})
    state = fault.inject(cluster)
    env = cluster.get("Deployment", NS, "frontend")["spec"]["template"]["spec"]["containers"][0]["env"]
    assert [e.get("value") for e in env if e["name"] == "PROFILE_ADDR"] == ["profile:8081", "localhost:8081"]
    cluster.advance(90)
    assert not service_error_free(_ctx(cluster), service="frontend")[0]
    fault.recover(cluster, state)
    env = cluster.get("Deployment", NS, "frontend")["spec"]["template"]["spec"]["containers"][0]["env"]
    assert [e.get("value") for e in env if e["name"] == "PROFILE_ADDR"] == ["profile:8081"]


def test_password_rotation_leaves_running_pod_stale_until_restart(cluster: TwinCluster) -> None:
    secret = cluster.get("Secret", NS, "mongodb-recommendation-credentials")
    fault = make_fault("mongo_rotate_password", {
        "namespace": NS, "deployment": "mongodb-recommendation", "secret": "mongodb-recommendation-credentials",
        "new_password": "rotated"})
    state = fault.inject(cluster)
    cluster.advance(60)
    assert not service_error_free(_ctx(cluster), service="recommendation")[0]
    cluster.delete("Pod", NS, _pod(cluster, "recommendation"))  # a restart picks up the new password
    cluster.advance(70)
    assert service_error_free(_ctx(cluster), service="recommendation")[0]
    fault.recover(cluster, state)
    after = cluster.get("Secret", NS, "mongodb-recommendation-credentials")
    assert (after.get("data"), after.get("stringData")) == (secret.get("data"), secret.get("stringData"))


def test_deleted_configmap_is_recreated_by_recover(cluster: TwinCluster) -> None:
    fault = make_fault("delete_object", {"kind": "ConfigMap", "namespace": NS, "name": "mongo-geo-script",
                                         "restart_selector": "io.kompose.service=mongodb-geo"})
    state = fault.inject(cluster)
    cluster.advance(30)
    assert cluster.get("ConfigMap", NS, "mongo-geo-script") is None
    reasons = {e.get("reason") for e in cluster.list("Event", NS)}
    assert "FailedMount" in reasons
    fault.recover(cluster, state)
    assert cluster.get("ConfigMap", NS, "mongo-geo-script") is not None
