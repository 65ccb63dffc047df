"""`cut` and `paste`: selecting and joining columns, with GNU coreutils' list syntax and errors.

`cut` lists are `N`, `N-`, `-M`, `N-M` items separated by commas or blanks; overlapping ranges
merge (adjacent ones do not, which is where `--output-delimiter` goes in -b/-c mode). Containers
have no locale, so `-c` counts bytes as `-b` does, as GNU cut does in the C locale.
"""

from __future__ import annotations

import re

from sregym.twin.node.shell import Invocation, command
from sregym.twin.userland.filteropts import Spec, is_busybox, read_input, split_lines, with_options

CUT = Spec("cut", "b:c:d:f:nsz", {
    "bytes=": "b", "characters=": "c", "delimiter=": "d", "fields=": "f", "only-delimited": "s",
    "zero-terminated": "z", "complement": "complement", "output-delimiter=": "output-delimiter"},
    usage="cut [OPTIONS] [FILE]...")
PASTE = Spec("paste", "d:sz", {"delimiters=": "d", "serial": "s", "zero-terminated": "z"},
             usage="paste [-d LIST] [-s] [FILE]...")
_BIG = 2 ** 63


class ListError(ValueError):
    """A malformed LIST; the message is cut's."""


def parse_list(text: str, fields: bool) -> list[tuple[int, int]]:
    """Sorted, merged 1-based inclusive ranges (hi `_BIG` = to the end of the line)."""
    what = "fields are numbered from 1" if fields else "byte/character positions are numbered from 1"
    ranges: list[tuple[int, int]] = []
    pos = 0
    for item in re.split(r"[, \t]", text):
        start = pos
        pos += len(item) + 1
        match = re.fullmatch(r"(\d*)(-?)(\d*)", item)
        if match is None:
            bad = re.search(r"[^\d-]", item)
            if bad is None:
                raise ListError("invalid field range" if fields else "invalid byte or character range")
            rest = text[start + bad.start():]
            raise ListError(f"invalid field value '{rest}'" if fields
                            else f"invalid byte/character position '{rest}'")
        low, dash, high = match.groups()
        for number in (low, high):
            if number and int(number) >= _BIG // 2:
                raise ListError(f"field number '{number}' is too large" if fields
                                else f"byte/character offset '{number}' is too large")
        if not dash:
            if not low or int(low) == 0:
                raise ListError(what)
            ranges.append((int(low), int(low)))
            continue
        if not low and not high:
            raise ListError("invalid range with no endpoint: -")
        lo = int(low) if low else 1
        hi = int(high) if high else _BIG
        if lo == 0 or (high and int(high) == 0):
            raise ListError(what)
        if hi < lo:
            raise ListError("invalid decreasing range")
        ranges.append((lo, hi))
    ranges.sort()
    merged: list[tuple[int, int]] = []
    for lo, hi in ranges:
        if merged and merged[-1][1] >= lo:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return merged


