"""Observations and actions as Gymnasium `Text`: one fixed character set and a bounded length.

A Gymnasium `Text` space holds strings over a declared character set, up to `max_length`
characters. Tool output is arbitrary Unicode (kubectl prints `…`, logs quote anything), so the
environment maps it into the space, predictably and without losing what it says:

- characters outside `CHARSET` (printable ASCII, newline, tab) are written as Python escapes
  (`…` becomes `\\u2026`, a carriage return `\\r`), so nothing is silently dropped;
- text longer than the limit keeps its head and ends with a marker saying how many characters
  were cut: `\\n[... 1234 more characters truncated]`. The limit is the environment's
  `max_observation_chars` (default `MAX_OBSERVATION_CHARS`).
"""

from __future__ import annotations

import string

CHARSET = "".join(sorted(set(string.printable) - set("\r\x0b\x0c")))  # printable ASCII, \n and \t
MAX_OBSERVATION_CHARS = 32_768
MAX_ACTION_CHARS = 8_192
_ALLOWED = frozenset(CHARSET)


def to_charset(text: str) -> str:
    """`text` with every character outside `CHARSET` written as its Python escape."""
    if all(c in _ALLOWED for c in text):
        return text
    return "".join(c if c in _ALLOWED else c.encode("unicode_escape").decode("ascii") for c in text)


def bounded(text: str, max_length: int) -> str:
    """`to_charset(text)` cut to at most `max_length` characters, marked where it was cut."""
    text = to_charset(text)
    if len(text) <= max_length:
        return text
    for keep in range(max_length, -1, -1):  # the marker's own length depends on the count
        marker = f"\n[... {len(text) - keep} more characters truncated]"
        if keep + len(marker) <= max_length:
            return text[:keep] + marker
    return text[:max_length]


__all__ = ["CHARSET", "MAX_ACTION_CHARS", "MAX_OBSERVATION_CHARS", "bounded", "to_charset"]
