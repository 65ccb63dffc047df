"""Server-side printing: the `meta.k8s.io/v1` Table the real API server returns for `as=Table`.

kubectl (since 1.11) asks the server for a Table and prints its cells verbatim, so the columns a
person sees (`READY 0/1`, `STATUS CrashLoopBackOff`, `RESTARTS 4 (12s ago)`) are computed here, not by
kubectl. The column sets and cell rules follow the API server's printers for Kubernetes 1.32; kinds
without a dedicated printer get the generic `NAME CREATED AT` table, custom resources `NAME AGE` or
their CRD's `additionalPrinterColumns`. Ages come from the simulated clock (`now`), never the wall.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sregym.twin.clock import format_age, format_time, parse_time

if TYPE_CHECKING:
    from sregym.twin.machinery.kinds import ResourceKind

Obj = dict[str, Any]
Cells = list[Any]
RowFn = Callable[[Obj, float, bool], Cells]


@dataclass(frozen=True, eq=False)
class Printer:
    """How one kind prints: its column definitions, the function that computes a row's cells and,
    for pods, the conditions a row carries. A kind's row in the kind table (`kinds.py`) names its
    printer, the way a `strategy.go` names a resource's table convertor."""

    columns: list[Obj]
    row: RowFn
    conditions: Callable[[Obj], list[Obj] | None] | None = None

NONE = "<none>"
UNSET = "<unset>"
NODE_UNREACHABLE_REASON = "NodeLost"
_LB_WIDTH = 16


# ----------------------------------------------------------------------------- small helpers
def meta_of(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def spec_of(obj: Obj) -> Obj:
    return obj.get("spec") or {}


def status_of(obj: Obj) -> Obj:
    return obj.get("status") or {}


def _since(ts: str | None, now: float) -> str:
    """`translateTimestampSince`: human duration, `<unknown>` for a missing time."""
    if not ts:
        return "<unknown>"
    try:
        return format_age(now - parse_time(ts))
    except (ValueError, TypeError):
        return "<unknown>"


def age_of(obj: Obj, now: float) -> str:
    return _since(meta_of(obj).get("creationTimestamp"), now)


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def format_labels(labels: dict[str, Any] | None) -> str:
    """`labels.FormatLabels`: `k=v,k2=v2` sorted by key, `<none>` when empty."""
    if not labels:
        return NONE
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))


def selector_string(selector: dict[str, Any] | None) -> str:
    """`LabelSelectorAsSelector(...).String()`: requirements sorted by key, "" for nil/empty."""
    if not selector:
        return ""
    reqs: list[tuple[str, str]] = []
    for key, value in (selector.get("matchLabels") or {}).items():
        reqs.append((key, f"{key}={value}"))
    for expr in selector.get("matchExpressions") or []:
        key = expr.get("key", "")
        op = expr.get("operator", "")
        values = sorted(str(v) for v in expr.get("values") or [])
        if op == "In":
            reqs.append((key, f"{key} in ({','.join(values)})"))
        elif op == "NotIn":
            reqs.append((key, f"{key} notin ({','.join(values)})"))
        elif op == "Exists":
            reqs.append((key, key))
        elif op == "DoesNotExist":
            reqs.append((key, f"!{key}"))
    reqs.sort(key=lambda r: r[0])
    return ",".join(text for _key, text in reqs)


def format_selector(selector: dict[str, Any] | None) -> str:
    """`metav1.FormatLabelSelector`: like `selector_string` but `<none>` when empty."""
    return selector_string(selector) or NONE


def _containers_cells(pod_spec: Obj) -> tuple[str, str]:
    containers = pod_spec.get("containers") or []
    return (",".join(str(c.get("name", "")) for c in containers),
            ",".join(str(c.get("image", "")) for c in containers))


def _template_spec(obj: Obj) -> Obj:
    return ((spec_of(obj).get("template") or {}).get("spec")) or {}


# ----------------------------------------------------------------------------- pods
def _is_restartable_init(container: Obj | None) -> bool:
    return bool(container) and container.get("restartPolicy") == "Always"  # type: ignore[union-attr]


def _condition_true(conditions: list[Obj], cond_type: str) -> bool:
    for cond in conditions:
        if cond.get("type") == cond_type:
            return cond.get("status") == "True"
    return False


def _pod_summary(pod: Obj) -> tuple[str, int, int, int, float | None]:
    """kubectl's printPod, as one pass: (reason, ready, total, restarts, last restart time)."""
    spec = spec_of(pod)
    status = status_of(pod)
    meta = meta_of(pod)
    conditions = status.get("conditions") or []
    init_specs = {c.get("name"): c for c in spec.get("initContainers") or []}
    total = len(spec.get("containers") or [])
    total += sum(1 for c in init_specs.values() if _is_restartable_init(c))
    ready = 0
    restarts = 0
    sidecar_restarts = 0
    last_restart: float | None = None
    last_sidecar_restart: float | None = None

    phase = status.get("phase") or ""
    reason = status.get("reason") or phase
    for cond in conditions:
        if cond.get("type") == "PodScheduled" and cond.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"

    init_statuses = status.get("initContainerStatuses") or []
    init_count = len(spec.get("initContainers") or [])
    initializing = False
    for index, cs in enumerate(init_statuses):
        state = cs.get("state") or {}
        terminated = state.get("terminated")
        waiting = state.get("waiting")
        restarts += _int(cs.get("restartCount"))
        finished = _finished_at(cs)
        if finished is not None and (last_restart is None or finished > last_restart):
            last_restart = finished
        sidecar = _is_restartable_init(init_specs.get(cs.get("name")))
        if sidecar:
            sidecar_restarts += _int(cs.get("restartCount"))
            if finished is not None and (last_sidecar_restart is None or finished > last_sidecar_restart):
                last_sidecar_restart = finished
        if terminated is not None and _int(terminated.get("exitCode")) == 0:
            continue
        if sidecar and cs.get("started"):
            if cs.get("ready"):
                ready += 1
            continue
        if terminated is not None:
            if not terminated.get("reason"):
                if _int(terminated.get("signal")):
                    reason = f"Init:Signal:{_int(terminated.get('signal'))}"
                else:
                    reason = f"Init:ExitCode:{_int(terminated.get('exitCode'))}"
            else:
                reason = "Init:" + str(terminated["reason"])
        elif waiting is not None and waiting.get("reason") and waiting.get("reason") != "PodInitializing":
            reason = "Init:" + str(waiting["reason"])
        else:
            reason = f"Init:{index}/{init_count}"
        initializing = True
        break

    if not initializing or _condition_true(conditions, "Initialized"):
        restarts = sidecar_restarts
        last_restart = last_sidecar_restart
        has_running = False
        for cs in reversed(status.get("containerStatuses") or []):
            state = cs.get("state") or {}
            restarts += _int(cs.get("restartCount"))
            finished = _finished_at(cs)
            if finished is not None and (last_restart is None or finished > last_restart):
                last_restart = finished
            waiting = state.get("waiting")
            terminated = state.get("terminated")
            if waiting is not None and waiting.get("reason"):
                reason = str(waiting["reason"])
            elif terminated is not None and terminated.get("reason"):
                reason = str(terminated["reason"])
            elif terminated is not None:
                if _int(terminated.get("signal")):
                    reason = f"Signal:{_int(terminated.get('signal'))}"
                else:
                    reason = f"ExitCode:{_int(terminated.get('exitCode'))}"
            elif cs.get("ready") and state.get("running") is not None:
                has_running = True
                ready += 1
        # A pod whose last container completed but another still runs is not "Completed".
        if reason == "Completed" and has_running:
            reason = "Running" if _condition_true(conditions, "Ready") else "NotReady"

    if meta.get("deletionTimestamp") and status.get("reason") == NODE_UNREACHABLE_REASON:
        reason = "Unknown"
    elif meta.get("deletionTimestamp") and phase not in ("Succeeded", "Failed"):
        reason = "Terminating"
    return reason, ready, total, restarts, last_restart


