"""The `ShellContext` of a `kubectl exec` session, and running one command in it.

An exec runs a new process next to the container's main process: same image, same mounts, same
environment as the kubelet resolved it, hostname = the pod's hostname, and the same memory cgroup:
what the exec'd process may hold is the container's limit minus what the container already uses
(`exec_memory`), and a process that outgrows it is OOM-killed (exit 137). Files the session writes
(`echo x > /tmp/f`) land in the container's writable layer and are there for the next exec into
the same container instance, and gone once the container restarts, as with a real runtime.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sregym.twin.machinery.objects import get_path
from sregym.twin.machinery.quantity import memory_bytes
from sregym.twin.node.shell import (
    EXEC_STEP_BUDGET,
    MAX_EXEC_SECONDS,
    PROCESS_MEMORY_CAP,
    ExecResult,
    MemoryMeter,
    OutputSink,
    Process,
    ShellContext,
    exec_program,
    lookup_command,
)
from sregym.twin.userland.diskwrite import shell_claim
from sregym.twin.userland.environment import container_env
from sregym.twin.userland.fs import ContainerFS, build_fs, image_family, pod_hostname
from sregym.twin.userland.layer import apply_layer, kept, layer_after, snapshot
from sregym.twin.userland.linkedfiles import LinkedDirs, link_files
from sregym.twin.userland.openwrite import write_check
from sregym.twin.userland.pathview import entry, list_dir
from sregym.twin.userland.shm import charge, mount_of, room, tmpfs_mounts
from sregym.twin.userland.vfiles import attach_proc

if TYPE_CHECKING:
    from collections.abc import Callable

    from sregym.twin.twin import Twin

EXEC_PID = 7  # an exec'd process's pid in the kernel's OOM line (the container's own is 1)
_FLAVOUR = {"debian": "dash", "alpine": "ash", "busybox": "ash"}


@dataclass
class ExecContext(ShellContext):
    """A ShellContext backed by a full container filesystem (directories, symlinks, modes), so
    `ls -l`, `cd` and `test -d` see empty directories and mount points too."""

    fs: ContainerFS | None = None
    base_files: dict[str, str] = field(default_factory=dict)

    def directories(self) -> set[str]:
        dirs = super().directories()
        if self.fs is not None:
            for path, node in self.fs.nodes.items():
                if node.kind == "dir" or (node.kind == "link" and self.fs.is_dir(path)):
                    dirs.add(path)
            if self.fs.nodes.provider is not None:
                dirs |= self.fs.nodes.provider.dirs()
            linked = LinkedDirs(dirs)  # paths through links to directories count too
            linked.fs = self.fs
            return linked
        return dirs

    @property
    def has_tree(self) -> bool:  # type: ignore[override]
        return self.fs is not None

    def list_dir(self, path: str) -> list[str] | None:
        return list_dir(self.fs, self.files, path) if self.fs is not None else super().list_dir(path)

    def path_kind(self, path: str) -> str | None:
        if self.fs is None:
            return super().path_kind(path)
        found = entry(self.fs, self.files, path)
        return found[0] if found is not None else None

    def path_mode(self, path: str) -> int | None:
        if self.fs is None:
            return super().path_mode(path)
        found = entry(self.fs, self.files, path)
        return found[1] if found is not None else None


def find_container(pod: dict[str, Any], name: str) -> dict[str, Any] | None:
    """A regular, init or ephemeral container of the pod by name."""
    spec = pod.get("spec") or {}
    for group in ("containers", "initContainers", "ephemeralContainers"):
        for container in spec.get(group) or []:
            if isinstance(container, dict) and container.get("name") == name:
                return container
    return None


def container_status(pod: dict[str, Any], name: str) -> dict[str, Any] | None:
    status = pod.get("status") or {}
    for group in ("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses"):
        for item in status.get(group) or []:
            if isinstance(item, dict) and item.get("name") == name:
                return item
    return None


def _layer_key(pod: dict[str, Any], container: str) -> tuple[str, str, str, str]:
    meta = pod.get("metadata") or {}
    status = container_status(pod, container) or {}
    return (meta.get("namespace", ""), meta.get("name", ""), container,
            str(status.get("containerID") or meta.get("uid", "")))


def exec_context(twin: Twin, pod: dict[str, Any], container_name: str, *,
                 tty: bool = False, present_time: Callable[[float], float] | None = None) -> ExecContext:
    """Build the context a command exec'd into `container_name` of `pod` runs in.

    When the kubelet runtime has the running instance, its view wins: the environment it
    resolved, the files its process sees (mounted keys and what the process wrote), its image's
    binaries and shell flavour. The filesystem tree adds everything else a container shows."""
    container = find_container(pod, container_name) or {"name": container_name}
    image = str(container.get("image") or "")
    meta = pod.get("metadata") or {}
    running = None
    runtime = twin.services.runtime
    if runtime is not None and hasattr(runtime, "shell_context"):
        running = runtime.shell_context(meta.get("namespace", ""), meta.get("name", ""),
                                        container_name)
    fs = build_fs(twin, pod, container)
    binaries = image_executables(image, twin)
    layers = twin.services.layers
    written = layers.get(_layer_key(pod, container_name))
    if running is not None:
        fs.overlay({path: content for path, content in running.files.items()
                    if fs.read(path) != content})
    base_tree = snapshot(fs)  # what the writable layer is a diff over (userland/layer.py)
    if written is not None:
        apply_layer(fs, written)
    files = fs.files()
    fs.add_dir("/sys/fs/cgroup", mode=0o555)
    meter = MemoryMeter(exec_memory(twin, pod, container))
    tmpfs = tmpfs_mounts(twin, pod, container_name)
    meter.disk_used = sum(len(content) for path, content in (written or {}).items() if mount_of(tmpfs, path) is None)
    workdir = str(container.get("workingDir") or _image_extra(image, "workdir", twin) or "/")
    ctx = ExecContext(
        env=container_env(twin, pod, container, tty=tty,
                          resolved=dict(running.env) if running is not None else None),
        files=files,
        pod=pod,
        container=container_name,
        twin=twin,
        node=str(get_path(pod, "spec", "nodeName", default="") or ""),
        hostname=pod_hostname(pod),
        cwd=posixpath.normpath(workdir) if workdir.startswith("/") else "/",
        start_time=twin.clock.now,
        shell_flavour=running.shell_flavour if running is not None else _FLAVOUR[image_family(image)],
        resolve=running.resolve if running is not None else None,
        userland=running.userland if running is not None else True,
        extras={**(running.extras if running is not None else {}),
                "fs": fs, "tty": tty, "image": image, "exec": True, "binaries": binaries,
                "tmpfs": tmpfs, "tmpfs_room": room, "base_tree": base_tree},
        fs=fs,
        base_files=dict(files),
        memory=meter,
        present_time=present_time,
    )
    attach_proc(ctx)
    link_files(ctx)
    ctx.extras["claim_space"] = shell_claim(ctx)
    ctx.extras["open_write"] = write_check(ctx)
    return ctx


def exec_memory(twin: Twin, pod: dict[str, Any], container: dict[str, Any]) -> int:
    """The memory an exec'd process can take before the OOM killer ends it: the container's
    `resources.limits.memory` (the node's allocatable when there is none) minus the container's
    (or the node's) current working set, never more than the server's `PROCESS_MEMORY_CAP`.

    The exec shares the container's cgroup, so a container already near its limit leaves an exec
    little room, as on a real node."""
    meta = pod.get("metadata") or {}
    runtime = twin.services.runtime
    limit_text = get_path(container, "resources", "limits", "memory")
    if limit_text:
        used = 0
        if runtime is not None:
            used = runtime.container_usage(meta.get("namespace", ""), meta.get("name", ""),
                                           str(container.get("name") or ""))[1]
        headroom = memory_bytes(limit_text) - used
    else:
        node_name = str(get_path(pod, "spec", "nodeName", default="") or "")
        node = twin.store.peek("Node", None, node_name) if node_name else None
        allocatable = get_path(node or {}, "status", "allocatable", "memory")
        if not allocatable:
            return PROCESS_MEMORY_CAP
        used = runtime.node_usage(node_name)[1] if runtime is not None else 0
        headroom = memory_bytes(allocatable) - used
    return max(0, min(PROCESS_MEMORY_CAP, headroom))


def _image_extra(image: str, key: str, twin: Any = None) -> Any:
    from sregym.twin.node.images import lookup

    try:
        spec, _ref = lookup(image, twin)
    except Exception:  # unparsable references have no catalogue entry
        return None
    return spec.extras.get(key) if spec is not None else None


def image_executables(image: str, twin: Any = None) -> dict[str, str]:
    """The image's executables, name -> path (its family's userland plus its own programs)."""
    from sregym.twin.node.image_families import executables
    from sregym.twin.node.images import lookup

    try:
        spec, _ref = lookup(image, twin)
    except Exception:  # an unparsable reference: judged by its name alone
        spec = None
    return executables(image, spec)


def executable_exists(ctx: ShellContext, name: str) -> bool:
    """Whether `name` is an executable in the container: registered, and shipped by the image
    (its family's userland, its own programs, or the catalogue's explicit `extras["binaries"]`)."""
    if lookup_command(name, ctx) is None:
        return False
    shipped = ctx.extras.get("binaries")
    if shipped is None:
        shipped = image_executables(str(ctx.extras.get("image", "")), ctx.twin)
    return name.rsplit("/", 1)[-1] in shipped


class ExecRun:
    """One exec'd process, run in slices of steps so that a server can answer other clients
    between them (a busy loop takes seconds of CPU before its step budget ends it)."""

    def __init__(self, ctx: ExecContext, argv: list[str], stdin: str = "") -> None:
        self.ctx = ctx
        self.argv = argv
        ctx.extras.setdefault("exec_argv", list(argv))
        if ctx.twin is not None and ctx.pod is not None and not ctx.extras.get("node_host"):
            from sregym.twin.userland.processes import exec_pid

            exec_pid(ctx, ctx.twin.clock.now)
        program = exec_program(ctx, argv, stdin)
        self._early = program if isinstance(program, ExecResult) else None
        self.proc = Process(program, 0.0) if not isinstance(program, ExecResult) else None
        self.sink = OutputSink()
        self.steps_left = EXEC_STEP_BUDGET

    @property
    def done(self) -> bool:
        proc = self.proc
        return (proc is None or proc.finished or self.sink.overflowed or self.steps_left <= 0
                or proc.clock > MAX_EXEC_SECONDS)

    def step(self, steps: int = EXEC_STEP_BUDGET) -> bool:
        """Run up to `steps` more effects; True once the exec has ended (or must end)."""
        if not self.done and self.proc is not None:
            steps = min(steps, self.steps_left)
            self.proc.run(MAX_EXEC_SECONDS, steps, self.sink)
            self.steps_left -= steps
        return self.done

    def result(self) -> ExecResult:
        """End the exec: its result, its writes kept in the writable layer."""
        result = self._early if self._early is not None else self.sink.result(self.proc)  # type: ignore[arg-type]
        keep_writes(self.ctx)
        if result.oom_killed:
            _log_oom_kill(self.ctx, self.argv)
        return result


def run_exec(ctx: ExecContext, argv: list[str], stdin: str = "") -> ExecResult:
    """Run an exec'd command to completion and keep what it wrote in the writable layer."""
    run = ExecRun(ctx, argv, stdin)
    while not run.step():
        pass
    return run.result()


def _log_oom_kill(ctx: ExecContext, argv: list[str]) -> None:
    """The kernel's line for an exec'd process killed at the container's memory limit, in the
    node's kernel log as `dmesg` shows it. Not when the server's own cap was what stopped it:
    that is a twin budget, which a real node would not have logged."""
    from sregym.twin.controllers.kubelet import oom_score_adj

    meter, twin = ctx.memory, ctx.twin
    logs = twin.services.logs if twin is not None else None
    if meter is None or logs is None or not ctx.node or ctx.pod is None or meter.limit >= PROCESS_MEMORY_CAP:
        return
    name = (argv[0].rsplit("/", 1)[-1] if argv else "sh")[:15]
    kib = meter.peak // 1024
    logs.node_append(ctx.node, "kernel", twin.clock.now,
                     f"Memory cgroup out of memory: Killed process {EXEC_PID} ({name}) "
                     f"total-vm:{kib + 4096}kB, anon-rss:{kib}kB, file-rss:0kB, shmem-rss:0kB, "
                     f"UID:0 pgtables:{kib // 1024 + 40}kB oom_score_adj:{oom_score_adj(ctx.pod)}")


def keep_writes(ctx: ExecContext) -> None:
    """Remember what this session changed in the container's tree (files, directories, links,
    modes, deletions: `userland/layer.py`), for later execs into the same container instance."""
    if ctx.twin is None or ctx.pod is None:
        return
    charge(ctx)
    layers = ctx.twin.services.layers
    key = _layer_key(ctx.pod, ctx.container)
    if "base_tree" in ctx.extras:
        after = layer_after(ctx)
        if after is None:
            layers.pop(key, None)
        else:
            layers[key] = after
    else:  # a context built by hand: its changed files only
        changed = {path: content for path, content in ctx.files.items()
                   if ctx.base_files.get(path) != content and kept(path)}
        layer = layers.get(key)
        if layer is not None:
            # Files the session removed (`rm /tmp/big`) leave the layer and its memory with them.
            for path in [path for path in layer if path not in ctx.files]:
                del layer[path]
        if changed:
            layers.setdefault(key, {}).update(changed)
    diskio = ctx.twin.services.diskio
    if diskio is not None and diskio.claims:  # deleted files give their node disk space back
        diskio.release_deleted(str((ctx.pod.get("metadata") or {}).get("uid", "")), ctx.container, ctx.files)
