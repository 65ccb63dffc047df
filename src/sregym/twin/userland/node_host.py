"""Getting from a pod onto its node, as an SRE does on a real cluster.

Two ways lead to a root shell on the node, and both must be reachable with Kubernetes writes
only (a privileged DaemonSet or Job, or `kubectl debug node/X`):

- `nsenter -t 1 -m -u -i -n -p -- CMD` in a pod with `hostPID: true` whose container is
  `privileged`: PID 1 is the node's systemd, and entering its namespaces runs CMD on the host.
  Without hostPID, PID 1 is the container's own process; without privileges the kernel refuses
  (nsenter's real messages for both);
- `chroot /host` in a pod that mounts the node's `/` (the hostPath volume `kubectl debug node`
  creates): the node's filesystem becomes the root. The pod's privileges stay what they were, so
  `sysctl -w` or `dmesg` still need a privileged pod (`kubectl debug --profile=sysadmin`).

The command then runs in a host context: a `ShellContext` with the node's files and
`ctx.extras[HOST_KEY] = <node name>`, `ctx.extras[PRIVILEGED_KEY] = bool`. Node tools
(`sysctl`, `conntrack`, `dmesg`, `journalctl` in `node_tools.py`; `systemctl` elsewhere) read
`host_node(ctx)` to act on that node's `NodeOS`. A write to `/proc/sys/...` in the host
context (`echo 1024 > /proc/sys/net/netfilter/nf_conntrack_max`) is a sysctl write.
"""

from __future__ import annotations

import contextlib
import posixpath
from typing import TYPE_CHECKING, Any

from sregym.twin.chaos import node_kernel
from sregym.twin.chaos.nodeos import nodeos_of
from sregym.twin.machinery.objects import get_path
from sregym.twin.node import kubelet_config
from sregym.twin.node.shell import Invocation, ShellContext, command
from sregym.twin.node.shell.interpreter import Shell
from sregym.twin.userland.filteropts import BUSYBOX_BANNER

if TYPE_CHECKING:
    from sregym.twin.node.shell.effects import Program
    from sregym.twin.twin import Twin

HOST_KEY = "node_host"  # ctx.extras[HOST_KEY]: this exec runs on that node as host root
PRIVILEGED_KEY = "host_privileged"  # ... with all capabilities (a privileged pod)
NS_ORDER = (("U", "user"), ("C", "cgroup"), ("i", "ipc"), ("u", "uts"), ("n", "net"), ("p", "pid"),
            ("m", "mnt"), ("T", "time"))
LONG_NS = {"user": "U", "cgroup": "C", "ipc": "i", "uts": "u", "net": "n", "pid": "p", "mount": "m", "time": "T"}
OS_RELEASE = ('PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\nVERSION_ID="12"\n'
              'VERSION="12 (bookworm)"\nVERSION_CODENAME=bookworm\nID=debian\nHOME_URL="https://www.debian.org/"\n'
              'SUPPORT_URL="https://www.debian.org/support"\nBUG_REPORT_URL="https://bugs.debian.org/"\n')


def host_node(ctx: ShellContext) -> str:
    """The node this context runs on as host root, or "" inside a container."""
    return str(ctx.extras.get(HOST_KEY) or "")


def container_privileged(ctx: ShellContext) -> bool:
    """Whether the process has all capabilities: a host context of a privileged pod, or a
    privileged container."""
    if host_node(ctx):
        return bool(ctx.extras.get(PRIVILEGED_KEY))
    pod = ctx.pod or {}
    spec = pod.get("spec") or {}
    for group in ("containers", "initContainers", "ephemeralContainers"):
        for container in spec.get(group) or []:
            if isinstance(container, dict) and container.get("name") == ctx.container:
                return bool(get_path(container, "securityContext", "privileged", default=False))
    return False


# ------------------------------------------------------------------------- host files
def sysctl_path(key: str) -> str:
    return "/proc/sys/" + key.replace(".", "/")


def node_files(twin: Twin, node: str) -> dict[str, str]:
    """What the node's root filesystem shows (the parts an SRE reads)."""
    node_obj = twin.store.peek("Node", None, node) or {}
    files = {
        "/etc/hostname": node + "\n",
        "/etc/os-release": OS_RELEASE,
        "/etc/kubernetes/kubelet.conf": _kubeconfig(node),
        kubelet_config.PATH: nodeos_of(twin).kubelet_config(node),
        "/etc/containerd/config.toml": 'version = 2\n\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]\n'
                                        '  runtime_type = "io.containerd.runc.v2"\n',
        "/etc/sysctl.conf": "",
        "/proc/sys/kernel/hostname": node + "\n",
    }
    for key in (*node_kernel.DEFAULTS, *node_kernel.READ_ONLY):
        files[sysctl_path(key)] = node_kernel.read(twin, node, key) + "\n"
    for pod in twin.store.scan("Pod"):
        if (pod.get("spec") or {}).get("nodeName") != node:
            continue
        meta = pod.get("metadata") or {}
        base = f"/var/log/pods/{meta.get('namespace')}_{meta.get('name')}_{meta.get('uid')}"
        for container in (pod.get("spec") or {}).get("containers") or []:
            files[f"{base}/{container.get('name')}/0.log"] = ""
    if get_path(node_obj, "metadata", "name") is None:
        files.pop("/etc/kubernetes/kubelet.conf")
    return files


