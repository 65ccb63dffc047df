"""`systemctl` for the node's kubelet and containerd units: how node-level faults stop a kubelet.

On a real cluster a privileged pod stops a node's kubelet with
`nsenter -t 1 -m -u -i -n -p -- systemctl stop kubelet`, or by mounting the host's
`/run/systemd` so `systemctl` talks to the host's systemd. Either way the command acts on the
node, so here it acts on `NodeOS.set_kubelet_running` when the exec runs in a node-host
context: `ctx.extras["node_host"]` (the node name, set by the host-namespace entry points such as
nsenter or a `kubectl debug node` chroot) or a container that mounts the host's `/run/systemd`.
Anywhere else it fails the way it does in a container without systemd as PID 1.

Verbs: `stop`, `start`, `restart`, `is-active`, `status` (systemd 252's layout, as on a kind
node). Other units than kubelet/containerd are "not loaded"; other verbs are refused.
"""

from __future__ import annotations

import weakref
from datetime import UTC, datetime
from typing import Any

from sregym.twin.node.shell import Invocation, command
from sregym.twin.userland.node_host import host_node as host_node_of

NO_SYSTEMD = ("System has not been booted with systemd as init system (PID 1). Can't operate.\n"
              "Failed to connect to bus: Host is down\n")
UNITS = {
    "kubelet.service": ("kubelet: The Kubernetes Node Agent", "/etc/systemd/system/kubelet.service",
                        "http://kubernetes.io/docs/", "kubelet"),
    "containerd.service": ("containerd container runtime", "/etc/systemd/system/containerd.service",
                           "https://containerd.io", "containerd"),
}
# When each (node, unit) last changed state, per twin: `status` shows "since ...".
_CHANGED: weakref.WeakKeyDictionary[Any, dict[tuple[str, str], float]] = weakref.WeakKeyDictionary()


def host_node(call: Invocation) -> str | None:
    """The node whose systemd this exec reaches, or None inside an ordinary container."""
    ctx = call.ctx
    explicit = host_node_of(ctx)
    if explicit:
        return explicit
    pod = ctx.pod or {}
    spec = pod.get("spec") or {}
    systemd_volumes = {v.get("name") for v in spec.get("volumes") or []
                       if ((v.get("hostPath") or {}).get("path") or "").rstrip("/") in ("/run/systemd", "/var/run/systemd")}
    for container in spec.get("containers") or []:
        if container.get("name") != ctx.container:
            continue
        for mount in container.get("volumeMounts") or []:
            if mount.get("name") in systemd_volumes and (mount.get("mountPath") or "").rstrip("/") == "/run/systemd":
                return str(spec.get("nodeName") or "") or None
    return None


def _unit(name: str) -> str:
    return name if "." in name else f"{name}.service"


def _nodeos(call: Invocation) -> Any:
    from sregym.twin.chaos.nodeos import nodeos_of

    return nodeos_of(call.ctx.twin)


def _active(call: Invocation, node: str, unit: str) -> bool:
    return unit != "kubelet.service" or _nodeos(call).kubelet_running(node)


def _set(call: Invocation, node: str, unit: str, running: bool) -> None:
    if unit == "kubelet.service" and _active(call, node, unit) != running:
        _nodeos(call).set_kubelet_running(node, running)
        _CHANGED.setdefault(call.ctx.twin, {})[(node, unit)] = call.ctx.twin.clock.now


def _ago(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds}s ago"
    minutes, secs = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}min {secs}s ago" if secs else f"{minutes}min ago"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes}min ago"


def _status(call: Invocation, node: str, unit: str) -> int:
    description, path, docs, binary = UNITS[unit]
    twin = call.ctx.twin
    active = _active(call, node, unit)
    since = _CHANGED.get(twin, {}).get((node, unit), twin.clock.start)
    stamp = datetime.fromtimestamp(since, tz=UTC).strftime("%a %Y-%m-%d %H:%M:%S UTC")
    state = "active (running)" if active else "inactive (dead)"
    dot = "●" if active else "○"
    lines = [f"{dot} {unit} - {description}",
             f"     Loaded: loaded ({path}; enabled; preset: enabled)"]
    if unit == "kubelet.service":
        lines += ["    Drop-In: /etc/systemd/system/kubelet.service.d",
                  "             └─10-kubeadm.conf, 11-kind.conf"]
    lines += [f"     Active: {state} since {stamp}; {_ago(twin.clock.now - since)}",
              f"       Docs: {docs}"]
    if active:
        pid = _nodeos(call).node(node).kubelet_pid if unit == "kubelet.service" else 180
        lines.append(f"   Main PID: {pid} ({binary})")
    call.write("\n".join(lines) + "\n")
    return 0 if active else 3


@command("systemctl")
def systemctl(call: Invocation) -> int:
    args = [a for a in call.args if not a.startswith("-")]
    node = host_node(call)
    if node is None:
        call.error(NO_SYSTEMD)
        return 1
    if not args:
        call.error("Too few arguments.\n")
        return 1
    verb, units = args[0], [_unit(a) for a in args[1:]]
    if verb not in ("stop", "start", "restart", "is-active", "status"):
        call.error(f"Unknown command verb '{verb}'.\n")
        return 1
    if not units and verb != "status":
        call.error("Too few arguments.\n")
        return 1
    status = 0
    for unit in units:
        if unit not in UNITS:
            if verb == "is-active":
                call.write("inactive\n")
                status = 3
            elif verb == "status":
                call.error(f"Unit {unit} could not be found.\n")
                status = 4
            else:
                action = {"stop": "stop", "start": "start", "restart": "restart"}[verb]
                call.error(f"Failed to {action} {unit}: Unit {unit} not "
                           f"{'loaded' if verb == 'stop' else 'found'}.\n")
                status = 5
            continue
        if verb == "stop":
            _set(call, node, unit, False)
        elif verb == "restart" and unit == "kubelet.service":
            # A new kubelet process even when one was running: it reads its config file again.
            _nodeos(call).restart_kubelet(node)
            _CHANGED.setdefault(call.ctx.twin, {})[(node, unit)] = call.ctx.twin.clock.now
        elif verb in ("start", "restart"):
            _set(call, node, unit, True)
        elif verb == "is-active":
            active = _active(call, node, unit)
            call.write("active\n" if active else "inactive\n")
            status = status or (0 if active else 3)
        else:
            status = max(status, _status(call, node, unit))
    return status
