"""`ls`: listing the container filesystem, in GNU coreutils or BusyBox format.

`ls -la` of a ConfigMap mount is how an engineer sees which keys a pod really got (and that they
are symlinks into `..data`), so the long format reproduces both real layouts: GNU's columns sized
to the widest entry on Debian-based images, BusyBox's fixed-width columns on BusyBox/Alpine ones.
Output is one name per line unless the session has a TTY, like the real tools.
"""

from __future__ import annotations

import posixpath
from datetime import UTC, datetime

from sregym.twin.node.shell import Invocation, command
from sregym.twin.userland.filteropts import is_busybox
from sregym.twin.userland.fs import ContainerFS, Node

SIX_MONTHS = 182 * 86400



def _fs_of(call: Invocation) -> ContainerFS:
    """The context's filesystem, or one derived from its flat `files` map."""
    fs = call.ctx.extras.get("fs")
    if isinstance(fs, ContainerFS):
        for path, content in call.ctx.files.items():
            if fs.read(path) != content and not fs.is_dir(path):
                found = fs.lookup(path, follow_last=False)
                if found is not None and found[1].kind == "link":
                    continue  # read through a link: its target is listed under its own path
                if found is None:
                    fs.add_file(path, content)  # written by this session
                    found = fs.lookup(path, follow_last=False)
                if found is not None:  # an edited file keeps its mode; its mtime is now
                    found[1].content, found[1].mtime = content, call.now
        return fs
    derived = ContainerFS(call.ctx.start_time)
    for path, content in sorted(call.ctx.files.items()):
        derived.add_file(path, content)
    return derived


def mode_string(node: Node) -> str:
    kind = {"dir": "d", "link": "l"}.get(node.kind, "-")
    bits = ""
    for shift in (6, 3, 0):
        part = (node.mode >> shift) & 7
        bits += ("r" if part & 4 else "-") + ("w" if part & 2 else "-") + ("x" if part & 1 else "-")
    if node.mode & 0o1000:
        bits = bits[:8] + ("t" if bits[8] == "x" else "T")
    return kind + bits


def _when(ts: float, now: float) -> str:
    moment = datetime.fromtimestamp(ts, tz=UTC)
    head = moment.strftime("%b ") + f"{moment.day:2d}"
    if abs(now - ts) > SIX_MONTHS:
        return f"{head}  {moment.year}"
    return f"{head} {moment.strftime('%H:%M')}"


def _human(size: int) -> str:
    value = float(size)
    for unit in ("", "K", "M", "G", "T"):
        if value < 1024 or unit == "T":
            if unit == "":
                return str(int(value))
            return f"{value:.1f}{unit}" if value < 10 else f"{round(value):.0f}{unit}"
        value /= 1024
    return str(size)


