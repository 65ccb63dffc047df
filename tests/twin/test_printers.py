"""Server-side printing: pod STATUS/READY/RESTARTS like kubectl, and the Table of each kind."""

from __future__ import annotations

from typing import Any

import pytest

from sregym.twin.clock import format_time
from sregym.twin.machinery.kinds import KindRegistry, ResourceKind
from sregym.twin.machinery.printers import json_path, pod_ready, pod_restarts, pod_status, table

NOW = 1_800_000_000.0
KINDS = KindRegistry()


def ago(seconds: float) -> str:
    return format_time(NOW - seconds)


def pod(containers: list[dict[str, Any]], *, phase: str = "Running", init: list[dict[str, Any]] | None = None,
        init_specs: list[dict[str, Any]] | None = None, conditions: list[dict[str, Any]] | None = None,
        reason: str | None = None, deleting: bool = False, spec_extra: dict[str, Any] | None = None) -> dict:
    names = [c.get("name", f"c{i}") for i, c in enumerate(containers)]
    obj: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web-0", "namespace": "default", "creationTimestamp": ago(600)},
        "spec": {"containers": [{"name": n, "image": "nginx"} for n in names], **(spec_extra or {})},
        "status": {"phase": phase, "containerStatuses": containers, "conditions": conditions or []},
    }
    if init is not None:
        obj["spec"]["initContainers"] = init_specs or [{"name": c["name"], "image": "busybox"} for c in init]
        obj["status"]["initContainerStatuses"] = init
    if reason:
        obj["status"]["reason"] = reason
    if deleting:
        obj["metadata"]["deletionTimestamp"] = ago(5)
    return obj


def running(name: str = "app", ready: bool = True, restarts: int = 0, **extra: Any) -> dict[str, Any]:
    return {"name": name, "ready": ready, "restartCount": restarts, "started": True,
            "state": {"running": {"startedAt": ago(300)}}, **extra}


def waiting(name: str = "app", reason: str = "ContainerCreating", restarts: int = 0, **extra: Any) -> dict:
    return {"name": name, "ready": False, "restartCount": restarts, "state": {"waiting": {"reason": reason}},
            **extra}


def terminated(name: str = "app", reason: str | None = "Completed", code: int = 0, signal: int = 0,
               restarts: int = 0) -> dict[str, Any]:
    state: dict[str, Any] = {"exitCode": code, "finishedAt": ago(30)}
    if reason:
        state["reason"] = reason
    if signal:
        state["signal"] = signal
    return {"name": name, "ready": False, "restartCount": restarts, "state": {"terminated": state}}


# ----------------------------------------------------------------------------- pod STATUS
@pytest.mark.parametrize(("obj", "expected"), [
    (pod([running()]), "Running"),
    (pod([], phase="Pending"), "Pending"),
    (pod([waiting()], phase="Pending"), "ContainerCreating"),
    (pod([waiting(reason="ErrImagePull")], phase="Pending"), "ErrImagePull"),
    (pod([waiting(reason="ImagePullBackOff")], phase="Pending"), "ImagePullBackOff"),
    (pod([waiting(reason="CreateContainerConfigError")], phase="Pending"), "CreateContainerConfigError"),
    (pod([waiting(reason="CrashLoopBackOff", restarts=4)]), "CrashLoopBackOff"),
    (pod([terminated(reason="OOMKilled", code=137, restarts=1)]), "OOMKilled"),
    (pod([terminated(reason="Completed")], phase="Succeeded"), "Completed"),
    (pod([terminated(reason="Error", code=1)], phase="Failed"), "Error"),
    (pod([terminated(reason=None, code=3)], phase="Failed"), "ExitCode:3"),
    (pod([terminated(reason=None, code=137, signal=9)], phase="Failed"), "Signal:9"),
    (pod([running()], deleting=True), "Terminating"),
    (pod([running()], deleting=True, reason="NodeLost"), "Unknown"),
    (pod([terminated(reason="Completed")], phase="Succeeded", deleting=True), "Completed"),
    (pod([], phase="Failed", reason="Evicted"), "Evicted"),
    (pod([], phase="Pending", conditions=[{"type": "PodScheduled", "status": "False",
                                            "reason": "SchedulingGated"}]), "SchedulingGated"),
    # The first container's state wins (kubectl walks the list backwards).
    (pod([waiting("a", "CrashLoopBackOff"), waiting("b", "ImagePullBackOff")]), "CrashLoopBackOff"),
    # A completed container beside a running one is not "Completed".
    (pod([running("a"), terminated("b")], conditions=[{"type": "Ready", "status": "True"}]), "Running"),
    (pod([running("a"), terminated("b")], conditions=[{"type": "Ready", "status": "False"}]), "NotReady"),
])
def test_pod_status_matches_kubectl(obj: dict, expected: str) -> None:
    assert pod_status(obj) == expected


