"""awk's grammar (POSIX, with mawk's messages) as a tree of tuples.

Expressions are `(op, ...)` tuples the interpreter dispatches on; statements too. Precedence,
lowest first: assignment, `?:`, `||`, `&&`, `in`, `~ !~`, comparison (non-associative; a bare `>`
inside `print` is a redirection), concatenation, `+ -`, `* / %`, unary `! - +`, `^` (right
associative), `++ --`, `$`, grouping.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sregym.twin.userland.awk.lexer import AwkSyntaxError, Token, tokenize

Node = tuple[Any, ...]
_ASSIGN = {"=", "+=", "-=", "*=", "/=", "%=", "^=", "**="}
_RELOPS = {"<", "<=", "!=", "==", ">", ">="}
_CONCAT_START = {"NUMBER", "STRING", "ERE", "NAME", "FUNC_NAME", "BUILTIN", "$", "!", "(", "-",
                 "+", "++", "--", "getline"}
_SIMPLE_END = {";", "NEWLINE", "}", "EOF"}


@dataclass
class Program:
    begin: list[Node] = field(default_factory=list)
    rules: list[tuple[Node | None, Node | None]] = field(default_factory=list)
    end: list[Node] = field(default_factory=list)
    functions: dict[str, tuple[list[str], Node]] = field(default_factory=dict)
    # Per function, the parameters its body uses as arrays (a caller's untyped variable passed
    # there becomes an array the callee fills).
    array_params: dict[str, set[str]] = field(default_factory=dict)


class Parser:
    def __init__(self, source: str) -> None:
        self.tokens = tokenize(source)
        self.i = 0
        self.last_line = source.count("\n") + 1 + (0 if source.endswith("\n") else 1)
        self.in_loop = 0
        self.in_function = False
        self.called: list[str] = []

    # ------------------------------------------------------------------------------ helpers
    @property
    def tok(self) -> Token:
        return self.tokens[self.i]

    def peek(self, offset: int = 1) -> Token:
        return self.tokens[min(self.i + offset, len(self.tokens) - 1)]

    def advance(self) -> Token:
        tok = self.tokens[self.i]
        if self.i < len(self.tokens) - 1:
            self.i += 1
        return tok

    def error(self, tok: Token | None = None) -> AwkSyntaxError:
        tok = tok or self.tok
        consumed = self.tokens[:self.i]
        if tok.kind in ("}", "NEWLINE", "EOF") and \
                sum(t.kind == "(" for t in consumed) > sum(t.kind == ")" for t in consumed):
            return AwkSyntaxError(f"line {tok.line}: missing ) near {tok.text}")
        if tok.kind == "EOF":
            return AwkSyntaxError(f"line {tok.line}: syntax error at or near end of file")
        return AwkSyntaxError(f"line {tok.line}: syntax error at or near {tok.text}")

    def expect(self, kind: str) -> Token:
        if self.tok.kind != kind:
            if kind == "}" and self.tok.kind == "EOF":
                raise AwkSyntaxError(f"line {self.last_line}: missing }} near end of file")
            if kind == ")":
                near = "end of file" if self.tok.kind == "EOF" else self.tok.text
                raise AwkSyntaxError(f"line {self.tok.line}: missing ) near {near}")
            raise self.error()
        return self.advance()

    def newlines(self) -> None:
        while self.tok.kind == "NEWLINE":
            self.advance()

    def terminators(self) -> None:
        while self.tok.kind in ("NEWLINE", ";"):
            self.advance()

    # ------------------------------------------------------------------------------ program
    def program(self) -> Program:
        prog = self.items()
        for name in self.called:
            if name not in prog.functions:
                raise AwkSyntaxError(f"line {self.last_line}: function {name} never defined")
        return prog

    def items(self) -> Program:
        prog = Program()
        self.terminators()
        while self.tok.kind != "EOF":
            kind = self.tok.kind
            if kind == "BEGIN":
                self.advance()
                self.newlines()
                prog.begin.append(self.block())
            elif kind == "END":
                self.advance()
                self.newlines()
                prog.end.append(self.block())
            elif kind == "function":
                self.function(prog)
            elif kind == "}":
                raise AwkSyntaxError(f"line {self.tok.line}: extra '}}'")
            else:
                pattern: Node | None = None
                if kind != "{":
                    pattern = ("expr", self.expr())
                    if self.tok.kind == ",":
                        self.advance()
                        self.newlines()
                        pattern = ("range", pattern[1], self.expr())
                action = self.block() if self.tok.kind == "{" else None
                prog.rules.append((pattern, action))
            if self.tok.kind not in ("NEWLINE", ";", "EOF", "BEGIN", "END", "function", "{") \
                    and self.tokens[self.i - 1].kind != "}":
                raise self.error()
            self.terminators()
        return prog

    def function(self, prog: Program) -> None:
        self.advance()
        name_tok = self.advance()
        if name_tok.kind not in ("NAME", "FUNC_NAME"):
            raise self.error(name_tok)
        self.expect("(")
        params: list[str] = []
        while self.tok.kind != ")":
            params.append(str(self.expect("NAME").value))
            if self.tok.kind == ",":
                self.advance()
                self.newlines()
        self.advance()
        self.newlines()
        self.in_function = True
        body = self.block()
        self.in_function = False
        prog.functions[str(name_tok.value)] = (params, body)
        prog.array_params[str(name_tok.value)] = {p for p in params if _used_as_array(body, p)}

    def block(self) -> Node:
        self.expect("{")
        stmts: list[Node] = []
        self.terminators()
        while self.tok.kind != "}":
            if self.tok.kind == "EOF":
                raise AwkSyntaxError(f"line {self.last_line}: missing }} near end of file")
            stmts.append(self.statement())
            self.terminators()
        self.advance()
        return ("block", stmts)

    # ---------------------------------------------------------------------------- statements
    def simple_end(self) -> None:
        if self.tok.kind in (";", "NEWLINE"):
            self.advance()
        elif self.tok.kind not in ("}", "EOF"):
            raise self.error()

    def body(self) -> Node:
        self.newlines()
        if self.tok.kind == ";":
            self.advance()
            return ("block", [])
        return self.statement()

    def statement(self) -> Node:
        kind = self.tok.kind
        if kind == "{":
            return self.block()
        if kind == "if":
            self.advance()
            self.expect("(")
            cond = self.expr()
            self.expect(")")
            then = self.body()
            save = self.i
            self.terminators()
            if self.tok.kind == "else":
                self.advance()
                return ("if", cond, then, self.body())
            self.i = save
            return ("if", cond, then, None)
        if kind == "while":
            self.advance()
            self.expect("(")
            cond = self.expr()
            self.expect(")")
            if self.tok.kind == ";":
                self.advance()
                return ("while", cond, ("block", []))
            self.in_loop += 1
            loop_body = self.body()
            self.in_loop -= 1
            return ("while", cond, loop_body)
        if kind == "do":
            self.advance()
            self.in_loop += 1
            loop_body = self.body()
            self.in_loop -= 1
            self.terminators()
            self.expect("while")
            self.expect("(")
            cond = self.expr()
            self.expect(")")
            self.simple_end()
            return ("do", loop_body, cond)
        if kind == "for":
            return self.for_statement()
        if kind == ";":
            self.advance()
            return ("block", [])
        if kind in ("break", "continue"):
            tok = self.advance()
            if not self.in_loop:
                raise self.error(tok)
            self.simple_end()
            return (kind,)
        if kind in ("next", "nextfile"):
            self.advance()
            self.simple_end()
            return (kind,)
        if kind in ("exit", "return"):
            tok = self.advance()
            if kind == "return" and not self.in_function:
                raise self.error(tok)
            value = None if self.tok.kind in _SIMPLE_END else self.expr()
            self.simple_end()
            return (kind, value)
        if kind == "delete":
            self.advance()
            name = str(self.expect("NAME").value)
            subscript = None
            if self.tok.kind == "[":
                self.advance()
                subscript = self.expr_list()
                self.expect("]")
            self.simple_end()
            return ("delete", name, subscript)
        if kind in ("print", "printf"):
            stmt = self.print_statement()
            self.simple_end()
            return stmt
        node = ("expr", self.expr())
        self.simple_end()
        return node

    def for_statement(self) -> Node:
        self.advance()
        self.expect("(")
        if self.tok.kind == "NAME" and self.peek().kind == "in" and self.peek(2).kind == "NAME" \
                and self.peek(3).kind == ")":
            var = str(self.advance().value)
            self.advance()
            array = str(self.advance().value)
            self.advance()
            self.in_loop += 1
            loop_body = self.body()
            self.in_loop -= 1
            return ("forin", var, array, loop_body)
        init = None if self.tok.kind == ";" else self.expr()
        self.expect(";")
        self.newlines()
        cond = None if self.tok.kind == ";" else self.expr()
        self.expect(";")
        self.newlines()
        step = None if self.tok.kind == ")" else self.expr()
        self.expect(")")
        if self.tok.kind == ";":
            self.advance()
            return ("for", init, cond, step, ("block", []))
        self.in_loop += 1
        loop_body = self.body()
        self.in_loop -= 1
        return ("for", init, cond, step, loop_body)

    def print_statement(self) -> Node:
        kind = str(self.advance().kind)
        args: list[Node] = []
        if self.tok.kind not in _SIMPLE_END and self.tok.kind not in (">", ">>", "|"):
            if self.tok.kind == "(":
                # `print (a, b) > f`: a parenthesised list is the argument list.
                save = self.i
                self.advance()
                items = self.expr_list()
                if self.tok.kind == ")" and self.peek().kind in _SIMPLE_END | {">", ">>", "|"}:
                    self.advance()
                    args = items
                else:
                    self.i = save
                    args = self.expr_list(no_gt=True)
            else:
                args = self.expr_list(no_gt=True)
        redirect = None
        if self.tok.kind in (">", ">>", "|"):
            op = str(self.advance().kind)
            redirect = (op, self.concat(no_gt=True))
        if kind == "printf" and not args:
            raise self.error()
        return (kind, args, redirect)

    def expr_list(self, no_gt: bool = False) -> list[Node]:
        items = [self.expr(no_gt=no_gt)]
        while self.tok.kind == ",":
            self.advance()
            self.newlines()
            items.append(self.expr(no_gt=no_gt))
        return items

    # --------------------------------------------------------------------------- expressions
    def expr(self, no_gt: bool = False) -> Node:
        left = self.ternary(no_gt)
        if self.tok.kind in _ASSIGN:
            if left[0] not in ("var", "field", "index"):
                raise self.error()
            op = str(self.advance().kind)
            self.newlines()
            right = self.expr(no_gt)
            return ("assign", "^=" if op == "**=" else op, left, right)
        return left

    def ternary(self, no_gt: bool) -> Node:
        cond = self.or_expr(no_gt)
        if self.tok.kind == "?":
            self.advance()
            self.newlines()
            yes = self.expr(no_gt)
            self.newlines()
            self.expect(":")
            self.newlines()
            no = self.expr(no_gt)
            return ("cond", cond, yes, no)
        return cond

    def or_expr(self, no_gt: bool) -> Node:
        left = self.and_expr(no_gt)
        while self.tok.kind == "||":
            self.advance()
            self.newlines()
            left = ("or", left, self.and_expr(no_gt))
        return left

    def and_expr(self, no_gt: bool) -> Node:
        left = self.in_expr(no_gt)
        while self.tok.kind == "&&":
            self.advance()
            self.newlines()
            left = ("and", left, self.in_expr(no_gt))
        return left

    def in_expr(self, no_gt: bool) -> Node:
        left = self.match_expr(no_gt)
        while self.tok.kind == "in":
            self.advance()
            array = str(self.expect("NAME").value)
            keys = list(left[1]) if left[0] == "grouping" else [left]
            left = ("in", keys, array)
        return left

    def match_expr(self, no_gt: bool) -> Node:
        left = self.comparison(no_gt)
        while self.tok.kind in ("~", "!~"):
            negate = self.advance().kind == "!~"
            left = ("match", negate, left, self.comparison(no_gt))
        return left

    def comparison(self, no_gt: bool) -> Node:
        left = self.concat(no_gt)
        kind = self.tok.kind
        if kind in _RELOPS and not (no_gt and kind == ">"):
            self.advance()
            return ("cmp", kind, left, self.concat(no_gt))
        return left

    def concat(self, no_gt: bool = False) -> Node:
        left = self.additive()
        while True:
            kind = self.tok.kind
            if kind == "|" and self.peek().kind == "getline":
                self.advance()
                self.advance()
                target = self.optional_lvalue()
                left = ("getline", "cmd", target, left)
                continue
            if kind in _CONCAT_START and kind not in ("-", "+", "!"):
                if kind == "getline" and no_gt:
                    break
                left = ("concat", left, self.additive())
                continue
            return left

    def additive(self) -> Node:
        left = self.multiplicative()
        while self.tok.kind in ("+", "-"):
            op = str(self.advance().kind)
            left = ("binop", op, left, self.multiplicative())
        return left

    def multiplicative(self) -> Node:
        left = self.unary()
        while self.tok.kind in ("*", "/", "%"):
            op = str(self.advance().kind)
            left = ("binop", op, left, self.unary())
        return left

    def unary(self) -> Node:
        kind = self.tok.kind
        if kind == "!":
            self.advance()
            return ("not", self.unary())
        if kind == "-":
            self.advance()
            return ("neg", self.unary())
        if kind == "+":
            self.advance()
            return ("pos", self.unary())
        return self.power()

    def power(self) -> Node:
        base = self.postfix()
        if self.tok.kind in ("^", "**"):
            self.advance()
            return ("binop", "^", base, self.unary_power())
        return base

    def unary_power(self) -> Node:
        if self.tok.kind == "-":
            self.advance()
            return ("neg", self.unary_power())
        if self.tok.kind == "+":
            self.advance()
            return self.unary_power()
        if self.tok.kind == "!":
            self.advance()
            return ("not", self.unary_power())
        return self.power()

    def postfix(self) -> Node:
        node = self.primary()
        if self.tok.kind in ("++", "--") and node[0] in ("var", "field", "index"):
            op = "postinc" if self.advance().kind == "++" else "postdec"
            return (op, node)
        return node

    def optional_lvalue(self) -> Node | None:
        kind = self.tok.kind
        if kind == "NAME":
            return self.primary()
        if kind == "$":
            self.advance()
            return ("field", self.field_operand())
        return None

    def field_operand(self) -> Node:
        kind = self.tok.kind
        if kind in ("++", "--"):
            op = "preinc" if self.advance().kind == "++" else "predec"
            return (op, self.lvalue())
        if kind == "-":
            self.advance()
            return ("neg", self.field_operand())
        return self.primary()

    def lvalue(self) -> Node:
        node = self.primary()
        if node[0] not in ("var", "field", "index"):
            raise self.error()
        return node

    def primary(self) -> Node:
        tok = self.tok
        kind = tok.kind
        if kind == "NUMBER":
            self.advance()
            return ("num", tok.value)
        if kind == "STRING":
            self.advance()
            return ("str", tok.value)
        if kind == "ERE":
            self.advance()
            return ("regex", tok.value)
        if kind == "$":
            self.advance()
            return ("field", self.field_operand())
        if kind in ("++", "--"):
            self.advance()
            return ("preinc" if kind == "++" else "predec", self.lvalue())
        if kind == "-":
            self.advance()
            return ("neg", self.unary())
        if kind == "!":
            self.advance()
            return ("not", self.unary())
        if kind == "(":
            self.advance()
            self.newlines()
            first = self.expr()
            if self.tok.kind == ",":
                items = [first]
                while self.tok.kind == ",":
                    self.advance()
                    self.newlines()
                    items.append(self.expr())
                self.expect(")")
                if self.tok.kind != "in":
                    raise self.error()
                return ("grouping", items)
            self.newlines()
            self.expect(")")
            return ("group", first)
        if kind == "NAME":
            self.advance()
            if self.tok.kind == "[":
                self.advance()
                subscript = self.expr_list()
                self.expect("]")
                return ("index", str(tok.value), subscript)
            return ("var", str(tok.value))
        if kind == "FUNC_NAME":
            self.advance()
            self.expect("(")
            args = [] if self.tok.kind == ")" else self.expr_list()
            self.expect(")")
            self.called.append(str(tok.value))
            return ("call", str(tok.value), args)
        if kind == "BUILTIN":
            self.advance()
            name = str(tok.value)
            if self.tok.kind == "(":
                self.advance()
                self.newlines()
                args = [] if self.tok.kind == ")" else self.expr_list()
                self.expect(")")
                return ("builtin", name, args)
            if name == "length":
                return ("builtin", name, [])
            raise self.error()
        if kind == "getline":
            self.advance()
            target = self.optional_lvalue()
            if self.tok.kind == "<":
                self.advance()
                return ("getline", "file", target, self.primary_no_concat())
            return ("getline", "simple", target, None)
        raise self.error()

    def primary_no_concat(self) -> Node:
        node = self.primary()
        return node


def _used_as_array(node: Any, name: str) -> bool:
    if not isinstance(node, tuple) or not node:
        return isinstance(node, list) and any(_used_as_array(item, name) for item in node)
    kind = node[0]
    if kind in ("index", "delete") and node[1] == name:
        return True
    if kind in ("in", "forin") and node[2] == name:
        return True
    if kind == "builtin" and node[1] == "split" and len(node[2]) > 1 and node[2][1] == ("var", name):
        return True
    return any(_used_as_array(item, name) for item in node[1:] if isinstance(item, (tuple, list)))


def parse(source: str) -> Program:
    return Parser(source).program()
