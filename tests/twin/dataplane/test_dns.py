"""Cluster DNS from a pod's view: dnsPolicy, search paths, CoreDNS health, Corefile variants."""

from __future__ import annotations

from typing import Any

import pytest

from sregym.twin import Twin
from sregym.twin.dataplane.dns import (
    candidate_names,
    corefile_errors,
    parse_corefile,
    parse_resolv_conf,
    resolve_name,
)
from sregym.twin.topology import COREFILE

APP = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: geo, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: geo}}
  template:
    metadata: {labels: {app: geo}}
    spec:
      containers: [{name: geo, image: nginx:1.27, ports: [{containerPort: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: geo, namespace: default}
spec: {selector: {app: geo}, ports: [{port: 8083, targetPort: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {clusterIP: None, selector: {app: web}, ports: [{port: 80}]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web, namespace: default}
spec:
  serviceName: web
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx:1.27, ports: [{containerPort: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: ext, namespace: default}
spec: {type: ExternalName, externalName: example.com}
---
apiVersion: v1
kind: Namespace
metadata: {name: other}
"""


@pytest.fixture(scope="module")
def base() -> Twin:
    twin = Twin(seed=5)
    twin.apply(APP)
    twin.advance(40)
    return twin


def _pod(namespace: str = "default", **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "client", "namespace": namespace, "uid": f"uid-{namespace}",
                         "labels": {"app": "client"}},
            "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec},
            "status": {"podIP": "10.244.1.77", "phase": "Running"}}


def _set_corefile(twin: Twin, text: str) -> None:
    def edit(cm: dict[str, Any]) -> None:
        cm["data"]["Corefile"] = text

    twin.store.mutate("ConfigMap", "kube-system", "coredns", edit)


def test_cluster_first_resolves_services_via_search_path(base: Twin) -> None:
    answer = resolve_name(base, _pod(), "geo")
    service_ip = base.get("Service", "default", "geo")["spec"]["clusterIP"]
    assert answer.ok and answer.ips == (service_ip,)
    assert answer.fqdn == "geo.default.svc.cluster.local"
    assert answer.server == "10.96.0.10"
    # Another namespace only through `name.namespace` or the FQDN.
    assert resolve_name(base, _pod("other"), "geo").error == "NXDOMAIN"
    assert resolve_name(base, _pod("other"), "geo.default").ips == (service_ip,)
    assert resolve_name(base, _pod("other"), "geo.default.svc.cluster.local.").ips == (service_ip,)


def test_missing_name_is_nxdomain_with_go_message(base: Twin) -> None:
    answer = resolve_name(base, _pod(), "gepo")
    assert not answer.ok and answer.error == "NXDOMAIN"
    assert answer.message == "lookup gepo on 10.96.0.10:53: no such host"
    assert answer.tried[0] == "gepo.default.svc.cluster.local" and answer.tried[-1] == "gepo"


def test_ndots_orders_candidates() -> None:
    config = parse_resolv_conf("search default.svc.cluster.local svc.cluster.local cluster.local\n"
                               "nameserver 10.96.0.10\noptions ndots:5\n")
    assert candidate_names("geo", config)[0] == "geo.default.svc.cluster.local."
    config1 = parse_resolv_conf("search a.b\nnameserver 10.96.0.10\noptions ndots:1\n")
    assert candidate_names("example.com", config1) == ["example.com.", "example.com.a.b."]


def test_headless_statefulset_externalname_and_pod_records(base: Twin) -> None:
    pods = sorted(p["status"]["podIP"] for p in base.store.scan("Pod", "default")
                  if p["metadata"]["labels"].get("app") == "web")
    assert len(pods) == 2
    headless = resolve_name(base, _pod(), "web")
    assert sorted(headless.ips) == pods
    web0 = base.get("Pod", "default", "web-0")["status"]["podIP"]
    assert resolve_name(base, _pod(), "web-0.web.default.svc.cluster.local").ips == (web0,)
    assert resolve_name(base, _pod(), "web-0.web").ips == (web0,)
    ext = resolve_name(base, _pod(), "ext")
    assert ext.ok and ext.cname == "example.com" and ext.ips == ("93.184.215.14",)
    assert resolve_name(base, _pod(), "10-244-1-5.default.pod.cluster.local").ips == ("10.244.1.5",)
    ptr = resolve_name(base, _pod(), "10.96.0.10", record="PTR")
    assert ptr.names == ("kube-dns.kube-system.svc.cluster.local",)


def test_external_names_are_forwarded_and_non_authoritative(base: Twin) -> None:
    answer = resolve_name(base, _pod(), "google.com")
    assert answer.ok and not answer.authoritative and answer.ips == ("142.250.185.78",)
    assert resolve_name(base, _pod(), "no-such-site.example").error == "NXDOMAIN"


def test_wrong_dns_policy_breaks_cluster_names() -> None:
    twin = Twin(seed=5)
    twin.apply(APP)
    twin.advance(20)
    default_policy = _pod(dnsPolicy="Default")
    assert resolve_name(twin, default_policy, "geo").error == "NXDOMAIN"
    assert resolve_name(twin, default_policy, "github.com").ok  # the node resolver still works
    none_policy = _pod(dnsPolicy="None", dnsConfig={"nameservers": ["8.8.8.8"]})
    answer = resolve_name(twin, none_policy, "geo")
    assert answer.error == "NXDOMAIN" and answer.message == "lookup geo on 8.8.8.8:53: no such host"
    unreachable = _pod(dnsPolicy="None", dnsConfig={"nameservers": ["10.1.2.3"]})
    assert resolve_name(twin, unreachable, "geo").error == "timeout"


def test_coredns_scaled_to_zero_times_out_cluster_wide() -> None:
    twin = Twin(seed=5)
    twin.apply(APP)
    twin.advance(20)
    assert resolve_name(twin, _pod(), "geo").ok
    twin.patch("Deployment", "kube-system", "coredns", {"spec": {"replicas": 0}})
    twin.advance(40)
    answer = resolve_name(twin, _pod(), "geo")
    assert answer.error == "timeout"
    assert answer.message.startswith("lookup geo on 10.96.0.10:53: read udp 10.244.1.77:")
    assert answer.message.endswith("->10.96.0.10:53: i/o timeout")
    assert answer.latency_ms >= 4 * 10_000  # four candidates × timeout:5 × attempts:2
    twin.patch("Deployment", "kube-system", "coredns", {"spec": {"replicas": 2}})
    twin.advance(30)
    assert resolve_name(twin, _pod(), "geo").ok


def test_template_nxdomain_for_one_service_only() -> None:
    twin = Twin(seed=5)
    twin.apply(APP)
    twin.advance(20)
    corefile = COREFILE.replace("    ready\n", "    ready\n"
                                "    template IN A cluster.local {\n"
                                "       match \"^geo[.]default[.]svc[.]cluster[.]local[.]$\"\n"
                                "       rcode NXDOMAIN\n"
                                "       fallthrough\n"
                                "    }\n")
    assert corefile_errors(corefile) == []
    _set_corefile(twin, corefile)
    twin.advance(1)
    assert resolve_name(twin, _pod(), "geo").error == "NXDOMAIN"
    assert resolve_name(twin, _pod(), "ext").ok  # other names fall through to kubernetes


def test_template_answer_and_rewrite_and_hosts() -> None:
    twin = Twin(seed=5)
    twin.apply(APP)
    twin.advance(20)
    corefile = COREFILE.replace("    ready\n", "    ready\n"
                                "    rewrite name geo.default.svc.cluster.local ext.default.svc.cluster.local\n"
                                "    hosts {\n       10.9.9.9 legacy-db.internal\n       fallthrough\n    }\n"
                                "    template IN A fake.test {\n"
                                "       match ^(?P<x>[a-z]+)[.]fake[.]test[.]$\n"
                                "       answer \"{{ .Name }} 60 IN A 10.0.0.42\"\n    }\n")
    _set_corefile(twin, corefile)
    twin.advance(1)
    pod = _pod()
    assert resolve_name(twin, pod, "geo").ips == ("93.184.215.14",)  # rewritten to the ExternalName
    assert resolve_name(twin, pod, "legacy-db.internal").ips == ("10.9.9.9",)
    assert resolve_name(twin, pod, "abc.fake.test").ips == ("10.0.0.42",)
    assert resolve_name(twin, pod, "123.fake.test").error == "NXDOMAIN"  # no match, no fallthrough


def test_broken_corefile_reports_errors_and_keeps_last_good_config() -> None:
    twin = Twin(seed=5)
    twin.apply(APP)
    twin.advance(20)
    assert resolve_name(twin, _pod(), "geo").ok
    broken = COREFILE.replace("    ready\n", "    ready\n    kubernetess cluster.local\n")
    errors = corefile_errors(broken)
    assert errors and "Unknown directive 'kubernetess'" in errors[0]
    assert corefile_errors(".:53 {\n    forward\n}\n") == [
        "/etc/coredns/Corefile:2 - Error during parsing: Wrong argument count or unexpected line ending after 'forward'"]
    assert corefile_errors(".:53 {\n    errors\n") and parse_corefile(COREFILE).blocks
    _set_corefile(twin, broken)
    twin.advance(1)
    assert resolve_name(twin, _pod(), "geo").ok  # the reload plugin refused the bad file


def test_corefile_without_kubernetes_plugin_forwards_cluster_names_upstream() -> None:
    twin = Twin(seed=5)
    twin.apply(APP)
    twin.advance(20)
    _set_corefile(twin, ".:53 {\n    errors\n    forward . /etc/resolv.conf\n    cache 30\n}\n")
    twin.advance(1)
    assert resolve_name(twin, _pod(), "geo").error == "NXDOMAIN"
    assert resolve_name(twin, _pod(), "example.com").ok


def test_egress_policy_blocking_dns_times_out() -> None:
    twin = Twin(seed=5)
    twin.apply(APP)
    twin.advance(20)
    twin.apply({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                "metadata": {"name": "deny-egress", "namespace": "default"},
                "spec": {"podSelector": {"matchLabels": {"app": "client"}}, "policyTypes": ["Egress"]}})
    assert resolve_name(twin, _pod(), "geo").error == "timeout"
    twin.apply({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                "metadata": {"name": "allow-dns", "namespace": "default"},
                "spec": {"podSelector": {}, "policyTypes": ["Egress"],
                         "egress": [{"to": [{"namespaceSelector": {"matchLabels": {
                             "kubernetes.io/metadata.name": "kube-system"}}}],
                             "ports": [{"port": 53, "protocol": "UDP"}]}]}})
    assert resolve_name(twin, _pod(), "geo").ok


def test_dns_chaos_error_and_random() -> None:
    twin = Twin(seed=5)
    twin.apply(APP)
    twin.advance(20)

    class Chaos:
        def __init__(self) -> None:
            self.action: str | None = None

        def dns(self, pod: dict[str, Any], name: str) -> str | None:
            return self.action if name.startswith("geo.") else None

    chaos = Chaos()
    twin.services.chaos = chaos
    chaos.action = "error"
    answer = resolve_name(twin, _pod(), "geo")
    assert answer.error == "SERVFAIL" and answer.message.endswith("server misbehaving")
    chaos.action = "random"
    twin.advance(1)
    random_ip = resolve_name(twin, _pod(), "geo").ips[0]
    assert random_ip != twin.get("Service", "default", "geo")["spec"]["clusterIP"]
    assert resolve_name(twin, _pod(), "ext").ok  # other names unaffected


def test_hosts_file_and_host_aliases(base: Twin) -> None:
    pod = _pod(hostAliases=[{"ip": "10.1.1.1", "hostnames": ["legacy"]}])
    assert resolve_name(base, pod, "legacy").ips == ("10.1.1.1",)
    assert resolve_name(base, pod, "legacy", use_hosts=False).error == "NXDOMAIN"
