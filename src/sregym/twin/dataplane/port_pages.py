"""HTTP handlers for ports a process opens besides its main one (Envoy's admin interface, Locust's
web UI): a program yields `Listen(port, handler="<name>")` and whoever implements that interface
registers `<name>` here; `http.answer` asks it for requests to that port. None means "not
mine" (the generic answer applies)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sregym.twin.dataplane.pages import Page, PageRequest

PortFn = Callable[[Any, tuple[Any, Any, Any], PageRequest], Page | None]
_HANDLERS: dict[str, PortFn] = {}


def register_port_handler(name: str, fn: PortFn) -> PortFn:
    _HANDLERS[name] = fn
    return fn


def port_answer(engine: Any, found: tuple[Any, Any, Any], request: PageRequest) -> Page | None:
    """The registered handler's answer for a request to `found` (runtime, instance, Listen)."""
    name = getattr(found[2], "handler", "")
    fn = _HANDLERS.get(name) or (_HANDLERS.get(name.split(":", 1)[1]) if ":" in name else None)
    return fn(engine, found, request) if fn is not None else None


__all__ = ["PortFn", "port_answer", "register_port_handler"]
