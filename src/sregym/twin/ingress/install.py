"""The ingress-nginx installation (Helm chart 4.12.1, controller v1.12.1) as manifests.

`ingress_nginx_objects()` is what `helm install ingress-nginx ingress-nginx/ingress-nginx -n
ingress-nginx --create-namespace` leaves: the namespace, the ServiceAccount, the controller's
ConfigMap, the `nginx` IngressClass, the `ingress-nginx-controller` Deployment (container
`controller`, args as the chart renders them, `/healthz` probes on 10254) and its LoadBalancer
Service (http 80, https 443), with the chart's labels. The admission webhook and its Jobs are
left out (`controller.admissionWebhooks.enabled=false`). Applying them through any cluster
client installs the controller; `install_ingress_nginx` does that idempotently. The image runs
the `nginx-ingress-controller` program (`program.py`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sregym.twin.dataplane.programs import bind_image
from sregym.twin.ingress.program import BINARY

if TYPE_CHECKING:
    from sregym.cluster.base import Cluster

NAMESPACE = "ingress-nginx"
NAME = "ingress-nginx-controller"
CLASS = "nginx"
CONTROLLER_CLASS = "k8s.io/ingress-nginx"
VERSION = "v1.12.1"
CHART = "ingress-nginx-4.12.1"
IMAGE = f"registry.k8s.io/ingress-nginx/controller:{VERSION}"

bind_image("registry.k8s.io/ingress-nginx/controller", (VERSION, "v1.12.0", "v1.11.5", "v1.11.3", "v1.10.1"),
           (BINARY,), cmd=(f"/{BINARY}",), size_mb=112.6, shell="ash",
           description="ingress-nginx controller: nginx configured from Ingress objects")


def labels(component: str = "controller") -> dict[str, str]:
    return {"app.kubernetes.io/component": component, "app.kubernetes.io/instance": "ingress-nginx",
            "app.kubernetes.io/managed-by": "Helm", "app.kubernetes.io/name": "ingress-nginx",
            "app.kubernetes.io/part-of": "ingress-nginx", "app.kubernetes.io/version": VERSION.lstrip("v"),
            "helm.sh/chart": CHART}


SELECTOR = {"app.kubernetes.io/component": "controller", "app.kubernetes.io/instance": "ingress-nginx",
            "app.kubernetes.io/name": "ingress-nginx"}


def _meta(name: str, namespace: str | None = NAMESPACE, **extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": labels(), **extra}
    if namespace is not None:
        meta["namespace"] = namespace
    return meta


def _probe(initial: int, failures: int) -> dict[str, Any]:
    return {"httpGet": {"path": "/healthz", "port": 10254, "scheme": "HTTP"}, "initialDelaySeconds": initial,
            "periodSeconds": 10, "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": failures}


def _deployment() -> dict[str, Any]:
    args = [f"/{BINARY}", f"--publish-service=$(POD_NAMESPACE)/{NAME}", "--election-id=ingress-nginx-leader",
            f"--controller-class={CONTROLLER_CLASS}", f"--ingress-class={CLASS}",
            f"--configmap=$(POD_NAMESPACE)/{NAME}", "--enable-metrics=false"]
    env = [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
           {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
           {"name": "LD_PRELOAD", "value": "/usr/local/lib/libmimalloc.so"}]
    container = {"name": "controller", "image": IMAGE, "imagePullPolicy": "IfNotPresent", "args": args,
                 "env": env,
                 "ports": [{"name": "http", "containerPort": 80, "protocol": "TCP"},
                           {"name": "https", "containerPort": 443, "protocol": "TCP"}],
                 "livenessProbe": _probe(10, 5), "readinessProbe": _probe(10, 3),
                 "resources": {"requests": {"cpu": "100m", "memory": "90Mi"}},
                 "securityContext": {"allowPrivilegeEscalation": False, "runAsNonRoot": True, "runAsUser": 101,
                                     "capabilities": {"add": ["NET_BIND_SERVICE"], "drop": ["ALL"]}}}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": _meta(NAME),
            "spec": {"replicas": 1, "revisionHistoryLimit": 10, "minReadySeconds": 0,
                     "selector": {"matchLabels": dict(SELECTOR)},
                     "template": {"metadata": {"labels": labels()},
                                  "spec": {"containers": [container], "dnsPolicy": "ClusterFirst",
                                           "nodeSelector": {"kubernetes.io/os": "linux"},
                                           "serviceAccountName": "ingress-nginx",
                                           "terminationGracePeriodSeconds": 300}}}}


def ingress_nginx_objects() -> list[dict[str, Any]]:
    """The chart's objects, in apply order."""
    return [
        {"apiVersion": "v1", "kind": "Namespace",
         "metadata": {"name": NAMESPACE, "labels": {"app.kubernetes.io/instance": "ingress-nginx",
                                                    "app.kubernetes.io/name": "ingress-nginx"}}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta("ingress-nginx"),
         "automountServiceAccountToken": True},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta(NAME), "data": {}},
        {"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass", "metadata": _meta(CLASS, None),
         "spec": {"controller": CONTROLLER_CLASS}},
        {"apiVersion": "v1", "kind": "Service", "metadata": _meta(NAME),
         "spec": {"type": "LoadBalancer", "externalTrafficPolicy": "Local", "ipFamilyPolicy": "SingleStack",
                  "ipFamilies": ["IPv4"], "selector": dict(SELECTOR),
                  "ports": [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": "http",
                             "appProtocol": "http"},
                            {"name": "https", "port": 443, "protocol": "TCP", "targetPort": "https",
                             "appProtocol": "https"}]}},
        _deployment(),
    ]


def install_ingress_nginx(cluster: Cluster) -> list[dict[str, Any]]:
    """Create what is missing of the installation (idempotent); returns what was created."""
    created = []
    for obj in ingress_nginx_objects():
        meta = obj["metadata"]
        if cluster.get(obj["kind"], meta.get("namespace"), meta["name"]) is None:
            created.append(cluster.create(obj))
    return created


__all__ = ["CLASS", "IMAGE", "NAME", "NAMESPACE", "SELECTOR", "ingress_nginx_objects", "install_ingress_nginx",
           "labels"]