@pytest.mark.parametrize(("init", "expected"), [
    ([waiting("init", "PodInitializing")], "Init:0/1"),
    ([{"name": "init", "ready": False, "restartCount": 0, "state": {"running": {}}}], "Init:0/1"),
    ([waiting("init", "CrashLoopBackOff", restarts=3)], "Init:CrashLoopBackOff"),
    ([waiting("init", "ImagePullBackOff")], "Init:ImagePullBackOff"),
    ([terminated("init", reason="Error", code=1)], "Init:Error"),
    ([terminated("init", reason=None, code=2)], "Init:ExitCode:2"),
    ([terminated("init", reason=None, code=2, signal=15)], "Init:Signal:15"),
])
def test_init_container_states(init: list[dict], expected: str) -> None:
    obj = pod([waiting("app", "PodInitializing")], phase="Pending", init=init)
    assert pod_status(obj) == expected


def test_second_init_container_counts_progress() -> None:
    init = [terminated("one", reason="Completed"), waiting("two", "PodInitializing")]
    obj = pod([waiting("app", "PodInitializing")], phase="Pending", init=init)
    assert pod_status(obj) == "Init:1/2"


def test_pod_initializing_after_init_done() -> None:
    obj = pod([waiting("app", "PodInitializing")], phase="Pending",
              init=[terminated("init", reason="Completed")])
    assert pod_status(obj) == "PodInitializing"


def test_sidecar_counts_in_ready_and_total() -> None:
    sidecar = {"name": "proxy", "ready": True, "started": True, "restartCount": 0, "state": {"running": {}}}
    obj = pod([running("app")], init=[sidecar],
              init_specs=[{"name": "proxy", "image": "envoy", "restartPolicy": "Always"}],
              conditions=[{"type": "Initialized", "status": "True"}])
    assert pod_ready(obj) == "2/2"
    assert pod_status(obj) == "Running"


def test_ready_counts_only_ready_running_containers() -> None:
    obj = pod([running("a"), running("b", ready=False), waiting("c")])
    assert pod_ready(obj) == "1/3"


def test_restarts_with_last_termination_age() -> None:
    crashed = waiting("app", "CrashLoopBackOff", restarts=3,
                      lastState={"terminated": {"exitCode": 1, "reason": "Error", "finishedAt": ago(45)}})
    obj = pod([crashed])
    assert pod_restarts(obj, NOW) == "3 (45s ago)"
    assert pod_restarts(pod([running()]), NOW) == "0"
    # restarts without a known termination time print the bare count
    assert pod_restarts(pod([running(restarts=2)]), NOW) == "2"


# ----------------------------------------------------------------------------- tables
def names(tbl: dict) -> list[str]:
    return [c["name"] for c in tbl["columnDefinitions"]]


