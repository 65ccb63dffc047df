"""`head`, `grep` and `wc`: reading config and logs inside a container.

Messages and exit codes follow GNU grep/coreutils on Debian-based images and BusyBox on
BusyBox/Alpine ones (grep: 0 when something matched, 1 when nothing did, 2 on error).
"""

from __future__ import annotations

import re

from sregym.twin.node.coreutils import ENDLESS_DEVICES, device_bytes
from sregym.twin.node.shell import Invocation, command


def _busybox(call: Invocation) -> bool:
    return call.ctx.shell_flavour in ("ash", "")


def _read(call: Invocation, tool: str, path: str) -> str | None:
    """A file's content, or None after printing the tool's real error."""
    if path == "-":
        return call.stdin
    full = call.shell.abspath(path)
    content = call.ctx.files.get(full)
    if content is not None:
        return content
    if full in call.ctx.directories():
        if _busybox(call):
            call.error(f"{tool}: read error: Is a directory")
        else:
            call.error(f"{tool}: {path}: Is a directory" if tool == "grep"
                       else f"{tool}: error reading '{path}': Is a directory")
        return None
    if _busybox(call):
        call.error(f"{tool}: {path}: No such file or directory" if tool != "head"
                   else f"head: can't open '{path}': No such file or directory")
    elif tool == "head":
        call.error(f"head: cannot open '{path}' for reading: No such file or directory")
    else:
        call.error(f"{tool}: {path}: No such file or directory")
    return None


# -------------------------------------------------------------------------------------- head
@command("head")
def head(call: Invocation) -> int:
    args = list(call.args)
    lines, chars = 10, None
    paths: list[str] = []
    quiet = False
    while args:
        arg = args.pop(0)
        if arg in ("-n", "-c") and args:
            value = args.pop(0)
            if not value.lstrip("-").isdigit():
                call.error(f"head: invalid number of {'lines' if arg == '-n' else 'bytes'}: "
                           f"'{value}'" if not _busybox(call) else f"head: invalid number '{value}'")
                return 1
            if arg == "-n":
                lines = int(value)
            else:
                chars = int(value)
        elif re.fullmatch(r"-n-?\d+", arg):
            lines = int(arg[2:])
        elif re.fullmatch(r"-c-?\d+", arg):
            chars = int(arg[2:])
        elif re.fullmatch(r"-\d+", arg):
            lines = int(arg[1:])
        elif arg == "-q":
            quiet = True
        elif arg.startswith("-") and arg != "-":
            continue
        else:
            paths.append(arg)
    status = 0
    sources = paths or ["-"]
    for index, path in enumerate(sources):
        device = call.shell.abspath(path) if path != "-" else ""
        if device in ENDLESS_DEVICES:
            # `head -c 16 /dev/urandom`: only what is asked for is read (a line count on a device
            # without newlines would read it forever: the OOM killer's business).
            wanted = chars if chars is not None and chars >= 0 else -1
            call.ctx.meter().need(wanted if wanted >= 0 else call.ctx.meter().limit + 1)
            content = device_bytes(device, wanted)
        else:
            content = _read(call, "head", path)
        if content is None:
            status = 1
            continue
        if len(sources) > 1 and not quiet:
            call.write(("\n" if index else "") + f"==> {'standard input' if path == '-' else path} <==\n")
        if chars is not None:
            call.write(content[:chars])
        else:
            call.ctx.meter().need_split(content, "\n")
            kept = content.splitlines(keepends=True)
            call.write("".join(kept[:lines]))
    return status


# -------------------------------------------------------------------------------------- grep
def _bre_to_python(pattern: str) -> str:
    r"""Basic regular expressions: `\(`, `\)`, `\{`, `\}`, `\|`, `\+`, `\?` are the operators and
    the bare characters are literals (the reverse of Python's syntax)."""
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            out.append(nxt if nxt in "(){}|+?" else "\\" + nxt)
            i += 2
            continue
        out.append("\\" + c if c in "(){}|+?" else c)
        i += 1
    return "".join(out)


