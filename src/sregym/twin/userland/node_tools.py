"""The node tools an SRE runs once on a node: `sysctl`, `conntrack`, `dmesg`, `journalctl`.

They act on the node of a host context (`node_host.host_node(ctx)`: after `nsenter -t 1` or
`chroot /host`) and read the twin's `NodeOS` and kernel settings (`chaos/node_kernel.py`), so a
fault that changed a sysctl or filled the conntrack table shows here exactly as on the node.
Inside an ordinary container they behave as there: `sysctl` reads the container's view (its
network namespace's values) and cannot write (/proc/sys is mounted read-only), `dmesg` needs
CAP_SYSLOG (Debian sets kernel.dmesg_restrict=1), `conntrack -L/-S` need CAP_NET_ADMIN, and
`journalctl` finds no journal.
"""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from sregym.twin.chaos import node_kernel
from sregym.twin.node.logs import log_store
from sregym.twin.node.shell import Invocation, command
from sregym.twin.telemetry.node_exporter import UPTIME_AT_START
from sregym.twin.userland.node_host import container_privileged, host_node

if TYPE_CHECKING:
    from sregym.twin.node.logs import LogLine

CONNTRACK_VERSION = "conntrack v1.4.7 (conntrack-tools)"
BOOT_LINES = (
    (0.0, "info", "Linux version 6.1.0-28-amd64 (debian-kernel@lists.debian.org) (gcc-12 (Debian 12.2.0-14) "
                  "12.2.0, GNU ld (GNU Binutils for Debian) 2.40) #1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1 "
                  "(2024-11-22)"),
    (0.0, "info", "Command line: BOOT_IMAGE=/boot/vmlinuz-6.1.0-28-amd64 root=UUID=3c9e0b42-7e1a-4d8e-9a51-"
                  "5f0c6f1b2d34 ro quiet"),
    (1.268412, "info", "EXT4-fs (sda1): mounted filesystem with ordered data mode. Quota mode: none."),
    (6.904113, "info", "bridge: filtering via arp/ip/ip6tables is no longer available by default. Update your "
                       "scripts to load br_netfilter if you need this."),
    (7.112587, "info", "Bridge firewalling registered"),
)
LEVELS = ("emerg", "alert", "crit", "err", "warn", "notice", "info", "debug")
# The printk level of the kernel lines the twin writes, by how they start.
LINE_LEVELS = (("nf_conntrack: ", "warn"), ("net_ratelimit: ", "warn"), ("blk_update_request: ", "err"),
               ("Buffer I/O error", "err"), ("Memory cgroup out of memory", "err"), ("VFS: ", "info"),
               ("EXT4-fs error", "crit"))


def _node_or_view(call: Invocation) -> str:
    return host_node(call.ctx) or call.ctx.node


# --------------------------------------------------------------------------------- sysctl
SYSCTL_USAGE = """
Usage:
 sysctl [options] [variable[=value] ...]

Options:
  -a, --all            display all variables
  -A                   alias of -a
  -X                   alias of -a
      --deprecated     include deprecated parameters to listing
      --dry-run        Print the key and values but do not write
  -b, --binary         print value without new line
  -e, --ignore         ignore unknown variables errors
  -N, --names          print variable names without values
  -n, --values         print only values of the given variable(s)
  -p, --load[=<file>]  read values from file
  -f                   alias of -p
      --system         read values from all system directories
  -r, --pattern <expression>
                       select setting that match expression
  -q, --quiet          do not echo variable set
  -w, --write          enable writing a value to variable
  -o                   does nothing
  -x                   does nothing
  -d                   alias of -h

 -h, --help     display this help and exit
 -V, --version  output version information and exit

For more details see sysctl(8).
"""


