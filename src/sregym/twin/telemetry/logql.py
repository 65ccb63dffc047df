"""A LogQL subset with Loki's semantics: parsing and evaluation over log streams.

Supported: stream selectors with `=`, `!=`, `=~`, `!~`; line filters `|=`, `!=`, `|~`, `!~`
(chainable with `or`); `| json` and `| logfmt` (optionally with `label="path"` extractions),
`| regexp "(?P<name>...)"`; every regex is RE2 (`sregym.twin.telemetry.regex`), as in Loki;
label filters with string matchers and numeric comparisons (`==`, `!=`, `>`, `>=`, `<`, `<=`,
numbers, durations and byte sizes), combined with `and`/`,`/`or` and parentheses;
`| line_format "{{.label}}"`, `| label_format new=old`, `| drop`, `| keep`, `| decolorize`;
metric queries `count_over_time`, `rate`, `bytes_over_time`, `bytes_rate`, `absent_over_time`
with `[range]` and `offset`, vector aggregations `sum/avg/min/max/count/stddev/stdvar/topk/
bottomk` with `by`/`without`, and arithmetic between metric expressions and numbers.

Like Loki: extracted labels that collide with stream labels get an `_extracted` suffix, parser
failures add `__error__`/`__error_details__`, line timestamps are nanoseconds, log windows are
[start, end), and range aggregation windows are (t - range, t].

The evaluator is independent of storage: it is handed a `source(matchers)` function returning
`(labels, entries)` pairs, entries as (timestamp ns, line) in time order.
"""

from __future__ import annotations

import bisect
import json
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from sregym.twin.telemetry.regex import check as regex_check
from sregym.twin.telemetry.regex import compile_anchored, compile_go
from sregym.twin.telemetry.tsdb import Matcher

Labels = dict[str, str]
Entry = tuple[int, str]
Source = Callable[[list[Matcher]], Iterable[tuple[Labels, list[Entry]]]]

NS_PER_MS = 1_000_000
_DURATION_UNITS = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": NS_PER_MS, "s": 1_000_000_000,
                   "m": 60_000_000_000, "h": 3_600_000_000_000, "d": 86_400_000_000_000,
                   "w": 7 * 86_400_000_000_000, "y": 365 * 86_400_000_000_000}
_BYTE_UNITS = {"b": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3, "tb": 1000**4, "kib": 1024,
               "mib": 1024**2, "gib": 1024**3, "tib": 1024**4, "k": 1000, "m": 1000**2, "g": 1000**3,
               "ki": 1024, "mi": 1024**2, "gi": 1024**3}
RANGE_FUNCS = ("count_over_time", "rate", "bytes_over_time", "bytes_rate", "absent_over_time")
VECTOR_AGGS = ("sum", "avg", "min", "max", "count", "stddev", "stdvar", "topk", "bottomk")


class LogQLError(Exception):
    """A query Loki would reject; `str()` is Loki's error text."""


# ------------------------------------------------------------------- lexer
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
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")


def _lex(text: str) -> list[Token]:
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
                raise _syntax(text, pos, "literal not terminated")
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
                raise _syntax(text, pos, "literal not terminated")
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
                raise _syntax(text, pos, f"unexpected character {ch!r}")
            continue
        m = _IDENT_RE.match(text, pos)
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
            raise _syntax(text, pos, f"unexpected character {ch!r}")
    tokens.append(Token("EOF", "", len(text)))
    return tokens


