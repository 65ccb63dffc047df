"""Webhook calls verify the backend's serving certificate against `clientConfig.caBundle`."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from sregym.errors import ApiError
from sregym.faults.certificates import certificate_authority, service_dns_names, serving_certificate
from sregym.twin.admission.webhook_tls import verify
from sregym.twin.admission.webhooks import POLICY_REPOSITORY
from sregym.twin.twin import Twin

NS = "shop"
SVC, SVC_NS = "pod-policy-webhook", "policy-system"
URL = f"https://{SVC}.{SVC_NS}.svc:443/validate?timeout=10s"
CURRENT = certificate_authority("test-current", "pod-policy-webhook-ca")
STALE = certificate_authority("test-stale", "pod-policy-webhook-ca")
SERVING = serving_certificate(CURRENT, service_dns_names(SVC, SVC_NS))


@pytest.fixture()
def twin() -> Twin:
    t = Twin(seed=3)
    t.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    t.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": NS}})
    return t


def backend(twin: Twin, serving: Any = SERVING) -> None:
    """A Ready webhook server pod that mounts its TLS Secret, and its Service."""
    twin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": SVC_NS}})
    twin.create(serving.secret("pod-policy-webhook-tls", SVC_NS))
    twin.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": SVC, "namespace": SVC_NS},
                 "spec": {"selector": {"app": SVC}, "ports": [{"port": 443, "targetPort": "https"}]}})
    created = twin.create({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": f"{SVC}-0", "namespace": SVC_NS, "labels": {"app": SVC}},
        "spec": {"containers": [{"name": "server", "image": f"{POLICY_REPOSITORY}:v1.5.1",
                                 "ports": [{"name": "https", "containerPort": 8443}],
                                 "volumeMounts": [{"name": "tls", "mountPath": "/etc/webhook/certs"}]}],
                 "volumes": [{"name": "tls", "secret": {"secretName": "pod-policy-webhook-tls"}}]}})
    created["status"] = {"phase": "Running", "podIP": "10.244.1.50", "podIPs": [{"ip": "10.244.1.50"}],
                         "conditions": [{"type": "Ready", "status": "True"}]}
    twin.store.update_status(created)


def webhook(ca_bundle: str | None, policy: str = "Fail") -> dict[str, Any]:
    client: dict[str, Any] = {"service": {"name": SVC, "namespace": SVC_NS, "path": "/validate"}}
    if ca_bundle is not None:
        client["caBundle"] = ca_bundle
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "pod-policy"},
            "webhooks": [{"name": "pod-policy.example.com", "clientConfig": client,
                          "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                                     "resources": ["pods"]}],
                          "failurePolicy": policy, "sideEffects": "None", "admissionReviewVersions": ["v1"],
                          "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": NS}}}]}


def a_pod(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
            "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}


def test_certificates_are_deterministic() -> None:
    again = serving_certificate(certificate_authority("test-current", "pod-policy-webhook-ca"),
                                service_dns_names(SVC, SVC_NS))
    assert again.cert_pem == SERVING.cert_pem and again.key_pem == SERVING.key_pem
    assert STALE.cert_pem != CURRENT.cert_pem


def test_matching_ca_bundle_lets_pods_through(twin: Twin) -> None:
    backend(twin)
    twin.create(webhook(CURRENT.bundle))
    assert twin.create(a_pod("ok"))["metadata"]["name"] == "ok"


def test_stale_ca_bundle_rejects_pod_create_with_x509_error(twin: Twin) -> None:
    backend(twin)
    twin.create(webhook(STALE.bundle))
    with pytest.raises(ApiError) as err:
        twin.create(a_pod("blocked"))
    assert err.value.code == 500
    assert err.value.message == (
        'Internal error occurred: failed calling webhook "pod-policy.example.com": failed to call webhook: '
        f'Post "{URL}": tls: failed to verify certificate: x509: certificate signed by unknown authority')


def test_stale_ca_bundle_with_ignore_fails_open(twin: Twin) -> None:
    backend(twin)
    twin.create(webhook(STALE.bundle, policy="Ignore"))
    assert twin.create(a_pod("through"))


def test_fixing_the_bundle_recovers_replicaset_creates(twin: Twin) -> None:
    backend(twin)
    twin.create(webhook(STALE.bundle))
    twin.create({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": NS},
                 "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                          "template": {"metadata": {"labels": {"app": "web"}},
                                       "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}})
    twin.advance(3)
    assert not twin.list("pods", NS)
    messages = [e["message"] for e in twin.event_list(NS, reason="FailedCreate")]
    assert any("x509: certificate signed by unknown authority" in m for m in messages)
    config = twin.get("validatingwebhookconfigurations", None, "pod-policy")
    config["webhooks"][0]["clientConfig"]["caBundle"] = CURRENT.bundle
    twin.update(config)
    twin.advance(15)
    assert len(twin.list("pods", NS)) == 1


def test_hostname_and_expiry_are_checked_like_go() -> None:
    wrong_host = serving_certificate(CURRENT, ("other.policy-system.svc",))
    now = dt.datetime(2026, 1, 5, tzinfo=dt.UTC).timestamp()
    assert verify(CURRENT.bundle, wrong_host.cert_pem.decode(), f"{SVC}.{SVC_NS}.svc", now) == (
        "tls: failed to verify certificate: x509: certificate is valid for other.policy-system.svc, "
        f"not {SVC}.{SVC_NS}.svc")
    expired = serving_certificate(CURRENT, service_dns_names(SVC, SVC_NS),
                                  not_after=dt.datetime(2025, 6, 1, tzinfo=dt.UTC))
    assert verify(CURRENT.bundle, expired.cert_pem.decode(), f"{SVC}.{SVC_NS}.svc", now) == (
        "tls: failed to verify certificate: x509: certificate has expired or is not yet valid: "
        "current time 2026-01-05T00:00:00Z is after 2025-06-01T00:00:00Z")
    assert verify(CURRENT.bundle, SERVING.cert_pem.decode(), f"{SVC}.{SVC_NS}.svc", now) is None
    assert verify("bm90IGEgcGVt", SERVING.cert_pem.decode(), "x", now).startswith("unable to load root")
