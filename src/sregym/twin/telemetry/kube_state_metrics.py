"""kube-state-metrics (v2.x) over the twin's object store.

kube-state-metrics turns the state of API objects into gauges; it never measures anything. So
every value here is read from the stored objects, with ksm's own naming rules:

- one series per object and fact, labelled `namespace` + `<kind>` (`pod`, `deployment`, ...)
  and `uid` for pods; "<none>" for a pod without an owner;
- enumerations as one 0/1 series per value (`kube_pod_status_phase{phase}` for the five phases,
  conditions as `condition`/`status` = true|false|unknown), but *reasons* only while they apply
  (`kube_pod_container_status_waiting_reason{reason="CrashLoopBackOff"} 1` exists only while the
  container waits with that reason — ksm v2 semantics);
- resources as `resource` (sanitised: `ephemeral_storage`, `nvidia_com_gpu`) + `unit`
  (`core`, `byte`, `integer`).

The samples of an object depend only on the object, so they are cached per (uid,
resourceVersion): an unchanged Deployment costs one dict lookup per scrape.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sregym.twin.clock import parse_time
from sregym.twin.machinery.quantity import QuantityError, parse_quantity
from sregym.twin.telemetry.exposition import (
    MONITORING_NAMESPACE,
    RELEASE,
    Batch,
    Family,
    RefTable,
    SeriesRef,
    Target,
)

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

JOB = "kube-state-metrics"
PORT = 8080
# The virtual ksm pod of the monitoring stack (a Deployment pod on a worker).
POD_NAME = f"{RELEASE}-kube-state-metrics-6d7bc5b4f9-h8x2k"
POD_IP = "10.244.1.253"
SERVICE = f"{RELEASE}-kube-state-metrics"

Sample = tuple[str, dict[str, str], float]
Generator = Callable[[dict[str, Any]], list[Sample]]

POD_PHASES = ("Pending", "Succeeded", "Failed", "Unknown", "Running")
POD_STATUS_REASONS = ("Evicted", "NodeAffinity", "NodeLost", "Shutdown", "UnexpectedAdmissionError")
PVC_PHASES = ("Lost", "Bound", "Pending")
PV_PHASES = ("Pending", "Available", "Bound", "Released", "Failed")
NAMESPACE_PHASES = ("Active", "Terminating")
QOS_CLASSES = ("BestEffort", "Burstable", "Guaranteed")


def ksm_target(pod_name: str = POD_NAME, pod_ip: str = POD_IP) -> Target:
    return Target(JOB, f"{pod_ip}:{PORT}", {
        "job": JOB, "instance": f"{pod_ip}:{PORT}", "namespace": MONITORING_NAMESPACE,
        "pod": pod_name, "service": SERVICE, "endpoint": "http", "container": "kube-state-metrics",
    })


def live_ksm_target(twin: Twin) -> Target | None:
    """The target of the running kube-state-metrics pod (None while it is not running); the
    fixed one in a twin without the monitoring stack."""
    from sregym.twin.telemetry import stack

    if not stack.installed(twin):
        return ksm_target()
    pod = stack.stack_target_pod(twin, "kube-state-metrics")
    return ksm_target(*stack.pod_identity(pod)) if pod is not None else None


# ----------------------------------------------------------------------------- helpers
def _ts(text: str | None) -> float | None:
    if not text:
        return None
    try:
        return parse_time(text)
    except ValueError:
        return None


def _bool(value: bool) -> float:
    return 1.0 if value else 0.0


def _condition_samples(name: str, labels: dict[str, str], status: str) -> list[Sample]:
    """ksm's `condition`/`status` enumeration: one 0/1 series for true, false and unknown."""
    actual = (status or "Unknown").lower()
    return [(name, {**labels, "condition": value}, _bool(actual == value))
            for value in ("true", "false", "unknown")]


def _status_samples(name: str, labels: dict[str, str], status: str) -> list[Sample]:
    actual = (status or "Unknown").lower()
    return [(name, {**labels, "status": value}, _bool(actual == value))
            for value in ("true", "false", "unknown")]


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("metadata") or {}


def _num(value: Any, default: float = 0.0) -> float:
    if value is None:
        return default
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


_SANITIZE = re.compile(r"[^a-zA-Z0-9_]")


def resource_label(resource: str) -> tuple[str, str]:
    """(resource label, unit) as ksm sanitises and classifies a resource name."""
    name = _SANITIZE.sub("_", resource)
    if resource == "cpu":
        return name, "core"
    if resource in ("memory", "storage", "ephemeral-storage") or resource.startswith("hugepages-") \
            or resource.startswith("attachable-volumes-"):
        return name, "byte"
    return name, "integer"


def _quantity(value: Any) -> float | None:
    try:
        return float(parse_quantity(value))
    except (QuantityError, ValueError, ArithmeticError):
        return None


def _owner_samples(name: str, labels: dict[str, str], obj: dict[str, Any]) -> list[Sample]:
    refs = _meta(obj).get("ownerReferences") or []
    if not refs:
        return [(name, {**labels, "owner_kind": "<none>", "owner_name": "<none>",
                        "owner_is_controller": "<none>"}, 1.0)]
    return [(name, {**labels, "owner_kind": str(ref.get("kind", "")),
                    "owner_name": str(ref.get("name", "")),
                    "owner_is_controller": "true" if ref.get("controller") else "false"}, 1.0)
            for ref in refs]


def _created(name: str, labels: dict[str, str], obj: dict[str, Any]) -> list[Sample]:
    created = _ts(_meta(obj).get("creationTimestamp"))
    return [] if created is None else [(name, labels, created)]


def _int_or_percent(value: Any, total: int, round_up: bool) -> float:
    if value is None:
        return 0.0
    text = str(value)
    if text.endswith("%"):
        scaled = _num(text[:-1]) * total / 100
        return float(math.ceil(scaled) if round_up else math.floor(scaled))
    return _num(value)