@command("sysctl")
def sysctl(call: Invocation) -> int:
    twin, node = call.ctx.twin, _node_or_view(call)
    on_host = bool(host_node(call.ctx))
    pod = None if on_host else call.ctx.pod
    values_only = names_only = ignore = quiet = write = show_all = False
    items: list[str] = []
    for arg in call.args:
        if arg.startswith("--"):
            flag = {"--values": "n", "--names": "N", "--ignore": "e", "--quiet": "q", "--write": "w",
                    "--all": "a", "--help": "h"}.get(arg)
            if flag is None:
                call.error(f"sysctl: unrecognized option '{arg}'")
                call.write(SYSCTL_USAGE)
                return 0
            letters = flag
        elif arg.startswith("-") and len(arg) > 1:
            letters = arg[1:]
        else:
            items.append(arg)
            continue
        for letter in letters:
            if letter == "n":
                values_only = True
            elif letter == "N":
                names_only = True
            elif letter == "e":
                ignore = True
            elif letter == "q":
                quiet = True
            elif letter == "w":
                write = True
            elif letter in "aAX":
                show_all = True
            elif letter in "hd":
                call.write(SYSCTL_USAGE)
                return 0
            elif letter in "ox":
                continue
            else:
                call.error(f"sysctl: invalid option -- '{letter}'")
                call.write(SYSCTL_USAGE)
                return 0

    def show(key: str, value: str) -> None:
        if names_only:
            call.write(key + "\n")
        elif values_only:
            call.write(value + "\n")
        else:
            call.write(f"{key} = {value}\n")

    if show_all or not items:
        if not show_all:
            call.write(SYSCTL_USAGE)
            return 0
        for key in sorted({*node_kernel.DEFAULTS, *node_kernel.READ_ONLY}):
            show(key, node_kernel.read(twin, node, key, pod))
        return 0
    status = 0
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip().replace("/", ".")
        if write and not sep:
            call.error(f'sysctl: "{key}" must be of the form name=value')
            status = 1
            continue
        if not node_kernel.known(key):
            if not ignore:
                call.error(f"sysctl: cannot stat /proc/sys/{key.replace('.', '/')}: No such file or directory")
                status = 1
            continue
        if not sep:
            show(key, node_kernel.read(twin, node, key, pod))
            continue
        error = _sysctl_write_error(call, key, on_host)
        if error:
            call.error(f'sysctl: setting key "{key}": {error}')
            status = 1
            continue
        try:
            node_kernel.write(twin, node, key, value)
        except node_kernel.SysctlError as exc:
            call.error(f'sysctl: setting key "{key}": {exc.reason}')
            status = 1
            continue
        if not quiet:
            show(key, value.strip())
    return status


def _sysctl_write_error(call: Invocation, key: str, on_host: bool) -> str:
    """Why a write fails here: containers see /proc/sys read-only; a host shell of an
    unprivileged pod lacks the capability."""
    if key in node_kernel.READ_ONLY:
        return ""
    if not container_privileged(call.ctx):
        return "Permission denied" if on_host else "Read-only file system"
    if not on_host and (key.startswith(node_kernel.PER_NETNS) or key in node_kernel.GLOBAL_NET):
        # A privileged container writes its own network namespace; the twin keeps no per-pod
        # table, and the global conntrack table is only writable from the host's namespace.
        return "Read-only file system" if key not in node_kernel.GLOBAL_NET else "Permission denied"
    return ""


# ------------------------------------------------------------------------------ conntrack
def _cpus(call: Invocation) -> int:
    node = call.ctx.twin.store.peek("Node", None, _node_or_view(call)) or {}
    text = str(((node.get("status") or {}).get("capacity") or {}).get("cpu") or "4")
    return max(1, int(text)) if text.isdigit() else 4


@command("conntrack")
def conntrack(call: Invocation) -> int:
    args = list(call.args)
    if not args:
        call.error(f"{CONNTRACK_VERSION}: no command specified")
        call.error("Try `conntrack -h' or 'conntrack --help' for more information.")
        return 2
    action = args[0]
    twin, node = call.ctx.twin, _node_or_view(call)
    hostish = bool(host_node(call.ctx)) or bool(((call.ctx.pod or {}).get("spec") or {}).get("hostNetwork"))
    if action in ("-h", "--help"):
        call.write(f"Command line interface for the connection tracking system. Version {CONNTRACK_VERSION[10:15]}\n")
        return 0
    if action not in ("-C", "--count", "-S", "--stats", "-L", "--dump"):
        call.error(f"{CONNTRACK_VERSION}: Unknown option `{action}'" if action.startswith("-")
                   else f"{CONNTRACK_VERSION}: Bad parameter `{action}'")
        call.error("Try `conntrack -h' or 'conntrack --help' for more information.")
        return 2
    if not container_privileged(call.ctx):
        call.error(f"{CONNTRACK_VERSION}: Operation failed: Operation not permitted")
        return 1
    count = node_kernel.conntrack_count(twin, node) if hostish else 0
    if action in ("-C", "--count"):
        call.write(f"{count}\n")
        return 0
    if action in ("-S", "--stats"):
        state = twin.services.nodeos.node(node) if hostish and twin.services.nodeos is not None else None
        drops = state.conntrack_drops if state is not None else 0
        cpus = _cpus(call)
        for cpu in range(cpus):
            share = drops // cpus + (1 if cpu < drops % cpus else 0)
            found = count // (cpus * 3)
            call.write(f"cpu={cpu:<4}\tfound={found} invalid={cpu * 3} insert=0 insert_failed={share} "
                       f"drop={share} early_drop=0 error=0 search_restart={cpu} clash_resolve=0 "
                       f"chaintoolong=0 \n")
        return 0
    for index in range(count):
        call.write(_flow(node, index) + "\n")
    call.error(f"{CONNTRACK_VERSION}: {count} flow entries have been shown.")
    return 0


