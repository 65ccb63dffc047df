"""autoscaling/v1 HorizontalPodAutoscalers: served next to v2, stored as v2.

`kubectl autoscale` (kubectl 1.32) creates its HPA through autoscaling/v1; the HPA controller and
`kubectl get hpa` (v2, the preferred version) must see the same object, and a v1 client must read
back, and be able to edit, what it wrote without losing what only v2 can express.
"""

from __future__ import annotations

import json
from typing import Any

from sregym.twin import Twin
from sregym.twin.machinery.hpa_conversion import (
    CONDITIONS_ANNOTATION,
    METRIC_SPECS_ANNOTATION,
    METRIC_STATUSES_ANNOTATION,
    hpa_v1_to_v2,
    hpa_v2_to_v1,
)

V1 = "horizontalpodautoscalers.v1.autoscaling"

DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.25
        resources: {requests: {cpu: 100m}}
"""


class _OnTarget:
    """A metrics provider reporting 80m CPU per pod (80 % of a 100m request: no rescale)."""

    def pod_usage(self, namespace: str, name: str) -> tuple[float, float]:
        return (0.08, 32 * 1024 * 1024)


def _stored(kube: Any, name: str = "web") -> dict[str, Any]:
    return kube.call(lambda: kube.twin.store.get("HorizontalPodAutoscaler", "default", name))


def test_kubectl_autoscale_creates_a_v1_hpa_stored_as_v2(kube: Any) -> None:
    kube.ok("apply", "-f", "-", input=DEPLOYMENT)
    out = kube.ok("autoscale", "deployment", "web", "--min=2", "--max=5", "--cpu-percent=80")
    assert out.strip() == "horizontalpodautoscaler.autoscaling/web autoscaled"
    stored = _stored(kube)
    assert stored["apiVersion"] == "autoscaling/v2"
    assert stored["spec"]["minReplicas"] == 2 and stored["spec"]["maxReplicas"] == 5
    assert stored["spec"]["metrics"] == [{"type": "Resource", "resource": {
        "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]
    assert stored["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment",
                                                "name": "web"}
    lines = kube.ok("get", "hpa").splitlines()
    assert lines[0].split() == ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"]
    assert lines[1].split()[:7] == ["web", "Deployment/web", "cpu:", "<unknown>/80%", "2", "5", "0"]


def test_v1_reads_writes_and_watches_convert(kube: Any) -> None:
    kube.ok("apply", "-f", "-", input=DEPLOYMENT)
    kube.ok("autoscale", "deployment", "web", "--min=2", "--max=5", "--cpu-percent=80")
    kube.call(lambda: setattr(kube.twin.services, "metrics", _OnTarget()))
    kube.advance(40)
    v1 = json.loads(kube.ok("get", V1, "web", "-o", "json"))
    assert v1["apiVersion"] == "autoscaling/v1"
    assert v1["spec"] == {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                          "minReplicas": 2, "maxReplicas": 5, "targetCPUUtilizationPercentage": 80}
    assert v1["status"]["currentCPUUtilizationPercentage"] == 80
    assert v1["status"]["currentReplicas"] == 3
    annotations = v1["metadata"]["annotations"]
    conditions = json.loads(annotations[CONDITIONS_ANNOTATION])
    assert [c["type"] for c in conditions][:2] == ["AbleToScale", "ScalingActive"]
    current = json.loads(annotations[METRIC_STATUSES_ANNOTATION])
    assert current == [{"type": "Resource", "resource": {"name": "cpu", "currentAverageUtilization": 80,
                                                         "currentAverageValue": "80m"}}]
    # v2, the preferred version, prints the same HPA with its live utilisation.
    row = kube.ok("get", "hpa", "web", "--no-headers").split()
    assert row[2:4] == ["cpu:", "80%/80%"]
    # A v2-only metric survives a v1 read-modify-write (it rides in the annotation).
    kube.ok("patch", "hpa.v2.autoscaling", "web", "--type=json", "-p", json.dumps([{
        "op": "add", "path": "/spec/metrics/-", "value": {"type": "Resource", "resource": {
            "name": "memory", "target": {"type": "AverageValue", "averageValue": "100Mi"}}}}]))
    v1 = json.loads(kube.ok("get", V1, "web", "-o", "json"))
    assert json.loads(v1["metadata"]["annotations"][METRIC_SPECS_ANNOTATION]) == [
        {"type": "Resource", "resource": {"name": "memory", "targetAverageValue": "100Mi"}}]
    kube.ok("patch", V1, "web", "--type=merge", "-p", '{"spec":{"targetCPUUtilizationPercentage":60}}')
    stored = _stored(kube)
    names = {m["resource"]["name"]: m["resource"]["target"] for m in stored["spec"]["metrics"]}
    assert names == {"memory": {"type": "AverageValue", "averageValue": "100Mi"},
                     "cpu": {"type": "Utilization", "averageUtilization": 60}}
    assert not any(k.startswith("autoscaling.alpha") for k in stored["metadata"].get("annotations") or {})
    assert stored["status"]["conditions"]  # the status stays the controller's
    # A v1 watch streams v1 objects.
    from kubernetes import client, watch

    api = client.AutoscalingV1Api(kube.client())
    events = list(watch.Watch().stream(api.list_namespaced_horizontal_pod_autoscaler, "default",
                                       timeout_seconds=1, _preload_content=False))
    assert events and events[0]["raw_object"]["apiVersion"] == "autoscaling/v1"
    assert events[0]["raw_object"]["spec"]["targetCPUUtilizationPercentage"] == 60


def test_discovery_serves_both_versions(kube: Any) -> None:
    versions = kube.ok("api-versions").split()
    assert "autoscaling/v1" in versions and "autoscaling/v2" in versions
    group = json.loads(kube.ok("get", "--raw", "/apis/autoscaling"))
    assert group["preferredVersion"]["version"] == "v2"
    assert [v["version"] for v in group["versions"]] == ["v2", "v1"]
    resources = json.loads(kube.ok("get", "--raw", "/apis/autoscaling/v1"))["resources"]
    assert {"horizontalpodautoscalers", "horizontalpodautoscalers/status"} <= {r["name"] for r in resources}


def test_a_v1_manifest_applied_in_process_is_stored_as_v2() -> None:
    twin = Twin(seed=3)
    twin.apply(DEPLOYMENT)
    twin.apply({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
                "metadata": {"name": "web", "namespace": "default"},
                "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                         "maxReplicas": 4}})
    stored = twin.get("HorizontalPodAutoscaler", "default", "web")
    assert stored["apiVersion"] == "autoscaling/v2"
    # v1 defaulting (minReplicas 1) and the implicit 80 % CPU target become explicit.
    assert stored["spec"]["minReplicas"] == 1
    assert stored["spec"]["metrics"][0]["resource"]["target"] == {"type": "Utilization",
                                                                  "averageUtilization": 80}
    kinds = {k.kind: k for k, _obj in twin.store.all_objects() if k.kind == "HorizontalPodAutoscaler"}
    assert kinds["HorizontalPodAutoscaler"].version == "v2"


def test_conversion_round_trip_keeps_what_v1_cannot_express() -> None:
    v2 = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
          "metadata": {"name": "api", "namespace": "shop", "annotations": {"team": "core"}},
          "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "api"},
                   "minReplicas": 2, "maxReplicas": 9,
                   "metrics": [
                       {"type": "Pods", "pods": {"metric": {"name": "rps"},
                                                 "target": {"type": "AverageValue", "averageValue": "10"}}},
                       {"type": "Resource", "resource": {"name": "cpu", "target": {
                           "type": "Utilization", "averageUtilization": 70}}}],
                   "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60, "selectPolicy": "Max",
                                              "policies": [{"type": "Pods", "value": 1,
                                                            "periodSeconds": 30}]}}},
          "status": {"currentReplicas": 3, "desiredReplicas": 4, "observedGeneration": 2,
                     "currentMetrics": [{"type": "Resource", "resource": {
                         "name": "cpu", "current": {"averageUtilization": 91, "averageValue": "91m"}}}],
                     "conditions": [{"type": "AbleToScale", "status": "True",
                                     "lastTransitionTime": "2026-01-05T09:00:00Z",
                                     "reason": "SucceededRescale", "message": "ok"}]}}
    v1 = hpa_v2_to_v1(v2)
    assert v1["spec"]["targetCPUUtilizationPercentage"] == 70
    assert v1["status"] == {"observedGeneration": 2, "currentReplicas": 3, "desiredReplicas": 4,
                            "currentCPUUtilizationPercentage": 91}
    assert json.loads(v1["metadata"]["annotations"][METRIC_SPECS_ANNOTATION]) == [
        {"type": "Pods", "pods": {"metricName": "rps", "targetAverageValue": "10"}}]
    assert json.loads(v1["metadata"]["annotations"]["autoscaling.alpha.kubernetes.io/behavior"]) == {
        "ScaleUp": None, "ScaleDown": {"StabilizationWindowSeconds": 60, "SelectPolicy": "Max",
                                       "Policies": [{"Type": "Pods", "Value": 1, "PeriodSeconds": 30}]}}
    back = hpa_v1_to_v2(v1)
    assert back["metadata"]["annotations"] == {"team": "core"}
    assert back["spec"] == v2["spec"]
    assert back["status"]["currentMetrics"] == v2["status"]["currentMetrics"]
    assert back["status"]["conditions"] == v2["status"]["conditions"]
