"""`nsenter -t 1 ...`: a privileged pod sharing the host's PID namespace enters the node.

The usual way to act on a node from Kubernetes is a privileged pod with `hostPID: true` running
`nsenter -t 1 -m -u -i -n -p -- CMD` (PID 1 is then the node's systemd). The command runs with
`ctx.extras["node_host"]` set to the pod's node, which is what node-level tools (`systemctl`,
`date -s`, `hwclock`) read to act on the node rather than the container. Without `hostPID`,
PID 1 is the container's own process and the command stays in the container; without
privilege the namespace files cannot be opened, as util-linux reports.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from sregym.twin.node.shell import Invocation, Program, Shell, command

FLAGS = {"-m": "mount", "--mount": "mount", "-u": "uts", "--uts": "uts", "-i": "ipc", "--ipc": "ipc",
         "-n": "net", "--net": "net", "-p": "pid", "--pid": "pid", "-U": "user", "--user": "user",
         "-C": "cgroup", "--cgroup": "cgroup", "-a": "all", "--all": "all", "-F": "", "--no-fork": "",
         "-r": "", "--root": "", "-w": "", "--wd": ""}
USAGE = "Try 'nsenter --help' for more information.\n"
# The order util-linux opens the namespace files in (the first failure is the one reported).
ORDER = ("user", "cgroup", "ipc", "uts", "net", "pid", "mount")
PROC_NAME = {"mount": "mnt"}


def _container(call: Invocation) -> dict[str, Any]:
    spec = (call.ctx.pod or {}).get("spec") or {}
    return next((c for c in spec.get("containers") or [] if c.get("name") == call.ctx.container), {})


def privileged(call: Invocation, capability: str = "SYS_ADMIN") -> bool:
    """Whether the exec's container runs privileged or was granted `capability`."""
    security = _container(call).get("securityContext") or {}
    added = {str(c).upper().removeprefix("CAP_") for c in (security.get("capabilities") or {}).get("add") or []}
    return bool(security.get("privileged")) or capability in added or "ALL" in added


@command("nsenter")
def nsenter(call: Invocation) -> Program:
    args = list(call.args)
    target: str | None = None
    namespaces: set[str] = set()
    while args:
        arg = args[0]
        if arg == "--":
            args.pop(0)
            break
        if not arg.startswith("-") or arg == "-":
            break
        args.pop(0)
        if arg in ("-t", "--target"):
            if not args:
                call.error(f"nsenter: option requires an argument -- '{arg.lstrip('-')[0]}'\n{USAGE}")
                return 1
            target = args.pop(0)
        elif arg.startswith("--target="):
            target = arg.partition("=")[2]
        elif arg.startswith("-t") and len(arg) > 2:
            target = arg[2:]
        elif arg in FLAGS:
            if FLAGS[arg]:
                namespaces.add(FLAGS[arg])
        elif arg.startswith("-") and not arg.startswith("--") and all(f"-{c}" in FLAGS for c in arg[1:]):
            namespaces.update(FLAGS[f"-{c}"] for c in arg[1:] if FLAGS[f"-{c}"])
        else:
            shown = arg if arg.startswith("--") else arg[1:2]
            call.error(f"nsenter: unrecognized option '{shown}'\n" if arg.startswith("--")
                       else f"nsenter: invalid option -- '{shown}'\n")
            call.error(USAGE)
            return 1
    if "all" in namespaces:
        namespaces = set(ORDER)
    if namespaces and target is None:
        first = next(n for n in ORDER if n in namespaces)
        call.error(f"nsenter: neither filename nor target pid supplied for ns/{PROC_NAME.get(first, first)}\n")
        return 1
    if namespaces and not privileged(call):
        first = next(n for n in ORDER if n in namespaces)
        call.error(f"nsenter: cannot open /proc/{target}/ns/{PROC_NAME.get(first, first)}: Permission denied\n")
        return 1
    spec = (call.ctx.pod or {}).get("spec") or {}
    ctx = call.ctx
    if target == "1" and spec.get("hostPID") and spec.get("nodeName") and "mount" in namespaces:
        ctx = replace(call.ctx, extras={**call.ctx.extras, "node_host": str(spec["nodeName"])},
                      hostname=str(spec["nodeName"]))
    argv = args or ["sh"]
    sub = Shell(ctx, call.shell.name)
    sub.vars = dict(call.shell.exported_env())
    sub.exported = set(sub.vars)
    sub.offset = call.shell.offset
    try:
        return (yield from sub._invoke(argv, {}, call.stdin))
    finally:
        sub.release()
