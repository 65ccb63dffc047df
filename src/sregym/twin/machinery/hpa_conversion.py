"""The HorizontalPodAutoscaler's autoscaling/v1 view of the stored autoscaling/v2 object.

The v1 shape has a single `targetCPUUtilizationPercentage`; everything else a v2 object carries
(other metrics, current metrics, conditions, behavior) travels through v1 in the
`autoscaling.alpha.kubernetes.io/*` annotations exactly like the real conversion, so a v1 client
that reads, edits and writes back an HPA does not lose what it could not see (`kubectl autoscale`
still speaks autoscaling/v1).
"""

from __future__ import annotations

import json
from typing import Any

from sregym.twin.machinery.conversion import VersionConverter, register
from sregym.twin.machinery.objects import clone

Obj = dict[str, Any]


# ------------------------------------------------------------------ HorizontalPodAutoscaler v1
# The round-trip annotations of pkg/apis/autoscaling (annotations.go).
METRIC_SPECS_ANNOTATION = "autoscaling.alpha.kubernetes.io/metrics"
METRIC_STATUSES_ANNOTATION = "autoscaling.alpha.kubernetes.io/current-metrics"
CONDITIONS_ANNOTATION = "autoscaling.alpha.kubernetes.io/conditions"
BEHAVIOR_ANNOTATION = "autoscaling.alpha.kubernetes.io/behavior"
_ROUND_TRIP = (METRIC_SPECS_ANNOTATION, METRIC_STATUSES_ANNOTATION, CONDITIONS_ANNOTATION,
               BEHAVIOR_ANNOTATION, "autoscaling.alpha.kubernetes.io/scale-down-tolerance",
               "autoscaling.alpha.kubernetes.io/scale-up-tolerance")
DEFAULT_CPU_UTILIZATION = 80


def _go_json(value: Any) -> str:
    """Compact JSON like Go's encoding/json (no spaces, HTML-safe escapes are irrelevant here)."""
    return json.dumps(value, separators=(",", ":"))


def _drop_none(d: Obj) -> Obj:
    return {k: v for k, v in d.items() if v is not None}


def _is_cpu_utilization(metric: Any) -> bool:
    if not isinstance(metric, dict) or metric.get("type") != "Resource":
        return False
    resource = metric.get("resource")
    if not isinstance(resource, dict) or resource.get("name") != "cpu":
        return False
    target = resource.get("target")
    return isinstance(target, dict) and target.get("averageUtilization") is not None


# v2 MetricSpec/MetricStatus -> the autoscaling/v1 (v2beta1-shaped) types kept in annotations.
def _metric_spec_to_v1(m: Obj) -> Obj:
    kind = m.get("type")
    out: Obj = {"type": kind}
    if isinstance(m.get("object"), dict):
        src = m["object"]
        target = src.get("target") or {}
        metric = src.get("metric") or {}
        out["object"] = _drop_none({"target": src.get("describedObject") or {},
                                    "metricName": metric.get("name", ""),
                                    "targetValue": target.get("value") or "0",
                                    "selector": metric.get("selector"),
                                    "averageValue": target.get("averageValue")})
    if isinstance(m.get("pods"), dict):
        src = m["pods"]
        metric = src.get("metric") or {}
        out["pods"] = _drop_none({"metricName": metric.get("name", ""),
                                  "targetAverageValue": (src.get("target") or {}).get("averageValue")
                                  or "0",
                                  "selector": metric.get("selector")})
    if isinstance(m.get("resource"), dict):
        src = m["resource"]
        target = src.get("target") or {}
        out["resource"] = _drop_none({"name": src.get("name", ""),
                                      "targetAverageUtilization": target.get("averageUtilization"),
                                      "targetAverageValue": target.get("averageValue")})
    if isinstance(m.get("containerResource"), dict):
        src = m["containerResource"]
        target = src.get("target") or {}
        out["containerResource"] = _drop_none({
            "name": src.get("name", ""), "targetAverageUtilization": target.get("averageUtilization"),
            "targetAverageValue": target.get("averageValue"), "container": src.get("container", "")})
    if isinstance(m.get("external"), dict):
        src = m["external"]
        target = src.get("target") or {}
        metric = src.get("metric") or {}
        out["external"] = _drop_none({"metricName": metric.get("name", ""),
                                      "metricSelector": metric.get("selector"),
                                      "targetValue": target.get("value"),
                                      "targetAverageValue": target.get("averageValue")})
    return out