# ------------------------------------------------------------------------------ pods
def pod_samples(pod: dict[str, Any]) -> list[Sample]:
    meta = _meta(pod)
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    base = {"namespace": meta.get("namespace", ""), "pod": meta.get("name", ""),
            "uid": meta.get("uid", "")}
    node = spec.get("nodeName", "")
    out: list[Sample] = []
    controller_ref = next((r for r in meta.get("ownerReferences") or [] if r.get("controller")), None)
    out.append(("kube_pod_info", {
        **base, "host_ip": status.get("hostIP", ""), "pod_ip": status.get("podIP", ""),
        "node": node,
        "created_by_kind": controller_ref.get("kind", "") if controller_ref else "<none>",
        "created_by_name": controller_ref.get("name", "") if controller_ref else "<none>",
        "priority_class": spec.get("priorityClassName", ""),
        "host_network": "true" if spec.get("hostNetwork") else "false"}, 1.0))
    for entry in status.get("podIPs") or []:
        ip = str(entry.get("ip", ""))
        if ip:
            out.append(("kube_pod_ips", {**base, "ip": ip, "ip_family": "6" if ":" in ip else "4"}, 1.0))
    out.extend(_owner_samples("kube_pod_owner", base, pod))
    out.append(("kube_pod_labels", base, 1.0))
    out.extend(_created("kube_pod_created", base, pod))
    start = _ts(status.get("startTime"))
    if start is not None:
        out.append(("kube_pod_start_time", base, start))
    deleted = _ts(meta.get("deletionTimestamp"))
    if deleted is not None:
        out.append(("kube_pod_deletion_timestamp", base, deleted))
    out.append(("kube_pod_restart_policy", {**base, "type": spec.get("restartPolicy", "Always")}, 1.0))
    if spec.get("serviceAccountName"):
        out.append(("kube_pod_service_account",
                    {**base, "service_account": spec["serviceAccountName"]}, 1.0))
    phase = status.get("phase", "")
    if phase:
        out.extend(("kube_pod_status_phase", {**base, "phase": p}, _bool(p == phase)) for p in POD_PHASES)
    qos = status.get("qosClass", "")
    if qos:
        out.extend(("kube_pod_status_qos_class", {**base, "qos_class": q}, _bool(q == qos))
                   for q in QOS_CLASSES)
    reason = status.get("reason", "")
    out.extend(("kube_pod_status_reason", {**base, "reason": r}, _bool(r == reason))
               for r in POD_STATUS_REASONS)
    for cond in status.get("conditions") or []:
        ctype = cond.get("type")
        if ctype == "Ready":
            out.extend(_condition_samples("kube_pod_status_ready", base, cond.get("status", "")))
            ready_at = _ts(cond.get("lastTransitionTime"))
            if cond.get("status") == "True" and ready_at is not None:
                out.append(("kube_pod_status_ready_time", base, ready_at))
        elif ctype == "ContainersReady":
            ready_at = _ts(cond.get("lastTransitionTime"))
            if cond.get("status") == "True" and ready_at is not None:
                out.append(("kube_pod_status_container_ready_time", base, ready_at))
        elif ctype == "PodScheduled":
            out.extend(_condition_samples("kube_pod_status_scheduled", base, cond.get("status", "")))
            at = _ts(cond.get("lastTransitionTime"))
            if cond.get("status") == "True" and at is not None:
                out.append(("kube_pod_status_scheduled_time", base, at))
            if cond.get("status") == "False" and cond.get("reason") == "Unschedulable":
                out.append(("kube_pod_status_unschedulable", base, 1.0))
    for volume in spec.get("volumes") or []:
        claim = volume.get("persistentVolumeClaim")
        if claim:
            vlabels = {**base, "volume": volume.get("name", ""),
                       "persistentvolumeclaim": claim.get("claimName", "")}
            out.append(("kube_pod_spec_volumes_persistentvolumeclaims_info", vlabels, 1.0))
            out.append(("kube_pod_spec_volumes_persistentvolumeclaims_readonly", vlabels,
                        _bool(bool(claim.get("readOnly")))))
    out.extend(_container_samples("kube_pod_container", base, node, spec.get("containers") or [],
                                  status.get("containerStatuses") or []))
    out.extend(_container_samples("kube_pod_init_container", base, node, spec.get("initContainers") or [],
                                  status.get("initContainerStatuses") or []))
    return out


def _container_samples(prefix: str, base: dict[str, str], node: str, containers: list[dict[str, Any]],
                       statuses: list[dict[str, Any]]) -> list[Sample]:
    out: list[Sample] = []
    by_name = {s.get("name"): s for s in statuses}
    for container in containers:
        cname = container.get("name", "")
        labels = {**base, "container": cname}
        resources = container.get("resources") or {}
        for field_name, metric in (("requests", f"{prefix}_resource_requests"),
                                   ("limits", f"{prefix}_resource_limits")):
            for resource, quantity in sorted((resources.get(field_name) or {}).items()):
                value = _quantity(quantity)
                if value is None:
                    continue
                rname, unit = resource_label(resource)
                out.append((metric, {**labels, "node": node, "resource": rname, "unit": unit}, value))
        cs = by_name.get(cname)
        if cs is None:
            continue
        out.append((f"{prefix}_info", {**labels, "image_spec": container.get("image", ""),
                                       "image": cs.get("image", ""), "image_id": cs.get("imageID", ""),
                                       "container_id": cs.get("containerID", "")}, 1.0))
        state = cs.get("state") or {}
        waiting, running, terminated = state.get("waiting"), state.get("running"), state.get("terminated")
        out.append((f"{prefix}_status_waiting", labels, _bool(waiting is not None)))
        if waiting is not None and waiting.get("reason"):
            out.append((f"{prefix}_status_waiting_reason", {**labels, "reason": waiting["reason"]}, 1.0))
        out.append((f"{prefix}_status_running", labels, _bool(running is not None)))
        if running is not None:
            started = _ts(running.get("startedAt"))
            if started is not None:
                out.append((f"{prefix}_state_started", labels, started))
        out.append((f"{prefix}_status_terminated", labels, _bool(terminated is not None)))
        if terminated is not None:
            if terminated.get("reason"):
                out.append((f"{prefix}_status_terminated_reason",
                            {**labels, "reason": terminated["reason"]}, 1.0))
            started = _ts(terminated.get("startedAt"))
            if started is not None:
                out.append((f"{prefix}_state_started", labels, started))
        last = (cs.get("lastState") or {}).get("terminated")
        if last is not None:
            if last.get("reason"):
                out.append((f"{prefix}_status_last_terminated_reason",
                            {**labels, "reason": last["reason"]}, 1.0))
            out.append((f"{prefix}_status_last_terminated_exitcode", labels, _num(last.get("exitCode"))))
            finished = _ts(last.get("finishedAt"))
            if finished is not None:
                out.append((f"{prefix}_status_last_terminated_timestamp", labels, finished))
        out.append((f"{prefix}_status_ready", labels, _bool(bool(cs.get("ready")))))
        out.append((f"{prefix}_status_restarts_total", labels, _num(cs.get("restartCount"))))
    return out


# ------------------------------------------------------------------------- workloads
def _nsname(obj: dict[str, Any], kind_label: str) -> dict[str, str]:
    meta = _meta(obj)
    return {"namespace": meta.get("namespace", ""), kind_label: meta.get("name", "")}


def _conditions(name: str, labels: dict[str, str], obj: dict[str, Any]) -> list[Sample]:
    out: list[Sample] = []
    for cond in (obj.get("status") or {}).get("conditions") or []:
        out.extend(_status_samples(name, {**labels, "condition": cond.get("type", "")},
                                   cond.get("status", "")))
    return out


