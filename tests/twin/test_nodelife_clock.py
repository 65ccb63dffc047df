"""The node clock: `date -s`/`hwclock` need CAP_SYS_TIME or the host (`nsenter -t 1`), a set
clock shows in every pod's `date`, and a clock outside the API server certificate's validity cuts
the kubelet off (x509 in its journal, node Unknown) until the clock is reset."""

from __future__ import annotations

from typing import Any

import pytest

import sregym.twin.userland  # noqa: F401  (registers the exec commands)
from sregym.twin import Twin
from sregym.twin.chaos.nodeos import nodeos_of
from sregym.twin.topology import Topology
from sregym.twin.userland.context import exec_context, run_exec

NODE = "kind-worker"


def _pod(name: str, image: str, *, privileged: bool = False, host_pid: bool = False) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "sh", "image": image, "command": ["sleep", "infinity"]}
    if privileged:
        container["securityContext"] = {"privileged": True}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeName": NODE, "hostPID": host_pid, "containers": [container]}}


@pytest.fixture(scope="module")
def twin() -> Twin:
    twin = Twin(seed=9, topology=Topology.default(workers=1))
    twin.apply(_pod("host", "alpine:3.20", privileged=True, host_pid=True))
    twin.apply(_pod("plain", "python:3.12-slim"))
    twin.apply(_pod("bb", "busybox:1.36"))
    twin.advance(20)
    return twin


def _run(twin: Twin, pod: str, *argv: str) -> Any:
    return run_exec(exec_context(twin, twin.store.peek("Pod", "default", pod), "sh"), list(argv))


@pytest.mark.parametrize(("pod", "argv", "code", "stdout", "stderr"), [
    ("plain", ("date", "-s", "2020-01-01"), 1, "Wed Jan  1 00:00:00 UTC 2020\n",
     "date: cannot set date: Operation not permitted\n"),
    ("bb", ("date", "-s", "2020-01-01"), 1, "", "date: can't set date: Operation not permitted\n"),
    ("plain", ("date", "-s", "yesterday-ish"), 1, "", "date: invalid date 'yesterday-ish'\n"),
    ("bb", ("hwclock", "--hctosys"), 1, "", "hwclock: can't open '/dev/misc/rtc': No such file or directory\n"),
    # Without CAP_SYS_ADMIN the container's own /proc/1/ns/mnt opens but setns(2) is refused.
    ("plain", ("nsenter", "-t", "1", "-m", "true"), 1, "",
     "nsenter: reassociate to namespace 'ns/mnt' failed: Operation not permitted\n"),
    ("plain", ("nsenter", "-x"), 1, "", "nsenter: invalid option -- 'x'\nTry 'nsenter --help' for more information.\n"),
])
def test_setting_the_clock_needs_the_host(twin: Twin, pod: str, argv: tuple[str, ...], code: int, stdout: str,
                                          stderr: str) -> None:
    result = _run(twin, pod, *argv)
    assert (result.exit_code, result.stdout, result.stderr) == (code, stdout, stderr)
    assert nodeos_of(twin).clock_offset(NODE) == 0.0


def test_a_clock_set_back_cuts_the_kubelet_off_until_reset(twin: Twin) -> None:
    before = int(_run(twin, "plain", "date", "+%s").stdout)
    result = _run(twin, "host", "nsenter", "-t", "1", "-m", "-u", "-i", "-n", "-p", "--",
                  "date", "-s", "2025-01-05 09:00:00")
    assert (result.exit_code, result.stdout) == (0, "Sun Jan  5 09:00:00 UTC 2025\n")
    offset = nodeos_of(twin).clock_offset(NODE)
    assert -366 * 86400 < offset < -364 * 86400
    assert abs(int(_run(twin, "plain", "date", "+%s").stdout) - (before + offset)) < 5  # every pod's clock
    twin.advance(70)
    node = twin.store.peek("Node", None, NODE)
    assert {c["type"]: c["status"] for c in node["status"]["conditions"]}["Ready"] == "Unknown"
    journal = [line.text for line in twin.services.logs.node_lines(NODE, "kubelet")]
    assert any("x509: certificate has expired or is not yet valid: current time 2025-01-05T09:" in t
               and "is before 2026-01-05T08:55:00Z" in t and '"Failed to ensure lease exists, will retry"' in t
               for t in journal)
    assert _run(twin, "host", "nsenter", "-t", "1", "-m", "systemctl", "is-active", "kubelet").stdout == "active\n"
    assert _run(twin, "host", "nsenter", "-t", "1", "-m", "hwclock", "--hctosys").exit_code == 0
    assert nodeos_of(twin).clock_offset(NODE) == 0.0
    twin.advance(15)
    node = twin.store.peek("Node", None, NODE)
    assert {c["type"]: c["status"] for c in node["status"]["conditions"]}["Ready"] == "True"
    assert not node["spec"].get("taints")
    # A reconnecting kubelet did not restart.
    assert not [e for e in twin.store.scan("Event") if e.get("reason") == "Starting"
                and (e.get("involvedObject") or {}).get("name") == NODE]
