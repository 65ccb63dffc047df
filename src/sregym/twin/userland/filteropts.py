"""Option parsing, usage errors and input reading shared by the text filters.

The filters (`sort`, `uniq`, `cut`, `tr`, `grep`, `xargs` ...) parse their argv the way the real
binaries do: GNU getopt_long on Debian images (options and operands permuted, clustered short
options, `-kN`/`-k N`, unambiguous long-option prefixes, `--` ends options) and BusyBox's getopt
on BusyBox/Alpine ones. A bad option prints the real tool's words and exit code, so an agent that
mistypes a flag reads what it would read on a real container, never a Python error.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sregym.twin.node.shell import Invocation

BUSYBOX_BANNER = "BusyBox v1.36.1 (2023-05-18 22:34:17 UTC) multi-call binary.\n\n"


def is_busybox(call: Invocation) -> bool:
    """BusyBox/Alpine (ash) userland rather than Debian's GNU tools."""
    return call.ctx.shell_flavour in ("ash", "")


@dataclass(frozen=True)
class Spec:
    """A tool's options: `short` in getopt syntax ("nrk:t:", ':' = takes an argument, '::' an
    optional one that must be attached, as xargs' `-i{}`), `long`
    maps a long name (without dashes; a trailing '=' when it takes an argument) to the key it
    sets (the short letter, or the long name for long-only options). `usage` is the BusyBox
    usage line; `gnu_usage` an extra line GNU prints before "Try ..." (grep does)."""

    tool: str
    short: str
    long: dict[str, str] = field(default_factory=dict)
    usage: str = ""
    gnu_usage: str = ""
    status: int = 1  # exit code of a usage error (GNU sort and grep: 2)
    busybox_status: int = 1


class UsageError(Exception):
    """A bad command line; the message is the tool's first error line (without the prefix)."""


def usage_error(call: Invocation, spec: Spec, message: str) -> int:
    """Print a usage error the way the tool does and return its exit code."""
    if is_busybox(call):
        if message:
            call.error(f"{spec.tool}: {message}")
        call.error(BUSYBOX_BANNER + f"Usage: {spec.usage or spec.tool}")
        return spec.busybox_status
    call.error(f"{spec.tool}: {message}")
    if spec.gnu_usage:
        call.error(spec.gnu_usage)
    call.error(f"Try '{spec.tool} --help' for more information.")
    return spec.status


def _takes_argument(short: str, letter: str) -> bool | None:
    index = short.find(letter)
    if index < 0 or letter == ":":
        return None
    return short[index + 1:index + 2] == ":"


def parse(spec: Spec, args: list[str], *, permute: bool = True,
          number_option: str = "") -> tuple[list[tuple[str, str]], list[str]]:
    """Split `args` into (options in order as (key, value)), operands); raise UsageError.

    `number_option` names the option a bare `-N` stands for (`head -5` is `head -n 5`)."""
    options: list[tuple[str, str]] = []
    operands: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            operands.extend(args[i:])
            break
        if arg.startswith("--"):
            name, eq, value = arg[2:].partition("=")
            matches = [key for key in spec.long if key.rstrip("=") == name]
            if len(matches) > 1:  # `--color` and `--color=WHEN`: an optional argument
                matches = [key for key in matches if key.endswith("=") == bool(eq)]
            if not matches:
                matches = [key for key in spec.long if key.startswith(name)]
            targets = {spec.long[key] for key in matches}
            if not matches:
                raise UsageError(f"unrecognized option '{arg}'")
            if len(targets) > 1:
                listed = " ".join(f"'--{key.rstrip('=')}'" for key in matches)
                raise UsageError(f"option '--{name}' is ambiguous; possibilities: {listed}")
            key = matches[0]
            full = key.rstrip("=")
            if key.endswith("="):
                if not eq:
                    if i >= len(args):
                        raise UsageError(f"option '--{full}' requires an argument")
                    value = args[i]
                    i += 1
                options.append((spec.long[key], value))
            else:
                if eq:
                    raise UsageError(f"option '--{full}' doesn't allow an argument")
                options.append((spec.long[key], ""))
            continue
        if arg.startswith("-") and arg != "-":
            if number_option and arg[1:].isdigit():
                options.append((number_option, arg[1:]))
                continue
            j = 1
            while j < len(arg):
                letter = arg[j]
                takes = _takes_argument(spec.short, letter)
                if takes is None:
                    raise UsageError(f"invalid option -- '{letter}'")
                if takes:
                    value = arg[j + 1:]
                    optional = spec.short[spec.short.find(letter) + 1:][:2] == "::"
                    if not value and not optional:
                        if i >= len(args):
                            raise UsageError(f"option requires an argument -- '{letter}'")
                        value = args[i]
                        i += 1
                    options.append((letter, value))
                    break
                options.append((letter, ""))
                j += 1
            continue
        operands.append(arg)
        if not permute:
            operands.extend(args[i:])
            break
    return options, operands


