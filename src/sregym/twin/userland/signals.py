"""`kill` and `killall`: signals to the container's processes, through the runtime (`pkill`
is `pgrep`'s twin in top.py and delivers through `deliver` here).

What an engineer sees when they try to restart a container from inside it is the kernel's rule
for a PID namespace's init: PID 1 gets only the signals it installed a handler for. `kill 1`
(SIGTERM) ends nginx, redis or postgres, which handle it and exit 0, and the kubelet sees the
container exit and restarts it; a shell, `sleep` or `tail` as PID 1 has no handler and nothing
happens; `kill -9 1` from inside the container does nothing at all. Every other PID is one of
`processes.process_table`: the exec itself (`kill $$` ends it with 128+signal), nginx's workers
(the master forks new ones), a StressChaos's stressors (they stay dead: `chaos.stress_kills`).
PIDs not in the table do not exist ("No such process").

Messages: dash's builtin (`sh -c 'kill ...'`), procps' /usr/bin/kill (`kubectl exec -- kill`)
and BusyBox's (builtin and applet) each have their own, and `kill -l` lists signals in each
one's layout.
"""

from __future__ import annotations

import re
from typing import Any

from sregym.twin.node.shell import Invocation, command
from sregym.twin.node.shell.control import Exit
from sregym.twin.userland.processes import process_table, program_argv

SIGNALS = ("HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE", "KILL", "USR1", "SEGV", "USR2",
           "PIPE", "ALRM", "TERM", "STKFLT", "CHLD", "CONT", "STOP", "TSTP", "TTIN", "TTOU", "URG",
           "XCPU", "XFSZ", "VTALRM", "PROF", "WINCH", "POLL", "PWR", "SYS")
NUMBERS = {name: index + 1 for index, name in enumerate(SIGNALS)} | {"IO": 29, "IOT": 6, "CLD": 17}
# Signals a server's handler turns into a clean shutdown (exit 0).
_GRACEFUL = {"TERM", "INT", "QUIT"}
_SHELLS = {"sh", "ash", "bash", "dash"}
# Signals whose default action is to do nothing.
_DEFAULT_IGNORED = {"CHLD", "URG", "WINCH"}
_PROCPS_USAGE = """
Usage:
 kill [options] <pid> [...]

Options:
 <pid> [...]            send signal to every <pid> listed
 -<signal>, -s, --signal <signal>
                        specify the <signal> to be sent
 -q, --queue <value>    integer value to be sent with the signal
 -l, --list=[<signal>]  list all signal names, or convert one to a name
 -L, --table            list all signal names in a nice table

 -h, --help     display this help and exit
 -V, --version  output version information and exit

For more details see kill(1)."""


def signal_name(spec: str) -> str | None:
    """`TERM`, `SIGTERM`, `term` or `15` as the canonical name; None if unknown."""
    text = spec.upper().removeprefix("SIG")
    if text.isdigit():
        number = int(text)
        return SIGNALS[number - 1] if 1 <= number <= len(SIGNALS) else None
    if text in NUMBERS:
        return SIGNALS[NUMBERS[text] - 1]
    return None


def _main_instance(call: Invocation) -> Any:
    twin, pod = call.ctx.twin, call.ctx.pod
    runtime = twin.services.runtime if twin is not None else None
    if runtime is None or pod is None:
        return None
    meta = pod.get("metadata") or {}
    instance = runtime.instance(meta.get("namespace", ""), meta.get("name", ""), call.ctx.container)
    return instance if instance is not None and instance.running else None


def _program(instance: Any) -> str:
    """The name of what really runs as PID 1 (an entrypoint script `exec`s its arguments)."""
    argv = program_argv([str(a) for a in instance.argv or []])
    return argv[0].rsplit("/", 1)[-1] if argv else ""


def main_process_name(call: Invocation) -> str:
    instance = _main_instance(call)
    return _program(instance)[:15] if instance is not None else ""


