"""The node's clock as programs see it: `date` (with `-s`/`--set`) and `hwclock`.

The system clock is not namespaced: every container on a node reads the node's clock, so
`date` in a pod shows the node's offset (`NodeOS.clock_offset`) plus any TimeChaos offset on the
container. Setting it needs CAP_SYS_TIME: a privileged container (or one granted `SYS_TIME`), or
a command run in the node's namespaces (`nsenter -t 1 ...`, `ctx.extras["node_host"]`). Then
`date -s STRING` moves the node's clock (`NodeOS.set_clock_offset`): every pod on it, its
kubelet and node-exporter's `node_timex_offset_seconds` follow. Anywhere else it fails with
EPERM as GNU date (message, then the date it tried to set, exit 1) or BusyBox does.

`hwclock` reads the battery-backed RTC, which a `date -s` does not touch: `hwclock --hctosys`
(`-s`) puts the system clock back to it, `--systohc` (`-w`) copies the system clock into it.
Inside an ordinary container there is no `/dev/rtc` and util-linux says so.
"""

from __future__ import annotations

import re
import weakref
from datetime import UTC, datetime, timedelta
from typing import Any

from sregym.twin.node.coreutils import date as plain_date
from sregym.twin.node.shell import Invocation, command, format_date
from sregym.twin.userland.capabilities import privileged
from sregym.twin.userland.node_host import host_node

# RTC offsets from true time per (twin, node); a node's RTC starts correct.
_RTC: weakref.WeakKeyDictionary[Any, dict[str, float]] = weakref.WeakKeyDictionary()
UNITS = {"sec": 1, "second": 1, "min": 60, "minute": 60, "hour": 3600, "day": 86400, "week": 604800,
         "fortnight": 1209600, "month": 2592000, "year": 31536000}
_RELATIVE = re.compile(r"\s*([+-]?\s*\d+)\s*(sec|second|min|minute|hour|day|week|fortnight|month|year)s?"
                       r"(\s+ago)?\s*$", re.IGNORECASE)
_FORMATS = ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d",
            "%a %b %d %H:%M:%S UTC %Y", "%a %b %d %H:%M:%S %Y", "%Y%m%d %H:%M:%S", "%Y%m%d", "%Y/%m/%d %H:%M:%S")


def node_of(call: Invocation) -> str:
    return str(((call.ctx.pod or {}).get("spec") or {}).get("nodeName") or "")


def _nodeos(call: Invocation) -> Any:
    from sregym.twin.chaos.nodeos import nodeos_of

    return nodeos_of(call.ctx.twin)


def clock_offset(call: Invocation) -> float:
    """Seconds this program's clock is off true time: its node's offset and TimeChaos."""
    twin = call.ctx.twin
    if twin is None:
        return 0.0
    host = host_node(call.ctx)
    if host:
        nodeos = twin.services.nodeos
        return nodeos.clock_offset(host) if nodeos is not None else 0.0
    chaos = twin.services.chaos
    if chaos is not None and call.ctx.pod is not None:
        return float(chaos.time_offset(call.ctx.pod, call.ctx.container or None))
    nodeos = twin.services.nodeos
    node = node_of(call)
    return nodeos.clock_offset(node) if nodeos is not None and node else 0.0


def can_set_clock(call: Invocation) -> str | None:
    """The node whose clock this program may set (CAP_SYS_TIME), else None."""
    host = host_node(call.ctx)
    if host:
        return host
    if call.ctx.twin is not None and call.ctx.pod is not None and privileged(call, "SYS_TIME"):
        return node_of(call) or None
    return None


