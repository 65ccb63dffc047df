"""Builtins that change the shell itself: exit, export, set, cd, exec, break, eval, read ..."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from sregym.twin.node.shell.control import Exit, LoopControl
from sregym.twin.node.shell.describe import b_command, b_type
from sregym.twin.node.shell.effects import Output, Program
from sregym.twin.node.shell.parser import parse

if TYPE_CHECKING:
    from sregym.twin.node.shell.interpreter import Shell

Builtin = Callable[["Shell", list[str], str], Program]


def _b_exit(sh: Shell, argv: list[str], _stdin: str) -> Program:
    code = sh.status
    if len(argv) > 1:
        try:
            code = int(argv[1]) & 0xFF
        except ValueError:
            yield Output("stderr", f"{sh.name}: exit: Illegal number: {argv[1]}\n")
            code = 2
    raise Exit(code)


def _b_colon(_sh: Shell, _argv: list[str], _stdin: str) -> Program:
    return 0
    yield  # pragma: no cover - makes this a generator


def _b_export(sh: Shell, argv: list[str], _stdin: str) -> Program:
    for arg in argv[1:]:
        if arg == "-p":
            continue
        name, eq, value = arg.partition("=")
        if eq:
            sh.vars[name] = value
        sh.exported.add(name)
    return 0
    yield  # pragma: no cover


def _b_unset(sh: Shell, argv: list[str], _stdin: str) -> Program:
    for name in argv[1:]:
        if name in ("-v", "-f"):
            continue
        sh.vars.pop(name, None)
        sh.exported.discard(name)
    return 0
    yield  # pragma: no cover


def _b_set(sh: Shell, argv: list[str], _stdin: str) -> Program:
    args = argv[1:]
    while args and args[0].startswith(("-", "+")) and args[0] not in ("--", "-"):
        flag = args.pop(0)
        if "e" in flag:
            sh.errexit = flag.startswith("-")
        if "f" in flag:
            sh.noglob = flag.startswith("-")
        if flag in ("-o", "+o") and args:
            option = args.pop(0)
            if option == "errexit":
                sh.errexit = flag == "-o"
            elif option == "noglob":
                sh.noglob = flag == "-o"
    if args and args[0] in ("--", "-"):
        args.pop(0)
        sh.positional = list(args)
    elif args:
        sh.positional = list(args)
    return 0
    yield  # pragma: no cover


def _b_shift(sh: Shell, argv: list[str], _stdin: str) -> Program:
    count = int(argv[1]) if len(argv) > 1 and argv[1].isdigit() else 1
    if count > len(sh.positional):
        yield Output("stderr", f"{sh.name}: shift: can't shift that many\n")
        return 1
    sh.positional = sh.positional[count:]
    return 0


def _b_cd(sh: Shell, argv: list[str], _stdin: str) -> Program:
    target = argv[1] if len(argv) > 1 else sh.vars.get("HOME", "/")
    path = sh.abspath(target)
    if path not in sh.ctx.directories():
        yield Output("stderr", f"{sh.name}: cd: can't cd to {target}: No such file or directory\n")
        return 2
    sh.ctx.cwd = path
    sh.vars["PWD"] = path
    return 0


def _b_exec(sh: Shell, argv: list[str], stdin: str) -> Program:
    if len(argv) == 1:
        return 0
    status = yield from sh._invoke(argv[1:], {}, stdin)
    raise Exit(status)


def _b_loopctl(sh: Shell, argv: list[str], _stdin: str) -> Program:
    levels = int(argv[1]) if len(argv) > 1 and argv[1].isdigit() else 1
    raise LoopControl(argv[0], levels)
    yield  # pragma: no cover


def _b_eval(sh: Shell, argv: list[str], _stdin: str) -> Program:
    source = " ".join(argv[1:])
    sh.meter.need_parse(source)
    tree = parse(source)
    return (yield from sh.run_sequence(tree))


def _b_read(sh: Shell, argv: list[str], stdin: str) -> Program:
    names = [a for a in argv[1:] if not a.startswith("-")] or ["REPLY"]
    if not stdin and sh.stream is not None:  # inside a loop fed by a pipe or a here-document
        stdin = sh.stream[0]
        sh.stream[0] = stdin.partition("\n")[2]
    line, _, _rest = stdin.partition("\n")
    if not stdin:
        return 1
    values = line.split(None, len(names) - 1)
    for index, name in enumerate(names):
        sh.vars[name] = values[index] if index < len(values) else ""
    return 0
    yield  # pragma: no cover


BUILTINS: dict[str, Builtin] = {
    "exit": _b_exit, ":": _b_colon, "export": _b_export, "unset": _b_unset, "set": _b_set,
    "shift": _b_shift, "cd": _b_cd, "exec": _b_exec, "break": _b_loopctl, "continue": _b_loopctl,
    "trap": _b_colon, "wait": _b_colon, "umask": _b_colon, "ulimit": _b_colon, "readonly": _b_export,
    "local": _b_export, "eval": _b_eval, "read": _b_read, "return": _b_exit,
    "command": b_command, "type": b_type,
}