def _finished_at(container_status: Obj) -> float | None:
    terminated = (container_status.get("lastState") or {}).get("terminated")
    if not terminated or not terminated.get("finishedAt"):
        return None
    try:
        return parse_time(terminated["finishedAt"])
    except (ValueError, TypeError):
        return None


def pod_status(pod: Obj) -> str:
    """The STATUS column: `Running`, `CrashLoopBackOff`, `Init:0/1`, `Terminating` ..."""
    return _pod_summary(pod)[0]


def pod_ready(pod: Obj) -> str:
    """The READY column: ready containers (sidecars included) over all containers, `1/2`."""
    _reason, ready, total, _restarts, _last = _pod_summary(pod)
    return f"{ready}/{total}"


def pod_restarts(pod: Obj, now: float) -> str:
    """The RESTARTS column: `0`, or `3 (45s ago)` when a last termination time is known."""
    _reason, _ready, _total, restarts, last = _pod_summary(pod)
    if restarts and last is not None:
        return f"{restarts} ({format_age(now - last)} ago)"
    return str(restarts)


def _pod_row(pod: Obj, now: float, wide: bool) -> Cells:
    reason, ready, total, restarts, last = _pod_summary(pod)
    restarts_text = f"{restarts} ({format_age(now - last)} ago)" if restarts and last is not None \
        else str(restarts)
    cells: Cells = [meta_of(pod).get("name", ""), f"{ready}/{total}", reason, restarts_text, age_of(pod, now)]
    if wide:
        spec, status = spec_of(pod), status_of(pod)
        ips = status.get("podIPs") or []
        pod_ip = (ips[0].get("ip") if ips else None) or status.get("podIP") or NONE
        gates = spec.get("readinessGates") or []
        gates_text = NONE
        if gates:
            conditions = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
            true = sum(1 for g in gates if conditions.get(g.get("conditionType")) == "True")
            gates_text = f"{true}/{len(gates)}"
        cells += [pod_ip, spec.get("nodeName") or NONE, status.get("nominatedNodeName") or NONE,
                  gates_text]
    return cells


def _pod_conditions(pod: Obj) -> list[Obj] | None:
    phase = status_of(pod).get("phase")
    if phase == "Succeeded":
        return [{"type": "Completed", "status": "True", "reason": "Succeeded",
                 "message": "The pod has completed successfully."}]
    if phase == "Failed":
        return [{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}]
    return None


# ----------------------------------------------------------------------------- workloads
def _deployment_row(obj: Obj, now: float, wide: bool) -> Cells:
    spec, status = spec_of(obj), status_of(obj)
    cells: Cells = [meta_of(obj).get("name", ""),
                    f"{_int(status.get('readyReplicas'))}/{_int(spec.get('replicas', 1))}",
                    _int(status.get("updatedReplicas")), _int(status.get("availableReplicas")),
                    age_of(obj, now)]
    if wide:
        names, images = _containers_cells(_template_spec(obj))
        cells += [names, images, selector_string(spec.get("selector"))]
    return cells


def _replicaset_row(obj: Obj, now: float, wide: bool) -> Cells:
    spec, status = spec_of(obj), status_of(obj)
    cells: Cells = [meta_of(obj).get("name", ""), _int(spec.get("replicas", 1)), _int(status.get("replicas")),
                    _int(status.get("readyReplicas")), age_of(obj, now)]
    if wide:
        names, images = _containers_cells(_template_spec(obj))
        selector = spec.get("selector")
        if obj.get("kind") == "ReplicationController":
            cells += [names, images, format_labels(selector)]
        else:
            cells += [names, images, format_selector(selector)]
    return cells


def _statefulset_row(obj: Obj, now: float, wide: bool) -> Cells:
    spec, status = spec_of(obj), status_of(obj)
    cells: Cells = [meta_of(obj).get("name", ""),
                    f"{_int(status.get('readyReplicas'))}/{_int(spec.get('replicas', 1))}", age_of(obj, now)]
    if wide:
        cells += list(_containers_cells(_template_spec(obj)))
    return cells


def _daemonset_row(obj: Obj, now: float, wide: bool) -> Cells:
    status = status_of(obj)
    cells: Cells = [meta_of(obj).get("name", ""), _int(status.get("desiredNumberScheduled")),
                    _int(status.get("currentNumberScheduled")), _int(status.get("numberReady")),
                    _int(status.get("updatedNumberScheduled")), _int(status.get("numberAvailable")),
                    format_labels(_template_spec(obj).get("nodeSelector")), age_of(obj, now)]
    if wide:
        names, images = _containers_cells(_template_spec(obj))
        cells += [names, images, format_selector(spec_of(obj).get("selector"))]
    return cells


def _job_status(obj: Obj) -> str:
    conditions = status_of(obj).get("conditions") or []
    if _condition_true(conditions, "Complete"):
        return "Complete"
    if _condition_true(conditions, "Failed"):
        return "Failed"
    if meta_of(obj).get("deletionTimestamp"):
        return "Terminating"
    if _condition_true(conditions, "Suspended"):
        return "Suspended"
    if _condition_true(conditions, "FailureTarget"):
        return "FailureTarget"
    return "Running"


