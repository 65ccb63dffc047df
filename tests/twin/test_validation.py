"""API validation: real-shaped 422 errors for bad names, labels, pod specs, workloads, Services."""

from __future__ import annotations

from typing import Any

import pytest

from sregym.errors import ApiError
from sregym.twin import Twin


@pytest.fixture(scope="module")
def twin() -> Twin:
    return Twin(seed=11)


def deployment(name: str = "web", **spec_overrides: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "replicas": 1,
        "selector": {"matchLabels": {"app": name}},
        "template": {"metadata": {"labels": {"app": name}},
                     "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}},
    }
    spec.update(spec_overrides)
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "default"},
            "spec": spec}


def rejected(twin: Twin, obj: dict[str, Any]) -> ApiError:
    with pytest.raises(ApiError) as err:
        twin.create(obj)
    return err.value


def causes(err: ApiError) -> dict[str, str]:
    return {c["field"]: c["message"] for c in err.details.get("causes", [])}


def test_bad_name_has_the_real_message(twin: Twin) -> None:
    err = rejected(twin, deployment("Web_1"))
    assert err.code == 422 and err.reason == "Invalid"
    assert err.message == (
        'Deployment.apps "Web_1" is invalid: metadata.name: Invalid value: "Web_1": a lowercase RFC 1123 '
        "subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end "
        "with an alphanumeric character (e.g. 'example.com', regex used for validation is "
        r"'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
    assert err.details["kind"] == "Deployment" and err.details["group"] == "apps"


def test_namespace_and_service_names_are_labels(twin: Twin) -> None:
    err = rejected(twin, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a.b"}})
    assert "a lowercase RFC 1123 label must consist" in causes(err)["metadata.name"]
    err = rejected(twin, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "9svc", "namespace": "default"},
                          "spec": {"ports": [{"port": 80}]}})
    assert "a DNS-1035 label must consist" in causes(err)["metadata.name"]


def test_name_lengths(twin: Twin) -> None:
    err = rejected(twin, {"apiVersion": "v1", "kind": "ConfigMap",
                          "metadata": {"name": "x" * 254, "namespace": "default"}})
    assert causes(err)["metadata.name"] == f'Invalid value: "{"x" * 254}": must be no more than 253 characters'
    err = rejected(twin, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n" * 64}})
    assert "must be no more than 63 characters" in causes(err)["metadata.name"]


def test_rbac_names_allow_colons(twin: Twin) -> None:
    twin.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                 "metadata": {"name": "system:custom:reader"}, "rules": []})


def test_labels_keys_and_values(twin: Twin) -> None:
    obj = {"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": "cfg", "namespace": "default",
                        "labels": {"bad key": "ok", "good": "-bad-value-", "a/b/c": "x"}}}
    err = rejected(twin, obj)
    text = err.message
    assert 'Invalid value: "bad key": name part must consist of alphanumeric characters' in text
    assert 'Invalid value: "-bad-value-": a valid label must be an empty string' in text
    assert "a qualified name must consist of alphanumeric characters" in text
    assert text.startswith('ConfigMap "cfg" is invalid: [')  # several errors print as a list