def _metric_spec_from_v1(m: Obj) -> Obj:
    out: Obj = {"type": m.get("type")}
    if isinstance(m.get("object"), dict):
        src = m["object"]
        out["object"] = {
            "describedObject": src.get("target") or {},
            "metric": _drop_none({"name": src.get("metricName", ""), "selector": src.get("selector")}),
            "target": _drop_none({"type": "Value" if src.get("averageValue") is None else "AverageValue",
                                  "value": src.get("targetValue"),
                                  "averageValue": src.get("averageValue")})}
    if isinstance(m.get("pods"), dict):
        src = m["pods"]
        out["pods"] = {
            "metric": _drop_none({"name": src.get("metricName", ""), "selector": src.get("selector")}),
            "target": {"type": "AverageValue", "averageValue": src.get("targetAverageValue")}}
    for field in ("resource", "containerResource"):
        if isinstance(m.get(field), dict):
            src = m[field]
            utilization = src.get("targetAverageUtilization")
            converted: Obj = {"name": src.get("name", "")}
            if field == "containerResource":
                converted["container"] = src.get("container", "")
            converted["target"] = _drop_none({
                "type": "AverageValue" if utilization is None else "Utilization",
                "averageValue": src.get("targetAverageValue"), "averageUtilization": utilization})
            out[field] = converted
    if isinstance(m.get("external"), dict):
        src = m["external"]
        out["external"] = {
            "metric": _drop_none({"name": src.get("metricName", ""),
                                  "selector": src.get("metricSelector")}),
            "target": _drop_none({"type": "AverageValue" if src.get("targetValue") is None else "Value",
                                  "value": src.get("targetValue"),
                                  "averageValue": src.get("targetAverageValue")})}
    return out


def _metric_status_to_v1(m: Obj) -> Obj:
    out: Obj = {"type": m.get("type")}
    if isinstance(m.get("object"), dict):
        src = m["object"]
        current = src.get("current") or {}
        metric = src.get("metric") or {}
        out["object"] = _drop_none({"target": src.get("describedObject") or {},
                                    "metricName": metric.get("name", ""),
                                    "currentValue": current.get("value") or "0",
                                    "selector": metric.get("selector"),
                                    "averageValue": current.get("averageValue")})
    if isinstance(m.get("pods"), dict):
        src = m["pods"]
        metric = src.get("metric") or {}
        out["pods"] = _drop_none({"metricName": metric.get("name", ""),
                                  "currentAverageValue": (src.get("current") or {}).get("averageValue")
                                  or "0",
                                  "selector": metric.get("selector")})
    for field in ("resource", "containerResource"):
        if isinstance(m.get(field), dict):
            src = m[field]
            current = src.get("current") or {}
            converted = _drop_none({"name": src.get("name", ""),
                                    "currentAverageUtilization": current.get("averageUtilization"),
                                    "currentAverageValue": current.get("averageValue") or "0"})
            if field == "containerResource":
                converted["container"] = src.get("container", "")
            out[field] = converted
    if isinstance(m.get("external"), dict):
        src = m["external"]
        current = src.get("current") or {}
        metric = src.get("metric") or {}
        out["external"] = _drop_none({"metricName": metric.get("name", ""),
                                      "metricSelector": metric.get("selector"),
                                      "currentValue": current.get("value") or "0",
                                      "currentAverageValue": current.get("averageValue")})
    return out


def _metric_status_from_v1(m: Obj) -> Obj:
    out: Obj = {"type": m.get("type")}
    if isinstance(m.get("object"), dict):
        src = m["object"]
        out["object"] = {
            "describedObject": src.get("target") or {},
            "metric": _drop_none({"name": src.get("metricName", ""), "selector": src.get("selector")}),
            "current": _drop_none({"value": src.get("currentValue"),
                                   "averageValue": src.get("averageValue")})}
    if isinstance(m.get("pods"), dict):
        src = m["pods"]
        out["pods"] = {
            "metric": _drop_none({"name": src.get("metricName", ""), "selector": src.get("selector")}),
            "current": {"averageValue": src.get("currentAverageValue")}}
    for field in ("resource", "containerResource"):
        if isinstance(m.get(field), dict):
            src = m[field]
            converted: Obj = {"name": src.get("name", "")}
            if field == "containerResource":
                converted["container"] = src.get("container", "")
            converted["current"] = _drop_none({"averageValue": src.get("currentAverageValue"),
                                               "averageUtilization": src.get("currentAverageUtilization")})
            out[field] = converted
    if isinstance(m.get("external"), dict):
        src = m["external"]
        out["external"] = {
            "metric": _drop_none({"name": src.get("metricName", ""),
                                  "selector": src.get("metricSelector")}),
            "current": _drop_none({"value": src.get("currentValue"),
                                   "averageValue": src.get("currentAverageValue")})}
    return out