def parse_or_fail(call: Invocation, spec: Spec, **kwargs: object) -> \
        tuple[list[tuple[str, str]], list[str]] | int:
    """`parse`, or the usage error printed and its exit code returned."""
    try:
        return parse(spec, list(call.args), **kwargs)  # type: ignore[arg-type]
    except UsageError as bad:
        return usage_error(call, spec, str(bad))


def with_options(spec: Spec, **kwargs: Any) -> \
        Callable[[Callable[[Invocation, list[tuple[str, str]], list[str]], int]], Callable[[Invocation], int]]:
    """Make a command body `(call, options, operands)` a command: the command line is parsed by
    `spec` first, and a bad one prints the tool's usage error and returns its exit code without
    running the body. (Not for generator bodies: their parsing would move ahead of their start.)"""

    def wrap(body: Callable[[Invocation, list[tuple[str, str]], list[str]], int]) -> Callable[[Invocation], int]:
        @functools.wraps(body)
        def run(call: Invocation) -> int:
            parsed = parse_or_fail(call, spec, **kwargs)
            if isinstance(parsed, int):
                return parsed
            return body(call, *parsed)

        return run

    return wrap


# ----------------------------------------------------------------------------------- reading
# How each tool reports a file it cannot read: GNU (missing, directory), BusyBox (missing).
_GNU_MISSING = {
    "sort": "sort: cannot read: {p}: No such file or directory",
    "head": "head: cannot open '{p}' for reading: No such file or directory",
    "tail": "tail: cannot open '{p}' for reading: No such file or directory",
    "tee": "tee: {p}: No such file or directory",
}
_GNU_DIRECTORY = {
    "sort": "sort: read failed: {p}: Is a directory",
    "head": "head: error reading '{p}': Is a directory",
    "tail": "tail: error reading '{p}': Is a directory",
}
# BusyBox applets that open with `xfopen`/`open_or_warn` say "can't open 'F'"; the others
# (`fopen_or_warn`: head, cut, wc, grep ...) print the bare path.
_BUSYBOX_CANT_OPEN = {"tail", "sort", "uniq"}


def read_input(call: Invocation, tool: str, path: str, *, quiet: bool = False) -> str | None:
    """A file's content (`-` is stdin), or None after printing the tool's real error."""
    if path == "-":
        call.ctx.meter().need_split(call.stdin, "\n")
        return call.stdin
    full = call.shell.abspath(path)
    content = call.ctx.files.get(full)
    if content is not None:
        call.ctx.meter().need_split(content, "\n")
        return content
    if quiet:
        return None
    if full in call.ctx.directories():
        if is_busybox(call):
            call.error(f"{tool}: read error: Is a directory")
        else:
            call.error(_GNU_DIRECTORY.get(tool, "{t}: {p}: Is a directory").format(t=tool, p=path))
        return None
    if is_busybox(call):
        call.error(f"{tool}: can't open '{path}': No such file or directory"
                   if tool in _BUSYBOX_CANT_OPEN else f"{tool}: {path}: No such file or directory")
    else:
        call.error(_GNU_MISSING.get(tool, "{t}: {p}: No such file or directory").format(t=tool, p=path))
    return None


def split_lines(text: str, terminator: str = "\n") -> list[str]:
    """Lines without their terminator; a last line without one still counts."""
    if not text:
        return []
    parts = text.split(terminator)
    if parts[-1] == "":
        parts.pop()
    return parts
