"""The tokenizer: words as quoted/unquoted segments, operators and fd-prefixed redirections."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from sregym.twin.node.shell.syntax import Segment, ShellSyntaxError, Word

_OPERATORS = ("<<<", "<<-", "<<", "&&", "||", ";;", ">>", "&>", ">&", "<&", ";", "&", "|", "(", ")", "<", ">",
              "\n")
HEREDOC_OPS = ("<<", "<<-")
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass
class Token:
    kind: str  # "word" | "op" | "io" (fd-prefixed redirection, e.g. 2>)
    value: Any
    raw: str = ""
    line: int = 0  # the source line the token starts on (dash's `sh: 3: x: not found`)


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


def heredoc_word(body: str) -> Word:
    """An unquoted here-document's body as a word: `$`-expansions and backquotes expand,
    a backslash escapes only `$`, `` ` ``, `\\` and a newline, and nothing is field-split."""
    segs: list[Segment] = []
    buf = ""
    i = 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body) and body[i + 1] in "$`\\\n":
            if body[i + 1] != "\n":
                buf += body[i + 1]
            i += 2
            continue
        if c in "$`":
            seg, i = _scan_dollar(body, i, True) if c == "$" else _scan_backquote(body, i, True)
            if seg[0] == "lit":
                buf += seg[1]
                continue
            if buf:
                segs.append(("lit", buf, True))
                buf = ""
            segs.append(seg)
            continue
        buf += c
        i += 1
    if buf or not segs:
        segs.append(("lit", buf, True))
    return tuple(segs)


def _read_heredoc(src: str, i: int, delim: str, strip: bool) -> tuple[str, int]:
    """The body of a here-document starting at src[i] (the line after its operator), up to the
    line that is exactly `delim` (after leading tabs with `<<-`); end of input ends it too."""
    lines: list[str] = []
    while i < len(src):
        end = src.find("\n", i)
        line = src[i:] if end < 0 else src[i:end]
        i = len(src) if end < 0 else end + 1
        if strip:
            line = line.lstrip("\t")
        if line == delim:
            return "".join(lines), i
        lines.append(line + ("\n" if end >= 0 else ""))
    return "".join(lines), i


def _heredoc_body(delim_tok: Token, body: str) -> Token:
    quoted = any(seg[2] for seg in delim_tok.value)
    word: Word = (("lit", body, True),) if quoted else heredoc_word(body)
    return Token("word", word, delim_tok.raw)


def _delimiter(tok: Token) -> str:
    return "".join(seg[1] if seg[0] == "lit" else "$" + seg[1] for seg in tok.value)


def tokenize(src: str) -> list[Token]:
    toks: list[Token] = []
    # Here-documents whose delimiter word was read: (its token index, strip tabs); their bodies
    # start on the line after the operator and replace the delimiter token.
    pending: list[tuple[int, bool]] = []
    i = 0
    n = len(src)
    line, counted, start = 1, 0, 0  # the line at src[counted]; where this round's token starts
    while i < n:
        if toks and not toks[-1].line:
            line += src.count("\n", counted, start)
            counted = start
            toks[-1].line = line
        start = i
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
            if op == "\n" and pending:
                for index, strip in pending:
                    body, i = _read_heredoc(src, i, _delimiter(toks[index]), strip)
                    toks[index] = _heredoc_body(toks[index], body)
                pending.clear()
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
        if len(toks) > 1 and toks[-2].kind == "op" and toks[-2].value in HEREDOC_OPS:
            pending.append((len(toks) - 1, toks[-2].value == "<<-"))
    if toks and not toks[-1].line:
        toks[-1].line = line + src.count("\n", counted, start)
    for index, _strip in pending:  # a here-document at the very end of the input is empty
        toks[index] = _heredoc_body(toks[index], "")
    return toks


def _plain(word: Word) -> str | None:
    """The word's text when it is one unquoted literal (for reserved words and names)."""
    if len(word) == 1 and word[0][0] == "lit" and not word[0][2]:
        return word[0][1]
    return None
