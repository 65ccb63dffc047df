"""Patch semantics: strategic merge (cases from the Kubernetes docs), JSON merge, JSON patch."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sregym.errors import ApiError
from sregym.twin.machinery.kinds import KindRegistry, ResourceKind
from sregym.twin.machinery.patch import apply_patch, strategic_supported

KINDS = KindRegistry()
DEPLOY = KINDS.resolve("deployments")
SERVICE = KINDS.resolve("services")
POD = KINDS.resolve("pods")
CUSTOM = ResourceKind("example.com", "v1", "Widget", "widgets", custom=True)


def deployment() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "demo", "labels": {"app": "web"},
                     "finalizers": ["a.example.com/x"]},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {"name": "web", "image": "nginx:1.27", "args": ["--a", "--b"],
                         "env": [{"name": "MODE", "value": "prod"}, {"name": "LEVEL", "value": "info"}],
                         "ports": [{"containerPort": 80, "name": "http"}],
                         "volumeMounts": [{"name": "cfg", "mountPath": "/etc/cfg"}]},
                        {"name": "sidecar", "image": "busybox:1.36"},
                    ],
                    "volumes": [{"name": "cfg", "configMap": {"name": "web"}}],
                    "tolerations": [{"key": "a", "operator": "Exists"}],
                },
            },
        },
    }


def containers(obj: dict) -> list[dict]:
    return obj["spec"]["template"]["spec"]["containers"]


def sm(patch: Any, obj: dict | None = None, kind: ResourceKind = DEPLOY) -> dict:
    return apply_patch(obj or deployment(), patch, "strategic", kind)


# ----------------------------------------------------------------------------- strategic merge
def test_containers_merge_by_name_and_new_ones_are_added() -> None:
    out = sm({"spec": {"template": {"spec": {"containers": [
        {"name": "web", "image": "nginx:1.28"}, {"name": "metrics", "image": "exporter:1"}]}}}})
    by_name = {c["name"]: c for c in containers(out)}
    assert by_name["web"]["image"] == "nginx:1.28"
    assert by_name["web"]["env"] == deployment()["spec"]["template"]["spec"]["containers"][0]["env"]
    assert by_name["sidecar"]["image"] == "busybox:1.36"
    assert set(by_name) == {"web", "sidecar", "metrics"}


def test_current_object_is_not_modified() -> None:
    current = deployment()
    sm({"spec": {"replicas": 9, "template": {"spec": {"containers": [{"name": "web", "image": "x"}]}}}}, current)
    assert current == deployment()


def test_env_merges_by_name_and_patch_delete_removes_one() -> None:
    out = sm({"spec": {"template": {"spec": {"containers": [{"name": "web", "env": [
        {"name": "LEVEL", "value": "debug"}, {"name": "NEW", "value": "1"},
        {"name": "MODE", "$patch": "delete"}]}]}}}})
    env = {e["name"]: e.get("value") for e in containers(out)[0]["env"]}
    assert env == {"LEVEL": "debug", "NEW": "1"}


def test_args_and_tolerations_are_replaced_not_merged() -> None:
    out = sm({"spec": {"template": {"spec": {"containers": [{"name": "web", "args": ["--c"]}],
                                             "tolerations": [{"key": "b", "operator": "Exists"}]}}}})
    assert containers(out)[0]["args"] == ["--c"]
    assert out["spec"]["template"]["spec"]["tolerations"] == [{"key": "b", "operator": "Exists"}]


def test_ports_merge_by_container_port_and_volume_mounts_by_path() -> None:
    out = sm({"spec": {"template": {"spec": {"containers": [{"name": "web",
              "ports": [{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 9090}],
              "volumeMounts": [{"mountPath": "/etc/cfg", "readOnly": True}]}]}}}})
    ports = containers(out)[0]["ports"]
    assert ports[0] == {"containerPort": 80, "name": "http", "protocol": "TCP"}
    assert ports[1] == {"containerPort": 9090}
    assert containers(out)[0]["volumeMounts"] == [{"name": "cfg", "mountPath": "/etc/cfg", "readOnly": True}]


def test_service_ports_merge_by_port() -> None:
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "demo"},
           "spec": {"ports": [{"name": "http", "port": 80, "targetPort": 8080}, {"name": "m", "port": 9090}]}}
    out = sm({"spec": {"ports": [{"port": 80, "targetPort": 8081}]}}, svc, SERVICE)
    assert out["spec"]["ports"] == [{"name": "http", "port": 80, "targetPort": 8081}, {"name": "m", "port": 9090}]


def test_patch_replace_directive_on_list_and_map() -> None:
    out = sm({"spec": {"template": {"spec": {"containers": [
        {"$patch": "replace"}, {"name": "only", "image": "x"}]}}}})
    assert containers(out) == [{"name": "only", "image": "x"}]
    out = sm({"spec": {"strategy": {"$patch": "replace", "type": "Recreate"}}})
    assert out["spec"]["strategy"] == {"type": "Recreate"}


def test_patch_delete_directive_on_map() -> None:
    out = sm({"spec": {"strategy": {"$patch": "delete"}}})
    assert out["spec"]["strategy"] == {}


def test_retain_keys_clears_other_fields() -> None:
    # The docs' example: switching a Deployment to Recreate drops rollingUpdate.
    out = sm({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}})
    assert out["spec"]["strategy"] == {"type": "Recreate"}


def test_retain_keys_mismatch_is_422_and_bad_format_400() -> None:
    with pytest.raises(ApiError) as err:
        sm({"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {"maxSurge": 2}}}})
    assert err.value.code == 422
    with pytest.raises(ApiError) as err:
        sm({"spec": {"strategy": {"$retainKeys": "type"}}})
    assert err.value.code == 400 and "retainKeys" in err.value.message


def test_finalizers_are_a_merged_set_with_delete_from_primitive_list() -> None:
    # a new item goes before live items it cannot be ordered against (strategicpatch's
    # mergeSortedSlice), and items named by the patch keep the patch's order, without duplicates
    out = sm({"metadata": {"finalizers": ["b.example.com/y"]}})
    assert out["metadata"]["finalizers"] == ["b.example.com/y", "a.example.com/x"]
    out = sm({"metadata": {"finalizers": ["b.example.com/y", "a.example.com/x"]}})
    assert out["metadata"]["finalizers"] == ["b.example.com/y", "a.example.com/x"]
    out = sm({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a.example.com/x"]}})
    assert out["metadata"]["finalizers"] == []


def test_set_element_order() -> None:
    out = sm({"spec": {"template": {"spec": {
        "$setElementOrder/containers": [{"name": "sidecar"}, {"name": "web"}],
        "containers": [{"name": "web", "image": "nginx:2"}]}}}})
    assert [c["name"] for c in containers(out)] == ["sidecar", "web"]
    assert containers(out)[1]["image"] == "nginx:2"


def test_kubectl_set_env_shape_keeps_other_variables() -> None:
    # What `kubectl set env deployment/web NEW=1` sends.
    patch = {"spec": {"template": {"spec": {"$setElementOrder/containers": [{"name": "web"}, {"name": "sidecar"}],
                                            "containers": [{"$setElementOrder/env": [
                                                {"name": "MODE"}, {"name": "LEVEL"}, {"name": "NEW"}],
                                                "env": [{"name": "NEW", "value": "1"}], "name": "web"}]}}}}
    out = sm(patch)
    assert [e["name"] for e in containers(out)[0]["env"]] == ["MODE", "LEVEL", "NEW"]


def test_null_deletes_a_key() -> None:
    out = sm({"metadata": {"labels": {"app": None}}, "spec": {"strategy": {"rollingUpdate": None}}})
    assert out["metadata"]["labels"] == {}
    assert "rollingUpdate" not in out["spec"]["strategy"]


def test_pod_status_conditions_merge_by_type() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "d"},
           "spec": {"containers": [{"name": "a", "image": "x"}]},
           "status": {"conditions": [{"type": "Ready", "status": "False"}, {"type": "PodScheduled", "status": "True"}]}}
    out = sm({"status": {"conditions": [{"type": "Ready", "status": "True"}]}}, pod, POD)
    assert out["status"]["conditions"] == [{"type": "Ready", "status": "True"},
                                           {"type": "PodScheduled", "status": "True"}]


def test_missing_merge_key_and_bad_directive_are_400() -> None:
    with pytest.raises(ApiError) as err:
        sm({"spec": {"template": {"spec": {"containers": [{"image": "x"}]}}}})
    assert err.value.code == 400 and "does not contain declared merge key: name" in err.value.message
    with pytest.raises(ApiError) as err:
        sm({"spec": {"strategy": {"$patch": "explode"}}})
    assert err.value.code == 400


def test_custom_resources_fall_back_to_merge_patch() -> None:
    cr = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
          "spec": {"items": [{"name": "a", "v": 1}, {"name": "b", "v": 2}]}}
    out = apply_patch(cr, {"spec": {"items": [{"name": "a", "v": 3}]}}, "strategic", CUSTOM)
    assert out["spec"]["items"] == [{"name": "a", "v": 3}]
    assert not strategic_supported(CUSTOM) and strategic_supported(DEPLOY)


# ----------------------------------------------------------------------------- JSON merge
def test_json_merge_replaces_lists_and_null_deletes() -> None:
    out = apply_patch(deployment(), {"spec": {"replicas": 5, "template": {"spec": {"containers": [
        {"name": "solo", "image": "x"}]}}}, "metadata": {"labels": None}}, "merge", DEPLOY)
    assert containers(out) == [{"name": "solo", "image": "x"}]
    assert out["spec"]["replicas"] == 5
    assert "labels" not in out["metadata"]


def test_json_merge_accepts_content_type_and_text() -> None:
    out = apply_patch(deployment(), '{"spec":{"replicas":0}}', "application/merge-patch+json", DEPLOY)
    assert out["spec"]["replicas"] == 0


# ----------------------------------------------------------------------------- JSON patch
def test_json_patch_operations() -> None:
    ops = [
        {"op": "replace", "path": "/spec/replicas", "value": 4},
        {"op": "add", "path": "/metadata/labels/tier~1name", "value": "front"},
        {"op": "add", "path": "/spec/template/spec/containers/0/env/-", "value": {"name": "X", "value": "1"}},
        {"op": "remove", "path": "/spec/template/spec/containers/1"},
        {"op": "copy", "from": "/metadata/labels/app", "path": "/metadata/labels/copied"},
        {"op": "move", "from": "/metadata/labels/copied", "path": "/metadata/labels/moved"},
        {"op": "test", "path": "/spec/replicas", "value": 4},
    ]
    out = apply_patch(deployment(), ops, "json", DEPLOY)
    assert out["spec"]["replicas"] == 4
    assert out["metadata"]["labels"] == {"app": "web", "tier/name": "front", "moved": "web"}
    assert containers(out)[0]["env"][-1] == {"name": "X", "value": "1"}
    assert [c["name"] for c in containers(out)] == ["web"]


@pytest.mark.parametrize(("ops", "code", "text"), [
    ([{"op": "test", "path": "/spec/replicas", "value": 3}], 422, "the server rejected our request"),
    ([{"op": "test", "path": "/spec/paused", "value": True}], 422, "the server rejected our request"),
    ([{"op": "remove", "path": "/spec/nope"}], 422, "the server rejected our request"),
    ([{"op": "replace", "path": "/spec/nope", "value": 1}], 422, "the server rejected our request"),
    ([{"op": "add", "path": "/spec/template/spec/containers/7", "value": {}}], 422, "rejected"),
    ([{"op": "frobnicate", "path": "/spec"}], 422, "rejected"),
    ({"op": "add"}, 400, "cannot unmarshal object into Go value of type jsonpatch.Patch"),
    ("[{]", 400, "invalid character"),
])
def test_json_patch_errors(ops: Any, code: int, text: str) -> None:
    with pytest.raises(ApiError) as err:
        apply_patch(deployment(), ops, "json", DEPLOY)
    assert err.value.code == code
    assert text in err.value.message


def test_test_op_distinguishes_true_from_one() -> None:
    obj = deployment()
    obj["spec"]["replicas"] = 1
    with pytest.raises(ApiError):
        apply_patch(obj, [{"op": "test", "path": "/spec/replicas", "value": True}], "json", DEPLOY)


def test_changing_the_name_is_rejected() -> None:
    with pytest.raises(ApiError) as err:
        apply_patch(deployment(), {"metadata": {"name": "other"}}, "merge", DEPLOY)
    assert err.value.code == 400
    assert "does not match the name on the URL" in err.value.message


def test_unknown_patch_type_is_415() -> None:
    with pytest.raises(ApiError) as err:
        apply_patch(deployment(), {}, "application/xml", DEPLOY)
    assert err.value.code == 415


def test_apply_merges_an_applied_manifest() -> None:
    manifest = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: demo}
spec:
  replicas: 3
  template:
    spec:
      containers: [{name: web, image: "nginx:1.29"}]
"""
    out = apply_patch(deployment(), manifest, "apply", DEPLOY)
    assert out["spec"]["replicas"] == 3
    assert containers(out)[0]["image"] == "nginx:1.29"
    assert containers(out)[1]["name"] == "sidecar"
    with pytest.raises(ApiError):
        apply_patch(deployment(), "spec: {replicas: 1}", "apply", DEPLOY)


