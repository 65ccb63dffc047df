"""The monitoring stack as objects in the cluster: the pods behind every scrape target.

A real cluster's Prometheus, kube-state-metrics, node-exporter, OpenTelemetry Collector and Loki
are pods an SRE can `kubectl get`; the labels of their series (`namespace`, `pod`, `instance`)
name those pods. A fresh twin therefore installs them the way `helm install kube-prometheus-stack`
(plus the collector and Loki charts) would, into `MONITORING_NAMESPACE`, with the charts' names,
labels and images and no resource requests (the charts' defaults), so scheduling of the apps is
unaffected. The exporters ask `stack_target_pod` for the live pod behind their target: while it
is not running Prometheus has no target for it (its Endpoints are empty); in a twin without the
stack (bare test twins, snapshot replays) `installed` is false and they keep their fixed labels.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sregym.twin.node.bound_pods import pods_on
from sregym.twin.node.images import ImageSpec, preload_image, register_image
from sregym.twin.telemetry.exposition import MONITORING_NAMESPACE, RELEASE

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

NAME_LABEL = "app.kubernetes.io/name"
KSM = f"{RELEASE}-kube-state-metrics"
NODE_EXPORTER = f"{RELEASE}-prometheus-node-exporter"
PROMETHEUS = f"prometheus-{RELEASE}-prometheus"
OPERATOR = f"{RELEASE}-operator"
COLLECTOR = "opentelemetry-collector"
LOKI = "loki"

_IMAGES = (
    ImageSpec("registry.k8s.io/kube-state-metrics/kube-state-metrics", ("v2.12.0", "v2.13.0"), size_mb=45.1,
              ports=(8080, 8081), memory_mb=35, startup_seconds=2, shell="",
              startup_logs=('"Starting kube-state-metrics"', '"Started metrics server" metricsServerAddress="[::]:8080"')),
    ImageSpec("quay.io/prometheus/node-exporter", ("v1.8.1", "v1.8.2"), size_mb=22.7, ports=(9100,), memory_mb=18,
              startup_seconds=1, shell="",
              startup_logs=('ts=2026-01-05T09:00:00.000Z caller=node_exporter.go:193 level=info '
                            'msg="Starting node_exporter" version="(version=1.8.2, branch=HEAD)"',
                            'ts=2026-01-05T09:00:00.000Z caller=tls_config.go:313 level=info '
                            'msg="Listening on" address=[::]:9100')),
    ImageSpec("quay.io/prometheus/prometheus", ("v2.53.0", "v2.54.1"), size_mb=295.1, ports=(9090,), memory_mb=420,
              startup_seconds=3, shell="ash",
              startup_logs=('ts=2026-01-05T09:00:00.000Z caller=main.go:601 level=info msg="Starting Prometheus '
                            'Server" mode=server version="(version=2.53.0, branch=HEAD)"',
                            'ts=2026-01-05T09:00:00.000Z caller=main.go:1324 level=info msg="Completed loading '
                            'of configuration file" filename=/etc/prometheus/config_out/prometheus.env.yaml')),
    ImageSpec("quay.io/prometheus-operator/prometheus-config-reloader", ("v0.75.0",), size_mb=12.4, ports=(8080,),
              memory_mb=12, shell=""),
    ImageSpec("quay.io/prometheus-operator/prometheus-operator", ("v0.75.0",), size_mb=38.9, ports=(10250,),
              memory_mb=40, shell="",
              startup_logs=('level=info ts=2026-01-05T09:00:00.000Z caller=main.go:181 msg="Starting Prometheus '
                            'Operator" version="(version=0.75.0, branch=refs/tags/v0.75.0)"',)),
    ImageSpec("docker.io/otel/opentelemetry-collector-contrib", ("0.104.0", "0.110.0"), size_mb=77.3,
              ports=(4317, 4318, 8888, 8889, 13133), memory_mb=90, shell="",
              startup_logs=('info\tservice@v0.104.0/service.go:115\tSetting up own telemetry...',
                            'info\tservice@v0.104.0/service.go:206\tEverything is ready. Begin running and '
                            'processing data.')),
    ImageSpec("docker.io/grafana/loki", ("3.1.0", "3.1.1", "3.2.0"), size_mb=80.2, ports=(3100, 9095), memory_mb=150,
              startup_seconds=3, shell="",
              startup_logs=('level=info ts=2026-01-05T09:00:00.000Z caller=main.go:126 msg="Starting Loki" '
                            'version="(version=3.1.0, branch=HEAD)"',
                            'level=info ts=2026-01-05T09:00:00.000Z caller=loki.go:505 msg="Loki started"')),
)
for _spec in _IMAGES:
    register_image(_spec)


def _chart_labels(name: str, instance: str = RELEASE, component: str = "") -> dict[str, str]:
    labels = {"app.kubernetes.io/instance": instance, "app.kubernetes.io/managed-by": "Helm",
              NAME_LABEL: name}
    if component:
        labels["app.kubernetes.io/component"] = component
    return labels


def _container(name: str, image: str, ports: list[tuple[str, int]], args: list[str] | None = None,
               probe: tuple[str, int] | None = None) -> dict[str, Any]:
    container: dict[str, Any] = {"name": name, "image": image, "imagePullPolicy": "IfNotPresent",
                                 "ports": [{"name": n, "containerPort": p, "protocol": "TCP"} for n, p in ports]}
    if args:
        container["args"] = args
    if probe is not None:
        container["readinessProbe"] = {"httpGet": {"path": probe[0], "port": probe[1], "scheme": "HTTP"},
                                       "periodSeconds": 10, "timeoutSeconds": 5, "failureThreshold": 3,
                                       "successThreshold": 1}
    return container


def _workload(kind: str, name: str, labels: dict[str, str], containers: list[dict[str, Any]],
              **spec: Any) -> dict[str, Any]:
    pod_spec = {"serviceAccountName": spec.pop("service_account", name), "containers": containers,
                **spec.pop("pod", {})}
    body: dict[str, Any] = {"selector": {"matchLabels": {k: v for k, v in labels.items()
                                                         if k in (NAME_LABEL, "app.kubernetes.io/instance")}},
                            "template": {"metadata": {"labels": dict(labels)}, "spec": pod_spec}, **spec}
    if kind == "Deployment":
        body["replicas"] = 1
    return {"apiVersion": "apps/v1", "kind": kind,
            "metadata": {"name": name, "namespace": MONITORING_NAMESPACE, "labels": dict(labels)}, "spec": body}


def _service(name: str, labels: dict[str, str], ports: list[tuple[str, int]], *, headless: bool = False,
             namespace: str = MONITORING_NAMESPACE) -> dict[str, Any]:
    spec: dict[str, Any] = {"type": "ClusterIP", "ports": [{"name": n, "port": p, "targetPort": n, "protocol": "TCP"}
                                                           for n, p in ports],
                            "selector": {k: v for k, v in labels.items()
                                         if k in (NAME_LABEL, "app.kubernetes.io/instance")}}
    if headless:
        spec["clusterIP"] = "None"
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)}, "spec": spec}


def _kubelet_service() -> dict[str, Any]:
    """The selector-less Service the operator keeps in kube-system for the kubelets' endpoints."""
    labels = {"app.kubernetes.io/managed-by": "prometheus-operator", NAME_LABEL: "kubelet", "k8s-app": "kubelet"}
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": f"{RELEASE}-kubelet", "namespace": "kube-system", "labels": labels},
            "spec": {"type": "ClusterIP", "clusterIP": "None",
                     "ports": [{"name": n, "port": p, "targetPort": p, "protocol": "TCP"}
                               for n, p in (("https-metrics", 10250), ("http-metrics", 10255), ("cadvisor", 4194))]}}