def _blocks(node: Node) -> int:
    """1K blocks used, as `total` counts them (4K filesystem blocks; fast symlinks use none)."""
    if node.kind == "dir":
        return 4
    if node.kind == "link":
        return 0
    return -(-node.size // 4096) * 4


def _nlink(fs: ContainerFS, path: str, node: Node) -> int:
    if node.kind != "dir":
        return 1
    return 2 + sum(1 for child in fs.children(path)
                   if fs.nodes[posixpath.join(path, child)].kind == "dir")


class _Options:
    def __init__(self) -> None:
        self.long = False
        self.all = False
        self.almost_all = False
        self.one = False
        self.human = False
        self.directory = False
        self.recursive = False
        self.classify = False


def _parse(call: Invocation) -> tuple[_Options, list[str], str | None]:
    opts = _Options()
    operands: list[str] = []
    flags = {"l": "long", "a": "all", "A": "almost_all", "1": "one", "h": "human", "d": "directory",
             "R": "recursive", "F": "classify"}
    ended = False
    for arg in call.args:
        if ended or not arg.startswith("-") or arg == "-":
            operands.append(arg)
            continue
        if arg == "--":
            ended = True
            continue
        if arg.startswith("--"):
            long_names = {"--all": "all", "--almost-all": "almost_all", "--human-readable": "human",
                          "--directory": "directory", "--recursive": "recursive",
                          "--classify": "classify"}
            if arg in long_names:
                setattr(opts, long_names[arg], True)
            elif arg.startswith("--color"):
                continue
            else:
                return opts, operands, arg
            continue
        for letter in arg[1:]:
            if letter in flags:
                setattr(opts, flags[letter], True)
            elif letter not in "CxtrSUNnoGgis":
                return opts, operands, "-" + letter
    return opts, operands, None


def _suffix(node: Node, opts: _Options) -> str:
    if not opts.classify:
        return ""
    if node.kind == "dir":
        return "/"
    if node.kind == "link":
        return "@"
    return "*" if node.mode & 0o111 else ""


def _long_lines(call: Invocation, fs: ContainerFS,
                entries: list[tuple[str, str, Node]], opts: _Options) -> list[str]:
    """`entries`: (display name, real path, node)."""
    rows = []
    for display, path, node in entries:
        size = _human(node.size) if opts.human else str(node.size)
        name = display + _suffix(node, opts)
        if node.kind == "link":
            name = f"{display} -> {node.target}"
        rows.append((mode_string(node), str(_nlink(fs, path, node)), node.owner, node.group, size,
                     _when(node.mtime, call.now), name))
    if is_busybox(call):
        return [f"{m} {n:>4} {o:<8} {g:<8} {s:>9} {w} {name}" for m, n, o, g, s, w, name in rows]
    if not rows:
        return []
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    return [f"{m} {n:>{widths[1]}} {o:<{widths[2]}} {g:<{widths[3]}} {s:>{widths[4]}} {w} {name}"
            for m, n, o, g, s, w, name in rows]


def _short_lines(call: Invocation, names: list[str]) -> list[str]:
    if opts_tty(call) and names:
        width = max(len(n) for n in names) + 2
        per_row = max(1, 80 // width)
        rows = -(-len(names) // per_row)
        lines = []
        for r in range(rows):
            cells = [names[c * rows + r] for c in range(per_row) if c * rows + r < len(names)]
            lines.append("".join(cell.ljust(width) for cell in cells).rstrip())
        return lines
    return names


def opts_tty(call: Invocation) -> bool:
    return bool(call.ctx.extras.get("tty"))


def _list_dir(call: Invocation, fs: ContainerFS, path: str, opts: _Options) -> list[str]:
    names = fs.children(path)
    if not (opts.all or opts.almost_all):
        names = [n for n in names if not n.startswith(".")]
    entries: list[tuple[str, str, Node]] = []
    if opts.all:
        parent = posixpath.dirname(path) if path != "/" else "/"
        entries.append((".", path, fs.nodes[path]))
        entries.append(("..", parent, fs.nodes.get(parent, fs.nodes["/"])))
    for name in names:
        child = posixpath.join(path, name)
        entries.append((name, child, fs.nodes[child]))
    if opts.long:
        total = sum(_blocks(node) for _name, _path, node in entries)
        return [f"total {total}", *_long_lines(call, fs, entries, opts)]
    return _short_lines(call, [name + _suffix(node, opts) for name, _p, node in entries])


@command("ls")
def ls(call: Invocation) -> int:
    opts, operands, bad = _parse(call)
    if bad is not None:
        if is_busybox(call):
            call.error(f"ls: unrecognized option '{bad}'" if bad.startswith("--")
                       else f"ls: invalid option -- '{bad[1:]}'")
            call.error("BusyBox v1.37.0 (2024-09-26 21:31:42 UTC) multi-call binary.")
            return 1
        if bad.startswith("--"):
            call.error(f"ls: unrecognized option '{bad}'")
        else:
            call.error(f"ls: invalid option -- '{bad[1:]}'")
        call.error("Try 'ls --help' for more information.")
        return 2
    fs = _fs_of(call)
    targets = operands or ["."]
    status = 0
    files: list[tuple[str, str, Node]] = []
    dirs: list[tuple[str, str]] = []
    for operand in targets:
        absolute = call.shell.abspath(operand)
        follow = not (opts.long or opts.directory) or operand.endswith("/")
        found = fs.lookup(absolute, follow_last=follow)
        if found is not None and found[1].kind == "link" and not opts.long and not opts.directory:
            found = fs.lookup(absolute)
        if found is None:
            if is_busybox(call):
                call.error(f"ls: {operand}: No such file or directory")
                status = 1
            else:
                call.error(f"ls: cannot access '{operand}': No such file or directory")
                status = 2
            continue
        real, node = found
        if node.kind == "dir" and not opts.directory:
            dirs.append((operand, real))
        else:
            files.append((operand, real, node))
    out: list[str] = []
    if files:
        if opts.long:
            out.extend(_long_lines(call, fs, files, opts))
        else:
            out.extend(_short_lines(call, [name + _suffix(node, opts) for name, _r, node in files]))
    headers = len(files) + len(dirs) > 1 or opts.recursive
    queue = list(dirs)
    first = not files
    while queue:
        operand, real = queue.pop(0)
        if not first:
            out.append("")
        first = False
        if headers:
            out.append(f"{operand}:")
        out.extend(_list_dir(call, fs, real, opts))
        if opts.recursive:
            subdirs = []
            for name in fs.children(real):
                if name.startswith(".") and not (opts.all or opts.almost_all):
                    continue
                child = posixpath.join(real, name)
                if fs.nodes[child].kind == "dir":
                    subdirs.append((posixpath.join(operand, name), child))
            queue[0:0] = subdirs
    if out:
        call.write("\n".join(out) + "\n")
    return status