def deployment_samples(d: dict[str, Any]) -> list[Sample]:
    labels = _nsname(d, "deployment")
    spec, status = d.get("spec") or {}, d.get("status") or {}
    replicas = int(_num(spec.get("replicas"), 1))
    out: list[Sample] = [("kube_deployment_labels", labels, 1.0)]
    out.extend(_created("kube_deployment_created", labels, d))
    out += [
        ("kube_deployment_spec_replicas", labels, replicas),
        ("kube_deployment_spec_paused", labels, _bool(bool(spec.get("paused")))),
        ("kube_deployment_metadata_generation", labels, _num(_meta(d).get("generation"))),
        ("kube_deployment_status_observed_generation", labels, _num(status.get("observedGeneration"))),
        ("kube_deployment_status_replicas", labels, _num(status.get("replicas"))),
        ("kube_deployment_status_replicas_available", labels, _num(status.get("availableReplicas"))),
        ("kube_deployment_status_replicas_unavailable", labels, _num(status.get("unavailableReplicas"))),
        ("kube_deployment_status_replicas_updated", labels, _num(status.get("updatedReplicas"))),
        ("kube_deployment_status_replicas_ready", labels, _num(status.get("readyReplicas"))),
    ]
    strategy = spec.get("strategy") or {}
    if strategy.get("type", "RollingUpdate") == "RollingUpdate":
        rolling = strategy.get("rollingUpdate") or {}
        out.append(("kube_deployment_spec_strategy_rollingupdate_max_unavailable", labels,
                    _int_or_percent(rolling.get("maxUnavailable", "25%"), replicas, False)))
        out.append(("kube_deployment_spec_strategy_rollingupdate_max_surge", labels,
                    _int_or_percent(rolling.get("maxSurge", "25%"), replicas, True)))
    out.extend(_conditions("kube_deployment_status_condition", labels, d))
    return out


def replicaset_samples(rs: dict[str, Any]) -> list[Sample]:
    labels = _nsname(rs, "replicaset")
    spec, status = rs.get("spec") or {}, rs.get("status") or {}
    out: list[Sample] = [("kube_replicaset_labels", labels, 1.0)]
    out.extend(_created("kube_replicaset_created", labels, rs))
    out.extend(_owner_samples("kube_replicaset_owner", labels, rs))
    out += [
        ("kube_replicaset_spec_replicas", labels, _num(spec.get("replicas"), 1)),
        ("kube_replicaset_status_replicas", labels, _num(status.get("replicas"))),
        ("kube_replicaset_status_ready_replicas", labels, _num(status.get("readyReplicas"))),
        ("kube_replicaset_status_fully_labeled_replicas", labels, _num(status.get("fullyLabeledReplicas"))),
        ("kube_replicaset_status_observed_generation", labels, _num(status.get("observedGeneration"))),
        ("kube_replicaset_metadata_generation", labels, _num(_meta(rs).get("generation"))),
    ]
    return out


def statefulset_samples(sts: dict[str, Any]) -> list[Sample]:
    labels = _nsname(sts, "statefulset")
    spec, status = sts.get("spec") or {}, sts.get("status") or {}
    out: list[Sample] = [("kube_statefulset_labels", labels, 1.0)]
    out.extend(_created("kube_statefulset_created", labels, sts))
    out += [
        ("kube_statefulset_replicas", labels, _num(spec.get("replicas"), 1)),
        ("kube_statefulset_status_replicas", labels, _num(status.get("replicas"))),
        ("kube_statefulset_status_replicas_ready", labels, _num(status.get("readyReplicas"))),
        ("kube_statefulset_status_replicas_current", labels, _num(status.get("currentReplicas"))),
        ("kube_statefulset_status_replicas_updated", labels, _num(status.get("updatedReplicas"))),
        ("kube_statefulset_status_replicas_available", labels, _num(status.get("availableReplicas"))),
        ("kube_statefulset_status_observed_generation", labels, _num(status.get("observedGeneration"))),
        ("kube_statefulset_metadata_generation", labels, _num(_meta(sts).get("generation"))),
    ]
    if status.get("currentRevision"):
        out.append(("kube_statefulset_status_current_revision",
                    {**labels, "revision": status["currentRevision"]}, 1.0))
    if status.get("updateRevision"):
        out.append(("kube_statefulset_status_update_revision",
                    {**labels, "revision": status["updateRevision"]}, 1.0))
    return out


def daemonset_samples(ds: dict[str, Any]) -> list[Sample]:
    labels = _nsname(ds, "daemonset")
    status = ds.get("status") or {}
    out: list[Sample] = [("kube_daemonset_labels", labels, 1.0)]
    out.extend(_created("kube_daemonset_created", labels, ds))
    for metric, key in (("status_current_number_scheduled", "currentNumberScheduled"),
                        ("status_desired_number_scheduled", "desiredNumberScheduled"),
                        ("status_number_available", "numberAvailable"),
                        ("status_number_misscheduled", "numberMisscheduled"),
                        ("status_number_ready", "numberReady"),
                        ("status_number_unavailable", "numberUnavailable"),
                        ("status_observed_generation", "observedGeneration"),
                        ("status_updated_number_scheduled", "updatedNumberScheduled")):
        out.append((f"kube_daemonset_{metric}", labels, _num(status.get(key))))
    out.append(("kube_daemonset_metadata_generation", labels, _num(_meta(ds).get("generation"))))
    return out


def job_samples(job: dict[str, Any]) -> list[Sample]:
    labels = _nsname(job, "job_name")
    spec, status = job.get("spec") or {}, job.get("status") or {}
    out: list[Sample] = [("kube_job_info", labels, 1.0), ("kube_job_labels", labels, 1.0)]
    out.extend(_created("kube_job_created", labels, job))
    out.extend(_owner_samples("kube_job_owner", labels, job))
    out.append(("kube_job_spec_parallelism", labels, _num(spec.get("parallelism"), 1)))
    if spec.get("completions") is not None:
        out.append(("kube_job_spec_completions", labels, _num(spec.get("completions"))))
    if spec.get("activeDeadlineSeconds") is not None:
        out.append(("kube_job_spec_active_deadline_seconds", labels, _num(spec["activeDeadlineSeconds"])))
    out += [("kube_job_status_active", labels, _num(status.get("active"))),
            ("kube_job_status_succeeded", labels, _num(status.get("succeeded"))),
            ("kube_job_status_failed", labels, _num(status.get("failed")))]
    for key, metric in (("startTime", "kube_job_status_start_time"),
                        ("completionTime", "kube_job_status_completion_time")):
        at = _ts(status.get(key))
        if at is not None:
            out.append((metric, labels, at))
    for cond in status.get("conditions") or []:
        if cond.get("type") == "Complete":
            out.extend(_condition_samples("kube_job_complete", labels, cond.get("status", "")))
        elif cond.get("type") == "Failed":
            out.extend(_condition_samples("kube_job_failed", labels, cond.get("status", "")))
    return out


