"""`top -b`, `pgrep`/`pkill` and `pidof` inside a container (procps-ng 4.0 on Debian images).

`top`'s summary is the node's, as the kernel shows it to a container (uptime, load averages,
CPU modes, memory: `nodeview`); its task table is the container's PID namespace
(`processes.process_table`), sorted by %CPU, so a StressChaos's `stress-ng-cpu` workers are at
the top with the CPU they burn. Batch output is cut to 80 columns, as without a terminal.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from sregym.twin.node.shell import Invocation, command
from sregym.twin.userland.nodeview import node_view
from sregym.twin.userland.processes import Proc, process_table
from sregym.twin.userland.signals import deliver, signal_name

WIDTH = 80


def _uptime(seconds: float) -> str:
    minutes = int(seconds // 60)
    days, minutes = divmod(minutes, 1440)
    hours, minutes = divmod(minutes, 60)
    head = f"{days} day{'s' if days != 1 else ''}, " if days else ""
    return f"{head}{hours:2d}:{minutes:02d}" if hours else f"{head}{minutes} min"


def _mem(kib: int, width: int) -> str:
    """top's scaling: KiB while it fits, else MiB or GiB with a fraction."""
    text = str(kib)
    if len(text) <= width:
        return text.rjust(width)
    for unit, scale in (("m", 1024), ("g", 1024 ** 2), ("t", 1024 ** 3)):
        text = f"{kib / scale:.1f}{unit}"
        if len(text) <= width:
            return text.rjust(width)
    return text


def _time_plus(seconds: float) -> str:
    hundredths = int(seconds * 100)
    minutes, rest = divmod(hundredths, 6000)
    return f"{minutes}:{rest // 100:02d}.{rest % 100:02d}"


@command("top")
def top(call: Invocation) -> int:
    args = list(call.args)
    iterations = None
    while args:
        arg = args.pop(0)
        if not arg.startswith("-"):
            call.error(f"top: unknown option '{arg}'\nUsage:\n  top -hv | -bcEeHiOSs1 -d secs -n max -u|U user "
                       "-p pid(s) -o field -w [cols]")
            return 1
        letters = arg[1:]
        for i, ch in enumerate(letters):
            if ch in "bcHiSs1E":
                continue
            if ch in "ndpuUow":
                value = letters[i + 1:] or (args.pop(0) if args else "")
                if ch == "n":
                    iterations = int(value) if value.isdigit() else None
                break
            call.error(f"top: invalid option -- '{ch}'\nUsage:\n  top -hv | -bcEeHiOSs1 -d secs -n max -u|U user "
                       "-p pid(s) -o field -w [cols]")
            return 1
    if "-b" not in call.args and not any(a.startswith("-") and "b" in a for a in call.args) \
            and not call.ctx.extras.get("tty"):
        call.error("top: failed tty get")
        return 1
    del iterations  # one screen: the exec returns once it is printed
    now = call.now
    view = node_view(call.ctx, now)
    procs = process_table(call.ctx, now, list(call.argv))
    stamp = datetime.fromtimestamp(now, tz=UTC).strftime("%H:%M:%S")
    load = ", ".join(f"{v:.2f}" for v in view.load)
    running = sum(1 for p in procs if p.state == "R")
    lines = [f"top - {stamp} up {_uptime(now - view.boot_time)},  0 user,  load average: {load}",
             f"Tasks:{len(procs):4d} total,{running:4d} running,{len(procs) - running:4d} sleeping,"
             f"{0:4d} stopped,{0:4d} zombie"]
    share = min(1.0, view.busy_cores / view.cpus)
    us, sy = 100 * share * 0.75, 100 * share * 0.22
    lines.append(f"%Cpu(s):{us:5.1f} us,{sy:5.1f} sy,{0.0:5.1f} ni,{max(0.0, 100 - us - sy - 0.3):5.1f} id,"
                 f"{0.3:5.1f} wa,{0.0:5.1f} hi,{0.0:5.1f} si,{0.0:5.1f} st ")
    mib = 1 << 20
    lines.append(f"MiB Mem :{view.mem_total / mib:9.1f} total,{view.mem_free / mib:9.1f} free,"
                 f"{view.mem_used / mib:9.1f} used,{(view.cached + view.buffers) / mib:9.1f} buff/cache     ")
    lines.append(f"MiB Swap:{0.0:9.1f} total,{0.0:9.1f} free,{0.0:9.1f} used.{view.mem_available / mib:9.1f} "
                 "avail Mem ")
    lines.append("")
    lines.append(f"{'PID':>7} USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND")
    ordered = sorted(procs, key=lambda p: (-round(p.cpu * 100, 1), p.pid))
    for p in ordered:
        lines.append(_row(p, view.mem_total))
    call.write("\n".join(line if len(line) <= WIDTH else line[:WIDTH - 1] + "+" for line in lines) + "\n")
    return 0