def _job_row(obj: Obj, now: float, wide: bool) -> Cells:
    spec, status = spec_of(obj), status_of(obj)
    succeeded = _int(status.get("succeeded"))
    if spec.get("completions") is not None:
        completions = f"{succeeded}/{_int(spec.get('completions'))}"
    elif _int(spec.get("parallelism")) > 1:
        completions = f"{succeeded}/1 of {_int(spec.get('parallelism'))}"
    else:
        completions = f"{succeeded}/1"
    duration = ""
    try:
        if status.get("startTime") and status.get("completionTime"):
            duration = format_age(parse_time(status["completionTime"]) - parse_time(status["startTime"]))
        elif status.get("startTime"):
            duration = format_age(now - parse_time(status["startTime"]))
    except (ValueError, TypeError):
        duration = ""
    cells: Cells = [meta_of(obj).get("name", ""), _job_status(obj), completions, duration, age_of(obj, now)]
    if wide:
        names, images = _containers_cells(_template_spec(obj))
        cells += [names, images, format_selector(spec.get("selector"))]
    return cells


def _bool_ptr(value: Any) -> str:
    if value is None:
        return UNSET
    return "True" if value else "False"


def _cronjob_row(obj: Obj, now: float, wide: bool) -> Cells:
    spec, status = spec_of(obj), status_of(obj)
    last = _since(status["lastScheduleTime"], now) if status.get("lastScheduleTime") else NONE
    cells: Cells = [meta_of(obj).get("name", ""), spec.get("schedule", ""), spec.get("timeZone") or NONE,
                    _bool_ptr(spec.get("suspend")), len(status.get("active") or []), last, age_of(obj, now)]
    if wide:
        job_spec = (spec.get("jobTemplate") or {}).get("spec") or {}
        template_spec = (job_spec.get("template") or {}).get("spec") or {}
        names, images = _containers_cells(template_spec)
        cells += [names, images, format_selector(job_spec.get("selector"))]
    return cells


def _hpa_metrics(spec: Obj, status: Obj) -> str:
    specs = spec.get("metrics") or []
    if not specs:
        return NONE
    current = status.get("currentMetrics") or []
    items: list[str] = []
    for index, metric in enumerate(specs):
        mtype = metric.get("type")
        cur = current[index] if index < len(current) else {}
        if mtype in ("Resource", "ContainerResource"):
            field_name = "resource" if mtype == "Resource" else "containerResource"
            source = metric.get(field_name) or {}
            target = source.get("target") or {}
            cur_src = (cur.get(field_name) or {}).get("current") or {}
            if target.get("averageValue") is not None:
                value = cur_src.get("averageValue", "<unknown>")
                items.append(f"{source.get('name')}: {value}/{target['averageValue']}")
            else:
                value = f"{cur_src['averageUtilization']}%" if cur_src.get("averageUtilization") is not None \
                    else "<unknown>"
                goal = f"{target['averageUtilization']}%" if target.get("averageUtilization") is not None \
                    else "<auto>"
                items.append(f"{source.get('name')}: {value}/{goal}")
        elif mtype in ("Pods", "Object", "External"):
            field_name = mtype.lower()
            target = (metric.get(field_name) or {}).get("target") or {}
            cur_src = (cur.get(field_name) or {}).get("current") or {}
            if mtype == "Pods" or target.get("averageValue") is not None:
                suffix = " (avg)" if mtype != "Pods" else ""
                items.append(f"{cur_src.get('averageValue', '<unknown>')}/{target.get('averageValue')}{suffix}")
            else:
                items.append(f"{cur_src.get('value', '<unknown>')}/{target.get('value')}")
        else:
            items.append("<unknown type>")
    if len(items) > 2:
        return ", ".join(items[:2]) + f" + {len(items) - 2} more..."
    return ", ".join(items)


def _hpa_row(obj: Obj, now: float, wide: bool) -> Cells:
    spec, status = spec_of(obj), status_of(obj)
    ref = spec.get("scaleTargetRef") or {}
    min_pods = str(spec["minReplicas"]) if spec.get("minReplicas") is not None else UNSET
    return [meta_of(obj).get("name", ""), f"{ref.get('kind', '')}/{ref.get('name', '')}",
            _hpa_metrics(spec, status), min_pods, _int(spec.get("maxReplicas")),
            _int(status.get("currentReplicas")), age_of(obj, now)]


def _pdb_row(obj: Obj, now: float, wide: bool) -> Cells:
    spec = spec_of(obj)
    min_av = spec.get("minAvailable")
    max_un = spec.get("maxUnavailable")
    return [meta_of(obj).get("name", ""), "N/A" if min_av is None else str(min_av),
            "N/A" if max_un is None else str(max_un), _int(status_of(obj).get("disruptionsAllowed")),
            age_of(obj, now)]


def _controller_revision_row(obj: Obj, now: float, wide: bool) -> Cells:
    controller = NONE
    for ref in meta_of(obj).get("ownerReferences") or []:
        if ref.get("controller"):
            group = str(ref.get("apiVersion", "")).rpartition("/")[0]
            kind = str(ref.get("kind", "")).lower()
            controller = f"{kind}.{group}/{ref.get('name')}" if group else f"{kind}/{ref.get('name')}"
            break
    return [meta_of(obj).get("name", ""), controller, _int(obj.get("revision")), age_of(obj, now)]


# ----------------------------------------------------------------------------- networking
def _lb_status(status: Obj, wide: bool) -> str:
    found = set()
    for ing in ((status.get("loadBalancer") or {}).get("ingress")) or []:
        if ing.get("ip"):
            found.add(ing["ip"])
        elif ing.get("hostname"):
            found.add(ing["hostname"])
    text = ",".join(sorted(found))
    if not wide and len(text) > _LB_WIDTH:
        text = text[: _LB_WIDTH - 3] + "..."
    return text


def _service_external_ip(obj: Obj, wide: bool) -> str:
    spec = spec_of(obj)
    svc_type = spec.get("type") or "ClusterIP"
    external = spec.get("externalIPs") or []
    if svc_type in ("ClusterIP", "NodePort"):
        return ",".join(external) if external else NONE
    if svc_type == "LoadBalancer":
        lb = _lb_status(status_of(obj), wide)
        if external:
            return ",".join([*(lb.split(",") if lb else []), *external])
        return lb or "<pending>"
    if svc_type == "ExternalName":
        return str(spec.get("externalName", ""))
    return "<unknown>"


def _service_row(obj: Obj, now: float, wide: bool) -> Cells:
    spec = spec_of(obj)
    cluster_ips = spec.get("clusterIPs") or ([spec["clusterIP"]] if spec.get("clusterIP") else [])
    ports = []
    for port in spec.get("ports") or []:
        protocol = port.get("protocol") or "TCP"
        if _int(port.get("nodePort")) > 0:
            ports.append(f"{port.get('port')}:{port.get('nodePort')}/{protocol}")
        else:
            ports.append(f"{port.get('port')}/{protocol}")
    cells: Cells = [meta_of(obj).get("name", ""), spec.get("type") or "ClusterIP",
                    cluster_ips[0] if cluster_ips else NONE, _service_external_ip(obj, wide),
                    ",".join(ports) or NONE, age_of(obj, now)]
    if wide:
        cells.append(format_labels(spec.get("selector")))
    return cells