def _flow(node: str, index: int) -> str:
    """One deterministic conntrack entry, shaped like `conntrack -L` prints them."""
    h = int(hashlib.sha256(f"{node}/{index}".encode()).hexdigest()[:12], 16)
    src = f"10.244.{1 + h % 3}.{2 + h % 250}"
    sport = 32768 + h % 28000
    if h % 5 == 0:
        dst, dport, real = "10.96.0.10", 53, f"10.244.0.{2 + h % 2}"
        return (f"udp      17 {h % 30} src={src} dst={dst} sport={sport} dport={dport} src={real} dst={src} "
                f"sport={dport} dport={sport} mark=0 use=1")
    dst, dport = f"10.96.{h % 200}.{1 + h % 254}", (8080, 27017, 11211, 5000, 8081)[h % 5]
    real = f"10.244.{h % 3}.{3 + h % 240}"
    return (f"tcp      6 {86300 + h % 100} ESTABLISHED src={src} dst={dst} sport={sport} dport={dport} "
            f"src={real} dst={src} sport={dport} dport={sport} [ASSURED] mark=0 use=1")


# ---------------------------------------------------------------------------------- dmesg
def _level(text: str) -> str:
    for prefix, level in LINE_LEVELS:
        if text.startswith(prefix):
            return level
    return "info"


def _dmesg_usage(call: Invocation, message: str) -> int:
    call.error(f"dmesg: {message}")
    call.error("Try 'dmesg --help' for more information.")
    return 1


@command("dmesg")
def dmesg(call: Invocation) -> int:
    human = False
    levels: set[str] | None = None
    args = list(call.args)
    while args:
        arg = args.pop(0)
        if arg in ("-T", "--ctime"):
            human = True
        elif arg in ("-l", "--level") or arg.startswith(("--level=", "-l")):
            value = arg.split("=", 1)[1] if "=" in arg else (arg[2:] if arg.startswith("-l") and len(arg) > 2
                                                              else (args.pop(0) if args else ""))
            if not value:
                return _dmesg_usage(call, f"option requires an argument -- '{arg.lstrip('-')[:1]}'")
            levels = set()
            for word in value.split(","):
                if word not in LEVELS:
                    call.error(f'dmesg: unknown level "{word}"')
                    return 1
                levels.add(word)
        elif arg in ("-x", "--decode", "-k", "--kernel", "-L", "--color", "-H", "--human", "-P", "--nopager",
                     "-w", "--follow", "-W", "--follow-new"):
            continue
        elif arg.startswith("--"):
            return _dmesg_usage(call, f"unrecognized option '{arg}'")
        else:
            return _dmesg_usage(call, f"invalid option -- '{arg.lstrip('-')[:1]}'")
    if not container_privileged(call.ctx):
        call.error("dmesg: read kernel buffer failed: Operation not permitted")
        return 1
    twin, node = call.ctx.twin, _node_or_view(call)
    boot = twin.clock.start - UPTIME_AT_START
    entries = [(boot + offset, level, text) for offset, level, text in BOOT_LINES]
    entries += [(line.at, _level(line.text), line.text) for line in log_store(twin).node_lines(node, "kernel")]
    for at, level, text in entries:
        if levels is not None and level not in levels:
            continue
        if human:
            shown = call.ctx.present_time(at) if call.ctx.present_time is not None else at
            stamp = datetime.fromtimestamp(shown, tz=UTC).strftime("%a %b %e %H:%M:%S %Y")
        else:
            stamp = f"{max(0.0, at - boot):12.6f}"
        call.write(f"[{stamp}] {text}\n")
    return 0


