"""The sandbox every agent program runs in: what it may see, write and outlive.

An agent that runs as a program (a `command` agent, Claude Code, Codex, an offline snapshot
agent, the kubectl of the kubectl tool) must not be able to read what grades it: the ground
truth and gold fixes in the installed `sregym` package, the problems directories, the run
directory, the admin credential in our memory. Hiding a list of secret paths is not enough
(another attempt's files appear while this one runs), so the sandbox is built the other way
round, from an *allowlist*:

- `unshare` gives the program its own user, mount and PID namespaces (and, offline, an empty
  network namespace). A user namespace needs no privilege, so the same command works as root
  and as an ordinary user where unprivileged user namespaces are enabled.
- Inside, a setup script builds a new root on an empty tmpfs: the system directories
  (`/usr`, `/etc`, `/opt`, ...) and the Python installation read-only, a fresh `/proc`
  for the new PID namespace (our process is not in it), a minimal `/dev` (no disks), a
  size-limited tmpfs as the writable HOME and `/tmp`, and exactly the host paths the caller
  shares. Paths to hide (the `sregym` package, problems directories, ...) get empty read-only
  mounts on top, in case they live under a shared directory. `pivot_root` then makes that tree
  the root and the host's tree is detached, so there is nothing left to escape to.
- The program runs with every capability dropped (bounding set emptied, `no_new_privs`): it
  cannot unmount what hides a path, and a nested namespace only gets the mounts locked.
- PID 1 of the namespace is a shell; the program is its child. When PID 1 ends, the
  kernel kills every process left in the namespace, so nothing an agent forks outlives its
  attempt, whatever it does with sessions and process groups.

What it does not do: limit CPU or memory beyond the scratch size (use cgroups/containers for
that), cut the network of live attempts (they must reach the loopback API, query and submit
ports), or hide the system directories themselves. See docs/sandbox.md.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sregym.errors import SetupError

SAFE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# Host directories every sandbox sees read-only (those that exist). Not /home, /root, /tmp,
# /var, /run, /srv, /mnt, /media or any project directory: the agent's HOME is a scratch tmpfs.
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt")
# /etc files that are often symlinks into /run (DNS must keep working for hosted-model CLIs).
_FOLLOW = ("/etc/resolv.conf", "/etc/hosts", "/etc/localtime")
DEFAULT_HOME = Path("/home/agent")

# Runs as root of the new user namespace (`python -I -S`, standard library only), before the
# program: builds the new root, pivots into it, then becomes the namespace's PID 1 shell, which
# runs the program with every capability dropped (`setpriv`). Paths arrive as arguments.
_SETUP = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
RDONLY, NOSUID, NODEV, NOEXEC, REMOUNT, BIND, REC = 1, 2, 4, 8, 32, 4096, 16384
def fail(msg):
    sys.stderr.write("sregym sandbox: " + msg + "\n"); sys.exit(125)
def mount(src, dst, fstype, flags, data=None):
    enc = lambda v: v.encode() if isinstance(v, str) else v
    if libc.mount(enc(src), enc(dst), enc(fstype), ctypes.c_ulong(flags), enc(data)) != 0:
        e = ctypes.get_errno(); fail("mount %s on %s: %s" % (src, dst, os.strerror(e)))
def read_only(path):
    base = REMOUNT | BIND | RDONLY | NOSUID | NODEV
    if libc.mount(None, path.encode(), None, ctypes.c_ulong(base), None) != 0:
        mount(None, path, None, base | NOEXEC)
def mount_point(src, dst):
    if os.path.isdir(src): os.makedirs(dst, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if not os.path.lexists(dst): open(dst, "a").close()
def tmpfs(path, size, mode, name):
    os.makedirs(path, exist_ok=True); mount(name, path, "tmpfs", NOSUID | NODEV, "size=%s,mode=%s" % (size, mode))
args = sys.argv[1:]
new = args.pop(0)
R = lambda p: new + p
mount("sregym-root", new, "tmpfs", 0, "mode=0755,size=4m")
hidden, workdir = [], "/"
while args:
    op = args.pop(0)
    if op == "--": break
    if op == "home-tmpfs":
        home, size = args.pop(0), args.pop(0)
        tmpfs(R(home), size, "0700", "sregym-scratch"); os.mkdir(R(home) + "/.tmp"); os.chmod(R(home) + "/.tmp", 0o1777)
        os.makedirs(R("/tmp")); mount(R(home) + "/.tmp", R("/tmp"), None, BIND)
    elif op == "home-bind":
        home, size = args.pop(0), args.pop(0)
        tmpfs(R("/tmp"), size, "1777", "sregym-tmp"); mount_point(home, R(home)); mount(home, R(home), None, BIND)
    elif op == "proc":
        os.makedirs(R("/proc")); mount("proc", R("/proc"), "proc", NOSUID | NODEV | NOEXEC)
        tmpfs(R("/dev"), "64k", "0755", "sregym-dev")
        for d in ("null", "zero", "full", "random", "urandom", "tty"):
            open(R("/dev/" + d), "a").close(); mount("/dev/" + d, R("/dev/" + d), None, BIND)
        for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                             ("stderr", "/proc/self/fd/2"), ("shm", "/tmp")):
            os.symlink(target, R("/dev/" + name))
        mount(None, R("/dev"), None, REMOUNT | BIND | RDONLY | NOSUID | NODEV)
    elif op in ("ro", "rw"):
        path = args.pop(0); mount_point(path, R(path)); mount(path, R(path), None, BIND | REC)
        if op == "ro": read_only(R(path))
    elif op == "link":
        path, target = args.pop(0), args.pop(0)
        os.makedirs(os.path.dirname(R(path)), exist_ok=True); os.symlink(target, R(path))
    elif op == "hide":
        path = args.pop(0)
        if os.path.isdir(R(path)) or not os.path.lexists(R(path)):
            tmpfs(R(path), "64k", "0555", "sregym-hidden"); hidden.append(R(path))
        else: mount(R("/dev/null"), R(path), None, BIND)
    elif op == "cd": workdir = args.pop(0)
    else: fail("unknown setup step " + op)
for path in hidden: mount(None, path, None, REMOUNT | RDONLY | NOSUID | NODEV)
mount(None, new, None, REMOUNT | BIND | RDONLY)
os.chdir(new)
numbers = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "ppc64le": 203, "s390x": 217}
number = numbers.get(os.uname().machine)  # platform.machine(), without importing platform
if number is not None:
    if libc.syscall(ctypes.c_long(number), b".", b".") != 0: fail("pivot_root: " + os.strerror(ctypes.get_errno()))
else:
    import subprocess  # only here: importing it costs as much as the rest of the setup
    if subprocess.run(["pivot_root", ".", "."]).returncode != 0: fail("pivot_root failed")
if libc.umount2(b".", 2) != 0: fail("detaching the host root: " + os.strerror(ctypes.get_errno()))
os.chdir(workdir)
# PID 1 of the namespace becomes a shell whose command line holds nothing but the program's
# (not this mount plan); the program runs as its child with every capability dropped, so it is
# an ordinary process (SIGTERM reaches it), and when it ends the shell ends and the kernel kills
# whatever it left behind. `; exit $?` keeps the shell from exec'ing the program in its place.
os.execv("/bin/sh", ["/bin/sh", "-c", 'setpriv --bounding-set=-all --inh-caps=-all --no-new-privs -- "$@"; exit $?',
                     "sandbox-init", *args])
"""