# The behavior annotation holds the *internal* Go type, marshalled without JSON tags: Go field names.
_RULES_TO_GO = (("stabilizationWindowSeconds", "StabilizationWindowSeconds"),
                ("selectPolicy", "SelectPolicy"), ("policies", "Policies"))
_POLICY_TO_GO = (("type", "Type"), ("value", "Value"), ("periodSeconds", "PeriodSeconds"))


def _behavior_to_go(behavior: Obj) -> Obj:
    out: Obj = {}
    for field, go_name in (("scaleUp", "ScaleUp"), ("scaleDown", "ScaleDown")):
        rules = behavior.get(field)
        if not isinstance(rules, dict):
            out[go_name] = None
            continue
        go_rules: Obj = {}
        for json_key, go_key in _RULES_TO_GO:
            value = rules.get(json_key)
            if json_key == "policies":
                value = [{g: p.get(j) for j, g in _POLICY_TO_GO} for p in value or []
                         if isinstance(p, dict)] or None
            go_rules[go_key] = value
        out[go_name] = go_rules
    return out


def _behavior_from_go(go: Any) -> Obj | None:
    if not isinstance(go, dict):
        return None
    out: Obj = {}
    for field, go_name in (("scaleUp", "ScaleUp"), ("scaleDown", "ScaleDown")):
        rules = go.get(go_name)
        if not isinstance(rules, dict):
            continue
        converted: Obj = {}
        for json_key, go_key in _RULES_TO_GO:
            value = rules.get(go_key)
            if json_key == "policies" and isinstance(value, list):
                value = [{j: p.get(g) for j, g in _POLICY_TO_GO} for p in value if isinstance(p, dict)]
            if value is not None:
                converted[json_key] = value
        out[field] = converted
    return out or None


def _annotation_list(annotations: dict[str, str], key: str) -> list[Obj] | None:
    raw = annotations.get(key)
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None  # like the real conversion, an unreadable annotation is ignored
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else None


def hpa_v2_to_v1(obj: Obj) -> Obj:
    """Convert_autoscaling_HorizontalPodAutoscaler_To_v1_HorizontalPodAutoscaler."""
    meta = clone(obj.get("metadata") or {})
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k not in _ROUND_TRIP}
    metrics = [m for m in spec.get("metrics") or [] if isinstance(m, dict)]
    other = [_metric_spec_to_v1(m) for m in metrics if not _is_cpu_utilization(m)]
    current_metrics = [m for m in status.get("currentMetrics") or [] if isinstance(m, dict)]
    conditions = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
    if other:
        annotations[METRIC_SPECS_ANNOTATION] = _go_json(other)
    if current_metrics:
        annotations[METRIC_STATUSES_ANNOTATION] = _go_json([_metric_status_to_v1(m)
                                                             for m in current_metrics])
    if isinstance(spec.get("behavior"), dict):
        annotations[BEHAVIOR_ANNOTATION] = _go_json(_behavior_to_go(spec["behavior"]))
    if conditions:
        annotations[CONDITIONS_ANNOTATION] = _go_json([
            _drop_none({"type": c.get("type"), "status": c.get("status"),
                        "lastTransitionTime": c.get("lastTransitionTime"), "reason": c.get("reason"),
                        "message": c.get("message")}) for c in conditions])
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)
    v1_spec: Obj = {"scaleTargetRef": clone(spec.get("scaleTargetRef") or {})}
    if spec.get("minReplicas") is not None:
        v1_spec["minReplicas"] = spec["minReplicas"]
    v1_spec["maxReplicas"] = spec.get("maxReplicas", 0)
    for m in metrics:
        if _is_cpu_utilization(m):
            v1_spec["targetCPUUtilizationPercentage"] = m["resource"]["target"]["averageUtilization"]
            break
    v1_status: Obj = {}
    for key in ("observedGeneration", "lastScaleTime"):
        if status.get(key) is not None:
            v1_status[key] = status[key]
    v1_status["currentReplicas"] = status.get("currentReplicas", 0)
    v1_status["desiredReplicas"] = status.get("desiredReplicas", 0)
    for m in current_metrics:  # no break: the last CPU utilization wins, as in the real code
        resource = m.get("resource") if m.get("type") == "Resource" else None
        if isinstance(resource, dict) and resource.get("name") == "cpu":
            utilization = (resource.get("current") or {}).get("averageUtilization")
            if utilization is not None:
                v1_status["currentCPUUtilizationPercentage"] = utilization
    out: Obj = {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
                **{k: clone(v) for k, v in obj.items()
                   if k not in ("apiVersion", "kind", "metadata", "spec", "status")},
                "metadata": meta, "spec": v1_spec, "status": v1_status}
    return out


