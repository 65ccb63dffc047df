"""Read-only snapshot copies and confined processes: what an offline agent may touch.

An offline agent gets a *copy* of one snapshot directory, never the dataset: the ground truth
sits next to the snapshots there, so the copy lives in a fresh temporary directory and nothing
the agent is given names the dataset. The copy is made read-only twice over: by permissions
(files 0444, dirs 0555) and, for the processes we start, by a read-only bind mount in a private
mount namespace — permissions alone do not stop root, and these benchmarks often run as root.

Processes (the react agent's `shell` tool, a `command` agent's program) run in the sandbox of
every agent program (`sregym.sandbox`): their own user, mount and PID namespaces, a root that
holds only the system directories, the read-only copy and a scratch directory (the dataset, the
run outputs and the sregym package are not there at all), and, for the shell, a network
namespace with nothing in it. A time limit kills the whole process group; output is kept up to a
size (head and tail) with a notice saying how much was dropped.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from sregym.sandbox import SAFE_PATH, Sandbox, SandboxError, sandbox_problem


# ------------------------------------------------------------------ read-only copies
def copy_read_only(source: Path, dest: Path) -> Path:
    """Copy the directory `source` to `dest` (which must not exist) and make the copy read-only.

    Only regular files and directories are copied: a symlink in a snapshot could point at the
    ground truth, so links (and sockets, devices ...) are left out rather than followed."""
    source = Path(source)
    if not source.is_dir():
        raise FileNotFoundError(f"snapshot directory {source} does not exist")
    dest.mkdir(parents=True)
    for dirpath, dirnames, filenames in os.walk(source, followlinks=False):
        here = Path(dirpath)
        target = dest / here.relative_to(source)
        for name in sorted(dirnames):
            if not (here / name).is_symlink():
                (target / name).mkdir()
        for name in sorted(filenames):
            src = here / name
            mode = src.lstat().st_mode
            if stat.S_ISREG(mode):
                shutil.copyfile(src, target / name, follow_symlinks=False)
                os.chmod(target / name, 0o444)
        dirnames[:] = [n for n in dirnames if not (here / n).is_symlink()]
    for dirpath, _dirnames, _filenames in os.walk(dest, topdown=False):
        os.chmod(dirpath, 0o555)
    return dest


def remove_tree(path: Path) -> None:
    """Remove a tree that may hold read-only directories (a copy made by `copy_read_only`)."""
    path = Path(path)
    if not path.exists():
        return
    for dirpath, _dirnames, _filenames in os.walk(path):
        with contextlib.suppress(OSError):
            os.chmod(dirpath, 0o755)
    shutil.rmtree(path, ignore_errors=True)


class Workspace:
    """One attempt's temporary directory: `snapshot/` (the read-only copy), `scratch/` (a
    writable HOME/TMPDIR for the agent's processes) and `work/` (where the agent writes its
    output and instructions). Removed on exit, whatever happened."""

    def __init__(self, source: Path, *, prefix: str = "sregym-snap-") -> None:
        self.source = Path(source)
        self.prefix = prefix
        self.root: Path | None = None

    def __enter__(self) -> Workspace:
        self.root = Path(tempfile.mkdtemp(prefix=self.prefix))
        try:
            copy_read_only(self.source, self.snapshot)
            self.scratch.mkdir()
            self.work.mkdir()
        except BaseException:
            remove_tree(self.root)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        if self.root is not None:
            remove_tree(self.root)

    @property
    def snapshot(self) -> Path:
        assert self.root is not None, "use Workspace as a context manager"
        return self.root / "snapshot"

    @property
    def scratch(self) -> Path:
        assert self.root is not None
        return self.root / "scratch"

    @property
    def work(self) -> Path:
        assert self.root is not None
        return self.root / "work"


# ------------------------------------------------------------------ namespaces
def namespace_problem(*, network: bool) -> str | None:
    """None if a sandbox (with its own network namespace unless `network`) can be made here,
    else why not."""
    return sandbox_problem(network=network)


def confine_argv(argv: Sequence[str], root: Path, *, network: bool, hide: Sequence[Path] = (),
                 scratch: Path | None = None, writable: Sequence[Path] = (), scratch_mb: int = 512,
                 read_only: Sequence[Path] = ()) -> list[str]:
    """`argv` wrapped to run in the sandbox, in `root` (read-only): `scratch` is its HOME (a
    host directory kept between calls; without one, a fresh tmpfs of `scratch_mb` MiB),
    `writable`/`read_only` more host paths it sees, `hide` paths it must not see even if shared."""
    root = Path(root).resolve()
    if scratch is not None:
        home = Path(scratch).resolve()
        sandbox = Sandbox(home=home, home_source=home, scratch_mb=scratch_mb, workdir=root,
                          read_only=(root, *map(Path, read_only)), writable=tuple(map(Path, writable)),
                          hide=tuple(map(Path, hide)), network=network)
    else:
        sandbox = Sandbox(scratch_mb=scratch_mb, workdir=root, read_only=(root, *map(Path, read_only)),
                          writable=tuple(map(Path, writable)), hide=tuple(map(Path, hide)), network=network)
    return sandbox.wrap(list(argv))


# ------------------------------------------------------------------ running processes
@dataclass(frozen=True)
class ProcessResult:
    """How a confined process ended and what it printed (each stream capped, head and tail)."""

    stdout: str
    stderr: str
    exit_code: int | None
    timed_out: bool
    wall_s: float
    dropped_chars: int  # characters left out of stdout + stderr


class _Capture:
    """Drains one pipe to its end (so the program never blocks on a full pipe), keeping the
    first and the last `limit` bytes and counting the rest."""

    def __init__(self, stream: IO[bytes], limit: int) -> None:
        self.limit = max(0, int(limit))
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_size = 0
        self.total = 0
        self.thread = threading.Thread(target=self._drain, args=(stream,), daemon=True)
        self.thread.start()

    def _drain(self, stream: IO[bytes]) -> None:
        with contextlib.suppress(OSError, ValueError):
            for chunk in iter(lambda: stream.read1(65536), b""):  # type: ignore[attr-defined]
                self.total += len(chunk)
                room = self.limit - len(self.head)
                if room > 0:
                    self.head += chunk[:room]
                    chunk = chunk[room:]
                if chunk:
                    self.tail.append(chunk)
                    self.tail_size += len(chunk)
                    while self.tail and self.tail_size - len(self.tail[0]) >= self.limit:
                        self.tail_size -= len(self.tail.popleft())

    def text(self, what: str) -> tuple[str, int]:
        """(captured text with a truncation notice where bytes were dropped, chars dropped)."""
        head = bytes(self.head)
        tail = b"".join(self.tail)[-self.limit:] if self.limit else b""
        if self.total - len(head) - len(tail) <= 0:
            return (head + tail).decode(errors="replace"), 0
        # Cut at line boundaries where there are any, so no half line is shown as if whole.
        if b"\n" in head:
            head = head[: head.rfind(b"\n") + 1]
        if b"\n" in tail[:-1]:
            tail = tail[tail.find(b"\n") + 1:]
        dropped = self.total - len(head) - len(tail)
        head_text = head.decode(errors="replace")
        tail_text = tail.decode(errors="replace")
        notice = (f"\n[... {what} truncated: {dropped} bytes omitted from the middle; narrow the command "
                  f"(grep, head, tail, cut, awk) to see less at a time ...]\n")
        return head_text + notice + tail_text, dropped


def run_process(argv: Sequence[str], *, cwd: Path, env: dict[str, str], time_limit_s: float,
                max_bytes: int, merge_stderr: bool = False) -> ProcessResult:
    """Run `argv` in its own session; kill its whole process group when `time_limit_s` runs
    out. Standard input is empty; each output stream keeps `max_bytes` at its head and tail."""
    started = time.monotonic()
    proc = subprocess.Popen(list(argv), cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
                            start_new_session=True)
    with _RUNNING_LOCK:
        _RUNNING.add(proc)
    assert proc.stdout is not None
    out = _Capture(proc.stdout, max_bytes)
    err = _Capture(proc.stderr, max_bytes) if proc.stderr is not None else None
    timed_out = False
    try:
        proc.wait(timeout=max(0.0, float(time_limit_s)))
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        # Whatever the program left behind in its group goes too (on a timeout, or on our own
        # interruption); a normal exit leaves nothing to kill.
        kill_group(proc)
        with _RUNNING_LOCK:
            _RUNNING.discard(proc)
    for capture in (out, err):
        if capture is not None:
            capture.thread.join(timeout=5)
    stdout, dropped_out = out.text("output")
    stderr, dropped_err = err.text("stderr") if err is not None else ("", 0)
    return ProcessResult(stdout=stdout, stderr=stderr, exit_code=None if timed_out else proc.returncode,
                         timed_out=timed_out, wall_s=time.monotonic() - started,
                         dropped_chars=dropped_out + dropped_err)


# Processes started by `run_process` and not yet reaped: an interrupted run kills them at once
# (they run in their own sessions, so Ctrl-C does not reach them).
_RUNNING: set[subprocess.Popen[bytes]] = set()
_RUNNING_LOCK = threading.Lock()


def kill_running() -> None:
    """Kill every process `run_process` is still waiting for (the run was interrupted)."""
    with _RUNNING_LOCK:
        procs = list(_RUNNING)
    for proc in procs:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the process group of `proc` (it was started in its own session) and reap it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)


# ------------------------------------------------------------------ the shell tool
@dataclass(frozen=True)
class ShellResult:
    output: str  # stdout and stderr interleaved, capped, with the exit status noted
    exit_code: int | None
    timed_out: bool
    truncated: bool


class ConfinedShell:
    """`bash -c COMMAND` in the read-only snapshot copy: no network (unless allowed), a scrubbed
    environment (no proxies, no keys: only PATH, HOME/TMPDIR in a scratch dir, the locale and
    `SREGYM_SNAPSHOT`), a per-call time limit and an output cap."""

    def __init__(self, root: Path, *, scratch: Path | None = None, time_limit_s: float = 30.0,
                 max_output_chars: int = 10_000, allow_network: bool = False,
                 hide: Sequence[Path] = ()) -> None:
        self.root = Path(root).resolve()
        self.scratch = Path(scratch) if scratch is not None else None
        self.time_limit_s = float(time_limit_s)
        self.max_output_chars = int(max_output_chars)
        self.hide = tuple(Path(h) for h in hide)
        problem = namespace_problem(network=allow_network)
        self.scratch_dir = Path(scratch).resolve() if scratch is not None else None
        if problem is not None and not allow_network:
            raise SandboxError(
                f"the snapshot shell cannot cut the network here: {problem}. It needs unprivileged user "
                "namespaces (`unshare -rn true` must work; on Debian/Ubuntu: sysctl "
                "kernel.unprivileged_userns_clone=1). To run the shell WITH network access and without "
                "namespaces instead, pass -o allow_network=1.")
        self.confined = problem is None
        self.allow_network = allow_network

    def environment(self) -> dict[str, str]:
        home = str(self.scratch or self.root)
        return {"PATH": SAFE_PATH, "HOME": home, "TMPDIR": home, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
                "TERM": "dumb", "SREGYM_SNAPSHOT": str(self.root)}

    def run(self, command: str) -> ShellResult:
        argv = ["/bin/bash", "-c", command]
        if self.confined:
            argv = confine_argv(argv, self.root, network=self.allow_network, hide=self.hide, scratch=self.scratch_dir,
                                scratch_mb=256)
        # Each stream of the capture keeps head + tail of half the budget.
        result = run_process(argv, cwd=self.root, env=self.environment(), time_limit_s=self.time_limit_s,
                             max_bytes=max(1, self.max_output_chars // 2), merge_stderr=True)
        text = result.stdout
        if result.timed_out:
            text += (f"\n[killed: the command ran longer than the {self.time_limit_s:g} s time limit of one "
                     "shell call; narrow it]")
        elif result.exit_code:
            text += f"\n[exit code {result.exit_code}]"
        return ShellResult(output=text, exit_code=result.exit_code, timed_out=result.timed_out,
                           truncated=result.dropped_chars > 0)


__all__ = ["SAFE_PATH", "ConfinedShell", "ProcessResult", "SandboxError", "ShellResult", "Workspace",
           "confine_argv", "copy_read_only", "kill_group", "kill_running", "namespace_problem", "remove_tree", "run_process"]