def cronjob_samples(cj: dict[str, Any]) -> list[Sample]:
    labels = _nsname(cj, "cronjob")
    spec, status = cj.get("spec") or {}, cj.get("status") or {}
    out: list[Sample] = [
        ("kube_cronjob_info", {**labels, "schedule": spec.get("schedule", ""),
                               "concurrency_policy": spec.get("concurrencyPolicy", "Allow")}, 1.0),
        ("kube_cronjob_labels", labels, 1.0),
        ("kube_cronjob_spec_suspend", labels, _bool(bool(spec.get("suspend")))),
        ("kube_cronjob_status_active", labels, float(len(status.get("active") or []))),
        ("kube_cronjob_spec_successful_job_history_limit", labels,
         _num(spec.get("successfulJobsHistoryLimit"), 3)),
        ("kube_cronjob_spec_failed_job_history_limit", labels, _num(spec.get("failedJobsHistoryLimit"), 1)),
        ("kube_cronjob_metadata_resource_version", labels, _num(_meta(cj).get("resourceVersion"))),
    ]
    out.extend(_created("kube_cronjob_created", labels, cj))
    if spec.get("startingDeadlineSeconds") is not None:
        out.append(("kube_cronjob_spec_starting_deadline_seconds", labels,
                    _num(spec["startingDeadlineSeconds"])))
    last = _ts(status.get("lastScheduleTime"))
    if last is not None:
        out.append(("kube_cronjob_status_last_schedule_time", labels, last))
    success = _ts(status.get("lastSuccessfulTime"))
    if success is not None:
        out.append(("kube_cronjob_status_last_successful_time", labels, success))
    following = _next_schedule(spec, last if last is not None else _ts(_meta(cj).get("creationTimestamp")))
    if following is not None and not spec.get("suspend"):
        out.append(("kube_cronjob_next_schedule_time", labels, following))
    return out


def _next_schedule(spec: dict[str, Any], after: float | None) -> float | None:
    """ksm: the schedule's next activation after the last schedule time (or creation)."""
    if after is None:
        return None
    try:
        from croniter import croniter

        it = croniter(str(spec.get("schedule", "")), datetime.fromtimestamp(after, tz=UTC))
        return float(it.get_next(datetime).timestamp())
    except Exception:  # an unparsable schedule: ksm logs and skips the series
        return None


def hpa_samples(hpa: dict[str, Any]) -> list[Sample]:
    labels = _nsname(hpa, "horizontalpodautoscaler")
    spec, status = hpa.get("spec") or {}, hpa.get("status") or {}
    ref = spec.get("scaleTargetRef") or {}
    out: list[Sample] = [
        ("kube_horizontalpodautoscaler_info", {**labels, "scaletargetref_api_version": ref.get("apiVersion", ""),
                                               "scaletargetref_kind": ref.get("kind", ""),
                                               "scaletargetref_name": ref.get("name", "")}, 1.0),
        ("kube_horizontalpodautoscaler_labels", labels, 1.0),
        ("kube_horizontalpodautoscaler_metadata_generation", labels, _num(_meta(hpa).get("generation"))),
        ("kube_horizontalpodautoscaler_spec_max_replicas", labels, _num(spec.get("maxReplicas"))),
        ("kube_horizontalpodautoscaler_spec_min_replicas", labels, _num(spec.get("minReplicas"), 1)),
        ("kube_horizontalpodautoscaler_status_current_replicas", labels, _num(status.get("currentReplicas"))),
        ("kube_horizontalpodautoscaler_status_desired_replicas", labels, _num(status.get("desiredReplicas"))),
    ]
    for metric in spec.get("metrics") or []:
        if metric.get("type") != "Resource":
            continue
        resource = metric.get("resource") or {}
        target = resource.get("target") or {}
        if target.get("averageUtilization") is not None:
            out.append(("kube_horizontalpodautoscaler_spec_target_metric",
                        {**labels, "metric_name": resource.get("name", ""),
                         "metric_target_type": "utilization"}, _num(target["averageUtilization"])))
        elif target.get("averageValue") is not None:
            value = _quantity(target["averageValue"])
            if value is not None:
                out.append(("kube_horizontalpodautoscaler_spec_target_metric",
                            {**labels, "metric_name": resource.get("name", ""),
                             "metric_target_type": "average"}, value))
    for cond in status.get("conditions") or []:
        out.extend(_status_samples("kube_horizontalpodautoscaler_status_condition",
                                   {**labels, "condition": cond.get("type", "")}, cond.get("status", "")))
    return out


def pdb_samples(pdb: dict[str, Any]) -> list[Sample]:
    labels = _nsname(pdb, "poddisruptionbudget")
    status = pdb.get("status") or {}
    out: list[Sample] = _created("kube_poddisruptionbudget_created", labels, pdb)
    for metric, key in (("status_current_healthy", "currentHealthy"),
                        ("status_desired_healthy", "desiredHealthy"),
                        ("status_expected_pods", "expectedPods"),
                        ("status_pod_disruptions_allowed", "disruptionsAllowed"),
                        ("status_observed_generation", "observedGeneration")):
        out.append((f"kube_poddisruptionbudget_{metric}", labels, _num(status.get(key))))
    return out


# ---------------------------------------------------------------------- nodes, storage
def node_samples(node: dict[str, Any]) -> list[Sample]:
    meta, spec, status = _meta(node), node.get("spec") or {}, node.get("status") or {}
    labels = {"node": meta.get("name", "")}
    info = status.get("nodeInfo") or {}
    internal_ip = next((a.get("address", "") for a in status.get("addresses") or []
                        if a.get("type") == "InternalIP"), "")
    out: list[Sample] = [
        ("kube_node_info", {**labels, "kernel_version": info.get("kernelVersion", ""),
                            "os_image": info.get("osImage", ""),
                            "container_runtime_version": info.get("containerRuntimeVersion", ""),
                            "kubelet_version": info.get("kubeletVersion", ""),
                            "kubeproxy_version": info.get("kubeProxyVersion", ""),
                            "provider_id": spec.get("providerID", ""), "pod_cidr": spec.get("podCIDR", ""),
                            "system_uuid": info.get("systemUUID", ""), "internal_ip": internal_ip}, 1.0),
        ("kube_node_labels", labels, 1.0),
        ("kube_node_spec_unschedulable", labels, _bool(bool(spec.get("unschedulable")))),
    ]
    out.extend(_created("kube_node_created", labels, node))
    for key in sorted(meta.get("labels") or {}):
        if key.startswith("node-role.kubernetes.io/"):
            out.append(("kube_node_role", {**labels, "role": key.split("/", 1)[1]}, 1.0))
    for taint in spec.get("taints") or []:
        out.append(("kube_node_spec_taint", {**labels, "key": taint.get("key", ""),
                                             "value": taint.get("value", ""),
                                             "effect": taint.get("effect", "")}, 1.0))
    for cond in status.get("conditions") or []:
        out.extend(_status_samples("kube_node_status_condition",
                                   {**labels, "condition": cond.get("type", "")}, cond.get("status", "")))
    for field_name, metric in (("capacity", "kube_node_status_capacity"),
                               ("allocatable", "kube_node_status_allocatable")):
        for resource, quantity in sorted((status.get(field_name) or {}).items()):
            value = _quantity(quantity)
            if value is None:
                continue
            rname, unit = resource_label(resource)
            out.append((metric, {**labels, "resource": rname, "unit": unit}, value))
    return out


