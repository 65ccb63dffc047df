"""The jq language (the subset engineers type into a container): lexer, parser, evaluator.

What is covered: paths (`.`, `.a.b`, `."a-b"`, `.[n]`, `.["k"]`, `.[]`, slices, `..`, `?`), pipes
and commas, `//`, `and`/`or`/`not`, comparisons and arithmetic, array and object construction,
string interpolation, `if/elif/else/end`, `try/catch`, `. as $x | ...`, `--arg` variables and the
common builtins (`keys`, `length`, `map`, `select`, `has`, `to_entries`, `sort_by`, `test`, `@csv`
...). Anything else is a compile error with jq's own message, the same one jq prints for a
function that does not exist.

Messages follow jq 1.6 (Debian and Ubuntu images) or 1.7 (Alpine): the runtime wording of an index
error and the name of the end of input in a syntax error differ between them.
"""

from __future__ import annotations

import base64
import contextlib
import json
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cmp_to_key
from typing import Any

KEYWORDS = {"if", "then", "elif", "else", "end", "and", "or", "as", "try", "catch", "def", "reduce",
            "foreach", "label", "import", "include", "__loc__"}
_TWO = ("|=", "+=", "-=", "*=", "/=", "%=", "//=", "==", "!=", "<=", ">=", "//", "?//", "..")
_ONE = "|,+-*/%=<>()[]{}:;?$"


