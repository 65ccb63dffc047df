"""`grep` (`egrep`, `fgrep`): GNU grep 3.8 on Debian images, BusyBox grep on BusyBox/Alpine.

Exit status 0 when a line was selected, 1 when none was, 2 on an error (unless `-q` found a
match). Patterns go through `posix_regex.translate` (grep's dialect), so BRE and ERE mean what
they mean to grep; context (-A/-B/-C) prints `--` between groups, `-r` walks the container's filesystem.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sregym.twin.node.shell import Invocation, command
from sregym.twin.userland.filteropts import Spec, is_busybox, parse_or_fail, read_input, usage_error
from sregym.twin.userland.posix_regex import RegexError, translate

GREP = Spec("grep", "0123456789A:B:C:D:EFGHIJLPRTUVZabce:f:hilm:noqrsuvwxyz", {
    "after-context=": "A", "before-context=": "B", "context=": "C", "extended-regexp": "E",
    "fixed-strings": "F", "basic-regexp": "G", "perl-regexp": "P", "with-filename": "H",
    "no-filename": "h", "ignore-case": "i", "no-ignore-case": "no-ignore-case",
    "files-without-match": "L", "files-with-matches": "l", "max-count=": "m",
    "line-number": "n", "no-messages": "s", "only-matching": "o", "quiet": "q", "silent": "q",
    "recursive": "r", "dereference-recursive": "R", "invert-match": "v", "word-regexp": "w",
    "line-regexp": "x", "count": "c", "regexp=": "e", "file=": "f", "byte-offset": "b",
    "text": "a", "null": "Z", "null-data": "z", "initial-tab": "T", "label=": "label",
    "include=": "include", "exclude=": "exclude", "exclude-dir=": "exclude-dir",
    "color": "color", "colour": "color", "color=": "color", "colour=": "color",
    "line-buffered": "line-buffered", "binary-files=": "binary-files", "version": "V",
    "help": "help", "group-separator=": "group-separator",
    "no-group-separator": "no-group-separator"},
    gnu_usage="Usage: grep [OPTION]... PATTERNS [FILE]...", status=2, busybox_status=2,
    usage="grep [-HhnlLoqvsrRiwFE] [-m N] [-A|B|C N] { PATTERN | -e PATTERN... | -f FILE... } "
          "[FILE]...")

_OLD = "0123456789"


@dataclass
class _Options:
    flags: set[str] = field(default_factory=set)
    patterns: list[str] = field(default_factory=list)
    after: int = 0
    before: int = 0
    max_count: int | None = None
    label: str = "(standard input)"
    separator: str | None = "--"


def _context_number(call: Invocation, value: str) -> int | None:
    if value.isdigit():
        return int(value)
    call.error(f"grep: {value}: invalid context length argument")
    return None


def _options(call: Invocation) -> tuple[_Options, list[str]] | int:
    parsed = parse_or_fail(call, GREP)
    if isinstance(parsed, int):
        return parsed
    options, operands = parsed
    opts = _Options()
    digits = ""
    for key, value in options:
        if key in _OLD:
            digits += key
            opts.after = opts.before = int(digits)
            continue
        digits = ""
        if key in "ABC":
            number = _context_number(call, value)
            if number is None:
                return 2
            if key in "AC":
                opts.after = number
            if key in "BC":
                opts.before = number
        elif key == "e":
            opts.patterns.extend(value.split("\n"))
        elif key == "f":
            content = read_input(call, "grep", value)
            if content is None:
                return 2
            opts.patterns.extend(content.split("\n")[:-1] if content.endswith("\n")
                                 else content.split("\n"))
        elif key == "m":
            try:
                opts.max_count = int(value)
            except ValueError:
                call.error("grep: invalid max count")
                return 2
        elif key == "label":
            opts.label = value
        elif key == "group-separator":
            opts.separator = value
        elif key == "no-group-separator":
            opts.separator = None
        elif key == "y":
            opts.flags.add("i")
        elif key == "no-ignore-case":
            opts.flags.discard("i")
        elif key in ("E", "F", "G", "P"):
            opts.flags -= {"E", "F", "G", "P"}
            opts.flags.add(key)
        elif key in ("h", "H"):
            opts.flags -= {"h", "H"}
            opts.flags.add(key)
        else:
            opts.flags.add(key)
    if not opts.patterns and "e" not in {k for k, _v in options} and "f" not in {k for k, _v in options}:
        if not operands:
            return usage_error(call, GREP, "") if is_busybox(call) else _bare_usage(call)
        opts.patterns.extend(operands.pop(0).split("\n"))
    if call.name == "egrep" and not opts.flags & {"F", "G", "P"}:
        opts.flags.add("E")
    if call.name == "fgrep" and not opts.flags & {"E", "G", "P"}:
        opts.flags.add("F")
    return opts, operands


def _bare_usage(call: Invocation) -> int:
    call.error("Usage: grep [OPTION]... PATTERNS [FILE]...")
    call.error("Try 'grep --help' for more information.")
    return 2


def compile_patterns(opts: _Options) -> tuple[re.Pattern[str], list[str]]:
    """One regex for all patterns (alternatives); raises RegexError."""
    flags = opts.flags
    sources: list[str] = []
    warnings: list[str] = []
    for pattern in opts.patterns:
        if "F" in flags:
            source = re.escape(pattern)
        else:
            source, warned = translate(pattern, extended="E" in flags or "P" in flags,
                                       dialect="grep")
            warnings.extend(warned)
        if "x" in flags:
            source = rf"^(?:{source})$"
        elif "w" in flags:
            source = rf"(?<![0-9A-Za-z_])(?:{source})(?![0-9A-Za-z_])"
        sources.append(source)
    # One alternation; each pattern's back-references are renumbered past the groups of the
    # patterns before it (`-e '\(a\)\1' -e '\(b\)\1'`).
    joined: list[str] = []
    offset = 0
    try:
        for source in sources:
            shifted = re.sub(r"\\([1-9])", lambda m, by=offset: f"\\{int(m.group(1)) + by}",
                             source)
            joined.append(f"(?:{shifted})")
            offset += re.compile(source).groups
        return re.compile("|".join(joined), re.IGNORECASE if "i" in flags else 0), warnings
    except re.error as bad:
        raise RegexError("Invalid regular expression") from bad


def _longest(rx: re.Pattern[str], line: str, start: int, end: int) -> int:
    """POSIX matching is leftmost-longest: the longest match starting at `start`."""
    if len(line) - start > 4096:
        return end
    for stop in range(len(line), end, -1):
        if rx.fullmatch(line, start, stop):
            return stop
    return end


def _matches(rx: re.Pattern[str], line: str) -> list[tuple[int, int]]:
    spans = []
    pos = 0
    while pos <= len(line):
        m = rx.search(line, pos)
        if m is None:
            break
        start, end = m.start(), _longest(rx, line, m.start(), m.end())
        if end == start:
            pos = start + 1
            continue
        spans.append((start, end))
        pos = end
    return spans


def _expand_sources(call: Invocation, paths: list[str], opts: _Options) -> list[str]:
    """-r: every file below each directory operand; with no operand GNU searches `.` and names
    the files relative to it (`conf/app.yaml`, not `./conf/app.yaml`)."""
    if not opts.flags & {"r", "R"}:
        return paths
    out: list[str] = []
    dirs = call.ctx.directories()
    for path in paths or [""]:
        full = call.shell.abspath(path or ".")
        if full in dirs:
            prefix = full.rstrip("/") + "/"
            shown = path.rstrip("/") + "/" if path else ""
            for candidate in sorted(call.ctx.files):
                if candidate.startswith(prefix) and not candidate.startswith("/proc/"):
                    out.append(shown + candidate[len(prefix):])
        else:
            out.append(path)
    return out


@command("grep", "egrep", "fgrep")
def grep(call: Invocation) -> int:
    parsed = _options(call)
    if isinstance(parsed, int):
        return parsed
    opts, paths = parsed
    flags = opts.flags
    try:
        rx, warnings = compile_patterns(opts)
    except RegexError as bad:
        call.error(f"grep: {bad}")
        return 2
    for warning in warnings:
        call.error(f"grep: warning: {warning}")
    recursive = bool(flags & {"r", "R"})
    sources = _expand_sources(call, paths or ([] if recursive else ["-"]), opts)
    show_names = ("H" in flags or len(sources) > 1 or recursive) and "h" not in flags
    selected_any = False
    error = False
    printed: list[bool] = [False]  # context groups of different files are separated too
    for path in sources:
        content = _source(call, path, flags, recursive)
        if content is None:
            error = True
            continue
        label = opts.label if path == "-" else path
        count = _scan(call, rx, content, label if show_names else None, opts, printed)
        selected_any = selected_any or count > 0
        if count and "q" in flags:
            return 0
        if ("l" in flags and count) or ("L" in flags and not count):
            call.write(label + ("\0" if "Z" in flags else "\n"))
        elif "c" in flags and not flags & {"l", "L"}:
            call.write((f"{label}:" if show_names else "") + f"{count}\n")
    if error and not ("q" in flags and selected_any):
        return 2
    return 0 if selected_any else 1


def _source(call: Invocation, path: str, flags: set[str], recursive: bool) -> str | None:
    if path != "-" and call.shell.abspath(path) in call.ctx.directories():
        if recursive:
            return None
        if "s" not in flags:
            call.error(f"grep: {path}: Is a directory")
        return None
    return read_input(call, "grep", path, quiet="s" in flags)


def _scan(call: Invocation, rx: re.Pattern[str], content: str, name: str | None,
          opts: _Options, printed: list[bool]) -> int:
    """Print one input's selected lines (with context); return how many were selected.
    `printed[0]` says whether an earlier input printed a context group."""
    flags = opts.flags
    invert = "v" in flags
    quiet = bool(flags & {"q", "l", "L", "c"})
    lines = content.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    count = 0
    last_printed = -1
    pending_after = 0
    out: list[str] = []

    offsets: list[int] = []  # -b: each line's byte offset, computed on first use

    def emit(index: int, sep: str, text: str, column: int = 0) -> None:
        prefix = (f"{name}{sep}" if name is not None else "") + \
            (f"{index + 1}{sep}" if "n" in flags else "")
        if "b" in flags:
            if not offsets:
                total = 0
                for line in lines:
                    offsets.append(total)
                    total += len(line.encode("utf-8", "surrogateescape")) + 1
            start = len(lines[index][:column].encode("utf-8", "surrogateescape"))
            prefix += f"{offsets[index] + start}{sep}"
        out.append(prefix + text + "\n")

    for index, line in enumerate(lines):
        hit = rx.search(line) is not None
        if opts.max_count is not None and count >= opts.max_count:
            # GNU prints the trailing context of the last match, matching lines included.
            if pending_after and not quiet:
                emit(index, "-", line)
                pending_after -= 1
                continue
            break
        if hit == invert:
            if pending_after and not quiet:
                emit(index, "-", line)
                last_printed = index
                pending_after -= 1
            continue
        count += 1
        if quiet:
            if "q" in flags:
                break
            continue
        first = max(last_printed + 1, index - opts.before)
        context = bool(opts.before or opts.after) and opts.separator is not None
        if context and (first > last_printed + 1 if last_printed >= 0 else printed[0]):
            out.append(opts.separator + "\n")  # type: ignore[operator]
        printed[0] = True
        for ctx_index in range(first, index):
            emit(ctx_index, "-", lines[ctx_index])
        if "o" in flags and not invert:
            for start, end in _matches(rx, line):
                emit(index, ":", line[start:end], start)
        elif "o" not in flags:
            emit(index, ":", line)
        last_printed = index
        pending_after = opts.after
    call.write("".join(out))
    return count

