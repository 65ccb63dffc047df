"""What a command sees (`ShellContext`, `Invocation`) and the registry commands are found in."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sregym.twin.node.shell.effects import Effect, Output, Program
from sregym.twin.node.shell.limits import MemoryMeter
from sregym.twin.node.shell.lookup import locate

if TYPE_CHECKING:
    from sregym.twin.node.shell.interpreter import Shell

@dataclass
class ShellContext:
    """Everything a command can see: the container's environment and files, and who it is.

    `files` maps absolute paths to contents (mounted ConfigMap/Secret keys, projected service
    account files, files the program wrote). `resolve(name)` may return a command for an image's
    own binaries. `start_time` is the simulated epoch second the process started.
    `present_time` maps a simulated instant to the one the exec's client reads on its own clock
    (the served API's wall anchor, `api/wall_time.py`); None for in-process execs, which print
    simulated time.
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
    present_time: Callable[[float], float] | None = None

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

    # The tree as path lookup and globbing see it. Without a tree (a container's own process)
    # the files and their directories stand in; `ExecContext` answers from its full tree.
    has_tree = False

    def list_dir(self, path: str) -> list[str] | None:
        """The names in directory `path` (absolute), None when it is not a directory."""
        dirs = self.directories()
        if path not in dirs:
            return None
        prefix = path.rstrip("/") + "/"
        names = {p[len(prefix):].split("/", 1)[0] for p in [*self.files, *dirs] if p.startswith(prefix)}
        return sorted(n for n in names if n)

    def path_kind(self, path: str) -> str | None:
        """"dir", "file" or None (missing), symlinks followed."""
        if path in self.directories():
            return "dir"
        return "file" if path in self.files else None

    def path_mode(self, path: str) -> int | None:
        """Permission bits of `path` (links followed), None when it does not exist."""
        kind = self.path_kind(path)
        return None if kind is None else 0o755 if kind == "dir" else 0o644


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

    @property
    def wall_now(self) -> float:
        """`now` as the program's clock shows it (`date`, HTTP `Date`, wget's stamps): the
        client's clock when served, simulated time in-process."""
        present = self.ctx.present_time
        return self.now if present is None else present(self.now)

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


def lookup_command(name: str, ctx: ShellContext | None = None, search_path: str | None = None, *,
                   anywhere: bool = False) -> CommandFn | None:
    """The command `name` runs in `ctx`: in a context with a tree, only a file that exists there
    (by its path, or found in `search_path`, default the context's PATH: `shell/lookup.py`),
    unless `anywhere` (a shell builtin, which needs no file)."""
    base = name.rsplit("/", 1)[-1]
    if ctx is not None and ctx.has_tree and not (anywhere and "/" not in name) \
            and locate(ctx, name, search_path)[0] != "ok":
        return None
    if ctx is not None and ctx.resolve is not None:
        found = ctx.resolve(base)
        if found is not None:
            return found
    if ctx is not None and not ctx.userland:
        return None
    # An exec knows its image's executables (`node/image_families.py`): nothing else is there.
    shipped = ctx.extras.get("binaries") if ctx is not None else None
    if shipped is not None and base not in shipped:
        return None
    return COMMANDS.get(base)