def stack_objects() -> list[dict[str, Any]]:
    """What the charts install, in `kubectl apply` order."""
    ksm = _chart_labels("kube-state-metrics", component="metrics")
    node = _chart_labels("prometheus-node-exporter", component="metrics")
    operator = _chart_labels("kube-prometheus-stack-prometheus-operator", component="prometheus-operator")
    prom = {**_chart_labels("prometheus", instance=f"{RELEASE}-prometheus"), "prometheus": f"{RELEASE}-prometheus"}
    otel = _chart_labels("opentelemetry-collector", instance=COLLECTOR, component="standalone-collector")
    loki = _chart_labels("loki", instance=LOKI, component="single-binary")
    accounts = [KSM, NODE_EXPORTER, OPERATOR, f"{RELEASE}-prometheus", COLLECTOR, LOKI]
    objects: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace",
         "metadata": {"name": MONITORING_NAMESPACE, "labels": {"kubernetes.io/metadata.name": MONITORING_NAMESPACE}}},
        *({"apiVersion": "v1", "kind": "ServiceAccount",
           "metadata": {"name": sa, "namespace": MONITORING_NAMESPACE}} for sa in accounts),
        _service(KSM, ksm, [("http", 8080)]),
        _service(NODE_EXPORTER, node, [("http-metrics", 9100)]),
        _service(OPERATOR, operator, [("https", 443)]),
        _service(f"{RELEASE}-prometheus", {**prom, "self-monitor": "true"}, [("http-web", 9090), ("reloader-web", 8080)]),
        _service(COLLECTOR, otel, [("otlp", 4317), ("otlp-http", 4318), ("prometheus", 8889)]),
        _service(LOKI, loki, [("http-metrics", 3100), ("grpc", 9095)]),
        _kubelet_service(),
        _workload("Deployment", KSM, ksm, [_container(
            "kube-state-metrics", "registry.k8s.io/kube-state-metrics/kube-state-metrics:v2.13.0",
            [("http", 8080)], ["--port=8080", "--telemetry-port=8081"], ("/readyz", 8081))]),
        _workload("Deployment", OPERATOR, operator, [_container(
            "kube-prometheus-stack", "quay.io/prometheus-operator/prometheus-operator:v0.75.0", [("https", 10250)],
            ["--kubelet-service=kube-system/kube-prometheus-stack-kubelet",
             "--prometheus-config-reloader=quay.io/prometheus-operator/prometheus-config-reloader:v0.75.0"])]),
        _workload("DaemonSet", NODE_EXPORTER, node, [_container(
            "node-exporter", "quay.io/prometheus/node-exporter:v1.8.2", [("http-metrics", 9100)],
            ["--path.procfs=/host/proc", "--path.sysfs=/host/sys", "--path.rootfs=/host/root"], ("/", 9100))],
            pod={"hostNetwork": True, "hostPID": True,
                 "tolerations": [{"effect": "NoSchedule", "operator": "Exists"}]},
            updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}}),
        _workload("StatefulSet", PROMETHEUS, prom, [
            _container("prometheus", "quay.io/prometheus/prometheus:v2.53.0", [("http-web", 9090)],
                       ["--web.console.templates=/etc/prometheus/consoles",
                        "--web.console.libraries=/etc/prometheus/console_libraries",
                        "--config.file=/etc/prometheus/config_out/prometheus.env.yaml",
                        "--web.enable-lifecycle", "--web.route-prefix=/",
                        "--storage.tsdb.retention.time=15d", "--storage.tsdb.path=/prometheus",
                        "--web.config.file=/etc/prometheus/web_config/web-config.yaml"], ("/-/ready", 9090)),
            _container("config-reloader", "quay.io/prometheus-operator/prometheus-config-reloader:v0.75.0",
                       [("reloader-web", 8080)])],
            service_account=f"{RELEASE}-prometheus", serviceName="prometheus-operated", replicas=1),
        _workload("Deployment", COLLECTOR, otel, [_container(
            "otc-container", "docker.io/otel/opentelemetry-collector-contrib:0.104.0",
            [("otlp", 4317), ("otlp-http", 4318), ("prometheus", 8889)], ["--config=/conf/relay.yaml"],
            ("/", 13133))]),
        _workload("StatefulSet", LOKI, loki, [_container(
            "loki", "docker.io/grafana/loki:3.1.0", [("http-metrics", 3100), ("grpc", 9095)],
            ["-config.file=/etc/loki/config/config.yaml", "-target=all"], ("/ready", 3100))],
            serviceName="loki-headless", replicas=1),
    ]
    return objects


