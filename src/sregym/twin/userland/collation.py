"""How `sort` compares two keys: numeric (-n), human (-h), general (-g), version (-V) and month
(-M) orders, and the folding (-f), dictionary (-d) and printable (-i) filters.

Containers run without a locale, so text compares byte by byte as in the C locale (code point
order for the twin's text, which is the same order for UTF-8). Numbers follow GNU sort: no
thousands separator, '.' as the decimal point, text that is not a number counts as zero.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal

BLANKS = " \t"
_NUMBER = re.compile(r"[ \t]*(-?)(\d*)(?:\.(\d*))?")
_HUMAN_UNITS = "KMGTPEZYRQ"
_MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
_FLOAT = re.compile(r"[ \t\n\v\f\r]*([-+]?(?:inf(?:inity)?|nan|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|"
                    r"0[xX][0-9a-fA-F]+))", re.IGNORECASE)


def _sign(value: int | float | Decimal) -> int:
    return (value > 0) - (value < 0)


def _decimal(text: str) -> tuple[Decimal, re.Match[str]]:
    match = _NUMBER.match(text)
    assert match is not None  # the pattern matches the empty string
    sign, whole, frac = match.groups()
    value = Decimal(f"{whole or '0'}.{frac or '0'}")
    return (-value if sign else value), match


def numeric_compare(a: str, b: str) -> int:
    return _sign(_decimal(a)[0] - _decimal(b)[0])


def human_compare(a: str, b: str) -> int:
    """-h: the unit decides first (none < K < M ...), then the number; negatives reversed."""
    def order(text: str) -> tuple[int, Decimal]:
        value, match = _decimal(text)
        unit = text[match.end():match.end() + 1]
        rank = _HUMAN_UNITS.find(unit.upper() if unit == "k" else unit) + 1 if unit else 0
        return (-rank if value < 0 else rank), value
    (ra, va), (rb, vb) = order(a), order(b)
    return _sign(ra - rb) or _sign(va - vb)


def general_compare(a: str, b: str) -> int:
    """-g: strtod numbers; text that is not a number sorts first, then NaN, then numbers."""
    def order(text: str) -> tuple[int, float]:
        match = _FLOAT.match(text)
        if match is None:
            return 0, 0.0
        raw = match.group(1)
        value = float.fromhex(raw) if "x" in raw.lower() else float(raw)
        return (1, 0.0) if math.isnan(value) else (2, value)
    (ka, va), (kb, vb) = order(a), order(b)
    return _sign(ka - kb) or _sign(va - vb)


def month_compare(a: str, b: str) -> int:
    def order(text: str) -> int:
        word = text.lstrip(BLANKS)[:3].upper()
        return _MONTHS.index(word) + 1 if word in _MONTHS else 0
    return _sign(order(a) - order(b))


def _order(text: str, pos: int) -> int:
    if pos >= len(text):
        return 0
    char = text[pos]
    if char.isdigit():
        return 0
    if char.isascii() and char.isalpha():
        return ord(char)
    if char == "~":
        return -1
    return ord(char) + 256


def _verrevcmp(a: str, b: str) -> int:
    """The Debian version comparison: non-digit runs by `_order`, digit runs by value."""
    i = j = 0
    while i < len(a) or j < len(b):
        first_diff = 0
        while (i < len(a) and not a[i].isdigit()) or (j < len(b) and not b[j].isdigit()):
            ac, bc = _order(a, i), _order(b, j)
            if ac != bc:
                return ac - bc
            i += 1
            j += 1
        while i < len(a) and a[i] == "0":
            i += 1
        while j < len(b) and b[j] == "0":
            j += 1
        while i < len(a) and a[i].isdigit() and j < len(b) and b[j].isdigit():
            if not first_diff:
                first_diff = ord(a[i]) - ord(b[j])
            i += 1
            j += 1
        if i < len(a) and a[i].isdigit():
            return 1
        if j < len(b) and b[j].isdigit():
            return -1
        if first_diff:
            return first_diff
    return 0


_SUFFIX = re.compile(r"(?:\.[A-Za-z~][A-Za-z0-9~]*)*$")


def version_compare(a: str, b: str) -> int:
    """-V: GNU filevercmp (empty first, then '.', '..', hidden names; file suffixes last)."""
    if a == b:
        return 0
    if not a or not b:
        return -1 if not a else 1
    for special in (".", ".."):
        if a == special or b == special:
            return -1 if a == special else 1
    if a.startswith(".") != b.startswith("."):
        return -1 if a.startswith(".") else 1
    if a.startswith(".") and b.startswith("."):
        a, b = a[1:], b[1:]
    pa = _SUFFIX.search(a, 1 if a else 0)
    pb = _SUFFIX.search(b, 1 if b else 0)
    prefix_a = a[:pa.start()] if pa else a
    prefix_b = b[:pb.start()] if pb else b
    result = _verrevcmp(prefix_a, prefix_b)
    if result or (prefix_a == a and prefix_b == b):
        return _sign(result)
    return _sign(_verrevcmp(a, b))


def filter_text(text: str, *, fold: bool, dictionary: bool, printable: bool) -> str:
    """The characters a -f/-d/-i comparison looks at."""
    if dictionary:
        text = "".join(c for c in text if c in BLANKS or (c.isascii() and c.isalnum()))
    elif printable:
        text = "".join(c for c in text if " " <= c <= "~")
    if fold:
        text = text.upper() if text.isascii() else "".join(c.upper() if c.isascii() else c for c in text)
    return text