def complement(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    next_lo = 1
    for lo, hi in ranges:
        if lo > next_lo:
            out.append((next_lo, lo - 1))
        next_lo = hi + 1
    if next_lo < _BIG:
        out.append((next_lo, _BIG))
    return out


def _cut_usage(call: Invocation, message: str) -> int:
    call.error(f"cut: {message}")
    if not is_busybox(call):
        call.error("Try 'cut --help' for more information.")
    return 1


def _cut_positions(line: str, ranges: list[tuple[int, int]], delimiter: str | None) -> str:
    data = line.encode("utf-8", "surrogateescape")
    pieces = []
    for lo, hi in ranges:
        if lo > len(data):
            break
        pieces.append(data[lo - 1:hi])
    joiner = (delimiter if delimiter is not None else "").encode()
    return joiner.join(pieces).decode("utf-8", "replace")


def _cut_fields(line: str, ranges: list[tuple[int, int]], delimiter: str, output: str,
                only_delimited: bool) -> str | None:
    if delimiter not in line:
        return None if only_delimited else line
    fields = line.split(delimiter)
    chosen = [field for index, field in enumerate(fields, start=1)
              if any(lo <= index <= hi for lo, hi in ranges)]
    return output.join(chosen)


@command("cut")
@with_options(CUT)
def cut(call: Invocation, options: list[tuple[str, str]], operands: list[str]) -> int:
    mode = ""
    spec = ""
    delimiter = None
    output = None
    only_delimited = invert = False
    terminator = "\n"
    for key, value in options:
        if key in "bcf":
            if mode:
                return _cut_usage(call, "only one list may be specified")
            mode, spec = key, value
        elif key == "d":
            if len(value) > 1:
                return _cut_usage(call, "the delimiter must be a single character")
            delimiter = value or "\n"
        elif key == "s":
            only_delimited = True
        elif key == "z":
            terminator = "\0"
        elif key == "complement":
            invert = True
        elif key == "output-delimiter":
            output = value
    if not mode:
        return _cut_usage(call, "expected a list of bytes, characters, or fields" if is_busybox(call)
                          else "you must specify a list of bytes, characters, or fields")
    if mode != "f" and delimiter is not None:
        return _cut_usage(call, "an input delimiter may be specified only when operating on fields")
    if mode != "f" and only_delimited:
        return _cut_usage(call, "suppressing non-delimited lines makes sense\n"
                                "\tonly when operating on fields")
    try:
        ranges = parse_list(spec, mode == "f")
    except ListError as bad:
        return _cut_usage(call, str(bad))
    if invert:
        ranges = complement(ranges)
    delimiter = "\t" if delimiter is None else delimiter
    status = 0
    out: list[str] = []
    for path in operands or ["-"]:
        content = read_input(call, "cut", path)
        if content is None:
            status = 1
            continue
        for line in split_lines(content, terminator):
            if mode == "f":
                kept = _cut_fields(line, ranges, delimiter, delimiter if output is None else output,
                                   only_delimited)
                if kept is not None:
                    out.append(kept + terminator)
            else:
                out.append(_cut_positions(line, ranges, output) + terminator)
    call.write("".join(out))
    return status


# ------------------------------------------------------------------------------------- paste
def _paste_delimiters(text: str) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            out.append({"n": "\n", "t": "\t", "\\": "\\", "0": ""}.get(nxt, nxt))
            i += 2
        else:
            out.append(c)
            i += 1
    return out or [""]


@command("paste")
@with_options(PASTE)
def paste(call: Invocation, options: list[tuple[str, str]], operands: list[str]) -> int:
    delimiters = ["\t"]
    serial = False
    terminator = "\n"
    for key, value in options:
        if key == "d":
            delimiters = _paste_delimiters(value)
        elif key == "s":
            serial = True
        elif key == "z":
            terminator = "\0"
    paths = operands or ["-"]
    dashes = paths.count("-")
    stdin_lines = split_lines(call.stdin, terminator) if dashes else []
    columns: list[list[str]] = []
    seen_dashes = 0
    for path in paths:
        if path == "-":
            # Several `-` operands share stdin's offset: they take its lines in turn.
            columns.append(stdin_lines[seen_dashes::dashes] if not serial else
                           (stdin_lines if seen_dashes == 0 else []))
            seen_dashes += 1
            continue
        content = read_input(call, "paste", path)
        if content is None:
            return 1
        columns.append(split_lines(content, terminator))

    def join(cells: list[str]) -> str:
        text = ""
        for index, cell in enumerate(cells):
            text += (delimiters[(index - 1) % len(delimiters)] if index else "") + cell
        return text + terminator

    out: list[str] = []
    if serial:
        out = [join(lines) for lines in columns]
    else:
        height = max((len(lines) for lines in columns), default=0)
        out = [join([lines[i] if i < len(lines) else "" for lines in columns]) for i in range(height)]
    call.write("".join(out))
    return 0