def deliver(call: Invocation, pid: int, signal: str) -> bool:
    """Send `signal` to `pid` in the container's PID namespace (`processes.process_table`);
    False when there is no such process."""
    procs = {p.pid: p for p in process_table(call.ctx, call.now, list(call.ctx.extras.get("exec_argv") or ["sh"]))}
    target = procs.get(pid)
    if target is None:
        return False
    if pid == 1:
        instance = _main_instance(call)
        if instance is not None:
            _signal_init(call, instance, signal)
        return True
    if signal in _DEFAULT_IGNORED or signal in ("STOP", "TSTP", "TTIN", "TTOU", "CONT"):
        return True  # ignored by default, or a stop the table does not show
    if target.stressor is not None:
        _end_stressor(call, target.stressor)
    elif pid == max(procs):  # the exec itself (`kill $$`): it dies of the signal
        raise Exit(128 + NUMBERS[signal])
    # nginx workers: the master forks a new one at once (the same count stays listed).
    return True


def _end_stressor(call: Invocation, stressor: tuple[tuple[str, str, str], str]) -> None:
    """A stressor killed from inside: chaos-daemon does not start it again, and the CPU or
    memory it held is free from now on (the runtime's next look at the pod sees it)."""
    from sregym.twin.chaos.stress_kills import mark_killed

    twin = call.ctx.twin
    key, part = stressor
    mark_killed(twin.services.chaos, key, part)
    namespace, _, name = key[1].partition("/")
    pod_runtime = twin.services.runtime.pod(namespace, name)
    if pod_runtime is not None:
        pod_runtime.next_wake = twin.clock.now


def _signal_init(call: Invocation, instance: Any, signal: str) -> None:
    """PID 1 dies only of a signal it handles: servers handle TERM/INT/QUIT and exit 0."""
    from sregym.twin.controllers.kubelet import IGNORES_SIGTERM

    name = _program(instance)
    if signal not in _GRACEFUL or name in IGNORES_SIGTERM or name in _SHELLS:
        return
    twin = call.ctx.twin
    meta = (call.ctx.pod or {}).get("metadata") or {}
    pod_runtime = twin.services.runtime.pod(meta.get("namespace", ""), meta.get("name", ""))
    instance.kill_reason = "signal"
    instance.stopping_until = twin.clock.now
    instance.stop_exit_code = 0
    if pod_runtime is not None:
        pod_runtime.next_wake = twin.clock.now


def _list(call: Invocation, busybox: bool, procps: bool, args: list[str]) -> int:
    if args:
        for arg in args:
            if arg.isdigit():
                number = int(arg) & 0x7F if int(arg) > 128 else int(arg)
                name = SIGNALS[number - 1] if 1 <= number <= len(SIGNALS) else None
                if name is None:
                    call.error(f"kill: unknown signal: {arg}" if not busybox else f"kill: bad signal name '{arg}'")
                    return 1
                call.write(name + "\n")
            else:
                name = signal_name(arg)
                if name is None:
                    call.error(f"kill: unknown signal: {arg}")
                    return 1
                call.write(f"{NUMBERS[name]}\n")
        return 0
    if busybox:
        call.write("".join(f"{n:2d}) {name}\n" for n, name in enumerate(SIGNALS, 1))
                   + "34) RTMIN\n64) RTMAX\n")
    elif procps:
        call.write("HUP INT QUIT ILL TRAP ABRT BUS FPE KILL USR1 SEGV USR2 PIPE ALRM TERM STKFLT\n"
                   "CHLD CONT STOP TSTP TTIN TTOU URG XCPU XFSZ VTALRM PROF WINCH POLL PWR SYS\n")
    else:  # dash's builtin: one per line, with the real-time range
        names = [name if name != "STKFLT" else "16" for name in SIGNALS]
        names[28] = "IO"
        names += ["32", "33"] + ["RTMIN"] + [f"RTMIN+{i}" for i in range(1, 16)] \
            + [f"RTMAX-{i}" for i in range(14, 0, -1)] + ["RTMAX"]
        call.write("0\n" + "".join(n + "\n" for n in names))
    return 0


