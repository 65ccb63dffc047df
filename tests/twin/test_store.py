"""The object store's API-server semantics, independent of any controller."""

from __future__ import annotations

import pytest

from sregym.errors import AlreadyExists, Conflict, Forbidden, Gone, Invalid, NotFound
from sregym.twin.clock import SimClock
from sregym.twin.machinery.kinds import KindRegistry
from sregym.twin.machinery.store import ObjectStore
from sregym.twin.rng import RngStreams


def make_store(seed: int = 1) -> ObjectStore:
    store = ObjectStore(SimClock(), RngStreams(seed), KindRegistry())
    for ns in ("default", "other"):
        store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns},
                      "spec": {"finalizers": ["kubernetes"]}})
    return store


def cm(name: str, ns: str = "default", **data: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns},
            "data": data}


def test_create_assigns_server_fields_and_rejects_duplicates() -> None:
    store = make_store()
    created = store.create(cm("a", x="1"))
    meta = created["metadata"]
    assert meta["uid"] and meta["resourceVersion"] and meta["creationTimestamp"].endswith("Z")
    with pytest.raises(AlreadyExists) as err:
        store.create(cm("a"))
    assert err.value.message == 'configmaps "a" already exists'
    assert err.value.to_status()["code"] == 409


def test_generate_name_and_missing_name() -> None:
    store = make_store()
    obj = cm("")
    obj["metadata"] = {"generateName": "web-", "namespace": "default"}
    created = store.create(obj)
    assert created["metadata"]["name"].startswith("web-") and len(created["metadata"]["name"]) == 9
    bad = cm("")
    bad["metadata"] = {"namespace": "default"}
    with pytest.raises(Invalid):
        store.create(bad)


def test_missing_namespace_is_not_found() -> None:
    store = make_store()
    with pytest.raises(NotFound) as err:
        store.create(cm("a", ns="nope"))
    assert err.value.message == 'namespaces "nope" not found'


def test_update_conflict_on_stale_resource_version() -> None:
    store = make_store()
    first = store.create(cm("a", x="1"))
    first["data"]["x"] = "2"
    second = store.update(first)
    assert int(second["metadata"]["resourceVersion"]) > int(first["metadata"]["resourceVersion"])
    first["data"]["x"] = "3"  # still carries the old resourceVersion
    with pytest.raises(Conflict) as err:
        store.update(first)
    assert "the object has been modified" in err.value.message


def test_noop_update_keeps_resource_version() -> None:
    store = make_store()
    created = store.create(cm("a", x="1"))
    again = store.update(created)
    assert again["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]


def test_generation_bumps_on_spec_change_only() -> None:
    store = make_store()
    dep = store.create({"apiVersion": "apps/v1", "kind": "Deployment",
                        "metadata": {"name": "d", "namespace": "default"},
                        "spec": {"replicas": 1, "selector": {"matchLabels": {"a": "b"}},
                                 "template": {"metadata": {"labels": {"a": "b"}},
                                              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})
    assert dep["metadata"]["generation"] == 1
    dep["metadata"]["labels"] = {"x": "y"}
    dep = store.update(dep)
    assert dep["metadata"]["generation"] == 1
    dep["spec"]["replicas"] = 3
    dep = store.update(dep)
    assert dep["metadata"]["generation"] == 2
    # the status subresource cannot change the spec, and the main resource cannot change status
    dep["status"] = {"replicas": 3}
    dep = store.update(dep)
    assert "status" not in dep
    dep["status"] = {"replicas": 3}
    dep["spec"]["replicas"] = 9
    dep = store.update_status(dep)
    assert dep["status"] == {"replicas": 3} and dep["spec"]["replicas"] == 3


def test_finalizers_keep_object_terminating_until_removed() -> None:
    store = make_store()
    obj = cm("a")
    obj["metadata"]["finalizers"] = ["example.com/block"]
    store.create(obj)
    terminating = store.delete("configmaps", "default", "a")
    assert terminating["metadata"]["deletionTimestamp"]
    assert store.try_get("configmaps", "default", "a") is not None
    current = store.get("configmaps", "default", "a")
    current["metadata"]["finalizers"] = []
    store.update(current)
    assert store.try_get("configmaps", "default", "a") is None


def test_terminating_namespace_rejects_new_content() -> None:
    store = make_store()
    store.delete("namespaces", None, "other")
    ns = store.get("namespaces", None, "other")
    assert ns["status"]["phase"] == "Terminating"
    with pytest.raises(Forbidden) as err:
        store.create(cm("a", ns="other"))
    assert "because it is being terminated" in err.value.message


def test_orphan_propagation_strips_owner_references() -> None:
    store = make_store()
    owner = store.create(cm("owner"))
    dependent = cm("dep")
    dependent["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "ConfigMap",
                                                 "name": "owner", "uid": owner["metadata"]["uid"]}]
    store.create(dependent)
    store.delete("configmaps", "default", "owner", propagation="Orphan")
    assert "ownerReferences" not in store.get("configmaps", "default", "dep")["metadata"]


def test_selectors_filter_lists() -> None:
    store = make_store()
    for name, labels in (("a", {"app": "web", "tier": "fe"}), ("b", {"app": "web"}), ("c", {})):
        obj = cm(name)
        obj["metadata"]["labels"] = labels
        store.create(obj)
    names = lambda items: [i["metadata"]["name"] for i in items]  # noqa: E731
    assert names(store.list("cm", "default", "app=web")) == ["a", "b"]
    assert names(store.list("cm", "default", "app=web,tier!=fe")) == ["b"]
    assert names(store.list("cm", "default", "tier in (fe,be)")) == ["a"]
    assert names(store.list("cm", "default", "!app")) == ["c"]
    assert names(store.list("cm", None, field_selector="metadata.name=b")) == ["b"]


def test_watch_receives_events_and_replays_from_resource_version() -> None:
    store = make_store()
    start = store.resource_version
    watch = store.watch("configmaps", "default")
    store.create(cm("a"))
    current = store.get("cm", "default", "a")
    current["data"] = {"k": "v"}
    store.update(current)
    store.delete("cm", "default", "a")
    assert [e.type for e in watch.drain()] == ["ADDED", "MODIFIED", "DELETED"]
    watch.close()
    replay = store.watch("configmaps", "default", resource_version=start)
    assert [e.type for e in replay.drain()] == ["ADDED", "MODIFIED", "DELETED"]


def test_watch_from_expired_version_is_gone(monkeypatch: pytest.MonkeyPatch) -> None:
    import sregym.twin.machinery.store as store_module

    store = make_store()
    store._history = store_module.deque(maxlen=3)
    for i in range(6):
        store.create(cm(f"c{i}"))
    with pytest.raises(Gone):
        store.watch("configmaps", resource_version=1)


def test_same_seed_same_uids() -> None:
    a, b = make_store(5), make_store(5)
    assert a.create(cm("x"))["metadata"]["uid"] == b.create(cm("x"))["metadata"]["uid"]
    assert make_store(6).create(cm("x"))["metadata"]["uid"] != make_store(5).create(cm("x"))["metadata"]["uid"]
