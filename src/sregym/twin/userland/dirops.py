"""`rm`, `rmdir`, `mkdir` and `touch` on the container's tree.

Cleaning up a runaway log, recreating a directory an app needs, or removing a bad config file the
image ships are mitigation steps, so these change the exec's tree the way the kernel would:
directories are real entries (empty ones too), `rm` refuses a directory without `-r`, `rmdir`
only empty ones, `touch` moves an existing file's mtime. The result reaches the writable layer
(`userland/layer.py`), so it is still true at the next exec. Messages and exit codes are GNU
coreutils 9.1's (C locale) in Debian-based images and BusyBox 1.36's otherwise.
"""

from __future__ import annotations

import posixpath

from sregym.twin.node.shell import Invocation, command
from sregym.twin.userland.filteropts import BUSYBOX_BANNER, is_busybox
from sregym.twin.userland.fs import ContainerFS
from sregym.twin.userland.linkedfiles import real_path
from sregym.twin.userland.mountpoints import EROFS, busy, ebusy, mounts, read_only
from sregym.twin.userland.tree import TreeView

_USAGE = {
    "rm": "Usage: rm [-irf] FILE...\n\nRemove (unlink) FILEs\n\n\t-i\tAlways prompt before removing\n"
          "\t-f\tNever prompt\n\t-R,-r\tRecurse\n",
    "rmdir": "Usage: rmdir [-p] DIRECTORY...\n\nRemove DIRECTORY if it is empty\n\n\t-p\tInclude parents\n"
             "\t--ignore-fail-on-non-empty\n",
    "mkdir": "Usage: mkdir [-m MODE] [-p] DIRECTORY...\n\nCreate DIRECTORY\n\n\t-m MODE\tMode\n"
             "\t-p\tNo error if exists; make parent directories as needed\n",
    "touch": "Usage: touch [-c] [-h] [-d DATE] [-t DATE] [-r FILE] FILE...\n\nUpdate mtime of FILEs\n\n"
             "\t-c\tDon't create files\n\t-h\tDon't follow links\n\t-d DT\tDate (YYYY-MM-DD hh:mm:ss)\n"
             "\t-t DT\tDate (YYYYMMDDhhmm[.ss])\n\t-r FILE\tUse FILE's date\n",
}
# Short options each tool takes (":" = with an argument) and its long options -> short letter.
_SHORT = {"rm": "fiIrRdv", "rmdir": "pv", "mkdir": "pvm:Z", "touch": "acfhmd:t:r:"}
_LONG = {
    "rm": {"--force": "f", "--recursive": "r", "--dir": "d", "--verbose": "v", "--interactive": "i",
           "--no-preserve-root": "N", "--preserve-root": "", "--one-file-system": ""},
    "rmdir": {"--parents": "p", "--verbose": "v", "--ignore-fail-on-non-empty": "F"},
    "mkdir": {"--parents": "p", "--verbose": "v", "--mode": "m"},
    "touch": {"--no-create": "c", "--no-dereference": "h", "--date": "d", "--reference": "r"},
}


class _Usage(Exception):
    """A bad option: the tool's usage error was written."""


def _fs(call: Invocation) -> ContainerFS | None:
    fs = call.ctx.extras.get("fs")
    return fs if isinstance(fs, ContainerFS) else None


def _usage_error(call: Invocation, message: str) -> _Usage:
    if is_busybox(call):
        call.error(f"{call.name}: {message}\n" + BUSYBOX_BANNER + _USAGE[call.name])
    else:
        call.error(f"{call.name}: {message}\nTry '{call.name} --help' for more information.")
    return _Usage()


