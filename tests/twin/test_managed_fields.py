"""Unit tests of the FieldsV1 sets, Update recording and server-side apply merging/conflicts."""

from __future__ import annotations

import pytest

from sregym.errors import Conflict
from sregym.twin.machinery.fieldsets import applied_set, compare, decode, encode, path_text
from sregym.twin.machinery.managedfields import Writer, manager_for_user, record_update
from sregym.twin.machinery.serverside_apply import server_side_apply

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": "1"}},
       "spec": {"containers": [{"name": "c", "image": "x", "ports": [{"containerPort": 80}]}],
                "finalizers": None}}


def test_applied_set_and_encoding_round_trip() -> None:
    fields = applied_set(POD)
    tree = encode(fields)
    assert tree["f:metadata"] == {"f:labels": {"f:a": {}}}
    container = tree["f:spec"]["f:containers"]['k:{"name":"c"}']
    assert container["."] == {} and 'k:{"containerPort":80,"protocol":"TCP"}' in container["f:ports"]
    assert decode(tree) == fields


def test_update_marks_new_maps_and_lists_with_dot() -> None:
    diff = compare({}, {"metadata": {"labels": {"a": "1"}}, "spec": {"finalizers": ["x"]}})
    tree = encode(diff.added)
    assert tree == {"f:metadata": {"f:labels": {".": {}, "f:a": {}}},
                    "f:spec": {"f:finalizers": {".": {}, 'v:"x"': {}}}}


def test_path_text_like_upstream() -> None:
    assert path_text(("f:spec", "f:containers", 'k:{"name":"c"}', "f:image")) == \
        '.spec.containers[name="c"].image'


def test_update_takes_changed_fields_from_other_managers() -> None:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "m"}, "data": {"k": "1"}}
    record_update(None, obj, Writer("creator"), api_version="v1", now="t0")
    new = {**obj, "data": {"k": "2"}}
    record_update(obj, new, Writer("kubectl-edit"), api_version="v1", now="t1")
    managers = {e["manager"]: e["fieldsV1"] for e in new["metadata"]["managedFields"]}
    # The creator keeps the map it added (`.`), the editor takes the key it changed.
    assert managers == {"creator": {"f:data": {}}, "kubectl-edit": {"f:data": {"f:k": {}}}}


def test_apply_conflicts_then_forces() -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "m"}, "data": {"k": "1"}}
    record_update(None, cm, Writer("other"), api_version="v1", now="t0")
    config = {**cm, "metadata": {"name": "m"}, "data": {"k": "2"}}
    with pytest.raises(Conflict) as err:
        server_side_apply(cm, config, manager="me", api_version="v1", now="t1", force=False)
    assert err.value.message == 'Apply failed with 1 conflict: conflict with "other" using v1: .data.k'
    forced = server_side_apply(cm, config, manager="me", api_version="v1", now="t1", force=True)
    owners = {e["manager"]: e["fieldsV1"] for e in forced["metadata"]["managedFields"]}
    assert owners == {"me": {"f:data": {"f:k": {}}}, "other": {"f:data": {}}}


def test_in_process_writers_are_named_like_the_real_components() -> None:
    assert manager_for_user("system:node:worker-1") == "kubelet"
    assert manager_for_user("system:serviceaccount:kube-system:deployment-controller") == \
        "kube-controller-manager"
    assert manager_for_user("system:kube-scheduler") == "kube-scheduler"
