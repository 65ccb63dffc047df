"""`tar`: what `kubectl cp` runs in the container, writing and reading real tar archives.

`kubectl cp POD:/path /local` execs `tar cf - /path` and untars the exec's stdout on the client;
`kubectl cp /local POD:/dir` tars locally and streams it into `tar xmf - -C /dir` (after a `test
-d` probe of the destination). The archive is a real one (Python's `tarfile` writes the format:
GNU tar's in Debian-based images, ustar from the BusyBox applet), so the client's untar sees
genuine headers, modes and mtimes. Images without a userland (distroless) have no `tar`, and the
exec fails with containerd's `executable file not found in $PATH` before this runs.

Bytes cross the shell as text: an archive is decoded as UTF-8 with `surrogateescape`, so every
byte survives the trip through the exec channel and back; a file extracted from one keeps its
text (the twin's files are text; undecodable bytes are kept the same way).

Messages follow the flavour: GNU tar's (`tar: /nope: Cannot stat: No such file or directory`,
`tar: Exiting with failure status due to previous errors`, exit 2) in Debian-based images and
BusyBox's in busybox/alpine ones (exit 1). Only the modes kubectl and an engineer use are
modelled: create (`c`), extract (`x`), list (`t`), with `f -`/`f FILE`, `-C DIR` and `v`; `m`
and the ownership/permission options kubectl passes have nothing to change here.
"""

from __future__ import annotations

import gzip
import io
import posixpath
import tarfile
from dataclasses import dataclass, field

from sregym.twin.node.shell import Invocation, command
from sregym.twin.userland.filteropts import BUSYBOX_BANNER, is_busybox

GNU_FAILURE = "tar: Exiting with failure status due to previous errors"


def to_text(data: bytes) -> str:
    """Archive bytes as shell text; `to_bytes` gives them back unchanged."""
    return data.decode("utf-8", errors="surrogateescape")


def to_bytes(text: str) -> bytes:
    return text.encode("utf-8", errors="surrogateescape")


@dataclass
class TarArgs:
    mode: str = ""  # "c" | "x" | "t"
    archive: str | None = None
    directory: str | None = None
    verbose: bool = False
    members: list[str] = field(default_factory=list)
    error: str = ""
    gzip: bool = False
    version: bool = False


def parse_args(args: list[str]) -> TarArgs:
    """Old-style bundled flags (`cf`, `xmf`) in the first word, `-xmf`, long options, `-C DIR`."""
    out = TarArgs()
    words = list(args)
    if words and not words[0].startswith("-"):
        words[0] = "-" + words[0]
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if word == "--":
            out.members.extend(words[index:])
            break
        if word.startswith("--"):
            name, _, value = word[2:].partition("=")
            if name in ("create", "extract", "get", "list"):
                out.mode = {"create": "c", "list": "t"}.get(name, "x")
            elif name == "file":
                out.archive = value or (words[index] if index < len(words) else None)
                index += 0 if value else 1
            elif name == "directory":
                out.directory = value or (words[index] if index < len(words) else None)
                index += 0 if value else 1
            elif name == "verbose":
                out.verbose = True
            elif name in ("gzip", "gunzip", "ungzip"):
                out.gzip = True
            elif name == "version":
                out.version = True
            elif name not in _LONG_OPTIONS:
                out.error = f"unrecognized option '{word}'"
            continue  # --no-same-owner, --no-same-permissions, --touch ...: no effect here
        if word.startswith("-") and len(word) > 1:
            for pos, flag in enumerate(word[1:]):
                if flag in "cxt":
                    out.mode = flag
                elif flag == "v":
                    out.verbose = True
                elif flag == "z":
                    out.gzip = True
                elif flag in "fC":
                    rest = word[pos + 2:]
                    value = rest if rest else (words[index] if index < len(words) else None)
                    if not rest:
                        index += 1
                    if flag == "f":
                        out.archive = value
                    else:
                        out.directory = value
                    break
                elif flag not in _SHORT_FLAGS:
                    out.error = f"invalid option -- '{flag}'"
                    break
            continue
        out.members.append(word)
    return out


