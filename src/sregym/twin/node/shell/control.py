"""Control flow that unwinds the interpreter: `exit`/`return` and `break`/`continue`."""

from __future__ import annotations


class Exit(Exception):
    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class LoopControl(Exception):
    def __init__(self, kind: str, levels: int = 1) -> None:
        super().__init__(kind)
        self.kind = kind
        self.levels = levels