def _endpoints_text(obj: Obj) -> str:
    subsets = obj.get("subsets") or []
    if not subsets:
        return NONE
    items: list[str] = []
    more = False
    count = 0
    for subset in subsets:
        addresses = subset.get("addresses") or []
        ports = subset.get("ports") or []
        if not ports:
            count += len(addresses)
            for addr in addresses:
                if len(items) == 3:
                    more = True
                    break
                items.append(str(addr.get("ip", "")))
            continue
        for port in ports:
            count += len(addresses)
            for addr in addresses:
                if len(items) == 3:
                    more = True
                    break
                ip = str(addr.get("ip", ""))
                host = f"[{ip}]" if ":" in ip else ip
                items.append(f"{host}:{port.get('port')}")
    text = ",".join(items)
    return f"{text} + {count - 3} more..." if more else text


def _with_more(items: list[str], count: int) -> str:
    if count > 3:
        return ",".join(items[:3]) + f" + {count - 3} more..."
    return ",".join(items) or UNSET


def _endpointslice_row(obj: Obj, now: float, wide: bool) -> Cells:
    ports = []
    for port in obj.get("ports") or []:
        if port.get("port") is not None:
            ports.append(str(port["port"]))
        elif port.get("name") is not None:
            ports.append(str(port["name"]))
        else:
            ports.append("*")
    addresses = [str(a) for ep in obj.get("endpoints") or [] for a in ep.get("addresses") or []]
    return [meta_of(obj).get("name", ""), obj.get("addressType", ""), _with_more(ports, len(ports)),
            _with_more(addresses, len(addresses)), age_of(obj, now)]


def _ingress_row(obj: Obj, now: float, wide: bool) -> Cells:
    spec = spec_of(obj)
    rules = spec.get("rules") or []
    hosts = [r["host"] for r in rules[:3] if r.get("host")]
    host_text = ",".join(hosts) if hosts else "*"
    if len(rules) > 3 and hosts:
        host_text += f" + {len(rules) - 3} more..."
    return [meta_of(obj).get("name", ""), spec.get("ingressClassName") or NONE, host_text,
            _lb_status(status_of(obj), wide), "80, 443" if spec.get("tls") else "80", age_of(obj, now)]


def _ingressclass_row(obj: Obj, now: float, wide: bool) -> Cells:
    spec = spec_of(obj)
    params = spec.get("parameters")
    text = NONE
    if params:
        text = str(params.get("kind", ""))
        if params.get("apiGroup"):
            text += "." + str(params["apiGroup"])
        text += "/" + str(params.get("name", ""))
    return [meta_of(obj).get("name", ""), spec.get("controller", ""), text, age_of(obj, now)]


def _netpol_row(obj: Obj, now: float, wide: bool) -> Cells:
    return [meta_of(obj).get("name", ""), format_selector(spec_of(obj).get("podSelector")), age_of(obj, now)]


# ----------------------------------------------------------------------------- config, nodes
def _configmap_row(obj: Obj, now: float, wide: bool) -> Cells:
    return [meta_of(obj).get("name", ""), len(obj.get("data") or {}) + len(obj.get("binaryData") or {}),
            age_of(obj, now)]


def _secret_row(obj: Obj, now: float, wide: bool) -> Cells:
    return [meta_of(obj).get("name", ""), obj.get("type") or "Opaque", len(obj.get("data") or {}),
            age_of(obj, now)]


def _serviceaccount_row(obj: Obj, now: float, wide: bool) -> Cells:
    return [meta_of(obj).get("name", ""), len(obj.get("secrets") or []), age_of(obj, now)]


def _namespace_row(obj: Obj, now: float, wide: bool) -> Cells:
    return [meta_of(obj).get("name", ""), status_of(obj).get("phase", ""), age_of(obj, now)]


def node_roles(node: Obj) -> str:
    roles = set()
    for key, value in (meta_of(node).get("labels") or {}).items():
        if key.startswith("node-role.kubernetes.io/"):
            role = key[len("node-role.kubernetes.io/"):]
            if role:
                roles.add(role)
        elif key == "kubernetes.io/role" and value:
            roles.add(str(value))
    return ",".join(sorted(roles)) or NONE


def node_status(node: Obj) -> str:
    """`Ready`, `NotReady`, `Unknown`, plus `,SchedulingDisabled` for a cordoned node."""
    parts = []
    for cond in status_of(node).get("conditions") or []:
        if cond.get("type") == "Ready":
            parts = ["Ready" if cond.get("status") == "True" else "NotReady"]
    if not parts:
        parts = ["Unknown"]
    if spec_of(node).get("unschedulable"):
        parts.append("SchedulingDisabled")
    return ",".join(parts)


def _node_address(node: Obj, addr_type: str) -> str:
    for addr in status_of(node).get("addresses") or []:
        if addr.get("type") == addr_type:
            return str(addr.get("address", ""))
    return NONE


def _node_row(obj: Obj, now: float, wide: bool) -> Cells:
    info = status_of(obj).get("nodeInfo") or {}
    cells: Cells = [meta_of(obj).get("name", ""), node_status(obj), node_roles(obj), age_of(obj, now),
                    info.get("kubeletVersion", "")]
    if wide:
        cells += [_node_address(obj, "InternalIP"), _node_address(obj, "ExternalIP"),
                  info.get("osImage") or "<unknown>", info.get("kernelVersion") or "<unknown>",
                  info.get("containerRuntimeVersion") or "<unknown>"]
    return cells


def _event_row(obj: Obj, now: float, wide: bool) -> Cells:
    first = _since(obj.get("firstTimestamp"), now) if obj.get("firstTimestamp") \
        else _since(obj.get("eventTime"), now)
    last = _since(obj.get("lastTimestamp"), now) if obj.get("lastTimestamp") else first
    count = _int(obj.get("count"))
    series = obj.get("series")
    if series:
        last = _since(series.get("lastObservedTime"), now)
        count = _int(series.get("count"))
    elif count == 0:
        count = 1
    involved = obj.get("involvedObject") or {}
    kind = str(involved.get("kind", "")).lower()
    target = f"{kind}/{involved['name']}" if involved.get("name") else kind
    message = str(obj.get("message", "")).strip()
    if not wide:
        return [last, obj.get("type", ""), obj.get("reason", ""), target, message]
    source = obj.get("source") or {}
    component = source.get("component") or obj.get("reportingComponent") or ""
    host = source.get("host") or obj.get("reportingInstance") or ""
    return [last, obj.get("type", ""), obj.get("reason", ""), target, involved.get("fieldPath", ""),
            f"{component}, {host}" if host else component, message, first, count,
            meta_of(obj).get("name", "")]


