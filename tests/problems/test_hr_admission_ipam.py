"""Hotel Reservation admission and IPAM problems, seen and fixed with real kubectl as the agent:
the webhook whose caBundle is stale, the webhooks whose timeouts add up past the API server's
deadline, and the exhausted Calico IP pool. The full check protocol of each problem (gold passes,
noop fails, recovery, same seed) runs with the registry-wide tests and `sregym check`."""

from __future__ import annotations

import json
from pathlib import Path

from sregym.oracles.mechanisms import classify
from sregym.problems.registry import PROBLEMS
from support.kube import serve_twin
from support.problem_runs import deployed

NS = "hotel-reservation"
TLS = "hotel-reservation/admission-webhook-tls-mismatch-v1"
RECOMMENDATION = "io.kompose.service=recommendation"


def test_problems_are_tagged_with_the_sregym_scenarios_they_reproduce() -> None:
    sources = {pid: PROBLEMS.get(pid).tags.sources for pid in (
        TLS, "hotel-reservation/pod-cidr-exhaustion-v1", "hotel-reservation/cumulative-admission-webhook-timeout-v1")}
    assert sources == {
        TLS: ("sregym:admission_webhook_tls_mismatch_hotel_reservation",),
        "hotel-reservation/pod-cidr-exhaustion-v1": ("sregym:pod_cidr_exhaustion_hotel_reservation",),
        "hotel-reservation/cumulative-admission-webhook-timeout-v1": (
            "sregym:cumulative_admission_webhook_timeout_hotel_reservation",)}
    assert classify("workload-pool ran out: No IPs available in pools") == {"ip_exhaustion"}


def test_stale_ca_bundle_blocks_recreation_until_the_agent_installs_the_right_ca(tmp_path: Path) -> None:
    cluster, run = deployed(TLS)
    run.inject()
    run.advance(30)
    assert not cluster.list("Pod", NS, label_selector=RECOMMENDATION)
    harness = serve_twin(cluster.twin, tmp_path)
    try:
        events = harness.ok("get", "events", "-n", NS, "--field-selector", "reason=FailedCreate")
        assert 'failed calling webhook "pod-policy.validation.k8s.io"' in events
        assert ("tls: failed to verify certificate: x509: certificate signed by unknown authority"
                in events)
        described = harness.ok("describe", "replicaset", "-n", NS, "-l", RECOMMENDATION)
        assert "FailedCreate" in described and "unknown authority" in described
        # The webhook server itself is healthy: the break is in the trust configuration.
        assert "Running" in harness.ok("get", "pods", "-n", "policy-system")
        # The fix an SRE makes: trust the CA that signed the serving certificate (cert-manager's ca.crt).
        secret = json.loads(harness.ok("get", "secret", "pod-policy-webhook-tls", "-n", "policy-system",
                                       "-o", "json"))
        patch = [{"op": "replace", "path": "/webhooks/0/clientConfig/caBundle", "value": secret["data"]["ca.crt"]}]
        harness.ok("patch", "validatingwebhookconfiguration", "pod-policy-validation", "--type=json",
                   "-p", json.dumps(patch))
    finally:
        harness.server.stop()
    run.advance(60)
    pods = cluster.list("Pod", NS, label_selector=RECOMMENDATION)
    assert pods and all(p["status"]["phase"] == "Running" for p in pods)


IPAM = "hotel-reservation/pod-cidr-exhaustion-v1"
FRONTEND = "io.kompose.service=frontend"


def test_exhausted_pool_leaves_rescheduled_pods_without_an_address_until_the_pool_is_back(
        tmp_path: Path) -> None:
    cluster, run = deployed(IPAM)
    untouched = {p["metadata"]["name"]: p["status"]["podIP"]
                 for p in cluster.list("Pod", NS, label_selector="io.kompose.service=geo")}
    run.inject()
    run.advance(60)
    harness = serve_twin(cluster.twin, tmp_path)
    try:
        pods = harness.ok("get", "pods", "-n", NS, "-l", FRONTEND)
        assert "ContainerCreating" in pods
        described = harness.ok("describe", "pod", "-n", NS, "-l", FRONTEND)
        assert "FailedCreatePodSandBox" in described
        events = harness.ok("get", "events", "-n", NS, "--field-selector", "reason=FailedCreatePodSandBox")
        assert ('plugin type="calico" failed (add): failed to request IPv4 addresses: Assigned 0 out of 1 '
                "requested IPv4 addresses; No IPs available in pools: [192.168.254.0/26]") in events
        pools = json.loads(harness.ok("get", "ippools.crd.projectcalico.org", "-o", "json"))["items"]
        assert {p["metadata"]["name"]: p["spec"]["disabled"] for p in pools} == {
            "default-ipv4-ippool": True, "workload-pool": False}
        # Pods that were running keep their addresses.
        assert {p["metadata"]["name"]: p["status"]["podIP"]
                for p in cluster.list("Pod", NS, label_selector="io.kompose.service=geo")} == untouched
        harness.ok("patch", "ippool", "default-ipv4-ippool", "--type=merge", "-p", '{"spec":{"disabled":false}}')
    finally:
        harness.server.stop()
    run.advance(90)
    pods = cluster.list("Pod", NS, label_selector=FRONTEND)
    assert pods and all(p["status"]["phase"] == "Running" and p["status"]["podIP"].startswith("10.244.")
                        for p in pods)


TIMEOUT = "hotel-reservation/cumulative-admission-webhook-timeout-v1"


def test_webhook_timeouts_add_up_past_the_deadline_until_the_api_server_is_allowed_in(tmp_path: Path) -> None:
    cluster, run = deployed(TIMEOUT)
    run.inject()
    run.advance(30)
    assert not cluster.list("Pod", NS, label_selector=RECOMMENDATION)
    harness = serve_twin(cluster.twin, tmp_path)
    try:
        events = harness.ok("get", "events", "-n", NS, "--field-selector", "reason=FailedCreate")
        assert ("Error creating: Timeout: request did not complete within requested timeout - context "
                "deadline exceeded") in events
        # Creating a pod by hand times out the same way (504 from the API server).
        refused = harness.kubectl("run", "probe", "-n", NS, "--image=busybox:1.36", "--restart=Never")
        assert refused.returncode != 0
        assert "request did not complete within requested timeout" in refused.stderr
        configs = harness.ok("get", "mutatingwebhookconfigurations", "-o",
                             "jsonpath={range .items[*]}{.webhooks[0].timeoutSeconds} {end}")
        assert sorted(int(t) for t in configs.split()) == [8, 9, 11, 12]
        assert "Running" in harness.ok("get", "pods", "-n", "policy-system")
        # The fix an SRE makes: allow the API server (host network, node addresses) in on 8443.
        allow = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                 "metadata": {"name": "allow-apiserver-webhooks", "namespace": "policy-system"},
                 "spec": {"podSelector": {"matchLabels": {"tier": "compliance"}}, "policyTypes": ["Ingress"],
                          "ingress": [{"from": [{"ipBlock": {"cidr": "172.18.0.0/16"}}], "ports": [{"port": 8443}]}]}}
        harness.ok("apply", "-f", "-", input=json.dumps(allow))
    finally:
        harness.server.stop()
    run.advance(60)
    pods = cluster.list("Pod", NS, label_selector=RECOMMENDATION)
    assert pods and all(p["status"]["phase"] == "Running" for p in pods)
