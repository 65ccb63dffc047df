"""Prometheus' wording and position for the first error in a query `promql-parser` rejected.

`promql-parser` reports errors without positions and, for syntax errors, only as "invalid promql
query". `diagnose` re-reads the query with Prometheus' rules: its lexer (`lexer.py`), the error
contexts of its yacc grammar ("in aggregation", "in label matching", ...), the checks it makes
while reducing rules, then the type checks of `checkAST`. Prometheus reports only the first
error, so this stops at the first one and returns "<line>:<col>: parse error: <message>", or None
when it finds nothing (the caller then keeps the library's message). Used only on the error path.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from sregym.twin.telemetry.promql.functions import FUNCTIONS, MATRIX, SCALAR, VECTOR
from sregym.twin.telemetry.promql.functions import STRING as STRING_TYPE
from sregym.twin.telemetry.promql.lexer import (
    AGGREGATOR,
    DURATION,
    EOF,
    ERROR,
    IDENT,
    KEYWORD,
    METRIC_IDENT,
    NUMBER,
    OPERATOR,
    PUNCT,
    STRING,
    Token,
    go_quote,
    tokenize,
)
from sregym.twin.telemetry.regex import RegexError, compile_anchored
from sregym.twin.telemetry.regex import check as regex_check


class _Stop(Exception):
    """The first syntax error: parsing ends here, as Prometheus reports only the first error."""


# Prometheus' value types. Function signatures come from the
# one function table the evaluator dispatches on (functions.py).
_V, _M, _S, _STR = VECTOR, MATRIX, SCALAR, STRING_TYPE
_VALID_DURATION = re.compile(r"^(\d+y)?(\d+w)?(\d+d)?(\d+h)?(\d+m)?(\d+s)?(\d+ms)?$")
_DOCUMENTED = {_V: "instant vector", _M: "range vector", _S: "scalar", _STR: "string"}
_COMPARISONS = frozenset({"==", "!=", "<", ">", "<=", ">="})
_SET_OPS = frozenset({"and", "or", "unless"})
# Binary operator precedence, lowest first; "^" is right-associative.
_PRECEDENCE = (("or",), ("and", "unless"), tuple(_COMPARISONS), ("+", "-"), ("*", "/", "%", "atan2"),
               ("^",))


@dataclass
class Node:
    kind: str  # number string vector matrix subquery call aggregate binary unary paren
    pos: int
    type: str = _V
    children: list[Node] = field(default_factory=list)
    name: str = ""
    op_pos: int = 0
    bool_mod: bool = False
    matching: list[str] | None = None
    on: bool = False
    include: list[str] = field(default_factory=list)
    card: str = "one-to-one"
    param: Node | None = None
    offset: bool = False
    at: bool = False


class _Recogniser:
    def __init__(self, query: str) -> None:
        self.tokens = tokenize(query)
        self.i = 0
        self.errors: list[tuple[int, str]] = []
        self.pending: list[tuple[int, str]] = []  # modifier errors, recorded once the operand is read
        self.aggregations = 0  # how many aggregation bodies enclose the current token

    # -- token helpers
    def peek(self) -> Token:
        tok = self.tokens[min(self.i, len(self.tokens) - 1)]
        if tok.kind == ERROR:
            self.errors.append((tok.pos, tok.value))
            raise _Stop
        return tok

    def next(self) -> Token:
        tok = self.peek()
        self.i += 1
        return tok

    def is_(self, value: str) -> bool:
        tok = self.peek()
        return tok.kind in (PUNCT, OPERATOR) and tok.value == value

    def unexpected(self, context: str = "", expected: str = "") -> None:
        tok = self.peek()
        msg = f"unexpected {tok.desc()}"
        if not context and self.aggregations:
            # yacc's error recovery unwinds to the innermost aggregation's `aggregate_op error` rule
            context = "aggregation"
        if context:
            msg += f" in {context}"
        if expected:
            msg += f", expected {expected}"
        self.errors.append((tok.pos, msg))
        raise _Stop

    def expect(self, value: str, context: str = "", expected: str = "") -> Token:
        if not self.is_(value):
            self.unexpected(context, expected)
        return self.next()

    # -- grammar
    def parse(self) -> Node:
        if self.peek().kind == EOF:  # only comments and spaces
            self.errors.append((0, "no expression found in input"))
            raise _Stop
        node = self.expr(0)
        if self.peek().kind != EOF:
            self.unexpected()
        return node

    def expr(self, level: int) -> Node:
        if level == len(_PRECEDENCE):
            return self.unary()
        lhs = self.expr(level + 1)
        while self.peek().kind == OPERATOR and self.peek().value in _PRECEDENCE[level]:
            op = self.next()
            node = Node("binary", lhs.pos, name=op.value, op_pos=op.pos)
            self.bin_modifiers(node)
            rhs = self.expr(level if op.value == "^" else level + 1)
            node.children = [lhs, rhs]
            node.type = _S if lhs.type == _S and rhs.type == _S else _V
            lhs = node
        return lhs

    def bin_modifiers(self, node: Node) -> None:
        tok = self.peek()
        if tok.kind == KEYWORD and tok.value == "bool":
            self.next()
            node.bool_mod = True
        tok = self.peek()
        if tok.kind == KEYWORD and tok.value in ("on", "ignoring"):
            self.next()
            node.on = tok.value == "on"
            node.matching = self.grouping_labels()
            tok = self.peek()
            if tok.kind == KEYWORD and tok.value in ("group_left", "group_right"):
                self.next()
                node.card = tok.value
                if self.is_("("):
                    node.include = self.grouping_labels()

    def grouping_labels(self) -> list[str]:
        if not self.is_("("):
            self.unexpected("grouping opts", '"("')
        self.next()
        labels: list[str] = []
        if self.is_(")"):
            self.next()
            return labels
        while True:
            tok = self.peek()
            if tok.kind in (IDENT, KEYWORD, AGGREGATOR) or (tok.kind == OPERATOR and tok.value.isalpha()):
                labels.append(self.next().value)
            else:
                self.unexpected("grouping opts", "label")
            if self.is_(","):
                self.next()
                if self.is_(")"):
                    self.next()
                    return labels
                continue
            if self.is_(")"):
                self.next()
                return labels
            self.unexpected("grouping opts", '"," or ")"')

    def unary(self) -> Node:
        tok = self.peek()
        if tok.kind == OPERATOR and tok.value in ("+", "-"):
            self.next()
            inner = self.expr(len(_PRECEDENCE) - 1)  # binds like "*": "^" binds tighter
            if inner.kind == "number":
                inner.pos = tok.pos
                return inner
            return Node("unary", tok.pos, inner.type, [inner])
        return self.postfix(self.primary())

    def postfix(self, node: Node) -> Node:
        while True:
            tok = self.peek()
            if tok.kind == PUNCT and tok.value == "[":
                node = self.brackets(node)
            elif tok.kind == KEYWORD and tok.value == "offset":
                self.next()
                self.modifier(node, "offset", "offset modifier", "offset may not be set multiple times")
                if self.is_("-"):
                    self.next()
                if self.peek().kind != DURATION:
                    self.unexpected("offset", "duration")
                self.duration()
            elif tok.kind == PUNCT and tok.value == "@":
                self.next()
                self.modifier(node, "at", "@ modifier", "@ <timestamp> may not be set multiple times")
                nxt, sign = self.peek(), 1.0
                if nxt.kind == OPERATOR and nxt.value in "+-":
                    sign = -1.0 if self.next().value == "-" else 1.0
                    nxt = self.peek()
                if nxt.kind == NUMBER:
                    self.number()
                    value = _go_float(nxt.value)
                    value = None if value is None else sign * value
                    if value is not None and (math.isnan(value) or math.isinf(value) or abs(value) >= 2.0**63):
                        shown = "NaN" if math.isnan(value) else ("+Inf" if value > 0 else "-Inf") \
                            if math.isinf(value) else f"{value:f}"
                        self.pending.append((node.pos, f"timestamp out of bounds for @ modifier: {shown}"))
                elif nxt.kind == KEYWORD and nxt.value in ("start", "end"):
                    self.next()
                    self.expect("(", "@", "timestamp")
                    self.expect(")", "@", "timestamp")
                else:
                    self.unexpected("@", "timestamp")
            else:
                return node
            self.errors.extend(self.pending)
            self.pending.clear()

    def number(self) -> None:
        """Prometheus' parseNumber: the lexer takes "1e" or "1e400"; Go's ParseFloat refuses them."""
        tok = self.next()
        if tok.value[-1] in "eE+-":
            self.errors.append((tok.pos, "error parsing number: strconv.ParseFloat: parsing "
                                         f"{go_quote(tok.value)}: invalid syntax"))
        elif tok.value.lower() not in ("inf", "nan") and math.isinf(_go_float(tok.value) or 0.0):
            self.errors.append((tok.pos, "error parsing number: strconv.ParseFloat: parsing "
                                         f"{go_quote(tok.value)}: value out of range"))

    def duration(self) -> None:
        """Prometheus' parseDuration on a DURATION token (model.ParseDuration, then > 0)."""
        tok = self.next()
        if not _VALID_DURATION.match(tok.value) or tok.value == "":
            self.errors.append((tok.pos, f"not a valid duration string: {go_quote(tok.value)}"))
        elif not any(c in "123456789" for c in tok.value):
            self.errors.append((tok.pos, "duration must be greater than 0"))

    def modifier(self, node: Node, attr: str, what: str, twice: str) -> None:
        """Prometheus' addOffset/setTimestamp checks (reported when the modifier is reduced, which
        is after its operand is read; recorded here first as nothing can come in between)."""
        if node.kind not in ("vector", "matrix", "subquery"):
            self.pending.append((node.pos, f"{what} must be preceded by an instant vector selector or "
                                           "range vector selector or a subquery"))
        elif getattr(node, attr):
            self.pending.append((node.pos, twice))
        setattr(node, attr, True)

    def brackets(self, node: Node) -> Node:
        open_tok = self.next()
        if self.peek().kind != DURATION:
            self.unexpected("subquery selector", "duration")
        self.duration()
        if self.is_("]"):
            self.next()
            if node.kind != "vector":
                self.errors.append((open_tok.pos, "ranges only allowed for vector selectors"))
            elif node.offset:
                self.errors.append((open_tok.pos, "no offset modifiers allowed before range"))
            elif node.at:
                self.errors.append((open_tok.pos, "no @ modifiers allowed before range"))
            return Node("matrix", node.pos, _M, [node])
        if not self.is_(":"):
            self.unexpected("subquery or range", '":" or "]"')
        self.next()
        if self.peek().kind == DURATION:
            self.duration()
            self.expect("]", "subquery selector", '"]"')
        else:
            self.expect("]", "subquery selector", 'duration or "]"')
        return Node("subquery", node.pos, _M, [node])

    def primary(self) -> Node:
        tok = self.peek()
        if tok.kind == NUMBER:
            self.number()
            return Node("number", tok.pos, _S)
        if tok.kind == STRING:
            self.next()
            return Node("string", tok.pos, _STR)
        if tok.kind == PUNCT and tok.value == "(":
            self.next()
            inner = self.expr(0)
            self.expect(")")
            return Node("paren", tok.pos, inner.type, [inner])
        if tok.kind == PUNCT and tok.value == "{":
            return self.selector(None)
        if tok.kind == AGGREGATOR:
            nxt = self.tokens[self.i + 1] if self.i + 1 < len(self.tokens) else tok
            if (nxt.kind == PUNCT and nxt.value == "(") or (nxt.kind == KEYWORD and nxt.value in ("by", "without")):
                return self.aggregate()
            self.next()  # an aggregator's name alone is a metric name
            return self.selector(tok)
        if tok.kind in (IDENT, METRIC_IDENT, KEYWORD) or (tok.kind == OPERATOR and tok.value in _SET_OPS):
            self.next()
            if tok.kind == IDENT and self.is_("("):
                return self.call(tok)
            if tok.kind == KEYWORD and tok.value not in ("by", "without", "offset", "start", "end"):
                self.i -= 1
                self.unexpected()
            return self.selector(tok)
        self.unexpected()
        raise AssertionError("unreachable")

    def selector(self, name: Token | None) -> Node:
        pos = name.pos if name else self.peek().pos
        names = [name.value] if name else []
        matchers: list[tuple[str, str, str]] = []
        if self.is_("{"):
            self.next()
            while not self.is_("}"):
                label = self.peek()
                if label.kind != IDENT:
                    self.unexpected("label matching", 'identifier or "}"')
                self.next()
                op = self.peek()
                if not ((op.kind == PUNCT and op.value == "=") or
                        (op.kind == OPERATOR and op.value in ("!=", "=~", "!~"))):
                    self.unexpected("label matching", "label matching operator")
                self.next()
                if self.peek().kind != STRING:
                    self.unexpected("label matching", "string")
                value = go_unquote(self.next().value)
                matchers.append((label.value, op.value, value))
                if op.value in ("=~", "!~") and (problem := _regex_error(value)) is not None:
                    self.errors.append((label.pos, problem))
                if self.is_(","):
                    self.next()
                elif not self.is_("}"):
                    self.unexpected("label matching", '"," or "}"')
            self.next()
        self.peek()  # the grammar reads the next token (maybe a lexer error) before reducing
        for label, op, value in matchers:
            if label == "__name__" and name is not None:
                self.errors.append((pos, f"metric name must not be set twice: {go_quote(name.value)} or "
                                         f"{go_quote(value)}"))
            if label == "__name__" and op == "=":
                names.append(value)
        if not names and all(_matches_empty(op, value) for _, op, value in matchers):
            self.errors.append((pos, "vector selector must contain at least one non-empty matcher"))
        return Node("vector", pos, _V)

    def comma(self) -> None:
        """A comma between call arguments; one not followed by an argument is reported (as a
        trailing comma) before whatever comes next, as the grammar reduces it first."""
        comma = self.next()
        tok = self.peek()
        if tok.kind in (NUMBER, STRING, IDENT, METRIC_IDENT, AGGREGATOR, KEYWORD):
            return
        if (tok.kind == PUNCT and tok.value in "({") or (tok.kind == OPERATOR and tok.value in ("+", "-", *_SET_OPS)):
            return
        self.errors.append((comma.pos, "trailing commas not allowed in function call args"))
        if not (tok.kind == PUNCT and tok.value == ")"):
            raise _Stop

    def call(self, name: Token) -> Node:
        self.next()  # "("
        args: list[Node] = []
        while not self.is_(")"):
            args.append(self.expr(0))
            if self.is_(","):
                self.comma()
            elif not self.is_(")"):
                self.unexpected()
        self.next()
        function = FUNCTIONS.get(name.value)
        if function is None:
            self.errors.append((name.pos, f"unknown function with name {go_quote(name.value)}"))
            raise _Stop
        return Node("call", name.pos, function.return_type, args, name=name.value)

    def aggregate(self) -> Node:
        op = self.next()
        grouped = False
        if self.peek().kind == KEYWORD and self.peek().value in ("by", "without"):
            self.next()
            self.grouping_labels()
            grouped = True
        if not self.is_("("):
            self.unexpected("aggregation")
        self.next()
        args: list[Node] = []
        self.aggregations += 1
        while not self.is_(")"):
            args.append(self.expr(0))
            if self.is_(","):
                self.comma()
            elif not self.is_(")"):
                self.unexpected("aggregation")
        self.aggregations -= 1
        self.next()
        if not grouped and self.peek().kind == KEYWORD and self.peek().value in ("by", "without"):
            self.next()
            self.grouping_labels()
        want = 2 if op.value in ("topk", "bottomk", "quantile", "count_values") else 1
        if not args:
            self.errors.append((op.pos, "no arguments for aggregate expression provided"))
            raise _Stop
        if len(args) != want:
            self.errors.append((op.pos, "wrong number of arguments for aggregate expression provided, "
                                        f"expected {want}, got {len(args)}"))
            raise _Stop
        node = Node("aggregate", op.pos, _V, [args[-1]], name=op.value)
        node.param = args[0] if want == 2 else None
        return node