def hpa_v1_to_v2(obj: Obj) -> Obj:
    """Convert_v1_HorizontalPodAutoscaler_To_autoscaling_HorizontalPodAutoscaler (plus v1
    defaulting: minReplicas 1)."""
    meta = clone(obj.get("metadata") or {}) if isinstance(obj.get("metadata"), dict) else {}
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    status = obj.get("status") if isinstance(obj.get("status"), dict) else None
    annotations = meta.get("annotations") if isinstance(meta.get("annotations"), dict) else {}
    v2_spec: Obj = {"scaleTargetRef": clone(spec.get("scaleTargetRef") or {}),
                    "minReplicas": spec["minReplicas"] if spec.get("minReplicas") is not None else 1,
                    "maxReplicas": spec.get("maxReplicas", 0)}
    metrics: list[Obj] = [_metric_spec_from_v1(m)
                          for m in _annotation_list(annotations, METRIC_SPECS_ANNOTATION) or []]
    target_cpu = spec.get("targetCPUUtilizationPercentage")
    if target_cpu is not None:
        metrics.append({"type": "Resource", "resource": {
            "name": "cpu", "target": {"type": "Utilization", "averageUtilization": target_cpu}}})
    if not metrics:
        metrics = [{"type": "Resource", "resource": {
            "name": "cpu", "target": {"type": "Utilization",
                                      "averageUtilization": DEFAULT_CPU_UTILIZATION}}}]
    v2_spec["metrics"] = metrics
    behavior_raw = annotations.get(BEHAVIOR_ANNOTATION)
    if behavior_raw is not None:
        try:
            behavior = _behavior_from_go(json.loads(behavior_raw))
        except ValueError:
            behavior = None
        if behavior:
            v2_spec["behavior"] = behavior
    out: Obj = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
                **{k: clone(v) for k, v in obj.items()
                   if k not in ("apiVersion", "kind", "metadata", "spec", "status")},
                "metadata": meta, "spec": v2_spec}
    if status is not None:
        v2_status: Obj = {}
        for key in ("observedGeneration", "lastScaleTime"):
            if status.get(key) is not None:
                v2_status[key] = status[key]
        v2_status["currentReplicas"] = status.get("currentReplicas", 0)
        v2_status["desiredReplicas"] = status.get("desiredReplicas", 0)
        current = _annotation_list(annotations, METRIC_STATUSES_ANNOTATION)
        if current is not None:
            v2_status["currentMetrics"] = [_metric_status_from_v1(m) for m in current]
        elif status.get("currentCPUUtilizationPercentage") is not None:
            v2_status["currentMetrics"] = [{"type": "Resource", "resource": {
                "name": "cpu",
                "current": {"averageUtilization": status["currentCPUUtilizationPercentage"]}}}]
        conditions = _annotation_list(annotations, CONDITIONS_ANNOTATION)
        if conditions is not None:
            v2_status["conditions"] = conditions
        out["status"] = v2_status
    kept = {k: v for k, v in annotations.items() if k not in _ROUND_TRIP}
    if kept:
        meta["annotations"] = kept
    else:
        meta.pop("annotations", None)
    return out


register(VersionConverter("autoscaling", "HorizontalPodAutoscaler", "v1", "v2",
                          to_storage=hpa_v1_to_v2, from_storage=hpa_v2_to_v1))


__all__ = ["BEHAVIOR_ANNOTATION", "CONDITIONS_ANNOTATION", "METRIC_SPECS_ANNOTATION",
           "METRIC_STATUSES_ANNOTATION", "hpa_v1_to_v2", "hpa_v2_to_v1"]
