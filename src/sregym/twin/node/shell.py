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
`unset`, `cd`, `shift`, `trap` (ignored), `wait`.

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
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
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


# --------------------------------------------------------------------------------------- effects
@dataclass(frozen=True)
class Output:
    """Bytes written to a stream ("stdout" or "stderr"); `text` may hold several lines."""

    stream: str
    text: str


@dataclass(frozen=True)
class Sleep:
    """Advance the program's own clock; `FOREVER` blocks until the container is killed."""

    seconds: float


@dataclass(frozen=True)
class Listen:
    """Start accepting TCP (or UDP) connections on a port.

    `http_paths`: None means the port is not HTTP (a probe's HTTP GET fails to parse a response);
    an empty tuple means every path answers 200; otherwise only those paths answer 200, others 404.
    `grpc_health`: the port serves grpc.health.v1 and reports SERVING.
    """

    port: int
    protocol: str = "TCP"
    http_paths: tuple[str, ...] | None = ()
    grpc_health: bool = False


@dataclass(frozen=True)
class Unlisten:
    port: int
    protocol: str = "TCP"


@dataclass(frozen=True)
class Usage:
    """The process's steady resource use from now on (None leaves a figure unchanged)."""

    memory_bytes: int | None = None
    cpu_cores: float | None = None


Effect = Output | Sleep | Listen | Unlisten | Usage
Program = Generator[Effect, None, int]


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


class _Vars(dict[str, str]):
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
        return (_Vars, (dict(self), self.meter))


# --------------------------------------------------------------------------------------- context
@dataclass
class ShellContext:
    """Everything a command can see: the container's environment and files, and who it is.

    `files` maps absolute paths to contents (mounted ConfigMap/Secret keys, projected service
    account files, files the program wrote). `resolve(name)` may return a command for an image's
    own binaries. `start_time` is the simulated epoch second the process started (for `date`).
    """

    env: dict[str, str] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    pod: dict[str, Any] | None = None
    container: str = ""
    twin: Any = None
    node: str = ""
    hostname: str = ""
    cwd: str = "/"
    start_time: float = 0.0
    shell_flavour: str = "ash"  # "ash" (busybox/alpine), "dash" (Debian), "bash", "" (no shell)
    resolve: Callable[[str], CommandFn | None] | None = None
    # False for images without a userland (distroless): only `resolve` finds commands.
    userland: bool = True
    extras: dict[str, Any] = field(default_factory=dict)
    # The process tree's memory; one is made on first use (see `MemoryMeter`).
    memory: MemoryMeter | None = None

    def meter(self) -> MemoryMeter:
        if self.memory is None:
            self.memory = MemoryMeter()
        return self.memory

    def directories(self) -> set[str]:
        """Directories implied by the files (for `test -d`, `cat DIR`, `ls`)."""
        dirs = {"/"}
        for path in self.files:
            parts = path.strip("/").split("/")[:-1]
            for i in range(1, len(parts) + 1):
                dirs.add("/" + "/".join(parts[:i]))
        return dirs


@dataclass
class Invocation:
    """One command call: argv, stdin, the shell state, and a buffer for simple writers."""

    argv: list[str]
    ctx: ShellContext
    shell: Shell
    stdin: str = ""
    pending: list[Effect] = field(default_factory=list)
    pending_bytes: int = 0  # text in `pending`, held in the process's memory until flushed

    @property
    def name(self) -> str:
        return self.argv[0].rsplit("/", 1)[-1] if self.argv else ""

    @property
    def args(self) -> list[str]:
        return self.argv[1:]

    def write(self, text: str, stream: str = "stdout") -> None:
        if text:
            self.pending_bytes += len(text)
            self.ctx.meter().need(self.pending_bytes)
            self.pending.append(Output(stream, text))

    def error(self, text: str) -> None:
        self.write(text if text.endswith("\n") else text + "\n", "stderr")

    @property
    def now(self) -> float:
        """Simulated epoch seconds at this point of the program."""
        return self.ctx.start_time + self.shell.offset

    def read_file(self, path: str) -> str | None:
        return self.ctx.files.get(self.shell.abspath(path))


CommandFn = Callable[[Invocation], "int | Program | None"]
COMMANDS: dict[str, CommandFn] = {}


def command(*names: str) -> Callable[[CommandFn], CommandFn]:
    """Register a command under one or more names (the basename is looked up: `/bin/echo` ⇒
    `echo`). Later registrations replace earlier ones, so a richer module can override a builtin."""

    def wrap(fn: CommandFn) -> CommandFn:
        for name in names:
            COMMANDS[name] = fn
        return fn

    return wrap


def lookup_command(name: str, ctx: ShellContext | None = None) -> CommandFn | None:
    base = name.rsplit("/", 1)[-1]
    if ctx is not None and ctx.resolve is not None:
        found = ctx.resolve(base)
        if found is not None:
            return found
    if ctx is not None and not ctx.userland:
        return None
    return COMMANDS.get(base)


# ---------------------------------------------------------------------------------------- errors
class ShellSyntaxError(Exception):
    pass


class _Exit(Exception):
    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class _LoopControl(Exception):
    def __init__(self, kind: str, levels: int = 1) -> None:
        super().__init__(kind)
        self.kind = kind
        self.levels = levels


# ------------------------------------------------------------------------------------------- AST
# A word is a tuple of segments: ("lit", text, quoted) | ("var", expr, quoted) |
# ("cmd", source, quoted) | ("arith", expr, quoted).
Segment = tuple[str, str, bool]
Word = tuple[Segment, ...]


@dataclass
class Redirect:
    fd: int  # 0, 1, 2 or -1 for both (&>)
    op: str  # ">", ">>", "<", ">&"
    target: Word | int


@dataclass
class Simple:
    assigns: list[tuple[str, Word]]
    words: list[Word]
    redirects: list[Redirect] = field(default_factory=list)


@dataclass
class Pipeline:
    commands: list[Any]
    negate: bool = False


