"""`certcheck`: a small Go sidecar that verifies a TLS certificate on a schedule and logs the result.

Why: teams that ship short-lived certificates run such a checker next to the service that uses
them, so an expiring or broken certificate shows in the logs before clients fail. It verifies
the certificate the way Go's `crypto/x509` does, against the clock of the node it runs on
(`dataplane/client_clock.py`, the same offset `date` in the pod shows): on a worker whose time
sync stopped and whose clock moved, a valid certificate fails with
`x509: certificate has expired or is not yet valid: current time ... is after ...`.

`certcheck --cert /etc/tls-ca/ca.crt --name hotel-reservation.local --interval 30s` logs one
line per check (stdout when valid, stderr when not). The image joins the built-in catalogue when
this module is imported (the kubelet imports it).
"""

from __future__ import annotations

from datetime import UTC, datetime

from sregym.twin.dataplane.tls_validity import check_validity
from sregym.twin.node.images import MIB, ImageSpec, log_stamp, register_image
from sregym.twin.node.shell import Invocation, Program, Sleep, Usage
from sregym.twin.userland.clock import clock_offset

REPOSITORY = "ghcr.io/reservation-platform/certcheck"
TAGS = ("v1.0.2", "latest")


def _flags(args: list[str]) -> dict[str, str]:
    flags: dict[str, str] = {}
    for index, arg in enumerate(args):
        if arg.startswith("-"):
            name, eq, value = arg.lstrip("-").partition("=")
            flags[name] = value if eq else (args[index + 1] if index + 1 < len(args) else "")
    return flags


def _seconds(text: str) -> float:
    """A Go duration of whole seconds or minutes (`30s`, `1m`); 30 s when it does not parse."""
    scale = 60.0 if text.endswith("m") else 1.0
    try:
        value = float(text.rstrip("sm")) * scale
    except ValueError:
        return 30.0
    return value if value > 0 else 30.0


def _expiry(at: float) -> str:
    return datetime.fromtimestamp(at, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def certcheck(call: Invocation) -> Program:
    """`certcheck --cert PATH [--name NAME] [--interval 30s]`: check forever."""
    flags = _flags(call.args)
    path = flags.get("cert", "")
    name = flags.get("name", "") or path
    interval = _seconds(flags.get("interval", "30s"))
    if not path:
        call.write("certcheck: --cert is required\n", "stderr")
        return 2
    yield Usage(memory_bytes=9 * MIB, cpu_cores=0.001)
    while True:
        stamp = log_stamp(call, "%Y/%m/%d %H:%M:%S")
        pem = call.ctx.files.get(path)
        if pem is None:
            call.write(f"{stamp} check {name}: open {path}: no such file or directory\n", "stderr")
        else:
            validity = check_validity(pem, call.now + clock_offset(call))
            if validity.ok:
                call.write(f"{stamp} check {name}: certificate valid until {_expiry(validity.not_after)}\n")
            elif validity.reason == "unparsable":
                call.write(f"{stamp} check {name}: x509: malformed certificate\n", "stderr")
            else:
                call.write(f"{stamp} check {name}: tls: failed to verify certificate: {validity.go_error}\n",
                           "stderr")
        yield Sleep(interval)


def certcheck_image() -> ImageSpec:
    return ImageSpec(REPOSITORY, TAGS, size_mb=7.9, description="TLS certificate checker", shell="",
                     entrypoint=("/certcheck",), memory_mb=9.0,
                     commands={"/certcheck": certcheck, "certcheck": certcheck})


register_image(certcheck_image())

__all__ = ["REPOSITORY", "certcheck", "certcheck_image"]