class JqSyntaxError(Exception):
    """A compile error: the message and the offset jq pads the program line to."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset


class JqRuntimeError(Exception):
    """An error value raised while evaluating (`error(...)` or a type error)."""

    def __init__(self, value: Any) -> None:
        super().__init__(value)
        self.value = value


@dataclass
class Tok:
    kind: str  # FIELD IDENT VAR NUM STR FORMAT KW OP END INVALID
    value: Any
    pos: int


# ===================================================================================== lexer
def _string_end(src: str, i: int) -> int:
    """Index after the closing quote of the string starting at src[i] (`\\(...)` nests)."""
    j = i + 1
    while j < len(src):
        c = src[j]
        if c == "\\" and j + 1 < len(src) and src[j + 1] == "(":
            depth, j = 1, j + 2
            while j < len(src) and depth:
                if src[j] == '"':
                    j = _string_end(src, j)
                    continue
                depth += {"(": 1, ")": -1}.get(src[j], 0)
                j += 1
            continue
        if c == "\\":
            j += 2
            continue
        if c == '"':
            return j + 1
        j += 1
    return -1


def tokenize(src: str) -> list[Tok]:
    toks: list[Tok] = []
    stack: list[str] = []
    i = 0
    while i < len(src):
        c = src[i]
        if c.isspace():
            i += 1
            continue
        if c == "#":
            while i < len(src) and src[i] != "\n":
                i += 1
            continue
        m = re.compile(r"\.[A-Za-z_][A-Za-z0-9_]*").match(src, i)
        if m:
            toks.append(Tok("FIELD", m.group()[1:], i))
            i = m.end()
            continue
        m = re.compile(r"(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?").match(src, i)
        if m:
            text = m.group()
            toks.append(Tok("NUM", float(text) if any(ch in text for ch in ".eE") else int(text), i))
            i = m.end()
            continue
        m = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*").match(src, i)
        if m:
            word = m.group()
            toks.append(Tok("KW" if word in KEYWORDS else "IDENT", word, i))
            i = m.end()
            continue
        m = re.compile(r"@[A-Za-z0-9_]+").match(src, i)
        if m:
            toks.append(Tok("FORMAT", m.group(), i))
            i = m.end()
            continue
        if c == '"':
            end = _string_end(src, i)
            if end < 0:
                raise JqSyntaxError("unexpected $end, expecting QQSTRING_TEXT or QQSTRING_INTERP_START or "
                                    "QQSTRING_END", i)
            toks.append(Tok("STR", src[i:end], i))
            i = end
            continue
        two = src[i:i + 3] if src[i:i + 3] == "//=" else src[i:i + 2]
        if two in _TWO or src[i:i + 3] == "?//":
            toks.append(Tok("OP", two, i))
            i += len(two)
            continue
        if c in _ONE or c == ".":
            if c in "([{":
                stack.append({"(": ")", "[": "]", "{": "}"}[c])
            elif c in ")]}":
                if not stack or stack[-1] != c:
                    toks.append(Tok("INVALID", c, i))
                    i += 1
                    continue
                stack.pop()
            toks.append(Tok("OP", c, i))
            i += 1
            continue
        toks.append(Tok("INVALID", c, i))
        i += 1
    toks.append(Tok("END", None, toks[-1].pos if toks else 0))
    return toks


# ==================================================================================== parser
Node = tuple[Any, ...]


class Parser:
    def __init__(self, src: str) -> None:
        self.toks = tokenize(src)
        self.i = 0

    def peek(self, offset: int = 0) -> Tok:
        return self.toks[min(self.i + offset, len(self.toks) - 1)]

    def next(self) -> Tok:
        tok = self.peek()
        self.i += 1
        return tok

    def is_op(self, *ops: str) -> bool:
        tok = self.peek()
        return tok.kind == "OP" and tok.value in ops

    def is_kw(self, *words: str) -> bool:
        tok = self.peek()
        return tok.kind == "KW" and tok.value in words

    def fail(self, expecting: str = "") -> JqSyntaxError:
        tok = self.peek()
        name = {"END": "$end", "INVALID": "INVALID_CHARACTER", "FIELD": "FIELD", "IDENT": "IDENT",
                "NUM": "LITERAL", "STR": "QQSTRING_START", "FORMAT": "FORMAT"}.get(tok.kind)
        if name is None:
            name = f"'{tok.value}'" if len(tok.value) == 1 else f'"{tok.value}"'
        return JqSyntaxError(f"unexpected {name}" + (f", expecting {expecting}" if expecting else ""), tok.pos)

    def expect(self, op: str, expecting: str = "") -> None:
        if not self.is_op(op):
            raise self.fail(expecting)
        self.next()

    def program(self) -> Node:
        node = self.pipe()
        if self.peek().kind != "END":
            raise self.fail("$end")
        return node

    def pipe(self) -> Node:
        if self.is_kw("def"):
            raise self.fail()
        left = self.comma()
        if self.is_kw("as"):
            self.next()
            if not self.is_op("$"):
                raise self.fail("'$' or '[' or '{'")
            self.next()
            name = self.next()
            if name.kind not in ("IDENT", "KW"):
                raise self.fail()
            self.expect("|")
            return ("as", left, name.value, self.pipe())
        if self.is_op("|"):
            self.next()
            return ("pipe", left, self.pipe())
        return left

    def comma(self) -> Node:
        left = self.alt()
        while self.is_op(","):
            self.next()
            left = ("comma", left, self.alt())
        return left

    def alt(self) -> Node:
        left = self.logic_or()
        if self.is_op("//"):
            self.next()
            return ("alt", left, self.alt())
        if self.is_op("=", "|=", "+=", "-=", "*=", "/=", "%=", "//="):
            tok = self.next()
            return ("update", tok.value, left, self.alt())
        return left

    def logic_or(self) -> Node:
        left = self.logic_and()
        while self.is_kw("or"):
            self.next()
            left = ("or", left, self.logic_and())
        return left

    def logic_and(self) -> Node:
        left = self.compare()
        while self.is_kw("and"):
            self.next()
            left = ("and", left, self.compare())
        return left

    def compare(self) -> Node:
        left = self.additive()
        if self.is_op("==", "!=", "<", "<=", ">", ">="):
            op = self.next().value
            left = ("bin", op, left, self.additive())
            if self.is_op("==", "!=", "<", "<=", ">", ">="):
                raise self.fail()
        return left

    def additive(self) -> Node:
        left = self.multiplicative()
        while self.is_op("+", "-"):
            op = self.next().value
            left = ("bin", op, left, self.multiplicative())
        return left

    def multiplicative(self) -> Node:
        left = self.unary()
        while self.is_op("*", "/", "%"):
            op = self.next().value
            left = ("bin", op, left, self.unary())
        return left

    def unary(self) -> Node:
        if self.is_op("-"):
            self.next()
            return ("neg", self.postfix())
        return self.postfix()

    def postfix(self) -> Node:
        node = self.term()
        while True:
            tok = self.peek()
            if tok.kind == "FIELD":
                self.next()
                node = ("index", node, ("lit", tok.value))
            elif self.is_op(".") and self.peek(1).kind == "STR":
                self.next()
                node = ("index", node, self.string(self.next()))
            elif self.is_op("["):
                node = self.bracket(node)
            elif self.is_op("?"):
                self.next()
                node = ("try", node, None)
            else:
                return node

    def bracket(self, base: Node) -> Node:
        self.expect("[")
        if self.is_op("]"):
            self.next()
            return ("iter", base)
        if self.is_op(":"):
            self.next()
            upper = self.pipe()
            self.expect("]")
            return ("slice", base, None, upper)
        key = self.pipe()
        if self.is_op(":"):
            self.next()
            upper = None if self.is_op("]") else self.pipe()
            self.expect("]")
            return ("slice", base, key, upper)
        self.expect("]")
        return ("index", base, key)

    def string(self, tok: Tok, fmt: str = "@text") -> Node:
        text = tok.value[1:-1]
        parts: list[Any] = []
        buf, i = [], 0
        while i < len(text):
            c = text[i]
            if c == "\\" and i + 1 < len(text):
                nxt = text[i + 1]
                if nxt == "(":
                    depth, j = 1, i + 2
                    while j < len(text) and depth:
                        if text[j] == '"':
                            j = _string_end(text, j)
                            continue
                        depth += {"(": 1, ")": -1}.get(text[j], 0)
                        j += 1
                    if buf:
                        parts.append("".join(buf))
                        buf = []
                    inner = Parser(text[i + 2:j - 1])
                    parts.append(inner.program())
                    i = j
                    continue
                if nxt == "u" and i + 5 < len(text):
                    buf.append(chr(int(text[i + 2:i + 6], 16)))
                    i += 6
                    continue
                buf.append({"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "/": "/", "\\": "\\",
                            '"': '"'}.get(nxt, nxt))
                i += 2
                continue
            buf.append(c)
            i += 1
        if buf:
            parts.append("".join(buf))
        if all(isinstance(p, str) for p in parts):
            return ("lit", "".join(parts))
        return ("str", parts, fmt)

    def term(self) -> Node:
        tok = self.peek()
        if tok.kind == "FIELD":
            self.next()
            return ("index", ("id",), ("lit", tok.value))
        if tok.kind == "NUM":
            self.next()
            return ("lit", tok.value)
        if tok.kind == "STR":
            self.next()
            return self.string(tok)
        if tok.kind == "FORMAT":
            self.next()
            if self.peek().kind == "STR":
                return self.string(self.next(), tok.value)
            return ("format", tok.value, tok.pos)
        if tok.kind == "OP":
            if tok.value == ".":
                self.next()
                if self.peek().kind == "STR":
                    return ("index", ("id",), self.string(self.next()))
                return ("id",)
            if tok.value == "..":
                self.next()
                return ("call", "recurse", [], tok.pos)
            if tok.value == "(":
                self.next()
                node = self.pipe()
                self.expect(")")
                return node
            if tok.value == "[":
                self.next()
                if self.is_op("]"):
                    self.next()
                    return ("arr", None)
                node = self.pipe()
                self.expect("]")
                return ("arr", node)
            if tok.value == "{":
                return self.obj()
            if tok.value == "$":
                self.next()
                name = self.next()
                if name.kind not in ("IDENT", "KW"):
                    raise self.fail()
                return ("var", name.value, tok.pos)
        if tok.kind == "KW":
            if tok.value == "if":
                return self.conditional()
            if tok.value == "try":
                self.next()
                body = self.postfix()
                handler = None
                if self.is_kw("catch"):
                    self.next()
                    handler = self.postfix()
                return ("try", body, handler)
        if tok.kind == "IDENT":
            self.next()
            args: list[Node] = []
            if self.is_op("("):
                self.next()
                args.append(self.pipe())
                while self.is_op(";"):
                    self.next()
                    args.append(self.pipe())
                if not self.is_op(")"):
                    raise self.fail("';' or ')'")
                self.next()
            return ("call", tok.value, args, tok.pos)
        raise self.fail()

    def conditional(self) -> Node:
        self.next()
        branches = []
        cond = self.pipe()
        if not self.is_kw("then"):
            raise self.fail()
        self.next()
        branches.append((cond, self.pipe()))
        otherwise: Node = ("id",)
        while True:
            if self.is_kw("elif"):
                self.next()
                cond = self.pipe()
                if not self.is_kw("then"):
                    raise self.fail()
                self.next()
                branches.append((cond, self.pipe()))
            elif self.is_kw("else"):
                self.next()
                otherwise = self.pipe()
                if not self.is_kw("end"):
                    raise self.fail()
                self.next()
                break
            elif self.is_kw("end"):
                self.next()
                break
            else:
                raise self.fail()
        return ("if", branches, otherwise)

    def obj(self) -> Node:
        self.expect("{")
        entries: list[tuple[Node, Node]] = []
        while not self.is_op("}"):
            tok = self.peek()
            if tok.kind in ("IDENT", "KW"):
                self.next()
                key: Node = ("lit", tok.value)
                value: Node = ("index", ("id",), key)
            elif tok.kind == "STR":
                self.next()
                key = self.string(tok)
                value = ("index", ("id",), key)
            elif tok.kind == "NUM":
                raise self.fail()
            elif self.is_op("$"):
                self.next()
                name = self.next()
                key, value = ("lit", name.value), ("var", name.value, tok.pos)
            elif self.is_op("("):
                self.next()
                key = self.pipe()
                self.expect(")")
                value = ("id",)
                if not self.is_op(":"):
                    raise self.fail()
            else:
                raise self.fail()
            if self.is_op(":"):
                self.next()
                value = self.obj_value()
            entries.append((key, value))
            if self.is_op(","):
                self.next()
                continue
            if not self.is_op("}"):
                raise self.fail()
        self.next()
        return ("obj", entries)

    def obj_value(self) -> Node:
        """An object value: a term with `|` only inside parentheses (`{a: .x | .y}` is not valid)."""
        left = self.alt_in_object()
        return left

    def alt_in_object(self) -> Node:
        left = self.unary()
        while self.is_op("//"):
            self.next()
            left = ("alt", left, self.unary())
        return left


# ================================================================================ evaluation
_ORDER = {"null": 0, "boolean": 1, "number": 3, "string": 4, "array": 5, "object": 6}


def jtype(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def fmt_number(value: float | int) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and abs(value) < 10 ** 17:
        return str(value)
    number = float(value)
    if math.isnan(number):
        return "null"
    if math.isinf(number):
        return "1.7976931348623157e+308" if number > 0 else "-1.7976931348623157e+308"
    text = repr(number)
    return text[:-2] if text.endswith(".0") else text


def _escape(text: str) -> str:
    out = json.dumps(text, ensure_ascii=False)
    return out.replace("\x7f", "\\u007f")


def dump(value: Any, indent: int = 2, sort_keys: bool = False, level: int = 0) -> str:
    """jq's serialisation: compact when `indent` is 0, else one member per line."""
    if value is None or isinstance(value, bool):
        return "null" if value is None else ("true" if value else "false")
    if isinstance(value, int | float):
        return fmt_number(value)
    if isinstance(value, str):
        return _escape(value)
    items: list[tuple[str | None, Any]]
    if isinstance(value, list):
        items = [(None, v) for v in value]
        opening, closing = "[", "]"
    else:
        keys = sorted(value) if sort_keys else list(value)
        items = [(k, value[k]) for k in keys]
        opening, closing = "{", "}"
    if not items:
        return opening + closing
    sep = ":" if not indent else ": "

    def member(key: str | None, item: Any) -> str:
        body = dump(item, indent, sort_keys, level + 1)
        return body if key is None else _escape(key) + sep + body

    if not indent:
        return opening + ",".join(member(k, v) for k, v in items) + closing
    pad = " " * (indent * (level + 1))
    return (opening + "\n" + ",\n".join(pad + member(k, v) for k, v in items) + "\n"
            + " " * (indent * level) + closing)