def _line_col(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return line, col


def _syntax(text: str, pos: int, message: str) -> LogQLError:
    line, col = _line_col(text, pos)
    return LogQLError(f"parse error at line {line}, col {col}: syntax error: {message}")


def parse_duration_ns(text: str) -> int:
    total = 0
    for amount, unit in re.findall(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h|d|w|y)", text):
        total += round(float(amount) * _DURATION_UNITS[unit])
    return total


def _parse_bytes(text: str) -> float:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([A-Za-z]*)", text)
    if not m:
        raise ValueError(text)
    unit = m.group(2).lower()
    if unit.endswith("b") and unit != "b":
        unit = unit[:-1] + "b" if unit[:-1] in ("k", "m", "g", "t", "ki", "mi", "gi", "ti") else unit
    factor = _BYTE_UNITS.get(unit) or _BYTE_UNITS.get(unit.rstrip("b")) or 1
    return float(m.group(1)) * factor


# --------------------------------------------------------------------- AST
@dataclass
class LineFilter:
    op: str
    values: list[str]  # `or`-chained alternatives

    def __post_init__(self) -> None:
        self._regexes = [compile_go(v) for v in self.values] if self.op in ("|~", "!~") else []

    def keep(self, line: str) -> bool:
        if self.op == "|=":
            return any(v in line for v in self.values)
        if self.op == "!=":
            return not any(v in line for v in self.values)
        hit = any(r.search(line) for r in self._regexes)
        return hit if self.op == "|~" else not hit


@dataclass
class Parser:
    kind: str  # json | logfmt
    params: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class LabelCmp:
    name: str
    op: str
    value: str
    numeric: float | None = None  # set for numeric comparisons

    def __post_init__(self) -> None:
        self._regex = compile_anchored(self.value) if self.op in ("=~", "!~") else None

    def test(self, labels: Labels) -> bool | None:
        """True/False, or None when the label does not convert (→ LabelFilterErr)."""
        actual = labels.get(self.name, "")
        if self.numeric is None:
            if self.op == "=":
                return actual == self.value
            if self.op == "!=":
                return actual != self.value
            assert self._regex is not None
            hit = self._regex.search(actual) is not None
            return hit if self.op == "=~" else not hit
        if "__error__" in labels:
            return True  # as Loki: after an error only string matchers can filter the line out
        if self.name not in labels:
            return False
        try:
            number = _to_number(actual, self.value)
        except ValueError:
            return None
        return {"==": number == self.numeric, "=": number == self.numeric, "!=": number != self.numeric,
                ">": number > self.numeric, ">=": number >= self.numeric, "<": number < self.numeric,
                "<=": number <= self.numeric}[self.op]


@dataclass
class LabelBool:
    op: str  # and | or
    left: Any
    right: Any


@dataclass
class LabelFilter:
    expr: Any


@dataclass
class LineFormat:
    template: str


@dataclass
class LabelFormat:
    assignments: list[tuple[str, str, bool]]  # (dst, src or template, is_template)


@dataclass
class DropKeep:
    kind: str  # drop | keep
    names: list[str]


@dataclass
class Decolorize:
    pass


@dataclass
class LogExpr:
    matchers: list[Matcher]
    stages: list[Any]


@dataclass
class RangeAgg:
    func: str
    log: LogExpr
    range_ns: int
    offset_ns: int = 0


@dataclass
class VectorAgg:
    op: str
    inner: Any
    by: list[str] | None = None
    without: list[str] | None = None
    param: float | None = None


@dataclass
class BinOp:
    op: str
    left: Any
    right: Any


@dataclass
class Number:
    value: float


# ------------------------------------------------------------------ parser
class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _lex(text)
        self.i = 0

    @property
    def tok(self) -> Token:
        return self.toks[self.i]

    def next(self) -> Token:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def error(self, expecting: str = "") -> LogQLError:
        tok = self.tok
        what = {"EOF": "$end", "STRING": "STRING", "NUMBER": "NUMBER", "DURATION": "DURATION",
                "BYTES": "BYTES", "IDENT": "IDENTIFIER"}.get(tok.kind, tok.text)
        message = f"unexpected {what}" + (f", expecting {expecting}" if expecting else "")
        return _syntax(self.text, tok.pos, message)

    def accept(self, text: str) -> bool:
        if self.tok.kind in ("OP", "IDENT") and self.tok.text == text:
            self.i += 1
            return True
        return False

    def expect(self, text: str) -> None:
        if not self.accept(text):
            raise self.error(text)

    def string(self) -> str:
        if self.tok.kind != "STRING":
            raise self.error("STRING")
        return self.next().text

    # expr -------------------------------------------------------------
    def parse(self) -> Any:
        expr = self.expr(0)
        if self.tok.kind != "EOF":
            raise self.error()
        return expr

    _PREC = {"+": 1, "-": 1, "*": 2, "/": 2, "%": 2, "^": 3}

    def expr(self, min_prec: int) -> Any:
        left = self.unary()
        while self.tok.kind == "OP" and self.tok.text in self._PREC and self._PREC[self.tok.text] > min_prec - 1 \
                and self._PREC[self.tok.text] >= min_prec:
            op = self.next().text
            right = self.expr(self._PREC[op] + (0 if op == "^" else 1))
            if isinstance(left, LogExpr) or isinstance(right, LogExpr):
                raise _syntax(self.text, 0, "unexpected binary operation on log query")
            left = BinOp(op, left, right)
        return left

    def unary(self) -> Any:
        tok = self.tok
        if tok.kind == "NUMBER":
            self.next()
            return Number(float(tok.text))
        if tok.kind == "OP" and tok.text == "-" and self.toks[self.i + 1].kind == "NUMBER":
            self.next()
            return Number(-float(self.next().text))
        if tok.kind == "OP" and tok.text == "{":
            return self.log_expr()
        if tok.kind == "OP" and tok.text == "(":
            self.next()
            inner = self.expr(0)
            self.expect(")")
            return inner
        if tok.kind == "IDENT" and tok.text in RANGE_FUNCS:
            return self.range_agg()
        if tok.kind == "IDENT" and tok.text in VECTOR_AGGS:
            return self.vector_agg()
        raise self.error()

    def range_agg(self) -> RangeAgg:
        func = self.next().text
        self.expect("(")
        if self.accept("("):
            log = self.log_expr()
            self.expect(")")
        else:
            log = self.log_expr()
        if self.tok.text != "[":
            raise self.error("RANGE")
        self.next()
        if self.tok.kind != "DURATION":
            raise self.error("DURATION")
        range_ns = parse_duration_ns(self.next().text)
        self.expect("]")
        offset = 0
        if self.accept("offset"):
            if self.tok.kind != "DURATION":
                raise self.error("DURATION")
            offset = parse_duration_ns(self.next().text)
        self.expect(")")
        return RangeAgg(func, log, range_ns, offset)

    def grouping(self) -> tuple[str, list[str]] | None:
        if self.tok.kind == "IDENT" and self.tok.text in ("by", "without"):
            kind = self.next().text
            self.expect("(")
            names: list[str] = []
            while self.tok.kind == "IDENT":
                names.append(self.next().text)
                if not self.accept(","):
                    break
            self.expect(")")
            return kind, names
        return None

    def vector_agg(self) -> VectorAgg:
        op = self.next().text
        group = self.grouping()
        self.expect("(")
        param = None
        if op in ("topk", "bottomk"):
            if self.tok.kind != "NUMBER":
                raise self.error("NUMBER")
            param = float(self.next().text)
            self.expect(",")
        inner = self.expr(0)
        if isinstance(inner, LogExpr):
            raise _syntax(self.text, self.tok.pos, "unexpected log query in a metric aggregation")
        self.expect(")")
        if group is None:
            group = self.grouping()
        agg = VectorAgg(op, inner, param=param)
        if group is not None:
            if group[0] == "by":
                agg.by = group[1]
            else:
                agg.without = group[1]
        return agg

    # log queries ------------------------------------------------------
    def log_expr(self) -> LogExpr:
        start = self.tok.pos
        self.expect("{")
        matchers: list[Matcher] = []
        while self.tok.kind == "IDENT":
            name = self.next().text
            if self.tok.kind != "OP" or self.tok.text not in ("=", "!=", "=~", "!~"):
                raise self.error("EQ or NEQ or RE or NRE")
            op = self.next().text
            value = self.string()
            if op in ("=~", "!~"):
                _check_regex(value, self.text)
            matchers.append(Matcher(name, op, value))
            if not self.accept(","):
                break
        self.expect("}")
        if not matchers:
            raise LogQLError(f"parse error at line 1, col {start + 2}: syntax error: unexpected }}")
        if all(m.matches({}) for m in matchers):
            raise LogQLError("parse error : queries require at least one regexp or equality matcher that "
                             "does not have an empty-compatible value. For instance, app=~\".*\" does not "
                             "meet this requirement, but app=~\".+\" will")
        stages: list[Any] = []
        while self.tok.kind == "OP" and self.tok.text in ("|=", "!=", "|~", "!~", "|"):
            stages.append(self.stage())
        return LogExpr(matchers, stages)

    def stage(self) -> Any:
        op = self.next().text
        if op != "|":
            values = [self.string()]
            while self.accept("or"):
                values.append(self.string())
            if op in ("|~", "!~"):
                for v in values:
                    _check_regex(v, self.text)
            return LineFilter(op, values)
        tok = self.tok
        if tok.kind == "IDENT" and tok.text in ("json", "logfmt"):
            self.next()
            params: list[tuple[str, str]] = []
            while tok.text == "logfmt" and self.tok.kind == "OP" and self.tok.text == "-":
                self.next()
                self.next()  # --strict / --keep-empty flags: accepted, no effect here
            if self.tok.kind == "IDENT" and self.toks[self.i + 1].text == "=":
                while self.tok.kind == "IDENT":
                    name = self.next().text
                    self.expect("=")
                    params.append((name, self.string() if self.tok.kind == "STRING" else name))
                    if not self.accept(","):
                        break
            return Parser(tok.text, params)
        if tok.kind == "IDENT" and tok.text == "line_format":
            self.next()
            return LineFormat(self.string())
        if tok.kind == "IDENT" and tok.text == "label_format":
            self.next()
            assignments: list[tuple[str, str, bool]] = []
            while self.tok.kind == "IDENT":
                dst = self.next().text
                self.expect("=")
                if self.tok.kind == "STRING":
                    assignments.append((dst, self.next().text, True))
                elif self.tok.kind == "IDENT":
                    assignments.append((dst, self.next().text, False))
                else:
                    raise self.error("IDENTIFIER or STRING")
                if not self.accept(","):
                    break
            return LabelFormat(assignments)
        if tok.kind == "IDENT" and tok.text in ("drop", "keep"):
            self.next()
            names = []
            while self.tok.kind == "IDENT":
                names.append(self.next().text)
                if not self.accept(","):
                    break
            return DropKeep(tok.text, names)
        if tok.kind == "IDENT" and tok.text == "decolorize":
            self.next()
            return Decolorize()
        if tok.kind == "IDENT" and tok.text == "regexp":
            self.next()
            pattern = self.string()
            _check_regex(pattern, self.text)
            names = [n for n in compile_go(pattern).groupindex if n]
            if not names:
                raise LogQLError("at least one named capture must be supplied")
            for name in names:
                if not _IDENT_RE.fullmatch(name) or "." in name:
                    raise LogQLError(f"invalid extracted label name '{name}'")
            return Parser("regexp", [("pattern", pattern)])
        if tok.kind == "IDENT" and tok.text in ("unwrap", "pattern", "unpack"):
            raise LogQLError(f"parse error at line 1, col {tok.pos + 1}: syntax error: {tok.text} is not "
                             "supported by this Loki")
        if tok.kind == "IDENT" or (tok.kind == "OP" and tok.text == "("):
            return LabelFilter(self.label_or())
        raise self.error("IDENTIFIER")

    def label_or(self) -> Any:
        left = self.label_and()
        while self.accept("or"):
            left = LabelBool("or", left, self.label_and())
        return left

    def label_and(self) -> Any:
        left = self.label_term()
        while True:
            if self.accept("and") or self.accept(","):
                left = LabelBool("and", left, self.label_term())
            elif self.tok.kind == "IDENT" and self.tok.text not in ("or", "offset", "by", "without") \
                    and self.toks[self.i + 1].kind == "OP" and self.toks[self.i + 1].text in \
                    ("=", "!=", "=~", "!~", "==", ">", ">=", "<", "<="):
                left = LabelBool("and", left, self.label_term())  # whitespace means "and"
            else:
                return left

    def label_term(self) -> Any:
        if self.accept("("):
            inner = self.label_or()
            self.expect(")")
            return inner
        if self.tok.kind != "IDENT":
            raise self.error("IDENTIFIER")
        name = self.next().text
        if self.tok.kind != "OP" or self.tok.text not in ("=", "!=", "=~", "!~", "==", ">", ">=", "<", "<="):
            raise self.error("comparison operator")
        op = self.next().text
        value_tok = self.next()
        if value_tok.kind == "STRING":
            if op not in ("=", "!=", "=~", "!~"):
                raise _syntax(self.text, value_tok.pos, "unexpected STRING, expecting NUMBER")
            if op in ("=~", "!~"):
                _check_regex(value_tok.text, self.text)
            return LabelCmp(name, op, value_tok.text)
        if value_tok.kind in ("NUMBER", "DURATION", "BYTES"):
            if op in ("=~", "!~"):
                raise _syntax(self.text, value_tok.pos, f"unexpected {value_tok.kind}, expecting STRING")
            if value_tok.kind == "DURATION":
                number = parse_duration_ns(value_tok.text) / 1e9
            elif value_tok.kind == "BYTES":
                number = _parse_bytes(value_tok.text)
            else:
                number = float(value_tok.text)
            return LabelCmp(name, op, value_tok.kind, numeric=number)
        self.i -= 1
        raise self.error("STRING or NUMBER")


def _check_regex(pattern: str, text: str) -> None:
    """Go's regexp (RE2) refuses backreferences and lookarounds, as Loki does."""
    problem = regex_check(pattern)
    if problem is not None:
        raise LogQLError(f"parse error : {problem}")


def parse(query: str) -> Any:
    """Parse a LogQL query into its AST (LogExpr for log queries, else a metric expression)."""
    if not query.strip():
        raise LogQLError("parse error : syntax error: unexpected $end")
    return _Parser(query).parse()


def is_log_query(expr: Any) -> bool:
    return isinstance(expr, LogExpr)


def _to_number(text: str, kind: str) -> float:
    if kind == "DURATION":
        if re.fullmatch(r"(?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h|d|w|y))+", text):
            return parse_duration_ns(text) / 1e9
        return float(text)
    if kind == "BYTES":
        return _parse_bytes(text)
    return float(text)


# --------------------------------------------------------------- pipeline
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_SANITIZE = re.compile(r"[^A-Za-z0-9_]")
_LOGFMT = re.compile(r'([^\s=]+)(?:=("(?:[^"\\]|\\.)*"|\S*))?')


def _sanitize(key: str) -> str:
    key = _SANITIZE.sub("_", key)
    return f"_{key}" if key and key[0].isdigit() else key


def _flatten(prefix: str, value: Any, out: dict[str, str]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}_{_sanitize(k)}" if prefix else _sanitize(k), v, out)
    elif isinstance(value, list):
        out[prefix] = json.dumps(value, separators=(",", ":"))
    elif isinstance(value, bool):
        out[prefix] = "true" if value else "false"
    elif value is None:
        out[prefix] = ""
    elif isinstance(value, float):
        out[prefix] = repr(value) if not value.is_integer() else str(int(value))
    else:
        out[prefix] = str(value)


def _json_path(doc: Any, path: str) -> str | None:
    current = doc
    for part in re.findall(r'[^.\[\]"]+|\[\d+\]|\["[^"]*"\]', path):
        if part.startswith('["'):
            part = part[2:-2]
        elif part.startswith("["):
            if not isinstance(current, list):
                return None
            index = int(part[1:-1])
            if index >= len(current):
                return None
            current = current[index]
            continue
        if not isinstance(current, dict) or part not in current:
            return None
        current = current[part]
    out: dict[str, str] = {}
    _flatten("v", current, out)
    return out.get("v", json.dumps(current, separators=(",", ":")))


def _add_extracted(labels: Labels, stream: Labels, extracted: dict[str, str]) -> None:
    for key, value in extracted.items():
        if not key:
            continue
        target = f"{key}_extracted" if key in stream else key
        labels[target] = value


def _run_parser(stage: Parser, line: str, labels: Labels, stream: Labels) -> None:
    if stage.kind == "regexp":  # RE2, first match; a line that does not match adds nothing
        regex = compile_go(stage.params[0][1])
        match = regex.search(line)
        if match is not None:
            _add_extracted(labels, stream, {name: match.group(name) or ""
                                            for name in regex.groupindex if name})
        return
    if stage.kind == "json":
        try:
            doc = json.loads(line)
        except ValueError as exc:
            labels["__error__"] = "JSONParserErr"
            labels["__error_details__"] = f"Value looks like object, but can't find closing '}}' symbol: {exc}"
            return
        if not isinstance(doc, dict):
            labels["__error__"] = "JSONParserErr"
            labels["__error_details__"] = "Value is not an object"
            return
        if stage.params:
            _add_extracted(labels, stream, {k: v for k, path in stage.params
                                            if (v := _json_path(doc, path)) is not None})
            return
        flat: dict[str, str] = {}
        _flatten("", doc, flat)
        _add_extracted(labels, stream, flat)
        return
    extracted: dict[str, str] = {}
    for m in _LOGFMT.finditer(line):
        key, value = m.group(1), m.group(2)
        if value is None:
            if "=" in key or '"' in key:
                labels["__error__"] = "LogfmtParserErr"
                labels["__error_details__"] = f"logfmt syntax error at pos {m.start() + 1} : unexpected '='"
                return
            value = ""
        elif value.startswith('"'):
            try:
                value = json.loads(value)
            except ValueError:
                value = value[1:-1]
        extracted[_sanitize(key)] = value
    if stage.params:
        extracted = {dst: extracted.get(_sanitize(src), "") for dst, src in stage.params
                     if _sanitize(src) in extracted}
    _add_extracted(labels, stream, extracted)


def _eval_label_filter(expr: Any, labels: Labels) -> bool:
    if isinstance(expr, LabelBool):
        left = _eval_label_filter(expr.left, labels)
        if expr.op == "and":
            return left and _eval_label_filter(expr.right, labels)
        return left or _eval_label_filter(expr.right, labels)
    result = expr.test(labels)
    if result is None:
        if "__error__" not in labels:
            labels["__error__"] = "LabelFilterErr"
            labels["__error_details__"] = f"strconv.ParseFloat: parsing {labels.get(expr.name, '')!r}: " \
                                          "invalid syntax"
        return True  # Loki keeps the line, flagged with the error
    return result


_TEMPLATE_FIELD = re.compile(r"\{\{-?\s*(.*?)\s*-?\}\}")


def _format_template(template: str, labels: Labels, line: str, ts_ns: int) -> str:
    def field_value(m: re.Match[str]) -> str:
        expr = m.group(1)
        parts = [p.strip() for p in expr.split("|")]
        head = parts[0]
        if head == "__line__":
            value = line
        elif head == "__timestamp__":
            value = str(ts_ns)
        elif head.startswith("."):
            value = labels.get(head[1:], "")
        elif head.startswith('"') and head.endswith('"'):
            value = head[1:-1]
        else:
            words = head.split()
            fn, args = words[0], words[1:]
            value = labels.get(args[0][1:], "") if args and args[0].startswith(".") else ""
            parts = [fn, *parts[1:]]
            parts.insert(0, "")
        for fn in parts[1:]:
            fn_name = fn.split()[0] if fn else ""
            value = {"ToUpper": str.upper, "ToLower": str.lower, "upper": str.upper, "lower": str.lower,
                     "Title": str.title, "title": str.title, "TrimSpace": str.strip,
                     "trim": str.strip}.get(fn_name, lambda v: v)(value)
        return value

    return _TEMPLATE_FIELD.sub(field_value, template)


def run_pipeline(stages: list[Any], stream: Labels, entries: Iterable[Entry]) \
        -> Iterable[tuple[Labels, int, str]]:
    """Apply the pipeline; yields (labels, ts_ns, line) of the lines that survive."""
    simple = all(isinstance(s, LineFilter) for s in stages)
    for ts, line in entries:
        if simple:
            if all(s.keep(line) for s in stages):
                yield stream, ts, line
            continue
        labels = dict(stream)
        keep = True
        for stage in stages:
            if isinstance(stage, LineFilter):
                keep = stage.keep(line)
            elif isinstance(stage, Parser):
                _run_parser(stage, line, labels, stream)
            elif isinstance(stage, LabelFilter):
                keep = _eval_label_filter(stage.expr, labels)
            elif isinstance(stage, LineFormat):
                line = _format_template(stage.template, labels, line, ts)
            elif isinstance(stage, LabelFormat):
                for dst, src, is_template in stage.assignments:
                    if is_template:
                        labels[dst] = _format_template(src, labels, line, ts)
                    else:
                        labels[dst] = labels.pop(src, "")
                labels = {k: v for k, v in labels.items() if v != ""}
            elif isinstance(stage, DropKeep):
                if stage.kind == "drop":
                    labels = {k: v for k, v in labels.items() if k not in stage.names}
                else:
                    labels = {k: v for k, v in labels.items() if k in stage.names}
            elif isinstance(stage, Decolorize):
                line = _ANSI.sub("", line)
            if not keep:
                break
        if keep:
            yield {k: v for k, v in labels.items() if v != "" or k == "__error__"}, ts, line


# ------------------------------------------------------------- evaluation
def _key(labels: Labels) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(labels.items()))


