"""`wc`: line, word, byte/character and longest-line counts, GNU's column widths or BusyBox's.

GNU sizes every column to the digits of the inputs' total size (at least 7 when one input is not
a regular file, such as a pipe), except for a single count of a single input; BusyBox pads every
column to 9 unless one count of at most one input is asked for. The twin's containers have no
locale, so `-m` counts bytes as the C locale does.
"""

from __future__ import annotations

import re

from sregym.twin.node.shell import Invocation, command
from sregym.twin.userland.filteropts import Spec, is_busybox, read_input, with_options

WC = Spec("wc", "clLmw", {"bytes": "c", "chars": "m", "lines": "l", "words": "w",
                          "max-line-length": "L", "files0-from=": "files0-from",
                          "total=": "total"}, usage="wc [-cmlwL] [FILE]...")
_WORD = re.compile(r"[^ \t\n\v\f\r]+")


def _longest_line(text: str) -> int:
    best = 0
    for line in text.split("\n"):
        width = 0
        for char in line:
            width = width + 8 - width % 8 if char == "\t" else width + (1 if char >= " " else 0)
        best = max(best, width)
    return best


def counts(text: str) -> dict[str, int]:
    size = len(text.encode("utf-8", "surrogateescape"))
    return {"l": text.count("\n"), "w": len(_WORD.findall(text)), "m": size, "c": size,
            "L": _longest_line(text)}


@command("wc")
@with_options(WC)
def wc(call: Invocation, options: list[tuple[str, str]], operands: list[str]) -> int:
    chosen = {key for key, _value in options if key in "clLmw"}
    order = [k for k in "lwmcL" if k in chosen] or ["l", "w", "c"]
    paths = operands or ["-"]
    rows: list[tuple[list[int], str]] = []
    status = 0
    regular_total = 0
    piped = False
    dirs = call.ctx.directories()
    for path in paths:
        full = call.shell.abspath(path) if path != "-" else ""
        content = read_input(call, "wc", path)
        if content is None:
            status = 1
            if full in dirs and not is_busybox(call):
                piped = True
                rows.append(([0] * len(order), path))
            continue
        call.ctx.meter().need_split(content)  # the words are split out
        figures = counts(content)
        if path == "-":
            piped = True
        else:
            regular_total += figures["c"]
        rows.append(([figures[k] for k in order], "" if path == "-" and not operands else path))
    if len(paths) > 1:
        rows.append(([sum(row[0][i] for row in rows) for i in range(len(order))], "total"))
    if is_busybox(call):
        single = len(operands) <= 1 and len(order) == 1
        for numbers, name in rows:
            text = " ".join(str(n) if single else f"{n:9d}" for n in numbers)
            call.write(text + (f" {name}" if name else "") + "\n")
        return status
    if len(order) == 1 and len(paths) == 1:
        width = 1
    else:
        width = max(len(str(regular_total)), 7 if piped else 1)
    for numbers, name in rows:
        call.write(" ".join(f"{n:>{width}}" for n in numbers) + (f" {name}" if name else "") + "\n")
    return status
