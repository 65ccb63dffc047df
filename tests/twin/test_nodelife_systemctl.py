"""`systemctl` reaches the node's kubelet only from a host context (the host's /run/systemd)."""

from __future__ import annotations

from typing import Any

import sregym.twin.userland  # noqa: F401  (registers the exec commands)
from sregym.twin import Twin
from sregym.twin.chaos.nodeos import nodeos_of
from sregym.twin.topology import Topology
from sregym.twin.userland.context import exec_context, run_exec

NODE = "kind-worker"


def _pod(name: str, *, host_systemd: bool) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "sh", "image": "debian:12", "command": ["sleep", "infinity"],
                                 "securityContext": {"privileged": True}}
    spec: dict[str, Any] = {"nodeName": NODE, "hostPID": True, "containers": [container]}
    if host_systemd:
        container["volumeMounts"] = [{"name": "systemd", "mountPath": "/run/systemd"}]
        spec["volumes"] = [{"name": "systemd", "hostPath": {"path": "/run/systemd"}}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def test_systemctl_stops_and_starts_the_kubelet_from_the_host_only() -> None:
    twin = Twin(seed=6, topology=Topology.default(workers=1))
    twin.apply(_pod("host", host_systemd=True))
    twin.apply(_pod("plain", host_systemd=False))
    twin.advance(5)

    def run(pod: str, *argv: str) -> Any:
        return run_exec(exec_context(twin, twin.store.peek("Pod", "default", pod), "sh"), list(argv))

    # debian:12 ships no systemd: the container has no systemctl; the host's is reached through nsenter.
    plain = run("plain", "systemctl", "stop", "kubelet")
    assert plain.exit_code == 127 and '"systemctl": executable file not found' in plain.stderr
    assert nodeos_of(twin).kubelet_running(NODE)

    assert run("host", "nsenter", "-t", "1", "-m", "--", "systemctl", "is-active", "kubelet").stdout == "active\n"
    stopped = run("host", "nsenter", "-t", "1", "-m", "--", "systemctl", "stop", "kubelet")
    assert (stopped.exit_code, stopped.stdout, stopped.stderr) == (0, "", "")
    assert not nodeos_of(twin).kubelet_running(NODE)
    inactive = run("host", "nsenter", "-t", "1", "-m", "--", "systemctl", "is-active", "kubelet")
    assert (inactive.exit_code, inactive.stdout) == (3, "inactive\n")
    status = run("host", "nsenter", "-t", "1", "-m", "--", "systemctl", "status", "kubelet")
    assert status.exit_code == 3
    assert status.stdout.splitlines()[0] == "○ kubelet.service - kubelet: The Kubernetes Node Agent"
    assert "     Active: inactive (dead) since " in status.stdout
    missing = run("host", "nsenter", "-t", "1", "-m", "--", "systemctl", "stop", "nope")
    assert (missing.exit_code, missing.stderr) == (5, "Failed to stop nope.service: Unit nope.service not loaded.\n")
    assert run("host", "nsenter", "-t", "1", "-m", "--", "systemctl", "start", "kubelet").exit_code == 0
    assert nodeos_of(twin).kubelet_running(NODE)


def test_exec_into_a_pod_of_a_stopped_kubelet_cannot_dial_the_backend() -> None:
    from types import SimpleNamespace

    import pytest

    from sregym.errors import InternalError
    from sregym.twin.api.kube.pod_exec import preflight

    twin = Twin(seed=6, topology=Topology.default(workers=1))
    twin.apply(_pod("plain", host_systemd=False))
    twin.advance(5)
    ctx: Any = SimpleNamespace(twin=twin)
    from starlette.datastructures import QueryParams

    params = QueryParams("command=true&stdout=1")
    assert preflight(ctx, "default", "plain", params)[0]["metadata"]["name"] == "plain"
    nodeos_of(twin).set_kubelet_running(NODE, False)
    host_ip = twin.store.peek("Pod", "default", "plain")["status"]["hostIP"]
    with pytest.raises(InternalError, match=rf"^error dialing backend: dial tcp {host_ip}:10250: connect: "
                                            "connection refused$"):
        preflight(ctx, "default", "plain", params)
