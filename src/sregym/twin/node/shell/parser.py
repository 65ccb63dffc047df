"""The recursive-descent parser from tokens to the syntax tree, with a parse cache."""

from __future__ import annotations

import re
from typing import Any

from sregym.twin.node.shell.lexer import NAME, Token, tokenize
from sregym.twin.node.shell.limits import PARSE_CACHE_MAX_SOURCE
from sregym.twin.node.shell.syntax import (
    AndOr,
    Case,
    For,
    Group,
    If,
    Loop,
    Pipeline,
    Redirect,
    Sequence,
    ShellSyntaxError,
    Simple,
    Word,
)

_RESERVED = {"if", "then", "elif", "else", "fi", "while", "until", "do", "done", "for", "in",
             "case", "esac", "{", "}", "!"}



def _plain(word: Word) -> str | None:
    """The word's text when it is one unquoted literal (for reserved words and names)."""
    if len(word) == 1 and word[0][0] == "lit" and not word[0][2]:
        return word[0][1]
    return None


class _Parser:
    def __init__(self, toks: list[Token]) -> None:
        self.toks = toks
        self.i = 0

    def peek(self) -> Token | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def peek_reserved(self) -> str | None:
        tok = self.peek()
        if tok is not None and tok.kind == "word":
            text = _plain(tok.value)
            if text in _RESERVED:
                return text
        return None

    def is_op(self, *ops: str) -> bool:
        tok = self.peek()
        return tok is not None and tok.kind == "op" and tok.value in ops

    def expect_op(self, op: str) -> None:
        if not self.is_op(op):
            raise ShellSyntaxError(f'syntax error: unexpected {self._describe()} (expecting "{op}")')
        self.i += 1

    def expect_reserved(self, word: str) -> None:
        self.skip_newlines()
        if self.peek_reserved() != word:
            raise ShellSyntaxError(f'syntax error: unexpected {self._describe()} (expecting "{word}")')
        self.i += 1

    def _describe(self) -> str:
        tok = self.peek()
        if tok is None:
            return "end of file"
        if tok.kind == "op":
            return "newline" if tok.value == "\n" else f'"{tok.value}"'
        return f'word "{tok.raw}"'

    def skip_newlines(self) -> None:
        while self.is_op("\n"):
            self.i += 1

    def parse_program(self) -> Sequence:
        seq = self.parse_sequence(())
        if self.peek() is not None:
            raise ShellSyntaxError(f"syntax error: unexpected {self._describe()}")
        return seq

    def parse_sequence(self, terminators: tuple[str, ...]) -> Sequence:
        items: list[Any] = []
        while True:
            while self.is_op("\n", ";", "&"):
                self.i += 1
            tok = self.peek()
            if tok is None or self.is_op(")", ";;"):
                break
            if self.peek_reserved() in terminators:
                break
            items.append(self.parse_and_or())
            if not self.is_op("\n", ";", "&"):
                break
        return Sequence(items)

    def parse_and_or(self) -> AndOr:
        start = self.peek()
        first = self.parse_pipeline()
        rest: list[tuple[str, Any]] = []
        while self.is_op("&&", "||"):
            op = self.peek().value  # type: ignore[union-attr]
            self.i += 1
            self.skip_newlines()
            rest.append((op, self.parse_pipeline()))
        return AndOr(first, rest, start.line if start is not None else 0)

    def parse_pipeline(self) -> Pipeline:
        negate = False
        if self.peek_reserved() == "!":
            negate = True
            self.i += 1
        cmds = [self.parse_command()]
        while self.is_op("|"):
            self.i += 1
            self.skip_newlines()
            cmds.append(self.parse_command())
        return Pipeline(cmds, negate)

    def parse_command(self) -> Any:
        word = self.peek_reserved()
        if word == "if":
            node: Any = self.parse_if()
        elif word in ("while", "until"):
            self.i += 1
            cond = self.parse_sequence(("do",))
            self.expect_reserved("do")
            body = self.parse_sequence(("done",))
            self.expect_reserved("done")
            node = Loop(word == "until", cond, body)
        elif word == "for":
            node = self.parse_for()
        elif word == "case":
            node = self.parse_case()
        elif word == "{":
            self.i += 1
            body = self.parse_sequence(("}",))
            self.expect_reserved("}")
            node = Group(body, subshell=False)
        elif self.is_op("("):
            self.i += 1
            body = self.parse_sequence(())
            self.expect_op(")")
            node = Group(body, subshell=True)
        elif word is not None and word not in ("!",):
            raise ShellSyntaxError(f'syntax error: unexpected "{word}"')
        else:
            return self.parse_simple()
        node.redirects = self.parse_redirects()
        return node

    def parse_if(self) -> If:
        self.i += 1
        branches = []
        cond = self.parse_sequence(("then",))
        self.expect_reserved("then")
        body = self.parse_sequence(("elif", "else", "fi"))
        branches.append((cond, body))
        otherwise = None
        while True:
            self.skip_newlines()
            word = self.peek_reserved()
            if word == "elif":
                self.i += 1
                cond = self.parse_sequence(("then",))
                self.expect_reserved("then")
                body = self.parse_sequence(("elif", "else", "fi"))
                branches.append((cond, body))
            elif word == "else":
                self.i += 1
                otherwise = self.parse_sequence(("fi",))
            else:
                break
        self.expect_reserved("fi")
        return If(branches, otherwise)

    def parse_for(self) -> For:
        self.i += 1
        tok = self.peek()
        if tok is None or tok.kind != "word" or not NAME.fullmatch(_plain(tok.value) or ""):
            raise ShellSyntaxError("syntax error: bad for loop variable")
        var = _plain(tok.value) or ""
        self.i += 1
        self.skip_newlines()
        items: list[Word] | None = None
        if self.peek_reserved() == "in":
            self.i += 1
            items = []
            while True:
                tok = self.peek()
                if tok is None or tok.kind != "word":
                    break
                items.append(tok.value)
                self.i += 1
        while self.is_op(";", "\n"):
            self.i += 1
        self.expect_reserved("do")
        body = self.parse_sequence(("done",))
        self.expect_reserved("done")
        return For(var, items, body)

    def parse_case(self) -> Case:
        self.i += 1
        tok = self.peek()
        if tok is None or tok.kind != "word":
            raise ShellSyntaxError("syntax error: bad case subject")
        subject = tok.value
        self.i += 1
        self.expect_reserved("in")
        arms: list[tuple[list[Word], Sequence]] = []
        while True:
            self.skip_newlines()
            if self.peek_reserved() == "esac":
                self.i += 1
                break
            if self.is_op("("):
                self.i += 1
            patterns: list[Word] = []
            while True:
                tok = self.peek()
                if tok is None or tok.kind != "word":
                    raise ShellSyntaxError("syntax error: bad case pattern")
                patterns.append(tok.value)
                self.i += 1
                if self.is_op("|"):
                    self.i += 1
                    continue
                break
            self.expect_op(")")
            body = self.parse_sequence(("esac",))
            arms.append((patterns, body))
            if self.is_op(";;"):
                self.i += 1
        return Case(subject, arms)

    def parse_redirects(self) -> list[Redirect]:
        out: list[Redirect] = []
        while True:
            red = self._redirect()
            if red is None:
                return out
            out.append(red)

    def _redirect(self) -> Redirect | None:
        tok = self.peek()
        if tok is None:
            return None
        if tok.kind == "io":
            fd, op = tok.value
        elif tok.kind == "op" and tok.value in (">", ">>", "<", ">&", "&>", "<&", "<<", "<<-", "<<<"):
            op = tok.value
            fd = 0 if op in ("<", "<&", "<<", "<<-", "<<<") else (-1 if op == "&>" else 1)
            op = {"&>": ">", "<<-": "<<"}.get(op, op)
        else:
            return None
        self.i += 1
        target_tok = self.peek()
        if target_tok is None or target_tok.kind != "word":
            raise ShellSyntaxError(f"syntax error: unexpected {self._describe()}")
        self.i += 1
        if op in (">&", "<&"):
            text = _plain(target_tok.value) or ""
            if text.isdigit():
                return Redirect(fd, ">&", int(text))
            if op == ">&":  # `>& file` means both streams to file
                return Redirect(-1, ">", target_tok.value)
        return Redirect(fd, op, target_tok.value)

    def parse_simple(self) -> Simple:
        assigns: list[tuple[str, Word]] = []
        words: list[Word] = []
        redirects: list[Redirect] = []
        while True:
            red = self._redirect()
            if red is not None:
                redirects.append(red)
                continue
            tok = self.peek()
            if tok is None or tok.kind != "word":
                break
            if words and self.peek_reserved() in ("}",) and False:
                break
            if not words:
                first = tok.value[0] if tok.value else None
                if first and first[0] == "lit" and not first[2]:
                    m = re.match(r"([A-Za-z_][A-Za-z0-9_]*)=", first[1])
                    if m:
                        rest_lit = first[1][m.end():]
                        value: Word = ((("lit", rest_lit, False),) if rest_lit else ()) + tok.value[1:]
                        assigns.append((m.group(1), value))
                        self.i += 1
                        continue
            words.append(tok.value)
            self.i += 1
        if not words and not assigns and not redirects:
            raise ShellSyntaxError(f"syntax error: unexpected {self._describe()}")
        return Simple(assigns, words, redirects)


_PARSE_CACHE: dict[str, Sequence] = {}


def parse(source: str) -> Sequence:
    """Parse a script (cached: the same command line is parsed once per run)."""
    tree = _PARSE_CACHE.get(source)
    if tree is None:
        tree = _Parser(tokenize(source)).parse_program()
        if len(_PARSE_CACHE) < 4096 and len(source) <= PARSE_CACHE_MAX_SOURCE:
            _PARSE_CACHE[source] = tree
    return tree
