"""`free` and `uptime` in a container: procps-ng 4.0 on Debian images, BusyBox on Alpine.

Both read the same files the kernel shows the container (`/proc/meminfo`, `/proc/uptime`,
`/proc/loadavg`: the node's, no LXCFS on kind nodes), so `free` agrees with `cat /proc/meminfo`
and with node-exporter. procps 4 counts `used` as total minus available, and `buff/cache` as
Buffers + Cached + SReclaimable; BusyBox subtracts free, buffers and cache from the total.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sregym.twin.node.shell import Invocation, command
from sregym.twin.userland.filteropts import is_busybox

_FREE_USAGE = """
Usage:
 free [options]

Options:
 -b, --bytes         show output in bytes
     --kilo          show output in kilobytes
     --mega          show output in megabytes
     --giga          show output in gigabytes
     --tera          show output in terabytes
     --peta          show output in petabytes
 -k, --kibi          show output in kibibytes
 -m, --mebi          show output in mebibytes
 -g, --gibi          show output in gibibytes
     --tebi          show output in tebibytes
     --pebi          show output in pebibytes
 -h, --human         show human-readable output
     --si            use powers of 1000 not 1024
 -l, --lohi          show detailed low and high memory statistics
 -t, --total         show total for RAM + swap
 -v, --committed     show committed memory and commit limit
 -s N, --seconds N   repeat printing every N seconds
 -c N, --count N     repeat printing N times, then exit
 -w, --wide          wide output

     --help     display this help and exit
 -V, --version  output version information and exit

For more details see free(1)."""
_UPTIME_USAGE = """
Usage:
 uptime [options]

Options:
 -p, --pretty   show uptime in pretty format
 -h, --help     display this help and exit
 -s, --since    system up since
 -V, --version  output version information and exit

