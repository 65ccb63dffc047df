"""The agent plug-in point: a class with a `name` and a `run(session, brief)` method.

An agent is handed a `ToolSession` (the tool catalogue of one attempt) and the `Brief` (the
on-call page) — never the problem, its ground truth or an admin credential — and acts only by
calling tools. It returns when it is finished; the conductor scores what it did.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

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

    def __init__(self, **options: Any) -> None:
        self.options = dict(options)

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


__all__ = ["Agent"]
