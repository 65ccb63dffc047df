"""The small file and process tools: cp, mv, ln, chmod, basename, dirname, readlink, realpath,
mktemp, nproc, timeout.

They change the exec's view of the container (`files` for contents, the `ContainerFS` tree for
links and modes), so later commands in the session, and the writable layer after it, see the
result. Messages are GNU coreutils' in Debian-based images and BusyBox's otherwise.
"""

from __future__ import annotations

import posixpath
from collections.abc import Generator

from sregym.twin.node.shell import Effect, Invocation, Shell, Sleep, command
from sregym.twin.userland.filteropts import BUSYBOX_BANNER, is_busybox
from sregym.twin.userland.fs import ContainerFS
from sregym.twin.userland.mountpoints import EROFS, read_only
from sregym.twin.userland.tree import TreeView, remove_file


def _operands(call: Invocation) -> tuple[set[str], list[str]]:
    flags: set[str] = set()
    names: list[str] = []
    for arg in call.args:
        if arg.startswith("--") and len(arg) > 2:
            flags.add(arg)
        elif arg.startswith("-") and len(arg) > 1 and not names:
            flags.update(arg[1:])
        else:
            names.append(arg)
    return flags, names


def _missing_operand(call: Invocation, what: str = "file operand") -> int:
    if is_busybox(call):
        call.error(BUSYBOX_BANNER + f"Usage: {call.name} ...")
        return 1
    call.error(f"{call.name}: missing {what}\nTry '{call.name} --help' for more information.")
    return 1


def _fs(call: Invocation) -> ContainerFS | None:
    fs = call.ctx.extras.get("fs")
    return fs if isinstance(fs, ContainerFS) else None


def _copy_or_move(call: Invocation, move: bool) -> int:
    flags, names = _operands(call)
    if len(names) < 2:
        if names and not is_busybox(call):
            call.error(f"{call.name}: missing destination file operand after '{names[0]}'\n"
                       f"Try '{call.name} --help' for more information.")
            return 1
        return _missing_operand(call)
    *sources, dest = names
    tree = TreeView(call)
    dest_abs = call.shell.abspath(dest)
    dest_entry = tree.get(dest_abs)
    into_dir = dest_entry is not None and dest_entry.kind == "dir"
    recursive = move or bool({"r", "R", "a"} & flags) or "--recursive" in flags
    status = 0
    for source in sources:
        src_abs = call.shell.abspath(source)
        entry = tree.get(src_abs)
        if entry is None:
            if is_busybox(call):
                call.error(f"{call.name}: can't {'rename' if move else 'stat'} '{source}': No such file or directory")
            else:
                call.error(f"{call.name}: cannot stat '{source}': No such file or directory")
            status = 1
            continue
        target = posixpath.join(dest_abs, posixpath.basename(src_abs)) if into_dir else dest_abs
        if entry.kind == "dir":
            if not recursive:
                call.error(f"cp: -r not specified; omitting directory '{source}'" if not is_busybox(call)
                           else f"cp: omitting directory '{source}'")
                status = 1
                continue
            real = tree.resolve(src_abs) or src_abs
            fs = _fs(call)
            if fs is not None:
                _copy_tree(call, fs, tree, real, target, preserve=move or bool({"a", "p"} & flags))
            else:
                prefix = real.rstrip("/") + "/"
                for path, content in list(call.ctx.files.items()):
                    if path.startswith(prefix):
                        call.ctx.files[target + "/" + path[len(prefix):]] = content
            if move:
                tree.remove(real)
            continue
        fs = _fs(call)
        link = fs.lookup(src_abs, follow_last=False) if move and fs is not None else None
        if link is not None and fs is not None and link[1].kind == "link":
            # `mv` renames a symlink itself, not what it points to.
            remove_file(call, src_abs)
            call.ctx.files.pop(target, None)
            fs.add_link(target, link[1].target)
            relinked = getattr(call.ctx.files, "relinked", None)
            if relinked is not None:
                relinked(target)
            continue
        content = call.read_file(source) or ""
        call.ctx.files[target] = content
        if move:
            remove_file(call, src_abs)
    return status


def _copy_tree(call: Invocation, fs: ContainerFS, tree: TreeView, real: str, target: str, *,
               preserve: bool) -> None:
    """`cp -r`/`mv` of a directory: every entry under it, empty directories and symlinks (copied
    as links, as GNU `cp -R` does without -L) included; modes kept, mtimes with -a/-p and mv."""
    stack = [(real, call.shell.abspath(target))]
    while stack:
        src, dst = stack.pop()
        entry = tree.entries[src]
        if entry.kind == "dir":
            fs.add_dir(dst, mode=entry.mode)
            stack.extend((posixpath.join(src, child), posixpath.join(dst, child))
                         for child in reversed(tree.children(src)))
        elif entry.kind == "link":
            fs.add_link(dst, entry.target)
        else:
            content = call.ctx.files.get(src, "")
            fs.add_file(dst, content, entry.mode)
            call.ctx.files[dst] = content
        made = fs.lookup(dst, follow_last=False)
        if made is not None:
            made[1].mtime = entry.mtime if preserve else call.now
    relinked = getattr(call.ctx.files, "relinked", None)
    if relinked is not None:
        relinked()


