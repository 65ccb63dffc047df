"""A small PromQL tokenizer and recogniser, used only to word parse errors as Prometheus does.

`promql-parser` builds the AST we evaluate but reports errors without positions. `diagnose.py`
re-reads a rejected query from these tokens; the lexer follows Prometheus' lexer state by state
(brackets lex durations, letters inside brackets are colons, errors quote exactly what Go
consumed) because its errors are reported verbatim, at the position Prometheus reports them.
"""

from __future__ import annotations

from dataclasses import dataclass

# Token kinds.
IDENT, METRIC_IDENT, NUMBER, STRING, DURATION = "identifier", "metric identifier", "number", "string", "duration"
KEYWORD, OPERATOR, AGGREGATOR, PUNCT, EOF, ERROR = "keyword", "operator", "aggregator", "punct", "eof", "error"

AGGREGATORS = frozenset({"sum", "avg", "count", "min", "max", "group", "stddev", "stdvar", "topk",
                         "bottomk", "count_values", "quantile"})
KEYWORDS = frozenset({"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "offset",
                      "start", "end"})
WORD_OPERATORS = frozenset({"and", "or", "unless", "atan2"})
_SYMBOL_OPERATORS = ("==", "!=", "<=", ">=", "=~", "!~", "+", "-", "*", "/", "%", "^", "<", ">")


@dataclass(frozen=True)
class Token:
    kind: str
    value: str
    pos: int  # byte offset of the token's first character

    def desc(self) -> str:
        """Prometheus' `Item.desc()`: how an unexpected token is named in a message."""
        if self.kind == EOF:
            return "end of input"
        if self.kind == KEYWORD and self.value in ("start", "end"):
            return go_quote(self.value)  # @ preprocessors are not keywords to Item.String()
        if self.kind == KEYWORD:
            return f"<{self.value}>"
        if self.kind == OPERATOR:
            return f"<op:{self.value}>"
        if self.kind == AGGREGATOR:
            return f"<aggr:{self.value}>"
        if self.kind == PUNCT and self.value == "@":
            return '"<Item 57385>" <op:@>'  # AT is an operator without a name in Prometheus 2.42
        if self.kind == PUNCT:
            return go_quote(self.value)
        if self.kind in (IDENT, METRIC_IDENT):
            return f"{self.kind} {go_quote(self.value)}"
        if len(self.value) > 10:
            return f"{self.kind} {go_quote(self.value[:10])}..."
        return f"{self.kind} {go_quote(self.value)}"


def go_quote(text: str) -> str:
    """Go's %q for the characters PromQL queries realistically contain."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _at(q: str, i: int) -> str:
    """The character at i, or Go's utf8.RuneError as the lexer reports end of input."""
    return q[i] if i < len(q) else "\ufffd"


def _rune_quote(ch: str) -> str:
    return "'\\''" if ch == "'" else f"'{ch}'"


def _is_alpha(ch: str) -> bool:
    return ch == "_" or ("a" <= ch <= "z") or ("A" <= ch <= "Z")


def _is_alnum(ch: str) -> bool:
    return _is_alpha(ch) or ch.isdigit()


def _scan_number(q: str, i: int) -> tuple[int, bool]:
    """Prometheus' scanNumber: (end, ok); not ok when a letter follows the digits."""
    digits = "0123456789"
    if q.startswith(("0x", "0X"), i):
        digits, i = "0123456789abcdefABCDEF", i + 2
    while i < len(q) and q[i] in digits:
        i += 1
    if i < len(q) and q[i] == "." and len(digits) == 10:
        i += 1
        while i < len(q) and q[i] in digits:
            i += 1
    if i < len(q) and q[i] in "eE":
        i += 1
        if i < len(q) and q[i] in "+-":
            i += 1
        while i < len(q) and q[i].isdigit():
            i += 1
    if i < len(q) and _is_alnum(q[i]):
        return i, False
    return i, True


def _remaining_duration(q: str, i: int) -> tuple[int, bool]:
    """Prometheus' acceptRemainingDuration from i (just after the digits): (end, ok).

    Mirrors the Go lexer character by character, including its final look at one more
    character, because the error message quotes exactly what it consumed."""
    def at(k: int) -> str:
        return q[k] if k < len(q) else ""

    if not at(i) or at(i) not in "smhdwy":
        return i, False
    i += 1
    if at(i) == "s":
        i += 1
    while at(i) and at(i).isdigit():
        while at(i) and at(i).isdigit():
            i += 1
        if not at(i) or at(i) not in "smhdw":
            return i, False
        i += 1
        if at(i) == "s":
            i += 1
    if at(i) and _is_alnum(at(i)):
        return i + 1, False
    return i, True


