"""Node host access and node-OS primitives: nsenter/chroot host shells, sysctl/conntrack/dmesg/
journalctl on the node, and the signatures a lowered kernel limit leaves (metrics, kernel log,
connection errors). In-process: exec contexts and the twin's PromQL engine."""

from __future__ import annotations

import re
from typing import Any

import pytest

import sregym.twin.userland  # noqa: F401  (registers the exec commands)
from sregym.faults.node_os import sysctl_daemonset
from sregym.twin import Twin
from sregym.twin.chaos import node_kernel
from sregym.twin.dataplane.connect import router_of
from sregym.twin.telemetry.promql import Engine
from sregym.twin.userland.context import exec_context, run_exec
from sregym.twin.userland.node_host import HOST_KEY

NODE = "kind-worker2"
ENTER = ["nsenter", "-t", "1", "-m", "-u", "-i", "-n", "-p", "--"]


def _pod(*, host_pid: bool = True, privileged: bool = True, host_root: bool = False, image: str = "busybox:1.36",
         sysctls: list[dict[str, str]] | None = None) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "web", "image": image, "securityContext": {"privileged": privileged}}
    spec: dict[str, Any] = {"nodeName": NODE, "hostPID": host_pid, "containers": [container]}
    if host_root:
        container["volumeMounts"] = [{"name": "host-root", "mountPath": "/host"}]
        spec["volumes"] = [{"name": "host-root", "hostPath": {"path": "/", "type": ""}}]
    if sysctls:
        spec["securityContext"] = {"sysctls": sysctls}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "dbg", "namespace": "default", "uid": "u-dbg"},
            "spec": spec, "status": {"phase": "Running", "podIP": "10.244.2.77"}}


def run(twin: Twin, pod: dict[str, Any], *argv: str) -> tuple[str, str, int]:
    result = run_exec(exec_context(twin, pod, "web"), list(argv))
    return result.stdout, result.stderr, result.exit_code


def query(twin: Twin, promql: str) -> float:
    data = Engine(twin.services.tsdb).instant(promql, int(twin.clock.now * 1000)).to_api()
    return float(data["result"][0]["value"][1])


@pytest.fixture
def twin() -> Twin:
    """A fresh twin, for tests that change a node's kernel settings."""
    return Twin(seed=3)


@pytest.fixture(scope="module")
def shared() -> Twin:
    """One settled twin for the tests that leave the node as they found it."""
    twin = Twin(seed=3)
    twin.advance(30)
    return twin


def test_nsenter_into_pid_1_of_a_privileged_hostpid_pod_is_a_root_shell_on_the_node(twin: Twin) -> None:
    pod = _pod()
    assert run(twin, pod, *ENTER, "hostname") == (NODE + "\n", "", 0)
    assert run(twin, pod, *ENTER, "sysctl", "net.netfilter.nf_conntrack_max") == \
        ("net.netfilter.nf_conntrack_max = 131072\n", "", 0)
    assert run(twin, pod, *ENTER, "sysctl", "-w", "net.ipv4.ip_local_port_range=1024 1030") == \
        ("net.ipv4.ip_local_port_range = 1024 1030\n", "", 0)
    assert run(twin, pod, *ENTER, "sysctl", "-n", "net.ipv4.ip_local_port_range") == ("1024\t1030\n", "", 0)
    # A write through /proc/sys is a sysctl write too.
    out = run(twin, pod, *ENTER, "sh", "-c", "echo 2048 > /proc/sys/net/netfilter/nf_conntrack_max; "
                                             "cat /proc/sys/net/netfilter/nf_conntrack_max")
    assert out == ("2048\n", "", 0)
    assert twin.services.nodeos.node(NODE).conntrack_max == 2048
    assert run(twin, pod, *ENTER, "sysctl", "kernel.pid_max", "fs.file-max", "fs.nr_open") == (
        "kernel.pid_max = 4194304\nfs.file-max = 9223372036854775807\nfs.nr_open = 1073741816\n", "", 0)


