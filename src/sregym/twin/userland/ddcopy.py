"""`dd` in a container (GNU coreutils 9.1 on Debian images, BusyBox on Alpine).

The usual ways engineers fill or test a filesystem: `if=/dev/zero of=/dev/shm/x bs=1M count=100`.
A full filesystem (the 64 MiB `/dev/shm`, a memory-backed emptyDir at its limit, the writable
layer) stops the copy with ENOSPC after the blocks that fit (a short last write counts as a
partial record), exactly as dd reports it. Copy time is simulated from a fixed throughput, so the
summary line is deterministic. Only what is really written is held in memory.
"""

from __future__ import annotations

import zlib

from sregym.twin.node.shell import Invocation
from sregym.twin.node.shell.limits import MAX_EXEC_OUTPUT_BYTES
from sregym.twin.userland.filteropts import is_busybox
from sregym.twin.userland.shm import mount_of, used_bytes

_RATE = 1.6e9  # bytes per second: memory-to-memory copy throughput
_SUFFIXES = {"c": 1, "w": 2, "b": 512, "kB": 1000, "K": 1024, "k": 1024, "MB": 1000 ** 2, "M": 1 << 20,
             "xM": 1 << 20, "GB": 1000 ** 3, "G": 1 << 30, "T": 1 << 40}



def _number(text: str) -> int | None:
    for suffix in sorted(_SUFFIXES, key=len, reverse=True):
        if text.endswith(suffix) and text[: -len(suffix)].isdigit():
            return int(text[: -len(suffix)]) * _SUFFIXES[suffix]
    if text.endswith("iB") and text[:-3].isdigit() and text[-3] in "KMGT":
        return int(text[:-3]) * _SUFFIXES[text[-3]]
    return int(text) if text.isdigit() else None


def _source_bytes(call: Invocation, path: str | None, n: int) -> str | None:
    """The first `n` bytes of the input, as the session's text (bytes via surrogateescape)."""
    if path in ("/dev/zero",):
        return "\0" * n
    if path in ("/dev/urandom", "/dev/random"):
        out = bytearray()
        seed = zlib.crc32(f"{call.ctx.container}{call.now}".encode())
        while len(out) < n:
            seed = zlib.crc32(seed.to_bytes(4, "little"))
            out += seed.to_bytes(4, "little")
        return bytes(out[:n]).decode("utf-8", "surrogateescape")
    text = call.stdin if path is None else call.read_file(path)
    if text is None:
        return None
    return text.encode("utf-8", "surrogateescape")[:n].decode("utf-8", "surrogateescape")


def _si(n: float) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            value = n / size
            return f"{value:.1f} {unit}" if value < 10 else f"{value:.0f} {unit}"
    return f"{n:.0f} B"


def _iec(n: float) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            value = n / size
            return f"{value:.1f} {unit}" if value < 10 else f"{value:.0f} {unit}"
    return f"{n:.0f} B"


def _summary(call: Invocation, rec_in: tuple[int, int], rec_out: tuple[int, int], copied: int) -> str:
    seconds = max(copied / _RATE, 4.1e-05)
    head = f"{rec_in[0]}+{rec_in[1]} records in\n{rec_out[0]}+{rec_out[1]} records out\n"
    if is_busybox(call):
        human = f"{copied / (1 << 20):.1f}MB" if copied >= 1 << 20 else f"{copied / 1024:.1f}KB" \
            if copied >= 1024 else f"{copied}B"
        return head + f"{copied} bytes ({human}) copied, {seconds:.6f} seconds, " \
                      f"{_si(copied / seconds).replace(' ', '')}/s\n"
    size = f"{copied} bytes ({_si(copied)}, {_iec(copied)}) copied" if copied >= 1000 else \
        f"{copied} byte{'s' if copied != 1 else ''} copied"
    rate = _rate(copied / seconds) if copied else "0.0 kB"
    return head + f"{size}, {seconds:.6g} s, {rate}/s\n"


def _rate(n: float) -> str:
    """GNU dd's speed: three significant digits at most, one decimal below 100."""
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            value = n / size
            return f"{value:.1f} {unit}" if value < 100 else f"{value:.0f} {unit}"
    return f"{n:.1f} B"