def tokenize(q: str) -> list[Token]:
    """Tokens up to the first lexer error (an ERROR token, message in `value`) or EOF."""
    out: list[Token] = []
    i, parens, in_braces, in_brackets, colon = 0, 0, False, False, False

    def error(msg: str, pos: int) -> list[Token]:
        out.append(Token(ERROR, msg, pos))
        return out

    while True:
        while i < len(q) and q[i] in " \t\n\r":
            i += 1
        if i < len(q) and q[i] == "#":
            while i < len(q) and q[i] != "\n":
                i += 1
            continue
        if i >= len(q):
            if in_braces:
                return error("unexpected end of input inside braces", i)
            if in_brackets:
                return error("unclosed left bracket", i)
            if parens:
                return error("unclosed left parenthesis", i)
            out.append(Token(EOF, "", i))
            return out
        ch = q[i]
        if ch in "\"'`":
            j = i + 1
            while j < len(q) and q[j] != ch:
                if q[j] == "\\" and ch != "`":
                    j += 1
                    if j < len(q) and q[j] not in "abfnrtv\\01234567xuU" + ch:
                        return error(f"unknown escape sequence U+{ord(q[j]):04X} {_rune_quote(q[j])}", i)
                elif q[j] == "\n" and ch != "`":
                    break
                j += 1
            if j >= len(q) or q[j] != ch:
                return error("unterminated quoted string" if ch != "`" else "unterminated raw string", i)
            out.append(Token(STRING, q[i:j + 1], i))
            i = j + 1
            continue
        if in_braces:
            if _is_alpha(ch):
                j = i
                while j < len(q) and _is_alnum(q[j]):
                    j += 1
                out.append(Token(IDENT, q[i:j], i))
                i = j
            elif q.startswith(("=~", "!~", "!="), i):
                out.append(Token(OPERATOR, q[i:i + 2], i))
                i += 2
            elif ch == "=":
                out.append(Token(PUNCT, "=", i))
                i += 1
            elif ch in ",}":
                out.append(Token(PUNCT, ch, i))
                in_braces = ch != "}"
                i += 1
            elif ch == "{":
                return error("unexpected left brace '{'", i)
            elif ch == "!":
                return error(f"unexpected character after '!' inside braces: {_rune_quote(_at(q, i + 1))}", i)
            else:
                return error(f"unexpected character inside braces: {_rune_quote(ch)}", i)
            continue
        if ch.isdigit() or (ch == "." and i + 1 < len(q) and q[i + 1].isdigit()):
            end, ok = _scan_number(q, i)
            if ok:
                out.append(Token(NUMBER, q[i:end], i))
                i = end
                continue
            dur, ok = _remaining_duration(q, end)
            if not ok:
                return error(f"bad number or duration syntax: {go_quote(q[i:dur])}", i)
            out.append(Token(DURATION, q[i:dur], i))
            i = dur
            continue
        if in_brackets and (_is_alpha(ch) or ch == ":"):
            # Prometheus' lexer emits any letter inside brackets as the subquery colon.
            if colon:
                return error(f"unexpected colon {_rune_quote(ch)}", i)
            colon = True
            out.append(Token(PUNCT, ":", i))
            i += 1
            continue
        if _is_alpha(ch) or ch == ":":
            j = i
            while j < len(q) and (_is_alnum(q[j]) or q[j] == ":"):
                j += 1
            word = q[i:j]
            low = word.lower()
            if ":" in word:
                kind = METRIC_IDENT
            elif low in ("inf", "nan"):
                kind = NUMBER
            elif low in AGGREGATORS:
                kind = AGGREGATOR
            elif low in KEYWORDS:
                kind = KEYWORD
            elif low in WORD_OPERATORS:
                kind = OPERATOR
            else:
                kind = IDENT
            out.append(Token(kind, word if kind in (IDENT, METRIC_IDENT, NUMBER) else low, i))
            i = j
            continue
        op = next((o for o in _SYMBOL_OPERATORS if q.startswith(o, i)), None)
        if op is not None and op not in ("=~", "!~"):
            out.append(Token(OPERATOR, op, i))
            i += len(op)
            continue
        if ch == "!" or (ch == "=" and q.startswith("=~", i)):
            return error(f"unexpected character after {_rune_quote(ch)}: {_rune_quote(_at(q, i + 1))}", i)
        if ch == "=":
            pass  # EQL outside braces: lexed, then rejected by the grammar
        elif ch == "(":
            parens += 1
        elif ch == ")":
            parens -= 1
            if parens < 0:
                return error("unexpected right parenthesis ')'", i + 1)
        elif ch == "{":
            in_braces = True
        elif ch == "[":
            if in_brackets:
                return error("unexpected left bracket '['", i)
            in_brackets, colon = True, False
        elif ch == "]":
            if not in_brackets:
                return error("unexpected right bracket ']'", i)
            in_brackets = False
        elif ch not in ",@":
            return error(f"unexpected character: {_rune_quote(ch)}", i)
        out.append(Token(PUNCT, ch, i))
        i += 1
        if ch == "[":  # lexDuration: a range must follow, even at the end of the input
            while i < len(q) and q[i] in " \t\n\r":
                i += 1
            end, ok = _scan_number(q, i)
            if ok:
                return error("missing unit character in duration", i)
            dur, ok = _remaining_duration(q, end)
            if not ok:
                return error(f"bad duration syntax: {go_quote(q[i:dur])}", i)
            out.append(Token(DURATION, q[i:dur], i))
            i = dur