class SandboxError(SetupError):
    """The sandbox cannot be set up here (no user namespaces, no util-linux, ...)."""


def _tool(name: str) -> str | None:
    """Where util-linux's `name` is (our PATH first, then the standard directories)."""
    return shutil.which(name) or shutil.which(name, path=SAFE_PATH)


def _flags(network: bool) -> list[str]:
    flags = ["--user", "--map-root-user", "--mount", "--pid", "--fork", "--kill-child", "--mount-proc"]
    return flags if network else [*flags, "--net"]


# One empty directory per process: each sandbox mounts its own root on it, in its own mount
# namespace, so concurrent sandboxes can share it.
_ROOT_DIR: Path | None = None
_ROOT_LOCK = threading.Lock()


def _root_dir() -> Path:
    global _ROOT_DIR
    with _ROOT_LOCK:
        if _ROOT_DIR is None or not _ROOT_DIR.is_dir():
            _ROOT_DIR = Path(tempfile.mkdtemp(prefix="sregym-sandbox-root-"))
            import atexit

            atexit.register(shutil.rmtree, _ROOT_DIR, True)
        return _ROOT_DIR


def _setup_python() -> str:
    """The interpreter that runs the setup (before the new root exists, so any will do)."""
    return os.path.realpath(sys.executable)


