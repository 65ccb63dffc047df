"""The first syntax error of a malformed JSON document, in Go encoding/json's words.

The API server's decoders are Go's, so a client that sends `{bad` reads `invalid character 'b'
looking for beginning of object key string` or `unexpected end of JSON input`, never Python's
`Expecting property name enclosed in double quotes`. This is a small scanner over the same grammar
that only names what is wrong; the document itself is decoded by `json`.
"""

from __future__ import annotations

import json

_SPACE = b" \t\r\n"
_ESCAPES = b'"\\/bfnrtu'
_HEX = b"0123456789abcdefABCDEF"
_DIGITS = b"0123456789"


class _Stop(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def quote_char(c: int) -> str:
    """Go's quoteChar: `'b'`, `'\\''`, `'"'`, `'\\n'`, `'\\x01'`."""
    if c == ord("'"):
        return "'\\''"
    if c == ord('"'):
        return "'\"'"
    text = json.dumps(chr(c))[1:-1] if c < 0x20 or c == 0x7F else chr(c)
    if c < 0x20 and text.startswith("\\u"):
        text = f"\\x{c:02x}"
    return f"'{text}'"


def syntax_error(raw: bytes) -> str:
    """Go's message for the first problem in `raw` ("" if it is valid JSON)."""
    scanner = _Scanner(raw)
    try:
        scanner.value()
        scanner.space()
        if scanner.i < len(raw):
            scanner.fail("after top-level value")
    except _Stop as stop:
        return stop.message
    return ""


class _Scanner:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.i = 0

    def peek(self) -> int:
        if self.i >= len(self.data):
            raise _Stop("unexpected end of JSON input")
        return self.data[self.i]

    def fail(self, context: str) -> None:
        raise _Stop(f"invalid character {quote_char(self.data[self.i])} {context}")

    def space(self) -> None:
        while self.i < len(self.data) and self.data[self.i] in _SPACE:
            self.i += 1

    def value(self) -> None:
        self.space()
        c = self.peek()
        if c == ord("{"):
            self.obj()
        elif c == ord("["):
            self.array()
        elif c == ord('"'):
            self.string()
        elif c == ord("-") or c in _DIGITS:
            self.number()
        elif c in b"tfn":
            self.literal({ord("t"): b"true", ord("f"): b"false", ord("n"): b"null"}[c])
        else:
            self.fail("looking for beginning of value")

    def obj(self) -> None:
        self.i += 1
        self.space()
        if self.peek() == ord("}"):
            self.i += 1
            return
        while True:
            self.space()
            if self.peek() != ord('"'):
                self.fail("looking for beginning of object key string")
            self.string()
            self.space()
            if self.peek() != ord(":"):
                self.fail("after object key")
            self.i += 1
            self.value()
            self.space()
            c = self.peek()
            if c == ord("}"):
                self.i += 1
                return
            if c != ord(","):
                self.fail("after object key:value pair")
            self.i += 1

    def array(self) -> None:
        self.i += 1
        self.space()
        if self.peek() == ord("]"):
            self.i += 1
            return
        while True:
            self.value()
            self.space()
            c = self.peek()
            if c == ord("]"):
                self.i += 1
                return
            if c != ord(","):
                self.fail("after array element")
            self.i += 1

    def string(self) -> None:
        self.i += 1
        while True:
            c = self.peek()
            if c == ord('"'):
                self.i += 1
                return
            if c < 0x20:
                self.fail("in string literal")
            if c == ord("\\"):
                self.i += 1
                e = self.peek()
                if e not in _ESCAPES:
                    self.fail("in string escape code")
                if e == ord("u"):
                    for _ in range(4):
                        self.i += 1
                        if self.peek() not in _HEX:
                            self.fail("in \\u hexadecimal character escape")
            self.i += 1

    def number(self) -> None:
        if self.peek() == ord("-"):
            self.i += 1
            if self.peek() not in _DIGITS:
                self.fail("in numeric literal")
        if self.peek() == ord("0"):
            self.i += 1
        else:
            self.digits()
        if self.i < len(self.data) and self.data[self.i] == ord("."):
            self.i += 1
            if self.peek() not in _DIGITS:
                self.fail("after decimal point in numeric literal")
            self.digits()
        if self.i < len(self.data) and self.data[self.i] in b"eE":
            self.i += 1
            if self.peek() in b"+-":
                self.i += 1
            if self.peek() not in _DIGITS:
                self.fail("in exponent of numeric literal")
            self.digits()

    def digits(self) -> None:
        while self.i < len(self.data) and self.data[self.i] in _DIGITS:
            self.i += 1

    def literal(self, word: bytes) -> None:
        for expected in word:
            if self.peek() != expected:
                self.fail(f"in literal {word.decode()} (expecting {quote_char(expected)})")
            self.i += 1


__all__ = ["quote_char", "syntax_error"]
