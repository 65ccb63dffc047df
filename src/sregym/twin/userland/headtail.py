"""`head` and `tail`: counts (`-n N`, `-n -N`, `-n +N`, `-c`), headers (`==> f <==`) and errors
as GNU coreutils prints them, BusyBox's words on BusyBox/Alpine images.

`tail -f` on a regular file ends once the file is printed in an exec (the twin's exec runs to
completion at once); on `/dev/null`, or as a container's main process, it blocks for ever, the
classic keep-alive.
"""

from __future__ import annotations

import re

from sregym.twin.node.coreutils import ENDLESS_DEVICES, device_bytes
from sregym.twin.node.shell import FOREVER, Invocation, Program, Sleep, command
from sregym.twin.userland.filteropts import Spec, is_busybox, parse_or_fail, read_input

HEAD = Spec("head", "c:n:qvz", {"bytes=": "c", "lines=": "n", "quiet": "q", "silent": "q",
                                "verbose": "v", "zero-terminated": "z"},
            usage="head [OPTIONS] [FILE]...")
TAIL = Spec("tail", "c:n:fFqvzs:", {
    "bytes=": "c", "lines=": "n", "follow": "f", "quiet": "q", "silent": "q", "verbose": "v",
    "zero-terminated": "z", "sleep-interval=": "s", "retry": "retry", "pid=": "pid",
    "max-unchanged-stats=": "max-unchanged-stats"}, usage="tail [OPTIONS] [FILE]...")

_SUFFIXES = {"": 1, "b": 512, "kB": 1000, "K": 1024, "KiB": 1024, "MB": 1000 ** 2, "M": 1024 ** 2,
             "MiB": 1024 ** 2, "GB": 1000 ** 3, "G": 1024 ** 3, "GiB": 1024 ** 3}
_COUNT = re.compile(r"([-+]?)(\d+)([A-Za-z]*)")


def _count(text: str) -> tuple[str, int] | None:
    """A count with its sign ('', '-', '+') and GNU's multiplier suffixes; None if invalid."""
    match = _COUNT.fullmatch(text)
    if match is None or match.group(3) not in _SUFFIXES:
        return None
    return match.group(1), int(match.group(2)) * _SUFFIXES[match.group(3)]


def _bad_count(call: Invocation, tool: str, value: str, bytes_: bool) -> int:
    if is_busybox(call):
        call.error(f"{tool}: invalid number '{value}'")
    else:
        call.error(f"{tool}: invalid number of {'bytes' if bytes_ else 'lines'}: '{value}'")
    return 1


def _units(text: str, by_bytes: bool, terminator: str) -> list[str]:
    if by_bytes:
        return [chr(b) for b in text.encode("utf-8", "surrogateescape")]
    return text.splitlines(keepends=True) if terminator == "\n" else \
        [part + terminator for part in text.split(terminator)[:-1]] + \
        ([text.split(terminator)[-1]] if not text.endswith(terminator) and text else [])


def _join(units: list[str], by_bytes: bool) -> str:
    if by_bytes:
        return bytes(ord(u) for u in units).decode("utf-8", "replace")
    return "".join(units)


class _Plan:
    """The parsed options both tools share."""

    def __init__(self) -> None:
        self.by_bytes = False
        self.sign = ""
        self.amount = 10
        self.headers: bool | None = None
        self.terminator = "\n"
        self.follow = False


def _plan(call: Invocation, spec: Spec) -> tuple[_Plan, list[str]] | int:
    parsed = parse_or_fail(call, spec, number_option="n")
    if isinstance(parsed, int):
        return parsed
    options, operands = parsed
    plan = _Plan()
    for key, value in options:
        if key in "cn":
            count = _count(value)
            if count is None:
                return _bad_count(call, spec.tool, value, key == "c")
            plan.by_bytes = key == "c"
            plan.sign, plan.amount = count
        elif key == "q":
            plan.headers = False
        elif key == "v":
            plan.headers = True
        elif key == "z":
            plan.terminator = "\0"
        elif key in "fF":
            plan.follow = True
    return plan, operands


def _each(call: Invocation, tool: str, plan: _Plan, operands: list[str]):
    """Yield (path, content) for every readable operand, printing headers and errors."""
    paths = operands or ["-"]
    headers = plan.headers if plan.headers is not None else len(paths) > 1
    first = True
    for path in paths:
        device = call.shell.abspath(path) if path != "-" else ""
        if device in ENDLESS_DEVICES and tool == "head":
            wanted = plan.amount if plan.by_bytes and plan.sign != "-" else -1
            call.ctx.meter().need(wanted if wanted >= 0 else call.ctx.meter().limit + 1)
            content: str | None = device_bytes(device, wanted)
        elif device == "/dev/null":
            content = ""
        else:
            content = read_input(call, tool, path)
        if content is None:
            yield path, None
            continue
        if headers:
            name = "standard input" if path == "-" else path
            call.write(("" if first else "\n") + f"==> {name} <==\n")
        first = False
        yield path, content


@command("head")
def head(call: Invocation) -> int:
    planned = _plan(call, HEAD)
    if isinstance(planned, int):
        return planned
    plan, operands = planned
    status = 0
    for _path, content in _each(call, "head", plan, operands):
        if content is None:
            status = 1
            continue
        units = _units(content, plan.by_bytes, plan.terminator)
        kept = units[:max(0, len(units) - plan.amount)] if plan.sign == "-" else units[:plan.amount]
        call.write(_join(kept, plan.by_bytes))
    return status


@command("tail")
def tail(call: Invocation) -> Program:
    planned = _plan(call, TAIL)
    if isinstance(planned, int):
        return planned
    plan, operands = planned
    status = 0
    blocking = not call.ctx.extras.get("exec") and bool(operands or not call.stdin)
    for path, content in _each(call, "tail", plan, operands):
        if content is None:
            status = 1
            continue
        if path == "/dev/null" or call.shell.abspath(path) in ENDLESS_DEVICES:
            blocking = True
        units = _units(content, plan.by_bytes, plan.terminator)
        if plan.sign == "+":
            kept = units[max(0, plan.amount - 1):]
        else:
            kept = units[len(units) - plan.amount:] if plan.amount else []
        call.write(_join(kept, plan.by_bytes))
    if plan.follow and blocking and status == 0:
        yield Sleep(FOREVER)
    return status