STACK_IMAGES = (
    "registry.k8s.io/kube-state-metrics/kube-state-metrics:v2.13.0",
    "quay.io/prometheus/node-exporter:v1.8.2",
    "quay.io/prometheus/prometheus:v2.53.0",
    "quay.io/prometheus-operator/prometheus-config-reloader:v0.75.0",
    "quay.io/prometheus-operator/prometheus-operator:v0.75.0",
    "docker.io/otel/opentelemetry-collector-contrib:0.104.0",
    "docker.io/grafana/loki:3.1.0",
)
# The stack was installed before any incident: its images are in every node's cache, so its
# pods start without pulls that would delay the apps' own.
for _ref in STACK_IMAGES:
    preload_image(_ref)


def install(twin: Twin) -> None:
    """Create the stack in a fresh twin (idempotent: nothing is created twice)."""
    for obj in stack_objects():
        kind = twin.store.kind_of(obj)
        meta = obj["metadata"]
        if twin.store.peek(kind, meta.get("namespace") if kind.namespaced else None, meta["name"]) is None:
            twin.store.create(obj)


def installed(twin: Twin) -> bool:
    """Whether this twin runs the stack as pods (else exporters keep their fixed labels)."""
    kind = twin.store.kind("Service")
    return twin.store.peek(kind, MONITORING_NAMESPACE, KSM) is not None


def stack_target_pod(twin: Twin, app: str, node: str | None = None) -> dict[str, Any] | None:
    """The running pod of the stack whose `app.kubernetes.io/name` is `app` (on `node` if given)."""
    found = None
    # the node's pods, or the monitoring namespace's: a 1,000-node cluster's scrape asks once per node
    candidates = pods_on(twin.store, node) if node is not None else \
        twin.store.scan(twin.store.kind("Pod"), MONITORING_NAMESPACE)
    for pod in candidates:
        meta = pod.get("metadata") or {}
        if meta.get("namespace") != MONITORING_NAMESPACE or (meta.get("labels") or {}).get(NAME_LABEL) != app:
            continue
        status = pod.get("status") or {}
        if meta.get("deletionTimestamp") or status.get("phase") != "Running" or not status.get("podIP"):
            continue
        if node is not None and (pod.get("spec") or {}).get("nodeName") != node:
            continue
        if found is None or meta["name"] < found["metadata"]["name"]:
            found = pod
    return found


def pod_identity(pod: dict[str, Any]) -> tuple[str, str]:
    """(pod name, pod IP) of a live stack pod."""
    return pod["metadata"]["name"], str((pod.get("status") or {}).get("podIP", ""))


__all__ = ["install", "installed", "pod_identity", "stack_objects", "stack_target_pod"]
