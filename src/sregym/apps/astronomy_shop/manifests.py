"""The opentelemetry-demo Helm chart 0.40.4 (app 2.2.0), rendered by our own code.

`chart/values.yaml` holds the chart's `default` and `components` values (names, ports, env,
resources, init containers, flagd's sidecar and volumes); this module turns each enabled
component into the objects the chart's `_objects.tpl` renders (Deployment, Service, ConfigMaps),
with the chart's labels (`opentelemetry.io/name` selector, `app.kubernetes.io/{name,component,
version,part-of,managed-by}`, `helm.sh/chart`), plus `flagd-config` (key `demo.flagd.json`),
`postgresql-init`, the release's ServiceAccount and the two observability workloads the chart
pulls in as subcharts (the collector DaemonSet and Jaeger). The load generator is not rendered
here: the app's hidden Locust generator sends the traffic.
"""

from __future__ import annotations

import copy
from functools import cache
from importlib import resources
from typing import Any

from sregym.twin.machinery.yamldocs import load_document

NAMESPACE = "astronomy-shop"
RELEASE = "astronomy-shop"
CHART = "opentelemetry-demo-0.40.4"
APP_VERSION = "2.2.0"
COLLECTOR_IMAGE = "otel/opentelemetry-collector-contrib:0.142.0"
JAEGER_IMAGE = "jaegertracing/jaeger:2.14.1"  # the jaeger subchart (4.3.0): its appVersion
# Components the twin leaves out (none: the chart's load-generator is the app's one source of load).
SKIPPED: frozenset[str] = frozenset()


def _chart_file(name: str) -> str:
    return resources.files(__package__ + ".chart").joinpath(name).read_text()


@cache
def values() -> dict[str, Any]:
    return load_document(_chart_file("values.yaml"))


def _labels(name: str) -> dict[str, str]:
    return {"helm.sh/chart": CHART, "opentelemetry.io/name": name, **_workload_labels(name),
            "app.kubernetes.io/part-of": "opentelemetry-demo", "app.kubernetes.io/managed-by": "Helm"}


def _workload_labels(name: str) -> dict[str, str]:
    return {"app.kubernetes.io/version": APP_VERSION, "app.kubernetes.io/component": name,
            "app.kubernetes.io/name": name}


def _tpl(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace("{{ .Chart.AppVersion }}", APP_VERSION)
    if isinstance(value, dict):
        return {k: _tpl(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_tpl(v) for v in value]
    return value


def _env(comp: dict[str, Any]) -> list[dict[str, Any]]:
    """Default env first (when used), then the component's, overrides merged by name."""
    envs: list[dict[str, Any]] = []
    if (comp.get("useDefault") or {}).get("env"):
        envs += copy.deepcopy(values()["default"]["env"])
    for item in copy.deepcopy(comp.get("env") or []):
        envs = [e for e in envs if e["name"] != item["name"]] + [item]
    for item in copy.deepcopy(comp.get("envOverrides") or []):
        envs = [item if e["name"] == item["name"] else e for e in envs]
    return _tpl(envs)


def _image(comp: dict[str, Any], name: str) -> str:
    override = comp.get("imageOverride") or {}
    repository = override.get("repository") or values()["default"]["image"]["repository"]
    tag = override.get("tag") or f"{APP_VERSION}-{name}"
    return f"{repository}:{tag}"


def _container_ports(comp: dict[str, Any]) -> list[dict[str, Any]]:
    ports = [{"containerPort": p["value"], "name": p["name"]} for p in comp.get("ports") or []]
    if (comp.get("service") or {}).get("port"):
        ports.append({"containerPort": comp["service"]["port"], "name": "service"})
    return ports


def _container(comp: dict[str, Any], name: str) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "image": _image(comp, name),
                           "imagePullPolicy": (comp.get("imageOverride") or {}).get("pullPolicy", "IfNotPresent")}
    if comp.get("command"):
        out["command"] = list(comp["command"])
    ports = _container_ports(comp)
    if ports:
        out["ports"] = ports
    out["env"] = _env(comp)
    if comp.get("resources"):
        out["resources"] = copy.deepcopy(comp["resources"])
    if comp.get("securityContext"):
        out["securityContext"] = copy.deepcopy(comp["securityContext"])
    if comp.get("livenessProbe"):
        out["livenessProbe"] = copy.deepcopy(comp["livenessProbe"])
    return out


def _deployment(name: str, comp: dict[str, Any]) -> dict[str, Any]:
    main = _container(comp, name)
    mounts = [{"name": m["name"].lower(), "mountPath": m["mountPath"], **({"subPath": m["subPath"]}
              if m.get("subPath") else {})} for m in [*(comp.get("mountedConfigMaps") or []),
                                                      *(comp.get("mountedEmptyDirs") or [])]]
    if mounts:
        main["volumeMounts"] = mounts
    containers = [main]
    for side in comp.get("sidecarContainers") or []:
        sc = _container(side, side["name"].lower())
        if side.get("volumeMounts"):
            sc["volumeMounts"] = copy.deepcopy(side["volumeMounts"])
        containers.append(sc)
    volumes: list[dict[str, Any]] = [
        {"name": m["name"].lower(), "configMap": {"name": m.get("existingConfigMap") or f"{name}-{m['name'].lower()}"}}
        for m in comp.get("mountedConfigMaps") or []]
    volumes += [{"name": m["name"].lower(), "emptyDir": {}} for m in comp.get("mountedEmptyDirs") or []]
    volumes += copy.deepcopy(comp.get("additionalVolumes") or [])
    pod: dict[str, Any] = {"serviceAccountName": RELEASE, "containers": containers}
    if comp.get("initContainers"):
        pod["initContainers"] = copy.deepcopy(comp["initContainers"])
    if volumes:
        pod["volumes"] = volumes
    template_meta: dict[str, Any] = {"labels": {"opentelemetry.io/name": name, **_workload_labels(name)}}
    if comp.get("podAnnotations"):
        template_meta["annotations"] = dict(comp["podAnnotations"])
    defaults = values()["default"]
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": _labels(name)},
            "spec": {"replicas": comp.get("replicas") or defaults["replicas"],
                     "revisionHistoryLimit": comp.get("revisionHistoryLimit") or defaults["revisionHistoryLimit"],
                     "selector": {"matchLabels": {"opentelemetry.io/name": name}},
                     "template": {"metadata": template_meta, "spec": pod}}}