def trunc(value: Any) -> str:
    """jq's short dump of a value in a message: at most 11 characters, then `...`."""
    text = dump(value, 0)
    return text if len(text) < 15 else text[:11] + "..."


def compare(a: Any, b: Any) -> int:
    ta, tb = jtype(a), jtype(b)
    if ta != tb:
        ra = (_ORDER[ta], a is True) if ta == "boolean" else (_ORDER[ta], False)
        rb = (_ORDER[tb], b is True) if tb == "boolean" else (_ORDER[tb], False)
        return -1 if ra < rb else 1
    if ta == "boolean":
        return (a > b) - (a < b)
    if ta in ("number", "string"):
        return (a > b) - (a < b)
    if ta == "null":
        return 0
    if ta == "array":
        for x, y in zip(a, b, strict=False):
            c = compare(x, y)
            if c:
                return c
        return (len(a) > len(b)) - (len(a) < len(b))
    ka, kb = sorted(a), sorted(b)
    if ka != kb:
        return compare(ka, kb)
    for k in ka:
        c = compare(a[k], b[k])
        if c:
            return c
    return 0


SORT_KEY = cmp_to_key(compare)


def truthy(value: Any) -> bool:
    return value is not None and value is not False


@dataclass
class Evaluator:
    """Evaluates a parsed program; `version` is "1.6" or "1.7" for version-specific texts."""

    version: str = "1.6"
    env: dict[str, str] = field(default_factory=dict)
    budget: int = 2_000_000

    def tick(self) -> None:
        self.budget -= 1
        if self.budget < 0:
            raise JqRuntimeError("jq: evaluation too long")

    # ------------------------------------------------------------------ core
    def run(self, node: Node, inp: Any, scope: dict[str, Any]) -> Iterator[Any]:
        self.tick()
        kind = node[0]
        if kind == "id":
            yield inp
        elif kind == "lit":
            yield node[1]
        elif kind == "index":
            for base in self.run(node[1], inp, scope):
                for key in self.run(node[2], inp, scope):
                    yield self.index(base, key)
        elif kind == "iter":
            for base in self.run(node[1], inp, scope):
                yield from self.iterate(base)
        elif kind == "slice":
            for base in self.run(node[1], inp, scope):
                lows = list(self.run(node[2], inp, scope)) if node[2] else [None]
                highs = list(self.run(node[3], inp, scope)) if node[3] else [None]
                for low in lows:
                    for high in highs:
                        yield self.slice(base, low, high)
        elif kind == "pipe":
            for mid in self.run(node[1], inp, scope):
                yield from self.run(node[2], mid, scope)
        elif kind == "comma":
            yield from self.run(node[1], inp, scope)
            yield from self.run(node[2], inp, scope)
        elif kind == "as":
            for value in self.run(node[1], inp, scope):
                yield from self.run(node[3], inp, {**scope, node[2]: value})
        elif kind == "alt":
            found = False
            try:
                for value in self.run(node[1], inp, scope):
                    if truthy(value):
                        found = True
                        yield value
            except JqRuntimeError:
                pass
            if not found:
                yield from self.run(node[2], inp, scope)
        elif kind in ("and", "or"):
            for left in self.run(node[1], inp, scope):
                if kind == "and" and not truthy(left):
                    yield False
                    continue
                if kind == "or" and truthy(left):
                    yield True
                    continue
                for right in self.run(node[2], inp, scope):
                    yield truthy(right)
        elif kind == "bin":
            for right in self.run(node[3], inp, scope):
                for left in self.run(node[2], inp, scope):
                    yield self.binop(node[1], left, right)
        elif kind == "neg":
            for value in self.run(node[1], inp, scope):
                if jtype(value) != "number":
                    raise JqRuntimeError(f"{jtype(value)} ({trunc(value)}) cannot be negated")
                yield -value
        elif kind == "arr":
            yield [] if node[1] is None else list(self.run(node[1], inp, scope))
        elif kind == "obj":
            yield from self.build(node[1], inp, scope, {})
        elif kind == "str":
            yield from self.interpolate(node[1], node[2], inp, scope, "")
        elif kind == "var":
            yield dict(self.env) if node[1] == "ENV" and "ENV" not in scope else scope.get(node[1])
        elif kind == "if":
            yield from self.conditional(node[1], node[2], inp, scope)
        elif kind == "try":
            try:
                yield from self.run(node[1], inp, scope)
            except JqRuntimeError as exc:
                if node[2] is not None and exc.value != "jq: evaluation too long":
                    yield from self.run(node[2], exc.value, scope)
        elif kind == "format":
            yield self.format(node[1], inp)
        elif kind == "call":
            yield from self.call(node[1], node[2], inp, scope)
        elif kind == "update":
            yield from self.update(node[1], node[2], node[3], inp, scope)

    def build(self, entries: list[tuple[Node, Node]], inp: Any, scope: dict[str, Any],
              acc: dict[str, Any]) -> Iterator[dict[str, Any]]:
        if not entries:
            yield dict(acc)
            return
        (knode, vnode), rest = entries[0], entries[1:]
        for key in self.run(knode, inp, scope):
            if not isinstance(key, str):
                raise JqRuntimeError(f"Object keys must be strings, not {jtype(key)}")
            for value in self.run(vnode, inp, scope):
                yield from self.build(rest, inp, scope, {**acc, key: value})

    def interpolate(self, parts: list[Any], fmt: str, inp: Any, scope: dict[str, Any],
                    prefix: str) -> Iterator[str]:
        if not parts:
            yield prefix
            return
        head, rest = parts[0], parts[1:]
        if isinstance(head, str):
            yield from self.interpolate(rest, fmt, inp, scope, prefix + head)
            return
        for value in self.run(head, inp, scope):
            text = self.format(fmt, value)
            yield from self.interpolate(rest, fmt, inp, scope, prefix + text)

    def conditional(self, branches: list[tuple[Node, Node]], otherwise: Node, inp: Any,
                    scope: dict[str, Any]) -> Iterator[Any]:
        if not branches:
            yield from self.run(otherwise, inp, scope)
            return
        (cond, then), rest = branches[0], branches[1:]
        for value in self.run(cond, inp, scope):
            if truthy(value):
                yield from self.run(then, inp, scope)
            else:
                yield from self.conditional(rest, otherwise, inp, scope)

    # ------------------------------------------------------------ primitives
    def index(self, base: Any, key: Any) -> Any:
        if isinstance(key, str):
            if isinstance(base, dict):
                return base.get(key)
            if base is None:
                return None
            quoted = json.dumps(key, ensure_ascii=False)
            if self.version == "1.6":
                raise JqRuntimeError(f"Cannot index {jtype(base)} with string {quoted}")
            raise JqRuntimeError(f"Cannot index {jtype(base)} with {quoted}")
        if jtype(key) == "number":
            if isinstance(base, list):
                i = math.floor(key)
                if i < 0:
                    i += len(base)
                return base[i] if 0 <= i < len(base) else None
            if base is None:
                return None
            raise JqRuntimeError(f"Cannot index {jtype(base)} with number")
        if isinstance(key, dict) and isinstance(base, list | type(None)):
            if base is None:
                return None
            return self.slice(base, key.get("start"), key.get("end"))
        if base is None and key is None:
            return None
        raise JqRuntimeError(f"Cannot index {jtype(base)} with {jtype(key)}")

    def slice(self, base: Any, low: Any, high: Any) -> Any:
        if base is None:
            return None
        if not isinstance(base, list | str):
            raise JqRuntimeError(f"Cannot index {jtype(base)} with object")
        for bound in (low, high):
            if bound is not None and jtype(bound) != "number":
                raise JqRuntimeError("Start and end indices of an array slice must be numbers")
        n = len(base)
        start = 0 if low is None else math.floor(low)
        stop = n if high is None else math.ceil(high)
        return base[start:stop]

    def iterate(self, base: Any) -> Iterator[Any]:
        if isinstance(base, list):
            yield from base
        elif isinstance(base, dict):
            yield from base.values()
        else:
            raise JqRuntimeError(f"Cannot iterate over {jtype(base)} ({trunc(base)})")

    def binop(self, op: str, a: Any, b: Any) -> Any:
        if op in ("==", "!="):
            same = compare(a, b) == 0
            return same if op == "==" else not same
        if op in ("<", "<=", ">", ">="):
            c = compare(a, b)
            return {"<": c < 0, "<=": c <= 0, ">": c > 0, ">=": c >= 0}[op]
        ta, tb = jtype(a), jtype(b)
        if op == "+":
            if a is None:
                return b
            if b is None:
                return a
            if ta == tb == "number":
                return as_number(a + b)
            if ta == tb and ta in ("string", "array"):
                return a + b
            if ta == tb == "object":
                return {**a, **b}
            raise JqRuntimeError(f"{ta} ({trunc(a)}) and {tb} ({trunc(b)}) cannot be added")
        if op == "-":
            if ta == tb == "number":
                return as_number(a - b)
            if ta == tb == "array":
                return [x for x in a if all(compare(x, y) for y in b)]
            raise JqRuntimeError(f"{ta} ({trunc(a)}) and {tb} ({trunc(b)}) cannot be subtracted")
        if op == "*":
            if ta == tb == "number":
                return as_number(a * b)
            if ta == tb == "object":
                return _deep_merge(a, b)
            if {ta, tb} == {"string", "number"}:
                text, times = (a, b) if ta == "string" else (b, a)
                return None if times <= 0 else text * max(1, math.ceil(times) if times < 1 else int(times))
            raise JqRuntimeError(f"{ta} ({trunc(a)}) and {tb} ({trunc(b)}) cannot be multiplied")
        if op == "/":
            if ta == tb == "number":
                if b == 0:
                    raise JqRuntimeError(f"{ta} ({trunc(a)}) and {tb} ({trunc(b)}) cannot be divided "
                                         "because the divisor is zero")
                return as_number(a / b)
            if ta == tb == "string":
                return a.split(b) if a else []
            raise JqRuntimeError(f"{ta} ({trunc(a)}) and {tb} ({trunc(b)}) cannot be divided")
        if ta == tb == "number":
            if int(b) == 0:
                raise JqRuntimeError(f"{ta} ({trunc(a)}) and {tb} ({trunc(b)}) cannot be divided "
                                     "because the divisor is zero")
            return int(math.fmod(int(a), int(b)))
        raise JqRuntimeError(f"{ta} ({trunc(a)}) and {tb} ({trunc(b)}) cannot be divided")

    def format(self, name: str, value: Any) -> str:
        if name in ("@text", "@json"):
            return value if name == "@text" and isinstance(value, str) else dump(value, 0)
        if name in ("@csv", "@tsv"):
            if not isinstance(value, list):
                raise JqRuntimeError(f"{jtype(value)} ({trunc(value)}) cannot be {name[1:]}-formatted, "
                                     "only an array can be")
            cells = []
            for item in value:
                t = jtype(item)
                if t in ("array", "object"):
                    raise JqRuntimeError(f"{t} ({trunc(item)}) is not valid in a csv row")
                if t == "string":
                    cells.append('"' + item.replace('"', '""') + '"' if name == "@csv" else
                                 item.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
                                 .replace("\r", "\\r"))
                else:
                    cells.append("" if item is None else dump(item, 0))
            return ("," if name == "@csv" else "\t").join(cells)
        text = value if isinstance(value, str) else dump(value, 0)
        if name == "@base64":
            return base64.b64encode(text.encode()).decode()
        if name == "@base64d":
            return base64.b64decode(text + "=" * (-len(text) % 4)).decode(errors="replace")
        if name == "@uri":
            from urllib.parse import quote

            return quote(text, safe="-_.~")
        if name == "@html":
            return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
                    .replace("'", "&#39;").replace('"', "&quot;"))
        if name == "@sh":
            items = value if isinstance(value, list) else [value]
            return " ".join("'" + v.replace("'", "'\\''") + "'" if isinstance(v, str) else dump(v, 0)
                            for v in items)
        raise JqRuntimeError(f"{name[1:]} is not a valid format")

    # ----------------------------------------------------------------- paths
    def paths(self, node: Node, inp: Any, scope: dict[str, Any]) -> Iterator[tuple[list[Any], Any]]:
        """(path, value) for each output of a path expression (`.a[0]`, `.[]`, `select`...)."""
        self.tick()
        kind = node[0]
        if kind == "id":
            yield [], inp
        elif kind == "index":
            for path, base in self.paths(node[1], inp, scope):
                for key in self.run(node[2], inp, scope):
                    yield [*path, key], self.index(base, key)
        elif kind == "iter":
            for path, base in self.paths(node[1], inp, scope):
                if base is None:
                    continue
                keys = list(base) if isinstance(base, dict) else range(len(base)) if isinstance(base, list) else None
                if keys is None:
                    raise JqRuntimeError(f"Cannot iterate over {jtype(base)} ({trunc(base)})")
                for key in keys:
                    yield [*path, key], base[key]
        elif kind == "slice":
            for path, base in self.paths(node[1], inp, scope):
                low = self.values(node[2], inp, scope)[0] if node[2] else None
                high = self.values(node[3], inp, scope)[0] if node[3] else None
                yield [*path, {"start": low, "end": high}], self.slice(base, low, high)
        elif kind == "pipe":
            for path, mid in self.paths(node[1], inp, scope):
                for rest, value in self.paths(node[2], mid, scope):
                    yield path + rest, value
        elif kind == "comma":
            yield from self.paths(node[1], inp, scope)
            yield from self.paths(node[2], inp, scope)
        elif kind == "try":
            with contextlib.suppress(JqRuntimeError):
                yield from self.paths(node[1], inp, scope)
        elif kind == "if":
            yield from self.run_if_paths(node[1], node[2], inp, scope)
        elif kind == "call" and node[1] == "select":
            for cond in self.run(node[2][0], inp, scope):
                if truthy(cond):
                    yield [], inp
        elif kind == "call" and node[1] == "recurse" and not node[2]:
            yield from self.recurse_paths([], inp)
        elif kind == "call" and node[1] == "empty":
            return
        elif kind == "call" and node[1] == "getpath":
            for path in self.run(node[2][0], inp, scope):
                yield list(path), getpath(inp, path)
        else:
            for value in self.run(node, inp, scope):
                raise JqRuntimeError(f"Invalid path expression with result {trunc(value)}")

    def recurse_paths(self, path: list[Any], value: Any) -> Iterator[tuple[list[Any], Any]]:
        self.tick()
        yield path, value
        if isinstance(value, dict):
            for key, child in value.items():
                yield from self.recurse_paths([*path, key], child)
        elif isinstance(value, list):
            for key, child in enumerate(value):
                yield from self.recurse_paths([*path, key], child)

    def run_if_paths(self, branches: list[tuple[Node, Node]], otherwise: Node, inp: Any,
                     scope: dict[str, Any]) -> Iterator[tuple[list[Any], Any]]:
        if not branches:
            yield from self.paths(otherwise, inp, scope)
            return
        (cond, then), rest = branches[0], branches[1:]
        for value in self.run(cond, inp, scope):
            if truthy(value):
                yield from self.paths(then, inp, scope)
            else:
                yield from self.run_if_paths(rest, otherwise, inp, scope)

    def update(self, op: str, lhs: Node, rhs: Node, inp: Any, scope: dict[str, Any]) -> Iterator[Any]:
        """`lhs |= f` (f on each value), `lhs = v` and `lhs op= v` (v from `.`, one result per v)."""
        if op == "|=":
            out = inp
            for path, _value in list(self.paths(lhs, inp, scope)):
                results = self.values(rhs, getpath(out, path), scope)
                out = setpath(out, path, results[0]) if results else delpaths(out, [path])
            yield out
            return
        for value in self.run(rhs, inp, scope):
            out = inp
            for path, _old in list(self.paths(lhs, inp, scope)):
                current = getpath(out, path)
                if op == "=":
                    new = value
                elif op == "//=":
                    new = current if truthy(current) else value
                else:
                    new = self.binop(op[:-1], current, value)
                out = setpath(out, path, new)
            yield out

    # ------------------------------------------------------------- builtins
    def call(self, name: str, args: list[Node], inp: Any, scope: dict[str, Any]) -> Iterator[Any]:
        fn = BUILTINS[(name, len(args))]
        yield from fn(self, inp, args, scope)

    def values(self, node: Node, inp: Any, scope: dict[str, Any]) -> list[Any]:
        return list(self.run(node, inp, scope))


