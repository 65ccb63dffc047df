"""`sort` and `uniq`: the GNU coreutils semantics (BusyBox's where its messages differ).

`sort` compares keys (`-k POS1[,POS2]` with per-key options, `-t` separators, blank-led fields
without one) and falls back to the whole line unless `-s`/`-u`, exactly as GNU sort does, so
`sort -k3,3n -t:` output an agent reads matches a real container's byte for byte.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from sregym.twin.node.shell import Invocation, command
from sregym.twin.userland import collation
from sregym.twin.userland.filteropts import Spec, is_busybox, read_input, split_lines, with_options

_ORDERING = "bdfgiMhnRrV"

SORT = Spec("sort", "bcCdfghik:MmnRo:rsS:t:T:uVz", {
    "ignore-leading-blanks": "b", "check": "c", "dictionary-order": "d", "ignore-case": "f",
    "general-numeric-sort": "g", "human-numeric-sort": "h", "ignore-nonprinting": "i",
    "key=": "k", "merge": "m", "month-sort": "M", "numeric-sort": "n", "output=": "o",
    "random-sort": "R", "reverse": "r", "stable": "s", "buffer-size=": "S", "field-separator=": "t",
    "temporary-directory=": "T", "unique": "u", "version-sort": "V", "zero-terminated": "z",
    "parallel=": "parallel"}, status=2, busybox_status=1,
    usage="sort [-nrugMcszbdfiokt] [-o FILE] [-k START[.OFFS][OPTS][,END[.OFFS][OPTS]] "
          "[-t CHAR] [FILE]...")


@dataclass(frozen=True)
class Key:
    """One `-k` (or the whole line): fields/characters 0-based, `end_field` None = line end."""

    start_field: int = 0
    start_char: int = 0
    end_field: int | None = None
    end_char: int = 0
    options: str = ""
    skip_start: bool = False
    skip_end: bool = False


class BadKey(ValueError):
    """A malformed -k argument; the message is GNU's."""


def _count(text: str, where: str, spec: str) -> tuple[int, str]:
    match = re.match(r"\d+", text)
    if match is None:
        raise BadKey(f"{where}: invalid count at start of '{text}'")
    return int(match.group(0)), text[match.end():]


def parse_key(spec: str) -> Key:
    """`-k F[.C][OPTS][,F[.C][OPTS]]` as GNU sort reads it."""
    field, rest = _count(spec, "invalid number at field start", spec)
    if field == 0:
        raise BadKey(f"field number is zero: invalid field specification '{spec}'")
    char = 1
    if rest.startswith("."):
        char, rest = _count(rest[1:], "invalid number after '.'", spec)
        if char == 0:
            raise BadKey(f"character offset is zero: invalid field specification '{spec}'")
    opts, rest = _key_options(rest)
    key = Key(start_field=field - 1, start_char=char - 1, options=opts.replace("b", ""),
              skip_start="b" in opts)
    if rest.startswith(","):
        end, rest = _count(rest[1:], "invalid number after ','", spec)
        if end == 0:
            raise BadKey(f"field number is zero: invalid field specification '{spec}'")
        end_char = 0
        if rest.startswith("."):
            end_char, rest = _count(rest[1:], "invalid number after '.'", spec)
        more, rest = _key_options(rest)
        key = replace(key, end_field=end - 1, end_char=end_char,
                      options=key.options + more.replace("b", ""), skip_end="b" in more)
    if rest:
        raise BadKey(f"stray character in field spec: invalid field specification '{spec}'")
    return key


def _key_options(text: str) -> tuple[str, str]:
    i = 0
    while i < len(text) and text[i] in _ORDERING:
        i += 1
    return text[:i], text[i:]


def _skip_field(line: str, pos: int, tab: str | None) -> int:
    if tab is not None:
        found = line.find(tab, pos)
        return len(line) if found < 0 else found
    while pos < len(line) and line[pos] in collation.BLANKS:
        pos += 1
    while pos < len(line) and line[pos] not in collation.BLANKS:
        pos += 1
    return pos


