"""The official `kubernetes` Python client against the twin's API server."""

from __future__ import annotations

import json

import pytest
from kubernetes import client, watch
from kubernetes.client.rest import ApiException


def _deployment(name: str, replicas: int = 2) -> dict:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": "main", "image": "nginx:1.27"}]}}},
    }


def test_list_read_create_patch_delete_core_and_apps(kube):
    api = kube.client()
    core = client.CoreV1Api(api)
    apps = client.AppsV1Api(api)
    namespaces = [n.metadata.name for n in core.list_namespace().items]
    assert {"default", "kube-system"} <= set(namespaces)
    dns = core.read_namespaced_service("kube-dns", "kube-system")
    assert dns.spec.cluster_ip == "10.96.0.10"
    created = apps.create_namespaced_deployment("default", _deployment("api"))
    assert created.metadata.uid and created.metadata.generation == 1
    kube.advance(5)
    patched = apps.patch_namespaced_deployment("api", "default", {"spec": {"replicas": 3}})
    assert patched.spec.replicas == 3 and patched.metadata.generation == 2
    merged = apps.patch_namespaced_deployment(
        "api", "default", {"metadata": {"labels": {"tier": "backend"}}},
        _content_type="application/merge-patch+json")
    assert merged.metadata.labels == {"app": "api", "tier": "backend"}
    json_patched = apps.patch_namespaced_deployment(
        "api", "default", [{"op": "replace", "path": "/spec/replicas", "value": 1}])
    assert json_patched.spec.replicas == 1
    listed = apps.list_deployment_for_all_namespaces(label_selector="tier=backend")
    assert [d.metadata.name for d in listed.items] == ["api"]
    cm = core.create_namespaced_config_map("default", client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name="cfg"), data={"a": "1"}))
    assert cm.data == {"a": "1"}
    status = core.delete_namespaced_config_map("cfg", "default")
    status = status if isinstance(status, dict) else status.to_dict()
    assert status["kind"] == "Status" and status["status"] == "Success"
    with pytest.raises(ApiException) as err:
        core.read_namespaced_config_map("cfg", "default")
    assert err.value.status == 404
    body = json.loads(err.value.body)
    assert body["kind"] == "Status" and body["reason"] == "NotFound"
    assert body["message"] == 'configmaps "cfg" not found'
    apps.delete_namespaced_deployment("api", "default")
    with pytest.raises(ApiException) as gone:
        apps.read_namespaced_deployment("api", "default")
    assert gone.value.status == 404


def test_conflicts_dry_run_and_scale_subresource(kube):
    api = kube.client()
    core = client.CoreV1Api(api)
    apps = client.AppsV1Api(api)
    cm = core.create_namespaced_config_map("default", {"apiVersion": "v1", "kind": "ConfigMap",
                                                       "metadata": {"name": "c"}, "data": {"v": "1"}})
    stale = cm.metadata.resource_version
    core.patch_namespaced_config_map("c", "default", {"data": {"v": "2"}})
    cm.data = {"v": "3"}
    cm.metadata.resource_version = stale
    with pytest.raises(ApiException) as err:
        core.replace_namespaced_config_map("c", "default", cm)
    assert err.value.status == 409 and json.loads(err.value.body)["reason"] == "Conflict"
    with pytest.raises(ApiException) as dup:
        core.create_namespaced_config_map("default", {"apiVersion": "v1", "kind": "ConfigMap",
                                                      "metadata": {"name": "c"}})
    assert dup.value.status == 409 and json.loads(dup.value.body)["reason"] == "AlreadyExists"
    core.create_namespaced_config_map("default", {"apiVersion": "v1", "kind": "ConfigMap",
                                                  "metadata": {"name": "dry"}}, dry_run="All")
    assert "dry" not in [c.metadata.name for c in core.list_namespaced_config_map("default").items]
    apps.create_namespaced_deployment("default", _deployment("web", 2))
    scale = apps.read_namespaced_deployment_scale("web", "default")
    assert scale.spec.replicas == 2 and scale.status.selector == "app=web"
    apps.patch_namespaced_deployment_scale("web", "default", {"spec": {"replicas": 5}})
    assert apps.read_namespaced_deployment("web", "default").spec.replicas == 5
    with pytest.raises(ApiException) as neg:
        apps.patch_namespaced_deployment_scale("web", "default", {"spec": {"replicas": -1}})
    assert neg.value.status == 422


