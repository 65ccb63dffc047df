"""Finding the file a command name runs, as execve and the shells' PATH search do.

A name with a `/` names a file: it runs if it exists, is not a directory and has an execute bit;
a bare name is searched in `$PATH`'s directories in order (an empty entry is the working
directory). Only contexts with a tree (`ShellContext.has_tree`: an exec's merged filesystem)
are searched; a container's own process has no tree and its commands are found by name.

The shells word a failure differently (checked against dash 0.5.12, bash 5.2, BusyBox 1.36 ash):

| failure          | dash                       | bash                            | ash                     |
|------------------|----------------------------|---------------------------------|-------------------------|
| missing, path    | `sh: 1: /x: not found` 127 | `bash: /x: No such file or directory` 127 | `sh: /x: not found` 127 |
| not executable   | `sh: 1: /x: Permission denied` 126 | `bash: /x: Permission denied` 126 | same wording, 126 |
| a directory      | `... Permission denied` 126 | `bash: /x: Is a directory` 126 | `... Permission denied` 126 |
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sregym.twin.node.shell.commands import ShellContext

# dash's and bash's built-in default when PATH is unset; Debian's and BusyBox's images set it too.
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def absolute(path: str, cwd: str) -> str:
    """`path` made absolute against `cwd`, with `.`, `..` and repeated slashes resolved as text
    (symlinks are not followed: the shell's own view, as in `cd -L`)."""
    if not path.startswith("/"):
        path = cwd.rstrip("/") + "/" + path
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


def _runnable(ctx: ShellContext, path: str) -> str:
    """"ok", "missing", "isdir" or "denied" for the file at absolute `path`."""
    kind = ctx.path_kind(path)
    if kind is None:
        return "missing"
    if kind == "dir":
        return "isdir"
    mode = ctx.path_mode(path)
    return "ok" if mode is not None and mode & 0o111 else "denied"


def locate(ctx: ShellContext, name: str, search_path: str | None = None) -> tuple[str, str]:
    """(status, path): status "ok" with the path as the shell names it (`/usr/bin/ls`, the
    PATH entry joined with the name), or "missing", "isdir", "denied" with `name`."""
    if "/" in name:
        status = _runnable(ctx, absolute(name, ctx.cwd))
        return status, (absolute(name, ctx.cwd) if status == "ok" else name)
    if search_path is None:
        search_path = ctx.env.get("PATH", DEFAULT_PATH)
    for directory in search_path.split(":"):
        candidate = f"{directory.rstrip('/')}/{name}" if directory else name
        if _runnable(ctx, absolute(candidate, ctx.cwd)) == "ok":
            return "ok", candidate if directory else absolute(candidate, ctx.cwd)
    return "missing", name


def failure_message(prefix: str, flavour: str, name: str, status: str) -> tuple[str, int]:
    """(stderr line, exit code) when `name` (with a `/`) cannot run; `prefix` is how the shell
    starts its messages (`sh: 1: ` for dash, as for "not found")."""
    code = 127 if status == "missing" else 126
    if flavour == "bash":
        text = {"missing": "No such file or directory", "isdir": "Is a directory"}.get(status, "Permission denied")
    else:
        text = "not found" if status == "missing" else "Permission denied"
    return f"{prefix}{name}: {text}\n", code
