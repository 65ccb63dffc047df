"""The cluster a fresh twin starts with: nodes, system namespaces and kube-system add-ons.

It mirrors a kind cluster (one control-plane node, three workers) so what an agent sees on
`kubectl get nodes,pods -A` is what it would see on the benchmark's usual kind setup.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

KUBERNETES_VERSION = "v1.32.2"
CLUSTER_DNS_IP = "10.96.0.10"
CLUSTER_DOMAIN = "cluster.local"
SERVICE_CIDR = "10.96.0.0/12"
CLUSTER_NAME = "kind"  # kind's default cluster name: nodes kind-control-plane, kind-worker, ...

COREFILE = """.:53 {
    errors
    health {
       lameduck 5s
    }
    ready
    kubernetes cluster.local in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    prometheus :9153
    forward . /etc/resolv.conf {
       max_concurrent 1000
    }
    cache 30
    loop
    reload
    loadbalance
}
"""


@dataclass(frozen=True)
class NodeSpec:
    name: str
    cpu: str = "4"
    memory: str = "16Gi"
    pods: int = 110
    control_plane: bool = False
    labels: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Topology:
    nodes: tuple[NodeSpec, ...]

    @classmethod
    def default(cls, workers: int = 3) -> Topology:
        nodes = [NodeSpec(f"{CLUSTER_NAME}-control-plane", control_plane=True)]
        for i in range(workers):
            nodes.append(NodeSpec(f"{CLUSTER_NAME}-worker" + (str(i + 1) if i else "")))
        return cls(tuple(nodes))


def node_cidr_mask(nodes: int) -> int:
    """The per-node pod range's prefix length (kube-controller-manager's `--node-cidr-mask-size`)
    that fits `nodes` ranges into the cluster's 10.244.0.0/16: kind's /24 up to 256 nodes, then
    smaller ranges (a 1,000-node cluster gets /26, 62 pod addresses per node)."""
    mask = 24
    while (1 << (mask - 16)) < nodes and mask < 30:
        mask += 1
    return mask


def pod_cidr(index: int, mask: int = 24) -> str:
    """Node `index`'s pod range: the index-th /`mask` block of 10.244.0.0/16."""
    offset = index << (32 - mask)
    return f"10.244.{(offset >> 8) & 0xFF}.{offset & 0xFF}/{mask}"


def node_ip(index: int) -> str:
    """Node `index`'s address on kind's Docker network (172.18.0.0/16; .0.1 is the gateway)."""
    host = index + 2
    return f"172.18.{host >> 8}.{host & 0xFF}"


def _memory_ki(memory: str) -> str:
    from sregym.twin.machinery.quantity import memory_bytes

    return f"{memory_bytes(memory) // 1024}Ki"


def node_object(spec: NodeSpec, index: int, now: str, cidr_mask: int = 24) -> dict[str, Any]:
    labels = {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": spec.name,
        "kubernetes.io/os": "linux",
        **spec.labels,
    }
    taints = []
    if spec.control_plane:
        labels["node-role.kubernetes.io/control-plane"] = ""
        labels["node.kubernetes.io/exclude-from-external-load-balancers"] = ""
        taints.append({"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"})
    capacity = {"cpu": spec.cpu, "ephemeral-storage": "102626232Ki", "hugepages-1Gi": "0",
                "hugepages-2Mi": "0", "memory": _memory_ki(spec.memory), "pods": str(spec.pods)}
    conditions = [
        ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
        ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
        ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
    ]
    node: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": spec.name,
            "labels": labels,
            "annotations": {
                "kubeadm.alpha.kubernetes.io/cri-socket": "unix:///run/containerd/containerd.sock",
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
        },
        "spec": {
            "podCIDR": pod_cidr(index, cidr_mask),
            "podCIDRs": [pod_cidr(index, cidr_mask)],
            "providerID": f"kind://docker/{CLUSTER_NAME}/{spec.name}",
        },
        "status": {
            "capacity": capacity,
            "allocatable": dict(capacity),
            "conditions": [
                {"type": t, "status": s, "reason": r, "message": m,
                 "lastHeartbeatTime": now, "lastTransitionTime": now}
                for t, s, r, m in conditions
            ],
            "addresses": [{"type": "InternalIP", "address": node_ip(index)},
                          {"type": "Hostname", "address": spec.name}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "architecture": "amd64",
                "bootID": "",
                "containerRuntimeVersion": "containerd://1.7.24",
                "kernelVersion": "6.1.0-28-amd64",
                "kubeProxyVersion": KUBERNETES_VERSION,
                "kubeletVersion": KUBERNETES_VERSION,
                "machineID": "",
                "operatingSystem": "linux",
                "osImage": "Debian GNU/Linux 12 (bookworm)",
                "systemUUID": "",
            },
            "images": [],
        },
    }
    if taints:
        node["spec"]["taints"] = taints
    return node


def namespace_object(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}},
            "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}


