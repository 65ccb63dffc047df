"""The tokenizer: words as quoted/unquoted segments, operators and fd-prefixed redirections."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from sregym.twin.node.shell.syntax import Segment, ShellSyntaxError, Word

_OPERATORS = ("&&", "||", ";;", ">>", "&>", ">&", "<&", ";", "&", "|", "(", ")", "<", ">", "\n")
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass
class Token:
    kind: str  # "word" | "op" | "io" (fd-prefixed redirection, e.g. 2>)
    value: Any
    raw: str = ""


def _scan_balanced(src: str, i: int, open_: str, close: str) -> int:
    """Index just past the `close` matching the already-consumed `open_`, respecting quotes."""
    depth = 1
    while i < len(src):
        c = src[i]
        if c == "\\":
            i += 2
            continue
        if c == "'":
            j = src.find("'", i + 1)
            if j < 0:
                raise ShellSyntaxError("syntax error: unterminated quoted string")
            i = j + 1
            continue
        if c == '"':
            i = _scan_double(src, i + 1)[1]
            continue
        if src.startswith(open_, i):
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ShellSyntaxError(f"unexpected end of file (expecting \"{close}\")")


def _scan_dollar(src: str, i: int, quoted: bool) -> tuple[Segment, int]:
    """Parse an expansion starting at src[i] == '$'."""
    nxt = src[i + 1] if i + 1 < len(src) else ""
    if src.startswith("$((", i):
        end = _scan_balanced(src, i + 3, "(", ")")
        if end >= len(src) or src[end] != ")":
            raise ShellSyntaxError("missing )) in arithmetic expansion")
        return ("arith", src[i + 3:end - 1], quoted), end + 1
    if nxt == "(":
        end = _scan_balanced(src, i + 2, "(", ")")
        return ("cmd", src[i + 2:end - 1], quoted), end
    if nxt == "{":
        end = src.find("}", i + 2)
        if end < 0:
            raise ShellSyntaxError("bad substitution")
        return ("var", src[i + 2:end], quoted), end + 1
    m = NAME.match(src, i + 1)
    if m:
        return ("var", m.group(0), quoted), m.end()
    if nxt and (nxt.isdigit() or nxt in "?#$@*!-"):
        return ("var", nxt, quoted), i + 2
    return ("lit", "$", quoted), i + 1


def _scan_backquote(src: str, i: int, quoted: bool) -> tuple[Segment, int]:
    """A backquoted command substitution starting at src[i] == "`"."""
    end = src.find("`", i + 1)
    if end < 0:
        raise ShellSyntaxError("unterminated backquote")
    return ("cmd", src[i + 1:end], quoted), end + 1


def _scan_double(src: str, i: int) -> tuple[list[Segment], int]:
    """Parse a double-quoted string body starting after the opening quote."""
    segs: list[Segment] = []
    buf = ""
    while i < len(src):
        c = src[i]
        if c == '"':
            if buf or not segs:
                segs.append(("lit", buf, True))
            return segs, i + 1
        if c == "\\" and i + 1 < len(src) and src[i + 1] in '$`"\\\n':
            if src[i + 1] != "\n":
                buf += src[i + 1]
            i += 2
            continue
        if c == "$":
            seg, i = _scan_dollar(src, i, True)
            if seg[0] == "lit":
                buf += seg[1]
                continue
            if buf:
                segs.append(("lit", buf, True))
                buf = ""
            segs.append(seg)
            continue
        if c == "`":
            seg, i = _scan_backquote(src, i, True)
            if buf:
                segs.append(("lit", buf, True))
                buf = ""
            segs.append(seg)
            continue
        buf += c
        i += 1
    raise ShellSyntaxError("syntax error: unterminated quoted string")


def tokenize(src: str) -> list[Token]:
    toks: list[Token] = []
    i = 0
    n = len(src)
    while i < n:
        c = src[i]
        if c in " \t":
            i += 1
            continue
        if c == "\\" and i + 1 < n and src[i + 1] == "\n":
            i += 2
            continue
        if c == "#" and (not toks or toks[-1].kind == "op" or src[i - 1] in " \t"):
            while i < n and src[i] != "\n":
                i += 1
            continue
        # fd-prefixed redirection: 2>, 2>>, 1>&2, 2>&1
        m = re.match(r"([0-9])(>>|>&|>|<)", src[i:])
        if m:
            toks.append(Token("io", (int(m.group(1)), m.group(2))))
            i += m.end()
            continue
        op = next((o for o in _OPERATORS if src.startswith(o, i)), None)
        if op is not None:
            toks.append(Token("op", op))
            i += len(op)
            continue
        segs: list[Segment] = []
        raw_start = i
        buf = ""
        while i < n:
            c = src[i]
            if c in " \t\n;&|()<>":
                break
            if c == "\\":
                if i + 1 < n and src[i + 1] == "\n":
                    i += 2
                    continue
                if buf:
                    segs.append(("lit", buf, False))
                    buf = ""
                segs.append(("lit", src[i + 1:i + 2], True))
                i += 2
                continue
            if c == "'":
                end = src.find("'", i + 1)
                if end < 0:
                    raise ShellSyntaxError("syntax error: unterminated quoted string")
                if buf:
                    segs.append(("lit", buf, False))
                    buf = ""
                segs.append(("lit", src[i + 1:end], True))
                i = end + 1
                continue
            if c == '"':
                if buf:
                    segs.append(("lit", buf, False))
                    buf = ""
                inner, i = _scan_double(src, i + 1)
                segs.extend(inner)
                continue
            if c == "`":
                seg, i = _scan_backquote(src, i, False)
                if buf:
                    segs.append(("lit", buf, False))
                    buf = ""
                segs.append(seg)
                continue
            if c == "$":
                seg, i = _scan_dollar(src, i, False)
                if seg[0] == "lit":
                    buf += seg[1]
                    continue
                if buf:
                    segs.append(("lit", buf, False))
                    buf = ""
                segs.append(seg)
                continue
            buf += c
            i += 1
        if buf:
            segs.append(("lit", buf, False))
        toks.append(Token("word", tuple(segs), src[raw_start:i]))
    return toks


def _plain(word: Word) -> str | None:
    """The word's text when it is one unquoted literal (for reserved words and names)."""
    if len(word) == 1 and word[0][0] == "lit" and not word[0][2]:
        return word[0][1]
    return None