@dataclass
class QueryStats:
    lines: int = 0
    bytes: int = 0
    returned: int = 0


def select_logs(expr: LogExpr, source: Source, start_ns: int, end_ns: int, *, limit: int = 100,
                direction: str = "backward", stats: QueryStats | None = None) \
        -> list[tuple[Labels, list[Entry]]]:
    """A log query: streams (labels after the pipeline) with entries in [start, end), at most
    `limit` entries in total (the newest for backward, the oldest for forward)."""
    stats = stats if stats is not None else QueryStats()
    candidates: list[tuple[int, int, tuple[tuple[str, str], ...], Labels, str]] = []
    order = 0
    for stream, entries in source(expr.matchers):
        times = [ts for ts, _ in entries]
        lo = bisect.bisect_left(times, start_ns)
        hi = bisect.bisect_left(times, end_ns)
        window = entries[lo:hi]
        stats.lines += len(window)
        stats.bytes += sum(len(line) for _ts, line in window)
        for labels, ts, line in run_pipeline(expr.stages, stream, window):
            candidates.append((ts, order, _key(labels), labels, line))
            order += 1
    backward = direction == "backward"
    candidates.sort(key=lambda c: (-c[0], -c[1]) if backward else (c[0], c[1]))
    picked = candidates[:limit] if limit > 0 else candidates
    streams: dict[tuple[tuple[str, str], ...], tuple[Labels, list[Entry]]] = {}
    for ts, _order, key, labels, line in picked:
        streams.setdefault(key, (labels, []))[1].append((ts, line))
    stats.returned = len(picked)
    return [streams[k] for k in sorted(streams)]


