"""Admission chain: LimitRanger, ServiceAccount, webhooks, Pod Security, ResourceQuota."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from sregym.errors import ApiError
from sregym.twin.admission.webhooks import (
    DEFAULTER_REPOSITORY,
    POLICY_REPOSITORY,
    rule_matches,
)
from sregym.twin.machinery.kinds import KindRegistry
from sregym.twin.machinery.store import Operation
from sregym.twin.twin import Twin

NS = "shop"


def pod(name: str, *, labels: dict[str, str] | None = None, resources: dict[str, Any] | None = None,
        security: dict[str, Any] | None = None, image: str = "nginx:1.27",
        **spec: Any) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "web", "image": image}
    if resources is not None:
        container["resources"] = resources
    if security is not None:
        container["securityContext"] = security
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NS, "labels": labels or {"app": "web"}},
            "spec": {"containers": [container], **spec}}


def deployment(name: str, replicas: int, resources: dict[str, Any] | None = None) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "web", "image": "nginx:1.27"}
    if resources is not None:
        container["resources"] = resources
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [container]}}}}


@pytest.fixture()
def twin() -> Twin:
    t = Twin(seed=3)
    t.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    t.create({"apiVersion": "v1", "kind": "ServiceAccount",
              "metadata": {"name": "default", "namespace": NS}})
    return t


def failed_create_messages(twin: Twin) -> list[str]:
    return [e["message"] for e in twin.event_list(NS, reason="FailedCreate")]


# ------------------------------------------------------------------ ResourceQuota
def memory_quota(twin: Twin, limit: str = "2Gi") -> None:
    twin.create({"apiVersion": "v1", "kind": "ResourceQuota",
                 "metadata": {"name": "compute", "namespace": NS},
                 "spec": {"hard": {"limits.memory": limit, "pods": "10"}}})


def test_quota_exceeded_rejects_pod_with_real_message(twin: Twin) -> None:
    memory_quota(twin)
    for i in range(3):
        twin.create(pod(f"web-{i}", resources={"limits": {"memory": "512Mi"}}))
    with pytest.raises(ApiError) as err:
        twin.create(pod("web-abc", resources={"limits": {"memory": "1Gi"}}))
    assert err.value.code == 403
    assert err.value.message == (
        'pods "web-abc" is forbidden: exceeded quota: compute, requested: limits.memory=1Gi, '
        "used: limits.memory=1536Mi, limited: limits.memory=2Gi")
    # A pod that fits is still admitted.
    twin.create(pod("web-small", resources={"limits": {"memory": "512Mi"}}))


def test_quota_requires_declared_resources(twin: Twin) -> None:
    memory_quota(twin)
    with pytest.raises(ApiError) as err:
        twin.create(pod("bare"))
    assert err.value.message == ('pods "bare" is forbidden: failed quota: compute: '
                                 "must specify limits.memory for: web")


def test_terminal_pods_do_not_count_and_status_is_published(twin: Twin) -> None:
    memory_quota(twin, "1Gi")
    twin.create(pod("done", resources={"limits": {"memory": "1Gi"}}))
    with pytest.raises(ApiError):
        twin.create(pod("next", resources={"limits": {"memory": "512Mi"}}))
    done = twin.get("pods", NS, "done")
    done["status"]["phase"] = "Succeeded"
    twin.store.update_status(done)
    twin.create(pod("next", resources={"limits": {"memory": "512Mi"}}))
    twin.advance(1)
    status = twin.get("resourcequotas", NS, "compute")["status"]
    assert status["hard"] == {"limits.memory": "1Gi", "pods": "10"}
    assert status["used"] == {"limits.memory": "512Mi", "pods": "1"}


def test_quota_counts_services_and_configmaps(twin: Twin) -> None:
    twin.create({"apiVersion": "v1", "kind": "ResourceQuota",
                 "metadata": {"name": "objects", "namespace": NS},
                 "spec": {"hard": {"configmaps": "1", "count/services": "0"}}})
    twin.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": NS}})
    with pytest.raises(ApiError) as err:
        twin.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b", "namespace": NS}})
    assert "exceeded quota: objects, requested: configmaps=1, used: configmaps=1, limited: configmaps=1" \
        in err.value.message
    with pytest.raises(ApiError):
        twin.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": NS},
                     "spec": {"ports": [{"port": 80}]}})


def test_quota_exceeded_gives_replicaset_failed_create(twin: Twin) -> None:
    memory_quota(twin, "1Gi")
    twin.create(deployment("web", 3, {"limits": {"memory": "512Mi"}}))
    twin.advance(5)
    pods = twin.list("pods", NS)
    assert len(pods) == 2
    messages = failed_create_messages(twin)
    assert messages, "the ReplicaSet should report FailedCreate"
    assert messages[0].startswith('Error creating: pods "web-')
    assert messages[0].endswith("is forbidden: exceeded quota: compute, requested: limits.memory=512Mi, "
                                "used: limits.memory=1Gi, limited: limits.memory=1Gi")


# -------------------------------------------------------------------- LimitRange
def test_limitrange_defaults_applied_and_annotated(twin: Twin) -> None:
    twin.create({"apiVersion": "v1", "kind": "LimitRange",
                 "metadata": {"name": "defaults", "namespace": NS},
                 "spec": {"limits": [{"type": "Container",
                                      "default": {"cpu": "500m", "memory": "256Mi"},
                                      "defaultRequest": {"cpu": "100m", "memory": "128Mi"}}]}})
    created = twin.create(pod("web-1"))
    resources = created["spec"]["containers"][0]["resources"]
    assert resources == {"limits": {"cpu": "500m", "memory": "256Mi"},
                         "requests": {"cpu": "100m", "memory": "128Mi"}}
    assert created["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == (
        "LimitRanger plugin set: cpu, memory request for container web; "
        "cpu, memory limit for container web")
    # An explicit limit is kept, and its request follows the limit, not the default request.
    explicit = twin.create(pod("web-2", resources={"limits": {"memory": "64Mi"}}))
    res = explicit["spec"]["containers"][0]["resources"]
    assert res["limits"] == {"memory": "64Mi", "cpu": "500m"}
    assert res["requests"]["memory"] == "64Mi"


def test_limitrange_defaults_reach_replicaset_pods(twin: Twin) -> None:
    twin.create({"apiVersion": "v1", "kind": "LimitRange",
                 "metadata": {"name": "defaults", "namespace": NS},
                 "spec": {"limits": [{"type": "Container", "default": {"memory": "300Mi"}}]}})
    twin.create(deployment("api", 2))
    twin.advance(3)
    pods = twin.list("pods", NS)
    assert len(pods) == 2
    assert all(p["spec"]["containers"][0]["resources"]["limits"]["memory"] == "300Mi" for p in pods)


def test_limitrange_max_rejects_with_real_message(twin: Twin) -> None:
    twin.create({"apiVersion": "v1", "kind": "LimitRange",
                 "metadata": {"name": "bounds", "namespace": NS},
                 "spec": {"limits": [{"type": "Container", "max": {"memory": "1Gi"}}]}})
    with pytest.raises(ApiError) as err:
        twin.create(pod("big", resources={"limits": {"memory": "2Gi"}}))
    assert err.value.code == 403
    assert err.value.message == ('pods "big" is forbidden: maximum memory usage per Container is 1Gi, '
                                 "but limit is 2Gi")
    # A pod without a limit gets max as its default limit (LimitRange defaulting) and passes.
    ok = twin.create(pod("small"))
    assert ok["spec"]["containers"][0]["resources"]["limits"]["memory"] == "1Gi"


def test_limitrange_ratio_and_min(twin: Twin) -> None:
    twin.create({"apiVersion": "v1", "kind": "LimitRange",
                 "metadata": {"name": "ratio", "namespace": NS},
                 "spec": {"limits": [{"type": "Container", "maxLimitRequestRatio": {"memory": "2"},
                                      "min": {"cpu": "50m"}}]}})
    with pytest.raises(ApiError) as err:
        twin.create(pod("r", resources={"requests": {"memory": "100Mi", "cpu": "10m"},
                                        "limits": {"memory": "400Mi"}}))
    assert err.value.message == (
        'pods "r" is forbidden: [minimum cpu usage per Container is 50m, but request is 10m, '
        "memory max limit to request ratio per Container is 2, but provided ratio is 4.000000]")


# ------------------------------------------------------------------ ServiceAccount
def test_missing_service_account_rejected(twin: Twin) -> None:
    with pytest.raises(ApiError) as err:
        twin.create(pod("p", serviceAccountName="builder"))
    assert err.value.message == ('pods "p" is forbidden: error looking up service account '
                                 'shop/builder: serviceaccount "builder" not found')


def test_token_volume_projected_and_mounted(twin: Twin) -> None:
    created = twin.create(pod("p"))
    spec = created["spec"]
    volume = next(v for v in spec["volumes"] if v["name"].startswith("kube-api-access-"))
    assert len(volume["name"]) == len("kube-api-access-") + 5
    sources = volume["projected"]["sources"]
    assert sources[0]["serviceAccountToken"]["path"] == "token"
    mount = spec["containers"][0]["volumeMounts"][0]
    assert mount == {"name": volume["name"], "readOnly": True,
                     "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}
    no_token = twin.create(pod("q", automountServiceAccountToken=False))
    assert not no_token["spec"].get("volumes")


# --------------------------------------------------------------------- Pod Security
def label_namespace(twin: Twin, level: str) -> None:
    twin.store.mutate("Namespace", None, NS, lambda ns: ns["metadata"]["labels"].update(
        {"pod-security.kubernetes.io/enforce": level}))


def test_psa_restricted_rejects_privileged_pod(twin: Twin) -> None:
    label_namespace(twin, "restricted")
    with pytest.raises(ApiError) as err:
        twin.create(pod("priv", security={"privileged": True}))
    assert err.value.code == 403
    assert err.value.message == (
        'pods "priv" is forbidden: violates PodSecurity "restricted:latest": '
        'privileged (container "web" must not set securityContext.privileged=true), '
        'allowPrivilegeEscalation != false (container "web" must set '
        "securityContext.allowPrivilegeEscalation=false), "
        'unrestricted capabilities (container "web" must set securityContext.capabilities.drop=["ALL"]), '
        'runAsNonRoot != true (pod or container "web" must set securityContext.runAsNonRoot=true), '
        'seccompProfile (pod or container "web" must set securityContext.seccompProfile.type to '
        '"RuntimeDefault" or "Localhost")')
    compliant = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]},
                 "runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}
    twin.create(pod("ok", security=compliant))


def test_psa_baseline_host_namespaces_and_hostpath(twin: Twin) -> None:
    label_namespace(twin, "baseline")
    bad = pod("host", hostNetwork=True,
              volumes=[{"name": "root", "hostPath": {"path": "/"}}])
    with pytest.raises(ApiError) as err:
        twin.create(bad)
    assert err.value.message == ('pods "host" is forbidden: violates PodSecurity "baseline:latest": '
                                 'host namespaces (hostNetwork=true), hostPath volumes (volume "root")')
    twin.create(pod("plain"))  # baseline allows an ordinary pod


# ------------------------------------------------------------------------ webhooks
def webhook_config(kind: str, name: str, service: str, path: str, policy: str,
                   namespace: str = "policy-system") -> dict[str, Any]:
    return {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
        "metadata": {"name": name},
        "webhooks": [{
            "name": name,
            "clientConfig": {"service": {"name": service, "namespace": namespace, "path": path}},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                       "resources": ["pods"]}],
            "failurePolicy": policy, "sideEffects": "None", "admissionReviewVersions": ["v1"],
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": NS}},
        }],
    }


def webhook_backend(twin: Twin, image: str, service: str, *, ready: bool = True,
                    env: list[dict[str, Any]] | None = None, ip: str = "10.244.1.50") -> None:
    """A webhook server pod + Service in policy-system; status set by hand (no kubelet needed)."""
    if twin.try_get("namespaces", None, "policy-system") is None:
        twin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "policy-system"}})
    twin.create({"apiVersion": "v1", "kind": "Service",
                 "metadata": {"name": service, "namespace": "policy-system"},
                 "spec": {"selector": {"app": service},
                          "ports": [{"port": 443, "targetPort": "https", "protocol": "TCP"}]}})
    server = {"apiVersion": "v1", "kind": "Pod",
              "metadata": {"name": f"{service}-0", "namespace": "policy-system", "labels": {"app": service}},
              "spec": {"containers": [{"name": "server", "image": image, "env": env or [],
                                       "ports": [{"name": "https", "containerPort": 8443}]}]}}
    created = twin.create(server)
    created["status"] = {"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}],
                         "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}
    twin.store.update_status(created)


WEBHOOK_ERROR = ('Internal error occurred: failed calling webhook "pod-policy.example.com": failed to '
                 'call webhook: Post "https://pod-policy-webhook.policy-system.svc:443/validate?timeout=10s": '
                 'no endpoints available for service "pod-policy-webhook"')


def test_validating_webhook_without_endpoints_blocks_pods(twin: Twin) -> None:
    twin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "policy-system"}})
    twin.create({"apiVersion": "v1", "kind": "Service",
                 "metadata": {"name": "pod-policy-webhook", "namespace": "policy-system"},
                 "spec": {"selector": {"app": "pod-policy-webhook"}, "ports": [{"port": 443}]}})
    twin.create(webhook_config("ValidatingWebhookConfiguration", "pod-policy.example.com",
                               "pod-policy-webhook", "/validate", "Fail"))
    with pytest.raises(ApiError) as err:
        twin.create(pod("blocked"))
    assert err.value.code == 500
    assert err.value.reason == "InternalError"
    assert err.value.message == WEBHOOK_ERROR
    # The ReplicaSet of a Deployment shows the same error in FailedCreate.
    twin.create(deployment("web", 2))
    twin.advance(3)
    assert not twin.list("pods", NS)
    assert f"Error creating: {WEBHOOK_ERROR}" in failed_create_messages(twin)


def test_webhook_not_ready_pod_counts_as_no_endpoints(twin: Twin) -> None:
    webhook_backend(twin, f"{POLICY_REPOSITORY}:v1.5.1", "pod-policy-webhook", ready=False)
    twin.create(webhook_config("ValidatingWebhookConfiguration", "pod-policy.example.com",
                               "pod-policy-webhook", "/validate", "Fail"))
    with pytest.raises(ApiError) as err:
        twin.create(pod("blocked"))
    assert err.value.message == WEBHOOK_ERROR


def test_webhooks_never_gate_the_benchmarks_hidden_namespaces(twin: Twin) -> None:
    # The load generator and chaos experiments live there: a problem's webhook must not stop them,
    # and its configuration must not have to name those namespaces (the agent can read it).
    twin.create(webhook_config("ValidatingWebhookConfiguration", "pod-policy.example.com",
                               "pod-policy-webhook", "/validate", "Fail"))
    for ns in ("sregym-system", "chaos-mesh"):
        twin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        hidden = {**pod("loadgen"), "metadata": {**pod("loadgen")["metadata"], "namespace": ns}}
        assert twin.create(hidden)["metadata"]["namespace"] == ns
    with pytest.raises(ApiError):
        twin.create(pod("still-blocked"))


def test_validating_webhook_ignore_lets_pods_through(twin: Twin) -> None:
    twin.create(webhook_config("ValidatingWebhookConfiguration", "pod-policy.example.com",
                               "pod-policy-webhook", "/validate", "Ignore"))
    assert twin.create(pod("through"))["metadata"]["name"] == "through"


def test_missing_webhook_service(twin: Twin) -> None:
    twin.create(webhook_config("ValidatingWebhookConfiguration", "pod-policy.example.com",
                               "pod-policy-webhook", "/validate", "Fail"))
    with pytest.raises(ApiError) as err:
        twin.create(pod("x"))
    assert err.value.message.endswith('/validate?timeout=10s": service "pod-policy-webhook" not found')


def test_policy_webhook_denies_pods_missing_label(twin: Twin) -> None:
    webhook_backend(twin, f"{POLICY_REPOSITORY}:v1.5.1", "pod-policy-webhook",
                    env=[{"name": "REQUIRED_LABELS", "value": "team"}])
    twin.create(webhook_config("ValidatingWebhookConfiguration", "pod-policy.example.com",
                               "pod-policy-webhook", "/validate", "Fail"))
    with pytest.raises(ApiError) as err:
        twin.create(pod("unlabelled"))
    assert err.value.code == 403
    assert err.value.message == ('admission webhook "pod-policy.example.com" denied the request: '
                                 "missing required label(s): team")
    twin.create(pod("labelled", labels={"app": "web", "team": "payments"}))


def test_policy_webhook_reads_mounted_configmap(twin: Twin) -> None:
    twin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "policy-system"}})
    twin.create({"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": {"name": "policy", "namespace": "policy-system"},
                 "data": {"policy.yaml": "requireLimits: [memory]\n"}})
    twin.create({"apiVersion": "v1", "kind": "Service",
                 "metadata": {"name": "pod-policy-webhook", "namespace": "policy-system"},
                 "spec": {"selector": {"app": "pp"}, "ports": [{"port": 443, "targetPort": 8443}]}})
    server = twin.create({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "pp-0", "namespace": "policy-system", "labels": {"app": "pp"}},
        "spec": {"containers": [{"name": "server", "image": f"{POLICY_REPOSITORY}:v1.4.0",
                                 "volumeMounts": [{"name": "policy", "mountPath": "/etc/pod-policy"}]}],
                 "volumes": [{"name": "policy", "configMap": {"name": "policy"}}]}})
    server["status"] = {"phase": "Running", "podIP": "10.244.2.9",
                        "conditions": [{"type": "Ready", "status": "True"}]}
    twin.store.update_status(server)
    twin.create(webhook_config("ValidatingWebhookConfiguration", "pod-policy.example.com",
                               "pod-policy-webhook", "/validate", "Fail"))
    with pytest.raises(ApiError) as err:
        twin.create(pod("nolimits"))
    assert 'container "web" must set resources.limits.memory' in err.value.message


def test_mutating_webhook_sets_memory_limits(twin: Twin) -> None:
    webhook_backend(twin, f"{DEFAULTER_REPOSITORY}:v1.0.0", "resource-defaulter",
                    env=[{"name": "DEFAULT_MEMORY_LIMIT", "value": "384Mi"},
                         {"name": "OVERRIDE", "value": "true"}])
    twin.create(webhook_config("MutatingWebhookConfiguration", "defaults.example.com",
                               "resource-defaulter", "/mutate", "Fail"))
    created = twin.create(pod("mutated", resources={"limits": {"memory": "1Gi"},
                                                    "requests": {"memory": "128Mi"}}))
    assert created["spec"]["containers"][0]["resources"]["limits"]["memory"] == "384Mi"
    fresh = twin.create(pod("fresh"))
    assert fresh["spec"]["containers"][0]["resources"]["limits"] == {"memory": "384Mi"}


def test_webhook_backed_by_non_webhook_image_fails(twin: Twin) -> None:
    webhook_backend(twin, "nginx:1.27", "pod-policy-webhook")
    twin.create(webhook_config("ValidatingWebhookConfiguration", "pod-policy.example.com",
                               "pod-policy-webhook", "/validate", "Fail"))
    with pytest.raises(ApiError) as err:
        twin.create(pod("x"))
    assert err.value.code == 500
    assert "failed calling webhook" in err.value.message


def test_webhook_namespace_selector_scopes_calls(twin: Twin) -> None:
    twin.create(webhook_config("ValidatingWebhookConfiguration", "pod-policy.example.com",
                               "pod-policy-webhook", "/validate", "Fail"))
    twin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}})
    twin.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "free", "namespace": "other"},
                 "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}})


def test_rule_matching_resources_and_subresources() -> None:
    kinds = KindRegistry()
    pods = kinds.by_kind("v1", "Pod")
    create = Operation("CREATE", pods, {}, None, namespace="a", name="p")
    status = Operation("UPDATE", pods, {}, {}, subresource="status", namespace="a", name="p")
    rule = {"operations": ["CREATE", "UPDATE"], "apiGroups": [""], "apiVersions": ["v1"]}
    assert rule_matches({**rule, "resources": ["pods"]}, create, "Equivalent")
    assert not rule_matches({**rule, "resources": ["pods"]}, status, "Equivalent")
    assert rule_matches({**rule, "resources": ["pods/status"]}, status, "Equivalent")
    assert rule_matches({**rule, "resources": ["*/*"]}, status, "Equivalent")
    assert not rule_matches({**rule, "resources": ["*"]}, status, "Equivalent")
    assert not rule_matches({**rule, "apiGroups": ["apps"], "resources": ["*"]}, create, "Equivalent")
    assert not rule_matches({**rule, "apiVersions": ["v2"], "resources": ["pods"]}, create, "Exact")


def test_mutating_patch_is_base64_jsonpatch() -> None:
    """The defaulter answers like a real server: base64 JSONPatch."""
    from sregym.twin.admission.webhooks import resource_defaulter

    t = Twin(seed=1)
    server_pod = {"metadata": {"name": "d", "namespace": "default"},
                  "spec": {"containers": [{"name": "s", "image": f"{DEFAULTER_REPOSITORY}:v0.9.2",
                                           "env": [{"name": "DEFAULT_CPU_LIMIT", "value": "1"}]}]}}
    request = {"uid": "u", "operation": "CREATE",
               "object": {"kind": "Pod", "metadata": {}, "spec": {"containers": [{"name": "a"}]}}}
    response = resource_defaulter(t, server_pod, request)
    assert response["patchType"] == "JSONPatch"
    ops = json.loads(base64.b64decode(response["patch"]))
    assert ops == [{"op": "add", "path": "/spec/containers/0/resources", "value": {"limits": {"cpu": "1"}}}]