def _access_modes(modes: list[str] | None) -> str:
    short = {"ReadWriteOnce": "RWO", "ReadOnlyMany": "ROX", "ReadWriteMany": "RWX",
             "ReadWriteOncePod": "RWOP"}
    out = [short[m] for m in ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod")
           if m in (modes or [])]
    return ",".join(out)


def _storage_class_of(obj: Obj) -> str:
    spec = spec_of(obj)
    if spec.get("storageClassName") is not None:
        return str(spec["storageClassName"])
    return str((meta_of(obj).get("annotations") or {}).get("volume.beta.kubernetes.io/storage-class", ""))


def _pv_row(obj: Obj, now: float, wide: bool) -> Cells:
    spec, status = spec_of(obj), status_of(obj)
    claim = spec.get("claimRef")
    claim_text = f"{claim.get('namespace', '')}/{claim.get('name', '')}" if claim else ""
    phase = "Terminating" if meta_of(obj).get("deletionTimestamp") else status.get("phase", "")
    return [meta_of(obj).get("name", ""), str((spec.get("capacity") or {}).get("storage", "0")),
            _access_modes(spec.get("accessModes")), spec.get("persistentVolumeReclaimPolicy", ""), phase,
            claim_text, _storage_class_of(obj), spec.get("volumeAttributesClassName") or UNSET,
            status.get("reason", ""), age_of(obj, now), spec.get("volumeMode") or UNSET]


def _pvc_row(obj: Obj, now: float, wide: bool) -> Cells:
    spec, status = spec_of(obj), status_of(obj)
    phase = "Terminating" if meta_of(obj).get("deletionTimestamp") else status.get("phase", "")
    capacity = ""
    modes = ""
    if spec.get("volumeName"):
        modes = _access_modes(status.get("accessModes"))
        capacity = str((status.get("capacity") or {}).get("storage", ""))
    return [meta_of(obj).get("name", ""), phase, spec.get("volumeName", ""), capacity, modes,
            _storage_class_of(obj), spec.get("volumeAttributesClassName") or UNSET, age_of(obj, now),
            spec.get("volumeMode") or UNSET]


def _storageclass_row(obj: Obj, now: float, wide: bool) -> Cells:
    annotations = meta_of(obj).get("annotations") or {}
    name = meta_of(obj).get("name", "")
    if "true" in (annotations.get("storageclass.kubernetes.io/is-default-class"),
                  annotations.get("storageclass.beta.kubernetes.io/is-default-class")):
        name += " (default)"
    return [name, obj.get("provisioner", ""), obj.get("reclaimPolicy") or "Delete",
            obj.get("volumeBindingMode") or "Immediate", bool(obj.get("allowVolumeExpansion")),
            age_of(obj, now)]


def _resourcequota_row(obj: Obj, now: float, wide: bool) -> Cells:
    status = status_of(obj)
    hard = status.get("hard") or {}
    used = status.get("used") or {}
    requests, limits = [], []
    for resource in sorted(hard):
        target = limits if resource.split(".")[0] == "limits" and "." in resource else requests
        target.append(f"{resource}: {used.get(resource, '0')}/{hard[resource]}")
    return [meta_of(obj).get("name", ""), ", ".join(requests), ", ".join(limits), age_of(obj, now)]


def _rolebinding_row(obj: Obj, now: float, wide: bool) -> Cells:
    ref = obj.get("roleRef") or {}
    cells: Cells = [meta_of(obj).get("name", ""), f"{ref.get('kind', '')}/{ref.get('name', '')}",
                    age_of(obj, now)]
    if wide:
        users, groups, sas = [], [], []
        for subject in obj.get("subjects") or []:
            kind = subject.get("kind")
            if kind == "User":
                users.append(str(subject.get("name", "")))
            elif kind == "Group":
                groups.append(str(subject.get("name", "")))
            elif kind == "ServiceAccount":
                sas.append(f"{subject.get('namespace', '')}/{subject.get('name', '')}")
        cells += [", ".join(users), ", ".join(groups), ", ".join(sas)]
    return cells


def _webhook_row(obj: Obj, now: float, wide: bool) -> Cells:
    return [meta_of(obj).get("name", ""), len(obj.get("webhooks") or []), age_of(obj, now)]


def _priorityclass_row(obj: Obj, now: float, wide: bool) -> Cells:
    cells: Cells = [meta_of(obj).get("name", ""), _int(obj.get("value")), bool(obj.get("globalDefault")),
                    age_of(obj, now)]
    if wide:
        cells.append(obj.get("preemptionPolicy") or "")
    return cells


def _lease_row(obj: Obj, now: float, wide: bool) -> Cells:
    return [meta_of(obj).get("name", ""), spec_of(obj).get("holderIdentity") or "", age_of(obj, now)]


def _csidriver_row(obj: Obj, now: float, wide: bool) -> Cells:
    spec = spec_of(obj)
    tokens = spec.get("tokenRequests")
    return [meta_of(obj).get("name", ""), spec.get("attachRequired", True) is not False,
            bool(spec.get("podInfoOnMount")), bool(spec.get("storageCapacity")),
            UNSET if tokens is None else ",".join(str(t.get("audience", "")) for t in tokens),
            bool(spec.get("requiresRepublish")), ",".join(spec.get("volumeLifecycleModes") or []) or NONE,
            age_of(obj, now)]


def _volumeattachment_row(obj: Obj, now: float, wide: bool) -> Cells:
    spec = spec_of(obj)
    return [meta_of(obj).get("name", ""), spec.get("attacher", ""),
            (spec.get("source") or {}).get("persistentVolumeName") or "", spec.get("nodeName", ""),
            bool(status_of(obj).get("attached")), age_of(obj, now)]


def _podtemplate_row(obj: Obj, now: float, wide: bool) -> Cells:
    template = obj.get("template") or {}
    names, images = _containers_cells(template.get("spec") or {})
    return [meta_of(obj).get("name", ""), names, images,
            format_labels((template.get("metadata") or {}).get("labels"))]


# ----------------------------------------------------------------------------- column tables
_NAME_DOC = "Name must be unique within a namespace."
_AGE_DOC = "CreationTimestamp is the time the object was created, in UTC."
_CONTAINERS_DOC = "Names of each container in the template."
_IMAGES_DOC = "Images referenced by each container in the template."


def col_def(name: str, ctype: str = "string", description: str = "", *, priority: int = 0,
         fmt: str = "") -> Obj:
    return {"name": name, "type": ctype, "format": fmt, "description": description, "priority": priority}


def name_col() -> Obj:
    return col_def("Name", "string", _NAME_DOC, fmt="name")


def age_col() -> Obj:
    return col_def("Age", "string", _AGE_DOC)


def _wide(name: str, description: str = "", ctype: str = "string") -> Obj:
    return col_def(name, ctype, description, priority=1)