def _parse(call: Invocation) -> tuple[dict[str, str], list[str]]:
    """Options (letter -> value, "" without one) and operands, GNU-style (options may follow
    operands; `--` ends them)."""
    short, long = _SHORT[call.name], _LONG[call.name]
    opts: dict[str, str] = {}
    names: list[str] = []
    args = list(call.args)
    while args:
        arg = args.pop(0)
        if arg == "--":
            names.extend(args)
            break
        if arg.startswith("--") and not is_busybox(call):
            key, eq, value = arg.partition("=")
            if key not in long:
                raise _usage_error(call, f"unrecognized option '{arg}'")
            letter = long[key]
            if letter and f"{letter}:" in short and not eq:
                if not args:
                    raise _usage_error(call, f"option '{key}' requires an argument")
                value = args.pop(0)
            if letter:
                opts[letter] = value
        elif arg.startswith("-") and len(arg) > 1:
            for i, letter in enumerate(arg[1:], 1):
                where = short.find(letter)
                if where < 0 or letter == ":":
                    raise _usage_error(call, f"invalid option -- '{letter}'")
                if short[where + 1:where + 2] == ":":
                    value = arg[i + 1:] or (args.pop(0) if args else None)
                    if value is None:
                        raise _usage_error(call, f"option requires an argument -- '{letter}'")
                    opts[letter] = value
                    break
                opts[letter] = ""
        else:
            names.append(arg)
    return opts, names


def _missing(call: Invocation) -> int:
    if is_busybox(call):
        call.error(BUSYBOX_BANNER + _USAGE[call.name])
    else:
        call.error(f"{call.name}: missing operand\nTry '{call.name} --help' for more information.")
    return 1


def _stamp(fs: ContainerFS, path: str, now: float) -> None:
    real = real_path(fs, path)
    node = fs.nodes.get(real) if real is not None else None
    if node is not None:
        node.mtime = now


# --------------------------------------------------------------------------------------- rm
@command("rm")
def rm(call: Invocation) -> int:
    try:
        opts, names = _parse(call)
    except _Usage:
        return 1
    force, recursive = "f" in opts, bool({"r", "R"} & opts.keys())
    if not names:
        return 0 if force else _missing(call)
    busybox = is_busybox(call)
    tree = TreeView(call) if _fs(call) is not None else None
    status = 0
    for name in names:
        full = call.shell.abspath(name)
        if tree is None:  # a plain files map (a container's own program): files only
            if call.ctx.files.pop(full, None) is None and not force:
                call.error(f"rm: can't remove '{name}': No such file or directory" if busybox
                           else f"rm: cannot remove '{name}': No such file or directory")
                status = 1
            continue
        if recursive and full == "/" and not busybox and "N" not in opts:
            call.error("rm: it is dangerous to operate recursively on '/'\n"
                       "rm: use --no-preserve-root to override this failsafe")
            status = 1
            continue
        real = tree.resolve(full, follow=False)
        entry = tree.entries.get(real) if real is not None else None
        if entry is None:
            if not force:
                call.error(f"rm: can't remove '{name}': No such file or directory" if busybox
                           else f"rm: cannot remove '{name}': No such file or directory")
                status = 1
            continue
        assert real is not None
        cannot = "rm: can't remove '{}': {}" if busybox else "rm: cannot remove '{}': {}"
        if entry.kind == "dir":
            if not recursive and not ("d" in opts and not busybox):
                call.error(f"rm: '{name}' is a directory" if busybox
                           else f"rm: cannot remove '{name}': Is a directory")
                status = 1
                continue
            if not recursive and tree.children(real):
                call.error(f"rm: cannot remove '{name}': Directory not empty")
                status = 1
                continue
        if read_only(call.ctx, real):
            call.error(cannot.format(name, EROFS))
            status = 1
            continue
        if busy(call.ctx, real):  # a mount point: what is in it may go, never the mount itself
            if entry.kind == "dir" and mounts(call.ctx)[real]:
                for child in tree.children(real):
                    call.error(cannot.format(posixpath.join(name, child), EROFS))
            else:
                for child in list(tree.children(real)):
                    tree.remove(posixpath.join(real, child))
                call.error(cannot.format(name, ebusy(call.ctx)))
            status = 1
            continue
        if "v" in opts and entry.kind == "dir":
            for sub, is_dir in [*_walk(tree, real, name), (name, True)]:
                call.write(f"removed '{sub}'\n" if not is_dir else
                           f"removed directory: '{sub}'\n" if busybox else f"removed directory '{sub}'\n")
        elif "v" in opts:
            call.write(f"removed '{name}'\n")
        tree.remove(real)
    return status


