"""A small finalizer-owning operator: the cleanup controller.

Why: a finalizer is a promise that some controller will do work before an object goes away. When
that controller cannot write (its Role was narrowed to read-only, it was scaled to 0, its
ServiceAccount lost its binding), every object carrying its finalizer stays `Terminating` with
its `deletionTimestamp` and `metadata.finalizers`, and whatever needs the name back (a
redeploy that recreates the ConfigMap) is stuck. The twin's store already keeps such objects;
this program is the controller side, running in a pod as its ServiceAccount
(`userland/kube_client.py`), so its permissions come from the cluster's RBAC objects.

Every resync (`RESYNC_PERIOD`, default 10s) it lists the ConfigMaps of `WATCH_NAMESPACE` (the
pod's namespace by default); for each one carrying `FINALIZER` (required) and a
`deletionTimestamp`, it does its cleanup and removes its finalizer with a merge patch. Its logs are
controller-runtime's JSON lines; an API denial is logged as `Reconciler error` with the server's
Forbidden text and retried on the next resync, the way a real operator keeps failing.

The image joins the built-in catalogue when this module is imported (the kubelet imports it).
"""

from __future__ import annotations

import json
from typing import Any

from sregym.errors import ApiError
from sregym.twin.node.images import MIB, ImageSpec, log_stamp, register_image
from sregym.twin.node.shell import Invocation, Listen, Program, Sleep, Usage
from sregym.twin.userland.kube_client import InClusterClient

REPOSITORY = "ghcr.io/reservation-platform/cleanup-controller"
TAGS = ("v0.4.2", "v0.4.1", "latest")
CONTROLLER = "configmap-cleanup"
HEALTH_PORT = 8081


def _log(call: Invocation, level: str, msg: str, **fields: Any) -> None:
    line = {"level": level, "ts": log_stamp(call, "%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z", "msg": msg, **fields}
    call.write(json.dumps(line) + "\n", "stderr" if level == "error" else "stdout")


def _resync(value: str | None) -> float:
    try:
        seconds = float((value or "10s").rstrip("s"))
    except ValueError:
        return 10.0
    return seconds if seconds > 0 else 10.0


def reconcile(call: Invocation, client: InClusterClient, namespace: str, finalizer: str) -> None:
    """One pass: release every Terminating ConfigMap that still carries `finalizer`."""
    try:
        items = client.list("configmaps", namespace)
    except ApiError as exc:
        _log(call, "error", "Failed to watch", controller=CONTROLLER, kind="*v1.ConfigMap",
             error=f"failed to list *v1.ConfigMap: {exc.message}")
        return
    for obj in items:
        meta = obj.get("metadata") or {}
        finalizers = list(meta.get("finalizers") or [])
        if finalizer not in finalizers or not meta.get("deletionTimestamp"):
            continue
        name = meta.get("name", "")
        where = {"name": name, "namespace": namespace}
        _log(call, "info", "running cleanup before deletion", controller=CONTROLLER, ConfigMap=where)
        remaining = [f for f in finalizers if f != finalizer]
        try:
            client.patch("configmaps", name, {"metadata": {"finalizers": remaining or None}},
                         namespace=namespace, patch_type="merge")
        except ApiError as exc:
            _log(call, "error", "Reconciler error", controller=CONTROLLER, controllerGroup="",
                 controllerKind="ConfigMap", ConfigMap=where, namespace=namespace, name=name,
                 error=f"removing finalizer {finalizer}: {exc.message}")
            continue
        _log(call, "info", "finalizer removed", controller=CONTROLLER, ConfigMap=where, finalizer=finalizer)


def cleanup_controller(call: Invocation) -> Program:
    """`/manager`: the controller's main loop."""
    env = call.ctx.env
    finalizer = env.get("FINALIZER", "")
    if not finalizer:
        _log(call, "error", "unable to start manager", error="FINALIZER must be set")
        return 1
    yield Usage(memory_bytes=22 * MIB, cpu_cores=0.002)
    client = InClusterClient(call.ctx)
    namespace = env.get("WATCH_NAMESPACE") or client.namespace
    period = _resync(env.get("RESYNC_PERIOD"))
    _log(call, "info", "Starting EventSource", controller=CONTROLLER, source="kind source: *v1.ConfigMap")
    yield Listen(HEALTH_PORT, "TCP", http_paths=("/healthz", "/readyz"))
    _log(call, "info", "Starting Controller", controller=CONTROLLER, namespace=namespace)
    _log(call, "info", "Starting workers", controller=CONTROLLER, **{"worker count": 1})
    while True:
        reconcile(call, client, namespace, finalizer)
        yield Sleep(period)


def controller_image() -> ImageSpec:
    return ImageSpec(REPOSITORY, TAGS, size_mb=21.7, description="ConfigMap cleanup controller", shell="",
                     entrypoint=("/manager",), memory_mb=22.0, ports=(HEALTH_PORT,),
                     commands={"/manager": cleanup_controller, "manager": cleanup_controller})


register_image(controller_image())

__all__ = ["CONTROLLER", "REPOSITORY", "cleanup_controller", "controller_image", "reconcile"]