_TEMPLATE_WIDE = [_wide("Containers", _CONTAINERS_DOC), _wide("Images", _IMAGES_DOC),
                  _wide("Selector", "Label query over pods that should match the replica count.")]

POD = Printer([
        name_col(),
        col_def("Ready", description="The aggregate readiness state of this pod for accepting traffic."),
        col_def("Status", description="The aggregate status of the containers in this pod."),
        col_def("Restarts", description="The number of times the containers in this pod have been restarted "
                                     "and when the last container in this pod has restarted."),
        age_col(),
        _wide("IP", "IP address allocated to the pod."),
        _wide("Node", "The node this pod is scheduled onto."),
        _wide("Nominated Node", "The node the scheduler nominated for this pod during preemption."),
        _wide("Readiness Gates", "Pod conditions evaluated for readiness, true over total."),
], _pod_row, conditions=_pod_conditions)

POD_TEMPLATE = Printer([
        name_col(), col_def("Containers", description=_CONTAINERS_DOC),
        col_def("Images", description=_IMAGES_DOC), col_def("Pod Labels", description="The labels for the pod template."),
], _podtemplate_row)

DEPLOYMENT = Printer([
        name_col(), col_def("Ready", description="Number of the pod with ready state"),
        col_def("Up-to-date", description="Total number of non-terminated pods with the desired template."),
        col_def("Available", description="Total number of available pods (ready for at least minReadySeconds)."),
        age_col(), *_TEMPLATE_WIDE,
], _deployment_row)

REPLICA_SET = Printer([
        name_col(), col_def("Desired", "integer", "Number of desired pods."),
        col_def("Current", "integer", "The most recently observed number of replicas."),
        col_def("Ready", "integer", "The number of pods targeted by this ReplicaSet with a Ready Condition."),
        age_col(), *_TEMPLATE_WIDE,
], _replicaset_row)

REPLICATION_CONTROLLER = Printer([
        name_col(), col_def("Desired", "integer", "Number of desired pods."),
        col_def("Current", "integer", "The most recently observed number of replicas."),
        col_def("Ready", "integer", "The number of ready replicas for this replication controller."),
        age_col(), *_TEMPLATE_WIDE,
], _replicaset_row)

STATEFUL_SET = Printer([
        name_col(), col_def("Ready", description="Number of the pod with ready state"), age_col(),
        _wide("Containers", _CONTAINERS_DOC), _wide("Images", _IMAGES_DOC),
], _statefulset_row)

DAEMON_SET = Printer([
        name_col(),
        col_def("Desired", "integer", "The total number of nodes that should be running the daemon pod."),
        col_def("Current", "integer", "The number of nodes running at least one daemon pod."),
        col_def("Ready", "integer", "The number of nodes that should run the daemon pod and have it ready."),
        col_def("Up-to-date", "integer", "The number of nodes running the updated daemon pod."),
        col_def("Available", "integer", "The number of nodes with the daemon pod available."),
        col_def("Node Selector", description="Selector which must match a node's labels for the pod to be "
                                          "scheduled on that node."),
        age_col(), *_TEMPLATE_WIDE,
], _daemonset_row)

CONTROLLER_REVISION = Printer([
        name_col(), col_def("Controller", description="Controller of the object"),
        col_def("Revision", description="Revision indicates the revision of the state represented by Data."),
        age_col(),
], _controller_revision_row)

JOB = Printer([
        name_col(), col_def("Status", description="Status of the job."),
        col_def("Completions", description="The number of pods which reached phase Succeeded."),
        col_def("Duration", description="Time required to complete the job."), age_col(), *_TEMPLATE_WIDE,
], _job_row)

CRON_JOB = Printer([
        name_col(), col_def("Schedule", description="The schedule in Cron format."),
        col_def("Timezone", description="The time zone name for the given schedule."),
        col_def("Suspend", "boolean", "This flag tells the controller to suspend subsequent executions."),
        col_def("Active", "integer", "A list of pointers to currently running jobs."),
        col_def("Last Schedule", description="Information when was the last time the job was successfully "
                                          "scheduled."),
        age_col(), *_TEMPLATE_WIDE,
], _cronjob_row)

HORIZONTAL_POD_AUTOSCALER = Printer([
        name_col(), col_def("Reference", description="The target resource to scale."),
        col_def("Targets", description="The metrics used to calculate the desired replica count."),
        col_def("MinPods", description="The lower limit for the number of replicas."),
        col_def("MaxPods", description="The upper limit for the number of replicas."),
        col_def("Replicas", description="Current number of replicas of pods managed by this autoscaler."),
        age_col(),
], _hpa_row)

POD_DISRUPTION_BUDGET = Printer([
        name_col(), col_def("Min Available", description="The minimum number of pods that must be available."),
        col_def("Max Unavailable", description="The maximum number of pods that may be unavailable."),
        col_def("Allowed Disruptions", "integer", "Calculated number of pods that may be disrupted at this time."),
        age_col(),
], _pdb_row)

SERVICE = Printer([
        name_col(), col_def("Type", description="How the Service is exposed."),
        col_def("Cluster-IP", description="The IP address of the service."),
        col_def("External-IP", description="IP addresses for which nodes in the cluster also accept traffic."),
        col_def("Port(s)", description="The list of ports that are exposed by this service."), age_col(),
        _wide("Selector", "Route service traffic to pods with label keys and values matching this selector."),
], _service_row)

ENDPOINTS = Printer([
        name_col(), col_def("Endpoints", description="The set of all endpoints is the union of all subsets."),
        age_col(),
], lambda o, now, wide: [meta_of(o).get("name", ""), _endpoints_text(o), age_of(o, now)])

ENDPOINT_SLICE = Printer([
        name_col(), col_def("AddressType", description="The type of address carried by this EndpointSlice."),
        col_def("Ports", description="The network ports exposed by each endpoint in this slice."),
        col_def("Endpoints", description="A list of unique endpoints in this slice."), age_col(),
], _endpointslice_row)

INGRESS = Printer([
        name_col(),
        col_def("Class", description="The name of the IngressClass resource that should be used for additional "
                                  "configuration"),
        col_def("Hosts", description="Hosts that incoming requests are matched against before the ingress rule"),
        col_def("Address", description="Address is a list containing ingress points for the load-balancer"),
        col_def("Ports", description="Ports of TLS configurations that open"), age_col(),
], _ingress_row)

INGRESS_CLASS = Printer([
        name_col(), col_def("Controller", description="Controller that is responsible for handling this class"),
        col_def("Parameters", description="A reference to a resource with additional parameters"), age_col(),
], _ingressclass_row)

NETWORK_POLICY = Printer([
        name_col(), col_def("Pod-Selector", description="Selects the pods to which this policy applies."),
        age_col(),
], _netpol_row)