@pytest.mark.parametrize(("argv", "err", "code"), [
    (["sysctl", "foo.bar"], "sysctl: cannot stat /proc/sys/foo/bar: No such file or directory\n", 1),
    (["sysctl", "-w", "kernel.pid_max=abc"], 'sysctl: setting key "kernel.pid_max": Invalid argument\n', 1),
    (["sysctl", "-w", "net.ipv4.ip_local_port_range=5 1"],
     'sysctl: setting key "net.ipv4.ip_local_port_range": Invalid argument\n', 1),
    (["sysctl", "-e", "foo.bar"], "", 0),
])
def test_sysctl_errors_as_procps_prints_them(shared: Twin, argv: list[str], err: str, code: int) -> None:
    out, stderr, status = run(shared, _pod(), *ENTER, *argv)
    assert (out, stderr, status) == ("", err, code)


@pytest.mark.parametrize(("pod", "image", "err"), [
    (_pod(privileged=False), "busybox:1.36", "nsenter: can't open '/proc/1/ns/ipc': Permission denied\n"),
    (_pod(host_pid=False, privileged=False), "busybox:1.36",
     "nsenter: setns(): can't reassociate to namespace 'ipc': Operation not permitted\n"),
    (_pod(privileged=False), "debian:12", "nsenter: cannot open /proc/1/ns/ipc: Permission denied\n"),
])
def test_nsenter_is_refused_without_host_pid_or_privileges(shared: Twin, pod: dict[str, Any], image: str,
                                                           err: str) -> None:
    pod["spec"]["containers"][0]["image"] = image
    assert run(shared, pod, *ENTER, "sysctl", "-a") == ("", err, 1)


def test_chroot_host_in_a_node_debug_pod_sees_the_node_but_keeps_the_pods_privileges(shared: Twin) -> None:
    debug = _pod(privileged=False, host_root=True)
    assert run(shared, debug, "ls", "/host/var/lib/kubelet") == ("config.yaml\n", "", 0)
    out, _err, code = run(shared, debug, "chroot", "/host", "cat", "/etc/os-release")
    assert code == 0 and out.startswith('PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n')
    assert run(shared, debug, "chroot", "/host", "sysctl", "-w", "fs.file-max=1024") == \
        ("", 'sysctl: setting key "fs.file-max": Permission denied\n', 1)
    assert run(shared, debug, "chroot", "/host", "dmesg") == \
        ("", "dmesg: read kernel buffer failed: Operation not permitted\n", 1)
    # Inside an ordinary container /proc/sys is read-only.
    assert run(shared, _pod(host_pid=False, privileged=False), "sysctl", "-w", "vm.swappiness=10") == \
        ("", 'sysctl: setting key "vm.swappiness": Read-only file system\n', 1)
    ctx = exec_context(shared, debug, "web")
    assert HOST_KEY not in ctx.extras


def test_journalctl_on_the_node_and_in_a_container(shared: Twin) -> None:
    nodeos = shared.services.nodeos
    nodeos.kubelet(NODE, '"Eviction manager: attempting to reclaim" resourceName="ephemeral-storage"',
                   source="eviction_manager.go:366")
    out, _err, code = run(shared, _pod(), *ENTER, "journalctl", "-u", "kubelet", "-n", "1", "--no-pager")
    pid = nodeos.node(NODE).kubelet_pid
    assert code == 0
    assert re.fullmatch(rf"[A-Z][a-z]{{2}} \d\d \d\d:\d\d:\d\d {NODE} kubelet\[{pid}\]: I\d{{4}} [\d:.]+ +{pid} "
                        r'eviction_manager.go:366\] "Eviction manager: attempting to reclaim" '
                        r'resourceName="ephemeral-storage"\n', out)
    assert run(shared, _pod(), *ENTER, "journalctl", "-u", "containerd") == ("-- No entries --\n", "", 0)
    # BusyBox has no journalctl applet: outside the host's namespaces there is no journalctl at all.
    out, err, code = run(shared, _pod(host_pid=False), "journalctl", "-u", "kubelet")
    assert (out, code) == ("", 127) and 'exec: "journalctl": executable file not found in $PATH' in err