def _service(name: str, comp: dict[str, Any]) -> dict[str, Any] | None:
    service = comp.get("service") or {}
    ports = [{"port": p["value"], "name": p["name"], "targetPort": p["value"]} for p in comp.get("ports") or []]
    if service.get("port"):
        ports.append({"port": service["port"], "name": "tcp-service", "targetPort": service["port"]})
    for index, side in enumerate(comp.get("sidecarContainers") or []):
        ports += [{"port": p["value"], "name": p["name"], "targetPort": p["value"]} for p in side.get("ports") or []]
        if (side.get("service") or {}).get("port"):
            port = side["service"]["port"]
            ports.append({"port": port, "name": f"tcp-service-{index}", "targetPort": port})
    if not ports:
        return None
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": _labels(name)},
            "spec": {"type": service.get("type", "ClusterIP"), "ports": ports,
                     "selector": {"opentelemetry.io/name": name}}}


def _config_map(name: str, data: dict[str, str], labels: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": NAMESPACE,
                                                                  "labels": labels}, "data": data}


def _release_labels() -> dict[str, str]:
    return {"helm.sh/chart": CHART, "app.kubernetes.io/version": APP_VERSION,
            "app.kubernetes.io/part-of": "opentelemetry-demo", "app.kubernetes.io/managed-by": "Helm"}


def _collector() -> list[dict[str, Any]]:
    """The opentelemetry-collector subchart in daemonset mode (fullnameOverride otel-collector)."""
    labels = {"app.kubernetes.io/name": "opentelemetry-collector", "app.kubernetes.io/instance": RELEASE,
              "component": "agent-collector"}
    ports = [("otlp", 4317, "TCP"), ("otlp-http", 4318, "TCP"), ("jaeger-compact", 6831, "UDP"),
             ("jaeger-thrift", 14268, "TCP"), ("jaeger-grpc", 14250, "TCP"), ("zipkin", 9411, "TCP")]
    meta = {"labels": {**labels, "helm.sh/chart": "opentelemetry-collector-0.142.2",
                       "app.kubernetes.io/version": "0.142.0", "app.kubernetes.io/managed-by": "Helm"}}
    container = {"name": "opentelemetry-collector", "image": COLLECTOR_IMAGE, "imagePullPolicy": "IfNotPresent",
                 "args": ["--config=/conf/relay.yaml"],
                 "ports": [{"name": n, "containerPort": p, "protocol": proto, "hostPort": p} for n, p, proto in ports],
                 "env": [{"name": "MY_POD_IP", "valueFrom": {"fieldRef": {"apiVersion": "v1",
                                                                          "fieldPath": "status.podIP"}}},
                         {"name": "K8S_NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
                         {"name": "GOMEMLIMIT", "value": "160MiB"}],
                 "livenessProbe": {"httpGet": {"path": "/", "port": 13133}},
                 "readinessProbe": {"httpGet": {"path": "/", "port": 13133}},
                 "resources": {"limits": {"memory": "200Mi"}},
                 "volumeMounts": [{"mountPath": "/conf", "name": "opentelemetry-collector-configmap"}]}
    return [
        _config_map("otel-collector-agent", {"relay": "receivers:\n  otlp:\n    protocols:\n      grpc:\n"
                                                      "        endpoint: ${env:MY_POD_IP}:4317\n      http:\n"
                                                      "        endpoint: ${env:MY_POD_IP}:4318\n"}, meta["labels"]),
        {"apiVersion": "apps/v1", "kind": "DaemonSet",
         "metadata": {"name": "otel-collector-agent", "namespace": NAMESPACE, **meta},
         "spec": {"selector": {"matchLabels": labels}, "updateStrategy": {"type": "RollingUpdate"},
                  "template": {"metadata": {"labels": labels},
                               "spec": {"serviceAccountName": "otel-collector", "containers": [container],
                                        "volumes": [{"name": "opentelemetry-collector-configmap",
                                                     "configMap": {"name": "otel-collector-agent",
                                                                   "items": [{"key": "relay",
                                                                              "path": "relay.yaml"}]}}]}}}},
        {"apiVersion": "v1", "kind": "ServiceAccount",
         "metadata": {"name": "otel-collector", "namespace": NAMESPACE, **meta}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "otel-collector", "namespace": NAMESPACE,
                                                              **meta},
         "spec": {"type": "ClusterIP", "selector": labels, "internalTrafficPolicy": "Local",
                  "ports": [{"name": n, "port": p, "targetPort": p, "protocol": proto} for n, p, proto in ports]}},
    ]