@command("kill")
def kill(call: Invocation) -> int:
    busybox = call.ctx.shell_flavour in ("ash", "")
    procps = not busybox and call.shell.name == "kill"  # exec'd directly, not the shell's builtin
    prefix = "" if procps or busybox else f"{call.shell.name}: {call.shell.lineno}: "
    args = list(call.args)
    signal = "TERM"
    if args and args[0] in ("-l", "-L", "--list", "--table"):
        return _list(call, busybox, procps or args[0] in ("-L", "--table"), args[1:])
    if args and args[0] in ("-s", "--signal") and len(args) > 1:
        args = args[1:]
        args[0] = "-" + args[0]
    if (args and args[0].startswith("-") and args[0] != "--" and not args[0][1:].isdigit()) or (
            args and re.fullmatch(r"-\d+", args[0]) and len(args) > 1):
        name = signal_name(args[0][1:])
        if name is None:
            if procps:
                call.error(f"kill: invalid argument {args[0][1:2]}\n{_PROCPS_USAGE}")
            elif busybox:
                call.error(f"{'kill' if call.shell.name == 'kill' else call.shell.name}: bad signal name "
                           f"'{args[0][1:]}'")
            else:
                call.error(f"{prefix}kill: invalid signal number or name: {args[0][1:]}")
            return 1 if procps or busybox else 2
        signal = name
        args = args[1:]
    if args and args[0] == "--":
        args = args[1:]
    if not args:
        if procps:
            call.error(_PROCPS_USAGE)
            return 1
        if busybox:
            call.error("BusyBox v1.36.1 (2023-05-18 22:34:17 UTC) multi-call binary.\n\nUsage: kill "
                       "[-l] [-SIG] PID...\n\nSend a signal (default: TERM) to given PIDs\n\n\t-l\tList "
                       "all signal names and numbers")
            return 1
        call.error(f"{prefix}kill: Usage: kill [-s sigspec | -signum | -sigspec] [pid | job]... or\n"
                   "kill -l [exitstatus]")
        return 2
    status = 0
    for target in args:
        if not re.fullmatch(r"-?\d+", target):
            status = 1
            if procps:
                call.error(f"kill: failed to parse argument: '{target}'")
            elif busybox:
                call.error(f"{call.shell.name}: invalid number '{target}'")
            else:
                call.error(f"{prefix}kill: Illegal number: {target}")
                return 2
            continue
        if not deliver(call, int(target), signal):
            status = 1
            if procps:
                call.error(f"kill: ({target}): No such process")
            elif busybox:
                call.error(f"{call.shell.name}: can't kill pid {target}: No such process")
            else:
                call.error(f"{prefix}kill: No such process\n\n")
    return status


def matching_pids(call: Invocation, pattern: str, exact: bool, full: bool = False) -> list[int] | None:
    """PIDs whose name (or whole command line) matches, not counting the caller itself; None
    for a pattern that does not compile."""
    try:
        regex = re.compile(pattern)
    except re.error:
        return None
    procs = process_table(call.ctx, call.now, list(call.ctx.extras.get("exec_argv") or ["sh"]))
    own = max(p.pid for p in procs)
    out = []
    for p in procs:
        if p.pid == own:
            continue
        subject = p.command if full else p.name
        if (regex.fullmatch(subject) if exact else regex.search(subject)):
            out.append(p.pid)
    return out


@command("killall")
def killall(call: Invocation) -> int:
    args = list(call.args)
    signal = "TERM"
    quiet = False
    names = []
    for arg in args:
        if arg == "-q":
            quiet = True
        elif arg.startswith("-") and signal_name(arg[1:]):
            signal = signal_name(arg[1:]) or "TERM"
        else:
            names.append(arg)
    status = 0
    for name in names:
        pids = matching_pids(call, re.escape(name[:15]), exact=True) or []
        for pid in sorted(pids, reverse=True):  # never the caller itself
            deliver(call, pid, signal)
        if not pids:
            status = 1
            if not quiet:
                call.error(f"killall: {name}: no process killed" if call.ctx.shell_flavour in ("ash", "")
                           else f"{name}: no process found")
    return status
