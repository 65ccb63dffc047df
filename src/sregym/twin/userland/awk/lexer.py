"""awk's tokens. A `/` starts a regex literal unless the previous token ends an operand
(then it divides), which is how every awk lexer decides."""

from __future__ import annotations

from dataclasses import dataclass

KEYWORDS = {
    "BEGIN", "END", "function", "func", "if", "else", "while", "for", "do", "break",
    "continue", "next", "nextfile", "exit", "return", "delete", "in", "getline", "print",
    "printf",
}
BUILTINS = {
    "length", "substr", "index", "split", "sub", "gsub", "match", "sprintf", "sin", "cos",
    "atan2", "exp", "log", "sqrt", "int", "rand", "srand", "tolower", "toupper", "system",
    "close", "fflush",
}
# Longest first, so that `**=` wins over `**` and `*`.
PUNCT = sorted([
    "{", "}", "(", ")", "[", "]", ";", ",", "+", "-", "*", "/", "%", "^", "!", ">", "<", "|",
    "?", ":", "~", "$", "=", "+=", "-=", "*=", "/=", "%=", "^=", "==", "<=", ">=", "!=", "++",
    "--", "&&", "||", ">>", "!~", "**", "**=",
], key=len, reverse=True)
_OPERAND_END = {"NAME", "NUMBER", "STRING", "ERE", "BUILTIN", ")", "]", "$", "++", "--"}
ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "/": "/", "a": "\a",
           "b": "\b", "f": "\f", "v": "\v"}


class AwkSyntaxError(Exception):
    """A compile-time error; `text` is what mawk prints after `mawk: `."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


@dataclass
class Token:
    kind: str  # NAME, FUNC_NAME, BUILTIN, NUMBER, STRING, ERE, NEWLINE, EOF, a keyword or punct
    value: object
    line: int
    text: str


def unescape(body: str) -> str:
    """A string literal's (or `-v` value's) escapes: \\n \\t \\" \\\\ \\/ and octal \\ddd."""
    out, i = [], 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt in ESCAPES:
                out.append(ESCAPES[nxt])
                i += 2
                continue
            if nxt in "01234567":
                j = i + 1
                while j < len(body) and j < i + 4 and body[j] in "01234567":
                    j += 1
                out.append(chr(int(body[i + 1:j], 8)))
                i = j
                continue
            out.append("\\" + nxt)
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def tokenize(src: str) -> list[Token]:
    tokens: list[Token] = []
    i, line, n = 0, 1, len(src)
    while i < n:
        ch = src[i]
        if ch in " \t\r":
            i += 1
            continue
        if ch == "\\" and i + 1 < n and src[i + 1] == "\n":
            i += 2
            line += 1
            continue
        if ch == "#":
            while i < n and src[i] != "\n":
                i += 1
            continue
        if ch == "\n":
            tokens.append(Token("NEWLINE", None, line, "end of line"))
            line += 1
            i += 1
            continue
        if ch == '"':
            j = i + 1
            while j < n and src[j] != '"':
                if src[j] == "\n":
                    break
                j += 2 if src[j] == "\\" else 1
            if j >= n or src[j] != '"':
                raise AwkSyntaxError(f'line {line}: runaway string constant "{src[i + 1:j][:10]} ...')
            tokens.append(Token("STRING", unescape(src[i + 1:j]), line, src[i:j + 1]))
            i = j + 1
            continue
        if ch == "/" and (not tokens or tokens[-1].kind not in _OPERAND_END):
            j = i + 1
            in_bracket = False
            while j < n and (src[j] != "/" or in_bracket) and src[j] != "\n":
                if src[j] == "\\":
                    j += 2
                    continue
                if src[j] == "[" and not in_bracket:
                    in_bracket = True
                    if j + 1 < n and src[j + 1] == "]":
                        j += 1
                elif src[j] == "]":
                    in_bracket = False
                j += 1
            if j >= n or src[j] != "/":
                raise AwkSyntaxError(f"line {line}: runaway regular expression {src[i:j][:10]} ...")
            tokens.append(Token("ERE", src[i + 1:j].replace("\\/", "/"), line, src[i:j + 1]))
            i = j + 1
            continue
        if ch.isdigit() or (ch == "." and i + 1 < n and src[i + 1].isdigit()):
            j = i
            if src.startswith(("0x", "0X"), i) and i + 2 < n and src[i + 2] in "0123456789abcdefABCDEF":
                j = i + 2
                while j < n and src[j] in "0123456789abcdefABCDEF":
                    j += 1
                tokens.append(Token("NUMBER", float(int(src[i + 2:j], 16)), line, src[i:j]))
                i = j
                continue
            while j < n and src[j].isdigit():
                j += 1
            if j < n and src[j] == ".":
                j += 1
                while j < n and src[j].isdigit():
                    j += 1
            if j < n and src[j] in "eE":
                k = j + 1
                if k < n and src[k] in "+-":
                    k += 1
                if k < n and src[k].isdigit():
                    while k < n and src[k].isdigit():
                        k += 1
                    j = k
            tokens.append(Token("NUMBER", float(src[i:j]), line, src[i:j]))
            i = j
            continue
        if ch.isalpha() or ch == "_":
            j = i
            while j < n and (src[j].isalnum() or src[j] == "_"):
                j += 1
            word = src[i:j]
            if word in KEYWORDS:
                kind = "function" if word == "func" else word
            elif word in BUILTINS:
                kind = "BUILTIN"
            elif j < n and src[j] == "(":
                kind = "FUNC_NAME"
            else:
                kind = "NAME"
            tokens.append(Token(kind, word, line, word))
            i = j
            continue
        for punct in PUNCT:
            if src.startswith(punct, i):
                tokens.append(Token(punct, punct, line, punct))
                i += len(punct)
                break
        else:
            raise AwkSyntaxError(f"line {line}: syntax error at or near {ch}")
    tokens.append(Token("EOF", None, line, "end of file"))
    return tokens