def _kubeconfig(node: str) -> str:
    return ("apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: LS0tLS1CRUdJTi...\n"
            "    server: https://control-plane:6443\n  name: default-cluster\ncontexts:\n- context:\n"
            "    cluster: default-cluster\n    namespace: default\n    user: default-auth\n  name: default-context\n"
            "current-context: default-context\nkind: Config\npreferences: {}\nusers:\n- name: default-auth\n"
            "  user:\n    client-certificate: /var/lib/kubelet/pki/kubelet-client-current.pem\n"
            "    client-key: /var/lib/kubelet/pki/kubelet-client-current.pem\n")


def host_context(ctx: ShellContext, node: str, *, privileged: bool) -> ShellContext:
    """A root shell on `node`: the node's files, hostname and PATH, acting on its NodeOS."""
    twin = ctx.twin
    env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root",
           "HOSTNAME": node}
    if "TERM" in ctx.env:
        env["TERM"] = ctx.env["TERM"]
    return ShellContext(env=env, files=node_files(twin, node), pod=ctx.pod, container=ctx.container, twin=twin,
                        node=node, hostname=node, cwd="/", start_time=ctx.start_time, shell_flavour="dash",
                        extras={HOST_KEY: node, PRIVILEGED_KEY: privileged, "image": ""},
                        memory=ctx.memory, present_time=ctx.present_time)


def run_on_host(call: Invocation, host: ShellContext, argv: list[str]) -> Program:
    """Run argv in the host context; writes to /proc/sys become sysctl writes."""
    before = {p: c for p, c in host.files.items() if p.startswith("/proc/sys/")}
    before_config = host.files.get(kubelet_config.PATH)
    sub = Shell(host, argv[0].rsplit("/", 1)[-1])
    sub.offset = call.shell.offset
    try:
        status = yield from sub._invoke(argv, {}, call.stdin)
    finally:
        sub.release()
    config = host.files.get(kubelet_config.PATH)
    if config is not None and config != before_config:
        nodeos_of(call.ctx.twin).set_kubelet_config(host.node, config)  # root owns the host's files
    if host.extras.get(PRIVILEGED_KEY):
        for path, content in host.files.items():
            if path.startswith("/proc/sys/") and before.get(path) != content:
                key = path[len("/proc/sys/"):].replace("/", ".")
                with contextlib.suppress(KeyError, node_kernel.SysctlError):  # the kernel refused it
                    node_kernel.write(call.ctx.twin, host.node, key, content.strip())
    return status


def _default_shell(call: Invocation) -> list[str]:
    return [call.ctx.env.get("SHELL") or "/bin/sh", "-i"]


# ------------------------------------------------------------------------------ nsenter
def _nsenter_usage(call: Invocation, message: str) -> int:
    call.error(f"nsenter: {message}")
    if call.ctx.shell_flavour != "ash":
        call.error("Try 'nsenter --help' for more information.")
    return 1