@command("cp")
def cp(call: Invocation) -> int:
    return _copy_or_move(call, move=False)


@command("mv")
def mv(call: Invocation) -> int:
    return _copy_or_move(call, move=True)


@command("ln")
def ln(call: Invocation) -> int:
    flags, names = _operands(call)
    if not names:
        return _missing_operand(call)
    target = names[0]
    link = names[1] if len(names) > 1 else posixpath.basename(target)
    link_abs = call.shell.abspath(link)
    fs = _fs(call)
    exists = link_abs in call.ctx.files or (fs is not None and fs.lookup(link_abs, follow_last=False) is not None)
    if fs is not None and fs.is_dir(link_abs) and len(names) > 1:
        link_abs = posixpath.join(link_abs, posixpath.basename(target))
        exists = fs.lookup(link_abs, follow_last=False) is not None
    if exists and "f" not in flags:
        kind = "symbolic link" if "s" in flags else "hard link"
        call.error(f"ln: {link}: File exists" if is_busybox(call)
                   else f"ln: failed to create {kind} '{link}': File exists")
        return 1
    if "s" in flags:
        if fs is not None:
            parent = TreeView(call).get(posixpath.dirname(link_abs))
            if parent is None or parent.kind != "dir":
                problem = "No such file or directory" if parent is None else "Not a directory"
                call.error(f"ln: {link}: {problem}" if is_busybox(call)
                           else f"ln: failed to create symbolic link '{link}': {problem}")
                return 1
            where = fs.resolve(posixpath.dirname(link_abs)) or posixpath.dirname(link_abs)
            if read_only(call.ctx, posixpath.join(where, posixpath.basename(link_abs))):
                call.error(f"ln: {link}: {EROFS}" if is_busybox(call)
                           else f"ln: failed to create symbolic link '{link}': {EROFS}")
                return 1
            remove_file(call, link_abs)
            fs.add_link(link_abs, target)
            made = fs.lookup(link_abs, follow_last=False)
            if made is not None:
                made[1].mtime = call.now
            relinked = getattr(call.ctx.files, "relinked", None)
            if relinked is not None:  # the files map resolves links (userland/linkedfiles.py)
                relinked(link_abs)
        return 0
    content = call.read_file(target)
    if content is None:
        call.error(f"ln: {target}: No such file or directory" if is_busybox(call)
                   else f"ln: failed to access '{target}': No such file or directory")
        return 1
    call.ctx.files[link_abs] = content
    return 0


@command("chmod")
def chmod(call: Invocation) -> int:
    args = [a for a in call.args if a not in ("-R", "-v", "-f", "-c")]
    if len(args) < 2:
        if not is_busybox(call) and args:
            call.error(f"chmod: missing operand after '{args[0]}'\nTry 'chmod --help' for more information.")
            return 1
        return _missing_operand(call, "operand")
    mode, paths = args[0], args[1:]
    tree = TreeView(call)
    fs = _fs(call)
    status = 0
    for path in paths:
        real = tree.resolve(call.shell.abspath(path))
        if real is None:
            call.error(f"chmod: {path}: No such file or directory" if is_busybox(call)
                       else f"chmod: cannot access '{path}': No such file or directory")
            status = 1
            continue
        entry = tree.entries[real]
        new = _mode(mode, entry.mode)
        if new is None:
            call.error(f"chmod: invalid mode '{mode}'" if is_busybox(call)
                       else f"chmod: invalid mode: '{mode}'\nTry 'chmod --help' for more information.")
            return 1
        if fs is not None:
            if real not in fs.nodes:
                fs.add_file(real, call.ctx.files.get(real, ""))
            fs.nodes[real].mode = new
    return status


def _mode(spec: str, current: int) -> int | None:
    """An octal mode or a symbolic one (`u+x`, `go-w`, `a=r`, `+x`)."""
    if spec and all(c in "01234567" for c in spec):
        return int(spec, 8) & 0o7777
    mode = current
    for clause in spec.split(","):
        who = ""
        while clause[:1] in ("u", "g", "o", "a"):
            who, clause = who + clause[0], clause[1:]
        if not clause or clause[0] not in "+-=" or any(c not in "rwxXst" for c in clause[1:]):
            return None
        op, perms = clause[0], clause[1:]
        bits = 0
        for target in who or "a":
            shifts = {"u": (6,), "g": (3,), "o": (0,), "a": (6, 3, 0)}[target]
            for shift in shifts:
                for perm, value in (("r", 4), ("w", 2), ("x", 1), ("X", 1)):
                    if perm in perms:
                        bits |= value << shift
        if op == "+":
            mode |= bits
        elif op == "-":
            mode &= ~bits
        else:
            mode = (mode & ~(0o777 if not who else sum(0o7 << s for t in who for s in
                                                         {"u": (6,), "g": (3,), "o": (0,), "a": (6, 3, 0)}[t]))) | bits
    return mode


