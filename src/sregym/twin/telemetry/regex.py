"""Regular expressions with Go's `regexp` semantics (RE2), for every pattern a query carries.

Prometheus and Loki compile label matchers, line filters and `label_replace` patterns with Go's
`regexp`, which is RE2: matching is linear in the input, and syntax that needs backtracking
(backreferences, lookarounds, possessive quantifiers) is a compile error. Python's `re` would
accept those and can take exponential time on a pattern such as `(\\w+)+x`, so a single query could
stall the twin's server. Everything here goes through the `google-re2` bindings instead, and
compile errors are worded as Go words them (`error parsing regexp: missing closing ): ...`).

Compiled patterns are cached in a bounded LRU, so a stream of distinct patterns cannot grow memory.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import re2

# RE2 (C++) wording -> Go regexp/syntax ErrorCode wording, by message prefix.
_GO_CODES = (
    ("invalid perl operator", "invalid or unsupported Perl syntax"),
    ("invalid escape sequence", "invalid escape sequence"),
    ("missing )", "missing closing )"),
    ("unexpected )", "unexpected )"),
    ("missing ]", "missing closing ]"),
    ("invalid repetition size", "invalid repeat count"),
    ("no argument for repetition operator", "missing argument to repetition operator"),
    ("bad repetition operator", "invalid nested repetition operator"),
    ("trailing \\", "trailing backslash at end of expression"),
    ("invalid character class range", "invalid character class range"),
    ("invalid character class", "invalid character class"),
    ("invalid UTF-8", "invalid UTF-8"),
    ("invalid named capture group", "invalid named capture"),
    ("pattern too large", "expression too large"),
    ("bad named capture group", "invalid named capture"),
)
# A generous bound on the pattern itself (Go refuses huge programs too: "expression too large").
MAX_PATTERN_BYTES = 64 * 1024
# RE2's memory budget per compiled pattern (program plus lazily built DFA states; past it RE2 falls
# back to its NFA, still linear) and how many compiled patterns are kept: together they bound what
# a stream of distinct, DFA-hungry patterns can hold.
MAX_REGEX_MEMORY = 2 << 20
CACHE_SIZE = 256


class RegexError(ValueError):
    """A pattern Go's regexp refuses; `str()` is Go's message (`error parsing regexp: ...`)."""


def _options(dotall: bool) -> Any:
    options = re2.Options()
    options.log_errors = False  # RE2 would print every bad pattern on stderr
    options.dot_nl = dotall
    options.max_mem = MAX_REGEX_MEMORY
    return options


def _go_message(raw: str, pattern: str) -> str:
    code, _, fragment = raw.partition(": ")
    for prefix, go in _GO_CODES:
        if raw.startswith(prefix):
            if prefix == "invalid perl operator" and fragment.startswith("(?<"):
                fragment = "(?<"  # Go stops at the `(?<` it cannot read as a named group
            elif prefix in ("missing )", "unexpected )", "pattern too large"):
                fragment = pattern
            elif prefix == "trailing \\":
                fragment = ""
            return f"error parsing regexp: {go}: `{fragment}`"
    return f"error parsing regexp: {code}: `{fragment or pattern}`"


@lru_cache(maxsize=CACHE_SIZE)
def _compile(pattern: str, dotall: bool) -> Any:
    if len(pattern.encode("utf-8", "surrogatepass")) > MAX_PATTERN_BYTES:
        raise RegexError(f"error parsing regexp: expression too large: `{pattern[:40]}...`")
    try:
        return re2.compile(pattern, _options(dotall))
    except re2.error as exc:
        raw = exc.args[0] if exc.args else b""
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
        raise RegexError(_go_message(text, pattern)) from None
    except (TypeError, UnicodeError) as exc:
        raise RegexError(f"error parsing regexp: invalid UTF-8: `{pattern[:40]}` ({exc})") from None


def compile_go(pattern: str, *, dotall: bool = False) -> Any:
    """`regexp.Compile(pattern)`: a compiled RE2 pattern (`search`, `fullmatch`, `match`,
    `groupindex`), or `RegexError` with Go's message."""
    return _compile(pattern, dotall)


def compile_anchored(pattern: str, *, dotall: bool = True) -> Any:
    """A label matcher's regex as Prometheus compiles it: `^(?:pattern)$` (fully anchored).
    `fullmatch` and `search` agree on it."""
    return _compile(f"^(?:{pattern})$", dotall)


def check(pattern: str, *, anchored: bool = False) -> str | None:
    """Go's error message for `pattern`, or None when it compiles."""
    try:
        if anchored:
            compile_anchored(pattern)
        else:
            compile_go(pattern)
    except RegexError as exc:
        return str(exc)
    return None


__all__ = ["MAX_PATTERN_BYTES", "RegexError", "check", "compile_anchored", "compile_go"]
