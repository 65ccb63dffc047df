"""Response bodies a program's own handlers write, registered by the app that ships the program.

The fluid model decides *whether* an HTTP request succeeds (the operation's current outcome);
what the body of a success or a failure looks like is the application's business: a Next.js
frontend answers `/api/products` with the catalogue as JSON and a thrown error with its own
`Internal Server Error`. An app registers a `PageFn` under its program's name; `http.answer`
asks it before falling back to the generic bodies. The twin never imports apps: the app pushes
its pages here, as it pushes its programs (`spec.register_program`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class PageRequest:
    """One request as the handler sees it. `ok` is the fluid model's verdict for the operation
    this request maps to (False: a backend the handler needs failed, `error` says how); `twin`
    and `rng` give handlers state and seeded randomness (never `random`)."""

    method: str
    path: str
    query: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    body: str | None = None
    ok: bool = True
    error: str = ""
    twin: Any = None
    rng: Any = None


@dataclass(frozen=True)
class Page:
    """What the handler answers. `stall` means it never answers (a Next.js handler that sets a
    status without sending): the client waits until its own timeout. `delay_ms` is time spent
    beyond the operation's latency (a proxy waiting out its route timeout)."""

    status: int = 200
    body: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    stall: bool = False
    delay_ms: float = 0.0


PageFn = Callable[[PageRequest], Page | None]
_PAGES: dict[str, PageFn] = {}


def register_pages(program: str, fn: PageFn) -> PageFn:
    """Let `program` (a ProgramSpec name) answer its own HTTP requests; None from `fn` means
    "not mine", and the generic answer applies."""
    _PAGES[program] = fn
    return fn


def pages_for(program: str) -> PageFn | None:
    return _PAGES.get(program)


__all__ = ["Page", "PageFn", "PageRequest", "pages_for", "register_pages"]