def test_pod_table_wide_and_narrow() -> None:
    obj = pod([running()], spec_extra={"nodeName": "kind-worker"})
    obj["status"]["podIPs"] = [{"ip": "10.244.1.5"}]
    kind = KINDS.resolve("pods")
    narrow = table(kind, [obj], now=NOW)
    assert names(narrow) == ["Name", "Ready", "Status", "Restarts", "Age"]
    assert narrow["rows"][0]["cells"] == ["web-0", "1/1", "Running", "0", "10m"]
    wide = table(kind, [obj], now=NOW, wide=True)
    assert names(wide)[5:] == ["IP", "Node", "Nominated Node", "Readiness Gates"]
    assert [c["priority"] for c in wide["columnDefinitions"]][5:] == [1, 1, 1, 1]
    assert wide["rows"][0]["cells"][5:] == ["10.244.1.5", "kind-worker", "<none>", "<none>"]
    assert wide["kind"] == "Table" and wide["apiVersion"] == "meta.k8s.io/v1"
    assert wide["rows"][0]["object"]["kind"] == "PartialObjectMetadata"
    assert table(kind, [obj], now=NOW, include_object="Object")["rows"][0]["object"] is obj
    assert "object" not in table(kind, [obj], now=NOW, include_object="None")["rows"][0]


def test_succeeded_pod_row_has_completed_condition() -> None:
    row = table(KINDS.resolve("pods"), [pod([terminated()], phase="Succeeded")], now=NOW)["rows"][0]
    assert row["conditions"][0]["type"] == "Completed"


def meta(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "namespace": "default", "creationTimestamp": ago(3600), **extra}


