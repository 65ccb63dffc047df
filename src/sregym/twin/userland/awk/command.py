"""The `awk`, `mawk`, `gawk` exec commands: options, then the interpreter, then the pipes.

Options as mawk takes them (`-F fs`, `-v var=value`, `-f progfile`, `--`, `-W version`); an
unknown one prints mawk's `not an option` and exits 2. Output piped to a command
(`print | "sort"`) is handed to that command, run by the container's shell, when the pipe is
closed or the program ends, as a real awk's child would see it at its end of input.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from sregym.twin.node.shell import Invocation, Shell, ShellSyntaxError, command, parse
from sregym.twin.node.shell.interpreter import capture
from sregym.twin.userland.awk.interp import AwkRuntimeError, Interpreter
from sregym.twin.userland.awk.lexer import AwkSyntaxError, unescape
from sregym.twin.userland.awk.parser import parse as parse_awk
from sregym.twin.userland.awk.values import StrNum
from sregym.twin.userland.filteropts import is_busybox

MAWK_VERSION = (
    "mawk 1.3.4 20200120\n"
    "Copyright 2008-2019,2020, Thomas E. Dickey\n"
    "Copyright 1991-1996,2014, Michael D. Brennan\n"
    "\n"
    "random-funcs:       srandom/random\n"
    "regex-funcs:        internal\n"
    "compiled limits:\n"
    "sprintf buffer      8192\n"
    "maximum-integer     2147483647\n"
)
MAWK_USAGE = (
    "Usage: mawk [Options] [Program] [file ...]\n"
    "\n"
    "Program:\n"
    "    The -f option value is the name of a file containing program text.\n"
    "    If no -f option is given, a \"--\" ends option processing; the following\n"
    "    parameters are the program text.\n"
    "\n"
    "Options:\n"
    "    -f program-file  Program  text is read from file instead of from the\n"
    "                     command-line.  Multiple -f options are accepted.\n"
    "    -F value         sets the field separator, FS, to value.\n"
    "    -v var=value     assigns value to program variable var.\n"
    "    --               unambiguous end of options.\n"
    "\n"
    "    Implementation-specific options are prefixed with \"-W\".  They can be\n"
    "    abbreviated:\n"
    "\n"
    "    -W version       show version information and exit.\n"
    "    -W dump          show assembler-like listing of program and exit.\n"
    "    -W help          show this message and exit.\n"
    "    -W interactive   set unbuffered output, line-buffered input.\n"
    "    -W exec file     use file as program as well as last option.\n"
    "    -W random=number set initial random seed.\n"
    "    -W sprintf=number adjust size of sprintf buffer.\n"
    "    -W posix_space   do not consider \"\\n\" a space.\n"
    "    -W usage         show this message and exit.\n"
)
BUSYBOX_USAGE = (
    "BusyBox v1.36.1 (2023-07-27 17:12:24 UTC) multi-call binary.\n"
    "\n"
    "Usage: awk [OPTIONS] [AWK_PROGRAM] [FILE]...\n"
    "\n"
    "\t-v VAR=VAL\tSet variable\n"
    "\t-F SEP\t\tUse SEP as field separator\n"
    "\t-f FILE\t\tRead program from FILE\n"
    "\t-e AWK_PROGRAM\n"
)


class UsageError(Exception):
    def __init__(self, text: str, status: int = 2, stdout: bool = False) -> None:
        super().__init__(text)
        self.text = text
        self.status = status
        self.stdout = stdout


def flavour_of(call: Invocation) -> str:
    if is_busybox(call):
        return "busybox"
    return "gawk" if call.name == "gawk" else "mawk"


def parse_args(call: Invocation, flavour: str, name: str) -> tuple[str, list[tuple[str, str]], list[str]]:
    """The program text, the -v/-F assignments in order, and the operands."""
    args = list(call.args)
    assigns: list[tuple[str, str]] = []
    sources: list[str] = []
    while args and args[0].startswith("-") and args[0] != "-":
        arg = args.pop(0)
        if arg == "--":
            break
        flag, rest = arg[1:2], arg[2:]
        if flag in ("F", "v", "f", "W") or (flag == "e" and flavour == "busybox"):
            if not rest:
                if not args:
                    if flavour == "busybox":
                        raise UsageError(f"awk: option requires an argument -- '{flag}'\n" + BUSYBOX_USAGE, 1)
                    raise UsageError(f"{name}: option requires an argument -- {flag}\n" + MAWK_USAGE, 2)
                rest = args.pop(0)
            if flag == "F":
                assigns.append(("FS", rest))
            elif flag == "v":
                var, eq, value = rest.partition("=")
                if not eq or not var.replace("_", "a").isalnum() or var[0].isdigit():
                    raise UsageError(f"{name}: improper assignment: -v {rest}", 2)
                assigns.append((var, value))
            elif flag == "f":
                content = call.read_file(rest) if rest != "-" else call.stdin
                if content is None:
                    raise UsageError(f"{name}: couldn't open file {rest}" if flavour != "busybox"
                                     else f"awk: can't open '{rest}': No such file or directory", 2)
                sources.append(content)
            elif flag == "e":
                sources.append(rest)
            elif rest.startswith("v"):
                raise UsageError(MAWK_VERSION, 0, stdout=True)
            elif rest.startswith(("u", "h")):
                raise UsageError(MAWK_USAGE, 0, stdout=True)
            continue
        if arg in ("--version", "-version"):
            raise UsageError(MAWK_VERSION, 0, stdout=True)
        if flavour == "busybox":
            raise UsageError(f"awk: unrecognized option '{arg}'\n" + BUSYBOX_USAGE
                             if arg.startswith("--") else f"awk: invalid option -- '{flag}'\n" + BUSYBOX_USAGE, 1)
        raise UsageError(f"{name}: not an option: {arg}", 2)
    if not sources:
        if not args:
            if flavour == "busybox":
                raise UsageError(BUSYBOX_USAGE, 1)
            raise UsageError(MAWK_USAGE, 0)
        sources.append(args.pop(0))
    return "\n".join(sources), assigns, args


@command("awk", "mawk", "gawk", "nawk")
def awk(call: Invocation) -> Generator[Any, None, int]:
    flavour = flavour_of(call)
    name = "awk" if flavour == "busybox" else call.name  # mawk names itself as invoked
    try:
        source, assigns, operands = parse_args(call, flavour, name)
    except UsageError as exc:
        if exc.stdout:
            call.write(exc.text)
        else:
            call.error(exc.text)
        return exc.status
    try:
        program = parse_awk(source)
    except AwkSyntaxError as exc:
        if flavour == "busybox":
            line = exc.text.split(":", 1)[0].removeprefix("line ")
            eos = "end of file" in exc.text or "runaway" in exc.text
            call.error(f"awk: cmd. line:{line}: " + ("Unexpected end of string" if eos else "Unexpected token"))
            return 1
        call.error(f"{name}: {exc.text}")
        return 2
    except RecursionError:
        call.error(f"{name}: line 1: program too deeply nested")
        return 2
    vm = Interpreter(call, program, flavour=flavour, seed=_seed(call), progname=name)
    for var, value in assigns:
        vm.globals[var] = StrNum(unescape(value)) if var != "FS" or value != "t" else "\t"
        if var == "FS" and value == "t" and flavour != "busybox":
            vm.globals[var] = "t"
    try:
        status = vm.run(operands)
    except AwkRuntimeError as exc:
        call.error(exc.text)
        status = exc.status
    except RecursionError:
        call.error(f"{name}: run time error: function call nesting too deep")
        status = 2
    for cmd, text in vm.closed_pipes + [(cmd, "".join(vm.pipes[cmd])) for cmd in vm.pipe_order]:
        yield from run_piped(call, cmd, text)
    return status


def _seed(call: Invocation) -> int:
    """mawk seeds rand() from the clock; the twin seeds it from the run's seeded streams."""
    twin = call.ctx.twin
    if twin is not None:
        return twin.rng.stream("awk").getrandbits(31)
    return int(call.now) & 0x7FFFFFFF


def run_piped(call: Invocation, cmd: str, stdin: str) -> Generator[Any, None, int]:
    """Run `cmd` through the container's shell with `stdin` as its input."""
    shell = Shell(call.ctx, "sh")
    try:
        tree = parse(cmd)
    except ShellSyntaxError as exc:
        call.error(f"sh: {exc}")
        return 2
    if len(tree.items) != 1 or tree.items[0].rest:
        return (yield from shell.run_source(cmd))
    commands = tree.items[0].first.commands
    status = 0
    try:
        for index, node in enumerate(commands):
            if index == len(commands) - 1:
                status = yield from shell.run_command(node, stdin)
            else:
                captured: list[str] = []
                status = yield from capture(shell.run_command(node, stdin), captured, shell.meter)
                stdin = "".join(captured)
    finally:
        shell.release()
    return status
