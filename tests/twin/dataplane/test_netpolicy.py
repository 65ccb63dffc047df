"""NetworkPolicy semantics: isolation, peers (pods, namespaces, ipBlock), ports, egress."""

from __future__ import annotations

from typing import Any

import pytest

from sregym.twin import Twin
from sregym.twin.dataplane.netpolicy import allowed, policies_selecting


def _pod(name: str, namespace: str, labels: dict[str, str], ip: str, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": namespace, "uid": f"{namespace}-{name}",
                         "labels": labels, "resourceVersion": "1"},
            "spec": {"nodeName": "kind-worker",
                     "containers": [{"name": "c", "image": "nginx",
                                     "ports": [{"name": "http", "containerPort": 8080},
                                               {"name": "metrics", "containerPort": 9090}]}], **spec},
            "status": {"podIP": ip, "hostIP": "172.18.0.3", "phase": "Running"}}


FRONTEND = _pod("frontend", "app", {"app": "frontend"}, "10.244.1.10")
GEO = _pod("geo", "app", {"app": "geo"}, "10.244.2.20")
OTHER = _pod("other", "app", {"app": "other"}, "10.244.3.30")
MONITOR = _pod("prom", "monitoring", {"app": "prometheus"}, "10.244.3.40")


def _policy(name: str, spec: dict[str, Any], namespace: str = "app") -> dict[str, Any]:
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}


@pytest.fixture
def twin() -> Twin:
    twin = Twin(seed=1)
    twin.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "app"}},
                {"apiVersion": "v1", "kind": "Namespace",
                 "metadata": {"name": "monitoring", "labels": {"team": "obs"}}}])
    return twin


def ok(twin: Twin, src: dict[str, Any] | None, dst: dict[str, Any], port: int = 8080, protocol: str = "TCP",
       src_ip: str = "") -> bool:
    return allowed(twin, src, src_ip or (src or {}).get("status", {}).get("podIP", ""), dst, port, protocol)


def test_no_policies_allow_everything(twin: Twin) -> None:
    assert ok(twin, FRONTEND, GEO) and ok(twin, None, GEO, src_ip="203.0.113.9")


def test_deny_all_ingress_isolates_selected_pods_only(twin: Twin) -> None:
    twin.apply(_policy("deny", {"podSelector": {"matchLabels": {"app": "geo"}}, "policyTypes": ["Ingress"]}))
    assert not ok(twin, FRONTEND, GEO)
    assert ok(twin, GEO, FRONTEND)  # egress not isolated, frontend not selected
    assert ok(twin, GEO, GEO)  # a pod always reaches itself
    assert ok(twin, None, GEO, src_ip="172.18.0.3")  # its node (kubelet probes)
    assert policies_selecting(twin, GEO) == ["deny"]


def test_allow_from_pod_selector_is_additive(twin: Twin) -> None:
    twin.apply(_policy("deny", {"podSelector": {}}))  # policyTypes default to Ingress
    twin.apply(_policy("allow-frontend", {"podSelector": {"matchLabels": {"app": "geo"}},
                                          "ingress": [{"from": [{"podSelector": {"matchLabels": {"app": "frontend"}}}]}]}))
    assert ok(twin, FRONTEND, GEO)
    assert not ok(twin, OTHER, GEO)
    assert not ok(twin, MONITOR, GEO)  # podSelector alone means the policy's namespace
    assert not ok(twin, GEO, FRONTEND)