def _go_float(text: str) -> float | None:
    try:
        return float(int(text, 16)) if text.lower().startswith("0x") else float(text)
    except (ValueError, OverflowError):
        return None


_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\",
            "'": "'", '"': '"'}


def go_unquote(token: str) -> str:
    """The value of a PromQL string literal (Go's strconv.Unquote; backquotes are raw), so a
    matcher's regex is checked as Prometheus compiles it. Malformed escapes are left as written
    (the lexer reports them)."""
    if len(token) < 2 or token[0] == "`":
        return token[1:-1]
    body, out, i = token[1:-1], [], 0
    while i < len(body):
        ch = body[i]
        if ch != "\\" or i + 1 >= len(body):
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1]
        width = {"x": 2, "u": 4, "U": 8}.get(nxt)
        if nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
        elif width is not None and len(body) >= i + 2 + width:
            try:
                out.append(chr(int(body[i + 2:i + 2 + width], 16)))
            except ValueError:
                out.append(body[i:i + 2 + width])
            i += 2 + width
        elif nxt in "01234567" and len(body) >= i + 4:
            try:
                out.append(chr(int(body[i + 1:i + 4], 8)))
            except ValueError:
                out.append(body[i:i + 4])
            i += 4
        else:
            out.append(body[i:i + 2])
            i += 2
    return "".join(out)