@dataclass
class AndOr:
    first: Any
    rest: list[tuple[str, Any]]


@dataclass
class Sequence:
    items: list[Any]


@dataclass
class Group:
    body: Sequence
    subshell: bool
    redirects: list[Redirect] = field(default_factory=list)


@dataclass
class If:
    branches: list[tuple[Sequence, Sequence]]
    otherwise: Sequence | None
    redirects: list[Redirect] = field(default_factory=list)


@dataclass
class Loop:
    until: bool
    cond: Sequence
    body: Sequence
    redirects: list[Redirect] = field(default_factory=list)


@dataclass
class For:
    var: str
    items: list[Word] | None
    body: Sequence
    redirects: list[Redirect] = field(default_factory=list)


@dataclass
class Case:
    subject: Word
    arms: list[tuple[list[Word], Sequence]]
    redirects: list[Redirect] = field(default_factory=list)


# ------------------------------------------------------------------------------------- tokenizer
_OPERATORS = ("&&", "||", ";;", ">>", "&>", ">&", "<&", ";", "&", "|", "(", ")", "<", ">", "\n")
_RESERVED = {"if", "then", "elif", "else", "fi", "while", "until", "do", "done", "for", "in",
             "case", "esac", "{", "}", "!"}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass
class _Tok:
    kind: str  # "word" | "op" | "io" (fd-prefixed redirection, e.g. 2>)
    value: Any
    raw: str = ""


def _scan_balanced(src: str, i: int, open_: str, close: str) -> int:
    """Index just past the `close` matching the already-consumed `open_`, respecting quotes."""
    depth = 1
    while i < len(src):
        c = src[i]
        if c == "\\":
            i += 2
            continue
        if c == "'":
            j = src.find("'", i + 1)
            if j < 0:
                raise ShellSyntaxError("syntax error: unterminated quoted string")
            i = j + 1
            continue
        if c == '"':
            i = _scan_double(src, i + 1)[1]
            continue
        if src.startswith(open_, i):
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ShellSyntaxError(f"unexpected end of file (expecting \"{close}\")")


def _scan_dollar(src: str, i: int, quoted: bool) -> tuple[Segment, int]:
    """Parse an expansion starting at src[i] == '$'."""
    nxt = src[i + 1] if i + 1 < len(src) else ""
    if src.startswith("$((", i):
        end = _scan_balanced(src, i + 3, "(", ")")
        if end >= len(src) or src[end] != ")":
            raise ShellSyntaxError("missing )) in arithmetic expansion")
        return ("arith", src[i + 3:end - 1], quoted), end + 1
    if nxt == "(":
        end = _scan_balanced(src, i + 2, "(", ")")
        return ("cmd", src[i + 2:end - 1], quoted), end
    if nxt == "{":
        end = src.find("}", i + 2)
        if end < 0:
            raise ShellSyntaxError("bad substitution")
        return ("var", src[i + 2:end], quoted), end + 1
    m = _NAME.match(src, i + 1)
    if m:
        return ("var", m.group(0), quoted), m.end()
    if nxt and (nxt.isdigit() or nxt in "?#$@*!-"):
        return ("var", nxt, quoted), i + 2
    return ("lit", "$", quoted), i + 1


def _scan_backquote(src: str, i: int, quoted: bool) -> tuple[Segment, int]:
    """A backquoted command substitution starting at src[i] == "`"."""
    end = src.find("`", i + 1)
    if end < 0:
        raise ShellSyntaxError("unterminated backquote")
    return ("cmd", src[i + 1:end], quoted), end + 1


def _scan_double(src: str, i: int) -> tuple[list[Segment], int]:
    """Parse a double-quoted string body starting after the opening quote."""
    segs: list[Segment] = []
    buf = ""
    while i < len(src):
        c = src[i]
        if c == '"':
            if buf or not segs:
                segs.append(("lit", buf, True))
            return segs, i + 1
        if c == "\\" and i + 1 < len(src) and src[i + 1] in '$`"\\\n':
            if src[i + 1] != "\n":
                buf += src[i + 1]
            i += 2
            continue
        if c == "$":
            seg, i = _scan_dollar(src, i, True)
            if seg[0] == "lit":
                buf += seg[1]
                continue
            if buf:
                segs.append(("lit", buf, True))
                buf = ""
            segs.append(seg)
            continue
        if c == "`":
            seg, i = _scan_backquote(src, i, True)
            if buf:
                segs.append(("lit", buf, True))
                buf = ""
            segs.append(seg)
            continue
        buf += c
        i += 1
    raise ShellSyntaxError("syntax error: unterminated quoted string")


def tokenize(src: str) -> list[_Tok]:
    toks: list[_Tok] = []
    i = 0
    n = len(src)
    while i < n:
        c = src[i]
        if c in " \t":
            i += 1
            continue
        if c == "\\" and i + 1 < n and src[i + 1] == "\n":
            i += 2
            continue
        if c == "#" and (not toks or toks[-1].kind == "op" or src[i - 1] in " \t"):
            while i < n and src[i] != "\n":
                i += 1
            continue
        # fd-prefixed redirection: 2>, 2>>, 1>&2, 2>&1
        m = re.match(r"([0-9])(>>|>&|>|<)", src[i:])
        if m:
            toks.append(_Tok("io", (int(m.group(1)), m.group(2))))
            i += m.end()
            continue
        op = next((o for o in _OPERATORS if src.startswith(o, i)), None)
        if op is not None:
            toks.append(_Tok("op", op))
            i += len(op)
            continue
        segs: list[Segment] = []
        raw_start = i
        buf = ""
        while i < n:
            c = src[i]
            if c in " \t\n;&|()<>":
                break
            if c == "\\":
                if i + 1 < n and src[i + 1] == "\n":
                    i += 2
                    continue
                if buf:
                    segs.append(("lit", buf, False))
                    buf = ""
                segs.append(("lit", src[i + 1:i + 2], True))
                i += 2
                continue
            if c == "'":
                end = src.find("'", i + 1)
                if end < 0:
                    raise ShellSyntaxError("syntax error: unterminated quoted string")
                if buf:
                    segs.append(("lit", buf, False))
                    buf = ""
                segs.append(("lit", src[i + 1:end], True))
                i = end + 1
                continue
            if c == '"':
                if buf:
                    segs.append(("lit", buf, False))
                    buf = ""
                inner, i = _scan_double(src, i + 1)
                segs.extend(inner)
                continue
            if c == "`":
                seg, i = _scan_backquote(src, i, False)
                if buf:
                    segs.append(("lit", buf, False))
                    buf = ""
                segs.append(seg)
                continue
            if c == "$":
                seg, i = _scan_dollar(src, i, False)
                if seg[0] == "lit":
                    buf += seg[1]
                    continue
                if buf:
                    segs.append(("lit", buf, False))
                    buf = ""
                segs.append(seg)
                continue
            buf += c
            i += 1
        if buf:
            segs.append(("lit", buf, False))
        toks.append(_Tok("word", tuple(segs), src[raw_start:i]))
    return toks