def pvc_samples(pvc: dict[str, Any]) -> list[Sample]:
    labels = _nsname(pvc, "persistentvolumeclaim")
    spec, status = pvc.get("spec") or {}, pvc.get("status") or {}
    out: list[Sample] = [
        ("kube_persistentvolumeclaim_info", {**labels, "storageclass": spec.get("storageClassName", ""),
                                             "volumename": spec.get("volumeName", ""),
                                             "volumemode": spec.get("volumeMode", "Filesystem")}, 1.0),
        ("kube_persistentvolumeclaim_labels", labels, 1.0),
    ]
    out.extend(_created("kube_persistentvolumeclaim_created", labels, pvc))
    phase = status.get("phase", "Pending")
    out.extend(("kube_persistentvolumeclaim_status_phase", {**labels, "phase": p}, _bool(p == phase))
               for p in PVC_PHASES)
    request = _quantity(((spec.get("resources") or {}).get("requests") or {}).get("storage"))
    if request is not None:
        out.append(("kube_persistentvolumeclaim_resource_requests_storage_bytes", labels, request))
    for mode in spec.get("accessModes") or []:
        out.append(("kube_persistentvolumeclaim_access_mode", {**labels, "access_mode": mode}, 1.0))
    return out


def pv_samples(pv: dict[str, Any]) -> list[Sample]:
    labels = {"persistentvolume": _meta(pv).get("name", "")}
    spec, status = pv.get("spec") or {}, pv.get("status") or {}
    out: list[Sample] = [
        ("kube_persistentvolume_info", {**labels, "storageclass": spec.get("storageClassName", ""),
                                        "host_path": (spec.get("hostPath") or {}).get("path", ""),
                                        "local_path": (spec.get("local") or {}).get("path", ""),
                                        "csi_driver": (spec.get("csi") or {}).get("driver", "")}, 1.0),
        ("kube_persistentvolume_labels", labels, 1.0),
    ]
    out.extend(_created("kube_persistentvolume_created", labels, pv))
    phase = status.get("phase", "Pending")
    out.extend(("kube_persistentvolume_status_phase", {**labels, "phase": p}, _bool(p == phase))
               for p in PV_PHASES)
    capacity = _quantity((spec.get("capacity") or {}).get("storage"))
    if capacity is not None:
        out.append(("kube_persistentvolume_capacity_bytes", labels, capacity))
    ref = spec.get("claimRef")
    if ref:
        out.append(("kube_persistentvolume_claim_ref", {**labels, "name": ref.get("name", ""),
                                                        "claim_namespace": ref.get("namespace", "")}, 1.0))
    return out


def resourcequota_samples(quota: dict[str, Any]) -> list[Sample]:
    labels = _nsname(quota, "resourcequota")
    status = quota.get("status") or {}
    out: list[Sample] = _created("kube_resourcequota_created", labels, quota)
    for kind in ("hard", "used"):
        for resource, quantity in sorted((status.get(kind) or {}).items()):
            value = _quantity(quantity)
            if value is not None:
                out.append(("kube_resourcequota", {**labels, "resource": resource, "type": kind}, value))
    return out


# ------------------------------------------------------------------------ networking
def endpoints_samples(ep: dict[str, Any]) -> list[Sample]:
    labels = _nsname(ep, "endpoint")
    out: list[Sample] = [("kube_endpoint_info", labels, 1.0), ("kube_endpoint_labels", labels, 1.0)]
    out.extend(_created("kube_endpoint_created", labels, ep))
    for subset in ep.get("subsets") or []:
        for key, ready in (("addresses", "true"), ("notReadyAddresses", "false")):
            for address in subset.get(key) or []:
                out.append(("kube_endpoint_address", {**labels, "ip": address.get("ip", ""),
                                                      "ready": ready}, 1.0))
        for port in subset.get("ports") or []:
            out.append(("kube_endpoint_ports", {**labels, "port_name": port.get("name", ""),
                                                "port_protocol": port.get("protocol", "TCP"),
                                                "port_number": str(port.get("port", ""))}, 1.0))
    return out


def service_samples(svc: dict[str, Any]) -> list[Sample]:
    meta, spec = _meta(svc), svc.get("spec") or {}
    labels = _nsname(svc, "service")
    ingress = ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    out: list[Sample] = [
        ("kube_service_info", {**labels, "uid": meta.get("uid", ""), "cluster_ip": spec.get("clusterIP", ""),
                               "external_name": spec.get("externalName", ""),
                               "load_balancer_ip": ingress[0].get("ip", "") if ingress else ""}, 1.0),
        ("kube_service_spec_type", {**labels, "uid": meta.get("uid", ""),
                                    "type": spec.get("type", "ClusterIP")}, 1.0),
        ("kube_service_labels", labels, 1.0),
    ]
    out.extend(_created("kube_service_created", labels, svc))
    return out


def namespace_samples(ns: dict[str, Any]) -> list[Sample]:
    labels = {"namespace": _meta(ns).get("name", "")}
    phase = (ns.get("status") or {}).get("phase", "Active")
    out: list[Sample] = [("kube_namespace_labels", labels, 1.0)]
    out.extend(_created("kube_namespace_created", labels, ns))
    out.extend(("kube_namespace_status_phase", {**labels, "phase": p}, _bool(p == phase))
               for p in NAMESPACE_PHASES)
    return out


def configmap_samples(cm: dict[str, Any]) -> list[Sample]:
    labels = _nsname(cm, "configmap")
    out: list[Sample] = [("kube_configmap_info", labels, 1.0),
                         ("kube_configmap_metadata_resource_version", labels,
                          _num(_meta(cm).get("resourceVersion")))]
    out.extend(_created("kube_configmap_created", labels, cm))
    return out


def secret_samples(secret: dict[str, Any]) -> list[Sample]:
    labels = _nsname(secret, "secret")
    out: list[Sample] = [("kube_secret_info", labels, 1.0),
                         ("kube_secret_type", {**labels, "type": secret.get("type", "Opaque")}, 1.0),
                         ("kube_secret_metadata_resource_version", labels,
                          _num(_meta(secret).get("resourceVersion")))]
    out.extend(_created("kube_secret_created", labels, secret))
    return out