def parse_date(text: str, now: float) -> float | None:
    """The instant a `date -d`/`-s` STRING names (UTC; the forms scripts use), None if invalid."""
    text = text.strip()
    if text.startswith("@"):
        try:
            return float(text[1:])
        except ValueError:
            return None
    base, rest = now, text
    for word in ("now", "today"):
        if rest.lower().startswith(word):
            rest = rest[len(word):]
            break
    else:
        parsed = None
        head = re.sub(r"\s+", " ", re.sub(r"(Z|[+-]00:?00| UTC)(?=\s|$)", "", text, count=1))
        candidates = [(head, "")]
        m = re.match(r"^(.*?\d)\s+([+-]?\d+\s*[a-zA-Z]+(?:\s+ago)?)$", head)
        if m:
            candidates.append((m.group(1), m.group(2)))
        for head_text, tail in candidates:
            for fmt in _FORMATS:
                try:
                    parsed = datetime.strptime(head_text, fmt).replace(tzinfo=UTC)
                except ValueError:
                    continue
                break
            if parsed is not None:
                rest = tail
                break
        if parsed is None:
            m = re.fullmatch(r"(\d{1,2}):(\d{2})(?::(\d{2}))?", head)
            if not m:
                if not _RELATIVE.fullmatch(text):
                    return None
                parsed = datetime.fromtimestamp(now, tz=UTC)
            else:
                day = datetime.fromtimestamp(now, tz=UTC).replace(hour=0, minute=0, second=0, microsecond=0)
                parsed = day + timedelta(hours=int(m.group(1)), minutes=int(m.group(2)), seconds=int(m.group(3) or 0))
                rest = ""
        base = parsed.timestamp()
    rest = rest.strip()
    if not rest:
        return base
    m = _RELATIVE.fullmatch(rest)
    if not m:
        return None
    amount = int(m.group(1).replace(" ", "")) * UNITS[m.group(2).lower()]
    return base - amount if m.group(3) else base + amount


@command("date")
def date(call: Invocation) -> Any:
    args = list(call.args)
    setting: str | None = None
    rest: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in ("-s", "--set"):
            if index + 1 >= len(args):
                call.error(f"date: option requires an argument -- '{'s'}'\n"
                           "Try 'date --help' for more information.\n")
                return 1
            setting = args[index + 1]
            index += 2
            continue
        if arg.startswith("--set="):
            setting = arg.partition("=")[2]
        elif arg.startswith("-s") and len(arg) > 2:
            setting = arg[2:]
        elif arg in ("-u", "--utc", "--universal"):
            pass
        else:
            rest.append(arg)
        index += 1
    offset = clock_offset(call)
    shown_now = call.wall_now + offset
    fmt = next((a[1:] for a in rest if a.startswith("+")), None)
    if setting is None:
        if any(not a.startswith("+") for a in rest):
            return plain_date(call)  # whatever the basic `date` makes of other options
        call.write(format_date(shown_now, fmt) + "\n")
        return 0
    busybox = call.ctx.shell_flavour == "ash"
    target = parse_date(setting, shown_now)
    if target is None:
        call.error(f"date: invalid date '{setting}'\n")
        return 1
    node = can_set_clock(call)
    if node is None:
        if busybox:
            call.error("date: can't set date: Operation not permitted\n")
            return 1
        call.error("date: cannot set date: Operation not permitted\n")
        call.write(format_date(target, fmt) + "\n")
        return 1
    _nodeos(call).set_clock_offset(node, round(target - call.wall_now, 6))
    call.write(format_date(target, fmt) + "\n")
    return 0


def _rtc(call: Invocation) -> dict[str, float]:
    return _RTC.setdefault(call.ctx.twin, {})


@command("hwclock")
def hwclock(call: Invocation) -> int:
    node = can_set_clock(call)
    if node is None and call.ctx.shell_flavour == "ash":  # BusyBox looks for the RTC device itself
        call.error("hwclock: can't open '/dev/misc/rtc': No such file or directory\n")
        return 1
    if node is None:
        call.error("hwclock: Cannot access the Hardware Clock via any known method.\n"
                   "hwclock: Use the --verbose option to see the details of our search for an access method.\n")
        return 1
    args = call.args or ["--show"]
    verb = args[0]
    rtc = _rtc(call).get(node, 0.0)
    if verb in ("-r", "--show", "--get"):
        moment = datetime.fromtimestamp(call.wall_now + rtc, tz=UTC)
        call.write(moment.strftime("%Y-%m-%d %H:%M:%S.%f") + "+00:00\n")
        return 0
    if verb in ("-s", "--hctosys"):
        _nodeos(call).set_clock_offset(node, rtc)
        return 0
    if verb in ("-w", "--systohc"):
        _rtc(call)[node] = _nodeos(call).clock_offset(node)
        return 0
    call.error(f"hwclock: unrecognized option '{verb}'\nTry 'hwclock --help' for more information.\n"
               if verb.startswith("--") else
               f"hwclock: invalid option -- '{verb.lstrip('-')[:1]}'\nTry 'hwclock --help' for more information.\n")
    return 1