def _walk(tree: TreeView, real: str, shown: str) -> list[tuple[str, bool]]:
    """What `rm -rv` reports before the directory itself: (name, is a directory), depth first."""
    out: list[tuple[str, bool]] = []
    for child in tree.children(real):
        path, name = posixpath.join(real, child), posixpath.join(shown, child)
        if tree.entries[path].kind == "dir":
            out.extend(_walk(tree, path, name))
            out.append((name, True))
        else:
            out.append((name, False))
    return out


# ------------------------------------------------------------------------------------ rmdir
@command("rmdir")
def rmdir(call: Invocation) -> int:
    try:
        opts, names = _parse(call)
    except _Usage:
        return 1
    if not names:
        return _missing(call)
    busybox = is_busybox(call)
    fs = _fs(call)
    status = 0
    for name in names:
        chain = [name]
        if "p" in opts:
            parent = name.rstrip("/")
            while "/" in parent.strip("/"):
                parent = posixpath.dirname(parent.rstrip("/"))
                chain.append(parent)
        for each in chain:
            tree = TreeView(call)
            real = tree.resolve(call.shell.abspath(each), follow=False)
            entry = tree.entries.get(real) if real is not None else None
            problem = ("No such file or directory" if entry is None or real is None
                       else "Not a directory" if entry.kind != "dir"
                       else EROFS if read_only(call.ctx, real) else ebusy(call.ctx) if busy(call.ctx, real)
                       else "Directory not empty" if tree.children(real) else "")
            if problem:
                if problem != "Directory not empty" or "F" not in opts:
                    call.error(f"rmdir: '{each}': {problem}" if busybox
                               else f"rmdir: failed to remove '{each}': {problem}")
                    status = 1
                break
            if "v" in opts:
                call.write(f"rmdir: removing directory, '{each}'\n")
            if real is not None and fs is not None:
                tree.remove(real)
    return status


# ------------------------------------------------------------------------------------ mkdir
def _octal_mode(text: str) -> int | None:
    return int(text, 8) & 0o7777 if text and all(c in "01234567" for c in text) else None


@command("mkdir")
def mkdir(call: Invocation) -> int:
    try:
        opts, names = _parse(call)
    except _Usage:
        return 1
    if not names:
        return _missing(call)
    busybox = is_busybox(call)
    mode = 0o755
    if "m" in opts:
        parsed = _octal_mode(opts["m"])
        if parsed is None and not opts["m"].strip("ugoa+-=rwxXst,"):
            parsed = 0o755
        if parsed is None:
            call.error(f"mkdir: invalid mode '{opts['m']}'")
            return 1
        mode = parsed
    fs = _fs(call)
    if fs is None:
        return 0  # a plain files map: directories exist implicitly below its files
    status = 0
    for name in names:
        steps = [name]
        if "p" in opts:
            pieces = name.split("/")
            steps = ["/".join(pieces[:i]) for i in range(1, len(pieces) + 1)]
            steps = [s for s in steps if s.strip("/") and not s.endswith("/")] or [name]
        for i, step in enumerate(steps):
            last = i == len(steps) - 1
            problem = _create_dir(call, fs, step, mode if last else 0o755, parents="p" in opts,
                                  last=last, verbose="v" in opts)
            if problem:
                call.error(f"mkdir: can't create directory '{step}': {problem}" if busybox
                           else f"mkdir: cannot create directory '{step}': {problem}")
                status = 1
                break
    return status