def _plain(word: Word) -> str | None:
    """The word's text when it is one unquoted literal (for reserved words and names)."""
    if len(word) == 1 and word[0][0] == "lit" and not word[0][2]:
        return word[0][1]
    return None


# ---------------------------------------------------------------------------------------- parser
class _Parser:
    def __init__(self, toks: list[_Tok]) -> None:
        self.toks = toks
        self.i = 0

    def peek(self) -> _Tok | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def peek_reserved(self) -> str | None:
        tok = self.peek()
        if tok is not None and tok.kind == "word":
            text = _plain(tok.value)
            if text in _RESERVED:
                return text
        return None

    def is_op(self, *ops: str) -> bool:
        tok = self.peek()
        return tok is not None and tok.kind == "op" and tok.value in ops

    def expect_op(self, op: str) -> None:
        if not self.is_op(op):
            raise ShellSyntaxError(f'syntax error: unexpected {self._describe()} (expecting "{op}")')
        self.i += 1

    def expect_reserved(self, word: str) -> None:
        self.skip_newlines()
        if self.peek_reserved() != word:
            raise ShellSyntaxError(f'syntax error: unexpected {self._describe()} (expecting "{word}")')
        self.i += 1

    def _describe(self) -> str:
        tok = self.peek()
        if tok is None:
            return "end of file"
        if tok.kind == "op":
            return "newline" if tok.value == "\n" else f'"{tok.value}"'
        return f'word "{tok.raw}"'

    def skip_newlines(self) -> None:
        while self.is_op("\n"):
            self.i += 1

    def parse_program(self) -> Sequence:
        seq = self.parse_sequence(())
        if self.peek() is not None:
            raise ShellSyntaxError(f"syntax error: unexpected {self._describe()}")
        return seq

    def parse_sequence(self, terminators: tuple[str, ...]) -> Sequence:
        items: list[Any] = []
        while True:
            while self.is_op("\n", ";", "&"):
                self.i += 1
            tok = self.peek()
            if tok is None or self.is_op(")", ";;"):
                break
            if self.peek_reserved() in terminators:
                break
            items.append(self.parse_and_or())
            if not self.is_op("\n", ";", "&"):
                break
        return Sequence(items)

    def parse_and_or(self) -> AndOr:
        first = self.parse_pipeline()
        rest: list[tuple[str, Any]] = []
        while self.is_op("&&", "||"):
            op = self.peek().value  # type: ignore[union-attr]
            self.i += 1
            self.skip_newlines()
            rest.append((op, self.parse_pipeline()))
        return AndOr(first, rest)

    def parse_pipeline(self) -> Pipeline:
        negate = False
        if self.peek_reserved() == "!":
            negate = True
            self.i += 1
        cmds = [self.parse_command()]
        while self.is_op("|"):
            self.i += 1
            self.skip_newlines()
            cmds.append(self.parse_command())
        return Pipeline(cmds, negate)

    def parse_command(self) -> Any:
        word = self.peek_reserved()
        if word == "if":
            node: Any = self.parse_if()
        elif word in ("while", "until"):
            self.i += 1
            cond = self.parse_sequence(("do",))
            self.expect_reserved("do")
            body = self.parse_sequence(("done",))
            self.expect_reserved("done")
            node = Loop(word == "until", cond, body)
        elif word == "for":
            node = self.parse_for()
        elif word == "case":
            node = self.parse_case()
        elif word == "{":
            self.i += 1
            body = self.parse_sequence(("}",))
            self.expect_reserved("}")
            node = Group(body, subshell=False)
        elif self.is_op("("):
            self.i += 1
            body = self.parse_sequence(())
            self.expect_op(")")
            node = Group(body, subshell=True)
        elif word is not None and word not in ("!",):
            raise ShellSyntaxError(f'syntax error: unexpected "{word}"')
        else:
            return self.parse_simple()
        node.redirects = self.parse_redirects()
        return node

    def parse_if(self) -> If:
        self.i += 1
        branches = []
        cond = self.parse_sequence(("then",))
        self.expect_reserved("then")
        body = self.parse_sequence(("elif", "else", "fi"))
        branches.append((cond, body))
        otherwise = None
        while True:
            self.skip_newlines()
            word = self.peek_reserved()
            if word == "elif":
                self.i += 1
                cond = self.parse_sequence(("then",))
                self.expect_reserved("then")
                body = self.parse_sequence(("elif", "else", "fi"))
                branches.append((cond, body))
            elif word == "else":
                self.i += 1
                otherwise = self.parse_sequence(("fi",))
            else:
                break
        self.expect_reserved("fi")
        return If(branches, otherwise)

    def parse_for(self) -> For:
        self.i += 1
        tok = self.peek()
        if tok is None or tok.kind != "word" or not _NAME.fullmatch(_plain(tok.value) or ""):
            raise ShellSyntaxError("syntax error: bad for loop variable")
        var = _plain(tok.value) or ""
        self.i += 1
        self.skip_newlines()
        items: list[Word] | None = None
        if self.peek_reserved() == "in":
            self.i += 1
            items = []
            while True:
                tok = self.peek()
                if tok is None or tok.kind != "word":
                    break
                items.append(tok.value)
                self.i += 1
        while self.is_op(";", "\n"):
            self.i += 1
        self.expect_reserved("do")
        body = self.parse_sequence(("done",))
        self.expect_reserved("done")
        return For(var, items, body)

    def parse_case(self) -> Case:
        self.i += 1
        tok = self.peek()
        if tok is None or tok.kind != "word":
            raise ShellSyntaxError("syntax error: bad case subject")
        subject = tok.value
        self.i += 1
        self.expect_reserved("in")
        arms: list[tuple[list[Word], Sequence]] = []
        while True:
            self.skip_newlines()
            if self.peek_reserved() == "esac":
                self.i += 1
                break
            if self.is_op("("):
                self.i += 1
            patterns: list[Word] = []
            while True:
                tok = self.peek()
                if tok is None or tok.kind != "word":
                    raise ShellSyntaxError("syntax error: bad case pattern")
                patterns.append(tok.value)
                self.i += 1
                if self.is_op("|"):
                    self.i += 1
                    continue
                break
            self.expect_op(")")
            body = self.parse_sequence(("esac",))
            arms.append((patterns, body))
            if self.is_op(";;"):
                self.i += 1
        return Case(subject, arms)

    def parse_redirects(self) -> list[Redirect]:
        out: list[Redirect] = []
        while True:
            red = self._redirect()
            if red is None:
                return out
            out.append(red)

    def _redirect(self) -> Redirect | None:
        tok = self.peek()
        if tok is None:
            return None
        if tok.kind == "io":
            fd, op = tok.value
        elif tok.kind == "op" and tok.value in (">", ">>", "<", ">&", "&>", "<&"):
            op = tok.value
            fd = 0 if op in ("<", "<&") else (-1 if op == "&>" else 1)
            op = ">" if op == "&>" else op
        else:
            return None
        self.i += 1
        target_tok = self.peek()
        if target_tok is None or target_tok.kind != "word":
            raise ShellSyntaxError(f"syntax error: unexpected {self._describe()}")
        self.i += 1
        if op in (">&", "<&"):
            text = _plain(target_tok.value) or ""
            if text.isdigit():
                return Redirect(fd, ">&", int(text))
            if op == ">&":  # `>& file` means both streams to file
                return Redirect(-1, ">", target_tok.value)
        return Redirect(fd, op, target_tok.value)

    def parse_simple(self) -> Simple:
        assigns: list[tuple[str, Word]] = []
        words: list[Word] = []
        redirects: list[Redirect] = []
        while True:
            red = self._redirect()
            if red is not None:
                redirects.append(red)
                continue
            tok = self.peek()
            if tok is None or tok.kind != "word":
                break
            if words and self.peek_reserved() in ("}",) and False:
                break
            if not words:
                first = tok.value[0] if tok.value else None
                if first and first[0] == "lit" and not first[2]:
                    m = re.match(r"([A-Za-z_][A-Za-z0-9_]*)=", first[1])
                    if m:
                        rest_lit = first[1][m.end():]
                        value: Word = ((("lit", rest_lit, False),) if rest_lit else ()) + tok.value[1:]
                        assigns.append((m.group(1), value))
                        self.i += 1
                        continue
            words.append(tok.value)
            self.i += 1
        if not words and not assigns and not redirects:
            raise ShellSyntaxError(f"syntax error: unexpected {self._describe()}")
        return Simple(assigns, words, redirects)


