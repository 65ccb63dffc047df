"""Glob patterns for `case`, pathname expansion (`pathexpand`) and the commands that match names."""

from __future__ import annotations

import re

_CLASSES = {"alpha": "a-zA-Z", "digit": "0-9", "alnum": "a-zA-Z0-9", "upper": "A-Z", "lower": "a-z",
            "space": " \\t\\n\\r\\f\\v", "blank": " \\t", "punct": re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"),
            "xdigit": "0-9A-Fa-f", "cntrl": "\\x00-\\x1f\\x7f", "print": "\\x20-\\x7e", "graph": "\\x21-\\x7e"}


def _bracket(pattern: str, start: int) -> tuple[re.Pattern[str], int] | None:
    """The `[...]` expression at `start` as a one-character regex and the index after it; None
    when it is not closed (the `[` is then literal). `!` or `^` negates, a leading `]` is a
    member, `[:alpha:]` names a class, a backslash escapes the next character."""
    i = start + 1
    negate = i < len(pattern) and pattern[i] in "!^"
    i += negate
    body: list[str] = []
    first = True
    while i < len(pattern):
        c = pattern[i]
        if c == "]" and not first:
            try:
                return re.compile(f"[{'^' if negate else ''}{''.join(body)}]", re.S), i + 1
            except re.error:
                return None
        first = False
        if c == "[" and pattern.startswith(":", i + 1):
            end = pattern.find(":]", i + 2)
            name = pattern[i + 2:end] if end >= 0 else ""
            if name in _CLASSES:
                body.append(_CLASSES[name])
                i = end + 2
                continue
        if c == "\\" and i + 1 < len(pattern):
            i += 1
            c = pattern[i]
        if c == "-" and body and i + 1 < len(pattern) and pattern[i + 1] != "]":
            body.append("-")
        else:
            body.append(re.escape(c))
        i += 1
    return None


def _glob_tokens(pattern: str) -> list[str | re.Pattern[str]]:
    """A pattern as tokens: "*", "?", a literal character (escaped: "\\c"), or a compiled `[...]`
    class. A backslash makes the next character literal."""
    tokens: list[str | re.Pattern[str]] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "[":
            found = _bracket(pattern, i)
            if found is not None:
                tokens.append(found[0])
                i = found[1]
                continue
        if c == "\\" and i + 1 < len(pattern):
            i += 1
            tokens.append("\\" + pattern[i])
        else:
            tokens.append(c if c in "*?" else "\\" + c)
        i += 1
    return tokens


def glob_match(pattern: str, text: str) -> bool:
    """Shell pattern matching (`case`), in O(len(pattern) * len(text)) like sh's own matcher: a
    translation to a backtracking regex took minutes for `*a*a*a*a*a*b` against 200 characters,
    with the server stuck meanwhile."""
    tokens = _glob_tokens(pattern)
    p = t = 0
    star, mark = -1, 0
    while t < len(text):
        token = tokens[p] if p < len(tokens) else None
        if token == "*":
            star, mark = p, t
            p += 1
            continue
        if token is not None and (token == "?" or (token == "\\" + text[t]) or
                                  (isinstance(token, re.Pattern) and token.fullmatch(text[t]))):
            p += 1
            t += 1
            continue
        if star < 0:
            return False
        p, mark = star + 1, mark + 1
        t = mark
    return all(token == "*" for token in tokens[p:])