CONFIG_MAP = Printer([
        name_col(), col_def("Data", description="Configuration data for pods to consume."), age_col(),
], _configmap_row)

SECRET = Printer([
        name_col(), col_def("Type", description="Used to facilitate programmatic handling of secret data."),
        col_def("Data", description="Secret data, values base64 encoded."), age_col(),
], _secret_row)

SERVICE_ACCOUNT = Printer([
        name_col(), col_def("Secrets", description="Secrets in the same namespace that pods running as this "
                                                 "ServiceAccount may use."), age_col(),
], _serviceaccount_row)

NAMESPACE = Printer([
        name_col(), col_def("Status", description="The status of the namespace"), age_col(),
], _namespace_row)

NODE = Printer([
        name_col(), col_def("Status", description="The status of the node"),
        col_def("Roles", description="The roles of the node"), age_col(),
        col_def("Version", description="Kubelet Version reported by the node."),
        _wide("Internal-IP", "List of addresses reachable to the node."),
        _wide("External-IP", "List of addresses reachable to the node."),
        _wide("OS-Image", "OS Image reported by the node from /etc/os-release."),
        _wide("Kernel-Version", "Kernel Version reported by the node from 'uname -r'."),
        _wide("Container-Runtime", "ContainerRuntime Version reported by the node through runtime remote API."),
], _node_row)

EVENT = Printer([
        col_def("Last Seen", description="The time at which the most recent occurrence of this event was recorded."),
        col_def("Type", description="Type of this event (Normal, Warning)."),
        col_def("Reason", description="A short, machine understandable string giving the reason for the "
                                   "transition into the object's current status."),
        col_def("Object", description="The object that this event is about."),
        _wide("Subobject", "The portion of the object the event is about, if any."),
        _wide("Source", "The component reporting this event."),
        col_def("Message", description="A human-readable description of the status of this operation."),
        _wide("First Seen", "The time at which the event was first recorded."),
        _wide("Count", "The number of times this event has occurred."),
        col_def("Name", "string", _NAME_DOC, priority=1, fmt="name"),
], _event_row)

PERSISTENT_VOLUME = Printer([
        name_col(), col_def("Capacity", description="A description of the persistent volume's resources."),
        col_def("Access Modes", description="All ways the volume can be mounted."),
        col_def("Reclaim Policy", description="What happens to a persistent volume when released from its claim."),
        col_def("Status", description="Phase indicates if a volume is available, bound to a claim, or released."),
        col_def("Claim", description="Part of a bi-directional binding between PersistentVolume and "
                                  "PersistentVolumeClaim."),
        col_def("StorageClass", description="StorageClass of the pv"),
        col_def("VolumeAttributesClass", description="VolumeAttributesClass of the pv"),
        col_def("Reason", description="A brief CamelCase string that describes any failure."), age_col(),
        _wide("VolumeMode", "Whether the volume is used with a formatted filesystem or as a raw block device."),
], _pv_row)

PERSISTENT_VOLUME_CLAIM = Printer([
        name_col(), col_def("Status", description="The current phase of PersistentVolumeClaim."),
        col_def("Volume", description="The binding reference to the PersistentVolume backing this claim."),
        col_def("Capacity", description="The actual resources of the underlying volume."),
        col_def("Access Modes", description="The actual access modes the volume backing the PVC has."),
        col_def("StorageClass", description="StorageClass of the pvc"),
        col_def("VolumeAttributesClass", description="VolumeAttributesClass of the pvc"), age_col(),
        _wide("VolumeMode", "Whether the volume is used with a formatted filesystem or as a raw block device."),
], _pvc_row)

STORAGE_CLASS = Printer([
        name_col(), col_def("Provisioner", description="The type of the provisioner."),
        col_def("ReclaimPolicy", description="Reclaim policy of dynamically provisioned volumes."),
        col_def("VolumeBindingMode", description="How PersistentVolumeClaims are provisioned and bound."),
        col_def("AllowVolumeExpansion", description="Whether the storage class allows volume expand."),
        age_col(),
], _storageclass_row)

CSI_DRIVER = Printer([
        name_col(), col_def("AttachRequired", "boolean", "Whether the driver requires an attach operation."),
        col_def("PodInfoOnMount", "boolean", "Whether the driver requires pod information on mount."),
        col_def("StorageCapacity", "boolean", "Whether the scheduler considers storage capacity."),
        col_def("TokenRequests", description="Audiences of the service account tokens passed to the driver."),
        col_def("RequiresRepublish", "boolean", "Whether NodePublishVolume is called periodically."),
        col_def("Modes", description="Volume lifecycle modes supported by the driver."), age_col(),
], _csidriver_row)

VOLUME_ATTACHMENT = Printer([
        name_col(), col_def("Attacher", description="The name of the volume driver.", fmt="name"),
        col_def("PV", description="Name of the persistent volume to attach."),
        col_def("Node", description="The node that the volume should be attached to."),
        col_def("Attached", "boolean", "Whether the attach operation succeeded."), age_col(),
], _volumeattachment_row)

RESOURCE_QUOTA = Printer([
        name_col(),
        col_def("Request", description="Request represents a minimum amount of cpu/memory that a container "
                                    "may consume."),
        col_def("Limit", description="Limits control the maximum amount of cpu/memory that a container may use "
                                  "independent of contention on the node."),
        age_col(),
], _resourcequota_row)

ROLE_BINDING = Printer([
        name_col(), col_def("Role", description="The Role or ClusterRole this binding refers to."), age_col(),
        _wide("Users", "Users in the roleBinding"), _wide("Groups", "Groups in the roleBinding"),
        _wide("ServiceAccounts", "ServiceAccounts in the roleBinding"),
], _rolebinding_row)

CLUSTER_ROLE_BINDING = Printer([
        name_col(), col_def("Role", description="The ClusterRole this binding refers to."), age_col(),
        _wide("Users", "Users in the clusterRoleBinding"), _wide("Groups", "Groups in the clusterRoleBinding"),
        _wide("ServiceAccounts", "ServiceAccounts in the clusterRoleBinding"),
], _rolebinding_row)

VALIDATING_WEBHOOK_CONFIGURATION = Printer([
        name_col(), col_def("Webhooks", "integer", "Webhooks indicates the number of webhooks registered in "
                                                 "this configuration"), age_col(),
], _webhook_row)

MUTATING_WEBHOOK_CONFIGURATION = Printer([
        name_col(), col_def("Webhooks", "integer", "Webhooks indicates the number of webhooks registered in "
                                                 "this configuration"), age_col(),
], _webhook_row)

PRIORITY_CLASS = Printer([
        name_col(), col_def("Value", "integer", "The integer value of this priority class."),
        col_def("Global-Default", "boolean", "Whether this is the default priority class."), age_col(),
        _wide("PreemptionPolicy", "The policy for preempting pods with lower priority."),
], _priorityclass_row)

