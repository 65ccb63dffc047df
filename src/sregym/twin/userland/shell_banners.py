"""`busybox` itself and `bash --version`: what an engineer types to learn which userland a
container has (BusyBox's multi-call binary in Alpine images, GNU bash where one is installed).

`busybox` with no arguments prints its banner and applet list; `busybox APPLET ARGS` runs the
applet as `APPLET ARGS`. `bash --version` prints the version of the distribution's bash package:
Debian 12's 5.2.15 built for glibc, Alpine 3.21's 5.2.37 built for musl (an Alpine image whose
Dockerfile ran `apk add bash`, like apache/kafka). Everything else `bash` does is `sh`'s.
"""

from __future__ import annotations

from sregym.twin.node.coreutils import sh
from sregym.twin.node.image_families import ALPINE, family_of
from sregym.twin.node.shell import Invocation, Program, command

BUSYBOX_BANNER = "BusyBox v1.36.1 (2023-05-18 22:34:17 UTC) multi-call binary.\n"
_BUSYBOX_USAGE = (
    "BusyBox is copyrighted by many authors between 1998-2015.\nLicensed under GPLv2. See source "
    "distribution for detailed\ncopyright notices.\n\nUsage: busybox [function [arguments]...]\n"
    "   or: busybox --list[-full]\n   or: busybox --show SCRIPT\n   or: busybox --install [-s] [DIR]\n"
    "   or: function [arguments]...\n\n\tBusyBox is a multi-call binary that combines many common Unix\n"
    "\tutilities into a single executable.  Most people will create a\n\tlink to busybox for each function "
    "they wish to use and BusyBox\n\twill act like whatever function it is invoked as.\n\n"
    "Currently defined functions:\n")
_BASH = {
    ALPINE: ("5.2.37(1)-release", "x86_64-alpine-linux-musl"),
    "debian": ("5.2.15(1)-release", "x86_64-pc-linux-gnu"),
}
_BASH_TAIL = ("Copyright (C) 2022 Free Software Foundation, Inc.\nLicense GPLv3+: GNU GPL version 3 or later "
              "<http://gnu.org/licenses/gpl.html>\n\nThis is free software; you are free to change and "
              "redistribute it.\nThere is NO WARRANTY, to the extent permitted by law.\n")


def _applets(call: Invocation) -> list[str]:
    binaries = call.ctx.extras.get("binaries")
    names = sorted(binaries) if isinstance(binaries, dict) else []
    return [n for n in names if n not in ("busybox", "apk", "bash", "scanelf", "ldconfig", "getconf", "getent",
                                          "iconv", "ldd")]


@command("busybox")
def busybox(call: Invocation) -> Program:
    """`busybox` (banner and applets), `busybox --list`, or `busybox APPLET ...`."""
    args = call.args
    if not args or args[0] in ("--help", "-h"):
        applets = _applets(call)
        lines, line = [], "\t"
        for name in applets:
            piece = name + ", "
            if len(line) + len(piece) > 78:
                lines.append(line.rstrip())
                line = "\t"
            line += piece
        lines.append(line.rstrip().rstrip(","))
        call.write(BUSYBOX_BANNER + _BUSYBOX_USAGE + "\n".join(lines) + "\n\n")
        return 0
    if args[0] in ("--list", "--list-full"):
        call.write("".join(f"{name}\n" for name in _applets(call)))
        return 0
    if args[0] not in _applets(call):
        call.error(f"{args[0]}: applet not found")
        return 127
    from sregym.twin.node.images import exec_rest

    return (yield from exec_rest(call, list(args)))


@command("bash")
def bash(call: Invocation) -> Program:
    """`bash --version` as the image's bash package prints it; the rest is `sh`."""
    if call.name == "bash" and call.args[:1] == ["--version"]:
        image = str(call.ctx.extras.get("image", ""))
        family = ALPINE if call.ctx.shell_flavour == "ash" or family_of(image) == ALPINE else "debian"
        version, machine = _BASH[family]
        call.write(f"GNU bash, version {version} ({machine})\n{_BASH_TAIL}")
        return 0
    return (yield from sh(call))


__all__ = ["BUSYBOX_BANNER", "bash", "busybox"]
