"""`command`, `command -v/-V` and `type`: what the shell says a name is.

An engineer's first move in an unknown container is `command -v curl` or `which curl`; the
answer must agree with what running the name does. Executables are the image's (the exec
context's `extras["binaries"]`, name -> path, from `sregym.twin.node.image_families`); without
that map (a container's own process) any registered command counts, at the flavour's usual
directory. Wording and exit codes are dash's and BusyBox ash's (both print `X is a shell
builtin`, `X: not found` on stdout with 127) and bash's (`type: X: not found` on stderr, 1).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sregym.twin.node.shell.commands import ShellContext, lookup_command
from sregym.twin.node.shell.effects import Output, Program
from sregym.twin.node.shell.lookup import locate

if TYPE_CHECKING:
    from sregym.twin.node.shell.interpreter import Shell

KEYWORDS = frozenset({"if", "then", "else", "elif", "fi", "case", "esac", "for", "while", "until",
                      "do", "done", "in", "{", "}", "!"})
SPECIAL_BUILTINS = frozenset({"break", ":", "continue", ".", "eval", "exec", "exit", "export",
                              "readonly", "return", "set", "shift", "times", "trap", "unset"})
# Regular builtins dash and ash have besides the twin's own `BUILTINS` table.
REGULAR_BUILTINS = frozenset({"echo", "printf", "test", "[", "kill", "true", "false", "pwd", "read",
                              "cd", "umask", "wait", "alias", "unalias", "command", "type", "getopts",
                              "hash", "jobs", "local", "ulimit", "bg", "fg"})


def executable_path(ctx: ShellContext, name: str, search_path: str | None = None) -> str | None:
    """Where PATH lookup finds `name` in this container (`search_path`, default the context's
    PATH), or None; in an exec's tree the same search that running the name does."""
    if ctx.has_tree:
        status, path = locate(ctx, name, search_path)
        if status != "ok":
            return None
        return name if "/" in name else path
    if "/" in name:
        return name if lookup_command(name, ctx) is not None else None
    shipped = ctx.extras.get("binaries")
    if isinstance(shipped, dict):
        path = shipped.get(name)
        if path is None or not _on_path(path):
            return None
        return path
    if lookup_command(name, ctx) is None:
        return None
    return f"/bin/{name}" if ctx.shell_flavour in ("ash", "") else f"/usr/bin/{name}"


def _on_path(path: str) -> bool:
    directory = path.rsplit("/", 1)[0]
    return directory not in ("", "/")


def describe(sh: Shell, name: str) -> tuple[str, str | None]:
    """(kind, path): kind is "keyword", "special", "builtin", "file" or "" (not found)."""
    if name in KEYWORDS:
        return "keyword", None
    if name in SPECIAL_BUILTINS:
        return "special", None
    if name in REGULAR_BUILTINS:
        return "builtin", None
    path = executable_path(sh.ctx, name, sh.vars.get("PATH"))
    return ("file", path) if path else ("", None)


def b_type(sh: Shell, argv: list[str], _stdin: str) -> Program:
    status = 0
    bash = sh.ctx.shell_flavour == "bash"
    for name in argv[1:]:
        kind, path = describe(sh, name)
        if kind == "keyword":
            yield Output("stdout", f"{name} is a shell keyword\n")
        elif kind == "special":
            yield Output("stdout", f"{name} is a {'' if bash else 'special '}shell builtin\n")
        elif kind == "builtin":
            yield Output("stdout", f"{name} is a shell builtin\n")
        elif kind == "file":
            yield Output("stdout", f"{name} is {path}\n")
        elif bash:
            yield Output("stderr", f"{sh.name}: line {sh.lineno}: type: {name}: not found\n")
            status = 1
        else:
            yield Output("stdout", f"{name}: not found\n")
            status = 127
    return status


def b_command(sh: Shell, argv: list[str], stdin: str) -> Program:
    args = argv[1:]
    mode = ""
    while args and args[0].startswith("-") and args[0] != "--":
        flags = args.pop(0)[1:]
        for flag in flags:
            if flag in "vV":
                mode = flag
            elif flag != "p":
                yield Output("stderr", f"{sh.name}: {sh.lineno}: command: Illegal option -{flag}\n"
                             if sh.ctx.shell_flavour == "dash"
                             else f"{sh.name}: command: -{flag}: invalid option\n")
                return 2
    if args and args[0] == "--":
        args.pop(0)
    if not args:
        return 0
    if mode == "V":
        return (yield from b_type(sh, ["type", args[0]], stdin))
    if mode == "v":
        status = 0
        # dash and ash answer for the first name only; bash for each.
        for name in args if sh.ctx.shell_flavour == "bash" else args[:1]:
            kind, path = describe(sh, name)
            if kind == "file":
                yield Output("stdout", f"{path}\n")
            elif kind:
                yield Output("stdout", f"{name}\n")
            else:
                status = 1 if sh.ctx.shell_flavour == "bash" else 127
        return status
    return (yield from sh._invoke(args, {}, stdin))
