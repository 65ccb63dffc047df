"""What an agent may be given besides the brief, and the typed objects that carry it.

An agent declares its `capabilities`; the conductor hands it exactly the objects those entitle
it to (`Conductor.grants`, `Conductor.run_agent`) and nothing else:

- `TOOLS`: the attempt's `ToolSession` (every agent gets it as `run`'s first argument);
- `SHELL`: a `ShellAccess` — the agent kubeconfig, the query API URLs and the agent token, what
  an on-call engineer's laptop holds — for agents that run external programs;
- `GOLD`: `GoldHooks` to the problem's reference solution, only for the self-test `gold` agent.

An agent that does not declare a capability cannot receive its object (`Agent.grant` refuses,
and the conductor never builds it), so the reach of an agent is visible in its class.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

if TYPE_CHECKING:
    from sregym.env.models import Brief
    from sregym.tools.session import ToolSession


class Capability(Enum):
    """One kind of access an agent can declare."""

    TOOLS = "tools"
    SHELL = "shell"
    GOLD = "gold"


@dataclass(frozen=True)
class ShellAccess:
    """The attempt as a shell sees it: credentials and endpoints with the agent's token only.

    `poll()` enforces the limits without a tool call (a shell agent acts through kubectl
    directly) and says whether the attempt is over; `record_program(phase, args, observation,
    is_error)` appends the program's own run to the trajectory."""

    kubeconfig: Path | None
    urls: Mapping[str, str]
    token: str
    clock: str
    poll: Callable[[], bool]
    record_program: Callable[[str, dict[str, Any], str, bool], None]


@dataclass(frozen=True)
class GoldHooks:
    """The problem's reference solution: `commands()` as kubectl command lines, `diagnosis()` as
    `submit_diagnosis` arguments written from the ground truth, `detection()` as
    `submit_detection` arguments (None where an attempt has no detection answer to give)."""

    commands: Callable[[], list[str]]
    diagnosis: Callable[[], dict[str, Any]]
    detection: Callable[[], dict[str, Any]] | None = None


@dataclass(frozen=True)
class Grants:
    """What an agent was handed for one attempt besides its session and brief."""

    shell: ShellAccess | None = field(default=None)
    gold: GoldHooks | None = field(default=None)

    def capabilities(self) -> frozenset[Capability]:
        """The capabilities these grants exercise (TOOLS is implied)."""
        held = {Capability.TOOLS}
        if self.shell is not None:
            held.add(Capability.SHELL)
        if self.gold is not None:
            held.add(Capability.GOLD)
        return frozenset(held)


class Grantee(Protocol):
    """What the conductor needs of an agent to run it (`sregym.agents.Agent` is one)."""

    capabilities: ClassVar[frozenset[Capability]]

    def grant(self, grants: Grants) -> None: ...

    def run(self, session: ToolSession, brief: Brief) -> None: ...


__all__ = ["Capability", "GoldHooks", "Grantee", "Grants", "ShellAccess"]
