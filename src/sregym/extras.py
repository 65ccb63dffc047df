"""Optional dependencies: one place that says which extra brings which package.

sregym's base install runs the main job (a suite on the twin with a built-in agent). Features
that need a heavy or third-party SDK live in extras (`pip install 'sregym[llm]'` ...). A feature
asks for its package through `require()`, so a missing one is one line naming the exact install
command — a `MissingExtra`, which the CLI prints without a traceback and the runner records as an
environment failure — never a bare `ModuleNotFoundError` from deep inside an attempt.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from sregym.errors import SetupError

# extra -> the import names it provides (the table the import-closure test reads too).
EXTRAS: dict[str, tuple[str, ...]] = {
    "llm": ("openai",),
    "mcp": ("mcp",),
    "kube": ("kubernetes",),
    "report": ("matplotlib",),
    "ray": ("ray",),
}


class MissingExtra(SetupError):
    """A feature's optional dependency is not installed."""

    def __init__(self, module: str, extra: str, feature: str) -> None:
        self.module = module
        self.extra = extra
        self.feature = feature
        super().__init__(f"{feature} needs the '{module}' package, which is not installed: "
                         f"pip install 'sregym[{extra}]'")


def extra_of(module: str) -> str:
    """The extra that provides top-level import `module` (KeyError if none does)."""
    top = module.split(".", 1)[0]
    for extra, modules in EXTRAS.items():
        if top in modules:
            return extra
    raise KeyError(f"no sregym extra provides {module!r}")


def require(module: str, feature: str) -> ModuleType:
    """Import `module` or raise `MissingExtra` naming the extra that installs it."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        top = module.split(".", 1)[0]
        if exc.name is not None and exc.name.split(".", 1)[0] != top:
            raise  # the package is there but one of *its* dependencies is broken: show it as is
        raise MissingExtra(top, extra_of(module), feature) from None


def available(module: str) -> bool:
    """Whether `module` can be imported (without importing anything else)."""
    import importlib.util

    try:
        return importlib.util.find_spec(module.split(".", 1)[0]) is not None
    except (ImportError, ValueError):
        return False


__all__ = ["EXTRAS", "MissingExtra", "available", "extra_of", "require"]