TEMPLATE = {"metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}, {"name": "log", "image": "busybox"}]}}


@pytest.mark.parametrize(("kind", "obj", "columns", "cells"), [
    ("deployments", {"kind": "Deployment", "metadata": meta("web"),
                     "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE},
                     "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}},
     ["Name", "Ready", "Up-to-date", "Available", "Age", "Containers", "Images", "Selector"],
     ["web", "2/3", 3, 2, "60m", "web,log", "nginx:1.27,busybox", "app=web"]),
    ("statefulsets", {"kind": "StatefulSet", "metadata": meta("db"), "spec": {"replicas": 2, "template": TEMPLATE},
                      "status": {"readyReplicas": 1}},
     ["Name", "Ready", "Age", "Containers", "Images"], ["db", "1/2", "60m", "web,log", "nginx:1.27,busybox"]),
    ("jobs", {"kind": "Job", "metadata": meta("migrate"), "spec": {"completions": 1, "template": TEMPLATE},
              "status": {"succeeded": 1, "startTime": ago(100), "completionTime": ago(40),
                         "conditions": [{"type": "Complete", "status": "True"}]}},
     ["Name", "Status", "Completions", "Duration", "Age", "Containers", "Images", "Selector"],
     ["migrate", "Complete", "1/1", "60s", "60m", "web,log", "nginx:1.27,busybox", "<none>"]),
    ("services", {"kind": "Service", "metadata": meta("web"),
                  "spec": {"type": "NodePort", "clusterIP": "10.96.3.4", "clusterIPs": ["10.96.3.4"],
                           "selector": {"app": "web"},
                           "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"}]}},
     ["Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age", "Selector"],
     ["web", "NodePort", "10.96.3.4", "<none>", "80:30080/TCP", "60m", "app=web"]),
    ("services", {"kind": "Service", "metadata": meta("lb"),
                  "spec": {"type": "LoadBalancer", "clusterIP": "10.96.0.9", "ports": [{"port": 443}]}},
     None, ["lb", "LoadBalancer", "10.96.0.9", "<pending>", "443/TCP", "60m", "<none>"]),
    ("endpoints", {"kind": "Endpoints", "metadata": meta("web"),
                   "subsets": [{"addresses": [{"ip": f"10.0.0.{i}"} for i in range(5)], "ports": [{"port": 80}]}]},
     ["Name", "Endpoints", "Age"], ["web", "10.0.0.0:80,10.0.0.1:80,10.0.0.2:80 + 2 more...", "60m"]),
    ("endpoints", {"kind": "Endpoints", "metadata": meta("empty")}, None, ["empty", "<none>", "60m"]),
    ("configmaps", {"kind": "ConfigMap", "metadata": meta("cfg"), "data": {"a": "1", "b": "2"}},
     ["Name", "Data", "Age"], ["cfg", 2, "60m"]),
    ("secrets", {"kind": "Secret", "metadata": meta("s"), "type": "Opaque", "data": {"a": "MQ=="}},
     ["Name", "Type", "Data", "Age"], ["s", "Opaque", 1, "60m"]),
    ("events", {"kind": "Event", "metadata": meta("web-0.1"), "type": "Warning", "reason": "BackOff",
                "message": "Back-off restarting failed container app in pod web-0_default(uid)\n",
                "involvedObject": {"kind": "Pod", "name": "web-0"}, "count": 5,
                "firstTimestamp": ago(300), "lastTimestamp": ago(12)},
     ["Last Seen", "Type", "Reason", "Object", "Subobject", "Source", "Message", "First Seen", "Count", "Name"],
     ["12s", "Warning", "BackOff", "pod/web-0", "", "",
      "Back-off restarting failed container app in pod web-0_default(uid)", "5m", 5, "web-0.1"]),
    ("roles", {"kind": "Role", "metadata": meta("reader")}, ["Name", "Created At"],
     ["reader", ago(3600)]),
    ("rolebindings", {"kind": "RoleBinding", "metadata": meta("rb"),
                      "roleRef": {"kind": "ClusterRole", "name": "view"},
                      "subjects": [{"kind": "User", "name": "alice"},
                                   {"kind": "ServiceAccount", "name": "bot", "namespace": "ci"}]},
     ["Name", "Role", "Age", "Users", "Groups", "ServiceAccounts"],
     ["rb", "ClusterRole/view", "60m", "alice", "", "ci/bot"]),
    ("hpa", {"kind": "HorizontalPodAutoscaler", "metadata": meta("web"),
             "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "minReplicas": 1, "maxReplicas": 5,
                      "metrics": [{"type": "Resource", "resource": {
                          "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]},
             "status": {"currentReplicas": 2, "currentMetrics": [{"type": "Resource", "resource": {
                 "name": "cpu", "current": {"averageUtilization": 35}}}]}},
     ["Name", "Reference", "Targets", "MinPods", "MaxPods", "Replicas", "Age"],
     ["web", "Deployment/web", "cpu: 35%/80%", "1", 5, 2, "60m"]),
    ("pvc", {"kind": "PersistentVolumeClaim", "metadata": meta("data"),
             "spec": {"volumeName": "pv-1", "storageClassName": "standard"},
             "status": {"phase": "Bound", "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"]}},
     ["Name", "Status", "Volume", "Capacity", "Access Modes", "StorageClass", "VolumeAttributesClass", "Age",
      "VolumeMode"],
     ["data", "Bound", "pv-1", "1Gi", "RWO", "standard", "<unset>", "60m", "<unset>"]),
    ("networkpolicies", {"kind": "NetworkPolicy", "metadata": meta("deny"), "spec": {"podSelector": {}}},
     ["Name", "Pod-Selector", "Age"], ["deny", "<none>", "60m"]),
    ("cronjobs", {"kind": "CronJob", "metadata": meta("nightly"),
                  "spec": {"schedule": "0 2 * * *", "suspend": False,
                           "jobTemplate": {"spec": {"template": TEMPLATE}}},
                  "status": {"lastScheduleTime": ago(7200)}},
     ["Name", "Schedule", "Timezone", "Suspend", "Active", "Last Schedule", "Age", "Containers", "Images",
      "Selector"],
     ["nightly", "0 2 * * *", "<none>", "False", 0, "120m", "60m", "web,log", "nginx:1.27,busybox", "<none>"]),
])
def test_kind_tables(kind: str, obj: dict, columns: list[str] | None, cells: list[Any]) -> None:
    tbl = table(KINDS.resolve(kind), [obj], now=NOW, wide=True)
    if columns is not None:
        assert names(tbl) == columns
    assert tbl["rows"][0]["cells"] == cells
    # every row has one cell per column
    assert len(tbl["rows"][0]["cells"]) == len(tbl["columnDefinitions"])


def test_node_status_roles_and_cordon() -> None:
    node = {"kind": "Node", "metadata": {"name": "n1", "creationTimestamp": ago(86400 * 3),
                                         "labels": {"node-role.kubernetes.io/control-plane": ""}},
            "spec": {"unschedulable": True},
            "status": {"conditions": [{"type": "Ready", "status": "Unknown"}],
                       "addresses": [{"type": "InternalIP", "address": "172.18.0.2"}],
                       "nodeInfo": {"kubeletVersion": "v1.32.2", "osImage": "Debian", "kernelVersion": "6.1",
                                    "containerRuntimeVersion": "containerd://1.7"}}}
    cells = table(KINDS.resolve("nodes"), [node], now=NOW, wide=True)["rows"][0]["cells"]
    assert cells == ["n1", "NotReady,SchedulingDisabled", "control-plane", "3d", "v1.32.2", "172.18.0.2",
                     "<none>", "Debian", "6.1", "containerd://1.7"]


def test_event_table_narrow_keeps_cells_aligned() -> None:
    ev = {"kind": "Event", "metadata": meta("e"), "type": "Normal", "reason": "Pulled", "message": "ok",
          "involvedObject": {"kind": "Pod", "name": "p"}, "eventTime": ago(3)}
    tbl = table(KINDS.resolve("events"), [ev], now=NOW)
    assert names(tbl) == ["Last Seen", "Type", "Reason", "Object", "Message"]
    assert tbl["rows"][0]["cells"] == ["3s", "Normal", "Pulled", "pod/p", "ok"]


def test_storage_class_default_marker() -> None:
    sc = {"kind": "StorageClass", "provisioner": "rancher.io/local-path",
          "metadata": {"name": "standard", "creationTimestamp": ago(60),
                       "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}}}
    cells = table(KINDS.resolve("storageclasses"), [sc], now=NOW)["rows"][0]["cells"]
    assert cells == ["standard (default)", "rancher.io/local-path", "Delete", "Immediate", False, "60s"]


CUSTOM = ResourceKind("example.com", "v1", "Widget", "widgets", custom=True)


def test_custom_resource_without_columns_prints_name_age() -> None:
    obj = {"kind": "Widget", "metadata": meta("w1")}
    tbl = table(CUSTOM, [obj], now=NOW)
    assert names(tbl) == ["Name", "Age"]
    assert tbl["rows"][0]["cells"] == ["w1", "60m"]


def test_custom_resource_printer_columns() -> None:
    crd = {"spec": {"versions": [{"name": "v1", "additionalPrinterColumns": [
        {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
        {"name": "Ready", "type": "string", "jsonPath": '.status.conditions[?(@.type=="Ready")].status'},
        {"name": "Owner", "type": "string", "jsonPath": ".spec.owner", "priority": 1},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}]}]}}
    obj = {"kind": "Widget", "metadata": meta("w1"), "spec": {"size": 3},
           "status": {"conditions": [{"type": "Synced", "status": "False"}, {"type": "Ready", "status": "True"}]}}
    wide = table(CUSTOM, [obj], now=NOW, wide=True, crd=crd)
    assert names(wide) == ["Name", "Size", "Ready", "Owner", "Age"]
    assert wide["rows"][0]["cells"] == ["w1", 3, "True", None, "60m"]
    narrow = table(CUSTOM, [obj], now=NOW, crd=crd)
    assert names(narrow) == ["Name", "Size", "Ready", "Age"]


def test_json_path_subset() -> None:
    doc = {"a": {"b": [{"k": "x", "v": 1}, {"k": "y", "v": 2}]}, "dotted.key": 5}
    assert json_path(doc, ".a.b[1].v") == [2]
    assert json_path(doc, ".a.b[*].k") == ["x", "y"]
    assert json_path(doc, '.a.b[?(@.k=="y")].v') == [2]
    assert json_path(doc, "['dotted.key']") == [5]
    assert json_path(doc, ".missing.field") == []


def test_live_twin_tables_have_a_cell_per_column() -> None:
    from sregym.twin import Twin

    twin = Twin(seed=3)
    twin.advance(20)
    for kind in twin.kinds.kinds:
        if kind.virtual:
            continue
        objs = twin.list(kind)
        tbl = table(kind, objs, now=twin.clock.now, wide=True)
        for row in tbl["rows"]:
            assert len(row["cells"]) == len(tbl["columnDefinitions"]), kind.kind