# ----------------------------------------------------------------------------- journalctl
UNIT_SOURCES = {"kubelet": "kubelet", "kubelet.service": "kubelet", "containerd": "containerd",
                "containerd.service": "containerd"}
AGO = re.compile(r"^(\d+)\s*(s|sec|secs|second|seconds|m|min|mins|minute|minutes|h|hour|hours|d|day|days)\s+ago$")
UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def _since(text: str, now: float) -> float | None:
    text = text.strip()
    match = AGO.match(text)
    if match:
        unit = match.group(2)
        key = "m" if unit.startswith("mi") or unit == "m" else unit[0]
        return now - int(match.group(1)) * UNIT_SECONDS[key]
    day = datetime.fromtimestamp(now, tz=UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    if text == "today":
        return day.timestamp()
    if text == "yesterday":
        return (day - timedelta(days=1)).timestamp()
    if text == "now":
        return now
    for fmt in ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%d", "%H:%M:%S", "%H:%M"):
        try:
            parsed = datetime.strptime(text, fmt)
        except ValueError:
            continue
        if fmt.startswith("%H"):
            parsed = datetime.combine(day.date(), parsed.time())
        return parsed.replace(tzinfo=UTC).timestamp()
    return None


@command("journalctl")
def journalctl(call: Invocation) -> int:
    node = host_node(call.ctx)
    units: list[str] = []
    kernel = False
    lines_wanted: int | None = None
    since: str | None = None
    args = list(call.args)
    while args:
        arg = args.pop(0)
        if arg in ("-u", "--unit"):
            units.append(args.pop(0) if args else "")
        elif arg.startswith("--unit="):
            units.append(arg.split("=", 1)[1])
        elif arg.startswith("-u") and len(arg) > 2:
            units.append(arg[2:])
        elif arg in ("-k", "--dmesg"):
            kernel = True
        elif arg in ("-n", "--lines"):
            value = args.pop(0) if args else ""
            if not value.isdigit():
                call.error(f'Failed to parse lines \'{value}\'.')
                return 1
            lines_wanted = int(value)
        elif arg.startswith("--lines=") or (arg.startswith("-n") and len(arg) > 2):
            value = arg.split("=", 1)[1] if "=" in arg else arg[2:]
            if not value.isdigit():
                call.error(f"Failed to parse lines '{value}'.")
                return 1
            lines_wanted = int(value)
        elif arg in ("-S", "--since"):
            since = args.pop(0) if args else ""
        elif arg.startswith("--since="):
            since = arg.split("=", 1)[1]
        elif arg in ("-f", "--follow"):
            lines_wanted = 10 if lines_wanted is None else lines_wanted
        elif arg in ("--no-pager", "-l", "--full", "-e", "--pager-end", "-x", "--catalog", "-q", "--quiet",
                     "-a", "--all", "-b", "--boot"):
            continue
        else:
            call.error(f"journalctl: unrecognized option '{arg}'" if arg.startswith("--")
                       else f"journalctl: invalid option -- '{arg.lstrip('-')[:1]}'")
            return 1
    if not node:
        call.error("No journal files were found.")
        call.write("-- No entries --\n")
        return 0
    twin = call.ctx.twin
    picked: list[tuple[str, LogLine]] = []
    sources = [UNIT_SOURCES.get(u, "") for u in units] + (["kernel"] if kernel else [])
    for source in sources:
        if source:
            picked += [(source, line) for line in log_store(twin).node_lines(node, source)]
    picked.sort(key=lambda pair: pair[1].at)
    if since is not None:
        start = _since(since, call.now)
        if start is None:
            call.error(f"Failed to parse timestamp: {since}")
            return 1
        picked = [pair for pair in picked if pair[1].at >= start]
    if lines_wanted is not None:
        picked = picked[-lines_wanted:] if lines_wanted else []
    if not picked:
        call.write("-- No entries --\n")
        return 0
    state = twin.services.nodeos.node(node) if twin.services.nodeos is not None else None
    pids = {"kubelet": state.kubelet_pid if state is not None else 700,
            "containerd": (state.kubelet_pid - 180) if state is not None else 520}
    for source, line in picked:
        shown = call.ctx.present_time(line.at) if call.ctx.present_time is not None else line.at
        stamp = datetime.fromtimestamp(shown, tz=UTC).strftime("%b %d %H:%M:%S")
        who = "kernel" if source == "kernel" else f"{source}[{pids[source]}]"
        call.write(f"{stamp} {node} {who}: {line.text}\n")
    return 0
