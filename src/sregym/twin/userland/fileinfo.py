"""`du` and `stat` over the container's tree (`tree.TreeView`: the image's files plus what the
session wrote), GNU coreutils 9.1 layouts on Debian images and BusyBox's on Alpine/BusyBox.

Disk usage is what the filesystem allocates: files in 4 KiB blocks (an empty file and a fast
symlink take none), directories one block; `-b`/`--apparent-size` count bytes instead. `du`
walks in name order and prints a directory after its contents, as fts does.
"""

from __future__ import annotations

import posixpath
import zlib
from datetime import UTC, datetime

from sregym.twin.node.shell import Invocation, command
from sregym.twin.userland.filteropts import is_busybox
from sregym.twin.userland.tree import Entry, TreeView

_OVERLAY_DEVICE = (0, 81)  # the container root's overlay mount (anonymous major 0)



def _blocks_kib(entry: Entry) -> int:
    if entry.kind == "dir":
        return 4
    if entry.kind == "link":
        return 0
    return -(-entry.size // 4096) * 4


def _gnu_human(n: float) -> str:
    """GNU's -h: one decimal below 10 (rounded up), whole numbers above, powers of 1024."""
    value, unit = float(n), ""
    for next_unit in ("K", "M", "G", "T", "P"):
        if value < 1024 and unit:
            break
        if value < 1024 and not unit:
            return str(int(value))
        value /= 1024
        unit = next_unit
    if value < 10:
        tenths = -(-value * 10 // 1) / 10
        if tenths >= 10:
            return f"{int(tenths)}{unit}"
        return f"{tenths:.1f}{unit}"
    return f"{int(-(-value // 1))}{unit}"


def _busybox_human(n: float) -> str:
    value, unit = float(n), ""
    for next_unit in ("K", "M", "G", "T"):
        if value < 1024:
            break
        value /= 1024
        unit = next_unit
    return f"{value:.1f}{unit}" if unit else str(int(value))


# ====================================================================================== du
_DU_HELP = "Try 'du --help' for more information."
_BB_DU_USAGE = ("BusyBox v1.36.1 (2023-05-18 22:34:17 UTC) multi-call binary.\n\nUsage: du [-aHLdclsxhmk] "
                "[FILE]...\n\nSummarize disk space used for FILEs (or directories)\n\n\t-a\tShow file sizes too"
                "\n\t-L\tFollow all symlinks\n\t-H\tFollow symlinks on command line\n\t-d N\tLimit output to "
                "directories (and files with -a) of depth < N\n\t-c\tShow grand total\n\t-l\tCount sizes many "
                "times if hard linked\n\t-s\tDisplay only a total for each argument\n\t-x\tSkip directories on "
                "different filesystems\n\t-h\tSizes in human readable format (e.g., 1K 243M 2G)\n\t-m\tSizes in "
                "megabytes\n\t-k\tSizes in kilobytes (default)")


@command("du")
def du(call: Invocation) -> int:
    bb = is_busybox(call)
    opts = {"a": False, "s": False, "c": False, "h": False, "b": False, "m": False, "x": False}
    depth: int | None = None
    paths: list[str] = []
    args = list(call.args)
    while args:
        arg = args.pop(0)
        if arg == "--":
            paths.extend(args)
            break
        if arg.startswith("--") and not bb:
            name, eq, value = arg[2:].partition("=")
            if name in ("max-depth",):
                value = value if eq else (args.pop(0) if args else "")
                if not value.isdigit():
                    call.error(f"du: invalid maximum depth '{value}'\n{_DU_HELP}")
                    return 1
                depth = int(value)
            elif name in ("summarize", "all", "total", "human-readable", "bytes", "one-file-system"):
                opts[{"summarize": "s", "all": "a", "total": "c", "human-readable": "h", "bytes": "b",
                      "one-file-system": "x"}[name]] = True
            elif name == "apparent-size":
                opts["apparent"] = True
            else:
                call.error(f"du: unrecognized option '{arg}'\n{_DU_HELP}")
                return 1
            continue
        if arg.startswith("-") and len(arg) > 1:
            letters = arg[1:]
            for i, ch in enumerate(letters):
                if ch == "d":
                    value = letters[i + 1:] or (args.pop(0) if args else "")
                    if not value.isdigit():
                        call.error(f"du: invalid number '{value}'" if bb else
                                   f"du: invalid maximum depth '{value}'\n{_DU_HELP}")
                        return 1
                    depth = int(value)
                    break
                if ch in "ascbhmx":
                    opts[ch] = True
                elif ch in "kLHlPS0":
                    continue
                else:
                    if bb:
                        call.error(f"du: unrecognized option: {ch}\n{_BB_DU_USAGE}")
                    else:
                        call.error(f"du: invalid option -- '{ch}'\n{_DU_HELP}")
                    return 1
            continue
        paths.append(arg)
    if opts["s"] and depth is not None and not bb and depth != 0:
        call.error(f"du: cannot both summarize and show all entries\n{_DU_HELP}" if opts["a"] else
                   f"du: warning: summarizing conflicts with --max-depth={depth}\n{_DU_HELP}")
        return 1
    if opts["s"] and opts["a"] and not bb:
        call.error(f"du: cannot both summarize and show all entries\n{_DU_HELP}")
        return 1
    if opts["s"]:
        depth = 0
    tree = TreeView(call)
    apparent = opts["b"] or bool(opts.get("apparent"))

    def size_of(entry: Entry) -> int:
        return entry.size if apparent else _blocks_kib(entry) * 1024

    def show(size: int, name: str) -> None:
        if opts["h"]:
            text = _busybox_human(size) if bb else _gnu_human(size)
        elif opts["b"]:
            text = str(size)
        elif opts["m"]:
            text = str(-(-size // (1 << 20)))
        else:
            text = str(-(-size // 1024))
        call.write(f"{text}\t{name}\n")

    def walk(real: str, shown: str, level: int) -> int:
        entry = tree.entries[real]
        total = size_of(entry)
        if entry.kind == "dir":
            for child in tree.children(real):
                child_real = posixpath.join(real, child) if real != "/" else "/" + child
                total += walk(child_real, posixpath.join(shown, child), level + 1)
        if entry.kind == "dir" or opts["a"] or level == 0:
            if depth is None or level <= depth:
                show(total, shown)
        return total

    status = 0
    grand = 0
    for path in paths or ["."]:
        real = tree.resolve(call.shell.abspath(path), follow=False)
        if real is None:
            call.error(f"du: {path}: No such file or directory" if bb else
                       f"du: cannot access '{path}': No such file or directory")
            status = 1
            continue
        grand += walk(real, path.rstrip("/") or "/" if path != "/" else "/", 0)
    if opts["c"]:
        show(grand, "total")
    return status


# ==================================================================================== stat
_STAT_HELP = "Try 'stat --help' for more information."
_KINDS = {"file": "regular file", "dir": "directory", "link": "symbolic link"}


def _mode_string(entry: Entry) -> str:
    bits = "".join(("r" if p & 4 else "-") + ("w" if p & 2 else "-") + ("x" if p & 1 else "-")
                   for p in ((entry.mode >> s) & 7 for s in (6, 3, 0)))
    return {"dir": "d", "link": "l"}.get(entry.kind, "-") + bits


def _stamp(ts: float) -> str:
    moment = datetime.fromtimestamp(int(ts), tz=UTC)
    nanos = round((ts - int(ts)) * 1e9) % 1_000_000_000
    return moment.strftime("%Y-%m-%d %H:%M:%S") + f".{nanos:09d} +0000"


def _owner(call: Invocation, real: str) -> tuple[str, str]:
    fs = call.ctx.extras.get("fs")
    node = fs.nodes.get(real) if fs is not None and hasattr(fs, "nodes") else None
    return (getattr(node, "owner", "root"), getattr(node, "group", "root")) if node is not None else ("root", "root")


def _ids(call: Invocation, name: str, table: str) -> int:
    """A user's or group's number from the image's /etc/passwd or /etc/group."""
    for line in (call.ctx.files.get(table) or "").splitlines():
        fields = line.split(":")
        if len(fields) > 2 and fields[0] == name and fields[2].isdigit():
            return int(fields[2])
    return 0


def _inode(real: str) -> int:
    return 1_000_000 + zlib.crc32(real.encode()) % 9_000_000


def _format(call: Invocation, spec: str, path: str, real: str, entry: Entry) -> str:
    owner, group = _owner(call, real)
    out = []
    i = 0
    while i < len(spec):
        c = spec[i]
        if c == "\\" and i + 1 < len(spec):
            out.append({"n": "\n", "t": "\t", "\\": "\\"}.get(spec[i + 1], "\\" + spec[i + 1]))
            i += 2
            continue
        if c != "%" or i + 1 >= len(spec):
            out.append(c)
            i += 1
            continue
        d = spec[i + 1]
        i += 2
        value = {
            "s": str(entry.size), "n": path, "a": f"{entry.mode & 0o7777:o}", "A": _mode_string(entry),
            "U": owner, "G": group, "u": str(_ids(call, owner, "/etc/passwd")),
            "g": str(_ids(call, group, "/etc/group")), "y": _stamp(entry.mtime), "Y": str(int(entry.mtime)),
            "x": _stamp(entry.mtime), "X": str(int(entry.mtime)), "z": _stamp(entry.mtime),
            "Z": str(int(entry.mtime)), "w": _stamp(entry.mtime), "W": str(int(entry.mtime)),
            "F": _KINDS.get(entry.kind, "regular file") if entry.size or entry.kind != "file"
            else "regular empty file",
            "b": str(_blocks_kib(entry) * 2), "B": "512", "o": "4096", "i": str(_inode(real)),
            "h": str(2 if entry.kind == "dir" else 1), "f": f"{_raw_mode(entry):x}",
            "N": f"'{path}'" + (f" -> '{entry.target}'" if entry.kind == "link" else ""),
            "d": str(_OVERLAY_DEVICE[0] * 256 + _OVERLAY_DEVICE[1]), "D": f"{_OVERLAY_DEVICE[1]:x}",
            "m": "/", "%": "%",
        }.get(d)
        out.append(value if value is not None else "?")
    return "".join(out)


def _raw_mode(entry: Entry) -> int:
    return {"dir": 0o040000, "link": 0o120000}.get(entry.kind, 0o100000) | (entry.mode & 0o7777)


def _default(call: Invocation, path: str, real: str, entry: Entry, bb: bool) -> str:
    owner, group = _owner(call, real)
    uid, gid = _ids(call, owner, "/etc/passwd"), _ids(call, group, "/etc/group")
    kind = _format(call, "%F", path, real, entry)
    shown = f"{path} -> {entry.target}" if entry.kind == "link" else path
    if bb:
        shown = f"'{path}' -> '{entry.target}'" if entry.kind == "link" else f"'{path}'"
        device = f"{_OVERLAY_DEVICE[1]:x}h/{_OVERLAY_DEVICE[1]}d"
    else:
        device = f"{_OVERLAY_DEVICE[0]},{_OVERLAY_DEVICE[1]}"
    links = 2 if entry.kind == "dir" else 1
    stamp = _stamp(entry.mtime)
    text = (f"  File: {shown}\n  Size: {entry.size:<10}\tBlocks: {_blocks_kib(entry) * 2:<10} IO Block: 4096   {kind}\n"
            f"Device: {device}\tInode: {_inode(real):<11} Links: {links}\n"
            f"Access: ({entry.mode & 0o7777:04o}/{_mode_string(entry)})  Uid: ({uid:5d}/{owner:>8})   "
            f"Gid: ({gid:5d}/{group:>8})\n"
            f"Access: {stamp}\nModify: {stamp}\nChange: {stamp}\n")
    return text if bb else text + f" Birth: {stamp}\n"


@command("stat")
def stat(call: Invocation) -> int:
    bb = is_busybox(call)
    fmt: str | None = None
    follow = False
    terse = False
    paths: list[str] = []
    args = list(call.args)
    while args:
        arg = args.pop(0)
        if arg in ("-c", "--format", "--printf") or arg.startswith(("--format=", "--printf=")) or \
                (arg.startswith("-c") and len(arg) > 2):
            if "=" in arg:
                fmt = arg.split("=", 1)[1]
            elif arg.startswith("-c") and len(arg) > 2:
                fmt = arg[2:]
            elif args:
                fmt = args.pop(0)
            else:
                call.error("stat: option requires an argument -- 'c'\n" + _STAT_HELP if not bb else
                           "stat: option requires an argument -- c")
                return 1
            if not arg.startswith("--printf"):
                fmt += "\n"
            continue
        if arg in ("-L", "--dereference"):
            follow = True
            continue
        if arg in ("-t", "--terse"):
            terse = True
            continue
        if arg.startswith("-") and len(arg) > 1 and arg != "-":
            call.error(f"stat: unrecognized option '{arg}'\n{_STAT_HELP}" if arg.startswith("--") else
                       f"stat: invalid option -- '{arg[1]}'\n{_STAT_HELP}")
            return 1
        paths.append(arg)
    if not paths:
        call.error("stat: missing operand\n" + _STAT_HELP)
        return 1
    tree = TreeView(call)
    status = 0
    for path in paths:
        real = tree.resolve(call.shell.abspath(path), follow=follow)
        entry = tree.entries.get(real) if real is not None else None
        if real is None or entry is None:
            call.error(f"stat: can't stat '{path}': No such file or directory" if bb else
                       f"stat: cannot statx '{path}': No such file or directory")
            status = 1
            continue
        if fmt is not None:
            call.write(_format(call, fmt, path, real, entry))
        elif terse:
            call.write(_format(call, "%n %s %b %f %u %g %D %i %h 0 0 %X %Y %Z %W 4096\n", path, real, entry))
        else:
            call.write(_default(call, path, real, entry, bb))
    return status