# Kinds in the order ksm's stores are registered; each with its sample generator.
GENERATORS: tuple[tuple[str, Generator], ...] = (
    ("ConfigMap", configmap_samples),
    ("CronJob", cronjob_samples),
    ("DaemonSet", daemonset_samples),
    ("Deployment", deployment_samples),
    ("Endpoints", endpoints_samples),
    ("HorizontalPodAutoscaler", hpa_samples),
    ("Job", job_samples),
    ("Namespace", namespace_samples),
    ("Node", node_samples),
    ("PersistentVolume", pv_samples),
    ("PersistentVolumeClaim", pvc_samples),
    ("PodDisruptionBudget", pdb_samples),
    ("Pod", pod_samples),
    ("ReplicaSet", replicaset_samples),
    ("ResourceQuota", resourcequota_samples),
    ("Secret", secret_samples),
    ("Service", service_samples),
    ("StatefulSet", statefulset_samples),
)


class KubeStateMetrics:
    """The kube-state-metrics target: samples of every stored object, cached per version."""

    def __init__(self, twin: Twin) -> None:
        self.twin = twin
        self.target = ksm_target()
        self._kinds = [(twin.store.kind(kind), gen) for kind, gen in GENERATORS]
        self._cache: dict[tuple[str, str], list[tuple[SeriesRef, float]]] = {}
        # Objects rewritten with the same series (lease renewals, status writes) reuse their refs.
        self._refs = RefTable()
        self.families = FAMILIES

    def collect(self, now: float) -> list[Batch]:
        target = live_ksm_target(self.twin)
        if target is None:
            return []
        if target.labels != self.target.labels:  # a new pod: series refs carry the target labels
            self.target, self._cache = target, {}
        batch = Batch(self.target)
        cache: dict[tuple[str, str], list[tuple[SeriesRef, float]]] = {}
        old = self._cache
        samples = batch.samples
        ref, refs = self._refs.ref, self._refs.refs_for(batch)
        for kind, generate in self._kinds:
            for obj in self.twin.store.scan(kind):
                meta = obj.get("metadata") or {}
                ident = (meta.get("uid") or f"{kind.kind}/{meta.get('namespace', '')}/{meta.get('name', '')}",
                         meta.get("resourceVersion", ""))
                rows = old.get(ident)
                if rows is None:
                    rows = [(ref(batch, refs, name, labels), float(value)) for name, labels, value in generate(obj)]
                cache[ident] = rows
                samples.extend(rows)
        self._cache = cache
        return [batch]


def _f(name: str, help_text: str, kind: str = "gauge") -> Family:
    return Family(name, kind, help_text)