LEASE = Printer([
        name_col(), col_def("Holder", description="The identity of the holder of a current lease."), age_col(),
], _lease_row)

# The generic table the API server falls back to for kinds without a printer (roles, limit ranges,
# CRDs ...): `NAME CREATED AT` with an RFC 3339 timestamp.
_DEFAULT_COLUMNS = [name_col(), col_def("Created At", "date", _AGE_DOC)]


def _default_row(obj: Obj, now: float, wide: bool) -> Cells:
    created = meta_of(obj).get("creationTimestamp")
    try:
        created_text = format_time(parse_time(created)) if created else ""
    except (ValueError, TypeError):
        created_text = str(created)
    return [meta_of(obj).get("name", ""), created_text]


DEFAULT = Printer(_DEFAULT_COLUMNS, _default_row)
# Kinds printed like custom resources (`NAME AGE` or their CRD's additionalPrinterColumns) although
# the twin defines them itself: Chaos Mesh's. CRD-created kinds (`custom=True`) print so too.
CUSTOM_RESOURCE = Printer([], _default_row)


# ----------------------------------------------------------------------------- custom resources
def _crd_columns(kind: ResourceKind, crd: Obj | None) -> list[Obj]:
    """The CRD's additionalPrinterColumns for this version, or the defaulted `Age` column."""
    if crd:
        for version in spec_of(crd).get("versions") or []:
            if version.get("name") == kind.version and version.get("additionalPrinterColumns"):
                return list(version["additionalPrinterColumns"])
        if spec_of(crd).get("additionalPrinterColumns"):
            return list(spec_of(crd)["additionalPrinterColumns"])
    return [{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}]


_SEGMENT = re.compile(r"""\.?([A-Za-z0-9_\-$]+)|\[(\d+|\*)\]|\[\?\(@\.([A-Za-z0-9_.\-]+)\s*==\s*["']([^"']*)["']\)\]|\[['"]([^'"]+)['"]\]""")


def json_path(obj: Any, path: str) -> list[Any]:
    """A small JSONPath subset for printer columns: `.a.b`, `[0]`, `[*]`, `['k.x']`,
    `[?(@.type=="Ready")]`. Returns every match (possibly none)."""
    text = path.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]
    if text.startswith("$"):
        text = text[1:]
    current = [obj]
    pos = 0
    while pos < len(text):
        m = _SEGMENT.match(text, pos)
        if not m or m.end() == pos:
            return []
        pos = m.end()
        key, index, filter_key, filter_value, quoted = m.groups()
        nxt: list[Any] = []
        for value in current:
            if key is not None or quoted is not None:
                name = key if key is not None else quoted
                if isinstance(value, dict) and name in value:
                    nxt.append(value[name])
            elif index is not None:
                if isinstance(value, list):
                    if index == "*":
                        nxt.extend(value)
                    elif int(index) < len(value):
                        nxt.append(value[int(index)])
            elif filter_key is not None and isinstance(value, list):
                for item in value:
                    found = json_path(item, "." + filter_key)
                    if found and str(found[0]) == filter_value:
                        nxt.append(item)
        current = nxt
    return current


def _custom_cell(column: Obj, obj: Obj, now: float) -> Any:
    found = json_path(obj, str(column.get("jsonPath", "")))
    if not found:
        return None
    value = found[0]
    ctype = column.get("type")
    if ctype == "date" and isinstance(value, str):
        return _since(value, now)
    if ctype == "string":
        return value if isinstance(value, str) else _go_sprint(value)
    return value


def _go_sprint(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{_go_sprint(v)}" for k, v in sorted(value.items())) + "]"
    if isinstance(value, list):
        return "[" + " ".join(_go_sprint(v) for v in value) + "]"
    if value is None:
        return "<nil>"
    return str(value)


def _is_custom(kind: ResourceKind) -> bool:
    return kind.custom or kind.printer is CUSTOM_RESOURCE


# ----------------------------------------------------------------------------- the table
def columns_for(kind: ResourceKind, *, wide: bool = False, crd: Obj | None = None) -> list[Obj]:
    """Column definitions of the Table for `kind`: all of them when `wide`, else priority 0 only."""
    if _is_custom(kind):
        extra = []
        for col in _crd_columns(kind, crd):
            extra.append(col_def(str(col.get("name", "")), str(col.get("type", "string")),
                              str(col.get("description") or ""), priority=_int(col.get("priority")),
                              fmt=str(col.get("format") or "")))
        return [c for c in [name_col(), *extra] if wide or not c["priority"]]
    columns = list((kind.printer or DEFAULT).columns)
    return [c for c in columns if wide or not c["priority"]]


def _row_object(obj: Obj, include_object: str) -> Obj | None:
    if include_object == "None":
        return None
    if include_object == "Object":
        return obj
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": meta_of(obj)}


def table(kind: ResourceKind, objects: list[Obj], *, now: float, wide: bool = False,
          include_object: str = "Metadata", crd: Obj | None = None) -> Obj:
    """A `meta.k8s.io/v1` Table of `objects` (all of one kind), as the API server prints them.

    The real API server always prints wide (every column, priority 1 marking the `-o wide` ones) and
    kubectl hides priority-1 columns unless asked for `-o wide`, so a server should pass
    `wide=True`. With `wide=False` the priority-1 columns and their cells are left out altogether,
    for in-process callers that want the narrow table. `crd` is the CustomResourceDefinition of a
    custom kind, for its additionalPrinterColumns. The caller fills `metadata.resourceVersion` /
    `continue` for lists.
    """
    columns = columns_for(kind, wide=wide, crd=crd)
    rows: list[Obj] = []
    if _is_custom(kind):
        extra = [c for c in _crd_columns(kind, crd) if wide or not _int(c.get("priority"))]
        for obj in objects:
            cells: Cells = [meta_of(obj).get("name", "")]
            cells += [_custom_cell(col, obj, now) for col in extra]
            rows.append(_row(cells, obj, include_object))
    else:
        printer = kind.printer or DEFAULT
        for obj in objects:
            row = _row(printer.row(obj, now, wide), obj, include_object)
            if printer.conditions is not None:
                conditions = printer.conditions(obj)
                if conditions:
                    row["conditions"] = conditions
            rows.append(row)
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {},
            "columnDefinitions": columns, "rows": rows}


def _row(cells: Cells, obj: Obj, include_object: str) -> Obj:
    row: Obj = {"cells": cells}
    included = _row_object(obj, include_object)
    if included is not None:
        row["object"] = included
    return row


__all__ = ["columns_for", "format_labels", "format_selector", "json_path", "node_roles", "node_status",
           "pod_ready", "pod_restarts", "pod_status", "selector_string", "table"]
