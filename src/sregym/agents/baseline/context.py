"""What every hypothesis works with: the `Ctx` (session, first-look facts, a cache of read-only
kubectl outputs), the `Finding` it returns, and small helpers over specs, events and the call
graph. Kept apart from the hypotheses so they can live in several small modules.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sregym.agents.baseline import remedies as fix
from sregym.agents.baseline.investigate import Event, Facts, kubectl

if TYPE_CHECKING:
    from sregym.tools.session import ToolSession

IMPACT = "Impact: user requests fail with errors or time out (service unavailable, high latency)."


@dataclass
class Finding:
    roots: list[str]
    mechanism: str
    explanation: str
    fixes: list[fix.Command]
    affected: list[str] = field(default_factory=list)
    strong: bool = True  # specific evidence (events, explicit logs) rather than a weak guess


class Ctx:
    """The session, the first-look facts and a cache of read-only kubectl outputs."""

    def __init__(self, session: ToolSession, facts: Facts) -> None:
        self.session = session
        self.facts = facts
        self.ns = facts.namespace
        self._cache: dict[str, str] = {}

    def get(self, command: str) -> str:
        if command not in self._cache:
            self._cache[command] = kubectl(self.session, command)
        return self._cache[command]

    def json(self, command: str) -> dict:
        try:
            return json.loads(self.get(command + " -o json") or "{}")
        except ValueError:
            return {}

    def deployment(self, name: str) -> dict:
        return self.json(f"get deployment {name} -n {self.ns}")

    def dep(self, name: str) -> str:
        return f"{self.ns}/Deployment/{name}"

    def obj(self, kind: str, name: str) -> str:
        return f"{self.ns}/{kind}/{name}"


def pod_spec(dep: dict) -> dict:
    return ((dep.get("spec") or {}).get("template") or {}).get("spec") or {}


def containers(dep: dict) -> list[dict]:
    return pod_spec(dep).get("containers") or []


def events_like(ctx: Ctx, *needles: str) -> list[Event]:
    """Warning events whose message contains, or whose reason equals, one of the needles."""
    return [e for e in ctx.facts.events if any(n in e.message or n == e.reason for n in needles)]


def workloads_of_events(ctx: Ctx, events: list[Event]) -> list[str]:
    names = {ctx.facts.owner(e.obj.split("/", 1)[-1]) for e in events}
    return sorted(n for n in names if n)


def callers(ctx: Ctx, names: list[str]) -> list[str]:
    """Failing workloads upstream of `names` in the call graph (the cascade)."""
    failing = set(ctx.facts.failing_services())
    out: list[str] = []
    frontier = list(names)
    while frontier:
        callee = frontier.pop()
        for p, c in ctx.facts.edges:
            if c == callee and p in failing and ctx.dep(p) not in out and p not in names:
                out.append(ctx.dep(p))
                frontier.append(p)
    return out


def columns(line: str, n: int) -> list[str]:
    """The first `n` tab-separated fields of a jsonpath row, padded with empty strings."""
    fields = line.split("\t")
    return [*fields, *[""] * n][:n]


def load_json(text: str) -> object:
    try:
        return json.loads(text) if text.strip() else None
    except ValueError:
        return None


__all__ = ["IMPACT", "Ctx", "Finding", "callers", "columns", "containers", "events_like", "load_json", "pod_spec",
           "workloads_of_events"]