# Options kubectl and engineers pass that change nothing in the twin's archives.
_LONG_OPTIONS = {"no-same-owner", "no-same-permissions", "touch", "same-owner", "preserve-permissions",
                 "same-permissions", "numeric-owner", "overwrite", "keep-old-files", "warning",
                 "exclude", "strip-components", "absolute-names", "dereference"}
_SHORT_FLAGS = set("mopPhkOS")
GNU_VERSION = ("tar (GNU tar) 1.34\nCopyright (C) 2021 Free Software Foundation, Inc.\n"
               "License GPLv3+: GNU GPL version 3 or later <https://gnu.org/licenses/gpl.html>.\n"
               "This is free software: you are free to change and redistribute it.\n"
               "There is NO WARRANTY, to the extent permitted by law.\n\n"
               "Written by John Gilmore and Jay Fenlason.\n")
BUSYBOX_USAGE = (BUSYBOX_BANNER + "Usage: tar c|x|t [-ZzJjahmvokO] [-f TARFILE] [-C DIR] [-T FILE] [-X FILE] [LONGOPT]... "
                 "[FILE]...\n\nCreate, extract, or list files from a tar file")
GNU_USAGE_EXIT = 64  # tar's exit status for a command-line error


@command("tar")
def tar(call: Invocation) -> int:
    opts = parse_args(call.args)
    busybox = is_busybox(call)
    if opts.version and not busybox:
        call.write(GNU_VERSION)
        return 0
    if opts.error or (opts.version and busybox):
        if busybox:
            call.error(f"tar: {opts.error or 'unrecognized option ' + repr('--version')}")
            call.error(BUSYBOX_USAGE)
            return 1
        call.error(f"tar: {opts.error}\nTry 'tar --help' or 'tar --usage' for more information.")
        return GNU_USAGE_EXIT
    if not opts.mode:
        if busybox:
            call.error("tar: need at least one of -c, -x, -t")
            return 1
        call.error("tar: You must specify one of the '-Acdtrux', '--delete' or '--test-label' options\n"
                   "Try 'tar --help' or 'tar --usage' for more information.")
        return 2
    if opts.directory is not None:
        where = call.shell.abspath(opts.directory)
        if where not in call.ctx.directories():
            if busybox:
                call.error(f"tar: can't change directory to '{opts.directory}': No such file or directory")
                return 1
            call.error(f"tar: {opts.directory}: Cannot open: No such file or directory")
            call.error("tar: Error is not recoverable: exiting now")
            return 2
    if opts.mode == "c":
        return _create(call, opts, busybox)
    return _read(call, opts, busybox)


# ----------------------------------------------------------------------------------- create
def _create(call: Invocation, opts: TarArgs, busybox: bool) -> int:
    if not opts.members:
        call.error("tar: empty archive" if busybox else "tar: Cowardly refusing to create an empty archive\n"
                   "Try 'tar --help' or 'tar --usage' for more information.")
        return 1 if busybox else 2
    base = call.shell.abspath(opts.directory) if opts.directory else call.ctx.cwd
    files, dirs = call.ctx.files, call.ctx.directories()
    buffer = io.BytesIO()
    failed = False
    warned = False
    mtime = int(call.now)
    fmt = tarfile.USTAR_FORMAT if busybox else tarfile.GNU_FORMAT
    with tarfile.open(fileobj=buffer, mode="w", format=fmt) as archive:
        for member in opts.members:
            path = posixpath.normpath(posixpath.join(base, member))
            name = member.rstrip("/") or member
            if name.startswith("/"):
                name = name.lstrip("/")
                if not warned:
                    call.error("tar: removing leading '/' from member names" if busybox
                               else "tar: Removing leading `/' from member names")
                    warned = True
            if path in files:
                _add_file(archive, name, files[path], mtime)
            elif path in dirs:
                _add_tree(archive, name, path, files, dirs, mtime)
            else:
                failed = True
                call.error(f"tar: {member}: No such file or directory" if busybox
                           else f"tar: {member}: Cannot stat: No such file or directory")
    archive_bytes = buffer.getvalue()
    if opts.gzip:  # stamped with the simulated clock, so archives stay deterministic
        archive_bytes = gzip.compress(archive_bytes, mtime=mtime)
    if opts.archive in (None, "-"):
        call.write(to_text(archive_bytes))
    else:
        call.ctx.files[call.shell.abspath(opts.archive)] = to_text(archive_bytes)
    if opts.verbose:
        with tarfile.open(fileobj=io.BytesIO(archive_bytes)) as written:
            for member in written.getnames():
                call.error(member)
    if failed:
        if busybox:
            return 1
        call.error(GNU_FAILURE)
        return 2
    return 0


