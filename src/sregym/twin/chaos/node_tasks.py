"""A node's tasks (processes and threads) against `kernel.threads-max` and `kernel.pid_max`.

Every thread is a kernel task with its own PID. When the node's tasks reach
`kernel.threads-max`, or use up the PIDs below `kernel.pid_max`, every `clone()` on the node fails
with EAGAIN, whoever asks: a Go runtime starting an OS thread dies with
`runtime: failed to create new OS thread (have N already; errno=11)` and `fatal error: newosproc`
(the container restarts and crash-loops), mongod cannot start the thread a new connection needs
(`pthread_create failed`, the connection is closed), and a shell cannot fork
(`sh: can't fork: Resource temporarily unavailable`). There is no kubelet eviction threshold on
PIDs by default, so the node never reports PIDPressure.

The count is a model of a Debian 12 kubelet node: kernel threads, host daemons, a shim and a
pause process per pod, and each running container's own threads (`THREADS_BY_COMMAND`). It is
only computed when a limit was lowered (or node-exporter's processes collector asks), so nodes at
the defaults cost nothing per tick.

`exhausted(twin, node)` is the question every consumer asks; `tick` wakes the Go programs of an
exhausted node so that they fail their next thread creation (`dataplane/programs.py`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from sregym.twin.node.logs import log_store

if TYPE_CHECKING:
    from sregym.twin.chaos.nodeos import NodeOS, NodeState
    from sregym.twin.node.runtime import ContainerInstance
    from sregym.twin.twin import Twin

PID_MAX_DEFAULT = 4194304  # systemd raises kernel.pid_max to PID_MAX_LIMIT
THREADS_MAX_DEFAULT = 63474  # the kernel sizes it from RAM (16 GiB here)
RESERVED_PIDS = 300  # PIDs below this are never handed out again after the first wrap
KERNEL_THREADS = 164  # kthreadd, per-CPU kworkers/ksoftirqd/migration ... (processes with 1 thread)
HOST_PROCESSES = 36  # systemd, journald, udevd, containerd, kubelet, sshd ...
HOST_THREADS = 158  # ... and their threads (containerd and kubelet hold ~40 each)
PER_POD_PROCESSES = 2  # containerd-shim-runc-v2 and pause
PER_POD_THREADS = 13
GO_THREADS = 11  # a Go service: GOMAXPROCS Ps, sysmon, GC workers, blocked syscalls
THREADS_BY_COMMAND = {"mongod": 34, "memcached": 10, "redis-server": 6, "valkey-server": 6, "postgres": 7,
                      "nginx": 5, "sleep": 1, "sh": 1, "bash": 1, "pause": 1}
LIMIT_KEYS = ("kernel.threads-max", "kernel.pid_max")
GO_HTTP_PORT = "go_http_port"  # ctx.extras[GO_HTTP_PORT] = port: a Go net/http server listening there
GO_EXTRA = "go_runtime"  # ctx.extras[GO_EXTRA] = threads: a Go program that fails to start threads
EAGAIN = "Resource temporarily unavailable"
MONGOD_LOG_EVERY = 30.0
# Commands dash, ash and bash run in the shell process itself: no fork, so they still work.
SHELL_BUILTINS = frozenset(("echo", "printf", "test", "[", "true", "false", "pwd", "kill", "type", "command",
                            "getopts", "alias", "unalias", "hash", "times", "let"))


def container_command(instance: ContainerInstance) -> str:
    """The program a container runs (past the image's entrypoint script)."""
    argv = instance.argv
    command = argv[0].rsplit("/", 1)[-1] if argv else ""
    if command == "docker-entrypoint.sh":
        rest = [a for a in argv[1:] if not a.startswith("-")]
        command = rest[0].rsplit("/", 1)[-1] if rest else "mongod" if "mongo" in instance.image else command
    return command


def container_threads(instance: ContainerInstance) -> int:
    if GO_EXTRA in instance.ctx.extras:
        return int(instance.ctx.extras[GO_EXTRA])
    return THREADS_BY_COMMAND.get(container_command(instance), 4)


def usage(twin: Twin, node: str) -> tuple[int, int]:
    """(processes, threads) on the node, as /proc shows them to node-exporter."""
    processes, threads = KERNEL_THREADS + HOST_PROCESSES, KERNEL_THREADS + HOST_THREADS
    runtime = twin.services.runtime
    for pod in (runtime.on_node(node) if runtime is not None else ()):
        processes += PER_POD_PROCESSES
        threads += PER_POD_THREADS
        for record in pod.containers.values():
            instance = record.current
            if instance is not None and instance.running:
                processes += 1
                threads += container_threads(instance)
    return processes, threads


def limits(twin: Twin, node: str) -> tuple[int, int]:
    """(kernel.pid_max, kernel.threads-max) of the node (`NodeState.sysctls` overrides the
    defaults, as `node_kernel` stores them)."""
    nodeos = twin.services.nodeos
    state = nodeos.nodes.get(node) if nodeos is not None else None
    sysctls = state.sysctls if state is not None else {}
    return (int(sysctls.get("kernel.pid_max", PID_MAX_DEFAULT)),
            int(sysctls.get("kernel.threads-max", THREADS_MAX_DEFAULT)))


def lowered(twin: Twin, node: str) -> bool:
    nodeos = twin.services.nodeos
    state = nodeos.nodes.get(node) if nodeos is not None else None
    return state is not None and any(key in state.sysctls for key in LIMIT_KEYS)


def exhausted(twin: Twin, node: str) -> bool:
    """Whether a new process or thread on `node` fails with EAGAIN."""
    if not node or not lowered(twin, node):
        return False
    pid_max, threads_max = limits(twin, node)
    _processes, threads = usage(twin, node)
    return threads >= threads_max or threads >= pid_max - RESERVED_PIDS


def processes_metrics(twin: Twin, node: str) -> list[tuple[str, float]]:
    """node-exporter's processes collector (`--collector.processes`): PIDs and threads in /proc
    against kernel.pid_max and kernel.threads-max."""
    processes, threads = usage(twin, node)
    pid_max, threads_max = limits(twin, node)
    return [("node_processes_pids", float(processes)), ("node_processes_max_processes", float(pid_max)),
            ("node_processes_threads", float(threads)), ("node_processes_max_threads", float(threads_max))]


# ------------------------------------------------------------------- what fails, and how
def go_thread_failure(have: int) -> str:
    """What a Go program prints to stderr when `clone()` fails (runtime.newosproc), exit code 2."""
    return (f"runtime: failed to create new OS thread (have {have} already; errno=11)\n"
            "runtime: may need to increase max user processes (ulimit -u)\n"
            "fatal error: newosproc\n\n"
            "runtime stack:\n"
            "runtime.throw({0xb3a1c5, 0x9})\n"
            "\t/usr/local/go/src/runtime/panic.go:1198 +0x71\n"
            "runtime.newosproc(0xc000580000)\n"
            "\t/usr/local/go/src/runtime/os_linux.go:167 +0x1a5\n"
            "runtime.newm1(0xc000580000)\n"
            "\t/usr/local/go/src/runtime/proc.go:2233 +0xd4\n"
            "runtime.newm(0xc00005e000?, 0x0, 0xffffffffffffffff)\n"
            "\t/usr/local/go/src/runtime/proc.go:2210 +0x12c\n"
            "runtime.startm(0x0, 0x0)\n"
            "\t/usr/local/go/src/runtime/proc.go:2462 +0x259\n"
            "runtime.handoffp(0xc00005e000?)\n"
            "\t/usr/local/go/src/runtime/proc.go:2486 +0x2a5\n"
            "runtime.retake(0x2d7f3b8f1c)\n"
            "\t/usr/local/go/src/runtime/proc.go:5506 +0x1a6\n"
            "runtime.sysmon()\n"
            "\t/usr/local/go/src/runtime/proc.go:5414 +0x325\n"
            "runtime.mstart1()\n"
            "\t/usr/local/go/src/runtime/proc.go:1407 +0x93\n"
            "runtime.mstart0()\n"
            "\t/usr/local/go/src/runtime/proc.go:1365 +0x79\n"
            "runtime.mstart()\n"
            "\t/usr/local/go/src/runtime/asm_amd64.s:248 +0x5\n")


def fork_failure(shell_name: str, flavour: str) -> tuple[str, int]:
    """(stderr, status) of a shell whose fork fails with EAGAIN: bash retries with back-off
    before giving up; dash and BusyBox ash report it at once."""
    if flavour == "bash":
        retry = f"{shell_name}: fork: retry: {EAGAIN}\n"
        return retry * 4 + f"{shell_name}: fork: {EAGAIN}\n", 254
    if flavour == "dash":
        return f"{shell_name}: 1: Cannot fork\n", 2
    return f"{shell_name}: can't fork: {EAGAIN}\n", 2


def mongod_thread_failure(date: str) -> str:
    """mongod 4.4's two lines for a connection whose worker thread could not be started
    (the listener then closes that connection)."""
    return (f'{{"t":{{"$date":"{date}"}},"s":"E",  "c":"NETWORK",  "id":4850900, "ctx":"listener",'
            f'"msg":"pthread_create failed","attr":{{"error":"{EAGAIN}"}}}}\n'
            f'{{"t":{{"$date":"{date}"}},"s":"E",  "c":"NETWORK",  "id":22948,   "ctx":"listener",'
            f'"msg":"Thread creation failed","attr":{{"error":"pthread_create failed"}}}}\n')


# ------------------------------------------------------------------------- per tick
def tick(nodeos: NodeOS, state: NodeState, now: float) -> None:
    """Once per tick per node whose limit was lowered: while the node is exhausted, wake its
    running Go programs (they need a new OS thread sooner or later, and fail) and let mongod
    report the connections it could not serve."""
    if not any(key in state.sysctls for key in LIMIT_KEYS):
        return
    twin = nodeos.twin
    if not exhausted(twin, state.name):
        return
    runtime = twin.services.runtime
    if runtime is None:
        return
    for pod in sorted(runtime.pods.values(), key=lambda p: (p.namespace, p.name)):
        if pod.node != state.name:
            continue
        for record in pod.containers.values():
            instance = record.current
            if instance is None or not instance.running:
                continue
            if GO_EXTRA in instance.ctx.extras and not instance.ctx.extras.get("go_thread_failed"):
                instance.ctx.extras["go_thread_failed"] = True
                instance.process.wake(now)
                pod.next_wake = min(pod.next_wake, now)
            elif container_command(instance) == "mongod" and now >= instance.ctx.extras.get("thread_log_at", now):
                # The pool of a client opens a connection now and then; its thread fails.
                instance.ctx.extras["thread_log_at"] = now + MONGOD_LOG_EVERY
                date = datetime.fromtimestamp(now, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "+00:00"
                for line in mongod_thread_failure(date).splitlines():
                    log_store(twin).append(instance.container_id, now, "stdout", line)
