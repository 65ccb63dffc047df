"""`tee [-a] FILE...`: GNU coreutils' and BusyBox's, writing into the exec's tree.

Standard input goes to standard output and to every FILE (truncated first, appended with `-a`).
A FILE that cannot be opened is reported (`tee: x/y: No such file or directory`, `Is a
directory`) and skipped, the others are still written, and the exit code is 1; a full
filesystem reports ENOSPC the same way. BusyBox's tee takes `-` for standard output.
"""

from __future__ import annotations

from sregym.twin.node.shell import Invocation, command
from sregym.twin.userland.filteropts import Spec, UsageError, is_busybox, parse, usage_error

_ERRNO_TEXT = {"ENOENT": "No such file or directory", "ENOTDIR": "Not a directory", "EISDIR": "Is a directory",
               "EROFS": "Read-only file system", "ELOOP": "Too many levels of symbolic links"}
_GNU = Spec("tee", "aip", {"append": "a", "ignore-interrupts": "i", "output-error": "p", "output-error=": "p"})
_BUSYBOX = Spec("tee", "ai", usage="tee [-ai] [FILE]...\n\nCopy stdin to each FILE, and also to stdout\n\n"
                                   "\t-a\tAppend to the given FILEs, don't overwrite\n"
                                   "\t-i\tIgnore interrupt signals (SIGINT)")


@command("tee")
def tee(call: Invocation) -> int:
    busybox = is_busybox(call)
    spec = _BUSYBOX if busybox else _GNU
    try:
        options, names = parse(spec, list(call.args))
    except UsageError as exc:
        return usage_error(call, spec, str(exc))
    append = any(key == "a" for key, _value in options)
    text = call.stdin
    check = call.ctx.extras.get("open_write")
    status = 0
    targets: list[str] = []
    for name in names:
        if busybox and name == "-":
            continue
        path = call.shell.abspath(name)
        problem = check(path) if check is not None else None
        if problem is None and path in call.ctx.directories():
            problem = "EISDIR"
        if problem:
            call.error(f"tee: {name}: {_ERRNO_TEXT.get(problem, 'No such file or directory')}")
            status = 1
            continue
        if path in targets:  # the same file named twice: opened twice, the second open appends
            append_this = True
        else:
            append_this = append
            targets.append(path)
        if not call.shell.write_file(path, text, append=append_this):
            call.error(f"tee: {name}: No space left on device")
            status = 1
    call.write(text)
    if busybox:
        call.write(text * sum(1 for name in names if name == "-"))
    return status