def _create_dir(call: Invocation, fs: ContainerFS, name: str, mode: int, *, parents: bool, last: bool,
                verbose: bool) -> str:
    """Make one directory; the errno text when it cannot be made ("" on success)."""
    tree = TreeView(call)
    full = call.shell.abspath(name)
    entry = tree.get(full, follow=True)
    if entry is not None or tree.get(full, follow=False) is not None:
        if parents and entry is not None and entry.kind == "dir":
            return ""
        # `mkdir -p f/x` with a file `f` fails on `f` itself: it is in the way of a directory.
        return "Not a directory" if parents and not last else "File exists"
    parent = tree.get(posixpath.dirname(full))
    if parent is None:
        return "No such file or directory"
    if parent.kind != "dir":
        return "Not a directory"
    if read_only(call.ctx, real_path(fs, full) or full):
        return EROFS
    fs.add_dir(full, mode=mode)
    _stamp(fs, full, call.now)
    if verbose:
        call.write(f"mkdir: created directory '{name}'\n")
    return ""


# ------------------------------------------------------------------------------------ touch
@command("touch")
def touch(call: Invocation) -> int:
    try:
        opts, names = _parse(call)
    except _Usage:
        return 1
    if not names:
        if is_busybox(call):
            return _missing(call)
        call.error("touch: missing file operand\nTry 'touch --help' for more information.")
        return 1
    busybox = is_busybox(call)
    fs = _fs(call)
    when = _touch_time(call, opts)
    if when is None:
        return 1
    status = 0
    for name in names:
        full = call.shell.abspath(name)
        if fs is None:
            if "c" not in opts:
                call.ctx.files.setdefault(full, "")
            continue
        tree = TreeView(call)
        entry = tree.get(full)
        if (entry is not None or "c" not in opts) and read_only(call.ctx, real_path(fs, full) or full):
            if entry is not None or tree.get(posixpath.dirname(full)) is not None:
                call.error(f"touch: {name}: {EROFS}" if busybox else f"touch: cannot touch '{name}': {EROFS}")
                status = 1
                continue
        if entry is not None:
            real = tree.resolve(full) or full
            if real not in fs.nodes and entry.kind == "file":
                fs.add_file(real, call.ctx.files.get(real, ""))
            _stamp(fs, real, when)
            continue
        if "c" in opts:
            continue
        parent = tree.get(posixpath.dirname(full))
        if parent is None or parent.kind != "dir":
            problem = "No such file or directory" if parent is None else "Not a directory"
            call.error(f"touch: {name}: {problem}" if busybox else f"touch: cannot touch '{name}': {problem}")
            status = 1
            continue
        call.ctx.files[full] = ""
        if when != call.now:
            fs.add_file(full, "")
            _stamp(fs, full, when)
    return status


def _touch_time(call: Invocation, opts: dict[str, str]) -> float | None:
    """The mtime `touch` sets: now, `-d STRING`, `-t [[CC]YY]MMDDhhmm[.ss]` or `-r FILE`'s;
    None after reporting an invalid one."""
    from datetime import UTC, datetime

    from sregym.twin.userland.clock import parse_date

    busybox = is_busybox(call)
    if "r" in opts:
        ref = TreeView(call).get(call.shell.abspath(opts["r"]))
        if ref is None:
            call.error(f"touch: {opts['r']}: No such file or directory" if busybox else
                       f"touch: failed to get attributes of '{opts['r']}': No such file or directory")
            return None
        return ref.mtime
    text = opts.get("d", opts.get("t"))
    if text is None:
        return call.now
    when: float | None
    if "d" in opts:
        when = parse_date(text, call.now)
    else:
        digits, _, seconds = text.partition(".")
        now = datetime.fromtimestamp(call.now, tz=UTC)
        when = None
        if digits.isdigit() and len(digits) in (8, 10, 12) and (not seconds or (seconds.isdigit() and len(seconds) == 2)):
            year = now.year if len(digits) == 8 else int(digits[:-8]) if len(digits) == 12 else \
                (1900 if int(digits[:2]) >= 69 else 2000) + int(digits[:2])
            try:
                when = datetime(year, int(digits[-8:-6]), int(digits[-6:-4]), int(digits[-4:-2]), int(digits[-2:]),
                                int(seconds or 0), tzinfo=UTC).timestamp()
            except ValueError:
                when = None
    if when is None:
        call.error(f"touch: invalid date '{text}'" if busybox else f"touch: invalid date format '{text}'")
    return when
