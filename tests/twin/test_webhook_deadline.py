"""Webhook timeouts add up against the API server's write deadline (34 s): mutating webhooks in
series, validating ones in parallel; a NetworkPolicy that drops the API server's traffic makes a
call hang for its whole timeout."""

from __future__ import annotations

from typing import Any

import pytest

from sregym.errors import ApiError
from sregym.twin.admission.webhooks import POLICY_REPOSITORY, WRITE_DEADLINE
from sregym.twin.twin import Twin

NS = "shop"
BACKEND_NS = "policy-system"
TIMEOUT_TEXT = "Timeout: request did not complete within requested timeout - context deadline exceeded"


@pytest.fixture()
def twin() -> Twin:
    t = Twin(seed=3)
    for name in (NS, BACKEND_NS):
        t.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    t.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": NS}})
    return t


def backend(twin: Twin, name: str, index: int, delay: float = 0.0) -> None:
    """A Ready policy server answering after `delay` seconds, behind Service `name`."""
    twin.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": BACKEND_NS},
                 "spec": {"selector": {"app": name}, "ports": [{"port": 443, "targetPort": 8443}]}})
    env = [{"name": "RESPONSE_DELAY_SECONDS", "value": str(delay)}] if delay else []
    created = twin.create({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": f"{name}-0", "namespace": BACKEND_NS, "labels": {"app": name, "tier": "policy"}},
        "spec": {"nodeName": "kind-worker", "containers": [{
            "name": "server", "image": f"{POLICY_REPOSITORY}:v1.5.1", "env": env,
            "ports": [{"containerPort": 8443}]}]}})
    ip = f"10.244.1.{60 + index}"
    created["status"] = {"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}], "hostIP": "172.18.0.3",
                         "conditions": [{"type": "Ready", "status": "True"}]}
    twin.store.update_status(created)


def webhooks(kind: str, timeouts: dict[str, int], policy: str = "Ignore") -> dict[str, Any]:
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
            "metadata": {"name": f"{kind.lower()}-chain"},
            "webhooks": [{"name": f"{name}.example.com",
                          "clientConfig": {"service": {"name": name, "namespace": BACKEND_NS, "path": "/check"}},
                          "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                                     "resources": ["pods"]}],
                          "failurePolicy": policy, "sideEffects": "None", "admissionReviewVersions": ["v1"],
                          "timeoutSeconds": seconds,
                          "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": NS}}}
                         for name, seconds in timeouts.items()]}


def a_pod(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
            "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}


CHAIN = {"pod-resource-validator": 12, "audit-log-enforcer": 8, "image-policy-checker": 11,
         "tenant-quota-validator": 9}


def test_the_deadline_is_the_api_servers_write_bound() -> None:
    assert WRITE_DEADLINE == 34.0


def test_slow_ignore_webhooks_together_time_the_write_out(twin: Twin) -> None:
    for index, name in enumerate(CHAIN):
        backend(twin, name, index, delay=60)
    twin.create(webhooks("MutatingWebhookConfiguration", CHAIN))
    with pytest.raises(ApiError) as err:
        twin.create(a_pod("blocked"))
    assert err.value.code == 504 and err.value.reason == "Timeout"
    assert err.value.message == TIMEOUT_TEXT


def test_the_same_webhooks_fit_when_their_timeouts_sum_below_the_deadline(twin: Twin) -> None:
    for index, name in enumerate(CHAIN):
        backend(twin, name, index, delay=60)
    twin.create(webhooks("MutatingWebhookConfiguration", dict.fromkeys(CHAIN, 8)))  # 32 s < 34 s
    assert twin.create(a_pod("through"))


def test_one_slow_fail_closed_webhook_names_itself(twin: Twin) -> None:
    backend(twin, "slow", 0, delay=60)
    twin.create(webhooks("MutatingWebhookConfiguration", {"slow": 10}, policy="Fail"))
    with pytest.raises(ApiError) as err:
        twin.create(a_pod("blocked"))
    assert err.value.code == 500
    assert err.value.message.endswith(
        'failed calling webhook "slow.example.com": failed to call webhook: Post '
        '"https://slow.policy-system.svc:443/check?timeout=10s": context deadline exceeded')


def test_validating_webhooks_run_in_parallel(twin: Twin) -> None:
    for index, name in enumerate(("first", "second")):
        backend(twin, name, index, delay=60)
    twin.create(webhooks("ValidatingWebhookConfiguration", {"first": 20, "second": 20}))
    assert twin.create(a_pod("through"))  # 20 s, not 40 s


def test_network_policy_without_an_api_server_allow_hangs_every_call(twin: Twin) -> None:
    for index, name in enumerate(CHAIN):
        backend(twin, name, index)  # fast servers: only the network makes them slow
    twin.create(webhooks("MutatingWebhookConfiguration", CHAIN))
    assert twin.create(a_pod("before"))
    twin.create({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                 "metadata": {"name": "default-deny-ingress", "namespace": BACKEND_NS},
                 "spec": {"podSelector": {}, "policyTypes": ["Ingress"]}})
    with pytest.raises(ApiError) as err:
        twin.create(a_pod("blocked"))
    assert err.value.message == TIMEOUT_TEXT
    # Allowing the control plane's address on the webhook port lets the calls through again.
    node = next(n for n in twin.list("nodes")
                if "node-role.kubernetes.io/control-plane" in n["metadata"].get("labels", {}))
    address = next(a["address"] for a in node["status"]["addresses"] if a["type"] == "InternalIP")
    twin.create({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                 "metadata": {"name": "allow-apiserver", "namespace": BACKEND_NS},
                 "spec": {"podSelector": {"matchLabels": {"tier": "policy"}}, "policyTypes": ["Ingress"],
                          "ingress": [{"from": [{"ipBlock": {"cidr": f"{address}/32"}}],
                                       "ports": [{"port": 8443}]}]}})
    assert twin.create(a_pod("after"))


def test_webhook_timeouts_above_thirty_seconds_are_rejected(twin: Twin) -> None:
    with pytest.raises(ApiError) as err:
        twin.create(webhooks("MutatingWebhookConfiguration", {"slow": 31}))
    assert err.value.code == 422
    assert "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds" \
        in err.value.message
