"""awk values and their conversions.

A value is a float (a number), a str (a string constant or the result of a string operation) or
a `StrNum`: text that came from input (fields, `getline`, `split`, `-v`, ARGV), which compares
as a number when it looks like one. The uninitialised value is `UNINIT`, both "" and 0.
Numbers become strings through CONVFMT (OFMT for `print`), except integral values, which print
as integers: within a C int for mawk, any size for gawk.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

_NUMERIC = re.compile(r"[ \t\n]*[+-]?(?:0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|nan)[ \t\n]*\Z",
                      re.IGNORECASE)
_PREFIX = re.compile(r"[ \t\n]*([+-]?(?:0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?))")
MAX_INT = 2**31 - 1


class StrNum(str):
    """Input text; `num` is its value when it looks numeric, else None."""

    num: float | None

    def __new__(cls, text: str, num: float | None = None, *, probe: bool = True) -> StrNum:
        obj = super().__new__(cls, text)
        obj.num = num if num is not None or not probe else looks_numeric(text)
        return obj


def looks_numeric(text: str) -> float | None:
    if not text or not _NUMERIC.match(text):
        return None
    return str_to_num(text)


def str_to_num(text: str) -> float:
    """strtod on the longest numeric prefix, 0 when there is none (hex as mawk's strtod reads it)."""
    match = _PREFIX.match(text)
    if not match:
        return 0.0
    body = match.group(1)
    sign = -1.0 if body.startswith("-") else 1.0
    digits = body.lstrip("+-")
    if digits[:2].lower() == "0x":
        return sign * float(int(digits[2:], 16))
    return float(body)


UNINIT = StrNum("", 0.0, probe=False)


def to_num(value: object) -> float:
    if isinstance(value, float):
        return value
    if isinstance(value, StrNum):
        return value.num if value.num is not None else str_to_num(value)
    if isinstance(value, str):
        return str_to_num(value)
    return float(value)  # type: ignore[arg-type]


def is_numeric(value: object) -> bool:
    return isinstance(value, float) or (isinstance(value, StrNum) and value.num is not None)


def truth(value: object) -> bool:
    if isinstance(value, float):
        return value != 0.0
    if isinstance(value, StrNum) and value.num is not None:
        return value.num != 0.0
    return value != ""


def special(value: float) -> str | None:
    if math.isnan(value):
        return "-nan" if math.copysign(1.0, value) < 0 else "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return None


def num_to_str(value: float, fmt: str, *, gawk: bool = False) -> str:
    text = special(value)
    if text is not None:
        return text
    if value == int(value) and (gawk or -MAX_INT <= value <= MAX_INT):
        return str(int(value))
    return c_format(fmt, [value], gawk=gawk)


def to_str(value: object, fmt: str = "%.6g", *, gawk: bool = False) -> str:
    if isinstance(value, float):
        return num_to_str(value, fmt, gawk=gawk)
    return str(value)


# ----------------------------------------------------------------------------------- printf
_SPEC = re.compile(r"%([-+ #0]*)(\*|\d+)?(?:\.(\*|\d*))?([a-zA-Z%])")


class FormatError(Exception):
    """printf ran out of arguments or met a conversion it does not know; `partial` is what
    was formatted before (mawk has already written it when it stops)."""

    def __init__(self, text: str, partial: str = "") -> None:
        super().__init__(text)
        self.partial = partial


def c_format(fmt: str, args: list[object], *, gawk: bool = False,
             need: Callable[[int], None] | None = None) -> str:
    """C printf as awk applies it: numbers and strings converted per conversion. `need` is
    asked first for a width or precision that would make a large string (`%999999999d`)."""
    out: list[str] = []
    pos = 0
    argi = 0

    def next_arg() -> object:
        nonlocal argi
        if argi >= len(args):
            raise FormatError("not enough arguments", "".join(out))
        value = args[argi]
        argi += 1
        return value

    while True:
        start = fmt.find("%", pos)
        if start < 0:
            out.append(fmt[pos:])
            break
        out.append(fmt[pos:start])
        match = _SPEC.match(fmt, start)
        if not match:
            out.append(fmt[start:])
            break
        pos = match.end()
        flags, width, prec, conv = match.groups()
        if conv == "%":
            out.append("%")
            continue
        if width == "*":
            width = str(int(to_num(next_arg())))
            if width.startswith("-"):
                flags += "-"
                width = width[1:]
        if prec == "*":
            prec = str(max(0, int(to_num(next_arg()))))
        if need is not None and max(int(width or 0), int(prec or 0)) > 1 << 16:
            need(max(int(width or 0), int(prec or 0)))
        spec = "%" + flags + (width or "") + ("." + prec if prec is not None else "")
        value = next_arg()
        if conv in "di":
            number = to_num(value)
            text = special(number)
            if text is not None:
                out.append((spec.replace(".", "") + "s") % text if prec is None else text)
                continue
            if not gawk:
                number = max(-MAX_INT, min(MAX_INT, number))  # mawk converts through a C int
            out.append((spec + "d") % int(number))
        elif conv in "ouxX":
            number = int(to_num(value))
            if number < 0:
                number &= 0xFFFFFFFFFFFFFFFF
            out.append((spec + ("d" if conv == "u" else conv)) % number)
        elif conv in "eEfFgG":
            number = to_num(value)
            text = special(number)
            if text is not None:
                out.append(("%" + flags.replace("0", "") + (width or "") + "s") %
                           (text.upper() if conv.isupper() else text))
                continue
            out.append((spec + conv) % number)
        elif conv == "c":
            if isinstance(value, float) or (isinstance(value, StrNum) and False):
                code = int(value) & 0xFF if not gawk else int(value)
                char = chr(code)
            else:
                char = str(value)[:1] or "\0"
            out.append(("%" + flags + (width or "") + "s") % char)
        elif conv == "s":
            text = to_str(value, gawk=gawk)
            out.append((spec + "s") % text)
        else:
            raise FormatError(f"bad conversion {conv}")
    return "".join(out)
