"""Feature flags a Locust user reads while it runs (the Astronomy Shop's `loadGeneratorFloodHomepage`).

Why: the demo's locustfile evaluates a flag inside a task and repeats requests that many times
(`for _ in range(0, get_flagd_value("loadGeneratorFloodHomepage")): self.client.get("/")`), so
the load it offers depends on flagd at run time. Its `get_flagd_value` is an OpenFeature client
on the OFREP provider at `http://$FLAGD_HOST:$FLAGD_OFREP_PORT` (defaults `localhost`, 8016)
asking `get_integer_value(name, 0)`: when flagd cannot be reached, or the flag is missing,
disabled or not an integer, the SDK answers the default 0 and the task sends nothing.

The locustfile is parsed, never run: a task whose body calls `get_flagd_value("NAME")` has its
requests repeated by the flag's value each time a user picks it (`task_flag`); `LocustFlags`
resolves the value once per tick through the load generator's own network path (DNS, Service,
endpoints, policy, chaos) to the flagd process behind it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from sregym.twin.dataplane.flag_client import resolve

FLAG_CALL = "get_flagd_value"
DEFAULT_HOST = "localhost"
DEFAULT_OFREP_PORT = 8016


def task_flag(fn: ast.FunctionDef) -> str | None:
    """The flag a task body reads with `get_flagd_value("NAME")`, or None."""
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == FLAG_CALL \
                and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            return node.args[0].value
    return None


@dataclass
class LocustFlags:
    """Where the generator's OFREP client reaches flagd (its container's env)."""

    host: str = DEFAULT_HOST
    port: int = DEFAULT_OFREP_PORT

    @classmethod
    def from_env(cls, env: dict[str, str]) -> LocustFlags:
        try:
            port = int(env.get("FLAGD_OFREP_PORT", str(DEFAULT_OFREP_PORT)))
        except ValueError:
            port = DEFAULT_OFREP_PORT
        return cls(host=env.get("FLAGD_HOST", DEFAULT_HOST) or DEFAULT_HOST, port=port)

    def value(self, twin: Any, pod: dict[str, Any] | None, name: str) -> int:
        """`get_integer_value(name, 0)` as the generator's SDK answers it now."""
        engine = twin.services.dataplane
        if engine is None:
            return 0
        flags = _flagd_flags(engine, pod, self.host, self.port)
        text, error = resolve(flags, name, "0")
        if error is not None:
            return 0
        try:
            return max(0, int(float(text)))
        except ValueError:
            return 0


def _flagd_flags(engine: Any, pod: dict[str, Any] | None, host: str, port: int) -> dict[str, Any] | None:
    """The flags of the flagd process a connection to host:port lands on (None: unreachable)."""
    route = engine.route(pod, host, port, connect_timeout_ms=500.0)
    for leg in route.legs:
        if not leg.result.ok:
            continue
        for state in engine.flags.flagd.states.values():
            proc = engine.proc_at(leg.result.dst_ip, state.inst.port)
            if proc is not None and proc.inst is state.inst:
                return state.flags
    return None


__all__ = ["FLAG_CALL", "LocustFlags", "task_flag"]