_PARSE_CACHE: dict[str, Sequence] = {}


def parse(source: str) -> Sequence:
    """Parse a script (cached: the same command line is parsed once per run)."""
    tree = _PARSE_CACHE.get(source)
    if tree is None:
        tree = _Parser(tokenize(source)).parse_program()
        if len(_PARSE_CACHE) < 4096 and len(source) <= PARSE_CACHE_MAX_SOURCE:
            _PARSE_CACHE[source] = tree
    return tree


# ---------------------------------------------------------------------------------- interpreter
class Shell:
    """The state of one shell process: variables, positional parameters, last status, clock."""

    def __init__(self, ctx: ShellContext, name: str = "sh", positional: list[str] | None = None) -> None:
        self.ctx = ctx
        self.name = name
        self.meter = ctx.meter()
        self._vars = _Vars(ctx.env, self.meter)
        self.exported: set[str] = set(ctx.env)
        self.positional = list(positional or [])
        self.status = 0
        self.errexit = False
        self.offset = 0.0  # simulated seconds since the process started
        self.lineno = 1

    @property
    def vars(self) -> dict[str, str]:
        return self._vars

    @vars.setter
    def vars(self, values: dict[str, str]) -> None:
        """Replacing the variables (a subshell's copy, `VAR=x cmd` restored) drops what the old
        ones held."""
        self._vars.release()
        self._vars = _Vars(values, self.meter)

    def release(self) -> None:
        """The shell exits: what its variables held is free again."""
        self._vars.release()

    # ---------------------------------------------------------------- helpers
    def abspath(self, path: str) -> str:
        if not path.startswith("/"):
            path = self.ctx.cwd.rstrip("/") + "/" + path
        parts: list[str] = []
        for part in path.split("/"):
            if part in ("", "."):
                continue
            if part == "..":
                if parts:
                    parts.pop()
                continue
            parts.append(part)
        return "/" + "/".join(parts)

    def exported_env(self) -> dict[str, str]:
        return {k: self.vars[k] for k in sorted(self.exported) if k in self.vars}

    def not_found_message(self, name: str) -> str:
        flavour = self.ctx.shell_flavour or "ash"
        if flavour == "bash":
            return f"{self.name}: line {self.lineno}: {name}: command not found"
        if flavour == "dash":
            return f"{self.name}: {self.lineno}: {name}: not found"
        return f"{self.name}: {name}: not found"

    # ------------------------------------------------------------- expansion
    def _param(self, expr: str) -> str | None:
        if expr == "?":
            return str(self.status)
        if expr == "$":
            return "1"
        if expr == "!":
            return ""
        if expr == "#":
            return str(len(self.positional))
        if expr == "-":
            return "e" if self.errexit else ""
        if expr in ("@", "*"):
            return " ".join(self.positional)
        if expr == "0":
            return self.name
        if expr.isdigit():
            index = int(expr)
            return self.positional[index - 1] if index <= len(self.positional) else None
        return self.vars.get(expr)

    def _expand_var(self, expr: str) -> Generator[Effect, None, str]:
        if expr.startswith("#") and len(expr) > 1:
            return str(len(self._param(expr[1:]) or ""))
        m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[?#$@*!-])(:?[-=+?])?(.*)", expr, re.S)
        if not m:
            raise ShellSyntaxError(f"{self.name}: syntax error: bad substitution")
        name, op, arg = m.group(1), m.group(2), m.group(3)
        value = self._param(name)
        if not op:
            if arg:
                raise ShellSyntaxError(f"{self.name}: syntax error: bad substitution")
            return value or ""
        unset = value is None or (op.startswith(":") and value == "")
        kind = op[-1]
        if kind == "-":
            return (yield from self._expand_text(arg)) if unset else (value or "")
        if kind == "=":
            if unset:
                value = yield from self._expand_text(arg)
                self.vars[name] = value
            return value or ""
        if kind == "+":
            return "" if unset else (yield from self._expand_text(arg))
        if unset:  # "?"
            message = (yield from self._expand_text(arg)) or "parameter not set"
            yield Output("stderr", f"{self.name}: {name}: {message}\n")
            raise _Exit(2 if self.ctx.shell_flavour != "bash" else 1)
        return value or ""

    def _expand_text(self, text: str) -> Generator[Effect, None, str]:
        """Expand a default-value word of `${X:-word}` (no field splitting)."""
        if not text:
            return ""
        toks = tokenize(text.replace("\n", " "))
        parts = []
        for tok in toks:
            if tok.kind == "word":
                parts.append((yield from self.expand_word(tok.value, split=False))[0])
        return " ".join(parts)

    def _command_substitution(self, source: str) -> Generator[Effect, None, str]:
        sub = Shell(self.ctx, self.name, self.positional)
        sub.vars = dict(self.vars)
        sub.exported = set(self.exported)
        sub.offset = self.offset
        captured: list[str] = []
        try:
            code = yield from _capture(sub.run_source(source), captured, self.meter)
            self.offset = sub.offset
            self.status = code
            return "".join(captured).rstrip("\n")
        finally:
            sub.release()
            self.meter.release(sum(map(len, captured)))

    def expand_word(self, word: Word, split: bool = True) -> Generator[Effect, None, list[str]]:
        """Expand one word into fields (parameter, command and arithmetic expansion, then field
        splitting of unquoted expansions). No pathname globbing: containers have no such files."""
        fields: list[str] = []
        current = ""
        have_field = False
        for kind, text, quoted in word:
            if kind == "lit":
                current += text
                have_field = have_field or quoted or bool(text)
                continue
            if kind == "var":
                value = yield from self._expand_var(text)
            elif kind == "cmd":
                value = yield from self._command_substitution(text)
            else:
                value = str(self._arith(text))
            self.meter.need(len(current) + len(value))
            self.meter.copy(len(current) + len(value), self.offset)
            if quoted or not split:
                current += value
                have_field = True
                continue
            self.meter.need_split(value)
            pieces = value.split()
            if not pieces:
                if value and current:
                    fields.append(current)
                    current, have_field = "", False
                continue
            if value[:1].isspace() and (current or have_field):
                fields.append(current)
                current = ""
            current += pieces[0]
            for piece in pieces[1:]:
                fields.append(current)
                current = piece
            have_field = True
            if value[-1:].isspace():
                fields.append(current)
                current, have_field = "", False
        if current or have_field:
            fields.append(current)
        return fields

    def expand_words(self, words: list[Word]) -> Generator[Effect, None, list[str]]:
        out: list[str] = []
        for word in words:
            if len(word) == 1 and word[0] == ("var", "@", True):
                out.extend(self.positional)
                continue
            out.extend((yield from self.expand_word(word)))
        return out

    def _arith(self, expr: str) -> int:
        def substitute(m: re.Match[str]) -> str:
            value = self.vars.get(m.group(0), "0") or "0"
            return value if re.fullmatch(r"-?\d+", value.strip()) else "0"

        text = re.sub(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", lambda m: self.vars.get(m.group(1), "0"), expr)
        text = re.sub(r"[A-Za-z_][A-Za-z0-9_]*", substitute, text)
        self.meter.need_parse(text)
        try:
            return _eval_arith(ast.parse(text.strip() or "0", mode="eval").body)
        except (SyntaxError, ValueError, ZeroDivisionError, RecursionError) as exc:
            raise ShellSyntaxError(f"{self.name}: arithmetic syntax error") from exc

    # ------------------------------------------------------------- execution
    def run_source(self, source: str) -> Program:
        """Parse and run a script; syntax errors print like sh does and exit 2."""
        self.meter.need_parse(source)
        try:
            tree = parse(source)
        except ShellSyntaxError as exc:
            yield Output("stderr", f"{self.name}: {exc}\n")
            return 2
        try:
            yield from self.run_sequence(tree)
        except _Exit as stop:
            return stop.code
        except _LoopControl:
            pass
        except ShellSyntaxError as exc:
            yield Output("stderr", f"{exc}\n")
            return 2
        return self.status

    def run_sequence(self, seq: Sequence) -> Generator[Effect, None, int]:
        for item in seq.items:
            self.status = yield from self.run_and_or(item)
            self.lineno += 1
        return self.status

    def run_and_or(self, node: AndOr) -> Generator[Effect, None, int]:
        status = yield from self.run_pipeline(node.first, checked=not node.rest)
        for index, (op, pipe) in enumerate(node.rest):
            if (op == "&&") == (status == 0):
                last = index == len(node.rest) - 1
                status = yield from self.run_pipeline(pipe, checked=last)
        self.status = status
        return status

    def run_pipeline(self, pipe: Pipeline, checked: bool = True) -> Generator[Effect, None, int]:
        stdin = ""
        status = 0
        held = 0  # the pipe's content, held until the next command has read it
        try:
            for index, cmd in enumerate(pipe.commands):
                last = index == len(pipe.commands) - 1
                if last:
                    status = yield from self.run_command(cmd, stdin)
                else:
                    captured: list[str] = []
                    try:
                        status = yield from _capture(self.run_command(cmd, stdin), captured, self.meter)
                    finally:
                        self.meter.release(held)
                        held = sum(map(len, captured))
                    stdin = "".join(captured)
        finally:
            self.meter.release(held)
        if pipe.negate:
            status = 0 if status else 1
        self.status = status
        if checked and self.errexit and status != 0 and not pipe.negate:
            raise _Exit(status)
        return status

    def run_command(self, node: Any, stdin: str = "") -> Generator[Effect, None, int]:
        if isinstance(node, Simple):
            return (yield from self.run_simple(node, stdin))
        body = self._run_compound(node, stdin)
        return (yield from self._redirected(body, node.redirects))

    def _run_compound(self, node: Any, stdin: str) -> Program:
        if isinstance(node, Group):
            if not node.subshell:
                return (yield from self.run_sequence(node.body))
            sub = Shell(self.ctx, self.name, self.positional)
            sub.vars, sub.exported, sub.offset = dict(self.vars), set(self.exported), self.offset
            try:
                status = yield from sub.run_sequence(node.body)
            except _Exit as stop:
                status = stop.code
            finally:
                sub.release()
            self.offset = sub.offset
            return status
        if isinstance(node, If):
            for cond, body in node.branches:
                if (yield from self._condition(cond)) == 0:
                    return (yield from self.run_sequence(body))
            if node.otherwise is not None:
                return (yield from self.run_sequence(node.otherwise))
            return 0
        if isinstance(node, Loop):
            return (yield from self._run_loop(node))
        if isinstance(node, For):
            items = (yield from self.expand_words(node.items)) if node.items is not None else \
                list(self.positional)
            status = 0
            for item in items:
                self.vars[node.var] = item
                try:
                    status = yield from self.run_sequence(node.body)
                except _LoopControl as ctl:
                    if ctl.levels > 1:
                        raise _LoopControl(ctl.kind, ctl.levels - 1) from None
                    if ctl.kind == "break":
                        break
            return status
        if isinstance(node, Case):
            subject = " ".join((yield from self.expand_word(node.subject, split=False)))
            for patterns, body in node.arms:
                for pattern in patterns:
                    text = " ".join((yield from self.expand_word(pattern, split=False)))
                    if _glob_match(text, subject):
                        return (yield from self.run_sequence(body))
            return 0
        raise ShellSyntaxError(f"unsupported construct {type(node).__name__}")

    def _condition(self, cond: Sequence) -> Generator[Effect, None, int]:
        saved = self.errexit
        self.errexit = False
        try:
            return (yield from self.run_sequence(cond))
        finally:
            self.errexit = saved

    def _run_loop(self, node: Loop) -> Program:
        status = 0
        while True:
            started = self.offset
            cond = yield from self._condition(node.cond)
            if (cond == 0) == node.until:
                break
            try:
                status = yield from self.run_sequence(node.body)
            except _LoopControl as ctl:
                if ctl.levels > 1:
                    raise _LoopControl(ctl.kind, ctl.levels - 1) from None
                if ctl.kind == "break":
                    break
            if self.offset == started:
                # A loop that never sleeps still burns time: keep the simulation moving.
                self.offset += BUSY_ITERATION_SECONDS
                yield Sleep(BUSY_ITERATION_SECONDS)
        return status

    def _redirected(self, body: Generator[Effect, None, int], redirects: list[Redirect],
                    stdin_holder: list[str] | None = None) -> Program:
        if not redirects:
            return (yield from body)
        # Map each output stream to a destination: "stdout", "stderr", None (discard) or a path.
        routes: dict[str, str | None] = {"stdout": "stdout", "stderr": "stderr"}
        appends: dict[str, bool] = {}
        for red in redirects:
            if red.op == "<":
                continue
            if red.op == ">&":
                src = "stderr" if red.fd == 2 else "stdout"
                target = {1: "stdout", 2: "stderr"}.get(red.target) if isinstance(red.target, int) else None
                routes[src] = routes.get(target or "stdout", target)
                continue
            fields = yield from self.expand_word(red.target)  # type: ignore[arg-type]
            path = fields[0] if fields else ""
            dest: str | None
            if path == "/dev/null":
                dest = None
            elif path in ("/dev/stdout", "/proc/self/fd/1"):
                dest = "stdout"
            elif path in ("/dev/stderr", "/proc/self/fd/2"):
                dest = "stderr"
            elif path in ("/proc/1/fd/1", "/proc/1/fd/2"):
                # PID 1's stdout/stderr: what the container runtime logs (`kubectl logs`).
                dest = "pid1:" + ("stdout" if path.endswith("/1") else "stderr")
            else:
                dest = "file:" + self.abspath(path)
                if red.op == ">" or dest not in appends:
                    if red.op == ">":
                        self.meter.disk_used = max(
                            0, self.meter.disk_used - len(self.ctx.files.get(dest[5:], "")))
                        self.ctx.files[dest[5:]] = ""
                    appends[dest] = True
            for stream in (("stdout", "stderr") if red.fd == -1 else
                           ("stderr",) if red.fd == 2 else ("stdout",)):
                routes[stream] = dest
        result = 0
        gen = body
        full = False
        try:
            effect = next(gen)
            while True:
                if isinstance(effect, Output):
                    dest = routes.get(effect.stream, effect.stream)
                    if dest is not None and dest.startswith("file:"):
                        if not self._append_file(dest[5:], effect.text) and not full:
                            full = True
                            yield Output("stderr", f"{self.name}: write error: No space left on device\n")
                    elif dest is not None and dest.startswith("pid1:"):
                        _append_to_main_log(self.ctx, dest[5:], effect.text)
                    elif dest is not None:
                        yield Output(dest, effect.text)
                else:
                    yield effect
                effect = next(gen)
        except StopIteration as stop:
            result = stop.value if stop.value is not None else 0
        return result or (1 if full else 0)

    def _append_file(self, path: str, text: str) -> bool:
        """Append to a file in the writable layer; False (ENOSPC, nothing written) once the layer
        is at `WRITABLE_LAYER_CAP`, so `cat f >> f` in a loop cannot grow without bound."""
        meter = self.meter
        if meter.disk_used + len(text) > meter.disk_limit:
            return False
        old = self.ctx.files.get(path, "")
        meter.copy(len(old) + len(text), self.offset)
        meter.disk_used += len(text)
        self.ctx.files[path] = old + text
        return True

    def run_simple(self, node: Simple, stdin: str) -> Program:
        argv = yield from self.expand_words(node.words)
        assigns: dict[str, str] = {}
        for name, word in node.assigns:
            assigns[name] = " ".join((yield from self.expand_word(word, split=False)))
        for red in node.redirects:
            if red.op == "<":
                fields = yield from self.expand_word(red.target)  # type: ignore[arg-type]
                path = self.abspath(fields[0] if fields else "")
                if path not in self.ctx.files and path != "/dev/null":
                    yield Output("stderr", f"{self.name}: can't open {fields[0] if fields else ''}: "
                                           "no such file\n")
                    return 1
                stdin = self.ctx.files.get(path, "")
        if not argv:
            self.vars.update(assigns)
            return 0
        return (yield from self._redirected(self._invoke(argv, assigns, stdin), node.redirects))

    def _invoke(self, argv: list[str], assigns: dict[str, str], stdin: str) -> Program:
        name = argv[0]
        builtin = _BUILTINS.get(name)
        if builtin is not None:
            self.vars.update(assigns)
            return (yield from builtin(self, argv, stdin))
        fn = lookup_command(name, self.ctx)
        if fn is None:
            yield Output("stderr", self.not_found_message(name) + "\n")
            return 127
        saved_vars, saved_exported = None, None
        if assigns:
            saved_vars, saved_exported = dict(self.vars), set(self.exported)
            self.vars.update(assigns)
            self.exported.update(assigns)
        call = Invocation(list(argv), self.ctx, self, stdin)
        try:
            status = yield from _drive(fn, call, self)
        finally:
            if saved_vars is not None:
                self.vars, self.exported = saved_vars, saved_exported  # type: ignore[assignment]
        return status


def _drive(fn: CommandFn, call: Invocation, shell: Shell) -> Program:
    """Run a command function, flushing its buffered writes and tracking slept time."""
    result = fn(call)
    if isinstance(result, Iterator):
        gen = result
        try:
            effect = next(gen)
            while True:
                for pending in call.pending:
                    yield pending
                call.pending.clear()
                call.pending_bytes = 0
                if isinstance(effect, Sleep):
                    shell.offset += effect.seconds
                yield effect
                effect = next(gen)
        except StopIteration as stop:
            result = stop.value
    for pending in call.pending:
        yield pending
    call.pending.clear()
    call.pending_bytes = 0
    return int(result or 0)


def _capture(gen: Generator[Effect, None, int], captured: list[str], meter: MemoryMeter) -> Program:
    """Run `gen`, collecting its stdout into `captured` (pipes, `$(...)`).

    The twin's pipes hold the whole stream (the reader runs after the writer), so what is captured
    is charged to `meter`; the caller releases `sum(map(len, captured))` when it is done with it."""
    try:
        effect = next(gen)
        while True:
            if isinstance(effect, Output) and effect.stream == "stdout":
                meter.charge(len(effect.text))
                captured.append(effect.text)
            else:
                yield effect
            effect = next(gen)
    except StopIteration as stop:
        return stop.value if stop.value is not None else 0


_ARITH_OPS: dict[type, Callable[..., int]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv, ast.Div: operator.floordiv, ast.Mod: operator.mod,
    ast.LShift: operator.lshift, ast.RShift: operator.rshift, ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_, ast.BitXor: operator.xor,
}
_CMP_OPS: dict[type, Callable[..., bool]] = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
    ast.Eq: operator.eq, ast.NotEq: operator.ne,
}


def _int64(value: int) -> int:
    """Wrap to a signed 64-bit integer, as sh's `intmax_t` arithmetic does (and so that
    `$((1<<99999999999))` cannot make a gigabyte-sized Python int)."""
    value &= 0xFFFFFFFFFFFFFFFF
    return value - (1 << 64) if value >= 1 << 63 else value


def _eval_arith(node: ast.AST) -> int:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return _int64(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITH_OPS:
        left, right = _eval_arith(node.left), _eval_arith(node.right)
        if isinstance(node.op, ast.LShift | ast.RShift):
            right &= 63  # the shift count as x86-64 masks it: $((1<<64)) is 1
        return _int64(int(_ARITH_OPS[type(node.op)](left, right)))
    if isinstance(node, ast.UnaryOp):
        value = _eval_arith(node.operand)
        if isinstance(node.op, ast.USub):
            return _int64(-value)
        if isinstance(node.op, ast.Not):
            return int(not value)
        return value
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _CMP_OPS:
        return int(_CMP_OPS[type(node.ops[0])](_eval_arith(node.left), _eval_arith(node.comparators[0])))
    if isinstance(node, ast.BoolOp):
        values = [_eval_arith(v) for v in node.values]
        return int(all(values) if isinstance(node.op, ast.And) else any(values))
    raise ValueError("unsupported arithmetic")


def _glob_tokens(pattern: str) -> list[str | re.Pattern[str]]:
    """A `case` pattern as tokens: "*", "?", a literal character, or a compiled `[...]` class."""
    tokens: list[str | re.Pattern[str]] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        end = pattern.find("]", i + 2) if c == "[" else -1
        if end >= 0:
            body = pattern[i + 1:end]
            body = "^" + body[1:] if body.startswith("!") else body
            try:
                tokens.append(re.compile(f"[{body}]", re.S))
                i = end + 1
                continue
            except re.error:
                pass
        tokens.append(c if c in "*?" else "\\" + c)
        i += 1
    return tokens


def _glob_match(pattern: str, text: str) -> bool:
    """Shell pattern matching (`case`), in O(len(pattern) * len(text)) like sh's own matcher: a
    translation to a backtracking regex took minutes for `*a*a*a*a*a*b` against 200 characters,
    with the server stuck meanwhile."""
    tokens = _glob_tokens(pattern)
    p = t = 0
    star, mark = -1, 0
    while t < len(text):
        token = tokens[p] if p < len(tokens) else None
        if token == "*":
            star, mark = p, t
            p += 1
            continue
        if token is not None and (token == "?" or (token == "\\" + text[t]) or
                                  (isinstance(token, re.Pattern) and token.fullmatch(text[t]))):
            p += 1
            t += 1
            continue
        if star < 0:
            return False
        p, mark = star + 1, mark + 1
        t = mark
    return all(token == "*" for token in tokens[p:])


# ------------------------------------------------------------------------------------- builtins
Builtin = Callable[[Shell, list[str], str], Program]


def _b_exit(sh: Shell, argv: list[str], _stdin: str) -> Program:
    code = sh.status
    if len(argv) > 1:
        try:
            code = int(argv[1]) & 0xFF
        except ValueError:
            yield Output("stderr", f"{sh.name}: exit: Illegal number: {argv[1]}\n")
            code = 2
    raise _Exit(code)


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
        if flag in ("-o", "+o") and args:
            option = args.pop(0)
            if option == "errexit":
                sh.errexit = flag == "-o"
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
    raise _Exit(status)


def _b_loopctl(sh: Shell, argv: list[str], _stdin: str) -> Program:
    levels = int(argv[1]) if len(argv) > 1 and argv[1].isdigit() else 1
    raise _LoopControl(argv[0], levels)
    yield  # pragma: no cover


def _b_eval(sh: Shell, argv: list[str], _stdin: str) -> Program:
    source = " ".join(argv[1:])
    sh.meter.need_parse(source)
    tree = parse(source)
    return (yield from sh.run_sequence(tree))


def _b_read(sh: Shell, argv: list[str], stdin: str) -> Program:
    names = [a for a in argv[1:] if not a.startswith("-")] or ["REPLY"]
    line, _, _rest = stdin.partition("\n")
    if not stdin:
        return 1
    values = line.split(None, len(names) - 1)
    for index, name in enumerate(names):
        sh.vars[name] = values[index] if index < len(values) else ""
    return 0
    yield  # pragma: no cover


_BUILTINS: dict[str, Builtin] = {
    "exit": _b_exit, ":": _b_colon, "export": _b_export, "unset": _b_unset, "set": _b_set,
    "shift": _b_shift, "cd": _b_cd, "exec": _b_exec, "break": _b_loopctl, "continue": _b_loopctl,
    "trap": _b_colon, "wait": _b_colon, "umask": _b_colon, "ulimit": _b_colon, "readonly": _b_export,
    "local": _b_export, "eval": _b_eval, "read": _b_read, "return": _b_exit,
}


# ------------------------------------------------------------------------------------ processes
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
    return _drive(fn, Invocation(list(argv), ctx, sh), sh)


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
    return _drive(fn, Invocation(list(argv), ctx, sh, stdin), sh)


def run_once(ctx: ShellContext, argv: list[str] | str, *, max_seconds: float = MAX_EXEC_SECONDS) -> ExecResult:
    """Run a command to completion (`kubectl exec`, exec probes): sleeps take no wall time."""
    program = exec_program(ctx, argv)
    if isinstance(program, ExecResult):
        return program
    return run_process(program, max_seconds=max_seconds)


def format_date(ts: float, fmt: str | None = None) -> str:
    """`date` output in the C locale (`Mon Jan  5 09:00:00 UTC 2026`) or a `+FORMAT`."""
    moment = datetime.fromtimestamp(ts, tz=UTC)
    if fmt:
        fmt = fmt.replace("%N", "000000000").replace("%Z", "UTC").replace("%s", str(int(ts)))
        return moment.strftime(fmt)
    return moment.strftime("%a %b ") + f"{moment.day:2d}" + moment.strftime(" %H:%M:%S UTC %Y")


# Standard commands live in their own module; importing it here registers them.
from sregym.twin.node import coreutils as _coreutils  # noqa: E402,F401


def _append_to_main_log(ctx: ShellContext, stream: str, text: str) -> None:
    """Write to the container's main-process log, as `echo ... > /proc/1/fd/1` does in a real
    container: the line shows up in `kubectl logs` with the current simulated time."""
    twin, pod = ctx.twin, ctx.pod
    if twin is None or pod is None:
        return
    runtime, logs = twin.services.runtime, twin.services.logs
    meta = pod.get("metadata") or {}
    instance = runtime.instance(meta.get("namespace", ""), meta.get("name", ""), ctx.container) \
        if runtime is not None else None
    if instance is None or logs is None:
        return
    for line in text.splitlines():
        logs.append(instance.container_id, twin.clock.now, stream, line)
