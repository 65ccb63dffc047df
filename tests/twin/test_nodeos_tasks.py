"""Node tasks and shell limits: kernel.threads-max / kernel.pid_max against the node's threads
(node-exporter's processes collector, a shell that cannot fork), the kernel's bounds on those
sysctls, and `ulimit` with containerd's limits in dash and BusyBox ash. In-process exec contexts."""

from __future__ import annotations

from typing import Any

import pytest

import sregym.twin.userland  # noqa: F401  (registers the exec commands)
from sregym.twin import Twin
from sregym.twin.chaos import node_kernel, node_tasks
from sregym.twin.userland.context import exec_context, run_exec

NODE = "kind-worker2"


def _pod(image: str, *, privileged: bool = False, name: str = "dbg") -> dict[str, Any]:
    container = {"name": "web", "image": image, "securityContext": {"privileged": privileged}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": f"u-{name}"},
            "spec": {"nodeName": NODE, "containers": [container]},
            "status": {"phase": "Running", "podIP": "10.244.2.77"}}


def sh(twin: Twin, pod: dict[str, Any], script: str) -> tuple[str, str, int]:
    result = run_exec(exec_context(twin, pod, "web"), ["sh", "-c", script])
    return result.stdout, result.stderr, result.exit_code


@pytest.fixture(scope="module")
def twin() -> Twin:
    twin = Twin(seed=3)
    twin.advance(5)
    return twin


BUSYBOX, DEBIAN = "busybox:1.36", "debian:12"


@pytest.mark.parametrize(("image", "script", "out", "err", "code"), [
    (BUSYBOX, "ulimit -n", "1048576\n", "", 0),
    (DEBIAN, "ulimit -n; ulimit -p", "1048576\nunlimited\n", "", 0),
    (BUSYBOX, "ulimit -n 1024; ulimit -n", "1024\n", "", 0),
    (DEBIAN, "ulimit -n 1024 && ulimit -n 2048", "", "sh: 1: ulimit: error setting limit (Operation not permitted)\n",
     2),
    (BUSYBOX, "ulimit -n 1024; ulimit -n 2048", "", "sh: ulimit: error setting limit: Operation not permitted\n", 2),
    (DEBIAN, "ulimit -n abc", "", "sh: 1: ulimit: bad number\n", 2),
    (DEBIAN, "ulimit -z", "", "sh: 1: ulimit: Illegal option -z\n", 2),
])
def test_ulimit_reports_containerds_limits_and_cannot_raise_them(twin: Twin, image: str, script: str, out: str,
                                                                 err: str, code: int) -> None:
    assert sh(twin, _pod(image), script) == (out, err, code)


def test_ulimit_a_uses_each_shells_table(twin: Twin) -> None:
    dash = sh(twin, _pod(DEBIAN), "ulimit -a")[0].splitlines()
    assert "nofiles              1048576" in dash and "stack(kbytes)        8192" in dash
    ash = sh(twin, _pod(BUSYBOX), "ulimit -a")[0].splitlines()
    assert f"-n: {'file descriptors':<30} 1048576" in ash


@pytest.mark.parametrize(("key", "value"), [("kernel.threads-max", "19"), ("kernel.pid_max", "300"),
                                            ("kernel.pid_max", "4194305")])
def test_the_kernel_rejects_task_limits_out_of_range(twin: Twin, key: str, value: str) -> None:
    with pytest.raises(node_kernel.SysctlError):
        node_kernel.write(twin, NODE, key, value)


def test_a_node_out_of_threads_refuses_forks_and_node_exporter_shows_it() -> None:
    twin = Twin(seed=3)
    twin.advance(5)
    pod = _pod(BUSYBOX)
    assert sh(twin, pod, "ls / >/dev/null; echo ok") == ("ok\n", "", 0)
    metrics = dict(node_tasks.processes_metrics(twin, NODE))
    assert metrics["node_processes_max_threads"] == 63474.0
    assert metrics["node_processes_threads"] > metrics["node_processes_pids"] > node_tasks.KERNEL_THREADS
    node_kernel.write(twin, NODE, "kernel.threads-max", "300")
    assert node_tasks.exhausted(twin, NODE) and not node_tasks.exhausted(twin, "kind-worker")
    assert dict(node_tasks.processes_metrics(twin, NODE))["node_processes_max_threads"] == 300.0
    # Builtins run in the shell itself; anything else needs a fork.
    out, err, code = sh(twin, pod, "echo start; ls /")
    assert (out, err, code) == ("start\n", "sh: can't fork: Resource temporarily unavailable\n", 2)
    assert sh(twin, _pod(DEBIAN), "ls /")[1:] == ("sh: 1: Cannot fork\n", 2)
    node_kernel.write(twin, NODE, "kernel.threads-max", "63474")
    assert not node_tasks.exhausted(twin, NODE)
    assert sh(twin, pod, "ls / >/dev/null; echo ok") == ("ok\n", "", 0)
