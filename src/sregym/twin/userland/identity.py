"""`id`, `whoami`, `pwd`, `uname`: who and where an exec'd process is.

`id` honours the pod's and container's `securityContext` (runAsUser, runAsGroup, fsGroup,
supplementalGroups), which is how an engineer checks why a process cannot write a volume; `uname`
reports the kernel of the node the pod runs on.
"""

from __future__ import annotations

from typing import Any

from sregym.twin.machinery.objects import get_path
from sregym.twin.node.shell import Invocation, command
from sregym.twin.userland.filteropts import is_busybox

KERNEL_BUILD = "#1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1 (2024-11-22)"
DEFAULT_KERNEL = "6.1.0-28-amd64"



def passwd_table(call: Invocation, path: str) -> dict[int, str]:
    """uid/gid → name from /etc/passwd or /etc/group."""
    out: dict[int, str] = {}
    for line in (call.ctx.files.get(path) or "").splitlines():
        parts = line.split(":")
        if len(parts) >= 3 and parts[2].isdigit():
            out.setdefault(int(parts[2]), parts[0])
    return out


def process_ids(call: Invocation) -> tuple[int, int | None, list[int]]:
    """(uid, gid or None for the user's primary group, supplementary groups) of the process."""
    pod: dict[str, Any] = call.ctx.pod or {}
    container = next((c for group in ("containers", "initContainers", "ephemeralContainers")
                      for c in get_path(pod, "spec", group, default=[]) or []
                      if c.get("name") == call.ctx.container), {})
    pod_sc = get_path(pod, "spec", "securityContext", default={}) or {}
    sc = container.get("securityContext") or {}
    uid = sc.get("runAsUser", pod_sc.get("runAsUser"))
    gid = sc.get("runAsGroup", pod_sc.get("runAsGroup"))
    extra = [int(g) for g in pod_sc.get("supplementalGroups") or [] if isinstance(g, int)]
    if isinstance(pod_sc.get("fsGroup"), int):
        extra.insert(0, int(pod_sc["fsGroup"]))
    return (int(uid) if isinstance(uid, int) else 0,
            int(gid) if isinstance(gid, int) else None, extra)


def _member_of(call: Invocation, user: str) -> list[int]:
    """Groups listing `user` as a member in /etc/group (root's supplementary groups)."""
    out = []
    for line in (call.ctx.files.get("/etc/group") or "").splitlines():
        parts = line.split(":")
        if len(parts) >= 4 and parts[2].isdigit() and user in parts[3].split(","):
            out.append(int(parts[2]))
    return out


def _named(number: int, names: dict[int, str]) -> str:
    return f"{number}({names[number]})" if number in names else str(number)


@command("id")
def id_(call: Invocation) -> int:
    users = passwd_table(call, "/etc/passwd")
    groups = passwd_table(call, "/etc/group")
    uid, gid, extra = process_ids(call)
    if gid is None:
        gid = 0
    if not extra and gid == 0 and uid in users:
        group_ids = [0, *[g for g in _member_of(call, users[uid]) if g != 0]]
    else:
        group_ids = [gid, *[g for g in extra if g != gid]]
    args = call.args
    if "-u" in args:
        call.write((users.get(uid, str(uid)) if "-n" in args else str(uid)) + "\n")
        return 0
    if "-g" in args:
        call.write((groups.get(gid, str(gid)) if "-n" in args else str(gid)) + "\n")
        return 0
    if "-G" in args:
        call.write(" ".join(groups.get(g, str(g)) if "-n" in args else str(g) for g in group_ids) + "\n")
        return 0
    call.write(f"uid={_named(uid, users)} gid={_named(gid, groups)} groups="
               + ",".join(_named(g, groups) for g in group_ids) + "\n")
    return 0


@command("whoami")
def whoami(call: Invocation) -> int:
    users = passwd_table(call, "/etc/passwd")
    uid, _gid, _extra = process_ids(call)
    if uid in users:
        call.write(users[uid] + "\n")
        return 0
    call.error(f"whoami: unknown uid {uid}" if is_busybox(call)
               else f"whoami: cannot find name for user ID {uid}")
    return 1


@command("pwd")
def pwd(call: Invocation) -> int:
    call.write(call.ctx.cwd + "\n")
    return 0


@command("uname")
def uname(call: Invocation) -> int:
    kernel = DEFAULT_KERNEL
    twin = call.ctx.twin
    if twin is not None and call.ctx.node:
        node = twin.store.peek("Node", None, call.ctx.node)
        kernel = get_path(node or {}, "status", "nodeInfo", "kernelVersion") or DEFAULT_KERNEL
    hostname = call.ctx.hostname or call.ctx.env.get("HOSTNAME", "localhost")
    fields = {"s": "Linux", "n": hostname, "r": kernel, "v": KERNEL_BUILD, "m": "x86_64",
              "p": "unknown", "i": "unknown", "o": "GNU/Linux"}
    letters: list[str] = []
    for arg in call.args:
        if arg in ("-a", "--all"):
            # GNU leaves out -p and -i when they are "unknown"; BusyBox never prints them.
            letters = ["s", "n", "r", "v", "m", "o"]
            break
        if not arg.startswith("-") or any(c not in "snrvmpio" for c in arg[1:]):
            call.error(f"uname: invalid option -- '{arg.lstrip('-')[:1]}'" if arg.startswith("-")
                       else f"uname: extra operand '{arg}'")
            return 1
        letters.extend(arg[1:])
    if not letters:
        letters = ["s"]
    ordered = [k for k in "snrvmpio" if k in letters]
    call.write(" ".join(fields[k] for k in ordered) + "\n")
    return 0