def key_text(line: str, key: Key, tab: str | None) -> str:
    """The part of `line` a key compares (GNU begfield/limfield)."""
    pos = 0
    for _ in range(key.start_field):
        if pos >= len(line):
            break
        pos = _skip_field(line, pos, tab)
        if tab is not None and pos < len(line):
            pos += 1
    if key.skip_start:
        while pos < len(line) and line[pos] in collation.BLANKS:
            pos += 1
    begin = min(len(line), pos + key.start_char)
    if key.end_field is None:
        return line[begin:]
    words = key.end_field + (1 if key.end_char == 0 else 0)
    pos = 0
    while pos < len(line) and words:
        words -= 1
        pos = _skip_field(line, pos, tab)
        if tab is not None and pos < len(line) and (words or key.end_char):
            pos += 1
    if key.end_char:
        if key.skip_end:
            while pos < len(line) and line[pos] in collation.BLANKS:
                pos += 1
        pos = min(len(line), pos + key.end_char)
    return line[begin:pos] if pos > begin else ""


def _compare_text(a: str, b: str, options: str) -> int:
    if "n" in options:
        return collation.numeric_compare(a, b)
    if "h" in options:
        return collation.human_compare(a, b)
    if "g" in options:
        return collation.general_compare(a, b)
    if "M" in options:
        return collation.month_compare(a, b)
    if "V" in options:
        return collation.version_compare(a, b)
    if {"f", "d", "i"} & set(options):
        a = collation.filter_text(a, fold="f" in options, dictionary="d" in options,
                                  printable="i" in options)
        b = collation.filter_text(b, fold="f" in options, dictionary="d" in options,
                                  printable="i" in options)
    return (a > b) - (a < b)


def comparator(keys: list[Key], tab: str | None, *, last_resort: bool,
               reverse: bool) -> Callable[[str, str], int]:
    def compare(a: str, b: str) -> int:
        for key in keys:
            result = _compare_text(key_text(a, key, tab), key_text(b, key, tab), key.options)
            if result:
                return -result if "r" in key.options else result
        if not last_resort:
            return 0
        result = (a > b) - (a < b)
        return -result if reverse else result
    return compare


@command("sort")
@with_options(SORT)
def sort(call: Invocation, options: list[tuple[str, str]], operands: list[str]) -> int:
    flags = ""
    keys: list[Key] = []
    tab: str | None = None
    output = None
    check = ""
    for key, value in options:
        if key == "k":
            try:
                keys.append(parse_key(value))
            except BadKey as bad:
                call.error(f"sort: {bad}")
                return 1 if is_busybox(call) else 2
        elif key == "t":
            if not value:
                call.error("sort: empty tab")
                return 2
            if len(value) > 1 and value != "\\0":
                call.error(f"sort: multi-character tab '{value}'")
                return 2
            tab = "\0" if value == "\\0" else value
        elif key == "o":
            output = value
        elif key in "cC":
            check = key
        elif key in _ORDERING or key in "usz":
            flags += key
    global_opts = "".join(c for c in flags if c in _ORDERING and c != "b")
    blanks = "b" in flags
    keys = [replace(k, options=global_opts, skip_start=blanks, skip_end=blanks)
            if not k.options and not k.skip_start and not k.skip_end else k for k in keys]
    if not keys:
        keys = [Key(options=global_opts, skip_start=blanks, skip_end=blanks)]
    unique, stable = "u" in flags, "s" in flags
    terminator = "\0" if "z" in flags else "\n"
    if check and len(operands) > 1:
        call.error(f"sort: extra operand '{operands[1]}' not allowed with -{check}")
        return 2
    lines: list[str] = []
    for path in operands or ["-"]:
        content = read_input(call, "sort", path)
        if content is None:
            return 2 if not is_busybox(call) else 1
        lines.extend(split_lines(content, terminator))
    compare = comparator(keys, tab, last_resort=not (stable or unique), reverse="r" in flags)
    if check:
        for number in range(1, len(lines)):
            result = compare(lines[number - 1], lines[number])
            if result > 0 or (unique and result == 0):
                if check == "c":
                    name = operands[0] if operands else "-"
                    call.error(f"sort: {name}:{number + 1}: disorder: {lines[number]}")
                return 1
        return 0
    ordered = sorted(lines, key=functools.cmp_to_key(compare))
    if unique:
        kept: list[str] = []
        for line in ordered:
            if not kept or compare(kept[-1], line) != 0:
                kept.append(line)
        ordered = kept
    text = "".join(line + terminator for line in ordered)
    if output is not None:
        call.ctx.files[call.shell.abspath(output)] = text
        return 0
    call.write(text)
    return 0


