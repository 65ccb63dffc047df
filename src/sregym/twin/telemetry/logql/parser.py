"""The LogQL parser: a query string to its syntax tree, rejecting what Loki rejects."""

from __future__ import annotations

from typing import Any

from sregym.twin.telemetry.logql.base import RANGE_FUNCS, VECTOR_AGGS, LogQLError
from sregym.twin.telemetry.logql.lexer import IDENT_RE, Token, lex, syntax_error
from sregym.twin.telemetry.logql.syntax import (
    BinOp,
    Decolorize,
    DropKeep,
    LabelBool,
    LabelCmp,
    LabelFilter,
    LabelFormat,
    LineFilter,
    LineFormat,
    LogExpr,
    Number,
    Parser,
    RangeAgg,
    VectorAgg,
)
from sregym.twin.telemetry.logql.units import parse_bytes, parse_duration_ns
from sregym.twin.telemetry.regex import check as regex_check
from sregym.twin.telemetry.regex import compile_go
from sregym.twin.telemetry.tsdb import Matcher


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = lex(text)
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
        return syntax_error(self.text, tok.pos, message)

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
                raise syntax_error(self.text, 0, "unexpected binary operation on log query")
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
            raise syntax_error(self.text, self.tok.pos, "unexpected log query in a metric aggregation")
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
                check_regex(value, self.text)
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
                    check_regex(v, self.text)
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
            check_regex(pattern, self.text)
            names = [n for n in compile_go(pattern).groupindex if n]
            if not names:
                raise LogQLError("at least one named capture must be supplied")
            for name in names:
                if not IDENT_RE.fullmatch(name) or "." in name:
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
                raise syntax_error(self.text, value_tok.pos, "unexpected STRING, expecting NUMBER")
            if op in ("=~", "!~"):
                check_regex(value_tok.text, self.text)
            return LabelCmp(name, op, value_tok.text)
        if value_tok.kind in ("NUMBER", "DURATION", "BYTES"):
            if op in ("=~", "!~"):
                raise syntax_error(self.text, value_tok.pos, f"unexpected {value_tok.kind}, expecting STRING")
            if value_tok.kind == "DURATION":
                number = parse_duration_ns(value_tok.text) / 1e9
            elif value_tok.kind == "BYTES":
                number = parse_bytes(value_tok.text)
            else:
                number = float(value_tok.text)
            return LabelCmp(name, op, value_tok.kind, numeric=number)
        self.i -= 1
        raise self.error("STRING or NUMBER")


def check_regex(pattern: str, text: str) -> None:
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
