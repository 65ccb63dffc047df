"""`xargs`: build command lines from stdin and run them, as GNU findutils' xargs does.

The command is looked up like any exec'd program (the image's binaries, never shell builtins),
so a tool the image lacks fails with `xargs: NAME: No such file or directory` and status 127.
Exit status: 123 when some run exited 1-125, 124 (and stop) on 255, 125 when one was killed.
"""

from __future__ import annotations

from sregym.twin.node.shell import Invocation, Program, command, drive, lookup_command
from sregym.twin.userland.context import executable_exists
from sregym.twin.userland.filteropts import Spec, is_busybox, parse_or_fail, usage_error

XARGS = Spec("xargs", "0aD:d:E:e::I:i::L:l::n:oP:prs:txv", {
    "null": "0", "arg-file=": "a", "delimiter=": "d", "eof=": "E", "replace=": "I",
    "max-lines=": "L", "max-args=": "n", "open-tty": "o", "max-procs=": "P",
    "interactive": "p", "no-run-if-empty": "r", "max-chars=": "s", "verbose": "t",
    "exit": "x", "show-limits": "show-limits", "process-slot-var=": "process-slot-var"},
    usage="xargs [OPTIONS] [PROG ARGS]")


def split_items(text: str) -> tuple[list[str], str | None]:
    """Default input syntax: blank-separated, with '...' and "..." quoting and backslashes.
    Returns the items and, when a quote is left open, which one ("single"/"double"): the items
    before it still run, as GNU xargs runs them before reporting it."""
    items: list[str] = []
    current: list[str] = []
    has_item = False
    i = 0
    while i < len(text):
        c = text[i]
        if c in " \t\n":
            if has_item:
                items.append("".join(current))
                current, has_item = [], False
            i += 1
            continue
        has_item = True
        if c in "'\"":
            end = text.find(c, i + 1)
            newline = text.find("\n", i + 1)
            if end < 0 or 0 <= newline < end:
                return items, "single" if c == "'" else "double"
            current.append(text[i + 1:end])
            i = end + 1
            continue
        if c == "\\" and i + 1 < len(text):
            current.append(text[i + 1])
            i += 2
            continue
        current.append(c)
        i += 1
    if has_item:
        items.append("".join(current))
    return items, None


def _positive(call: Invocation, option: str, value: str) -> int | None:
    try:
        number = int(value)
    except ValueError:
        call.error(f"xargs: invalid number \"{value}\" for -{option} option")
        call.error("Try 'xargs --help' for more information.")
        return None
    if number < 1:
        call.error(f"xargs: value {value} for -{option} option should be >= 1")
        call.error("Try 'xargs --help' for more information.")
        return None
    return number


def _batches(items: list[str], per_command: int | None) -> list[list[str]]:
    if per_command is None:
        return [items]
    return [items[i:i + per_command] for i in range(0, len(items), per_command)]


@command("xargs")
def xargs(call: Invocation) -> Program:
    parsed = parse_or_fail(call, XARGS, permute=False)
    if isinstance(parsed, int):
        return parsed
    options, operands = parsed
    per_command: int | None = None
    lines_per: int | None = None
    replace: str | None = None
    delimiter: str | None = None
    eof: str | None = None
    no_empty = trace = False
    for key, value in options:
        if key in "nL":
            number = _positive(call, key, value)
            if number is None:
                return 1
            if key == "n":
                per_command, lines_per = number, None
            else:
                lines_per, per_command = number, None
        elif key == "l":
            lines_per = int(value) if value.isdigit() else 1
        elif key in "Ii":
            replace = value or "{}"
        elif key == "0":
            delimiter = "\0"
        elif key == "d":
            delimiter = {"\\n": "\n", "\\t": "\t", "\\0": "\0"}.get(value, value[:1])
        elif key in "Ee":
            eof = value or None
        elif key == "r":
            no_empty = True
        elif key == "t":
            trace = True
        elif key in "pa":
            return usage_error(call, XARGS, f"option -{key} is not supported here")
    command_argv = operands or ["echo"]
    stdin = call.stdin or ""
    quote_error = None
    if replace is not None:
        runs = [[arg.replace(replace, line.lstrip(" \t")) for arg in command_argv]
                for line in stdin.split("\n") if line.strip(" \t")]
    elif lines_per is not None and delimiter is None:
        rows = [split_items(line)[0] for line in stdin.split("\n") if line.strip(" \t")]
        runs = [command_argv + [item for row in rows[i:i + lines_per] for item in row]
                for i in range(0, len(rows), lines_per)]
    else:
        if delimiter is not None:
            items = stdin.split(delimiter)
            if items and items[-1] == "":
                items.pop()
        else:
            items, quote_error = split_items(stdin)
        if eof is not None and eof in items:
            items = items[:items.index(eof)]
        runs = [command_argv + batch for batch in _batches(items, per_command) if batch]
    if not runs and not no_empty and replace is None and not is_busybox(call):
        runs = [list(command_argv)]
    status = 0
    for argv in runs:
        if trace:
            call.error(" ".join(argv))
        name = argv[0]
        fn = lookup_command(name, call.ctx) if executable_exists(call.ctx, name) else None
        if fn is None:
            call.error(f"xargs: {name}: No such file or directory")
            return 127
        child = Invocation(list(argv), call.ctx, call.shell, "")
        code = yield from drive(fn, child, call.shell)
        if code == 255:
            call.error(f"xargs: {name}: exited with status 255; aborting")
            return 124
        if code > 128:
            call.error(f"xargs: {name}: terminated by signal {code - 128}")
            return 125
        if code:
            status = 123
    if quote_error is not None:
        call.error(f"xargs: unmatched {quote_error} quote; by default quotes are special to "
                   "xargs unless you use the -0 option")
        return 1
    return status

