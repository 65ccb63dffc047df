r"""POSIX basic and extended regular expressions (GNU flavour) translated to Python `re`.

grep, sed and awk inside a container take POSIX patterns, whose syntax differs from Python's: in
a BRE `\(`, `\{m,n\}`, `\|`, `\+`, `\?` are operators and the bare characters literals; `*` at
the start is literal; `^` and `$` are anchors only at the ends of the pattern (or of a group or
branch); bracket expressions take `[:alpha:]` classes. Passing a pattern through would match the
wrong text, so each is rewritten token by token, and a malformed one fails with the regcomp
message the real tool prints. `.` matches a newline (sed's pattern space after `N`, grep -z).

The three tools part where their front ends do, so one translator takes the `dialect`:

- grep parses with GNU dfa first: a leading `*`, `+` or `?` in an ERE is warned about and
  dropped, an unmatched `)` or a malformed `{` in an ERE is literal, `a**` is `a*`, and
  `[:space:]` outside brackets is refused; a backslash inside brackets is an ordinary character;
- sed reads C escapes (`\n`, `\t`, ...) in and out of brackets, and `\\`, `\]` inside them;
- awk (mawk) has no back-references nor GNU operators (`\w`, `\<`), braces are literals, and
  every backslash inside brackets escapes the next character.

Python's engine is leftmost-first where POSIX is leftmost-longest: they differ only for
alternatives that are prefixes of each other (`a|ab`), which one-liners seldom rely on.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Literal

Dialect = Literal["grep", "sed", "awk"]

CLASSES = {
    "alpha": "a-zA-Z", "digit": "0-9", "alnum": "0-9A-Za-z", "upper": "A-Z", "lower": "a-z",
    "space": " \\t\\n\\r\\f\\v", "blank": " \\t", "print": "\\x20-\\x7e", "graph": "\\x21-\\x7e",
    "cntrl": "\\x00-\\x1f\\x7f", "xdigit": "0-9A-Fa-f",
    "punct": "".join("\\" + c for c in "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"),
}
ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}
_WORD = "[0-9A-Za-z_]"
_GNU_OPERATORS = {"<": f"(?<!{_WORD})(?={_WORD})", ">": f"(?<={_WORD})(?!{_WORD})",
                  "`": "\\A", "'": "\\Z", **{c: "\\" + c for c in "bBwWsS"}}


class RegexError(ValueError):
    """A pattern the real tool rejects; the message is its regcomp text (without any prefix)."""


def bracket(pattern: str, i: int, dialect: Dialect = "sed") -> tuple[str, int]:
    """The bracket expression starting at pattern[i] == '[' as a Python class, and the index
    after its closing ']'."""
    j = i + 1
    out = ["["]
    if j < len(pattern) and pattern[j] == "^":
        out.append("^")
        j += 1
    first = True
    while True:
        if j >= len(pattern):
            raise RegexError("Unmatched [, [^, [:, [., or [=")
        c = pattern[j]
        if c == "]" and not first:
            out.append("]")
            return "".join(out), j + 1
        first = False
        if c == "[" and j + 1 < len(pattern) and pattern[j + 1] in ":=.":
            kind = pattern[j + 1]
            end = pattern.find(kind + "]", j + 2)
            if end < 0:
                raise RegexError("Unmatched [, [^, [:, [., or [=")
            name = pattern[j + 2:end]
            if kind == ":":
                if name not in CLASSES:
                    raise RegexError("Invalid character class name")
                out.append(CLASSES[name])
            else:
                if len(name) != 1:
                    raise RegexError("Invalid collation character")
                out.append(re.escape(name))
            j = end + 2
            continue
        if c == "\\" and dialect != "grep" and j + 1 < len(pattern):
            nxt = pattern[j + 1]
            if nxt in ESCAPES or dialect == "awk" or nxt in "\\]":
                out.append(re.escape(ESCAPES.get(nxt, nxt)))
                j += 2
                continue
        if c == "-" and len(out) > 1 and j + 1 < len(pattern) and pattern[j + 1] != "]":
            out.append("-")
            j += 1
            continue
        out.append(c if c.isalnum() or c == " " else "\\" + c)
        j += 1


def _interval(pattern: str, i: int, closer: str) -> tuple[str, int] | None:
    """`{m,n}` from its contents at pattern[i] (after the opening brace) to `closer`, and the
    index after it; None if unclosed or not an interval."""
    end = pattern.find(closer, i)
    if end < 0:
        return None
    low, comma, high = pattern[i:end].partition(",")
    if not (low.isdigit() or (not low and comma)) or (high and not high.isdigit()):
        return None
    if high and low and int(high) < int(low):
        raise RegexError("Invalid content of \\{\\}")
    return "{" + (low or "0") + comma + high + "}", end + len(closer)


def _strict_interval(pattern: str, i: int, closer: str) -> tuple[str, int]:
    """An interval where a malformed one is an error (regcomp's reading)."""
    interval = _interval(pattern, i, closer)
    if interval is None:
        raise RegexError("Unmatched \\{" if pattern.find(closer, i) < 0
                         else "Invalid content of \\{\\}")
    return interval


def translate(pattern: str, *, extended: bool = False, dialect: Dialect = "sed",
              multiline: bool = False) -> tuple[str, list[str]]:
    """Python `re` source for a BRE (or ERE when `extended`) as `dialect` reads it, and the
    warnings the tool prints about it (grep's only). Anchors are `^`/`$` when `multiline` (to
    be compiled with re.MULTILINE) or for grep (its lines hold no newline), else `\\A`/`\\Z`."""
    grep, awk = dialect == "grep", dialect == "awk"
    out: list[str] = []
    warnings: list[str] = []
    groups = 0
    open_groups: list[int] = []
    closed: set[int] = set()
    start_anchor, end_anchor = ("^", "$") if multiline or grep else ("\\A", "\\Z")
    at_start = True  # an operand position: `*` is a literal here, `^` an anchor
    quantified = False  # GNU dfa reads `a**` as `a*`; Python rejects it
    i, n = 0, len(pattern)

    def quantify(source: str, was_quantified: bool) -> bool:
        if not (grep and was_quantified):
            out.append(source)
        return True

    def open_group() -> None:
        nonlocal groups
        groups += 1
        open_groups.append(groups)
        out.append("(")

    def close_group() -> None:
        if not open_groups:
            raise RegexError("Unmatched ) or \\)")
        closed.add(open_groups.pop())
        out.append(")")

    while i < n:
        c = pattern[i]
        start_here, at_start = at_start, False
        was_quantified, quantified = quantified, False
        if c == "\\":
            if i + 1 >= n:
                raise RegexError("Trailing backslash")
            nxt = pattern[i + 1]
            i += 2
            if not extended and nxt == "(":
                open_group()
                at_start = True
            elif not extended and nxt == ")":
                close_group()
            elif not extended and nxt == "|":
                out.append("|")
                at_start = True
            elif not extended and nxt == "{":
                if start_here and grep:
                    out.append("\\{")
                    continue
                source, i = _strict_interval(pattern, i, "\\}")
                quantified = quantify(source, was_quantified)
            elif not extended and nxt in "+?":
                if start_here:
                    out.append("\\" + nxt)
                else:
                    quantified = quantify(nxt, was_quantified)
            elif nxt.isdigit() and nxt != "0" and not awk:
                if int(nxt) not in closed:
                    raise RegexError("Invalid back reference")
                out.append("\\" + nxt)
            elif nxt in ESCAPES and not grep:
                out.append(re.escape(ESCAPES[nxt]))
            elif nxt in _GNU_OPERATORS and not awk:
                out.append(_GNU_OPERATORS[nxt])
            else:
                out.append(re.escape(nxt))
            continue
        i += 1
        if c == "[":
            if grep and pattern.startswith("[:", i - 1) and pattern.find(":]", i) > 0 and \
                    pattern[i + 1:pattern.find(":]", i)].isalpha():
                raise RegexError("character class syntax is [[:space:]], not [:space:]")
            source, i = bracket(pattern, i - 1, dialect)
            out.append(source)
        elif c == ".":
            out.append("(?s:.)")
        elif c == "^":
            if start_here or extended:
                out.append(start_anchor)
                at_start = True
            else:
                out.append("\\^")
        elif c == "$":
            rest = pattern[i:]
            anchor = extended or not rest or rest.startswith(("\\)", "\\|"))
            out.append(end_anchor if anchor else "\\$")
        elif c == "*" or (extended and c in "+?"):
            if not start_here:
                quantified = quantify(c, was_quantified)
            elif extended and grep:
                warnings.append(f"{c} at start of expression")
            else:
                out.append("\\" + c)
        elif extended and c == "(":
            open_group()
            at_start = True
        elif extended and c == ")":
            if grep and not open_groups:
                out.append("\\)")
            else:
                close_group()
        elif extended and c == "|":
            out.append("|")
            at_start = True
        elif extended and c == "{" and not awk:
            interval = (None if start_here else _interval(pattern, i, "}")) if grep \
                else _strict_interval(pattern, i, "}")
            if interval is None:
                out.append("\\{")
            else:
                quantified = quantify(interval[0], was_quantified)
                i = interval[1]
        else:
            out.append(re.escape(c))
    if open_groups:
        raise RegexError("Unmatched ( or \\(")
    return "".join(out), warnings


def compile_posix(pattern: str, *, extended: bool = False, icase: bool = False,
                  multiline: bool = False, dialect: Dialect = "sed") -> re.Pattern[str]:
    """`translate` and compile (sed's and awk's regcomp); RegexError for what it rejects."""
    text, _warnings = translate(pattern, extended=extended, dialect=dialect, multiline=multiline)
    try:
        return re.compile(text, (re.IGNORECASE if icase else 0) | (re.MULTILINE if multiline else 0))
    except re.error as exc:
        if "invalid group reference" in str(exc) or "unknown group" in str(exc):
            raise RegexError("Invalid back reference") from exc
        raise RegexError("Invalid preceding regular expression") from exc


def successive_matches(regex: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    """The matches a global substitution (sed's `s///g`, awk's `gsub`) replaces, left to right:
    an empty match right where the previous match ended is not one (`s/x*/-/g` on `abc` gives
    `-a-b-c-`)."""
    pos, prev_end = 0, -1
    while pos <= len(text):
        match = regex.search(text, pos)
        if match is None:
            return
        start, end = match.span()
        if start == end and start == prev_end:
            pos = start + 1
            continue
        yield match
        prev_end = end
        pos = end if end > start else end + 1
