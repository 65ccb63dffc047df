"""Parsing: `promql-parser` builds the AST; we only translate its errors into Prometheus' words.

Prometheus reports parse errors as "<line>:<col>: parse error: <message>". The parser library
does not expose positions, so on the error path `diagnose.diagnose` re-reads the query with
Prometheus' lexer states, grammar error contexts and type checks to find and word the first error.
When it finds nothing (an error class it does not model), the library's reworded message is kept,
with a position only where it is unambiguous (errors at the end of the input).
"""

from __future__ import annotations

import re

import promql_parser

from sregym.twin.telemetry.promql.diagnose import diagnose
from sregym.twin.telemetry.promql.errors import PromQLError

_END_OF_INPUT = ("unexpected end of input", "unclosed left parenthesis", "unclosed left bracket",
                 "unclosed left brace")


def _position_of_end(query: str) -> str:
    lines = query.split("\n")
    return f"{len(lines)}:{len(lines[-1]) + 1}"


# promql-parser's wording -> Prometheus' wording (same checks, different phrasing).
_REWORD = (
    ("expected type matrix", "expected type range vector"),
    ("got vector", "got instant vector"),
    ("in aggregation expression", "in aggregation parameter"),
    ("unexpected end of input inside brackets", "unclosed left bracket"),
)
_SINGLE_QUOTED = re.compile(r"'([^']*)'")


def _reword(message: str) -> str:
    for old, new in _REWORD:
        message = message.replace(old, new)
    return _SINGLE_QUOTED.sub(lambda m: '"' + m.group(1) + '"', message)


def parse(query: str) -> promql_parser.Expr:
    if query.strip() == "":
        raise PromQLError("bad_data", "1:1: parse error: no expression found in input")
    try:
        return promql_parser.parse(query)
    except (ValueError, TypeError) as exc:
        located = diagnose(query)
        if located is not None:
            raise PromQLError("bad_data", located) from None
        message = _reword(str(exc) or "invalid promql query")
        if any(message.startswith(p) for p in _END_OF_INPUT):
            raise PromQLError("bad_data", f"{_position_of_end(query)}: parse error: {message}") from None
        raise PromQLError("bad_data", f"parse error: {message}") from None


def regex_failure(query: str, exc: Exception) -> PromQLError:
    """A label matcher pattern Go's regexp refuses, found at evaluation: Prometheus reports it as
    a parse error at the matcher's position, which `diagnose` locates."""
    located = diagnose(query)
    return PromQLError("bad_data", located or f"1:1: parse error: {exc}")
