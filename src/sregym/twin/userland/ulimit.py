"""The shell's `ulimit` builtin, with the resource limits a container gets from containerd.

A container's processes inherit containerd's limits: 1048576 open files (soft and hard), no limit
on processes, an 8 MiB stack. `ulimit -n N` sets both the soft and the hard limit for the shell and
what it runs; raising the hard limit again needs CAP_SYS_RESOURCE, which containers do not have
(privileged ones do), so it fails with EPERM as on a real node. Output and errors follow the
shell: dash (Debian images) or BusyBox ash (Alpine/BusyBox); bash only differs in its error texts.

The builtin replaces the shell's placeholder in `BUILTINS` when this package is imported (the
shell package cannot import the userland).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sregym.twin.node.shell.builtins import BUILTINS
from sregym.twin.node.shell.effects import Output, Program
from sregym.twin.userland.node_host import container_privileged

if TYPE_CHECKING:
    from sregym.twin.node.shell.interpreter import Shell

NOFILE = 1048576
UNLIMITED = None
# option: (dash label, BusyBox label, bash label, default value; None is unlimited)
LIMITS: dict[str, tuple[str, str, str, int | None]] = {
    "t": ("time(seconds)", "cpu time (seconds)", "cpu time", UNLIMITED),
    "f": ("file(blocks)", "file size (blocks)", "file size", UNLIMITED),
    "d": ("data(kbytes)", "data seg size (kb)", "data seg size", UNLIMITED),
    "s": ("stack(kbytes)", "stack size (kb)", "stack size", 8192),
    "c": ("coredump(blocks)", "core file size (blocks)", "core file size", UNLIMITED),
    "m": ("memory(kbytes)", "resident set size (kb)", "max memory size", UNLIMITED),
    "l": ("locked memory(kbytes)", "locked memory (kb)", "max locked memory", 8192),
    "p": ("process", "processes", "max user processes", UNLIMITED),
    "n": ("nofiles", "file descriptors", "open files", NOFILE),
    "v": ("vmemory(kbytes)", "address space (kb)", "virtual memory", UNLIMITED),
    "w": ("locks", "locks", "file locks", UNLIMITED),
    "r": ("rtprio", "real-time priority", "real-time priority", 0),
}
BUSYBOX_ORDER = "fdscmlpnvwrt"
BASH_OPTIONS = {"u": "p", "x": "w"}  # bash's letters for the same limits


def _limits(sh: Shell) -> dict[str, int | None]:
    """The shell's current limits (hard = soft here), kept for the whole exec session."""
    stored = sh.ctx.extras.get("rlimits")
    if stored is None:
        stored = {key: value[3] for key, value in LIMITS.items()}
        sh.ctx.extras["rlimits"] = stored
    return stored


def _show(value: int | None) -> str:
    return "unlimited" if value is None else str(value)


def _error(sh: Shell, text: str) -> Output:
    flavour = sh.ctx.shell_flavour or "ash"
    if flavour == "dash":
        return Output("stderr", f"{sh.name}: {sh.lineno}: ulimit: {text}\n")
    return Output("stderr", f"{sh.name}: ulimit: {text}\n")


def ulimit(sh: Shell, argv: list[str], _stdin: str) -> Program:
    flavour = sh.ctx.shell_flavour or "ash"
    limits = _limits(sh)
    letters: list[str] = []
    values: list[str] = []
    show_all = False
    for arg in argv[1:]:
        if arg.startswith("-") and len(arg) > 1:
            for letter in arg[1:]:
                if letter in ("H", "S"):
                    continue
                if letter == "a":
                    show_all = True
                    continue
                letter = BASH_OPTIONS.get(letter, letter) if flavour == "bash" else letter
                if letter not in LIMITS:
                    if flavour == "dash":
                        yield _error(sh, f"Illegal option -{letter}")
                    elif flavour == "bash":
                        yield Output("stderr", f"{sh.name}: ulimit: -{letter}: invalid option\n"
                                               "ulimit: usage: ulimit [-SHabcdefiklmnpqrstuvxPT] [limit]\n")
                    else:
                        yield _error(sh, f"invalid option -- '{letter}'")
                    return 2
                letters.append(letter)
        else:
            values.append(arg)
    if show_all:
        for letter in (BUSYBOX_ORDER if flavour == "ash" else LIMITS):
            dash_label, bb_label, bash_label, _ = LIMITS[letter]
            value = _show(limits[letter])
            if flavour == "ash":
                yield Output("stdout", f"-{letter}: {bb_label:<30} {value}\n")
            elif flavour == "bash":
                yield Output("stdout", f"{bash_label:<37}(-{letter}) {value}\n")
            else:
                yield Output("stdout", f"{dash_label:<20} {value}\n")
        return 0
    letter = letters[-1] if letters else "f"
    if not values:
        yield Output("stdout", _show(limits[letter]) + "\n")
        return 0
    text = values[0]
    if text == "unlimited":
        wanted: int | None = None
    elif text.isdigit():
        wanted = int(text)
    else:
        if flavour == "bash":
            yield Output("stderr", f"{sh.name}: ulimit: {text}: invalid number\n")
            return 1
        yield _error(sh, "bad number")
        return 2
    current = limits[letter]
    privileged = container_privileged(sh.ctx)
    if not privileged and (current is not None and (wanted is None or wanted > current)):
        if flavour == "bash":
            yield Output("stderr", f"{sh.name}: ulimit: {LIMITS[letter][2]}: cannot modify limit: "
                                   "Operation not permitted\n")
            return 1
        yield _error(sh, "error setting limit (Operation not permitted)" if flavour == "dash"
                     else "error setting limit: Operation not permitted")
        return 2
    limits[letter] = wanted
    return 0


BUILTINS["ulimit"] = ulimit
