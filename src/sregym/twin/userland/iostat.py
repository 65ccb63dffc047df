"""`iostat` (sysstat 12.6, Debian 12) in images that ship sysstat.

It reads the node's `/proc/diskstats` (`chaos.diskio.device_counters`, the numbers node-exporter
reports) and prints sysstat's layouts: the CPU report, the basic device report (`tps kB_read/s
...`) and the extended one (`-x`: `r/s rkB/s rrqm/s %rrqm r_await rareq-sz ... aqu-sz %util`).
The first report covers the time since boot, as the real one does. An exec takes no simulated
time, so a later report of `iostat -x 1 3` shows the rates of the last minute as the node's
exporter scraped them (what the disk is doing now, which is why one asks for a second report).

sysstat is not part of a base image: the command exists only where the image's binaries list
(`ImageSpec.extras["binaries"]`) names `iostat`; elsewhere the shell reports it not found.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sregym.twin.node.shell import Invocation, command

USAGE = """Usage: iostat [ options ] [ <interval> [ <count> ] ]
Options are:
[ -c ] [ -d ] [ -h ] [ -k | -m ] [ -N ] [ -s ] [ -t ] [ -V ] [ -x ] [ -y ] [ -z ]
[ { -f | +f } <directory> ] [ -j { ID | LABEL | PATH | UUID | ... } ]
[ --dec={ 0 | 1 | 2 } ] [ --human ] [ -o JSON ]
[ [ -H ] -g <group_name> ] [ -p [ <device> [,...] | ALL ] ]
[ <device> [...] | ALL ]
"""
EXT_HEADER = ("Device            r/s     rkB/s   rrqm/s  %rrqm r_await rareq-sz     w/s     wkB/s   wrqm/s  %wrqm "
              "w_await wareq-sz     d/s     dkB/s   drqm/s  %drqm d_await dareq-sz     f/s f_await  aqu-sz  %util")
BASIC_HEADER = "Device             tps    kB_read/s    kB_wrtn/s    kB_dscd/s    kB_read    kB_wrtn    kB_dscd"
FIELDS = ("reads", "read_merged", "read_sectors", "read_ms", "writes", "write_merged", "write_sectors", "write_ms",
          "io_ms", "weighted_ms", "flushes", "flush_ms")


def _shipped(call: Invocation) -> bool:
    from sregym.twin.node.images import lookup

    spec, _ = lookup(str(call.ctx.extras.get("image", "")), call.ctx.twin)
    binaries = spec.extras.get("binaries") if spec is not None else None
    return bool(binaries) and "iostat" in binaries


def _uptime(call: Invocation) -> float:
    from sregym.twin.telemetry.node_exporter import UPTIME_AT_START

    twin = call.ctx.twin
    return max(1.0, twin.clock.now - (twin.clock.start - UPTIME_AT_START))


def _recent(call: Invocation, devices: list[str]) -> dict[str, dict[str, float]]:
    """Per-second rates over the last minute from node-exporter's series (None-safe)."""
    twin = call.ctx.twin
    tsdb = twin.services.tsdb
    out: dict[str, dict[str, float]] = {d: {} for d in devices}
    if tsdb is None:
        return out
    from sregym.twin.telemetry.promql import Engine

    metrics = {"reads": ("node_disk_reads_completed_total", 1.0), "writes": ("node_disk_writes_completed_total", 1.0),
               "read_sectors": ("node_disk_read_bytes_total", 1 / 512), "write_sectors":
               ("node_disk_written_bytes_total", 1 / 512), "read_ms": ("node_disk_read_time_seconds_total", 1000.0),
               "write_ms": ("node_disk_write_time_seconds_total", 1000.0),
               "io_ms": ("node_disk_io_time_seconds_total", 1000.0),
               "weighted_ms": ("node_disk_io_time_weighted_seconds_total", 1000.0)}
    engine = Engine(tsdb)
    for key, (metric, scale) in metrics.items():
        query = f'rate({metric}{{node="{call.ctx.node}"}}[1m])'
        result = engine.instant(query, int(twin.clock.now * 1000)).to_api().get("result") or []
        for row in result if isinstance(result, list) else []:
            device = row.get("metric", {}).get("device")
            if device in out:
                out[device][key] = float(row["value"][1]) * scale
    for rates in out.values():
        rates["read_merged"] = rates.get("reads", 0.0) * 0.08
        rates["write_merged"] = rates.get("writes", 0.0) * 0.35
        rates["flushes"] = rates.get("writes", 0.0) * 0.05
        rates["flush_ms"] = rates["flushes"] * 0.4
    return out


def _cpu_line(call: Invocation) -> str:
    exporter = getattr(call.ctx.twin.services.scraper, "node_exporter", None)
    counters = getattr(exporter, "nodes", {}).get(call.ctx.node) if exporter is not None else None
    modes = {"user": 2.0, "nice": 0.01, "system": 0.75, "iowait": 0.12, "steal": 0.0, "idle": 97.12}
    if counters is not None and counters.cpu:
        total = {m: sum(cpu[m] for cpu in counters.cpu) for m in counters.cpu[0]}
        whole = sum(total.values()) or 1.0
        modes = {"user": total["user"], "nice": total["nice"],
                 "system": total["system"] + total["irq"] + total["softirq"], "iowait": total["iowait"],
                 "steal": total["steal"], "idle": total["idle"]}
        modes = {k: 100.0 * v / whole for k, v in modes.items()}
    values = "".join(f" {modes[k]:7.2f}" for k in ("user", "nice", "system", "iowait", "steal", "idle"))
    return f"avg-cpu:  %user   %nice %system %iowait  %steal   %idle\n       {values}\n\n"


