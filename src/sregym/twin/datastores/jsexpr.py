"""Just enough JavaScript to run what people pass to `mongosh --eval` and put in init scripts.

Statements are call chains over the shell's globals (`db.createUser({...})`,
`db.getSiblingDB('geo-db').getUsers()`, `db.geo.find({hotelId: '1'}).count()`,
`print('x')`), `use <db>`, `show dbs|users|collections`, and `var x = <literal>`. Arguments are
JSON-ish literals with unquoted keys and single quotes, as people type them. Anything else is a
syntax error reported the way mongosh does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any


class JsSyntaxError(Exception):
    pass


@dataclass(frozen=True)
class Step:
    """One link of a chain: an attribute (`args is None`) or a call with evaluated arguments."""

    name: str
    args: tuple[Any, ...] | None = None


@dataclass(frozen=True)
class Statement:
    kind: str  # "chain" | "use" | "show" | "var"
    steps: tuple[Step, ...] = ()
    word: str = ""
    value: Any = None


_TOKEN = re.compile(r"""\s*(?:(?P<num>-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)|(?P<str>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
                        |(?P<name>[$A-Za-z_][\w$-]*)|(?P<op>[{}\[\](),:.;=]))""", re.X)


def _tokens(src: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    src = re.sub(r"//[^\n]*", "", src)
    while pos < len(src):
        if src[pos:].strip() == "":
            break
        m = _TOKEN.match(src, pos)
        if not m or m.end() == pos:
            raise JsSyntaxError(f"Unexpected character ({src[pos:].strip()[:1]!r})")
        kind = m.lastgroup or "op"
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


def _unquote(text: str) -> str:
    body = text[1:-1]
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), body)


class _Parser:
    def __init__(self, toks: list[tuple[str, str]], variables: dict[str, Any]) -> None:
        self.toks = toks
        self.i = 0
        self.vars = variables

    def peek(self) -> tuple[str, str] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> tuple[str, str]:
        tok = self.peek()
        if tok is None:
            raise JsSyntaxError("Unexpected end of input")
        self.i += 1
        return tok

    def expect(self, op: str) -> None:
        kind, text = self.take()
        if text != op or kind != "op":
            raise JsSyntaxError(f"Unexpected token, expected \"{op}\"")

    def at(self, op: str) -> bool:
        tok = self.peek()
        return tok is not None and tok[0] == "op" and tok[1] == op

    def value(self) -> Any:
        kind, text = self.take()
        if kind == "num":
            return float(text) if any(c in text for c in ".eE") else int(text)
        if kind == "str":
            return _unquote(text)
        if kind == "name":
            if text in ("true", "false"):
                return text == "true"
            if text in ("null", "undefined"):
                return None
            if text in ("ObjectId", "ISODate", "NumberInt", "NumberLong", "Date"):
                self.expect("(")
                inner = None if self.at(")") else self.value()
                self.expect(")")
                return inner
            if text in self.vars:
                return self.vars[text]
            raise JsSyntaxError(f"{text} is not defined")
        if text == "{":
            obj: dict[str, Any] = {}
            while not self.at("}"):
                key_kind, key = self.take()
                if key_kind not in ("name", "str", "num"):
                    raise JsSyntaxError("Unexpected token")
                self.expect(":")
                obj[_unquote(key) if key_kind == "str" else key] = self.value()
                if not self.at("}"):
                    self.expect(",")
            self.expect("}")
            return obj
        if text == "[":
            arr: list[Any] = []
            while not self.at("]"):
                arr.append(self.value())
                if not self.at("]"):
                    self.expect(",")
            self.expect("]")
            return arr
        raise JsSyntaxError(f"Unexpected token ({text})")

    def statement(self) -> Statement | None:
        tok = self.peek()
        if tok is None:
            return None
        if tok == ("name", "use") or tok == ("name", "show"):
            self.take()
            _, word = self.take()
            return Statement(tok[1], word=word)
        if tok == ("name", "var") or tok == ("name", "let") or tok == ("name", "const"):
            self.take()
            _, name = self.take()
            self.expect("=")
            value = self.value()
            self.vars[name] = value
            return Statement("var", word=name, value=value)
        kind, name = self.take()
        if kind != "name":
            raise JsSyntaxError(f"Unexpected token ({name})")
        steps = [Step(name)]
        while True:
            if self.at("("):
                self.take()
                args: list[Any] = []
                while not self.at(")"):
                    args.append(self.value())
                    if not self.at(")"):
                        self.expect(",")
                self.expect(")")
                last = steps.pop()
                steps.append(Step(last.name, tuple(args)))
            elif self.at("."):
                self.take()
                _, attr = self.take()
                steps.append(Step(attr))
            else:
                break
        return Statement("chain", tuple(steps))


def parse_script(src: str, variables: dict[str, Any] | None = None) -> list[Statement]:
    """Statements of a script; raises JsSyntaxError with a mongosh-like message."""
    parser = _Parser(_tokens(src), dict(variables or {}))
    out: list[Statement] = []
    while parser.peek() is not None:
        if parser.at(";"):
            parser.take()
            continue
        stmt = parser.statement()
        if stmt is not None:
            out.append(stmt)
        if parser.peek() is not None and not parser.at(";"):
            tok = parser.peek()
            # A newline-separated next statement is fine in JS; accept a name right after.
            if tok is not None and tok[0] != "name":
                raise JsSyntaxError(f"Unexpected token ({tok[1]})")
    return out


def to_shell(value: Any, *, legacy: bool = False, indent: int = 0) -> str:
    """Render a value like mongosh (`{ ok: 1 }`) or the legacy shell (`{ "ok" : 1 }`)."""
    pad = "  " * indent if not legacy else "\t" * indent
    if isinstance(value, dict):
        if not value:
            return "{}"
        if legacy:
            inner = ", ".join(f'"{k}" : {to_shell(v, legacy=True)}' for k, v in value.items())
            return "{ " + inner + " }"
        parts = [f"{_key(k)}: {to_shell(v, indent=indent + 1)}" for k, v in value.items()]
        flat = "{ " + ", ".join(parts) + " }"
        if len(flat) <= 72 and "\n" not in flat:
            return flat
        inner_pad = "  " * (indent + 1)
        return "{\n" + ",\n".join(inner_pad + p for p in parts) + "\n" + pad + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        parts = [to_shell(v, legacy=legacy, indent=indent + 1) for v in value]
        flat = "[ " + ", ".join(parts) + " ]"
        if legacy or (len(flat) <= 72 and "\n" not in flat):
            return flat
        inner_pad = "  " * (indent + 1)
        return "[\n" + ",\n".join(inner_pad + p for p in parts) + "\n" + pad + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, str):
        return f'"{value}"' if legacy else "'" + value.replace("'", "\\'") + "'"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z_$][\w$]*", key) else "'" + key + "'"
