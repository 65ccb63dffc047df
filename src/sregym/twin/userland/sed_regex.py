"""POSIX regular expressions (BRE and ERE, with the GNU extensions) as Python `re` patterns.

`sed` and `awk` inside a container take POSIX patterns, whose syntax differs from Python's:
in a BRE `\\(`, `\\{`, `\\|`, `\\+` and `\\?` are the operators and the bare characters are
literals; `[[:digit:]]` is a bracket class; a backslash inside brackets is an ordinary
character; `^` and `$` are anchors only at the ends of the pattern (or of a group or branch);
`*` at the start of a BRE is a literal. `.` matches a newline (sed's pattern space after `N`).
`translate` turns one into a Python pattern; `parse_replacement` and `expand` handle sed's
right-hand side (`&`, `\\1`, `\\n`, GNU's `\\U`/`\\L`/`\\u`/`\\l`/`\\E`).

Python's engine is leftmost-first where POSIX is leftmost-longest: they differ only for
alternatives that are prefixes of each other (`a|ab`), which one-liners seldom rely on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CLASSES = {
    "alpha": "a-zA-Z", "digit": "0-9", "alnum": "0-9a-zA-Z", "upper": "A-Z", "lower": "a-z",
    "space": " \\t\\n\\r\\f\\v", "blank": " \\t", "punct": "!-/:-@\\[-`{-~",
    "print": " -~", "graph": "!-~", "cntrl": "\\x00-\\x1f\\x7f", "xdigit": "0-9A-Fa-f",
}
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}
_PY_ESCAPES = {"w": r"\w", "W": r"\W", "s": r"\s", "S": r"\S", "b": r"\b", "B": r"\B",
               "<": r"\b(?=\w)", ">": r"\b(?<=\w)", "`": r"\A", "'": r"\Z"}


class RegexError(ValueError):
    """A pattern the real tool rejects; the message is the regcomp text GNU sed prints."""


def bracket(pattern: str, i: int, *, awk: bool = False) -> tuple[str, int]:
    """The bracket expression starting at pattern[i] == '[' as a Python class, and the index
    after its closing ']'. In POSIX a backslash is literal inside brackets; awk (and GNU sed
    for `\\n`, `\\t`, `\\]`) treat it as an escape."""
    j = i + 1
    out = "["
    if j < len(pattern) and pattern[j] == "^":
        out += "^"
        j += 1
    first = True
    while True:
        if j >= len(pattern):
            raise RegexError("Unmatched [, [^, [:, [., or [=")
        ch = pattern[j]
        if ch == "]" and not first:
            return out + "]", j + 1
        first = False
        if ch == "[" and j + 1 < len(pattern) and pattern[j + 1] in ":.=":
            kind = pattern[j + 1]
            end = pattern.find(kind + "]", j + 2)
            if end < 0:
                raise RegexError("Unmatched [, [^, [:, [., or [=")
            name = pattern[j + 2:end]
            if kind == ":":
                if name not in CLASSES:
                    raise RegexError("Invalid character class name")
                out += CLASSES[name]
            else:
                out += re.escape(name)
            j = end + 2
            continue
        if ch == "\\" and j + 1 < len(pattern):
            nxt = pattern[j + 1]
            if nxt in _ESCAPES:
                out += re.escape(_ESCAPES[nxt])
                j += 2
                continue
            if awk or nxt in "\\]":
                out += re.escape(nxt)
                j += 2
                continue
        if ch in "\\[^&~|":
            out += "\\" + ch
        else:
            out += ch
        j += 1


def translate(pattern: str, *, extended: bool = False, awk: bool = False,
              multiline: bool = False) -> str:
    """A POSIX BRE (or ERE when `extended`) as a Python pattern. `awk` selects awk's dialect
    (an ERE where `\\/` and `\\"` are literals and braces are literal, as in mawk)."""
    out: list[str] = []
    i, n = 0, len(pattern)
    depth = 0
    at_start = True  # an operand position: `*` is a literal here, `^` an anchor
    start_anchor = "^" if multiline else r"\A"
    end_anchor = "$" if multiline else r"\Z"
    while i < n:
        ch = pattern[i]
        was_start, at_start = at_start, False
        if ch == "\\":
            if i + 1 >= n:
                raise RegexError("Trailing backslash")
            nxt = pattern[i + 1]
            i += 2
            if not extended and nxt == "(":
                out.append("(")
                depth += 1
                at_start = True
            elif not extended and nxt == ")":
                if depth == 0:
                    raise RegexError("Unmatched ) or \\)")
                depth -= 1
                out.append(")")
            elif not extended and nxt == "|":
                out.append("|")
                at_start = True
            elif not extended and nxt in "+?":
                out.append(nxt if not was_start else "\\" + nxt)
            elif not extended and nxt == "{":
                end = pattern.find("\\}", i)
                if end < 0:
                    raise RegexError("Unmatched \\{")
                out.append(_interval(pattern[i:end]))
                i = end + 2
            elif nxt.isdigit() and nxt != "0" and not awk:
                out.append("\\" + nxt)
            elif nxt in _ESCAPES:
                out.append(re.escape(_ESCAPES[nxt]))
            elif nxt in _PY_ESCAPES and not awk:
                out.append(_PY_ESCAPES[nxt])
            else:
                out.append(re.escape(nxt))
        elif ch == "[":
            cls, i = bracket(pattern, i, awk=awk)
            out.append(cls)
        elif ch == ".":
            out.append("(?s:.)")
            i += 1
        elif ch == "*":
            out.append("\\*" if was_start else "*")
            i += 1
        elif ch == "^":
            if extended or was_start:
                out.append(start_anchor)
                at_start = True
            else:
                out.append("\\^")
            i += 1
        elif ch == "$":
            rest = pattern[i + 1:]
            if extended or not rest or rest.startswith("\\)") or rest.startswith("\\|"):
                out.append(end_anchor)
            else:
                out.append("\\$")
            i += 1
        elif extended and ch in "()":
            if ch == "(":
                depth += 1
                at_start = True
            else:
                if depth == 0:
                    raise RegexError("Unmatched ) or \\)")
                depth -= 1
            out.append(ch)
            i += 1
        elif extended and ch == "|":
            out.append("|")
            at_start = True
            i += 1
        elif extended and ch in "+?":
            out.append("\\" + ch if was_start else ch)
            i += 1
        elif extended and ch == "{" and not awk:
            end = pattern.find("}", i)
            if end < 0:
                raise RegexError("Unmatched \\{")
            out.append(_interval(pattern[i + 1:end]))
            i = end + 1
        else:
            out.append(re.escape(ch))
            i += 1
    if depth:
        raise RegexError("Unmatched ( or \\(")
    return "".join(out)


def _interval(body: str) -> str:
    if not re.fullmatch(r"\d*(,\d*)?", body) or body in ("", ","):
        raise RegexError("Invalid content of \\{\\}")
    lo, _, hi = body.partition(",")
    if "," in body:
        if lo and hi and int(lo) > int(hi):
            raise RegexError("Invalid content of \\{\\}")
        return "{" + (lo or "0") + "," + hi + "}"
    return "{" + lo + "}"


def compile_posix(pattern: str, *, extended: bool = False, icase: bool = False,
                  multiline: bool = False, awk: bool = False) -> re.Pattern[str]:
    """`translate` and compile; RegexError for what the real regcomp rejects."""
    text = translate(pattern, extended=extended, awk=awk, multiline=multiline)
    try:
        return re.compile(text, (re.IGNORECASE if icase else 0) | (re.MULTILINE if multiline else 0))
    except re.error as exc:
        if "invalid group reference" in str(exc) or "unknown group" in str(exc):
            raise RegexError("Invalid back reference") from exc
        raise RegexError("Invalid preceding regular expression") from exc


# ------------------------------------------------------------------------------ replacement
@dataclass(frozen=True)
class Piece:
    """One part of a replacement: literal text, a group (0 for `&`), or a case switch."""

    text: str = ""
    group: int = -1
    case: str = ""  # "U", "L", "u", "l", "E"


def parse_replacement(text: str) -> list[Piece]:
    pieces: list[Piece] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "&":
            pieces.append(Piece(group=0))
            i += 1
        elif ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            i += 2
            if nxt.isdigit():
                pieces.append(Piece(group=int(nxt)))
            elif nxt in _ESCAPES:
                pieces.append(Piece(text=_ESCAPES[nxt]))
            elif nxt in "ULulE":
                pieces.append(Piece(case=nxt))
            else:
                pieces.append(Piece(text=nxt))
        else:
            pieces.append(Piece(text=ch))
            i += 1
    return pieces


def max_group(pieces: list[Piece]) -> int:
    return max((piece.group for piece in pieces), default=0)


def expand(pieces: list[Piece], match: re.Match[str]) -> str:
    """The replacement text for one match, GNU case conversions applied."""
    out: list[str] = []
    mode, once = "", ""
    for piece in pieces:
        if piece.case:
            if piece.case in "ul":
                once = piece.case
            else:
                mode = "" if piece.case == "E" else piece.case
                once = ""
            continue
        text = piece.text if piece.group < 0 else (match.group(piece.group) or "")
        if mode == "U":
            text = text.upper()
        elif mode == "L":
            text = text.lower()
        if once and text:
            text = (text[0].upper() if once == "u" else text[0].lower()) + text[1:]
            once = ""
        out.append(text)
    return "".join(out)