@command("nsenter")
def nsenter(call: Invocation) -> Program | int:
    args = list(call.args)
    target: str | None = None
    spaces: set[str] = set()
    rest: list[str] = []
    while args:
        arg = args.pop(0)
        if arg == "--":
            rest = args
            break
        if arg in ("-t", "--target"):
            if not args:
                return _nsenter_usage(call, f"option requires an argument -- '{arg.lstrip('-')[:1]}'")
            target = args.pop(0)
        elif arg.startswith("--target="):
            target = arg.split("=", 1)[1]
        elif arg.startswith("-t") and not arg.startswith("--"):
            target = arg[2:]
        elif arg in ("-a", "--all"):
            spaces.update(letter for letter, _ in NS_ORDER)
        elif arg.startswith("--") and arg[2:].split("=", 1)[0] in LONG_NS:
            spaces.add(LONG_NS[arg[2:].split("=", 1)[0]])
        elif arg.startswith("--") and arg[2:] in ("preserve-credentials", "no-fork", "follow-context"):
            continue
        elif arg.startswith("-") and len(arg) > 1 and not arg.startswith("--"):
            for letter in arg[1:]:
                if letter in "UCiunpmT":
                    spaces.add(letter)
                elif letter != "F":
                    return _nsenter_usage(call, f"invalid option -- '{letter}'")
        elif arg.startswith("--"):
            return _nsenter_usage(call, f"unrecognized option '{arg}'")
        else:
            rest = [arg, *args]
            break
    argv = rest or _default_shell(call)
    busybox = call.ctx.shell_flavour == "ash"
    if target is None:
        if not spaces:
            return _nsenter_usage(call, "no namespace specified")
        first = next(name for letter, name in NS_ORDER if letter in spaces)
        return _nsenter_usage(call, f"neither filename nor target pid supplied for ns/{first}")
    if not target.isdigit():
        return _nsenter_usage(call, f"failed to parse pid: '{target}'")
    if not spaces:
        return _nsenter_usage(call, "no namespace specified")
    first = next(name for letter, name in NS_ORDER if letter in spaces)
    pod = call.ctx.pod or {}
    host_pid = bool(get_path(pod, "spec", "hostPID", default=False)) or bool(host_node(call.ctx))
    privileged = container_privileged(call.ctx)
    if target != "1":
        return _fail(call, busybox, "open", target, first, "No such file or directory")
    if host_pid and not privileged:
        return _fail(call, busybox, "open", target, first, "Permission denied")
    if not privileged:
        return _fail(call, busybox, "setns", target, first, "Operation not permitted")
    if not host_pid:
        return _same_context(call, argv)
    node = host_node(call.ctx) or call.ctx.node
    return run_on_host(call, host_context(call.ctx, node, privileged=True), argv)


def _fail(call: Invocation, busybox: bool, stage: str, pid: str, space: str, reason: str) -> int:
    if stage == "open":
        text = (f"can't open '/proc/{pid}/ns/{space}': {reason}" if busybox
                else f"cannot open /proc/{pid}/ns/{space}: {reason}")
    else:
        text = (f"setns(): can't reassociate to namespace '{space}': {reason}" if busybox
                else f"reassociate to namespace 'ns/{space}' failed: {reason}")
    call.error(f"nsenter: {text}")
    return 1


def _same_context(call: Invocation, argv: list[str]) -> Program:
    """Entering one's own namespaces changes nothing: run argv where we are."""
    sub = Shell(call.ctx, argv[0].rsplit("/", 1)[-1])
    sub.offset = call.shell.offset
    try:
        return (yield from sub._invoke(argv, {}, call.stdin))
    finally:
        sub.release()


# ------------------------------------------------------------------------------- chroot
def host_mount(pod: dict[str, Any], container: str, path: str) -> bool:
    """Whether `path` in the container is a hostPath mount of the node's `/`."""
    spec = pod.get("spec") or {}
    volumes = {v.get("name"): v for v in spec.get("volumes") or [] if isinstance(v, dict)}
    for group in ("containers", "initContainers", "ephemeralContainers"):
        for c in spec.get(group) or []:
            if not isinstance(c, dict) or c.get("name") != container:
                continue
            for mount in c.get("volumeMounts") or []:
                volume = volumes.get(mount.get("name")) or {}
                host_path = get_path(volume, "hostPath", "path")
                if host_path is not None and posixpath.normpath(str(host_path)) == "/" and \
                        posixpath.normpath(str(mount.get("mountPath") or "")) == path:
                    return True
    return False


@command("chroot")
def chroot(call: Invocation) -> Program | int:
    args = [a for a in call.args if a != "--"]
    busybox = call.ctx.shell_flavour == "ash"
    if not args or (args[0].startswith("-") and args[0] != "-"):
        if busybox:
            call.error(BUSYBOX_BANNER + "Usage: chroot NEWROOT [PROG ARGS]\n\nRun PROG with root directory set to NEWROOT")
        else:
            call.error("chroot: missing operand" if not args else f"chroot: unrecognized option '{args[0]}'")
            call.error("Try 'chroot --help' for more information.")
        return 1 if busybox else 125
    root = call.shell.abspath(args[0])
    argv = args[1:] or _default_shell(call)
    if root == "/":
        return _same_context(call, argv)
    pod = call.ctx.pod or {}
    if not host_node(call.ctx) and host_mount(pod, call.ctx.container, root):
        node = call.ctx.node
        return run_on_host(call, host_context(call.ctx, node, privileged=container_privileged(call.ctx)), argv)
    exists = root in call.ctx.directories()
    if not exists:
        reason = "No such file or directory"
        if busybox:
            call.error(f"chroot: can't change root directory to '{root}': {reason}")
            return 1
        call.error(f"chroot: cannot change root directory to '{args[0]}': {reason}")
        return 125
    if busybox:
        call.error(f"chroot: can't execute '{argv[0]}': No such file or directory")
        return 127
    call.error(f"chroot: failed to run command '{argv[0]}': No such file or directory")
    return 127