def test_paging_with_limit_and_continue(kube):
    core = client.CoreV1Api(kube.client())
    for i in range(7):
        core.create_namespaced_config_map("default", {"apiVersion": "v1", "kind": "ConfigMap",
                                                      "metadata": {"name": f"page-{i}",
                                                                   "labels": {"set": "p"}}})
    seen: list[str] = []
    token = None
    pages = 0
    while True:
        page = core.list_namespaced_config_map("default", label_selector="set=p", limit=3,
                                               _continue=token)
        seen += [c.metadata.name for c in page.items]
        pages += 1
        token = page.metadata._continue
        if not token:
            break
    assert pages == 3
    assert seen == [f"page-{i}" for i in range(7)]
    with pytest.raises(ApiException) as bad:
        core.list_namespaced_config_map("default", limit=2, _continue="not-a-token")
    assert bad.value.status == 400


def test_delete_collection_and_propagation(kube):
    core = client.CoreV1Api(kube.client())
    for name, team in (("a", "x"), ("b", "x"), ("c", "y")):
        core.create_namespaced_config_map("default", {"apiVersion": "v1", "kind": "ConfigMap",
                                                      "metadata": {"name": name,
                                                                   "labels": {"team": team}}})
    core.delete_collection_namespaced_config_map("default", label_selector="team=x")
    left = {c.metadata.name for c in core.list_namespaced_config_map("default").items}
    assert "c" in left and not {"a", "b"} & left
    with pytest.raises(ApiException) as bad:
        core.delete_namespaced_config_map("c", "default", propagation_policy="Sideways")
    assert bad.value.status == 422


def test_watch_initial_events_and_replay_from_resource_version(kube):
    core = client.CoreV1Api(kube.client())
    core.create_namespaced_config_map("default", {"apiVersion": "v1", "kind": "ConfigMap",
                                                  "metadata": {"name": "first"}})
    events = list(watch.Watch().stream(core.list_namespaced_config_map, "default",
                                       timeout_seconds=1))
    added = {e["object"].metadata.name for e in events if e["type"] == "ADDED"}
    assert {"first", "kube-root-ca.crt"} <= added
    rv = core.list_namespaced_config_map("default").metadata.resource_version
    core.create_namespaced_config_map("default", {"apiVersion": "v1", "kind": "ConfigMap",
                                                  "metadata": {"name": "second"}})
    core.patch_namespaced_config_map("first", "default", {"data": {"k": "v"}})
    core.delete_namespaced_config_map("second", "default")
    replay = list(watch.Watch().stream(core.list_namespaced_config_map, "default",
                                       resource_version=rv, timeout_seconds=1))
    assert [(e["type"], e["object"].metadata.name) for e in replay] == [
        ("ADDED", "second"), ("MODIFIED", "first"), ("DELETED", "second")]


def test_watch_sees_changes_made_by_the_clock(kube):
    apps = client.AppsV1Api(kube.client())
    core = client.CoreV1Api(kube.client())
    apps.create_namespaced_deployment("default", _deployment("live", 2))
    rv = core.list_namespaced_pod("default").metadata.resource_version
    kube.advance(10)
    events = list(watch.Watch().stream(core.list_namespaced_pod, "default", label_selector="app=live",
                                       resource_version=rv, timeout_seconds=1))
    created = {e["object"].metadata.name for e in events if e["type"] == "ADDED"}
    assert len(created) == 2 and all(n.startswith("live-") for n in created)