Vector = dict[tuple[tuple[str, str], ...], tuple[Labels, float]]


class _MetricEval:
    def __init__(self, source: Source, stats: QueryStats) -> None:
        self.source = source
        self.stats = stats
        self._cache: dict[int, list[tuple[Labels, list[int], list[int]]]] = {}

    def series_for(self, agg: RangeAgg, lo_ns: int, hi_ns: int) -> list[tuple[Labels, list[int], list[int]]]:
        """Per output label set: sorted timestamps and line sizes of the pipeline's lines."""
        cached = self._cache.get(id(agg))
        if cached is not None:
            return cached
        grouped: dict[tuple[tuple[str, str], ...], tuple[Labels, list[tuple[int, int]]]] = {}
        for stream, entries in self.source(agg.log.matchers):
            times = [ts for ts, _ in entries]
            window = entries[bisect.bisect_right(times, lo_ns):bisect.bisect_right(times, hi_ns)]
            self.stats.lines += len(window)
            self.stats.bytes += sum(len(line) for _ts, line in window)
            for labels, ts, line in run_pipeline(agg.log.stages, stream, window):
                grouped.setdefault(_key(labels), (labels, []))[1].append((ts, len(line.encode())))
        out = []
        for key in sorted(grouped):
            labels, points = grouped[key]
            points.sort()
            out.append((labels, [p[0] for p in points], [p[1] for p in points]))
        self._cache[id(agg)] = out
        return out

    def at(self, expr: Any, t_ns: int, span: tuple[int, int]) -> Vector | float:
        if isinstance(expr, Number):
            return expr.value
        if isinstance(expr, RangeAgg):
            return self.range_at(expr, t_ns, span)
        if isinstance(expr, VectorAgg):
            return self.vector_agg(expr, t_ns, span)
        if isinstance(expr, BinOp):
            return self.binop(expr, t_ns, span)
        raise LogQLError("parse error : syntax error: unexpected log query in a metric expression")

    def range_at(self, agg: RangeAgg, t_ns: int, span: tuple[int, int]) -> Vector:
        series = self.series_for(agg, span[0] - agg.range_ns - agg.offset_ns, span[1] - agg.offset_ns)
        end = t_ns - agg.offset_ns
        start = end - agg.range_ns
        out: Vector = {}
        seconds = agg.range_ns / 1e9
        for labels, times, sizes in series:
            lo = bisect.bisect_right(times, start)
            hi = bisect.bisect_right(times, end)
            if hi <= lo:
                continue
            if "__error__" in labels:
                raise LogQLError(f"pipeline error: '{labels['__error__']}' for series: '{_fmt_labels(labels)}'.\n"
                                 "Use a label filter to intentionally skip this error. (e.g | __error__!=\""
                                 f"{labels['__error__']}\").\nTo skip all potential errors you can match "
                                 "empty errors.(e.g __error__=\"\")\nThe label filter can also be specified "
                                 "after unwrap. (e.g | unwrap latency | __error__=\"\" )\n")
            count = hi - lo
            if agg.func == "count_over_time":
                value = float(count)
            elif agg.func == "rate":
                value = count / seconds
            elif agg.func == "bytes_over_time":
                value = float(sum(sizes[lo:hi]))
            elif agg.func == "bytes_rate":
                value = sum(sizes[lo:hi]) / seconds
            else:
                continue
            out[_key(labels)] = (labels, value)
        if agg.func == "absent_over_time":
            if any(bisect.bisect_right(t, end) > bisect.bisect_right(t, start) for _l, t, _s in series):
                return {}
            labels = {m.name: m.value for m in agg.log.matchers if m.op == "="}
            return {_key(labels): (labels, 1.0)}
        return out

    def vector_agg(self, agg: VectorAgg, t_ns: int, span: tuple[int, int]) -> Vector:
        inner = self.at(agg.inner, t_ns, span)
        if isinstance(inner, float):
            raise LogQLError("parse error : unexpected scalar in a vector aggregation")
        groups: dict[tuple[tuple[str, str], ...], tuple[Labels, list[tuple[Labels, float]]]] = {}
        for labels, value in inner.values():
            if agg.by is not None:
                glabels = {k: v for k, v in labels.items() if k in agg.by}
            elif agg.without is not None:
                glabels = {k: v for k, v in labels.items() if k not in agg.without}
            else:
                glabels = {}
            groups.setdefault(_key(glabels), (glabels, []))[1].append((labels, value))
        out: Vector = {}
        for key in sorted(groups):
            glabels, members = groups[key]
            values = [v for _l, v in members]
            if agg.op in ("topk", "bottomk"):
                k = int(agg.param or 0)
                ranked = sorted(members, key=lambda m: (-m[1] if agg.op == "topk" else m[1], _key(m[0])))
                for labels, value in ranked[:max(k, 0)]:
                    out[_key(labels)] = (labels, value)
                continue
            if agg.op == "sum":
                value = math.fsum(values)
            elif agg.op == "avg":
                value = math.fsum(values) / len(values)
            elif agg.op == "min":
                value = min(values)
            elif agg.op == "max":
                value = max(values)
            elif agg.op == "count":
                value = float(len(values))
            else:
                mean = math.fsum(values) / len(values)
                var = math.fsum((v - mean) ** 2 for v in values) / len(values)
                value = var if agg.op == "stdvar" else math.sqrt(var)
            out[key] = (glabels, value)
        return out

    def binop(self, expr: BinOp, t_ns: int, span: tuple[int, int]) -> Vector | float:
        left = self.at(expr.left, t_ns, span)
        right = self.at(expr.right, t_ns, span)

        def apply(a: float, b: float) -> float:
            try:
                if expr.op == "+":
                    return a + b
                if expr.op == "-":
                    return a - b
                if expr.op == "*":
                    return a * b
                if expr.op == "/":
                    return a / b if b else (math.nan if a == 0 else math.copysign(math.inf, a))
                if expr.op == "%":
                    return math.fmod(a, b) if b else math.nan
                return a ** b
            except (OverflowError, ZeroDivisionError, ValueError):
                return math.nan

        if isinstance(left, float) and isinstance(right, float):
            return apply(left, right)
        if isinstance(left, float):
            assert not isinstance(right, float)
            return {k: (lb, apply(left, v)) for k, (lb, v) in right.items()}
        if isinstance(right, float):
            return {k: (lb, apply(v, right)) for k, (lb, v) in left.items()}
        out: Vector = {}
        for key, (labels, value) in left.items():
            if key in right:
                out[key] = (labels, apply(value, right[key][1]))
        return out