For more details see uptime(1)."""
_BB = "BusyBox v1.36.1 (2023-05-18 22:34:17 UTC) multi-call binary.\n\n"



def meminfo_kib(call: Invocation) -> dict[str, int]:
    """/proc/meminfo as the container reads it, name -> KiB."""
    out: dict[str, int] = {}
    for line in (call.read_file("/proc/meminfo") or "").splitlines():
        name, _, rest = line.partition(":")
        fields = rest.split()
        if fields and fields[0].isdigit():
            out[name] = int(fields[0])
    return out


def _scale(kib: int, shift: int, human: bool, si: bool) -> str:
    """procps' scale_size: bytes at `shift`, or the shortest human form that fits."""
    size = kib * 1024
    if not human:
        return str(size // (1 << shift)) if not si else str(size // (1000 ** (shift // 10)))
    base = 1000 if si else 1024
    if len(f"{size}B") <= 4:
        return f"{size}B"
    for power, unit in enumerate("KMGTP", 1):
        value = size / base ** power
        suffix = unit if si else unit + "i"
        limit = 4 if si else 5
        text = f"{value:.1f}{suffix}"
        if len(text) <= limit:
            return text
        text = f"{int(value)}{suffix}"
        if len(text) <= limit:
            return text
    return f"{size}B"


@command("free")
def free(call: Invocation) -> int:
    if is_busybox(call):
        return _busybox_free(call)
    shift, human, si, wide, total = 10, False, False, False, False
    units = {"-b": 0, "--bytes": 0, "-k": 10, "--kibi": 10, "-m": 20, "--mebi": 20, "-g": 30, "--gibi": 30,
             "--tebi": 40, "--pebi": 50, "--kilo": 10, "--mega": 20, "--giga": 30, "--tera": 40, "--peta": 50}
    for arg in call.args:
        if arg in units:
            shift = units[arg]
            si = si or arg in ("--kilo", "--mega", "--giga", "--tera", "--peta")
        elif arg in ("-h", "--human"):
            human = True
        elif arg == "--si":
            si = True
        elif arg in ("-w", "--wide"):
            wide = True
        elif arg in ("-t", "--total"):
            total = True
        elif arg in ("-l", "--lohi", "-v", "--committed"):
            continue
        elif arg in ("-V", "--version"):
            call.write("free from procps-ng 4.0.2\n")
            return 0
        elif arg.startswith("--"):
            call.error(f"free: unrecognized option '{arg}'\n{_FREE_USAGE}")
            return 1
        elif arg.startswith("-") and len(arg) > 1:
            bad = next((c for c in arg[1:] if c not in "bkmghwtlv"), None)
            if bad is not None:
                call.error(f"free: invalid option -- '{bad}'\n{_FREE_USAGE}")
                return 1
            for c in arg[1:]:
                if c in "bkmg":
                    shift = {"b": 0, "k": 10, "m": 20, "g": 30}[c]
                human = human or c == "h"
                wide = wide or c == "w"
                total = total or c == "t"
        else:
            call.error(f"free: invalid option -- '{arg[:1]}'\n{_FREE_USAGE}")
            return 1
    info = meminfo_kib(call)
    mem_total, mem_free = info.get("MemTotal", 0), info.get("MemFree", 0)
    buffers = info.get("Buffers", 0)
    cache = info.get("Cached", 0) + info.get("SReclaimable", 0)
    available = info.get("MemAvailable", mem_free)
    used = mem_total - available if available <= mem_total else mem_total - mem_free - buffers - cache
    swap_total, swap_free = info.get("SwapTotal", 0), info.get("SwapFree", 0)

    def cells(*values: int) -> str:
        return "".join(f"{_scale(v, shift, human, si):>12}" for v in values)

    if wide:
        call.write("               total        used        free      shared     buffers       cache   available\n")
        call.write(f"{'Mem:':<8}" + cells(mem_total, used, mem_free, info.get("Shmem", 0), buffers, cache,
                                            available) + "\n")
    else:
        call.write("               total        used        free      shared  buff/cache   available\n")
        call.write(f"{'Mem:':<8}" + cells(mem_total, used, mem_free, info.get("Shmem", 0), buffers + cache,
                                            available) + "\n")
    call.write(f"{'Swap:':<8}" + cells(swap_total, swap_total - swap_free, swap_free) + "\n")
    if total:
        call.write(f"{'Total:':<8}" + cells(mem_total + swap_total, used + swap_total - swap_free,
                                              mem_free + swap_free) + "\n")
    return 0


def _busybox_free(call: Invocation) -> int:
    unit = 1024
    human = False
    for arg in call.args:
        if arg in ("-b", "-k", "-m", "-g", "-h"):
            unit = {"-b": 1, "-k": 1024, "-m": 1 << 20, "-g": 1 << 30, "-h": 1}[arg]
            human = arg == "-h"
        else:
            bad = arg.lstrip("-")[:1] or arg
            call.error(f"free: unrecognized option: {bad}\n{_BB}Usage: free [-bkmgh]\n\nDisplay free and used "
                       "memory")
            return 1
    info = meminfo_kib(call)
    total, free_kib = info.get("MemTotal", 0), info.get("MemFree", 0)
    buffers = info.get("Buffers", 0)
    cached = info.get("Cached", 0) + info.get("SReclaimable", 0)
    used = total - free_kib - buffers - cached

    def cell(kib: int) -> str:
        size = kib * 1024
        if human:
            value, suffix = float(size), ""
            for next_unit in "KMGT":
                if value < 1024:
                    break
                value /= 1024
                suffix = next_unit
            return f"{value:.1f}{suffix}" if suffix else str(int(value))
        return str(size // unit)

    call.write("              total        used        free      shared  buff/cache   available\n")
    call.write("Mem:   " + "".join(f"{cell(v):>12}" for v in (total, used, free_kib, info.get("Shmem", 0),
                                                            buffers + cached, info.get("MemAvailable", 0))) + "\n")
    swap_total, swap_free = info.get("SwapTotal", 0), info.get("SwapFree", 0)
    call.write("Swap:  " + "".join(f"{cell(v):>12}" for v in (swap_total, swap_total - swap_free, swap_free))
               + "\n")
    return 0


# ================================================================================== uptime
def _proc_numbers(call: Invocation) -> tuple[float, tuple[str, str, str]]:
    up = (call.read_file("/proc/uptime") or "0 0").split()
    load = (call.read_file("/proc/loadavg") or "0.00 0.00 0.00").split()
    return float(up[0]), (load[0], load[1], load[2])


def _pretty(seconds: float) -> str:
    minutes = int(seconds // 60)
    parts = []
    years, minutes = divmod(minutes, 60 * 24 * 365)
    weeks, minutes = divmod(minutes, 60 * 24 * 7)
    days, minutes = divmod(minutes, 60 * 24)
    hours, minutes = divmod(minutes, 60)
    for value, unit in ((years, "year"), (weeks, "week"), (days, "day"), (hours, "hour"), (minutes, "minute")):
        if value:
            parts.append(f"{value} {unit}{'s' if value != 1 else ''}")
    return "up " + (", ".join(parts) if parts else "0 minutes")


@command("uptime")
def uptime(call: Invocation) -> int:
    seconds, load = _proc_numbers(call)
    now = call.wall_now
    clock = datetime.fromtimestamp(now, tz=UTC).strftime("%H:%M:%S")
    minutes = int(seconds // 60)
    days, minutes = divmod(minutes, 1440)
    hours, minutes = divmod(minutes, 60)
    if is_busybox(call):
        if call.args:
            call.error(f"uptime: unrecognized option: {call.args[0].lstrip('-')[:1]}\n{_BB}Usage: uptime\n\n"
                       "Display the time since the last boot")
            return 1
        text = f" {clock} up "
        if days:
            text += f"{days} day{'s' if days != 1 else ''}, "
        text += f"{hours:2d}:{minutes:02d}" if hours else f"{minutes} min"
        call.write(text + f",  load average: {', '.join(load)}\n")
        return 0
    for arg in call.args:
        if arg in ("-p", "--pretty"):
            call.write(_pretty(seconds) + "\n")
            return 0
        if arg in ("-s", "--since"):
            since = datetime.fromtimestamp(int(now - seconds), tz=UTC)
            call.write(since.strftime("%Y-%m-%d %H:%M:%S") + "\n")
            return 0
        if arg in ("-V", "--version"):
            call.write("uptime from procps-ng 4.0.2\n")
            return 0
        if arg.startswith("--"):
            call.error(f"uptime: unrecognized option '{arg}'\n{_UPTIME_USAGE}")
        else:
            call.error(f"uptime: invalid option -- '{arg.lstrip('-')[:1] or arg}'\n{_UPTIME_USAGE}")
        return 1
    text = f" {clock} up "
    if days:
        text += f"{days} day{'s' if days != 1 else ''}, "
    text += f"{hours:2d}:{minutes:02d}, " if hours else f"{minutes} min, "
    call.write(text + f" 0 user,  load average: {', '.join(load)}\n")
    return 0