def _families() -> tuple[Family, ...]:
    gauges = {
        "kube_pod_info": "[STABLE] Information about pod.",
        "kube_pod_ips": "Pod IP addresses",
        "kube_pod_owner": "[STABLE] Information about the Pod's owner.",
        "kube_pod_labels": "[STABLE] Kubernetes labels converted to Prometheus labels.",
        "kube_pod_created": "[STABLE] Unix creation timestamp",
        "kube_pod_start_time": "[STABLE] Start time in unix timestamp for a pod.",
        "kube_pod_deletion_timestamp": "Unix deletion timestamp",
        "kube_pod_restart_policy": "[STABLE] Describes the restart policy in use by this pod.",
        "kube_pod_service_account": "The service account for a pod.",
        "kube_pod_status_phase": "[STABLE] The pods current phase.",
        "kube_pod_status_qos_class": "The pods current qosClass.",
        "kube_pod_status_reason": "The pod status reasons",
        "kube_pod_status_ready": "[STABLE] Describes whether the pod is ready to serve requests.",
        "kube_pod_status_ready_time": "Readiness achieved time in unix timestamp for a pod.",
        "kube_pod_status_container_ready_time": "Readiness achieved time in unix timestamp for a pod containers.",
        "kube_pod_status_scheduled": "[STABLE] Describes the status of the scheduling process for the pod.",
        "kube_pod_status_scheduled_time": "[STABLE] Unix timestamp when pod moved into scheduled status",
        "kube_pod_status_unschedulable": "[STABLE] Describes the unschedulable status for the pod.",
        "kube_pod_spec_volumes_persistentvolumeclaims_info":
            "[STABLE] Information about persistentvolumeclaim volumes in a pod.",
        "kube_pod_spec_volumes_persistentvolumeclaims_readonly":
            "[STABLE] Describes whether a persistentvolumeclaim is mounted read only.",
    }
    for prefix, what in (("kube_pod_container", "container"), ("kube_pod_init_container", "init container")):
        gauges.update({
            f"{prefix}_info": f"[STABLE] Information about a {what} in a pod.",
            f"{prefix}_resource_requests": f"The number of requested request resource by a {what}.",
            f"{prefix}_resource_limits": f"The number of requested limit resource by a {what}.",
            f"{prefix}_status_waiting": f"[STABLE] Describes whether the {what} is currently in waiting state.",
            f"{prefix}_status_waiting_reason": f"[STABLE] Describes the reason the {what} is currently in "
                                               "waiting state.",
            f"{prefix}_status_running": f"[STABLE] Describes whether the {what} is currently in running state.",
            f"{prefix}_state_started": f"[STABLE] Start time in unix timestamp for a pod {what}.",
            f"{prefix}_status_terminated": f"[STABLE] Describes whether the {what} is currently in "
                                           "terminated state.",
            f"{prefix}_status_terminated_reason": f"[STABLE] Describes the reason the {what} is currently in "
                                                  "terminated state.",
            f"{prefix}_status_last_terminated_reason": f"Describes the last reason the {what} was in "
                                                       "terminated state.",
            f"{prefix}_status_last_terminated_exitcode": f"Describes the exit code for the last {what} in "
                                                         "terminated state.",
            f"{prefix}_status_last_terminated_timestamp": f"Last terminated time for a pod {what} in unix "
                                                          "timestamp.",
            f"{prefix}_status_ready": f"[STABLE] Describes whether the {what}s readiness check succeeded.",
        })
    gauges.update({
        "kube_deployment_labels": "[STABLE] Kubernetes labels converted to Prometheus labels.",
        "kube_deployment_created": "[STABLE] Unix creation timestamp",
        "kube_deployment_spec_replicas": "[STABLE] Number of desired pods for a deployment.",
        "kube_deployment_spec_paused": "[STABLE] Whether the deployment is paused and will not be processed "
                                       "by the deployment controller.",
        "kube_deployment_metadata_generation": "[STABLE] Sequence number representing a specific generation "
                                               "of the desired state.",
        "kube_deployment_status_observed_generation": "[STABLE] The generation observed by the deployment "
                                                      "controller.",
        "kube_deployment_status_replicas": "[STABLE] The number of replicas per deployment.",
        "kube_deployment_status_replicas_available": "[STABLE] The number of available replicas per "
                                                     "deployment.",
        "kube_deployment_status_replicas_unavailable": "[STABLE] The number of unavailable replicas per "
                                                       "deployment.",
        "kube_deployment_status_replicas_updated": "[STABLE] The number of updated replicas per deployment.",
        "kube_deployment_status_replicas_ready": "[STABLE] The number of ready replicas per deployment.",
        "kube_deployment_spec_strategy_rollingupdate_max_unavailable":
            "[STABLE] Maximum number of unavailable replicas during a rolling update of a deployment.",
        "kube_deployment_spec_strategy_rollingupdate_max_surge":
            "[STABLE] Maximum number of replicas that can be scheduled above the desired number of replicas "
            "during a rolling update of a deployment.",
        "kube_deployment_status_condition": "[STABLE] The current status conditions of a deployment.",
        "kube_replicaset_labels": "[STABLE] Kubernetes labels converted to Prometheus labels.",
        "kube_replicaset_created": "[STABLE] Unix creation timestamp",
        "kube_replicaset_owner": "[STABLE] Information about the ReplicaSet's owner.",
        "kube_replicaset_spec_replicas": "[STABLE] Number of desired pods for a ReplicaSet.",
        "kube_replicaset_status_replicas": "[STABLE] The number of replicas per ReplicaSet.",
        "kube_replicaset_status_ready_replicas": "[STABLE] The number of ready replicas per ReplicaSet.",
        "kube_replicaset_status_fully_labeled_replicas": "[STABLE] The number of fully labeled replicas per "
                                                         "ReplicaSet.",
        "kube_replicaset_status_observed_generation": "[STABLE] The generation observed by the ReplicaSet "
                                                      "controller.",
        "kube_replicaset_metadata_generation": "[STABLE] Sequence number representing a specific generation "
                                               "of the desired state.",
        "kube_statefulset_labels": "[STABLE] Kubernetes labels converted to Prometheus labels.",
        "kube_statefulset_created": "[STABLE] Unix creation timestamp",
        "kube_statefulset_replicas": "[STABLE] Number of desired pods for a StatefulSet.",
        "kube_statefulset_status_replicas": "[STABLE] The number of replicas per StatefulSet.",
        "kube_statefulset_status_replicas_ready": "[STABLE] The number of ready replicas per StatefulSet.",
        "kube_statefulset_status_replicas_current": "[STABLE] The number of current replicas per "
                                                    "StatefulSet.",
        "kube_statefulset_status_replicas_updated": "[STABLE] The number of updated replicas per "
                                                    "StatefulSet.",
        "kube_statefulset_status_replicas_available": "The number of available replicas per StatefulSet.",
        "kube_statefulset_status_observed_generation": "[STABLE] The generation observed by the StatefulSet "
                                                       "controller.",
        "kube_statefulset_metadata_generation": "[STABLE] Sequence number representing a specific generation "
                                                "of the desired state for the StatefulSet.",
        "kube_statefulset_status_current_revision": "[STABLE] Indicates the version of the StatefulSet used to "
                                                    "generate Pods in the sequence [0,currentReplicas).",
        "kube_statefulset_status_update_revision": "[STABLE] Indicates the version of the StatefulSet used to "
                                                   "generate Pods in the sequence "
                                                   "[replicas-updatedReplicas,replicas)",
        "kube_daemonset_labels": "[STABLE] Kubernetes labels converted to Prometheus labels.",
        "kube_daemonset_created": "[STABLE] Unix creation timestamp",
        "kube_daemonset_status_current_number_scheduled": "[STABLE] The number of nodes running at least one "
                                                          "daemon pod and are supposed to.",
        "kube_daemonset_status_desired_number_scheduled": "[STABLE] The number of nodes that should be running "
                                                          "the daemon pod.",
        "kube_daemonset_status_number_available": "[STABLE] The number of nodes that should be running the "
                                                  "daemon pod and have one or more of the daemon pod running "
                                                  "and available",
        "kube_daemonset_status_number_misscheduled": "[STABLE] The number of nodes running a daemon pod but "
                                                     "are not supposed to.",
        "kube_daemonset_status_number_ready": "[STABLE] The number of nodes that should be running the daemon "
                                              "pod and have one or more of the daemon pod running and ready.",
        "kube_daemonset_status_number_unavailable": "[STABLE] The number of nodes that should be running the "
                                                    "daemon pod and have none of the daemon pod running and "
                                                    "available",
        "kube_daemonset_status_observed_generation": "[STABLE] The most recent generation observed by the "
                                                     "daemon set controller.",
        "kube_daemonset_status_updated_number_scheduled": "[STABLE] The total number of nodes that are running "
                                                          "updated daemon pod",
        "kube_daemonset_metadata_generation": "[STABLE] Sequence number representing a specific generation of "
                                              "the desired state.",
        "kube_job_info": "[STABLE] Information about job.",
        "kube_job_labels": "[STABLE] Kubernetes labels converted to Prometheus labels.",
        "kube_job_created": "[STABLE] Unix creation timestamp",
        "kube_job_owner": "[STABLE] Information about the Job's owner.",
        "kube_job_spec_parallelism": "[STABLE] The maximum desired number of pods the job should run at any "
                                     "given time.",
        "kube_job_spec_completions": "[STABLE] The desired number of successfully finished pods the job should "
                                     "be run with.",
        "kube_job_spec_active_deadline_seconds": "[STABLE] The duration in seconds relative to the startTime "
                                                 "that the job may be active before the system tries to "
                                                 "terminate it.",
        "kube_job_status_active": "[STABLE] The number of actively running pods.",
        "kube_job_status_succeeded": "[STABLE] The number of pods which reached Phase Succeeded.",
        "kube_job_status_failed": "[STABLE] The number of pods which reached Phase Failed and the reason for "
                                  "failure.",
        "kube_job_status_start_time": "[STABLE] StartTime represents time when the job was acknowledged by the "
                                      "Job Manager.",
        "kube_job_status_completion_time": "[STABLE] CompletionTime represents time when the job was "
                                           "completed.",
        "kube_job_complete": "[STABLE] The job has completed its execution.",
        "kube_job_failed": "[STABLE] The job has failed its execution.",
        "kube_cronjob_info": "[STABLE] Info about cronjob.",
        "kube_cronjob_labels": "[STABLE] Kubernetes labels converted to Prometheus labels.",
        "kube_cronjob_created": "[STABLE] Unix creation timestamp",
        "kube_cronjob_spec_suspend": "[STABLE] Suspend flag tells the controller to suspend subsequent "
                                     "executions.",
        "kube_cronjob_status_active": "[STABLE] Active holds pointers to currently running jobs.",
        "kube_cronjob_status_last_schedule_time": "[STABLE] LastScheduleTime keeps information of when was the "
                                                  "last time the job was successfully scheduled.",
        "kube_cronjob_status_last_successful_time": "LastSuccessfulTime keeps information of when was the last "
                                                    "time the job was completed successfully.",
        "kube_cronjob_next_schedule_time": "[STABLE] Next time the cronjob should be scheduled. The time after "
                                           "lastScheduleTime, or after the cron job's creation time if it's "
                                           "never been scheduled. Use this to determine if the job is delayed.",
        "kube_cronjob_spec_starting_deadline_seconds": "[STABLE] Deadline in seconds for starting the job if it "
                                                       "misses scheduled time for any reason.",
        "kube_cronjob_spec_successful_job_history_limit": "Successful job history limit tells the controller "
                                                          "how many completed jobs should be preserved.",
        "kube_cronjob_spec_failed_job_history_limit": "Failed job history limit tells the controller how many "
                                                      "failed jobs should be preserved.",
        "kube_cronjob_metadata_resource_version": "[STABLE] Resource version representing a specific version "
                                                  "of the cronjob.",
        "kube_horizontalpodautoscaler_info": "Information about this autoscaler.",
        "kube_horizontalpodautoscaler_labels": "Kubernetes labels converted to Prometheus labels.",
        "kube_horizontalpodautoscaler_metadata_generation": "[STABLE] The generation observed by the "
                                                            "HorizontalPodAutoscaler controller.",
        "kube_horizontalpodautoscaler_spec_max_replicas": "[STABLE] Upper limit for the number of pods that can "
                                                          "be set by the autoscaler; cannot be smaller than "
                                                          "MinReplicas.",
        "kube_horizontalpodautoscaler_spec_min_replicas": "[STABLE] Lower limit for the number of pods that can "
                                                          "be set by the autoscaler, default 1.",
        "kube_horizontalpodautoscaler_spec_target_metric": "The metric specifications used by this autoscaler "
                                                           "when calculating the desired replica count.",
        "kube_horizontalpodautoscaler_status_current_replicas": "[STABLE] Current number of replicas of pods "
                                                                "managed by this autoscaler.",
        "kube_horizontalpodautoscaler_status_desired_replicas": "[STABLE] Desired number of replicas of pods "
                                                                "managed by this autoscaler.",
        "kube_horizontalpodautoscaler_status_condition": "The condition of this autoscaler.",
        "kube_poddisruptionbudget_created": "[STABLE] Unix creation timestamp",
        "kube_poddisruptionbudget_status_current_healthy": "[STABLE] Current number of healthy pods",
        "kube_poddisruptionbudget_status_desired_healthy": "[STABLE] Minimum desired number of healthy pods",
        "kube_poddisruptionbudget_status_expected_pods": "[STABLE] Total number of pods counted by this "
                                                         "disruption budget",
        "kube_poddisruptionbudget_status_pod_disruptions_allowed": "[STABLE] Number of pod disruptions that "
                                                                   "are currently allowed",
        "kube_poddisruptionbudget_status_observed_generation": "[STABLE] Most recent generation observed when "
                                                               "updating this PDB status",
        "kube_node_info": "[STABLE] Information about a cluster node.",
        "kube_node_labels": "[STABLE] Kubernetes labels converted to Prometheus labels.",
        "kube_node_created": "[STABLE] Unix creation timestamp",
        "kube_node_role": "The role of a cluster node.",
        "kube_node_spec_unschedulable": "[STABLE] Whether a node can schedule new pods.",
        "kube_node_spec_taint": "[STABLE] The taint of a cluster node.",
        "kube_node_status_condition": "[STABLE] The condition of a cluster node.",
        "kube_node_status_capacity": "[STABLE] The capacity for different resources of a node.",
        "kube_node_status_allocatable": "[STABLE] The allocatable for different resources of a node that are "
                                        "available for scheduling.",
        "kube_persistentvolumeclaim_info": "[STABLE] Information about persistent volume claim.",
        "kube_persistentvolumeclaim_labels": "[STABLE] Kubernetes labels converted to Prometheus labels.",
        "kube_persistentvolumeclaim_created": "Unix creation timestamp",
        "kube_persistentvolumeclaim_status_phase": "[STABLE] The phase the persistent volume claim is currently "
                                                   "in.",
        "kube_persistentvolumeclaim_resource_requests_storage_bytes": "[STABLE] The capacity of storage "
                                                                      "requested by the persistent volume "
                                                                      "claim.",
        "kube_persistentvolumeclaim_access_mode": "[STABLE] The access mode(s) specified by the persistent "
                                                  "volume claim.",
        "kube_persistentvolume_info": "[STABLE] Information about persistentvolume.",
        "kube_persistentvolume_labels": "[STABLE] Kubernetes labels converted to Prometheus labels.",
        "kube_persistentvolume_created": "Unix creation timestamp",
        "kube_persistentvolume_status_phase": "[STABLE] The phase indicates if a volume is available, bound to a "
                                              "claim, or released by a claim.",
        "kube_persistentvolume_capacity_bytes": "[STABLE] Persistentvolume capacity in bytes.",
        "kube_persistentvolume_claim_ref": "[STABLE] Information about the Persistent Volume Claim Reference.",
        "kube_resourcequota": "[STABLE] Information about resource quota.",
        "kube_resourcequota_created": "[STABLE] Unix creation timestamp",
        "kube_endpoint_info": "[STABLE] Information about endpoint.",
        "kube_endpoint_labels": "[STABLE] Kubernetes labels converted to Prometheus labels.",
        "kube_endpoint_created": "[STABLE] Unix creation timestamp",
        "kube_endpoint_address": "Information about Endpoint available and non available addresses.",
        "kube_endpoint_ports": "[STABLE] Information about the Endpoint ports.",
        "kube_service_info": "[STABLE] Information about service.",
        "kube_service_spec_type": "[STABLE] Type about service.",
        "kube_service_labels": "[STABLE] Kubernetes labels converted to Prometheus labels.",
        "kube_service_created": "[STABLE] Unix creation timestamp",
        "kube_namespace_labels": "[STABLE] Kubernetes labels converted to Prometheus labels.",
        "kube_namespace_created": "[STABLE] Unix creation timestamp",
        "kube_namespace_status_phase": "[STABLE] kubernetes namespace status phase.",
        "kube_configmap_info": "[STABLE] Information about configmap.",
        "kube_configmap_created": "[STABLE] Unix creation timestamp",
        "kube_configmap_metadata_resource_version": "Resource version representing a specific version of the "
                                                    "configmap.",
        "kube_secret_info": "[STABLE] Information about secret.",
        "kube_secret_type": "[STABLE] Type about secret.",
        "kube_secret_created": "[STABLE] Unix creation timestamp",
        "kube_secret_metadata_resource_version": "Resource version representing a specific version of secret.",
    })
    out = [_f(name, text) for name, text in gauges.items()]
    out.append(_f("kube_pod_container_status_restarts_total",
                  "[STABLE] The number of container restarts per container.", "counter"))
    out.append(_f("kube_pod_init_container_status_restarts_total",
                  "[STABLE] The number of restarts for the init container.", "counter"))
    return tuple(out)


FAMILIES = _families()
