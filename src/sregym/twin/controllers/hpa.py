"""The HorizontalPodAutoscaler controller (autoscaling/v2), minimal but honest.

Every 15 simulated seconds (kube's sync period) it reads the target's scale, enforces
min/max replicas, and computes a recommendation from pod resource usage. Usage comes from the
metrics provider registered as `twin.services.metrics`, an object with
`pod_usage(namespace, pod_name) -> (cpu_cores, memory_bytes) | None`. Without a provider the HPA
reports what a cluster without metrics-server reports: `ScalingActive=False` with reason
`FailedGetResourceMetric` and the real message, plus the matching Warning events. Scale-ups are
limited to max(100 %, 4 pods) per period and scale-downs use the 300 s stabilization window.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, ClassVar

from sregym.errors import ApiError
from sregym.twin.controller import Controller, controller
from sregym.twin.machinery.objects import clone
from sregym.twin.machinery.quantity import format_cpu, format_memory, parse_quantity
from sregym.twin.machinery.selectors import selector_from_spec
from sregym.twin.workloads.shared import is_active

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

SYNC_PERIOD = 15.0
TOLERANCE = 0.1
DOWNSCALE_WINDOW = 300.0
NO_METRICS_API = ("unable to fetch metrics from resource metrics API: the server could not find the "
                  "requested resource (get pods.metrics.k8s.io)")
_SCALABLE = {("apps", "Deployment"): "deployments", ("apps", "ReplicaSet"): "replicasets",
             ("apps", "StatefulSet"): "statefulsets", ("", "ReplicationController"): "replicationcontrollers"}


class MetricError(Exception):
    pass


@controller
class HorizontalPodAutoscalerController(Controller):
    name = "hpa"
    order = 50
    user = "system:serviceaccount:kube-system:horizontal-pod-autoscaler"
    component: ClassVar[str] = "horizontal-pod-autoscaler"

    def __init__(self, twin: Twin) -> None:
        super().__init__(twin)
        self._last_sync: dict[str, float] = {}
        self._recommendations: dict[str, list[tuple[float, int]]] = {}

    def reconcile(self) -> None:
        store = self.twin.store
        if not store.count("HorizontalPodAutoscaler"):
            return
        now = self.twin.clock.now
        for hpa in list(store.scan("HorizontalPodAutoscaler")):
            uid = hpa["metadata"]["uid"]
            last = self._last_sync.get(uid)
            if last is not None and now - last < SYNC_PERIOD:
                continue
            self._last_sync[uid] = now
            try:
                self.sync(hpa, now)
            except ApiError:
                continue

    # ------------------------------------------------------------------ helpers
    def _target(self, hpa: dict[str, Any]) -> tuple[Any, dict[str, Any] | None, str]:
        ref = (hpa.get("spec") or {}).get("scaleTargetRef") or {}
        group = (ref.get("apiVersion") or "").rpartition("/")[0]
        resource = _SCALABLE.get((group, ref.get("kind", "")), f"{(ref.get('kind') or '').lower()}s")
        qualified = f"{resource}/scale.{group}" if group else f"{resource}/scale"
        try:
            kind = self.twin.store.kinds.by_kind(ref.get("apiVersion", ""), ref.get("kind", ""))
        except ApiError:
            return None, None, qualified
        return kind, self.twin.store.peek(kind, hpa["metadata"]["namespace"], ref.get("name", "")), qualified

    def _metric_specs(self, hpa: dict[str, Any]) -> list[dict[str, Any]]:
        metrics = (hpa.get("spec") or {}).get("metrics")
        if metrics:
            return metrics
        return [{"type": "Resource", "resource": {"name": "cpu",
                                                  "target": {"type": "Utilization", "averageUtilization": 80}}}]

    def _pods(self, hpa: dict[str, Any], target: dict[str, Any]) -> list[dict[str, Any]]:
        selector = selector_from_spec((target.get("spec") or {}).get("selector"))
        return [p for p in self.twin.store.scan("Pod", hpa["metadata"]["namespace"])
                if is_active(p) and selector.matches((p.get("metadata") or {}).get("labels"))]

    def _resource_replicas(self, hpa: dict[str, Any], target: dict[str, Any], metric: dict[str, Any],
                           current: int) -> tuple[int, dict[str, Any], str]:
        resource = metric.get("resource") or metric.get("containerResource") or {}
        name = resource.get("name", "cpu")
        goal = resource.get("target") or {}
        provider = self.twin.services.metrics
        prefix = f"failed to get {name} utilization: unable to get metrics for resource {name}"
        if provider is None or not hasattr(provider, "pod_usage"):
            raise MetricError(f"{prefix}: {NO_METRICS_API}")
        pods = self._pods(hpa, target)
        usage_total = 0.0
        request_total = 0.0
        counted = 0
        for pod in pods:
            usage = provider.pod_usage(pod["metadata"]["namespace"], pod["metadata"]["name"])
            if usage is None:
                continue
            counted += 1
            usage_total += float(usage[0] if name == "cpu" else usage[1])
            for c in (pod.get("spec") or {}).get("containers") or []:
                req = ((c.get("resources") or {}).get("requests") or {}).get(name)
                if req is None and goal.get("type", "Utilization") == "Utilization":
                    raise MetricError(f"failed to get {name} utilization: missing request for {name} in "
                                      f"container {c.get('name')} of Pod {pod['metadata']['name']}")
                request_total += float(parse_quantity(req)) if req is not None else 0.0
        if counted == 0:
            raise MetricError(f"{prefix}: no metrics returned from resource metrics API")
        average = usage_total / counted
        shown = format_cpu(average) if name == "cpu" else format_memory(average)
        if goal.get("type", "Utilization") == "Utilization":
            utilization = round(100 * usage_total / request_total) if request_total else 0
            ratio = utilization / float(goal.get("averageUtilization") or 80)
            current_metric = {"averageUtilization": utilization, "averageValue": shown}
            label = f"{name} resource utilization (percentage of request)"
        else:
            target_value = float(parse_quantity(goal.get("averageValue") or goal.get("value") or 1))
            ratio = average / target_value if target_value else 1.0
            current_metric = {"averageValue": shown}
            label = f"{name} resource"
        desired = current if abs(ratio - 1.0) <= TOLERANCE else math.ceil(ratio * counted)
        status_metric = {"type": "Resource", "resource": {"name": name, "current": current_metric}}
        return desired, status_metric, label

    # ------------------------------------------------------------------ sync
    def sync(self, hpa: dict[str, Any], now: float) -> None:
        meta = hpa["metadata"]
        spec = hpa.get("spec") or {}
        old = hpa.get("status") or {}
        status = clone(old)
        conds = {c["type"]: c for c in status.get("conditions") or []}
        iso = self.twin.clock.iso()

        def cond(cond_type: str, value: str, reason: str, message: str) -> None:
            previous = conds.get(cond_type)
            since = previous.get("lastTransitionTime") if previous and previous.get("status") == value else iso
            conds[cond_type] = {"type": cond_type, "status": value, "lastTransitionTime": since,
                                "reason": reason, "message": message}

        kind, target, qualified = self._target(hpa)
        status["observedGeneration"] = int(meta.get("generation") or 1)
        if target is None:
            name = (spec.get("scaleTargetRef") or {}).get("name", "")
            message = f'{qualified} "{name}" not found'
            cond("AbleToScale", "False", "FailedGetScale",
                 f"the HPA controller was unable to get the target's current scale: {message}")
            self.twin.events.warning(hpa, "FailedGetScale", message, component=self.component)
            self._write(hpa, status, conds, old)
            return
        current = int((target.get("spec") or {}).get("replicas") if (target.get("spec") or {}).get(
            "replicas") is not None else 1)
        min_replicas = int(spec.get("minReplicas") if spec.get("minReplicas") is not None else 1)
        max_replicas = int(spec.get("maxReplicas") or current)
        status["currentReplicas"] = current
        desired = current
        reason = ""
        if current == 0 and min_replicas != 0:
            cond("ScalingActive", "False", "ScalingDisabled",
                 "scaling is disabled since the replica count of the target is zero")
            status["desiredReplicas"] = 0
            self._write(hpa, status, conds, old)
            return
        if current > max_replicas:
            desired, reason = max_replicas, "Current number of replicas above Spec.MaxReplicas"
        elif current < min_replicas:
            desired, reason = min_replicas, "Current number of replicas below Spec.MinReplicas"
        else:
            recommendations: list[tuple[int, str]] = []
            current_metrics = []
            errors = []
            for metric in self._metric_specs(hpa):
                if metric.get("type") not in ("Resource", "ContainerResource"):
                    errors.append(f"unable to get metric {metric.get('type')}: no metrics provider")
                    continue
                try:
                    value, shown, label = self._resource_replicas(hpa, target, metric, current)
                except MetricError as exc:
                    errors.append(str(exc))
                    continue
                recommendations.append((value, label))
                current_metrics.append(shown)
            if errors and not recommendations:
                first = errors[0]
                cond("AbleToScale", "True", "SucceededGetScale",
                     "the HPA controller was able to get the target's current scale")
                cond("ScalingActive", "False", "FailedGetResourceMetric",
                     f"the HPA was unable to compute the replica count: {first}")
                self.twin.events.warning(hpa, "FailedGetResourceMetric", first, component=self.component)
                self.twin.events.warning(
                    hpa, "FailedComputeMetricsReplicas",
                    f"invalid metrics ({len(errors)} invalid out of {len(self._metric_specs(hpa))}), first "
                    f"error is: failed to get cpu resource metric value: {first}", component=self.component)
                status["desiredReplicas"] = current
                status.pop("currentMetrics", None)
                self._write(hpa, status, conds, old)
                return
            status["currentMetrics"] = current_metrics
            desired, label = max(recommendations)
            cond("ScalingActive", "True", "ValidMetricFound",
                 f"the HPA was able to successfully calculate a replica count from {label}")
            desired = self._stabilize(hpa, desired, current, now)
            if desired > current:
                desired = min(desired, max(2 * current, current + 4))
                reason = f"{label} above target"
            elif desired < current:
                reason = "All metrics below target"
            if desired > max_replicas:
                cond("ScalingLimited", "True", "TooManyReplicas",
                     "the desired replica count is more than the maximum replica count")
                desired = max_replicas
            elif desired < min_replicas:
                cond("ScalingLimited", "True", "TooFewReplicas",
                     "the desired replica count is less than the minimum replica count")
                desired = min_replicas
            else:
                cond("ScalingLimited", "False", "DesiredWithinRange",
                     "the desired count is within the acceptable range")
        status["desiredReplicas"] = desired
        if desired != current:
            tmeta = target["metadata"]

            def rescale(o: dict[str, Any]) -> None:
                o.setdefault("spec", {})["replicas"] = desired

            try:
                self.twin.store.mutate(kind, tmeta["namespace"], tmeta["name"], rescale, user=self.user)
            except ApiError as exc:
                cond("AbleToScale", "False", "FailedUpdateScale",
                     f"the HPA controller was unable to update the target scale: {exc.message}")
                self.twin.events.warning(hpa, "FailedRescale",
                                         f"New size: {desired}; reason: {reason}; error: {exc.message}",
                                         component=self.component)
                self._write(hpa, status, conds, old)
                return
            cond("AbleToScale", "True", "SucceededRescale",
                 f"the HPA controller was able to update the target scale to {desired}")
            self.twin.events.normal(hpa, "SuccessfulRescale", f"New size: {desired}; reason: {reason}",
                                    component=self.component)
            status["lastScaleTime"] = iso
            status["currentReplicas"] = current
        else:
            cond("AbleToScale", "True", "ReadyForNewScale", "recommended size matches current size")
        self._write(hpa, status, conds, old)

    def _stabilize(self, hpa: dict[str, Any], desired: int, current: int, now: float) -> int:
        """Scale down only to the highest recommendation of the stabilization window."""
        behavior = ((hpa.get("spec") or {}).get("behavior") or {}).get("scaleDown") or {}
        window = float(behavior.get("stabilizationWindowSeconds", DOWNSCALE_WINDOW))
        # Like the real controller, a newly seen HPA's history starts with the current replica count,
        # so it cannot scale down before a whole window of lower recommendations has passed.
        history = self._recommendations.setdefault(hpa["metadata"]["uid"], [(now, current)])
        history.append((now, desired))
        history[:] = [(t, r) for t, r in history if now - t <= window]
        if desired >= current:
            return desired
        return min(current, max(r for _, r in history))

    def _write(self, hpa: dict[str, Any], status: dict[str, Any], conds: dict[str, dict[str, Any]],
               old: dict[str, Any]) -> None:
        order = ("AbleToScale", "ScalingActive", "ScalingLimited")
        status["conditions"] = [conds[t] for t in order if t in conds] + \
            [c for t, c in sorted(conds.items()) if t not in order]
        if status == old:
            return
        meta = hpa["metadata"]

        def put(o: dict[str, Any]) -> None:
            o["status"] = status

        self.twin.store.mutate("HorizontalPodAutoscaler", meta["namespace"], meta["name"], put, status=True,
                               user=self.user)

