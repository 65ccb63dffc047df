"""A small, deterministic POSIX-sh subset for container commands and `kubectl exec`.

Containers in the twin do not run real processes: a container's `command`/`args` (or its image's
entrypoint) are interpreted here, against simulated time. The interpreter is written as generators
that *yield effects* (output, sleeps, listening sockets, memory use) instead of doing anything, so

- a container process is advanced lazily tick by tick (`Process.advance`), which makes
  `while true; do echo tick; sleep 5; done` cost nothing between wake-ups and never run ahead;
- a `kubectl exec` command runs to completion at once (`run_once`), sleeps taking no wall time;
- redirections and pipes are just filters on the effect stream.

Supported: `;`, newlines, `&&`, `||`, `!`, `|`, `{ ...; }`, `( ... )`, `if/elif/else/fi`,
`while/until ... do ... done`, `for x in ...; do ... done`, `case ... esac`, single/double quotes,
backslash escapes, `$VAR`, `${VAR}`, `${VAR:-x}` and friends, `$?`, `$#`, `$1`..., `$(...)`,
backticks, `$((arithmetic))`, `VAR=x cmd`, redirections `> >> < 2> 2>&1 >&2 &>` (to `/dev/null`,
`/dev/stderr`, or a file kept in the container's writable layer), `set -e`, `exec`, `export`,
`unset`, `cd`, `shift`, `trap` (ignored), `wait`, pathname expansion (`*`, `?`, `[...]` over the
exec's tree, `set -f`), and command lookup by path and `$PATH` in that tree.

Commands are looked up in a registry. Register one with::

    @command("hostname")
    def hostname(call: Invocation) -> int:
        call.write(call.ctx.hostname + "\\n")
        return 0

A command is a plain function returning the exit code (output written with `call.write`), or a
generator that yields effects (`Sleep`, `Listen`, `Usage`, `Output`) and returns the exit code.
Image binaries (`nginx`, `redis-server` ...) are resolved through `ShellContext.resolve`, which the
kubelet points at the image catalogue, before the global registry.

Limits. Every value a process makes lives in the server's memory, and an agent's `kubectl exec`
must not be able to take the server down, so each process tree is bounded the way a container
bounds it, plus budgets where the twin cannot stream like a real system:

- memory (`MemoryMeter`): variables, pipe contents, command substitutions, pending output and
  printf padding are counted (approximately: text lengths); a process that would grow past its
  headroom (the container's memory limit minus its working set, at most `PROCESS_MEMORY_CAP`) is
  OOM-killed: exit code 137, no message, as the kernel's SIGKILL leaves it. The twin's pipes hold
  the whole stream, so `producer | consumer` is killed where a real pipe would stream;
- steps and simulated time (`run_once`: 200,000 effects, `MAX_EXEC_SECONDS`): `while true; do :;
  done`, `yes > /dev/null`, `sleep infinity` end with 137 like an exec still running when the
  client gives up, with whatever they wrote so far;
- output (`MAX_EXEC_OUTPUT_BYTES`) and copying (`COPY_BUDGET`): an exec that writes more, or
  copies more text, ends the same way;
- the writable layer (`WRITABLE_LAYER_CAP`): writes past it fail with ENOSPC;
- arithmetic is 64-bit, as sh's is.

Layout: `lexer` and `parser` build the `syntax` tree; `interpreter` (the `Shell`) walks it, with
`arith`, `globbing`, `pathexpand`, `lookup` and the `builtins` that change the shell itself; `commands` holds what a command
sees and the registry; `effects` what programs yield; `limits` the bounds above; `process` runs a
program against the simulated clock or once for an exec. The standard commands are registered by
`sregym.twin.node.coreutils` (imported by the `sregym.twin.node` package), not by this package.
"""

from __future__ import annotations

from sregym.twin.node.shell.commands import (
    COMMANDS,
    CommandFn,
    Invocation,
    ShellContext,
    command,
    lookup_command,
)
from sregym.twin.node.shell.control import Exit, LoopControl
from sregym.twin.node.shell.dates import format_date
from sregym.twin.node.shell.effects import Effect, Listen, Output, Program, Sleep, Unlisten, Usage
from sregym.twin.node.shell.interpreter import Shell, drive
from sregym.twin.node.shell.limits import (
    EXEC_STEP_BUDGET,
    FOREVER,
    MAX_EXEC_OUTPUT_BYTES,
    MAX_EXEC_SECONDS,
    OOM_EXIT_CODE,
    PROCESS_MEMORY_CAP,
    WRITABLE_LAYER_CAP,
    BudgetExhausted,
    MemoryMeter,
    OutOfMemory,
)
from sregym.twin.node.shell.parser import parse
from sregym.twin.node.shell.process import (
    ExecResult,
    OutputSink,
    Process,
    exec_program,
    program_for,
    run_once,
    run_process,
)
from sregym.twin.node.shell.syntax import ShellSyntaxError

__all__ = [
    "COMMANDS", "EXEC_STEP_BUDGET", "FOREVER", "MAX_EXEC_OUTPUT_BYTES", "MAX_EXEC_SECONDS", "OOM_EXIT_CODE",
    "PROCESS_MEMORY_CAP", "WRITABLE_LAYER_CAP", "BudgetExhausted", "CommandFn", "Effect", "ExecResult", "Exit",
    "Invocation", "Listen", "LoopControl", "MemoryMeter", "OutOfMemory", "Output", "OutputSink", "Process",
    "Program", "Shell", "ShellContext", "ShellSyntaxError", "Sleep", "Unlisten", "Usage", "command", "drive",
    "exec_program", "format_date", "lookup_command", "parse", "program_for", "run_once", "run_process",
]