@command("basename")
def basename(call: Invocation) -> int:
    names = [a for a in call.args if a != "--"]
    if not names:
        return _missing_operand(call, "operand")
    name = names[0].rstrip("/") or "/"
    base = posixpath.basename(name) or "/"
    if len(names) > 1 and base != names[1] and base.endswith(names[1]):
        base = base[: -len(names[1])]
    call.write(base + "\n")
    return 0


@command("dirname")
def dirname(call: Invocation) -> int:
    names = [a for a in call.args if a != "--"]
    if not names:
        return _missing_operand(call, "operand")
    for name in names:
        stripped = name.rstrip("/") or "/"
        parent = posixpath.dirname(stripped).rstrip("/") or ("/" if stripped.startswith("/") else ".")
        call.write(parent + "\n")
    return 0


@command("readlink", "realpath")
def readlink(call: Invocation) -> int:
    flags, names = _operands(call)
    if not names:
        return _missing_operand(call, "operand")
    fs = _fs(call)
    canonical = call.name == "realpath" or bool({"f", "e", "m"} & flags)
    status = 0
    for name in names:
        path = call.shell.abspath(name)
        if canonical:
            real = fs.resolve(path) if fs is not None else None
            if real is None and path in call.ctx.files:
                real = path
            if real is None and call.name == "realpath" and "e" not in flags:
                parent = fs.resolve(posixpath.dirname(path)) if fs is not None else None
                real = posixpath.join(parent, posixpath.basename(path)) if parent else None
            if real is None:
                if call.name == "realpath":
                    call.error(f"realpath: {name}: No such file or directory")
                status = 1
                continue
            call.write(real + "\n")
            continue
        found = fs.lookup(path, follow_last=False) if fs is not None else None
        if found is None or found[1].kind != "link":
            status = 1
            continue
        call.write(found[1].target + "\n")
    return status


@command("mktemp")
def mktemp(call: Invocation) -> int:
    flags, names = _operands(call)
    template = names[0] if names else "tmp.XXXXXXXXXX"
    stem = template.rstrip("X")
    count = len(template) - len(stem)
    if count < 3:
        call.error(f"mktemp: too few X's in template '{template}'" if not is_busybox(call)
                   else "mktemp: Invalid argument")
        return 1
    seed = call.ctx.meter().peak + len(call.ctx.files) + int(call.now * 1000)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    suffix = ""
    for _ in range(count):
        seed = (seed * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        suffix += alphabet[(seed >> 40) % len(alphabet)]
    base = stem + suffix
    path = base if "/" in template and names else posixpath.join("/tmp", base)
    if "u" not in flags:
        fs = _fs(call)
        if "d" in flags:
            if fs is not None:
                fs.add_dir(call.shell.abspath(path), mode=0o700)
        else:
            call.ctx.files[call.shell.abspath(path)] = ""
    call.write(path + "\n")
    return 0


@command("nproc")
def nproc(call: Invocation) -> int:
    """The node's CPUs: a CPU limit is a CFS quota, not a cpuset, so nproc does not see it."""
    twin = call.ctx.twin
    node = twin.store.peek("Node", None, call.ctx.node) if twin is not None and call.ctx.node else None
    cpu = str(((node or {}).get("status") or {}).get("capacity", {}).get("cpu", "4"))
    call.write(f"{int(cpu) if cpu.isdigit() else max(1, int(cpu.rstrip('m') or 1000) // 1000)}\n")
    return 0


def _seconds(text: str) -> float | None:
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    number, unit = (text[:-1], text[-1]) if text[-1:] in units else (text, "s")
    try:
        return float(number) * units[unit]
    except ValueError:
        return None


@command("timeout")
def timeout(call: Invocation) -> Generator[Effect, None, int]:
    args = [a for a in call.args if not a.startswith("-")]
    if len(args) < 2:
        if is_busybox(call):
            call.error(BUSYBOX_BANNER + "Usage: timeout [-s SIG] [-k KILL_SECS] SECS PROG ARGS")
            return 1
        call.error("timeout: missing operand\nTry 'timeout --help' for more information."
                   if not args else f"timeout: missing operand after '{args[0]}'\n"
                                    "Try 'timeout --help' for more information.")
        return 125
    limit = _seconds(args[0])
    if limit is None:
        call.error(f"timeout: invalid time interval '{args[0]}'\nTry 'timeout --help' for more information.")
        return 125
    argv = call.args[call.args.index(args[0]) + 1:]
    sub = Shell(call.ctx, call.shell.name)
    sub.vars.update(call.shell.vars)
    sub.exported = set(call.shell.exported)
    elapsed = 0.0
    gen = sub._invoke(argv, {}, call.stdin)
    try:
        effect = next(gen)
        while True:
            if isinstance(effect, Sleep) and limit > 0 and elapsed + effect.seconds >= limit:
                yield Sleep(limit - elapsed)
                gen.close()
                return 124
            if isinstance(effect, Sleep):
                elapsed += effect.seconds
            yield effect
            effect = next(gen)
    except StopIteration as stop:
        return int(stop.value or 0)
    finally:
        sub.release()
