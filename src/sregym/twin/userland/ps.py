"""`ps` inside a container: procps-ng 4.0 (Debian images) or BusyBox (Alpine/BusyBox images).

Every process of the container's PID namespace is listed (`processes.process_table`): the main
process, nginx's workers, a StressChaos's stressors with the CPU and memory they use, and the
`ps` itself. Formats follow procps on a kind node (`pid_max` 4194304, so PIDs are 7 wide):
`ps`, `ps aux`, `ps -ef`, `ps -e`, `ps -o COLS` (with `COL=HEADER` renames), `-p PID`,
`--sort=[-]COL`; an unknown option or format specifier prints procps' own error and usage.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from sregym.twin.node.shell import Invocation, command
from sregym.twin.userland.netdiag import busybox
from sregym.twin.userland.nodeview import node_view
from sregym.twin.userland.processes import Proc, process_table

PID_WIDTH = 7
USAGE = ("\nUsage:\n ps [options]\n\n Try 'ps --help <simple|list|output|threads|misc|all>'\n"
         "  or 'ps --help <s|l|o|t|m|a>'\n for additional help text.\n\nFor more details see ps(1).\n")


def _cputime(seconds: float) -> str:
    s = int(seconds)
    days, s = divmod(s, 86400)
    text = f"{s // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}"
    return f"{days}-{text}" if days else text


def _elapsed(seconds: float) -> str:
    s = int(max(0.0, seconds))
    days, s = divmod(s, 86400)
    hours, s = divmod(s, 3600)
    text = f"{s // 60:02d}:{s % 60:02d}"
    if days:
        return f"{days}-{hours:02d}:{text}"
    return f"{hours:02d}:{text}" if hours else text


def _start(start: float, now: float) -> str:
    """START/STIME: the clock time within the last day, else the month and day."""
    stamp = datetime.fromtimestamp(start, tz=UTC)
    return stamp.strftime("%H:%M") if now - start < 86400 else stamp.strftime("%b%d")


def _pcpu(p: Proc, now: float) -> float:
    elapsed = max(1e-9, now - p.start)
    return min(999.9, 100.0 * p.cpu_s / elapsed) if elapsed >= 1 else 100.0 * p.cpu


def _stat(p: Proc, tty: bool, own: bool) -> str:
    return p.state + p.stat_flags + ("+" if tty and own else "")


# (header, width, right-aligned, value(proc, now, total memory, tty, own pid))
Column = tuple[str, int, bool, Callable[[Proc, float, int, bool, int], Any]]
COLUMNS: dict[str, Column] = {
    "pid": ("PID", PID_WIDTH, True, lambda p, *_: p.pid),
    "tgid": ("TGID", PID_WIDTH, True, lambda p, *_: p.pid),
    "ppid": ("PPID", PID_WIDTH, True, lambda p, *_: p.ppid),
    "user": ("USER", 8, False, lambda p, *_: p.user),
    "euser": ("EUSER", 8, False, lambda p, *_: p.user),
    "uid": ("UID", 5, True, lambda p, *_: p.uid),
    "comm": ("COMMAND", 15, False, lambda p, *_: p.name),
    "ucomm": ("COMMAND", 15, False, lambda p, *_: p.name),
    "fname": ("COMMAND", 8, False, lambda p, *_: p.name[:8]),
    "args": ("COMMAND", 27, False, lambda p, *_: p.command),
    "command": ("COMMAND", 27, False, lambda p, *_: p.command),
    "cmd": ("CMD", 27, False, lambda p, *_: p.command),
    "rss": ("RSS", 5, True, lambda p, *_: p.rss // 1024),
    "rssize": ("RSS", 5, True, lambda p, *_: p.rss // 1024),
    "rsz": ("RSZ", 5, True, lambda p, *_: p.rss // 1024),
    "vsz": ("VSZ", 6, True, lambda p, *_: p.vsz // 1024),
    "vsize": ("VSZ", 6, True, lambda p, *_: p.vsz // 1024),
    "%cpu": ("%CPU", 4, True, lambda p, now, *_: f"{_pcpu(p, now):.1f}"),
    "pcpu": ("%CPU", 4, True, lambda p, now, *_: f"{_pcpu(p, now):.1f}"),
    "%mem": ("%MEM", 4, True, lambda p, now, total, *_: f"{100.0 * p.rss / max(1, total):.1f}"),
    "pmem": ("%MEM", 4, True, lambda p, now, total, *_: f"{100.0 * p.rss / max(1, total):.1f}"),
    "stat": ("STAT", 4, False, lambda p, now, total, tty, own: _stat(p, tty, p.pid == own)),
    "state": ("S", 1, False, lambda p, *_: p.state),
    "s": ("S", 1, False, lambda p, *_: p.state),
    "etime": ("ELAPSED", 11, True, lambda p, now, *_: _elapsed(now - p.start)),
    "etimes": ("ELAPSED", 7, True, lambda p, now, *_: int(max(0.0, now - p.start))),
    "time": ("TIME", 8, True, lambda p, *_: _cputime(p.cpu_s)),
    "cputime": ("TIME", 8, True, lambda p, *_: _cputime(p.cpu_s)),
    "times": ("TIME", 6, True, lambda p, *_: int(p.cpu_s)),
    "nlwp": ("NLWP", 4, True, lambda p, *_: p.threads),
    "thcount": ("THCNT", 5, True, lambda p, *_: p.threads),
    "tty": ("TT", 8, False, lambda p, now, total, tty, own: "pts/0" if tty and p.pid == own else "?"),
    "tname": ("TTY", 8, False, lambda p, now, total, tty, own: "pts/0" if tty and p.pid == own else "?"),
    "ni": ("NI", 3, True, lambda p, *_: 0),
    "nice": ("NI", 3, True, lambda p, *_: 0),
    "pri": ("PRI", 3, True, lambda p, *_: 19),
    "psr": ("PSR", 3, True, lambda p, *_: p.pid % 4),
    "start": ("STARTED", 8, True, lambda p, now, *_: datetime.fromtimestamp(p.start, tz=UTC).strftime("%H:%M:%S")),
    "stime": ("STIME", 5, False, lambda p, now, *_: _start(p.start, now)),
    "start_time": ("START", 5, False, lambda p, now, *_: _start(p.start, now)),
    "lstart": ("STARTED", 24, False,
               lambda p, *_: datetime.fromtimestamp(p.start, tz=UTC).strftime("%a %b %e %H:%M:%S %Y")),
    "c": ("C", 2, True, lambda p, now, *_: min(99, int(_pcpu(p, now)))),
    "pgid": ("PGID", PID_WIDTH, True, lambda p, *_: p.pid if p.ppid == 0 else p.ppid),
    "sid": ("SID", PID_WIDTH, True, lambda p, *_: p.pid if p.ppid == 0 else p.ppid),
}
COLUMNS["%mem"] = COLUMNS["pmem"]


def _fail(call: Invocation, message: str) -> int:
    call.error(f"error: {message}\n{USAGE}")
    return 1


def _table(call: Invocation, procs: list[Proc], cols: list[tuple[str, str]], now: float, tty: bool,
           own: int) -> None:
    total = node_view(call.ctx, now).mem_total
    specs = [(COLUMNS[name], header) for name, header in cols]
    rows: list[list[str]] = []
    if any(header for _spec, header in specs):
        rows.append([header for _spec, header in specs])
    for p in procs:
        rows.append([str(spec[3](p, now, total, tty, own)) for spec, _h in specs])
    for index, row in enumerate(rows):
        cells = []
        for i, ((_h, width, right, _fn), _header) in enumerate(specs):
            text = row[i]
            last = i == len(specs) - 1
            if right:
                cells.append(text.rjust(width))
            elif last:
                cells.append(text)
            else:
                cells.append(text.ljust(width) if index or text else " " * width)
        call.write(" ".join(cells).rstrip() + "\n" if not specs[-1][0][2] else " ".join(cells) + "\n")


def _parse_columns(call: Invocation, text: str) -> list[tuple[str, str]] | str:
    out: list[tuple[str, str]] = []
    for item in [t for t in text.replace(" ", ",").split(",") if t] if "=" not in text else [text]:
        name, eq, header = item.partition("=")
        key = name.lower()
        if key not in COLUMNS:
            return f'unknown user-defined format specifier "{name}"'
        out.append((key, header if eq else COLUMNS[key][0]))
    if "=" in text and "," in text.split("=", 1)[0]:
        first, rest = text.split("=", 1)
        names = first.split(",")
        pre = _parse_columns(call, ",".join(names[:-1]))
        if isinstance(pre, str):
            return pre
        key = names[-1].lower()
        if key not in COLUMNS:
            return f'unknown user-defined format specifier "{names[-1]}"'
        return [*pre, (key, rest)]
    return out


def _sort(procs: list[Proc], keys: str, now: float) -> list[Proc] | str:
    for key in reversed([k for k in keys.split(",") if k]):
        reverse = key.startswith("-")
        name = key.lstrip("+-").lower()
        if name not in COLUMNS:
            return "unknown sort specifier"
        fn = COLUMNS[name][3]

        def value(p: Proc, fn: Any = fn) -> Any:
            raw = fn(p, now, 1, False, 0)
            try:
                return float(raw)
            except (TypeError, ValueError):
                return str(raw)

        procs = sorted(procs, key=value, reverse=reverse)
    return procs


@command("ps")
def ps(call: Invocation) -> int:
    now = call.now
    procs = process_table(call.ctx, now, list(call.argv))
    own = max(p.pid for p in procs)  # the ps itself, the newest process
    if busybox(call):
        return _busybox_ps(call, procs)
    tty = bool(call.ctx.extras.get("tty"))
    args = list(call.args)
    everyone = bsd_all = full = bsd_user = False
    cols: list[tuple[str, str]] | None = None
    pids: list[int] | None = None
    sort: str | None = None
    while args:
        arg = args.pop(0)
        if arg.startswith("--"):
            name, eq, value = arg[2:].partition("=")
            if name == "sort":
                sort = value if eq else (args.pop(0) if args else "")
            elif name in ("format", "cols", "columns") and name == "format":
                parsed = _parse_columns(call, value if eq else (args.pop(0) if args else ""))
                if isinstance(parsed, str):
                    return _fail(call, parsed)
                cols = (cols or []) + parsed
            elif name == "pid":
                pids = [int(x) for x in (value if eq else (args.pop(0) if args else "")).split(",") if x.isdigit()]
            elif name in ("no-headers", "no-heading", "headers", "width", "cols", "columns"):
                continue
            elif name == "version":
                call.write("ps from procps-ng 4.0.2\n")
                return 0
            else:
                return _fail(call, "unknown gnu long option")
        elif arg.startswith("-"):
            letters = arg[1:]
            i = 0
            while i < len(letters):
                ch = letters[i]
                if ch in "eA":
                    everyone = True
                elif ch == "f" or ch == "F":
                    full = True
                elif ch in "lwHjyaxNTM":
                    pass
                elif ch in "op" or ch == "q":
                    value = letters[i + 1:] or (args.pop(0) if args else "")
                    if not value:
                        return _fail(call, "list of process IDs must follow -p" if ch in "pq"
                                     else "improper format list")
                    if ch == "o":
                        parsed = _parse_columns(call, value)
                        if isinstance(parsed, str):
                            return _fail(call, parsed)
                        cols = (cols or []) + parsed
                    else:
                        pids = [int(x) for x in value.split(",") if x.strip().isdigit()]
                    break
                else:
                    return _fail(call, "unsupported SysV option")
                i += 1
        else:
            for ch in arg:
                if ch == "a" or ch == "x":
                    bsd_all = True
                elif ch == "u":
                    bsd_user = True
                elif ch in "wfcehlrSv":
                    pass
                else:
                    return _fail(call, "unsupported option (BSD syntax)")
    selected = procs
    if pids is not None:
        selected = [p for p in procs if p.pid in pids]
    elif not (everyone or bsd_all):
        # procps' default: processes of the caller's user on the caller's terminal.
        selected = [p for p in procs if p.pid == own] if tty else [p for p in procs if p.uid == 0]
    if sort:
        ordered = _sort(selected, sort, now)
        if isinstance(ordered, str):
            return _fail(call, ordered)
        selected = ordered
    if cols is None:
        if bsd_user:
            cols = [(c, COLUMNS[c][0]) for c in ("user", "pid", "%cpu", "%mem", "vsz", "rss", "tname", "stat",
                                                  "start_time", "times_bsd", "command")]
        elif full:
            cols = [("uid_name", "UID"), ("pid", "PID"), ("ppid", "PPID"), ("c", "C"), ("stime", "STIME"),
                    ("tname", "TTY"), ("time", "TIME"), ("cmd", "CMD")]
        else:
            cols = [("pid", "PID"), ("tname", "TTY"), ("time", "TIME"), ("ucomm", "CMD")]
    _table(call, selected, cols, now, tty, own)
    return 0


def _bsd_time(p: Proc, *_: Any) -> str:
    minutes, seconds = divmod(int(p.cpu_s), 60)
    return f"{minutes}:{seconds:02d}"


COLUMNS["times_bsd"] = ("TIME", 6, True, _bsd_time)
COLUMNS["uid_name"] = ("UID", 8, False, lambda p, *_: p.user)


def _busybox_ps(call: Invocation, procs: list[Proc]) -> int:
    """BusyBox `ps`: every process, `PID USER TIME COMMAND`; `-o` is not built into the images'
    BusyBox, which prints its usage."""
    for arg in call.args:
        if arg.startswith("-") and arg not in ("-e", "-ef", "-A", "-w", "-ww", "-T", "-a", "-aux", "-f"):
            call.error(f"ps: unrecognized option: {arg.lstrip('-')[:1]}\nBusyBox v1.36.1 (2023-05-18 22:34:17 UTC)"
                       " multi-call binary.\n\nUsage: ps [-o COL1,COL2=HEADER] [-T]\n\nShow list of processes\n\n"
                       "\t-o COL1,COL2=HEADER\tSelect columns for display\n\t-T\t\tShow threads")
            return 1
    call.write("PID   USER     TIME  COMMAND\n")
    for p in procs:
        minutes, seconds = divmod(int(p.cpu_s), 60)
        call.write(f"{p.pid:>5} {p.user:<8} {minutes:>2}:{seconds:02d} {p.command}\n")
    return 0