def python_dirs() -> list[Path]:
    """The Python installation our interpreter comes from (venv and base), so agents written in
    Python and the standalone `sregym-submit` run inside; the sregym package in it stays hidden."""
    dirs = [Path(sys.prefix), Path(sys.base_prefix), Path(os.path.realpath(sys.executable)).parent.parent]
    return _unique(dirs)


def secret_paths() -> list[Path]:
    """What a sandbox always hides, wherever it is: the installed sregym package (and, for a
    source checkout, the whole checkout: tests and docs name fixes too), its distribution
    metadata and every problems/agents directory loaded into this process."""
    secrets: list[Path] = []
    for name, module in list(sys.modules.items()):
        if name == "sregym" or name.startswith("sregym_user_"):
            for location in getattr(module, "__path__", None) or [getattr(module, "__file__", None)]:
                if location:
                    path = Path(location)
                    secrets.append(path if path.is_dir() else path.parent)
    secrets += _installed_secrets()
    # This module sits at the top of the package, so its folder is the package's (importing
    # `sregym` itself here would close a circle through the package's lazy exports).
    for package in (Path(__file__).parent,):
        secrets.append(package)
        checkout = package.parent.parent if package.parent.name == "src" else package.parent
        if (checkout / "pyproject.toml").is_file() and checkout != Path("/"):
            secrets.append(checkout)
    return _unique(p.resolve() for p in secrets)


@functools.cache
def _installed_secrets() -> list[Path]:
    """The sregym distribution's metadata and the packages that register problems through entry
    points (looked up once: reading installed metadata is slow)."""
    found: list[Path] = []
    try:
        from importlib.metadata import distribution, entry_points

        dist = distribution("sregym")
        for file in dist.files or ():
            if file.parts and file.parts[0].endswith((".dist-info", ".egg-info")):
                found.append(Path(str(dist.locate_file(file.parts[0]))))
                break
        from sregym.problems.registry import ENTRY_POINT_GROUP

        for ep in entry_points(group=ENTRY_POINT_GROUP):
            spec = importlib.util.find_spec(ep.module.split(".")[0])
            if spec is not None:
                for location in spec.submodule_search_locations or [spec.origin]:
                    if location:
                        path = Path(location)
                        found.append(path if path.is_dir() else path.parent)
    except Exception:  # not installed as a distribution (a bare source tree on sys.path)
        pass
    return found


def _unique(paths: Iterable[Path]) -> list[Path]:
    seen: list[Path] = []
    for p in paths:
        if p not in seen:
            seen.append(p)
    return seen


