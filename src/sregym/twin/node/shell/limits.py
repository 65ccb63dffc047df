"""What one process tree may use: time, steps, output, memory and the writable layer.

The twin keeps every value a process makes in its own memory, so these bounds are what keeps an
agent's `kubectl exec` from taking the server down (see the package docstring)."""

from __future__ import annotations

import math
from typing import Any

FOREVER = math.inf
# Simulated cost of one loop iteration that did not sleep: keeps busy loops finite per tick.
BUSY_ITERATION_SECONDS = 0.01
MAX_EXEC_SECONDS = 3600.0
# The server's own safety cap on what one process tree (an exec, a container's main process) may
# hold, whatever the container's memory limit: the twin keeps every value in its own memory.
PROCESS_MEMORY_CAP = 64 << 20
# What a finished exec keeps of its stdout + stderr; a real kubectl streams without bound.
MAX_EXEC_OUTPUT_BYTES = 16 << 20
# Bytes a container's writable layer takes before writes fail with ENOSPC (the twin holds files
# in memory; a real node's disk fills up, or the kubelet evicts at the ephemeral-storage limit).
WRITABLE_LAYER_CAP = 64 << 20
OOM_EXIT_CODE = 137  # 128 + SIGKILL, what the OOM killer leaves
# Effects one exec may produce (each loop iteration, output chunk, sleep ...) before it is ended.
EXEC_STEP_BUDGET = 200000
# Bytes of text one process may copy (string concatenation, file appends) per simulated hour of
# its life before it has used up its budget like a process that runs out of steps: `x="${x}a"` on a
# 30 MB value copies 30 MB per iteration, which the step budget alone would let run for hours of
# server CPU. Per hour, so that a container that appends to a log for days is never stopped.
COPY_BUDGET = 2 << 30
# Python's cost of one small string beyond its text (object header and a list slot): what splitting
# a large value into many fields or lines really takes.
STR_OVERHEAD = 56
# What parsing takes per character of a script (tokens and syntax tree), for large scripts.
PARSE_BYTES_PER_CHAR = 64
# Scripts up to this size are parsed once and cached; larger ones would keep their memory forever.
PARSE_CACHE_MAX_SOURCE = 16 << 10



# --------------------------------------------------------------------------------------- memory
class OutOfMemory(BaseException):
    """The OOM killer's SIGKILL: raised where a process would grow past its memory, unwinding the
    whole process tree. A BaseException so that no command's `except Exception` survives it."""


class BudgetExhausted(BaseException):
    """The process has done as much work as one exec may (see `COPY_BUDGET`); it ends like one
    still running when its step budget runs out."""


class MemoryMeter:
    """Approximate memory of one process tree: what its variables, pipes, command substitutions
    and pending output hold, in bytes of text.

    A real process that grows past its cgroup's limit is killed by the kernel (exit 137); the twin
    holds those same values in the server's own memory, so without this an agent's
    `x=$x$x` loop would grow until the server dies. `limit` is the container's headroom (its
    memory limit minus what it already uses) capped at `PROCESS_MEMORY_CAP`. Counting is cheap
    (lengths added and subtracted where values are made and dropped) and deliberately rough.
    """

    def __init__(self, limit: int = PROCESS_MEMORY_CAP) -> None:
        self.limit = max(0, int(limit))
        self.used = 0
        self.peak = 0
        self.disk_used = 0  # bytes in the writable layer (files written)
        self.disk_limit = WRITABLE_LAYER_CAP
        self.copied = 0  # bytes of text copied, against COPY_BUDGET

    def copy(self, nbytes: int, at: float = 0.0) -> None:
        """Count a copy of `nbytes` (a concatenation) as work done, `at` simulated seconds into
        the process's life."""
        self.copied += nbytes
        if self.copied > COPY_BUDGET * (1 + int(at // 3600)):
            raise BudgetExhausted(self.copied)

    def need(self, nbytes: int) -> None:
        """A transient allocation of `nbytes` on top of what is held: kill if it does not fit."""
        if self.used + nbytes > self.limit:
            raise OutOfMemory(self.used + nbytes)
        self.peak = max(self.peak, self.used + nbytes)

    def charge(self, nbytes: int) -> None:
        self.need(nbytes)
        self.used += nbytes

    def need_split(self, text: str, separators: str = " \t\n") -> None:
        """Splitting `text` into fields or lines makes a string per piece: 30 MB of `a\n` is
        15 million strings, twenty times its text. Counted before splitting (large texts only)."""
        if len(text) < 1 << 16:
            return
        pieces = sum(text.count(sep) for sep in separators) + 1
        self.need(len(text) + pieces * STR_OVERHEAD)

    def need_parse(self, source: str) -> None:
        """Parsing a large script (`eval "$x"`, `sh < big.sh`) builds tokens and a tree."""
        if len(source) >= 1 << 12:
            self.need(len(source) * PARSE_BYTES_PER_CHAR)

    def release(self, nbytes: int) -> None:
        self.used = max(0, self.used - nbytes)


class Vars(dict[str, str]):
    """Shell variables whose values are charged to the process's `MemoryMeter`.

    Only values this shell assigned are charged: a subshell starts from a copy of its parent's
    variables, which costs nothing until written (fork's copy-on-write), and `release()` gives
    back what the shell held when it exits."""

    def __init__(self, items: dict[str, str], meter: MemoryMeter) -> None:
        super().__init__(items)
        self.meter = meter
        self.owned: dict[str, int] = {}

    def __setitem__(self, key: str, value: str) -> None:
        size = len(value)
        self.meter.need(size)
        self.meter.release(self.owned.pop(key, 0))
        self.meter.charge(size)
        self.owned[key] = size
        super().__setitem__(key, value)

    def __delitem__(self, key: str) -> None:
        self.meter.release(self.owned.pop(key, 0))
        super().__delitem__(key)

    def pop(self, key: str, *default: Any) -> Any:  # type: ignore[override]
        self.meter.release(self.owned.pop(key, 0))
        return super().pop(key, *default)

    def update(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def release(self) -> None:
        self.meter.release(sum(self.owned.values()))
        self.owned.clear()

    def __reduce__(self) -> tuple[Any, ...]:
        # pickle/deepcopy: rebuild through __init__ (the default sets items before `meter`).
        return (Vars, (dict(self), self.meter))