def as_number(value: float) -> float | int:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e17:
        return int(value)
    return value


def _deep_merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for k, v in b.items():
        out[k] = _deep_merge(out[k], v) if isinstance(out.get(k), dict) and isinstance(v, dict) else v
    return out


def getpath(value: Any, path: list[Any]) -> Any:
    for key in path:
        if value is None:
            return None
        value = Evaluator().index(value, key)
    return value


def setpath(value: Any, path: list[Any], new: Any) -> Any:
    """A copy of `value` with `new` at `path` (null grows into the object or array a key needs)."""
    if not path:
        return new
    key, rest = path[0], path[1:]
    if isinstance(key, str):
        if value is not None and not isinstance(value, dict):
            raise JqRuntimeError(f"Cannot index {jtype(value)} with \"{key}\"")
        out = dict(value or {})
        out[key] = setpath(out.get(key), rest, new)
        return out
    if isinstance(key, dict):
        base = list(value or [])
        start = key.get("start") or 0
        end = len(base) if key.get("end") is None else key["end"]
        replacement = setpath(base[start:end], rest, new)
        return base[:start] + list(replacement) + base[end:]
    if value is not None and not isinstance(value, list):
        raise JqRuntimeError(f"Cannot index {jtype(value)} with number")
    out_list = list(value or [])
    index = int(key) + (len(out_list) if key < 0 else 0)
    if index < 0:
        raise JqRuntimeError("Out of bounds negative array index")
    while len(out_list) <= index:
        out_list.append(None)
    out_list[index] = setpath(out_list[index], rest, new)
    return out_list