def _regex_error(pattern: str) -> str | None:
    """Go's regexp error for a label matcher's pattern (compiled anchored, as Prometheus does),
    worded as Go words it; None when valid."""
    return regex_check(pattern, anchored=True)


def _matches_empty(op: str, value: str) -> bool:
    """Whether a matcher accepts the empty string (then it does not select anything by itself)."""
    if op in ("=", "!="):
        return (value == "") == (op == "=")
    try:
        hit = compile_anchored(value).search("") is not None
    except RegexError:
        return False
    return hit == (op == "=~")


class _Checker:
    """Prometheus' checkAST: type errors in post-order, first one wins."""

    def __init__(self) -> None:
        self.errors: list[tuple[int, str]] = []

    def error(self, pos: int, msg: str) -> None:
        self.errors.append((pos, msg))

    def expect(self, node: Node, want: str, context: str) -> None:
        got = self.check(node)
        if got != want:
            self.error(node.pos, f"expected type {_DOCUMENTED[want]} in {context}, got {_DOCUMENTED[got]}")

    def check(self, node: Node) -> str:
        if node.kind == "paren":
            self.check(node.children[0])
        elif node.kind == "call":
            self.check_call(node)
        elif node.kind == "aggregate":
            self.expect(node.children[0], _V, "aggregation expression")
            if node.name in ("topk", "bottomk", "quantile"):
                self.expect(node.param, _S, "aggregation parameter")  # type: ignore[arg-type]
            elif node.name == "count_values":
                self.expect(node.param, _STR, "aggregation parameter")  # type: ignore[arg-type]
        elif node.kind == "unary":
            t = self.check(node.children[0])
            if t not in (_S, _V):
                self.error(node.pos, "unary expression only allowed on expressions of type scalar or "
                                     f"instant vector, got {go_quote(_DOCUMENTED[t])}")
        elif node.kind == "subquery":
            t = self.check(node.children[0])
            if t != _V:
                self.error(node.pos, f"subquery is only allowed on instant vector, got {t} instead")
        elif node.kind == "binary":
            self.check_binary(node)
        return node.type

    def check_call(self, node: Node) -> None:
        function = FUNCTIONS[node.name]
        types, variadic = function.arg_types, function.variadic
        n, got = len(types), len(node.children)
        if variadic == 0:
            if n != got:
                self.error(node.pos, f"expected {n} argument(s) in call to {go_quote(node.name)}, got {got}")
        elif n - 1 > got:
            self.error(node.pos, f"expected at least {n - 1} argument(s) in call to {go_quote(node.name)}, "
                                 f"got {got}")
        elif variadic > 0 and n - 1 + variadic < got:
            self.error(node.pos, f"expected at most {n - 1 + variadic} argument(s) in call to "
                                 f"{go_quote(node.name)}, got {got}")
        for i, arg in enumerate(node.children):
            if i >= n:
                if variadic == 0:
                    break
                i = n - 1
            self.expect(arg, types[i], f"call to function {go_quote(node.name)}")

    def check_binary(self, node: Node) -> None:
        lhs, rhs = node.children
        lt, rt = self.check(lhs), self.check(rhs)
        op = node.name
        if node.bool_mod and op not in _COMPARISONS:
            self.error(node.op_pos, "bool modifier can only be used on comparison operators")
        if op in _COMPARISONS and not node.bool_mod and lt == _S and rt == _S:
            self.error(node.op_pos, "comparisons between scalars must use BOOL modifier")
        for label in node.matching or []:
            if node.on and label in node.include:
                self.error(node.op_pos, f"label {go_quote(label)} must not occur in ON and GROUP clause at once")
        if lt not in (_S, _V):
            self.error(lhs.pos, "binary expression must contain only scalar and instant vector types")
        if rt not in (_S, _V):
            self.error(rhs.pos, "binary expression must contain only scalar and instant vector types")
        if lt != _V or rt != _V:
            if node.matching:
                self.error(node.pos, "vector matching only allowed between instant vectors")
        elif op in _SET_OPS and node.card != "one-to-one":
            self.error(node.pos, f"no grouping allowed for {go_quote(op)} operation")
        if (lt == _S or rt == _S) and op in _SET_OPS:
            self.error(node.pos, f"set operator {go_quote(op)} not allowed in binary scalar expression")


def _position(query: str, pos: int) -> str:
    before = query[:pos].encode()
    line = before.count(b"\n") + 1
    col = len(before) - (before.rfind(b"\n") + 1) + 1
    return f"{line}:{col}"


def diagnose(query: str) -> str | None:
    """Prometheus' message for the first error in `query`, or None if none is found."""
    rec = _Recogniser(query)
    try:
        tree = rec.parse()
    except _Stop:
        tree = None
    if not rec.errors and tree is not None:
        checker = _Checker()
        checker.check(tree)
        rec.errors = checker.errors
    if not rec.errors:
        return None
    pos, msg = rec.errors[0]
    return f"{_position(query, pos)}: parse error: {msg}"