@command("grep", "egrep", "fgrep")
def grep(call: Invocation) -> int:
    args = list(call.args)
    opts: set[str] = set()
    patterns: list[str] = []
    positionals: list[str] = []
    extended = call.name == "egrep"
    fixed = call.name == "fgrep"
    ended = False
    while args:
        arg = args.pop(0)
        if ended or not arg.startswith("-") or arg == "-":
            positionals.append(arg)
            continue
        if arg == "--":
            ended = True
            continue
        if arg == "-e" and args:
            patterns.append(args.pop(0))
            continue
        if arg.startswith("--"):
            named = {"--ignore-case": "i", "--invert-match": "v", "--count": "c",
                     "--line-number": "n", "--files-with-matches": "l", "--quiet": "q",
                     "--silent": "q", "--word-regexp": "w", "--only-matching": "o",
                     "--extended-regexp": "E", "--fixed-strings": "F", "--recursive": "r",
                     "--no-filename": "h", "--with-filename": "H"}
            if arg.startswith("--color"):
                continue
            if arg not in named:
                call.error(f"grep: unrecognized option '{arg}'")
                return 2
            opts.add(named[arg])
            continue
        for letter in arg[1:]:
            if letter not in "ivcnlqwoEFrRhHsx":
                call.error(f"grep: invalid option -- '{letter}'")
                if not _busybox(call):
                    call.error("Usage: grep [OPTION]... PATTERNS [FILE]...\n"
                               "Try 'grep --help' for more information.")
                return 2
            opts.add(letter)
    if not patterns and positionals:
        patterns.append(positionals.pop(0))
    paths = positionals
    if not patterns:
        if _busybox(call):
            call.error("BusyBox v1.37.0 (2024-09-26 21:31:42 UTC) multi-call binary.\n\n"
                       "Usage: grep [-HhnlLoqvsrRiwFE] [-m N] [-A|B|C N] { PATTERN | -e PATTERN... "
                       "| -f FILE... } [FILE]...")
        else:
            call.error("Usage: grep [OPTION]... PATTERNS [FILE]...\n"
                       "Try 'grep --help' for more information.")
        return 2
    extended = extended or "E" in opts
    fixed = fixed or "F" in opts
    flags = re.IGNORECASE if "i" in opts else 0
    compiled = []
    for pattern in patterns:
        for piece in pattern.split("\n"):
            if fixed:
                source = re.escape(piece)
            elif extended:
                source = piece
            else:
                source = _bre_to_python(piece)
            if "w" in opts:
                source = rf"(?<![\w])(?:{source})(?![\w])"
            if "x" in opts:
                source = rf"^(?:{source})$"
            try:
                compiled.append(re.compile(source, flags))
            except re.error:
                call.error("grep: Unmatched ( or \\(" if "(" in piece else
                           f"grep: Invalid regular expression '{piece}'")
                return 2
    sources = _expand_sources(call, paths or ["-"], recursive=bool({"r", "R"} & opts))
    show_names = ("H" in opts or len(sources) > 1 or bool({"r", "R"} & opts)) and "h" not in opts
    matched_any = False
    status_error = False
    for path in sources:
        content = _read(call, "grep", path) if not (path in call.ctx.directories()
                                                     and "s" in opts) else None
        if content is None:
            status_error = True
            continue
        label = "(standard input)" if path == "-" else path
        count = 0
        call.ctx.meter().need_split(content, "\n")
        for number, line in enumerate(content.splitlines(), start=1):
            hits = [m for rx in compiled for m in rx.finditer(line)]
            selected = bool(hits) != ("v" in opts)
            if not selected:
                continue
            count += 1
            matched_any = True
            if "q" in opts:
                return 0
            if {"c", "l"} & opts:
                continue
            prefix = (f"{label}:" if show_names else "") + (f"{number}:" if "n" in opts else "")
            if "o" in opts and "v" not in opts:
                for hit in sorted(hits, key=lambda m: m.start()):
                    if hit.group(0):
                        call.write(f"{prefix}{hit.group(0)}\n")
            else:
                call.write(f"{prefix}{line}\n")
        if "l" in opts and count:
            call.write(f"{label}\n")
        elif "c" in opts:
            call.write((f"{label}:" if show_names else "") + f"{count}\n")
    if status_error and not ("q" in opts and matched_any):
        return 2
    return 0 if matched_any else 1


def _expand_sources(call: Invocation, paths: list[str], *, recursive: bool) -> list[str]:
    if not recursive:
        return paths
    out: list[str] = []
    dirs = call.ctx.directories()
    for path in paths:
        full = call.shell.abspath(path)
        if full in dirs:
            prefix = full.rstrip("/") + "/"
            for candidate in sorted(call.ctx.files):
                if candidate.startswith(prefix) and "/.." not in candidate[len(prefix) - 1:]:
                    out.append(path.rstrip("/") + "/" + candidate[len(prefix):])
        else:
            out.append(path)
    return out


# ---------------------------------------------------------------------------------------- wc
@command("wc")
def wc(call: Invocation) -> int:
    selected = ""
    paths: list[str] = []
    for arg in call.args:
        if arg.startswith("-") and arg != "-":
            for letter in arg[1:]:
                if letter not in "lwcm":
                    call.error(f"wc: invalid option -- '{letter}'")
                    return 1
                selected += "c" if letter == "m" else letter
        else:
            paths.append(arg)
    order = [k for k in "lwc" if k in selected] or ["l", "w", "c"]
    rows: list[tuple[list[int], str | None]] = []
    status = 0
    for path in paths or ["-"]:
        content = _read(call, "wc", path)
        if content is None:
            status = 1
            continue
        call.ctx.meter().need_split(content)
        figures = {"l": content.count("\n"), "w": len(content.split()), "c": len(content.encode())}
        rows.append(([figures[k] for k in order], None if path == "-" else path))
    if len(rows) > 1:
        totals = [sum(r[0][i] for r in rows) for i in range(len(order))]
        rows.append((totals, "total"))
    if _busybox(call):
        width = 9 if len(order) > 1 else 0
    elif len(order) == 1 and len(rows) == 1:
        width = 0
    elif not paths:
        width = 7
    else:
        width = max((len(str(n)) for r in rows for n in r[0]), default=1)
    for numbers, name in rows:
        text = " ".join(f"{n:>{width}}" for n in numbers)
        call.write(text + (f" {name}" if name else "") + "\n")
    return status