def delpaths(value: Any, paths: list[list[Any]]) -> Any:
    """`value` without what each path points at (longest and last first, so indexes hold)."""
    for path in sorted(paths, key=SORT_KEY, reverse=True):
        value = _delpath(value, path)
    return value


def _delpath(value: Any, path: list[Any]) -> Any:
    if value is None or not path:
        return None if not path else value
    key, rest = path[0], path[1:]
    if rest:
        child = Evaluator().index(value, key)
        if child is None:
            return value
        return setpath(value, [key], _delpath(child, rest))
    if isinstance(value, dict) and isinstance(key, str):
        return {k: v for k, v in value.items() if k != key}
    if isinstance(value, list) and isinstance(key, int | float) and not isinstance(key, bool):
        index = int(key) + (len(value) if key < 0 else 0)
        return [v for i, v in enumerate(value) if i != index]
    if isinstance(value, list) and isinstance(key, dict):
        start = key.get("start") or 0
        end = len(value) if key.get("end") is None else key["end"]
        return value[:start] + value[end:]
    raise JqRuntimeError(f"Cannot delete field at {jtype(key)} index of {jtype(value)}")


Builtin = Callable[[Evaluator, Any, list[Node], dict[str, Any]], Iterator[Any]]
# name/arity -> implementation, filled by jqfuncs.py.
BUILTINS: dict[tuple[str, int], Builtin] = {}