@dataclass(frozen=True)
class Sandbox:
    """One confined process's view of the machine.

    `home` is the writable scratch: a fresh tmpfs of `scratch_mb` MiB at that path inside (also
    behind `/tmp`), or, with `home_source`, a host directory bound read-write there (the kubectl
    tool's discovery cache). `read_only`/`writable` are host paths visible at the same path;
    `hide` are paths that look empty even when under a shared directory (the sregym package
    and the loaded problems directories are always hidden)."""

    home: Path = DEFAULT_HOME
    scratch_mb: int = 512
    home_source: Path | None = None
    workdir: Path | None = None
    read_only: tuple[Path, ...] = ()
    writable: tuple[Path, ...] = ()
    hide: tuple[Path, ...] = ()
    network: bool = True
    python: bool = True  # share the Python installation (not needed to run kubectl)
    extra_env: dict[str, str] = field(default_factory=dict)

    def wrap(self, argv: Sequence[str]) -> list[str]:
        """`argv` as the command line that runs it inside this sandbox."""
        if not argv:
            raise ValueError("nothing to run")
        home = Path(self.home)
        steps: list[str] = []
        size = f"{max(1, int(self.scratch_mb))}m"
        if self.home_source is not None:
            if Path(self.home_source).resolve() != home.resolve():
                raise ValueError("a home bound from the host must be shown at its own path")
            steps += ["home-bind", str(home.resolve()), size]
        else:
            if home.is_relative_to("/tmp") or home.is_relative_to("/proc") or home.is_relative_to("/dev"):
                raise ValueError(f"the sandbox home {home} cannot be under /tmp, /proc or /dev")
            steps += ["home-tmpfs", str(home), size]
        steps.append("proc")
        items: list[tuple[str, str]] = []  # (path, "ro" | "rw" | "hide"), mounted parents first
        for name in SYSTEM_DIRS:
            path = Path(name)
            if path.is_symlink():
                steps += ["link", name, os.readlink(name)]
            elif path.is_dir():
                items.append((name, "ro"))
        for name in _FOLLOW:
            if Path(name).is_symlink() and Path(name).exists():
                real = os.path.realpath(name)
                if not any(real.startswith(d + "/") for d in SYSTEM_DIRS):
                    items.append((real, "ro"))
        for path in [*(python_dirs() if self.python else []), *self.read_only]:
            items.append((os.path.realpath(path), "ro"))
        for path in self.writable:
            items.append((os.path.realpath(path), "rw"))
        special = (str(home), "/proc", "/dev", "/tmp")
        for path, _mode in items:
            if path == "/" or any(Path(s).is_relative_to(path) for s in special):
                raise ValueError(f"cannot share {path} with a sandbox: it would cover its home, /tmp, /proc or /dev")
        for path in _unique([*secret_paths(), *(Path(h) for h in self.hide)]):
            if path.exists():
                items.append((os.path.realpath(path), "hide"))
        # A hide matters only where something is mounted around or under it; nested hides only
        # where something is mounted under them (an empty mount point would show the path).
        hides = [p for p, m in items if m == "hide"]
        mounted = [p for p, m in items if m != "hide"]
        items = [(p, m) for p, m in items if m != "hide" or any(Path(b).is_relative_to(p) for b in mounted) or (
            any(Path(p).is_relative_to(b) for b in mounted)
            and not any(p != h and Path(p).is_relative_to(h) for h in hides))]
        order = {"ro": 0, "rw": 0, "hide": 1}
        seen: set[tuple[str, str]] = set()
        for path, mode in sorted(items, key=lambda i: (i[0].rstrip("/").count("/"), order[i[1]], i[0])):
            if (path, mode) in seen or not os.path.lexists(path):
                continue
            seen.add((path, mode))
            steps += [mode, path]
        steps += ["cd", str(self.workdir or home)]
        exe = _tool("unshare") or "unshare"
        return [exe, *_flags(self.network), "--", _setup_python(), "-I", "-S", "-c", _SETUP, str(_root_dir()),
                *steps, "--", *argv]

    def environment(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        """A scrubbed environment (nothing of ours): PATH, HOME/TMPDIR in the scratch, the
        locale, plus `extra`."""
        home = str(self.home)
        env = {"PATH": SAFE_PATH, "HOME": home, "TMPDIR": "/tmp", "LANG": "C.UTF-8", "TERM": "dumb",
               "USER": "root", "LOGNAME": "root", "SHELL": "/bin/sh",
               # Claude Code skips its permission prompts as root only when told it is sandboxed.
               "IS_SANDBOX": "1"}
        env.update(self.extra_env)
        env.update(extra or {})
        return env


# ------------------------------------------------------------------ availability
_PROBES: dict[bool, str | None] = {}
_PROBE_LOCK = threading.Lock()


def sandbox_problem(*, network: bool = True) -> str | None:
    """None if a sandbox can be made here, else why not (probed once per process)."""
    with _PROBE_LOCK:
        if network not in _PROBES:
            _PROBES[network] = _probe(network)
        return _PROBES[network]


def _probe(network: bool) -> str | None:
    for tool in ("unshare", "setpriv"):
        if _tool(tool) is None:
            return f"`{tool}` (util-linux) is not installed"
    sandbox = Sandbox(network=network, scratch_mb=1, python=False)
    argv = sandbox.wrap(["/bin/sh", "-c", "echo ok"])
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL,
                              env=sandbox.environment())
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"`unshare` failed: {exc}"
    if proc.returncode != 0 or "ok" not in proc.stdout:
        return (f"`unshare {' '.join(_flags(network))}` failed: "
                f"{proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else proc.returncode}")
    return None


def require_sandbox(what: str, *, network: bool = True) -> None:
    """Raise `SandboxError` saying what to do if `what` cannot be sandboxed here."""
    problem = sandbox_problem(network=network)
    if problem is not None:
        raise SandboxError(
            f"{what} must run in a sandbox, and none can be made here: {problem}. It needs user namespaces "
            "(`unshare --user --map-root-user --mount --pid --fork true` must work: on Debian/Ubuntu "
            "`sysctl kernel.unprivileged_userns_clone=1`, on Ubuntu 24.04 also "
            "`sysctl kernel.apparmor_restrict_unprivileged_userns=0`; in Docker, run with a seccomp profile "
            "that allows unshare) and util-linux's unshare and setpriv.")


__all__ = ["DEFAULT_HOME", "SAFE_PATH", "SYSTEM_DIRS", "Sandbox", "SandboxError", "python_dirs", "require_sandbox",
           "sandbox_problem", "secret_paths"]