def _ext_row(name: str, r: dict[str, float]) -> str:
    reads, writes, flushes = r.get("reads", 0.0), r.get("writes", 0.0), r.get("flushes", 0.0)
    rm, wm = r.get("read_merged", 0.0), r.get("write_merged", 0.0)

    def pct(merged: float, done: float) -> float:
        return 100.0 * merged / (merged + done) if merged + done else 0.0

    def per(total: float, n: float) -> float:
        return total / n if n else 0.0

    return (f"{name:<13} {reads:7.2f} {r.get('read_sectors', 0.0) / 2:9.2f} {rm:8.2f} {pct(rm, reads):6.2f} "
            f"{per(r.get('read_ms', 0.0), reads):7.2f} {per(r.get('read_sectors', 0.0) / 2, reads):8.2f} "
            f"{writes:7.2f} {r.get('write_sectors', 0.0) / 2:9.2f} {wm:8.2f} {pct(wm, writes):6.2f} "
            f"{per(r.get('write_ms', 0.0), writes):7.2f} {per(r.get('write_sectors', 0.0) / 2, writes):8.2f} "
            f"{0.0:7.2f} {0.0:9.2f} {0.0:8.2f} {0.0:6.2f} {0.0:7.2f} {0.0:8.2f} "
            f"{flushes:7.2f} {per(r.get('flush_ms', 0.0), flushes):7.2f} "
            f"{r.get('weighted_ms', 0.0) / 1000:7.2f} {min(100.0, r.get('io_ms', 0.0) / 10):6.2f}\n")


def _basic_row(name: str, r: dict[str, float], totals: dict[str, float]) -> str:
    tps = r.get("reads", 0.0) + r.get("writes", 0.0)
    return (f"{name:<13} {tps:8.2f} {r.get('read_sectors', 0.0) / 2:12.2f} {r.get('write_sectors', 0.0) / 2:12.2f} "
            f"{0.0:12.2f} {int(totals['read_sectors'] / 2):10d} {int(totals['write_sectors'] / 2):10d} {0:10d}\n")


@command("iostat")
def iostat(call: Invocation) -> int:
    if not _shipped(call):
        call.error(call.shell.not_found_message("iostat"))
        return 127
    flags, devices, numbers = set(), [], []
    for arg in call.args:
        if arg.startswith("-") and len(arg) > 1 and not arg[1:].isdigit():
            for letter in arg[1:]:
                if letter not in "cdhkmNstxyzp":
                    call.error(USAGE)
                    return 1
                flags.add(letter)
        elif arg.isdigit():
            numbers.append(int(arg))
        else:
            devices.append(arg)
    if len(numbers) > 2 or (len(numbers) == 2 and (numbers[1] < 1 or numbers[0] == 0)):
        call.error(USAGE)
        return 1
    interval = numbers[0] if numbers else 0
    # Without a count the real command reports for ever; an exec here ends after the second report.
    count = numbers[1] if len(numbers) == 2 else (1 if not interval else 2)
    report_set = "c" in flags or "d" in flags
    show_cpu = "c" in flags or not report_set
    show_disk = "d" in flags or not report_set or "x" in flags or "p" in flags or bool(devices)
    from sregym.twin.chaos.diskio import device_counters

    twin, node = call.ctx.twin, call.ctx.node
    if twin is None or not node:
        call.error("Cannot open /proc/diskstats: No such file or directory")
        return 2
    info = ((twin.store.peek("Node", None, node) or {}).get("status") or {}).get("nodeInfo") or {}
    cpus = ((twin.store.peek("Node", None, node) or {}).get("status") or {}).get("capacity", {}).get("cpu", "1")
    date = datetime.fromtimestamp(twin.clock.now, tz=UTC).strftime("%m/%d/%y")
    call.write(f"Linux {info.get('kernelVersion', '6.1.0-28-amd64')} ({node}) \t{date} \t_x86_64_\t({cpus} CPU)\n\n")
    counters = [(device, totals) for device, _, totals in device_counters(twin, node)]
    if devices and devices != ["ALL"]:
        counters = [(d, c) for d, c in counters if d in devices]
    uptime = _uptime(call)
    recent: dict[str, dict[str, float]] | None = None
    for index in range(count):
        if index == 0 and "y" in flags and interval:
            continue
        if index == 0:
            rates = {d: {k: float(c.get(k, 0.0)) / uptime for k in FIELDS} for d, c in counters}
        else:
            recent = recent if recent is not None else _recent(call, [d for d, _ in counters])
            rates = recent
        if show_cpu:
            call.write(_cpu_line(call))
        if show_disk:
            call.write((EXT_HEADER if "x" in flags else BASIC_HEADER) + "\n")
            for device, totals in counters:
                r = rates.get(device, {})
                if "z" in flags and not (r.get("reads") or r.get("writes")):
                    continue
                call.write(_ext_row(device, r) if "x" in flags else _basic_row(device, r, totals))
            call.write("\n")
    return 0
