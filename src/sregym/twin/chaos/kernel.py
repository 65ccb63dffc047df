"""KernelChaos: failing kernel requests on the syscall paths of the selected containers' processes.

Chaos Mesh's KernelChaos (`failKernRequest`: `callchain` of kernel functions, `failtype` 0 =
slab allocation, 1 = page allocation, 2 = bio, `probability` in percent, `times`) has
chaos-daemon load a BPF fault-injection program (bpfki) that fails matching requests made by the
target's processes: an allocation failure surfaces as ENOMEM, a failed bio as EIO. In the twin
a call chain names the syscall paths it covers (a frame naming `fsync`/`fdatasync`/`sync`,
`write`, `read`, `open`, `mmap`), and the processes see the error where they make those calls:

- mongod fsyncs its journal every 100 ms and writes it on every write: a failing `fsync` or
  `write` is fatal — WiredTiger logs `__posix_sync ... fdatasync: Input/output error` (or the
  failed `pwrite`), mongod logs `Fatal assertion` and aborts (exit 134); restarted, it fails
  again for as long as the experiment runs (CrashLoopBackOff);
- a failing `read`/`open` fails the queries that reach the files.

The stores ask `syscall_fault` (`datastores.disk`), whose `kernel_tick` the chaos controller
runs each tick for the journal.

Nothing is logged by the kernel: bpfki's injections leave no `dmesg` trace on a real node.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

SYSCALL_WORDS = {"fsync": ("fsync", "fdatasync", "sync_file", "sync"), "write": ("write", "pwrite"),
                 "read": ("read", "pread"), "open": ("open",), "mmap": ("mmap",)}
ENOMEM, EIO = 12, 5


def syscalls(spec: dict[str, Any]) -> set[str]:
    """The syscall paths a `failKernRequest` call chain covers."""
    request = spec.get("failKernRequest") or {}
    names = " ".join(str(frame.get("funcname") or "") for frame in request.get("callchain") or []).lower()
    return {call for call, words in SYSCALL_WORDS.items() if any(w in names for w in words)}


def errno_of(spec: dict[str, Any]) -> int:
    return EIO if int((spec.get("failKernRequest") or {}).get("failtype") or 0) == 2 else ENOMEM


def syscall_fault(twin: Twin, pod: dict[str, Any], container: str, call: str) -> tuple[int, float] | None:
    """(errno, share of calls failing) for `call` ("read", "fsync" ...) in a container, or None."""
    chaos = twin.services.chaos
    if chaos is None:
        return None
    meta = pod.get("metadata") or {}
    key = f"{meta.get('namespace', 'default')}/{meta.get('name', '')}"
    for injection in chaos.active("KernelChaos"):
        names = injection.containers.get(key)
        if key not in injection.pods or (names and container not in names):
            continue
        if call in syscalls(injection.spec):
            probability = float((injection.spec.get("failKernRequest") or {}).get("probability") or 100)
            return errno_of(injection.spec), max(0.0, min(1.0, probability / 100.0))
    return None
