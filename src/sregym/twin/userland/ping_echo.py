"""The echo exchange of `ping` on a shaped path, and its summary, as iputils and BusyBox print it.

netem acts per packet, so `ping` is where an on-call engineer sees partial loss, duplication and
corruption directly. Each echo request draws, from the twin's `userland.ping` stream, whether the
round trip lost it, corrupted it or duplicated it:

- lost: no reply line at all (neither tool prints anything for a missing reply);
- corrupted: the receiving kernel drops a packet whose ICMP checksum fails (the target for a
  request; for a reply, the ping socket iputils uses, which containerd allows by default through
  `net.ipv4.ping_group_range`). BusyBox reads a raw socket and does not verify the checksum, so it
  prints a reply unless the flipped bit hit the IP header (which the kernel drops);
- duplicated: a second reply with the same sequence, flagged `(DUP!)`, counted in `+N duplicates`
  (iputils) or `N duplicates, ` (BusyBox) and not in the received count; both tools include it
  in the round-trip statistics.

iputils prints the loss with `%g` of a float (`33.3333%`), BusyBox an integer percentage
truncated toward zero.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sregym.twin.node.shell import Invocation, Program, Sleep

IP_HEADER_SHARE = 20 / 84  # a 56-byte echo: 20 bytes of IP header in the 84 on the wire


@dataclass(frozen=True)
class EchoPath:
    """What a round trip to the target looks like: base RTT, TTL and netem's numbers."""

    answers: bool
    base_rtt: float = 0.0
    ttl: int = 0
    delay: float = 0.0
    jitter: float = 0.0
    loss: float = 0.0
    corrupt: float = 0.0
    duplicate: float = 0.0
    bandwidth: float | None = None


def path_of(answers: bool, base_rtt: float, ttl: int, effect: Any) -> EchoPath:
    if effect is None:
        return EchoPath(answers, base_rtt, ttl)
    return EchoPath(answers, base_rtt, ttl, float(getattr(effect, "delay_ms", 0.0) or 0.0),
                    float(getattr(effect, "jitter_ms", 0.0) or 0.0), _share(getattr(effect, "loss", 0.0)),
                    _share(getattr(effect, "corrupt", 0.0)), _share(getattr(effect, "duplicate", 0.0)),
                    getattr(effect, "bandwidth", None))


def _share(value: Any) -> float:
    number = float(value or 0.0)
    return max(0.0, min(1.0, number / 100.0 if number > 1.0 else number))


def echoes(call: Invocation, path: EchoPath, ip: str, shown: str, count: int, interval: float,
           quiet: bool, busybox: bool) -> Program:
    """Send `count` echo requests, print the replies and the summary; the exit status."""
    rng = call.ctx.twin.rng.stream("userland.ping")
    replies, duplicates, rtts = 0, 0, []
    serialise = 2 * 84 / path.bandwidth * 1000 if path.bandwidth else 0.0
    for seq in range(count):
        if path.answers:
            # netem adds its delay (± jitter, never below zero) on top of the varying base RTT.
            netem = max(0.0, path.delay + path.jitter * (2 * rng.random() - 1)) if path.delay else 0.0
            rtt = round(path.base_rtt * (0.8 + 0.4 * rng.random()) + netem + serialise, 3)
            lost = bool(path.loss) and rng.random() < path.loss
            if not lost and path.corrupt and rng.random() < path.corrupt:
                lost = not busybox or rng.random() < IP_HEADER_SHARE
            copies = 0 if lost else 1
            if copies and path.duplicate and rng.random() < path.duplicate:
                copies = 2
            for copy in range(copies):
                # The duplicate follows the original within microseconds.
                time = round(rtt + 0.004 * copy, 3)
                rtts.append(time)
                if copy:
                    duplicates += 1
                else:
                    replies += 1
                if not quiet:
                    tail = " (DUP!)" if copy else ""
                    call.write(f"64 bytes from {ip}: seq={seq} ttl={path.ttl} time={time:.3f} ms{tail}\n"
                               if busybox else
                               f"64 bytes from {ip}: icmp_seq={seq + 1} ttl={path.ttl} time={time:.3f} ms{tail}\n")
        if seq < count - 1:
            yield Sleep(interval)
    if not replies:
        yield Sleep(1.0 if busybox else 0.0)
    call.write(f"\n--- {shown} ping statistics ---\n")
    if busybox:
        call.write(f"{count} packets transmitted, {replies} packets received, ")
        if duplicates:
            call.write(f"{duplicates} duplicates, ")
        call.write(f"{(count - replies) * 100 // count}% packet loss\n")
        if rtts:
            call.write(f"round-trip min/avg/max = {min(rtts):.3f}/{sum(rtts) / len(rtts):.3f}/{max(rtts):.3f} ms\n")
        return 0 if replies else 1
    elapsed = int((count - 1) * interval * 1000 + (sum(rtts) if rtts else 0) + count * 3)
    line = f"{count} packets transmitted, {replies} received"
    if duplicates:
        line += f", +{duplicates} duplicates"
    loss = (count - replies) * 100.0 / count
    call.write(f"{line}, {_g(loss)}% packet loss, time {elapsed}ms\n")
    if rtts:
        avg = sum(rtts) / len(rtts)
        mdev = (sum((r - avg) ** 2 for r in rtts) / len(rtts)) ** 0.5
        call.write(f"rtt min/avg/max/mdev = {min(rtts):.3f}/{avg:.3f}/{max(rtts):.3f}/{mdev:.3f} ms\n")
    return 0 if replies else 1


def _g(value: float) -> str:
    """C's `%g` of the float iputils computes (six significant digits, no trailing zeros)."""
    import struct

    single = struct.unpack("f", struct.pack("f", value))[0]
    return f"{single:g}"
