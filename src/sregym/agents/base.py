"""The agent plug-in point: a class with a `name` and a `run(session, brief)` method.

An agent is handed a `ToolSession` (the tool catalogue of one attempt) and the `Brief` (the
on-call page) — never the problem, its ground truth or an admin credential — and acts only by
calling tools. It returns when it is finished; the conductor scores what it did.

An agent that needs more declares it in `capabilities` and finds it in `self.shell` (SHELL: the
kubeconfig, URLs and token an external program works with) or `self.gold` (GOLD: the reference
solution, for the self-test agent only). The conductor grants exactly what the class declares
(`Conductor.run_agent`), and `grant` refuses anything more.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from sregym.env.capabilities import Capability, GoldHooks, Grants, ShellAccess

if TYPE_CHECKING:
    from sregym.env.models import Brief
    from sregym.tools.session import ToolSession


class Agent:
    """Base class for agents. Options (`--model`, `--base-url`, ...) arrive as keyword
    arguments and are kept in `self.options`."""

    name: ClassVar[str] = ""
    # The options the agent accepts, with their defaults: the command line refuses any other
    # (an agent that declares none takes none), so a typo fails before the first attempt.
    known_options: ClassVar[dict[str, Any]] = {}
    # The sregym extras the agent imports through `sregym.extras.require` (`sregym list agents`
    # shows them, so a user learns what to install before a run fails).
    extras: ClassVar[tuple[str, ...]] = ()
    # What the agent is given besides its session and brief (see `sregym.env.capabilities`).
    capabilities: ClassVar[frozenset[Capability]] = frozenset({Capability.TOOLS})
    # How `sregym snapshot run` drives it offline: a driver name of `sregym.snapshot.driver`
    # (noop, baseline, command, react), or None for an agent that only works on a live attempt.
    offline_driver: ClassVar[str | None] = None

    _grants: Grants = Grants()

    def __init__(self, **options: Any) -> None:
        self.options = dict(options)

    def grant(self, grants: Grants) -> None:
        """Receive what the conductor hands this agent for the next attempt. Grants beyond the
        declared `capabilities` are refused, so an agent cannot be given gold hooks or shell
        access its class does not declare."""
        extra = grants.capabilities() - self.capabilities
        if extra:
            names = ", ".join(sorted(c.name for c in extra))
            raise PermissionError(f"the {self.name or type(self).__name__} agent does not declare {names}")
        self._grants = grants

    @property
    def shell(self) -> ShellAccess:
        """The attempt's shell access (agents that declare SHELL)."""
        return self._granted(self._grants.shell, Capability.SHELL)

    @property
    def gold(self) -> GoldHooks:
        """The problem's reference solution (the self-test agent, which declares GOLD)."""
        return self._granted(self._grants.gold, Capability.GOLD)

    def _granted(self, value: Any, capability: Capability) -> Any:
        if value is None:
            why = ("does not declare it" if capability not in self.capabilities
                   else "was not granted it for this attempt (run it with Conductor.run_agent)")
            raise PermissionError(f"no {capability.name} access: the {self.name or type(self).__name__} agent {why}")
        return value

    @property
    def model(self) -> str | None:
        """The model this agent uses, when it has one (reported with each result)."""
        value = self.options.get("model")
        return str(value) if value else None

    def preflight(self) -> None:
        """Checks made once, before a run's first attempt, of what would otherwise fail every
        attempt the same way (a model endpoint that does not answer, a program that is not
        installed). Raise `sregym.errors.SetupError` with what is wrong and what to do; the run
        then stops at once with that line instead of recording a failure per attempt."""

    def run(self, session: ToolSession, brief: Brief) -> None:
        raise NotImplementedError


__all__ = ["Agent", "Capability"]