def test_namespace_selector_and_combined_selector(twin: Twin) -> None:
    twin.apply(_policy("from-obs", {"podSelector": {"matchLabels": {"app": "geo"}},
                                    "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"team": "obs"}},
                                                           "podSelector": {"matchLabels": {"app": "grafana"}}}]}]}))
    assert not ok(twin, MONITOR, GEO)  # right namespace, wrong pod (AND semantics)
    twin.apply(_policy("from-obs", {"podSelector": {"matchLabels": {"app": "geo"}},
                                    "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"team": "obs"}}}]}]}))
    assert ok(twin, MONITOR, GEO) and not ok(twin, FRONTEND, GEO)


def test_ip_block_with_except(twin: Twin) -> None:
    twin.apply(_policy("ipblock", {"podSelector": {"matchLabels": {"app": "geo"}},
                                   "ingress": [{"from": [{"ipBlock": {"cidr": "10.244.0.0/16",
                                                                      "except": ["10.244.3.0/24"]}}]}]}))
    assert ok(twin, FRONTEND, GEO)
    assert not ok(twin, OTHER, GEO)  # 10.244.3.30 is excepted
    assert not ok(twin, None, GEO, src_ip="203.0.113.9")
    assert ok(twin, None, GEO, src_ip="10.244.9.9")


def test_ports_named_ranges_and_protocols(twin: Twin) -> None:
    twin.apply(_policy("ports", {"podSelector": {"matchLabels": {"app": "geo"}},
                                 "ingress": [{"ports": [{"port": "http"}, {"port": 7000, "endPort": 7010},
                                                        {"port": 53, "protocol": "UDP"}]}]}))
    assert ok(twin, FRONTEND, GEO, 8080)  # the named port resolves on the destination pod
    assert not ok(twin, FRONTEND, GEO, 9090)
    assert ok(twin, FRONTEND, GEO, 7005) and not ok(twin, FRONTEND, GEO, 7011)
    assert ok(twin, FRONTEND, GEO, 53, "UDP") and not ok(twin, FRONTEND, GEO, 53, "TCP")
    assert not ok(twin, FRONTEND, GEO, 0, "ICMP")  # rules with ports never match ping


def test_egress_checked_on_source(twin: Twin) -> None:
    twin.apply(_policy("egress", {"podSelector": {"matchLabels": {"app": "frontend"}},
                                  "policyTypes": ["Egress"],
                                  "egress": [{"to": [{"podSelector": {"matchLabels": {"app": "geo"}}}],
                                              "ports": [{"port": 8080}]}]}))
    assert ok(twin, FRONTEND, GEO, 8080)
    assert not ok(twin, FRONTEND, GEO, 9090)
    assert not ok(twin, FRONTEND, OTHER, 8080)
    assert ok(twin, OTHER, GEO, 9090)  # other pods are not isolated for egress
    # An `egress` section implies the Egress type even without policyTypes.
    twin.apply(_policy("implicit", {"podSelector": {"matchLabels": {"app": "other"}}, "egress": []}))
    assert not ok(twin, OTHER, GEO)
    # ...and the Ingress type is always implied, so `other` is isolated for ingress too.
    assert not ok(twin, FRONTEND, OTHER)


def test_ingress_and_egress_must_both_pass(twin: Twin) -> None:
    twin.apply(_policy("egress-open", {"podSelector": {"matchLabels": {"app": "frontend"}},
                                       "policyTypes": ["Egress"], "egress": [{}]}))
    twin.apply(_policy("geo-closed", {"podSelector": {"matchLabels": {"app": "geo"}},
                                      "policyTypes": ["Ingress"], "ingress": []}))
    assert not ok(twin, FRONTEND, GEO)
    assert ok(twin, FRONTEND, OTHER)


def test_host_network_pods_are_not_isolated(twin: Twin) -> None:
    host_pod = _pod("node-agent", "app", {"app": "geo"}, "172.18.0.3", hostNetwork=True)
    twin.apply(_policy("deny", {"podSelector": {}, "policyTypes": ["Ingress"]}))
    assert ok(twin, FRONTEND, host_pod)  # its ingress is never isolated
    assert not ok(twin, host_pod, OTHER, src_ip="172.18.0.5")  # ingress on `other` still applies
    assert not ok(twin, FRONTEND, OTHER)
    twin.apply(_policy("deny", {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}))
    assert not ok(twin, FRONTEND, host_pod)  # the source's egress isolation still applies