def dd_to_memory(call: Invocation) -> int:
    """dd whose output is memory: stdout, /dev/null, `/dev/shm` or a memory-backed emptyDir."""
    operands: dict[str, str] = {}
    for arg in call.args:
        key, eq, value = arg.partition("=")
        if not eq:
            if is_busybox(call):
                call.error("BusyBox v1.36.1 (2023-05-18 22:34:17 UTC) multi-call binary.\n\nUsage: dd "
                           "[if=FILE] [of=FILE] [ibs=N obs=N/bs=N] [count=N] [skip=N] [seek=N]")
            else:
                call.error(f"dd: unrecognized operand '{arg}'\nTry 'dd --help' for more information.")
            return 1
        operands[key] = value
    for key in ("bs", "ibs", "obs", "count", "skip", "seek"):
        if key in operands and _number(operands[key]) is None:
            call.error(f"dd: invalid number: '{operands[key]}'" if not is_busybox(call) else
                       f"dd: invalid number '{operands[key]}'")
            return 1
    unknown = [k for k in operands if k not in ("if", "of", "bs", "ibs", "obs", "count", "skip", "seek", "conv",
                                                 "status", "iflag", "oflag")]
    if unknown:
        call.error(f"dd: unrecognized operand '{unknown[0]}={operands[unknown[0]]}'\n"
                   "Try 'dd --help' for more information.")
        return 1
    bs = _number(operands.get("bs") or operands.get("ibs") or "512") or 512
    count = _number(operands["count"]) if "count" in operands else None
    source, target = operands.get("if"), operands.get("of")
    endless = source in ("/dev/zero", "/dev/urandom", "/dev/random")
    if source is not None and not endless and call.read_file(source) is None:
        call.error(f"dd: failed to open '{source}': No such file or directory" if not is_busybox(call) else
                   f"dd: can't open '{source}': No such file or directory")
        return 1
    if count is None and endless and target in (None, "/dev/null"):
        count = 1 << 20  # `dd if=/dev/zero of=/dev/null` runs until interrupted; an exec ends it
    available = (count * bs if count is not None else None) if endless else \
        len((call.stdin if source is None else call.read_file(source) or "").encode("utf-8", "surrogateescape"))
    total_in = available if count is None or available is None else min(available, count * bs)
    total_in = int(total_in or 0)
    rec_in = (total_in // bs, 1 if total_in % bs else 0)
    room = _room(call, target)
    written = min(total_in, room)
    status = 0
    if target is None:
        written = min(written, MAX_EXEC_OUTPUT_BYTES)
        call.write(_source_bytes(call, source, written) or "")
    elif target != "/dev/null":
        path = call.shell.abspath(target)
        data = _source_bytes(call, source, written) or ""
        if "notrunc" not in operands.get("conv", ""):
            call.ctx.files[path] = ""
        call.ctx.files[path] = call.ctx.files.get(path, "") + data
        if mount_of(call.ctx.extras.get("tmpfs") or {}, path) is None:
            call.ctx.meter().disk_used += written  # tmpfs pages are memory, not the writable layer
    rec_out = (written // bs, 1 if written % bs else 0)
    if written < total_in:
        status = 1
        call.error(f"dd: error writing '{target}': No space left on device")
        rec_in = (written // bs + 1, 0)  # the block it could not write was read
    if operands.get("status") not in ("none",):
        summary = _summary(call, rec_in, rec_out, written)
        if operands.get("status") == "noxfer":
            summary = "".join(summary.splitlines(keepends=True)[:2])
        call.error(summary.rstrip("\n"))
    return status


def _room(call: Invocation, target: str | None) -> int:
    """Bytes the output can still take: its tmpfs's free space, else the writable layer's."""
    if target is None or target == "/dev/null":
        return 1 << 62
    path = call.shell.abspath(target)
    meter = call.ctx.meter()
    layer = max(0, meter.disk_limit - meter.disk_used)
    mounts = call.ctx.extras.get("tmpfs") or {}
    mount = mount_of(mounts, path)
    if mount is None:
        return layer
    held = used_bytes({p: c for p, c in call.ctx.files.items() if p != path}, mount)
    return max(0, min(layer, mounts[mount][1] - held))