def check(node: Node, scope: set[str], errors: list[tuple[str, int]]) -> None:
    """Compile-time checks: every function and variable must be defined."""
    if not isinstance(node, tuple) or not node:
        return
    kind = node[0]
    if kind == "call":
        if (node[1], len(node[2])) not in BUILTINS:
            errors.append((f"{node[1]}/{len(node[2])} is not defined", node[3]))
        for arg in node[2]:
            check(arg, scope, errors)
        return
    if kind == "var":
        if node[1] not in scope and node[1] not in ("ENV", "__loc__"):
            errors.append((f"${node[1]} is not defined", node[2]))
        return
    if kind == "as":
        check(node[1], scope, errors)
        check(node[3], scope | {node[2]}, errors)
        return
    if kind == "format":
        if node[1] not in ("@text", "@json", "@csv", "@tsv", "@base64", "@base64d", "@uri", "@html", "@sh"):
            errors.append((f"{node[1][1:]} is not a valid format", node[2]))
        return
    for part in node[1:]:
        if isinstance(part, tuple):
            check(part, scope, errors)
        elif isinstance(part, list):
            for item in part:
                if isinstance(item, tuple) and item and isinstance(item[0], str):
                    check(item, scope, errors)
                elif isinstance(item, tuple):
                    for sub in item:
                        check(sub, scope, errors)


def compile_program(src: str, variables: set[str]) -> Node:
    """Parse and check a program; raises JqSyntaxError (the first error) on failure."""
    node = Parser(src).program()
    errors: list[tuple[str, int]] = []
    check(node, variables, errors)
    if errors:
        exc = JqSyntaxError(errors[0][0], errors[0][1])
        exc.count = len(errors)  # type: ignore[attr-defined]
        raise exc
    return node


__all__ = ["BUILTINS", "SORT_KEY", "Builtin", "Evaluator", "JqRuntimeError", "JqSyntaxError", "Node", "as_number", "compare", "compile_program", "delpaths", "dump", "getpath", "jtype", "setpath", "trunc", "truthy"]
