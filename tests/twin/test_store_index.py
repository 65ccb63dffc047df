"""The store's generic index: kept current on every write, buckets in insertion order."""

from __future__ import annotations

from sregym.twin import Twin


def _cm(name: str, team: str, ns: str = "default") -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns,
                                                                  "labels": {"team": team}}}


def _team(cm: dict) -> list[str]:
    team = (cm["metadata"].get("labels") or {}).get("team")
    return [team] if team else []


def test_index_follows_creates_updates_and_deletes_in_insertion_order() -> None:
    store = Twin(seed=1).store
    store.create(_cm("early", "a"))
    index = store.add_index("ConfigMap", _team)
    assert index.names("a") == [("default", "early")]  # filled from what was stored
    for name, team in (("z", "a"), ("b", "b"), ("m", "a")):
        store.create(_cm(name, team))
    assert index.names("a") == [("default", "early"), ("default", "z"), ("default", "m")]
    # An update that keeps the key keeps the place and serves the new stored object.
    obj = store.get("ConfigMap", "default", "z")
    obj["data"] = {"k": "v"}
    store.update(obj)
    assert index.names("a") == [("default", "early"), ("default", "z"), ("default", "m")]
    assert index.get("a")[1]["data"] == {"k": "v"}
    # Moving buckets appends to the new one; deleting empties and drops a bucket.
    obj = store.get("ConfigMap", "default", "early")
    obj["metadata"]["labels"]["team"] = "b"
    store.update(obj)
    assert index.names("a") == [("default", "z"), ("default", "m")]
    assert index.names("b") == [("default", "b"), ("default", "early")]
    store.delete("ConfigMap", "default", "b")
    store.delete("ConfigMap", "default", "early")
    assert index.names("b") == [] and index.keys() == ["a"]
    # Other kinds never reach it.
    store.create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "default",
                                                                     "labels": {"team": "a"}}})
    assert len(index.get("a")) == 2


def _owned(name: str, owner: str | None) -> dict:
    refs = [{"apiVersion": "v1", "kind": "ConfigMap", "name": owner, "uid": owner,
             "controller": True}] if owner else []
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "default", "ownerReferences": refs}}


def test_owner_index_groups_by_controller_through_the_store_index() -> None:
    from sregym.twin.workloads.shared import OwnerIndex

    twin = Twin(seed=1)
    store = twin.store
    store.create(_owned("b", "u1"))
    owners = OwnerIndex.of(twin)
    store.create(_owned("a", "u1"))
    cm = ("", "ConfigMap")
    assert [o["metadata"]["name"] for o in owners.children(cm, "u1")] == ["a", "b"]  # by name
    before = (owners.version("u1"), owners.version("u2"))
    # Re-parenting moves the object and bumps both owners' counters.
    obj = store.get("ConfigMap", "default", "a")
    obj["metadata"]["ownerReferences"][0]["uid"] = "u2"
    store.update(obj)
    assert [o["metadata"]["name"] for o in owners.children(cm, "u1")] == ["b"]
    assert [o["metadata"]["name"] for o in owners.children(cm, "u2")] == ["a"]
    assert (owners.version("u1"), owners.version("u2")) == (before[0] + 1, before[1] + 1)
    store.delete("ConfigMap", "default", "a")
    assert owners.children(cm, "u2") == [] and owners.version("u2") == before[1] + 2