def _jaeger() -> list[dict[str, Any]]:
    """The jaeger subchart (v2, all-in-one, memory storage; fullnameOverride jaeger)."""
    labels = {"app.kubernetes.io/name": "jaeger", "app.kubernetes.io/instance": RELEASE,
              "app.kubernetes.io/component": "all-in-one"}
    ports = [("http-query", 16686), ("grpc-query", 16685), ("otlp-grpc", 4317), ("otlp-http", 4318),
             ("http-health", 13133)]
    container = {"name": "jaeger", "image": JAEGER_IMAGE, "imagePullPolicy": "IfNotPresent",
                 "args": ["--config", "/etc/jaeger/user-config.yaml"],
                 "env": [{"name": "MEMORY_MAX_TRACES", "value": "25000"},
                         {"name": "PROMETHEUS_ADDR", "value": "prometheus:9090"},
                         {"name": "OTEL_COLLECTOR_HOST", "value": "otel-collector"},
                         {"name": "OTEL_COLLECTOR_PORT_HTTP", "value": "4318"},
                         {"name": "JAEGER_HOST", "value": "0.0.0.0"}, {"name": "JAEGER_GRPC_PORT", "value": "4317"}],
                 "ports": [{"containerPort": p, "name": n, "protocol": "TCP"} for n, p in ports],
                 "readinessProbe": {"httpGet": {"path": "/status", "port": 13133}},
                 "livenessProbe": {"httpGet": {"path": "/status", "port": 13133}},
                 "resources": {"limits": {"memory": "600Mi"}}}
    return [
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": "jaeger", "namespace": NAMESPACE, "labels": labels},
         "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                  "template": {"metadata": {"labels": labels}, "spec": {"containers": [container]}}}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "jaeger", "namespace": NAMESPACE,
                                                              "labels": labels},
         "spec": {"selector": labels, "ports": [{"name": n, "port": p, "targetPort": p} for n, p in ports]}},
    ]


def objects() -> list[dict[str, Any]]:
    """Every object of the release, namespace first, in the order `helm install` applies kinds."""
    out: list[dict[str, Any]] = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
                                 {"apiVersion": "v1", "kind": "ServiceAccount",
                                  "metadata": {"name": RELEASE, "namespace": NAMESPACE,
                                               "labels": _release_labels()}},
                                 _config_map("flagd-config", {"demo.flagd.json": _chart_file("demo.flagd.json")},
                                             _release_labels()),
                                 _config_map("postgresql-init", {"init.sql": _chart_file("init.sql")},
                                             _release_labels())]
    workloads: list[dict[str, Any]] = []
    for name, comp in values()["components"].items():
        if not comp.get("enabled") or name in SKIPPED:
            continue
        for cm in comp.get("mountedConfigMaps") or []:
            if cm.get("data"):
                out.append(_config_map(f"{name}-{cm['name'].lower()}", dict(cm["data"]), _labels(name)))
        service = _service(name, comp)
        if service is not None:
            out.append(service)
        workloads.append(_deployment(name, comp))
    return [*out, *_collector(), *_jaeger(), *workloads]


def component_port(name: str) -> int:
    """The Service port of a component (its `service.port`, else its first named port)."""
    comp = values()["components"][name]
    if (comp.get("service") or {}).get("port"):
        return int(comp["service"]["port"])
    return int(comp["ports"][0]["value"])


def images() -> dict[str, str]:
    """component -> image reference, main containers and sidecars."""
    refs: dict[str, str] = {}
    for name, comp in values()["components"].items():
        refs[name] = _image(comp, name)
        for side in comp.get("sidecarContainers") or []:
            refs[side["name"]] = _image(side, side["name"])
    return refs



__all__ = ["APP_VERSION", "CHART", "NAMESPACE", "component_port", "images", "objects", "values"]