def test_pod_spec_rules(twin: Twin) -> None:
    bad = deployment("api")
    bad["spec"]["template"]["spec"] = {
        "volumes": [{"name": "data", "emptyDir": {}}],
        "containers": [
            {"name": "api", "ports": [{"containerPort": 70000}, {"containerPort": 80, "protocol": "HTTP"}],
             "resources": {"requests": {"cpu": "2", "memory": "-1"}, "limits": {"cpu": "1", "gpu": "1"}},
             "env": [{"name": "1BAD", "value": "x"}],
             "livenessProbe": {"periodSeconds": 5},
             "readinessProbe": {"httpGet": {"port": 8080}, "tcpSocket": {"port": 8080}},
             "volumeMounts": [{"name": "missing", "mountPath": "/x"}]},
            {"name": "api", "image": "nginx"},
        ],
    }
    found = causes(rejected(twin, bad))
    base = "spec.template.spec.containers"
    assert found[f"{base}[0].image"] == "Required value"
    assert found[f"{base}[1].name"] == 'Duplicate value: "api"'
    assert found[f"{base}[0].ports[0].containerPort"] == "Invalid value: 70000: must be between 1 and 65535, inclusive"
    assert found[f"{base}[0].ports[1].protocol"] == \
        'Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"'
    assert found[f"{base}[0].resources.requests"] == \
        'Invalid value: "2": must be less than or equal to cpu limit of 1'
    assert found[f"{base}[0].resources.limits[gpu]"] == \
        'Invalid value: "gpu": must be a standard resource type or fully qualified'
    assert found[f"{base}[0].resources.requests[memory]"] == \
        'Invalid value: "-1": must be greater than or equal to 0'
    assert "a valid environment variable name" in found[f"{base}[0].env[0].name"]
    assert found[f"{base}[0].livenessProbe"] == "Required value: must specify a handler type"
    assert found[f"{base}[0].readinessProbe.tcpSocket"] == "Forbidden: may not specify more than 1 handler type"
    assert found[f"{base}[0].volumeMounts[0].name"] == 'Not found: "missing"'


def test_containers_required_and_bad_quantity_is_400(twin: Twin) -> None:
    err = rejected(twin, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p0", "namespace": "default"},
                          "spec": {"containers": []}})
    assert causes(err) == {"spec.containers": "Required value"}
    err = rejected(twin, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1", "namespace": "default"},
                          "spec": {"containers": [{"name": "a", "image": "x",
                                                   "resources": {"limits": {"memory": "lots"}}}]}})
    assert err.code == 400
    assert "quantities must match the regular expression" in err.message


def test_selector_rules(twin: Twin) -> None:
    err = rejected(twin, deployment("nosel", selector=None))
    assert causes(err)["spec.selector"] == "Required value"
    mismatch = deployment("mismatch")
    mismatch["spec"]["selector"] = {"matchLabels": {"app": "other"}}
    err = rejected(twin, mismatch)
    assert causes(err)["spec.template.metadata.labels"] == \
        'Invalid value: map[string]string{"app":"mismatch"}: `selector` does not match template `labels`'
    err = rejected(twin, deployment("neg", replicas=-1))
    assert causes(err)["spec.replicas"] == "Invalid value: -1: must be greater than or equal to 0"
    never = deployment("never")
    never["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    err = rejected(twin, never)
    assert causes(err)["spec.template.spec.restartPolicy"] == 'Unsupported value: "Never": supported values: "Always"'


def test_deployment_selector_is_immutable(twin: Twin) -> None:
    twin.create(deployment("immut"))
    with pytest.raises(ApiError) as err:
        twin.patch("deployments", "default", "immut",
                   {"spec": {"selector": {"matchLabels": {"app": "x"}},
                             "template": {"metadata": {"labels": {"app": "x"}}}}})
    assert causes(err.value)["spec.selector"] == (
        'Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"x"}, '
        "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable")
    # mutable fields still change
    out = twin.patch("deployments", "default", "immut", {"spec": {"replicas": 3}})
    assert out["spec"]["replicas"] == 3


def test_pod_updates_only_change_images(twin: Twin) -> None:
    twin.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "solo", "namespace": "default"},
                 "spec": {"containers": [{"name": "a", "image": "nginx:1.27"}]}})
    out = twin.patch("pods", "default", "solo", {"spec": {"containers": [{"name": "a", "image": "nginx:1.28"}]}})
    assert out["spec"]["containers"][0]["image"] == "nginx:1.28"
    with pytest.raises(ApiError) as err:
        twin.patch("pods", "default", "solo",
                   {"spec": {"containers": [{"name": "a", "env": [{"name": "X", "value": "1"}]}]}})
    assert err.value.code == 422
    assert "spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`" in \
        err.value.message
    twin.patch("pods", "default", "solo", {"metadata": {"labels": {"debug": "true"}}})