def test_conntrack_max_lowered_by_a_daemonset_fills_the_table(twin: Twin) -> None:
    twin.apply(sysctl_daemonset("node-conntrack-tuning", "kube-system", NODE, "net.netfilter.nf_conntrack_max",
                                "128"))
    twin.advance(40)
    pod = _pod()
    assert run(twin, pod, *ENTER, "conntrack", "-C") == ("128\n", "", 0)
    stats = run(twin, pod, *ENTER, "conntrack", "-S")[0].splitlines()
    assert stats[0].startswith("cpu=0   \tfound=") and all(" drop=" in line for line in stats)
    assert sum(int(re.search(r" drop=(\d+)", line).group(1)) for line in stats) > 0  # type: ignore[union-attr]
    dmesg = run(twin, pod, *ENTER, "dmesg", "--level=warn")[0].splitlines()
    assert dmesg and all(re.fullmatch(r"\[ *\d+\.\d{6}\] (nf_conntrack: nf_conntrack: table full, dropping packet|"
                                      r"net_ratelimit: \d+ callbacks suppressed)", line) for line in dmesg)
    assert any("callbacks suppressed" in line for line in dmesg)
    assert query(twin, f'node_nf_conntrack_entries{{instance=~".*"}} and on(instance) '
                       f'node_uname_info{{nodename="{NODE}"}}') == 128
    assert query(twin, f'increase(node_nf_conntrack_stat_drop[30s]) and on(instance) '
                       f'node_uname_info{{nodename="{NODE}"}}') > 0
    legs = router_of(twin).route(pod, "10.96.0.10", 53).legs
    assert {leg.result.message for leg in legs} == {"dial tcp 10.96.0.10:53: i/o timeout"}
    # Restoring the setting recovers; the tuning pod's deletion alone would not.
    run(twin, pod, *ENTER, "sysctl", "-w", "net.netfilter.nf_conntrack_max=131072")
    twin.advance(1)
    assert all(leg.result.ok for leg in router_of(twin).route(pod, "10.96.0.10", 53).legs)


def test_file_max_below_open_files_fails_sockets_with_enfile(twin: Twin) -> None:
    pod = _pod()
    run(twin, pod, *ENTER, "sysctl", "-w", "fs.file-max=1024")
    twin.advance(30)
    legs = router_of(twin).route(pod, "10.96.0.10", 53).legs
    assert {leg.result.message for leg in legs} == {"dial tcp 10.96.0.10:53: socket: too many open files in system"}
    kernel = run(twin, pod, *ENTER, "dmesg")[0]
    assert kernel.count("] VFS: file-max limit 1024 reached\n") == 1
    assert query(twin, f'node_filefd_maximum and on(instance) node_uname_info{{nodename="{NODE}"}}') == 1024
    allocated = query(twin, f'node_filefd_allocated and on(instance) node_uname_info{{nodename="{NODE}"}}')
    assert allocated == node_kernel.files_allocated(twin, NODE) > 1024
    run(twin, pod, *ENTER, "sysctl", "-w", "fs.file-max=9223372036854775807")
    twin.advance(1)
    assert all(leg.result.ok for leg in router_of(twin).route(pod, "10.96.0.10", 53).legs)


def test_a_pods_tiny_local_port_range_fails_a_share_of_connects_with_eaddrnotavail(shared: Twin) -> None:
    pod = _pod(host_pid=False, privileged=False,
               sysctls=[{"name": "net.ipv4.ip_local_port_range", "value": "60000 60006"}])
    assert run(shared, pod, "sysctl", "net.ipv4.ip_local_port_range") == \
        ("net.ipv4.ip_local_port_range = 60000\t60006\n", "", 0)
    legs = router_of(shared).route(pod, "10.96.0.10", 53).legs
    failed = [leg for leg in legs if not leg.result.ok]
    assert {leg.result.message for leg in failed} == {"dial tcp 10.96.0.10:53: connect: cannot assign requested address"}
    assert sum(leg.fraction for leg in failed) == pytest.approx(1 - 7 / node_kernel.PORTS_PER_PROCESS)
    # The node's own range is untouched (the setting is per network namespace).
    assert node_kernel.read(shared, NODE, "net.ipv4.ip_local_port_range") == "32768\t60999"