# -------------------------------------------------------------------------------------- uniq
UNIQ = Spec("uniq", "cdDf:is:uw:z", {
    "count": "c", "repeated": "d", "all-repeated": "D", "skip-fields=": "f", "ignore-case": "i",
    "skip-chars=": "s", "unique": "u", "check-chars=": "w", "zero-terminated": "z",
    "group": "group"}, usage="uniq [-cduiz] [-f,s,w N] [FILE [OUTFILE]]")


def _uniq_key(line: str, fields: int, chars: int, width: int | None, fold: bool) -> str:
    pos = 0
    for _ in range(fields):
        while pos < len(line) and line[pos] in collation.BLANKS:
            pos += 1
        while pos < len(line) and line[pos] not in collation.BLANKS:
            pos += 1
    text = line[pos + chars:] if pos + chars < len(line) else ""
    if width is not None:
        text = text[:width]
    return text.upper() if fold else text


def _number(call: Invocation, value: str, what: str) -> int | None:
    if value.isdigit():
        return int(value)
    if is_busybox(call):
        call.error(f"uniq: invalid number '{value}'")
    else:
        call.error(f"uniq: {value}: invalid number of {what}")
    return None


@command("uniq")
@with_options(UNIQ)
def uniq(call: Invocation, options: list[tuple[str, str]], operands: list[str]) -> int:
    flags = ""
    fields = chars = 0
    width: int | None = None
    for key, value in options:
        if key in "fsw":
            number = _number(call, value, {"f": "fields to skip", "s": "bytes to skip",
                                           "w": "bytes to compare"}[key])
            if number is None:
                return 1
            if key == "f":
                fields = number
            elif key == "s":
                chars = number
            else:
                width = number
        else:
            flags += key
    if len(operands) > 2:
        call.error(f"uniq: extra operand '{operands[2]}'")
        if not is_busybox(call):
            call.error("Try 'uniq --help' for more information.")
        return 1
    if "D" in flags and "c" in flags and not is_busybox(call):
        call.error("uniq: printing all duplicated lines and repeat counts is meaningless")
        call.error("Try 'uniq --help' for more information.")
        return 1
    terminator = "\0" if "z" in flags else "\n"
    content = read_input(call, "uniq", operands[0] if operands else "-")
    if content is None:
        return 1
    groups: list[list[str]] = []
    last = None
    for line in split_lines(content, terminator):
        key = _uniq_key(line, fields, chars, width, "i" in flags)
        if groups and key == last:
            groups[-1].append(line)
        else:
            groups.append([line])
            last = key
    out: list[str] = []
    for group in groups:
        repeated = len(group) > 1
        if ("d" in flags or "D" in flags) and not repeated:
            continue
        if "u" in flags and repeated:
            continue
        shown = group if "D" in flags else group[:1]
        for line in shown:
            out.append((f"{len(group):7d} " if "c" in flags else "") + line + terminator)
    text = "".join(out)
    if len(operands) == 2 and operands[1] != "-":
        call.ctx.files[call.shell.abspath(operands[1])] = text
        return 0
    call.write(text)
    return 0