def _row(p: Proc, total: int) -> str:
    rss = p.rss // 1024
    shr = min(rss, 2600 + rss // 40)
    user = p.user if len(p.user) <= 8 else p.user[:7] + "+"
    return (f"{p.pid:>7} {user:<8} {20:>3} {0:>3} {_mem(p.vsz // 1024, 7)} {_mem(rss, 6)} {_mem(shr, 6)} "
            f"{p.state} {100 * p.cpu:5.1f} {100.0 * p.rss / max(1, total):5.1f} {_time_plus(p.cpu_s):>9} {p.name}")


# ===================================================================================== pgrep
def _matches(call: Invocation, full: bool, exact: bool, pattern: str) -> list[Proc] | None:
    try:
        regex = re.compile(pattern)
    except re.error:
        return None
    out = []
    for p in process_table(call.ctx, call.now, list(call.argv)):
        if p.argv == list(call.argv):
            continue  # pgrep never reports itself
        subject = p.command if full else p.name
        hit = regex.fullmatch(subject) if exact else regex.search(subject)
        if hit:
            out.append(p)
    return out


@command("pgrep", "pkill")
def pgrep(call: Invocation) -> int:
    full = exact = listing = listing_full = count = echo = False
    delimiter = "\n"
    patterns: list[str] = []
    args = list(call.args)
    signal = "TERM"
    if call.name == "pkill" and args:  # the signal comes first: -9, -KILL, -SIGKILL, --signal X
        if args[0] in ("--signal", "-s") and len(args) > 1:
            args[:2] = ["-" + args[1]]
        elif args[0].startswith("--signal="):
            args[0] = "-" + args[0].split("=", 1)[1]
        name = signal_name(args[0][1:]) if args[0].startswith("-") else None
        if name is not None and not (args[0][1:].isalpha() and set(args[0][1:]) <= set("fxlacne")):
            signal = name
            args.pop(0)
    while args:
        arg = args.pop(0)
        if arg.startswith("-") and len(arg) > 1 and not patterns:
            if arg in ("--full",):
                full = True
                continue
            letters = arg[1:]
            for i, ch in enumerate(letters):
                if ch == "f":
                    full = True
                elif ch == "x":
                    exact = True
                elif ch == "l":
                    listing = True
                elif ch == "a":
                    listing_full = True
                elif ch == "c":
                    count = True
                elif ch == "e" and call.name == "pkill":
                    echo = True
                elif ch == "d":
                    delimiter = letters[i + 1:] or (args.pop(0) if args else "\n")
                    break
                elif ch.isdigit() or ch in "n0":
                    continue
                else:
                    call.error(f"{call.name}: invalid option -- '{ch}'\nUsage: {call.name} [options] <pattern>\n\n"
                               f"See the {call.name}(1) man page for details.")
                    return 2
        else:
            patterns.append(arg)
    if not patterns:
        call.error(f"{call.name}: no matching criteria specified\nTry `{call.name} --help' for more information.")
        return 2
    found = _matches(call, full, exact, patterns[0])
    if found is None:
        call.error(f"{call.name}: cannot compile regular expression '{patterns[0]}'")
        return 2
    if call.name == "pkill":
        for p in found:
            deliver(call, p.pid, signal)
            if echo:
                call.write(f"{p.name} killed (pid {p.pid})\n")
        return 0 if found else 1
    if count:
        call.write(f"{len(found)}\n")
    elif found:
        rows = [f"{p.pid} {p.command}" if listing_full else f"{p.pid} {p.name}" if listing else str(p.pid)
                for p in found]
        call.write(delimiter.join(rows) + "\n")
    return 0 if found else 1


@command("pidof")
def pidof(call: Invocation) -> int:
    names = [a for a in call.args if not a.startswith("-")]
    procs = process_table(call.ctx, call.now, list(call.argv))
    found: list[int] = []
    for name in names:
        for p in sorted(procs, key=lambda p: -p.pid):
            base = p.argv[0].rsplit("/", 1)[-1] if p.argv else ""
            if name in (p.name, base) and p.argv != list(call.argv):
                found.append(p.pid)
    if found:
        call.write(" ".join(str(pid) for pid in found) + "\n")
    return 0 if found else 1