def system_objects() -> list[dict[str, Any]]:
    """kube-system add-ons and cluster-wide defaults, as kubeadm + kind install them."""
    coredns_labels = {"k8s-app": "kube-dns"}
    return [
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": "coredns", "namespace": "kube-system"},
         "data": {"Corefile": COREFILE}},
        {"apiVersion": "v1", "kind": "ServiceAccount",
         "metadata": {"name": "coredns", "namespace": "kube-system"}},
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": "coredns", "namespace": "kube-system", "labels": coredns_labels},
         "spec": {
             "replicas": 2,
             "selector": {"matchLabels": coredns_labels},
             "strategy": {"type": "RollingUpdate",
                          "rollingUpdate": {"maxUnavailable": 1, "maxSurge": "25%"}},
             "template": {
                 "metadata": {"labels": coredns_labels},
                 "spec": {
                     "priorityClassName": "system-cluster-critical",
                     "serviceAccountName": "coredns",
                     "dnsPolicy": "Default",
                     "tolerations": [{"key": "CriticalAddonsOnly", "operator": "Exists"},
                                     {"key": "node-role.kubernetes.io/control-plane",
                                      "effect": "NoSchedule"}],
                     "nodeSelector": {"kubernetes.io/os": "linux"},
                     "containers": [{
                         "name": "coredns",
                         "image": "registry.k8s.io/coredns/coredns:v1.11.3",
                         "args": ["-conf", "/etc/coredns/Corefile"],
                         "ports": [{"name": "dns", "containerPort": 53, "protocol": "UDP"},
                                   {"name": "dns-tcp", "containerPort": 53, "protocol": "TCP"},
                                   {"name": "metrics", "containerPort": 9153, "protocol": "TCP"}],
                         "resources": {"limits": {"memory": "170Mi"},
                                       "requests": {"cpu": "100m", "memory": "70Mi"}},
                         "volumeMounts": [{"name": "config-volume", "mountPath": "/etc/coredns",
                                           "readOnly": True}],
                         "livenessProbe": {"httpGet": {"path": "/health", "port": 8080},
                                           "initialDelaySeconds": 60, "timeoutSeconds": 5,
                                           "failureThreshold": 5},
                         "readinessProbe": {"httpGet": {"path": "/ready", "port": 8181}},
                     }],
                     "volumes": [{"name": "config-volume",
                                  "configMap": {"name": "coredns",
                                                "items": [{"key": "Corefile", "path": "Corefile"}]}}],
                 },
             },
         }},
        {"apiVersion": "v1", "kind": "Service",
         "metadata": {"name": "kube-dns", "namespace": "kube-system",
                      "labels": {"k8s-app": "kube-dns", "kubernetes.io/cluster-service": "true",
                                 "kubernetes.io/name": "CoreDNS"}},
         "spec": {"selector": coredns_labels, "clusterIP": CLUSTER_DNS_IP,
                  "ports": [{"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 53},
                            {"name": "dns-tcp", "port": 53, "protocol": "TCP", "targetPort": 53},
                            {"name": "metrics", "port": 9153, "protocol": "TCP", "targetPort": 9153}]}},
        {"apiVersion": "v1", "kind": "ServiceAccount",
         "metadata": {"name": "kube-proxy", "namespace": "kube-system"}},
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": "kube-proxy", "namespace": "kube-system"},
         "data": {"config.conf": "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n"
                                 "mode: iptables\nclusterCIDR: 10.244.0.0/16\n"}},
        {"apiVersion": "apps/v1", "kind": "DaemonSet",
         "metadata": {"name": "kube-proxy", "namespace": "kube-system",
                      "labels": {"k8s-app": "kube-proxy"}},
         "spec": {
             "selector": {"matchLabels": {"k8s-app": "kube-proxy"}},
             "template": {
                 "metadata": {"labels": {"k8s-app": "kube-proxy"}},
                 "spec": {
                     "priorityClassName": "system-node-critical",
                     "serviceAccountName": "kube-proxy",
                     "hostNetwork": True,
                     "tolerations": [{"operator": "Exists"}],
                     "nodeSelector": {"kubernetes.io/os": "linux"},
                     "containers": [{
                         "name": "kube-proxy",
                         "image": f"registry.k8s.io/kube-proxy:{KUBERNETES_VERSION}",
                         "command": ["/usr/local/bin/kube-proxy", "--config=/var/lib/kube-proxy/config.conf",
                                     "--hostname-override=$(NODE_NAME)"],
                         "env": [{"name": "NODE_NAME",
                                  "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
                         "securityContext": {"privileged": True},
                         "volumeMounts": [{"name": "kube-proxy", "mountPath": "/var/lib/kube-proxy"}],
                     }],
                     "volumes": [{"name": "kube-proxy", "configMap": {"name": "kube-proxy"}}],
                 },
             },
         }},
        {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
         "metadata": {"name": "standard",
                      "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
         "provisioner": "rancher.io/local-path", "reclaimPolicy": "Delete",
         "volumeBindingMode": "WaitForFirstConsumer"},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
         "metadata": {"name": "system-cluster-critical"}, "value": 2000000000,
         "description": "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
         "preemptionPolicy": "PreemptLowerPriority"},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
         "metadata": {"name": "system-node-critical"}, "value": 2000001000,
         "description": "Used for system critical pods that must not be moved from their current node.",
         "preemptionPolicy": "PreemptLowerPriority"},
        {"apiVersion": "v1", "kind": "Service",
         "metadata": {"name": "kubernetes", "namespace": "default",
                      "labels": {"component": "apiserver", "provider": "kubernetes"}},
         "spec": {"clusterIP": "10.96.0.1",
                  "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}]}},
    ]


SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
# The benchmark's own namespaces (chaos experiments, load generator): never shown to the agent,
# never gated by a problem's admission webhooks.
HIDDEN_NAMESPACES: tuple[str, ...] = ("chaos-mesh", "sregym-system")
