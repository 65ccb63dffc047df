"""`gzip`, `gunzip`, `zcat`: GNU gzip 1.12 in Debian-based images, BusyBox's applets otherwise.

Real gzip streams (Python's `gzip` writes the format) so that an archive made here opens
anywhere; bytes cross the shell as surrogate-escaped text (see `archive.py`). The header's
mtime is the simulated clock's, never the host's, so same-seed runs write the same bytes.
Files are replaced as gzip does (`f` -> `f.gz`, the original removed unless `-k`); `-c` and
stdin write to stdout. Messages and exit codes follow each implementation.
"""

from __future__ import annotations

import gzip as gzip_format
import zlib

from sregym.twin.node.shell import Invocation, command
from sregym.twin.userland.archive import to_bytes, to_text
from sregym.twin.userland.filteropts import BUSYBOX_BANNER, is_busybox
from sregym.twin.userland.tree import remove_file

GNU_VERSION = ("gzip 1.12\nCopyright (C) 2018 Free Software Foundation, Inc.\n"
               "Copyright (C) 1993 Jean-loup Gailly.\n"
               "This is free software.  You may redistribute copies of it under the terms of\n"
               "the GNU General Public License <https://www.gnu.org/licenses/gpl.html>.\n"
               "There is NO WARRANTY, to the extent permitted by law.\n\nWritten by Jean-loup Gailly.\n")
_FLAGS = set("cdfkqvnNrt123456789")


@command("gzip", "gunzip", "zcat")
def gzip(call: Invocation) -> int:
    busybox = is_busybox(call)
    name = call.name
    busybox_usage = BUSYBOX_BANNER + f"Usage: {name} [-cfkdt{'123456789' if name == 'gzip' else ''}] [FILE]..."
    decompress, to_stdout, keep, test = name in ("gunzip", "zcat"), name == "zcat", False, False
    files: list[str] = []
    for arg in call.args:
        if arg == "--version" and not busybox:
            call.write(GNU_VERSION)
            return 0
        if arg in ("--stdout", "--to-stdout"):
            to_stdout = True
        elif arg in ("--decompress", "--uncompress"):
            decompress = True
        elif arg == "--keep":
            keep = True
        elif arg in ("--force", "--quiet", "--verbose", "--best", "--fast", "--no-name", "--name"):
            continue
        elif arg.startswith("--"):
            call.error(f"{name}: unrecognized option '{arg}'" + (
                f"\nTry `{name} --help' for more information." if not busybox else
                "\n" + busybox_usage))
            return 1
        elif arg.startswith("-") and arg != "-":
            for flag in arg[1:]:
                if flag not in _FLAGS or (busybox and flag in "vnNr"):
                    if busybox:
                        call.error(f"{name}: invalid option -- '{flag}'")
                        call.error(busybox_usage)
                        return 1
                    call.error(f"{name}: invalid option -- '{flag}'\nTry `{name} --help' for more information.")
                    return 1
                to_stdout |= flag == "c"
                decompress |= flag == "d"
                keep |= flag == "k"
                test |= flag == "t"
        else:
            files.append(arg)
    status = 0
    for path in files or ["-"]:
        if path == "-":
            data = to_bytes(call.stdin)
        else:
            content = call.read_file(path)
            if content is None:
                call.error(f"{name}: can't open '{path}': No such file or directory" if busybox
                           else f"{name}: {path}: No such file or directory")
                status = 1
                continue
            data = to_bytes(content)
        if decompress or test:
            try:
                out = gzip_format.decompress(data) if data else b""
            except (OSError, EOFError, zlib.error):
                if busybox:
                    call.error(f"{name}: invalid magic")
                else:
                    call.error(f"\n{name}: {'stdin' if path == '-' else path}: not in gzip format")
                status = 1
                continue
            if test:
                continue
            target = None if path == "-" or to_stdout else path.removesuffix(".gz").removesuffix(".tgz")
            if target == path:
                call.error(f"{name}: {path}: unknown suffix -- ignored")
                status = 2 if not busybox else 1
                continue
        else:
            out = gzip_format.compress(data, mtime=0 if path == "-" else int(call.now))
            target = None if path == "-" or to_stdout else path + ".gz"
        if target is None:
            call.write(to_text(out))
            continue
        call.ctx.files[call.shell.abspath(target)] = to_text(out)
        if not keep:
            remove_file(call, call.shell.abspath(path))
    return status
