"""Processes: a program advanced against the simulated clock, and one-shot execs with their budgets."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from sregym.twin.node.shell.commands import Invocation, ShellContext, lookup_command
from sregym.twin.node.shell.effects import Effect, Output, Program, Sleep
from sregym.twin.node.shell.interpreter import Shell, drive
from sregym.twin.node.shell.limits import (
    EXEC_STEP_BUDGET,
    MAX_EXEC_OUTPUT_BYTES,
    MAX_EXEC_SECONDS,
    OOM_EXIT_CODE,
    BudgetExhausted,
    OutOfMemory,
)


def program_for(argv: list[str], ctx: ShellContext) -> Program:
    """The program a container (or exec) runs for `argv`: argv[0] is looked up like execve would.

    An argv[0] that is no known executable yields nothing and returns the special code -1; the
    caller turns that into containerd's "executable file not found in $PATH" start error.
    """
    if not argv:
        return _empty(-1)
    fn = lookup_command(argv[0], ctx)
    if fn is None:
        return _empty(-1)
    sh = Shell(ctx, argv[0].rsplit("/", 1)[-1])
    return drive(fn, Invocation(list(argv), ctx, sh), sh)


def _empty(code: int) -> Program:
    return code
    yield  # pragma: no cover


@dataclass
class TimedEffect:
    at: float  # absolute simulated epoch seconds
    effect: Effect


class Process:
    """A program advanced lazily against the simulated clock.

    `advance(now)` runs the program up to `now` and returns what it did meanwhile, each effect
    stamped with the simulated time it happened. `next_wake` says when calling again can change
    anything (inf while blocked forever), which is what lets the kubelet skip idle containers.
    """

    def __init__(self, program: Program, start: float) -> None:
        self._gen = program
        self.start = start
        self._clock = start
        self.finished = False
        self.exit_code: int | None = None
        self.exit_at: float | None = None
        self.oom_killed = False
        self.exhausted = False  # stopped for its work budget (`BudgetExhausted`)

    @property
    def next_wake(self) -> float:
        return math.inf if self.finished else self._clock

    @property
    def clock(self) -> float:
        """How far the program has run, in simulated seconds from its start."""
        return self._clock

    def advance(self, now: float, budget: int = 20000) -> list[TimedEffect]:
        out: list[TimedEffect] = []
        self.run(now, budget, lambda at, effect: out.append(TimedEffect(at, effect)))
        return out

    def run(self, now: float, budget: int, sink: Callable[[float, Effect], object]) -> None:
        """`advance` handing each effect to `sink` as it happens instead of keeping a list, so
        a long exec holds only what the sink keeps. A process that runs out of memory ends with
        the OOM killer's exit code 137 (`oom_killed`)."""
        while not self.finished and self._clock <= now and budget > 0:
            budget -= 1
            try:
                effect = next(self._gen)
            except StopIteration as stop:
                self.finished = True
                self.exit_code = int(stop.value if stop.value is not None else 0)
                self.exit_at = self._clock
                break
            except OutOfMemory:
                self.finished = True
                self.oom_killed = True
                self.exit_code = OOM_EXIT_CODE
                self.exit_at = self._clock
                break
            except BudgetExhausted:
                self.finished = True
                self.exhausted = True
                self.exit_code = OOM_EXIT_CODE
                self.exit_at = self._clock
                break
            if isinstance(effect, Sleep):
                self._clock += max(0.0, effect.seconds)
                continue
            if sink(self._clock, effect) is False:
                break

    def wake(self, at: float) -> None:
        """Resume a program blocked in `Sleep` at `at`: something outside it happened (the node
        refused it a thread), and the program's next step decides what follows."""
        if not self.finished and self._clock > at:
            self._clock = at

    def close(self) -> None:
        self._gen.close()
        self.finished = True


@dataclass
class ExecResult:
    stdout: str
    stderr: str
    exit_code: int
    finished: bool = True  # False when the command was still running at the end of its budget
    oom_killed: bool = False  # the process outgrew its memory (exit code 137)


class OutputSink:
    """What an exec's client receives, kept up to `MAX_EXEC_OUTPUT_BYTES` in all.

    A real kubectl streams output as it comes; the twin returns it when the command ends, so an
    exec that writes past the cap (`cat /dev/zero`, `yes` with a long line) is ended there, like
    one that runs out of its step or time budget: exit code 137, the output up to the cap."""

    def __init__(self, cap: int = MAX_EXEC_OUTPUT_BYTES, *, merged: bool = False) -> None:
        self.cap = cap
        self.size = 0
        self.streams: dict[str, list[str]] = {"stdout": [], "stderr": []}
        self.merged = merged  # a terminal: both streams in one, in the order written
        self.overflowed = False

    def __call__(self, _at: float, effect: Effect) -> bool:
        if not isinstance(effect, Output):
            return True
        room = self.cap - self.size
        text = effect.text if len(effect.text) <= room else effect.text[:room]
        self.streams.setdefault("stdout" if self.merged else effect.stream, []).append(text)
        self.size += len(text)
        if len(text) < len(effect.text):
            self.overflowed = True
            return False
        return True

    def result(self, proc: Process) -> ExecResult:
        stdout, stderr = "".join(self.streams["stdout"]), "".join(self.streams["stderr"])
        if not proc.finished or proc.exhausted:
            proc.close()
            return ExecResult(stdout, stderr, OOM_EXIT_CODE, finished=False)
        return ExecResult(stdout, stderr, proc.exit_code or 0, oom_killed=proc.oom_killed)


def run_process(program: Program, *, max_seconds: float = MAX_EXEC_SECONDS,
                budget: int = EXEC_STEP_BUDGET) -> ExecResult:
    """Run an exec'd program to the end of its budget, keeping at most the output cap."""
    proc = Process(program, 0.0)
    sink = OutputSink()
    proc.run(max_seconds, budget, sink)
    return sink.result(proc)


def exec_program(ctx: ShellContext, argv: list[str] | str, stdin: str = "") -> Program | ExecResult:
    """The program an exec runs, or the result of one that cannot start.

    `argv` is an exec-style argv (`["sh", "-c", "echo $HOSTNAME"]`) or a script string; `stdin`
    is what the client sent. A missing executable gives containerd's exec error and exit code 127
    like `kubectl exec` reports."""
    if isinstance(argv, str):
        return Shell(ctx, "sh").run_source(argv)
    if not argv:
        return ExecResult("", "", 0)
    fn = lookup_command(argv[0], ctx)
    if fn is None:
        message = (f'OCI runtime exec failed: exec failed: unable to start container process: '
                   f'exec: "{argv[0]}": executable file not found in $PATH: unknown\n')
        return ExecResult("", message, 127)
    sh = Shell(ctx, argv[0].rsplit("/", 1)[-1])
    return drive(fn, Invocation(list(argv), ctx, sh, stdin), sh)


def run_once(ctx: ShellContext, argv: list[str] | str, *, max_seconds: float = MAX_EXEC_SECONDS) -> ExecResult:
    """Run a command to completion (`kubectl exec`, exec probes): sleeps take no wall time."""
    program = exec_program(ctx, argv)
    if isinstance(program, ExecResult):
        return program
    return run_process(program, max_seconds=max_seconds)