def _fmt_labels(labels: Labels) -> str:
    return "{" + ", ".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}"


def eval_metric(expr: Any, source: Source, start_ns: int, end_ns: int, step_ns: int,
                stats: QueryStats | None = None, *, check: Callable[[], None] | None = None,
                ) -> list[tuple[Labels, list[tuple[int, float]]]] | float:
    """A metric query at every step from start to end (inclusive): per label set its points.
    A pure number expression returns the number. `check` is called at every step (the caller's
    time budget raises from it)."""
    if step_ns <= 0:
        raise LogQLError("zero or negative query resolution step widths are not accepted. Try a positive "
                         "integer")
    ev = _MetricEval(source, stats if stats is not None else QueryStats())
    series: dict[tuple[tuple[str, str], ...], tuple[Labels, list[tuple[int, float]]]] = {}
    t = start_ns
    scalar: float | None = None
    while t <= end_ns:
        if check is not None:
            check()
        value = ev.at(expr, t, (start_ns, end_ns))
        if isinstance(value, float):
            scalar = value
        else:
            for key, (labels, v) in value.items():
                series.setdefault(key, (labels, []))[1].append((t, v))
        t += step_ns
    if scalar is not None and not series:
        return scalar
    return [series[k] for k in sorted(series)]


__all__ = ["LogExpr", "LogQLError", "QueryStats", "eval_metric", "is_log_query", "parse",
           "parse_duration_ns", "run_pipeline", "select_logs"]
