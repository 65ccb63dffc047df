"""The syntax tree the parser builds and the interpreter walks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class ShellSyntaxError(Exception):
    pass


# ------------------------------------------------------------------------------------------- AST
# A word is a tuple of segments: ("lit", text, quoted) | ("var", expr, quoted) |
# ("cmd", source, quoted) | ("arith", expr, quoted).
Segment = tuple[str, str, bool]
Word = tuple[Segment, ...]


@dataclass
class Redirect:
    fd: int  # 0, 1, 2 or -1 for both (&>)
    op: str  # ">", ">>", "<", ">&"
    target: Word | int


@dataclass
class Simple:
    assigns: list[tuple[str, Word]]
    words: list[Word]
    redirects: list[Redirect] = field(default_factory=list)


@dataclass
class Pipeline:
    commands: list[Any]
    negate: bool = False


@dataclass
class AndOr:
    first: Any
    rest: list[tuple[str, Any]]
    line: int = 0  # the source line it starts on


@dataclass
class Sequence:
    items: list[Any]


@dataclass
class Group:
    body: Sequence
    subshell: bool
    redirects: list[Redirect] = field(default_factory=list)


@dataclass
class If:
    branches: list[tuple[Sequence, Sequence]]
    otherwise: Sequence | None
    redirects: list[Redirect] = field(default_factory=list)


@dataclass
class Loop:
    until: bool
    cond: Sequence
    body: Sequence
    redirects: list[Redirect] = field(default_factory=list)


@dataclass
class For:
    var: str
    items: list[Word] | None
    body: Sequence
    redirects: list[Redirect] = field(default_factory=list)


@dataclass
class Case:
    subject: Word
    arms: list[tuple[list[Word], Sequence]]
    redirects: list[Redirect] = field(default_factory=list)