def _add_file(archive: tarfile.TarFile, name: str, content: str, mtime: int) -> None:
    data = to_bytes(content)
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = len(data), 0o644, mtime
    info.uname = info.gname = "root"
    archive.addfile(info, io.BytesIO(data))


def _add_tree(archive: tarfile.TarFile, name: str, path: str, files: dict[str, str],
              dirs: set[str], mtime: int) -> None:
    """A directory and everything below it, parents before children, in name order."""
    info = tarfile.TarInfo(name + "/" if name else ".")
    info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, mtime
    info.uname = info.gname = "root"
    archive.addfile(info)
    prefix = path.rstrip("/") + "/"
    below = sorted({p for p in (*files, *dirs) if p.startswith(prefix)})
    for entry in below:
        member = (name + "/" if name else "") + entry[len(prefix):]
        if entry in files:
            _add_file(archive, member, files[entry], mtime)
        else:
            sub = tarfile.TarInfo(member + "/")
            sub.type, sub.mode, sub.mtime = tarfile.DIRTYPE, 0o755, mtime
            sub.uname = sub.gname = "root"
            archive.addfile(sub)


# ---------------------------------------------------------------------------- extract / list
def _read(call: Invocation, opts: TarArgs, busybox: bool) -> int:
    if opts.archive in (None, "-"):
        data = to_bytes(call.stdin)
    else:
        content = call.read_file(opts.archive)
        if content is None:
            if busybox:
                call.error(f"tar: can't open '{opts.archive}': No such file or directory")
                return 1
            call.error(f"tar: {opts.archive}: Cannot open: No such file or directory")
            call.error("tar: Error is not recoverable: exiting now")
            return 2
        data = to_bytes(content)
    if not data:
        if busybox:
            call.error("tar: short read")
            return 1
        call.error("tar: This does not look like a tar archive")
        call.error(GNU_FAILURE)
        return 2
    try:
        archive = tarfile.open(fileobj=io.BytesIO(data), mode="r:*")  # noqa: SIM115 - read below
        members = archive.getmembers()
    except (tarfile.TarError, EOFError):
        if busybox:
            call.error("tar: invalid tar magic")
            return 1
        call.error("tar: This does not look like a tar archive")
        call.error("tar: Skipping to next header")
        call.error(GNU_FAILURE)
        return 2
    base = call.shell.abspath(opts.directory) if opts.directory else call.ctx.cwd
    for member in members:
        if opts.mode == "t" or opts.verbose:
            (call.write if opts.mode == "t" else call.error)(member.name + ("\n" if opts.mode == "t" else ""))
        if opts.mode != "x" or not member.isfile():
            continue
        if opts.members and not any(member.name == m or member.name.startswith(m.rstrip("/") + "/")
                                    for m in opts.members):
            continue
        target = posixpath.normpath(posixpath.join(base, member.name.lstrip("/")))
        handle = archive.extractfile(member)
        call.ctx.files[target] = to_text(handle.read() if handle is not None else b"")
    return 0
