"""Faults below a database process: a slow disk, and failing kernel IO requests of its process.

`slow_disk` creates a device-scoped IOChaos `latency` experiment in the hidden chaos-mesh
namespace (`sregym.twin.chaos.devices`): every IO to the disk behind the selected pod's volume
waits `delay`, for every pod that mounts that disk later — the disk itself is degraded, so
moving the data to another volume helps and restarting the database does not.

`kernel_syscall_errors` creates a Chaos Mesh `KernelChaos` (`failKernRequest`: a call chain
through the given syscall, `failtype` 2 = failed bio → EIO) on the selected pods' processes, as
SREGym's Khaos injects errno into chosen syscalls of a chosen process. Chaos Mesh selects the
pods once: a pod created later is not injected. Recover deletes the experiment. Both are
Kubernetes writes with the admin credential.
"""

from __future__ import annotations

from typing import Any

from sregym.faults.base import fault
from sregym.faults.chaos_objects import CHAOS_NAMESPACE, ChaosExperiment, ExperimentParams
from sregym.twin.chaos.devices import DEVICE_SCOPE, SCOPE_ANNOTATION

SYSCALL_FRAMES = {"fsync": "__x64_sys_fsync", "fdatasync": "__x64_sys_fdatasync", "write": "__x64_sys_write",
                  "read": "__x64_sys_read", "openat": "__x64_sys_openat", "mmap": "__x64_sys_mmap"}


# -------------------------------------------------------------------------------- slow disk
class SlowDiskParams(ExperimentParams):
    name: str = "volume-latency"
    volume_path: str
    delay: str = "600ms"
    percent: int = 100


def slow_disk_chaos(p: SlowDiskParams) -> dict[str, Any]:
    return {"apiVersion": "chaos-mesh.org/v1alpha1", "kind": "IOChaos",
            "metadata": {"name": p.name, "namespace": CHAOS_NAMESPACE,
                         "annotations": {SCOPE_ANNOTATION: DEVICE_SCOPE}},
            "spec": {"action": "latency", "mode": "one", "volumePath": p.volume_path,
                     "path": p.volume_path.rstrip("/") + "/**", "delay": p.delay, "percent": p.percent,
                     "selector": {"namespaces": [p.namespace], "labelSelectors": dict(p.labels)}}}


@fault
class SlowDisk(ChaosExperiment):
    """A degraded disk behind a pod's volume: every IO waits `delay` (persists across restarts)."""

    name = "slow_disk"
    twin_only = "device-scoped IOChaos (a disk's sectors or latency) is a twin extension of Chaos Mesh"
    Params = SlowDiskParams
    kind = "IOChaos"

    def manifest(self) -> dict[str, Any]:
        assert isinstance(self.params, SlowDiskParams)
        return slow_disk_chaos(self.params)


# ------------------------------------------------------------------------ kernel syscall errors
class KernelSyscallErrorsParams(ExperimentParams):
    name: str = "kernel-io"
    syscall: str = "fsync"
    failtype: int = 2  # bio: EIO
    probability: int = 100
    container_names: tuple[str, ...] = ()


def kernel_chaos(p: KernelSyscallErrorsParams) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "mode": "one", "selector": {"namespaces": [p.namespace], "labelSelectors": dict(p.labels)},
        "failKernRequest": {"callchain": [{"funcname": SYSCALL_FRAMES.get(p.syscall, p.syscall)}],
                            "failtype": p.failtype, "probability": p.probability, "times": 0}}
    if p.container_names:
        spec["containerNames"] = list(p.container_names)
    return {"apiVersion": "chaos-mesh.org/v1alpha1", "kind": "KernelChaos",
            "metadata": {"name": p.name, "namespace": CHAOS_NAMESPACE}, "spec": spec}


@fault
class KernelSyscallErrors(ChaosExperiment):
    """Kernel requests on one syscall path of the selected pods' processes fail (KernelChaos)."""

    name = "kernel_syscall_errors"
    Params = KernelSyscallErrorsParams
    kind = "KernelChaos"

    def manifest(self) -> dict[str, Any]:
        assert isinstance(self.params, KernelSyscallErrorsParams)
        return kernel_chaos(self.params)
