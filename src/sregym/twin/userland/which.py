"""`which`: Debian's (debianutils) and BusyBox's, answering from the image's executables.

Both print one path per found name and exit 1 if any name was not found, with no message.
`-a` lists every match on PATH: in a merged-/usr Debian image `/usr/bin/ls` is `/bin/ls` too.
"""

from __future__ import annotations

from sregym.twin.node.shell import Invocation, command
from sregym.twin.node.shell.describe import executable_path
from sregym.twin.userland.filteropts import BUSYBOX_BANNER, is_busybox

_DEBIAN_USAGE = "Usage: /usr/bin/which [-a] args"
_MERGED = {"/usr/bin/": "/bin/", "/usr/sbin/": "/sbin/"}


@command("which")
def which(call: Invocation) -> int:
    busybox = is_busybox(call)
    every = False
    args = list(call.args)
    while args and args[0].startswith("-") and args[0] != "-":
        flags = args.pop(0)[1:]
        if flags == "-":
            break
        for flag in flags:
            if flag == "a":
                every = True
            elif busybox:
                call.error(f"which: invalid option -- '{flag}'")
                call.error(BUSYBOX_BANNER + "Usage: which [-a] COMMAND...\n\nLocate COMMAND\n\n"
                           "\t-a\tShow all matches")
                return 1
            else:
                call.error(f"Illegal option -{flag}")
                call.error(_DEBIAN_USAGE)
                return 2
    names = args
    if not names:
        if busybox:
            call.error(BUSYBOX_BANNER + "Usage: which [-a] COMMAND...\n\nLocate COMMAND\n\n\t-a\tShow all matches")
        return 1
    status = 0
    for name in names:
        path = executable_path(call.ctx, name, call.shell.exported_env().get("PATH"))
        if path is None:
            status = 1
            continue
        call.write(path + "\n")
        if every and not busybox:
            for prefix, alias in _MERGED.items():
                if path.startswith(prefix):
                    call.write(alias + path[len(prefix):] + "\n")
    return status