def test_twin_patch_uses_apply_patch() -> None:
    from sregym.twin import Twin

    twin = Twin(seed=1, bootstrap=True)
    twin.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"},
                 "data": {"a": "1"}})
    out = twin.patch("configmaps", "default", "c", {"data": {"b": "2"}})
    assert out["data"] == {"a": "1", "b": "2"}


# ----------------------------------------------------------------------------- property test
json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=6))
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.sampled_from(["name", "image", "spec", "metadata", "containers", "env", "$patch",
                                         "$retainKeys", "$setElementOrder/containers", "ports",
                                         "$deleteFromPrimitiveList/finalizers", "finalizers", "op", "path",
                                         "value", "from", "replicas", "template", "containerPort"]),
                        children, max_size=5)),
    max_leaves=20,
)
json_ops = st.lists(st.fixed_dictionaries({
    "op": st.sampled_from(["add", "remove", "replace", "move", "copy", "test", "bogus"]),
    "path": st.sampled_from(["", "/", "/spec", "/spec/replicas", "/spec/template/spec/containers/0",
                             "/spec/template/spec/containers/-", "/metadata/labels/a~1b", "/x/y", "/spec/01"]),
}, optional={"value": json_values, "from": st.sampled_from(["/spec", "/metadata", "/nope"])}), max_size=4)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(patch=st.one_of(json_values, json_ops, st.text(max_size=30)),
       patch_type=st.sampled_from(["strategic", "merge", "json", "apply"]))
def test_random_patches_only_ever_raise_api_errors(patch: Any, patch_type: str) -> None:
    try:
        out = apply_patch(deployment(), patch, patch_type, DEPLOY)
    except ApiError as err:
        assert 400 <= err.code < 500
        return
    assert isinstance(out, dict)
    json.dumps(out)  # the result is still plain JSON
    assert out["metadata"]["name"] == "web"
