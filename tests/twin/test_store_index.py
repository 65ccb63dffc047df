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
