"""The LogQL tokenizer, and syntax errors worded and positioned as Loki words them."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from sregym.twin.telemetry.logql.base import LogQLError


@dataclass(frozen=True)
class Token:
    kind: str  # STRING NUMBER DURATION IDENT OP EOF
    text: str
    pos: int


_OPS = ("|=", "|~", "!=", "!~", "=~", "==", ">=", "<=", "|", "=", ">", "<", "{", "}", "(", ")",
        "[", "]", ",", "+", "-", "*", "/", "%", "^")
_NUMBER_RE = re.compile(r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_DUR_RE = re.compile(r"(?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h|d|w|y))+")
_BYTES_RE = re.compile(r"\d+(?:\.\d+)?(?:[KMGTkmgt]i?[Bb]|[Bb]|[KMGTkmgt]i?)(?![A-Za-z0-9_])")
IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")


def lex(text: str) -> list[Token]:
    tokens: list[Token] = []
    pos = 0
    while pos < len(text):
        ch = text[pos]
        if ch.isspace():
            pos += 1
            continue
        if ch == "#":  # comment to end of line
            end = text.find("\n", pos)
            pos = len(text) if end < 0 else end
            continue
        if ch == '"':
            end = pos + 1
            while end < len(text) and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            if end >= len(text):
                raise syntax_error(text, pos, "literal not terminated")
            raw = text[pos:end + 1]
            try:
                value = json.loads(raw)
            except ValueError:
                value = raw[1:-1].encode("utf-8").decode("unicode_escape", errors="replace")
            tokens.append(Token("STRING", value, pos))
            pos = end + 1
            continue
        if ch == "`":
            end = text.find("`", pos + 1)
            if end < 0:
                raise syntax_error(text, pos, "literal not terminated")
            tokens.append(Token("STRING", text[pos + 1:end], pos))
            pos = end + 1
            continue
        if ch.isdigit():
            for kind, regex in (("DURATION", _DUR_RE), ("BYTES", _BYTES_RE), ("NUMBER", _NUMBER_RE)):
                m = regex.match(text, pos)
                if m and (kind != "DURATION" or not (m.end() < len(text) and
                                                     (text[m.end()].isalnum() or text[m.end()] == "_"))):
                    tokens.append(Token(kind, m.group(), pos))
                    pos = m.end()
                    break
            else:
                raise syntax_error(text, pos, f"unexpected character {ch!r}")
            continue
        m = IDENT_RE.match(text, pos)
        if m:
            tokens.append(Token("IDENT", m.group(), pos))
            pos = m.end()
            continue
        for op in _OPS:
            if text.startswith(op, pos):
                tokens.append(Token("OP", op, pos))
                pos += len(op)
                break
        else:
            raise syntax_error(text, pos, f"unexpected character {ch!r}")
    tokens.append(Token("EOF", "", len(text)))
    return tokens


def _line_col(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return line, col


def syntax_error(text: str, pos: int, message: str) -> LogQLError:
    line, col = _line_col(text, pos)
    return LogQLError(f"parse error at line {line}, col {col}: syntax error: {message}")
