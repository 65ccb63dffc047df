"""Glob patterns for `case` (and the commands that match names)."""

from __future__ import annotations

import re


def _glob_tokens(pattern: str) -> list[str | re.Pattern[str]]:
    """A `case` pattern as tokens: "*", "?", a literal character, or a compiled `[...]` class."""
    tokens: list[str | re.Pattern[str]] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        end = pattern.find("]", i + 2) if c == "[" else -1
        if end >= 0:
            body = pattern[i + 1:end]
            body = "^" + body[1:] if body.startswith("!") else body
            try:
                tokens.append(re.compile(f"[{body}]", re.S))
                i = end + 1
                continue
            except re.error:
                pass
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