def test_job_restart_policy_and_template_immutability(twin: Twin) -> None:
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "default"},
           "spec": {"template": {"spec": {"containers": [{"name": "a", "image": "busybox"}]}}}}
    err = rejected(twin, job)
    assert causes(err)["spec.template.spec.restartPolicy"] == \
        'Unsupported value: "Always": supported values: "OnFailure", "Never"'


def test_service_ports(twin: Twin) -> None:
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc", "namespace": "default"},
           "spec": {"type": "ClusterIP", "ports": [{"port": 0}, {"port": 80, "targetPort": 70000, "name": "http"}]}}
    found = causes(rejected(twin, svc))
    assert found["spec.ports[0].port"] == "Invalid value: 0: must be between 1 and 65535, inclusive"
    assert found["spec.ports[0].name"] == "Required value"
    assert found["spec.ports[1].targetPort"] == "Invalid value: 70000: must be between 1 and 65535, inclusive"
    err = rejected(twin, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "noports", "namespace": "default"},
                          "spec": {"selector": {"app": "x"}}})
    assert causes(err) == {"spec.ports": "Required value"}
    err = rejected(twin, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "typo", "namespace": "default"},
                          "spec": {"type": "Cluster", "ports": [{"port": 80}]}})
    assert 'supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"' in causes(err)["spec.type"]


def test_configmap_and_secret_keys(twin: Twin) -> None:
    err = rejected(twin, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "k", "namespace": "default"},
                          "data": {"a b": "1", "..x": "2"}})
    found = causes(err)
    assert "a valid config key must consist of alphanumeric characters" in found["data[a b]"]
    assert found["data[..x]"] == """Invalid value: "..x": must not start with '..'"""
    err = rejected(twin, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "default"},
                          "data": {"pw": "not base64!"}})
    assert err.code == 400 and "illegal base64 data at input byte" in err.message
    twin.create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "frozen", "namespace": "default"},
                 "data": {"pw": "c2VjcmV0"}, "immutable": True})
    with pytest.raises(ApiError) as exc:
        twin.patch("secrets", "default", "frozen", {"data": {"pw": "b3RoZXI="}})
    assert causes(exc.value)["data"] == "Forbidden: field is immutable when `immutable` is set"


def test_pvc_spec_is_immutable_except_requests(twin: Twin) -> None:
    twin.create({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                 "metadata": {"name": "data", "namespace": "default"},
                 "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}})
    twin.patch("persistentvolumeclaims", "default", "data",
               {"spec": {"resources": {"requests": {"storage": "2Gi"}}}})
    with pytest.raises(ApiError) as err:
        twin.patch("persistentvolumeclaims", "default", "data", {"spec": {"accessModes": ["ReadWriteMany"]}})
    assert "spec is immutable after creation except resources.requests" in err.value.message
    err2 = rejected(twin, {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                           "metadata": {"name": "nosize", "namespace": "default"},
                           "spec": {"accessModes": ["ReadWriteOnce"]}})
    assert causes(err2) == {"spec.resources[storage]": "Required value"}


def test_valid_objects_and_status_writes_pass(twin: Twin) -> None:
    twin.create(deployment("fine"))
    twin.advance(5)
    for pod in twin.list("pods", "default", label_selector="app=fine"):
        assert pod["metadata"]["name"].startswith("fine-")
    # the bootstrap add-ons (CoreDNS, kube-proxy) are valid
    assert twin.list("deployments", "kube-system")


def test_statefulset_mounts_may_name_claim_templates(twin: Twin) -> None:
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "default"},
           "spec": {"serviceName": "db", "replicas": 1, "selector": {"matchLabels": {"app": "db"}},
                    "template": {"metadata": {"labels": {"app": "db"}},
                                 "spec": {"containers": [{"name": "db", "image": "postgres:16",
                                                          "volumeMounts": [{"name": "data", "mountPath": "/d"}]}]}},
                    "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}}
    twin.create(sts)
    sts["metadata"]["name"] = "db2"
    sts["spec"]["volumeClaimTemplates"] = []
    assert causes(rejected(twin, sts))["spec.template.spec.containers[0].volumeMounts[0].name"] == 'Not found: "data"'
