"""Writing to disk from a container: `dd`, `fallocate`, shell redirections, and a full filesystem.

Bytes a container writes land on a node disk: the writable layer and emptyDir volumes on the
node's root filesystem (the kubelet's nodefs, `sda1`), PersistentVolumes and hostPaths on the
data disk (`sdb1`) — `chaos.nodeos` keeps their usage. A write that does not fit fails with
ENOSPC exactly as the tools report it (`dd: error writing 'x': No space left on device` after the
blocks that fit, `fallocate: fallocate failed: No space left on device`), and a filesystem out of
inodes refuses new files the same way. What fits is taken from the disk, so filling a volume from
a shell fills the node (df, node_filesystem_avail_bytes, the kubelet's DiskPressure).

The twin keeps file contents in memory, so large files are stored truncated (the disk usage is
what counts); `claim_space(ctx, path, nbytes)` is the check the shell's redirections use.
"""

from __future__ import annotations

from typing import Any

from sregym.twin.node.shell import Invocation, command

STORED_CAP = 64 << 10  # bytes of a large file's content kept in memory
SIZE_SUFFIXES = {"": 1, "c": 1, "w": 2, "b": 512, "k": 1024, "K": 1024, "M": 1 << 20, "G": 1 << 30,
                 "T": 1 << 40, "kB": 1000, "KB": 1000, "MB": 1000**2, "GB": 1000**3, "KiB": 1024,
                 "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}
DD_BYTES_PER_S = 1.5e9


def _disk(ctx: Any, path: str) -> Any:
    twin, pod = ctx.twin, ctx.pod
    if twin is None or pod is None or not ctx.node:
        return None
    from sregym.twin.chaos.nodeos import nodeos_of

    nodeos = nodeos_of(twin)
    try:
        return nodeos.disk(ctx.node, nodeos.volume_device(pod, path, ctx.container))
    except KeyError:
        return None


def claim_space(ctx: Any, path: str, nbytes: int, *, new_file: bool = False) -> int:
    """Take up to `nbytes` on the disk behind `path`; returns how many fit (all without a disk
    model). A new file needs an inode."""
    disk = _disk(ctx, path)
    if disk is None:
        return nbytes
    if new_file and disk.inodes_free <= 0:
        return 0
    fit = max(0, min(int(nbytes), disk.avail_bytes))
    disk.used_bytes += fit
    if new_file and fit >= 0:
        disk.inodes_used += 1
    _remember(ctx, path, disk, fit)
    return fit


def _remember(ctx: Any, path: str, disk: Any, nbytes: int) -> None:
    """Record who holds the space, so `rm` or the pod's deletion frees it (`chaos.diskio`)."""
    from sregym.twin.chaos.diskio import diskio_of

    uid = str((ctx.pod.get("metadata") or {}).get("uid", ""))
    diskio_of(ctx.twin).claim(uid, ctx.container, path, ctx.node, disk.device, nbytes)


def _give_back(ctx: Any, path: str, nbytes: int) -> None:
    disk = _disk(ctx, path)
    if disk is None or nbytes <= 0:
        return
    disk.used_bytes -= nbytes
    _remember(ctx, path, disk, -nbytes)


def shell_claim(ctx: Any) -> Any:
    """The hook the shell's redirections call (`ctx.extras["claim_space"]`): True if it fits."""
    def claim(path: str, nbytes: int) -> bool:
        new = path not in ctx.files
        fit = claim_space(ctx, path, nbytes, new_file=new)
        if fit < nbytes:
            _give_back(ctx, path, fit)
            return False
        return True
    return claim


def _size(text: str) -> int | None:
    digits = text.rstrip("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    suffix = text[len(digits):]
    if not digits.isdigit() or suffix not in SIZE_SUFFIXES:
        return None
    return int(digits) * SIZE_SUFFIXES[suffix]


def _si(n: float) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            v = n / scale
            return f"{v:.1f} {unit}" if v < 10 else f"{round(v)} {unit}"
    return f"{int(n)} B"


def _iec(n: float) -> str:
    for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            v = n / scale
            return f"{v:.1f} {unit}" if v < 10 else f"{round(v)} {unit}"
    return f"{int(n)} B"


def _abspath(call: Invocation, path: str) -> str:
    import posixpath

    return posixpath.normpath(path if path.startswith("/") else posixpath.join(call.ctx.cwd or "/", path))


def _store(call: Invocation, path: str, nbytes: int, *, append: bool = False) -> None:
    old = call.ctx.files.get(path, "") if append else ""
    room = max(0, STORED_CAP - len(old))
    call.ctx.files[path] = old + "\0" * min(room, nbytes)


@command("dd")
def dd(call: Invocation) -> int:
    """One `dd`: a copy into memory (stdout, /dev/null, a tmpfs such as /dev/shm) is `ddcopy`'s,
    a copy onto a file on disk takes the disk's space here."""
    from sregym.twin.userland.ddcopy import dd_to_memory
    from sregym.twin.userland.shm import mount_of

    target = next((a[3:] for a in call.args if a.startswith("of=")), None)
    to_disk = target not in (None, "/dev/null") and \
        mount_of(call.ctx.extras.get("tmpfs") or {}, _abspath(call, target)) is None
    return dd_to_disk(call) if to_disk else dd_to_memory(call)


def dd_to_disk(call: Invocation) -> int:
    ops: dict[str, str] = {}
    for arg in call.args:
        key, eq, value = arg.partition("=")
        if arg.startswith("-") or not eq or key not in ("if", "of", "bs", "count", "ibs", "obs", "seek", "skip",
                                                           "conv", "oflag", "iflag", "status"):
            if arg.startswith("--"):
                call.error(f"dd: unrecognized option '{arg}'\nTry 'dd --help' for more information.\n")
            else:
                call.error(f"dd: unrecognized operand '{arg}'\nTry 'dd --help' for more information.\n")
            return 1
        ops[key] = value
    bs = _size(ops.get("bs") or ops.get("obs") or "512")
    count_text = ops.get("count")
    count = _size(count_text) if count_text is not None else None
    if bs is None or bs == 0 or (count_text is not None and count is None):
        bad = ops.get("bs") if bs is None or bs == 0 else count_text
        call.error(f"dd: invalid number: '{bad}'\n")
        return 1
    source = ops.get("if")
    if source is None:
        data = call.stdin.encode()
        total = len(data) if count is None else min(len(data), bs * count)
    elif source in ("/dev/zero", "/dev/urandom", "/dev/random"):
        if count is None:
            count = 1 << 20  # an unbounded copy runs until the disk is full (or for ever)
        total = bs * count
    elif source in call.ctx.files:
        size = len(call.ctx.files[source].encode())
        total = size if count is None else min(size, bs * count)
    else:
        call.error(f"dd: failed to open '{source}': No such file or directory\n")
        return 1
    target = ops.get("of")
    written, failed = total, False
    if target is not None and target != "/dev/null":
        path = _abspath(call, target)
        written = claim_space(call.ctx, path, total, new_file=path not in call.ctx.files)
        if written < total:
            fit, written = written, written // bs * bs  # a partial block is not written either
            _give_back(call.ctx, path, fit - written)
            failed = True
        _store(call, path, written)
    elif target is None:
        call.write("\0" * min(written, STORED_CAP))
    full_out, part_out = divmod(written, bs)
    if failed:
        call.error(f"dd: error writing '{target}': No space left on device\n")
        full_in, part_in = full_out + 1, 0  # the block that did not fit was read
    else:
        full_in, part_in = total // bs, 1 if total % bs else 0
    if ops.get("status") != "none":
        seconds = max(written / DD_BYTES_PER_S, 1e-5)
        call.error(f"{full_in}+{part_in} records in\n{full_out}+{1 if part_out else 0} records out\n")
        if call.ctx.shell_flavour == "ash":  # BusyBox: "(1.0MB) copied, 0.001 seconds, 1.0GB/s"
            call.error(f"{written} bytes ({_iec(written).replace(' ', '').replace('i', '')}) copied, "
                       f"{seconds:.6f} seconds, {_iec(written / seconds).replace(' ', '').replace('i', '')}/s\n")
        elif written >= 1000:
            call.error(f"{written} bytes ({_si(written)}, {_iec(written)}) copied, {seconds:.6g} s, "
                       f"{_si(written / seconds)}/s\n")
        else:
            call.error(f"{written} bytes copied, {seconds:.6g} s, {_si(written / seconds)}/s\n")
    return 1 if failed else 0


@command("fallocate")
def fallocate(call: Invocation) -> int:
    length, files, args = None, [], list(call.args)
    while args:
        arg = args.pop(0)
        if arg in ("-l", "--length") and args:
            length = _size(args.pop(0))
        elif arg.startswith("--length="):
            length = _size(arg.split("=", 1)[1])
        elif arg.startswith("-l") and len(arg) > 2:
            length = _size(arg[2:])
        elif arg.startswith("-"):
            call.error(f"fallocate: invalid option -- '{arg.lstrip('-')[:1]}'\n"
                       "Try 'fallocate --help' for more information.\n")
            return 1
        else:
            files.append(arg)
    if not files:
        call.error("fallocate: no filename specified\nTry 'fallocate --help' for more information.\n")
        return 1
    if length is None or length <= 0:
        call.error("fallocate: no length argument specified\n" if length is None else
                   "fallocate: invalid length value specified\n")
        return 1
    path = _abspath(call, files[0])
    new = path not in call.ctx.files
    fit = claim_space(call.ctx, path, length, new_file=new)
    if fit < length:
        _give_back(call.ctx, path, fit)  # fallocate is all or nothing
        if new:
            _store(call, path, 0)  # open(O_CREAT) succeeded before the allocation failed
        call.error("fallocate: fallocate failed: No space left on device\n")
        return 1
    _store(call, path, length)
    return 0
