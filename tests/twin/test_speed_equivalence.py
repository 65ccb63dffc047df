"""The twin's shortcuts for speed give exactly what the plain computation gives (each test fails
if its shortcut drifted from the reference or ignored an input): the store's remembered key
order, the FieldsV1 tree memo, the quantity-path trie, and the Envoy access log's request ids and
attributes."""

from __future__ import annotations

import random
import uuid

from sregym.twin.dataplane.envoy import render_attributes, render_format, uuid4_text
from sregym.twin.machinery import fieldsets
from sregym.twin.machinery.quantity import QuantityError, canonical_quantity
from sregym.twin.machinery.quantity_fields import ANY, canonicalize, quantity_paths
from sregym.twin.twin import Twin


def _config_map(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"},
            "data": {"k": name}}


def test_scan_follows_creates_and_deletes_in_name_order() -> None:
    twin = Twin(seed=0)
    store = twin.store
    for name in ("b", "d", "a"):
        store.create(_config_map(name))
    names = lambda: [o["metadata"]["name"] for o in store.scan("ConfigMap", "default")]  # noqa: E731
    assert names()[:3] == ["a", "b", "d"]
    store.create(_config_map("c"))
    assert names()[:4] == ["a", "b", "c", "d"]
    store.delete("ConfigMap", "default", "b")
    assert names()[:3] == ["a", "c", "d"]
    # A scan in progress keeps the keys it started with; objects deleted meanwhile are skipped.
    scan = store.scan("ConfigMap", "default")
    assert next(scan)["metadata"]["name"] == "a"
    store.create(_config_map("aa"))
    store.delete("ConfigMap", "default", "c")
    assert [o["metadata"]["name"] for o in scan][:1] == ["d"]
    assert names()[:3] == ["a", "aa", "d"]
    assert [o["metadata"]["name"] for k, o in store.all_objects() if k.kind == "ConfigMap"
            and o["metadata"].get("namespace") == "default"][:3] == ["a", "aa", "d"]


def test_encoded_trees_are_fresh_copies_equal_to_a_plain_encoding() -> None:
    paths = {("f:metadata", "f:labels"), ("f:metadata", "f:labels", "f:app"), ("f:spec", "f:replicas"),
             ("f:spec", "f:template", "f:spec", "f:containers", 'k:{"name":"app"}'),
             ("f:spec", "f:template", "f:spec", "f:containers", 'k:{"name":"app"}', "f:image")}
    plain = fieldsets._encode(frozenset(paths))
    first = fieldsets.encode(paths)
    assert first == plain and fieldsets.decode(first) == paths
    first["f:spec"].clear()  # a caller changing its tree must not change the next answer
    assert fieldsets.encode(set(paths)) == plain
    fewer = paths - {("f:spec", "f:replicas")}
    assert fieldsets.encode(fewer) == fieldsets._encode(frozenset(fewer)) != plain


def _path_by_path(node: object, path: tuple[str, ...]) -> None:
    """The walk `canonicalize` made before the trie: one path at a time from the root."""
    key, rest = path[0], path[1:]
    if key == ANY:
        slots = list(node.items()) if isinstance(node, dict) else \
            list(enumerate(node)) if isinstance(node, list) else []
    elif isinstance(node, dict) and key in node:
        slots = [(key, node[key])]
    else:
        return
    for slot, value in slots:
        if value is None:
            continue
        if rest:
            _path_by_path(value, rest)
        elif isinstance(value, str | int | float) and not isinstance(value, bool):
            try:
                node[slot] = canonical_quantity(value)  # type: ignore[index]
            except QuantityError:
                continue


def test_quantity_trie_rewrites_what_the_path_walk_rewrites() -> None:
    def pod() -> dict:
        resources = {"limits": {"cpu": "1000m", "memory": "1024Mi"}, "requests": {"cpu": 0.5, "memory": "bad"}}
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                "spec": {"containers": [{"name": "a", "resources": resources},
                                        {"name": "b", "resources": {"limits": {"cpu": 2}},
                                         "env": [{"name": "X", "valueFrom": {"resourceFieldRef": {
                                             "resource": "limits.cpu", "divisor": "1000m"}}}]}],
                         "initContainers": [{"name": "i", "resources": {"requests": {"memory": "2048Ki"}}}],
                         "overhead": {"cpu": "250m"},
                         "volumes": [{"name": "v", "emptyDir": {"sizeLimit": "1024Mi"}}]},
                "status": {"containerStatuses": [{"name": "a", "allocatedResources": {"cpu": "1000m"}}]}}

    fast, reference = pod(), pod()
    canonicalize(fast, "", "v1", "Pod")
    for path in quantity_paths("", "v1", "Pod"):
        _path_by_path(reference, path)
    assert fast == reference
    assert fast["spec"]["containers"][0]["resources"]["limits"] == {"cpu": "1", "memory": "1Gi"}
    assert fast["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "500m", "memory": "bad"}


def test_request_ids_match_the_uuid_module() -> None:
    rng = random.Random(7)
    for bits in [0, (1 << 128) - 1, *(rng.getrandbits(128) for _ in range(5000))]:
        assert uuid4_text(bits) == str(uuid.UUID(int=bits, version=4))


def test_attributes_render_as_their_formats_do() -> None:
    attributes = (("one", "%X%"), ("literal", "proxy.access"), ("braces", "{%X%}"), ("mixed", "%X%://%Y%%Z%"),
                  ("unset", "%NOPE%"), ("empty", ""), ("escaped", "a{b}"))
    for fields in ({"X": "1", "Y": "y{}", "Z": "z"}, {"X": "-", "Y": "", "Z": "%"}):
        assert render_attributes(attributes, fields) == {k: render_format(v, fields) for k, v in attributes}
