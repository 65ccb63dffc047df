"""The problem registry: `@problem`, lazy discovery, third-party problem files and entry points.

A problem file is a Python module with functions decorated by `@problem`; each returns one
`Problem` (or several variants). The function's docstring is the problem card. The registry
discovers `sregym.problems.catalog` lazily, loads every `*.py` of a `--problems-dir`, and the
entry-point group `sregym.problems` (each entry point names a module to import) for packages.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable, Iterable
from importlib.metadata import entry_points
from pathlib import Path

from sregym.problems.model import Problem
from sregym.registry import Registry

ENTRY_POINT_GROUP = "sregym.problems"
PROBLEMS: Registry[Problem] = Registry("problem", ("sregym.problems.catalog",))
_entry_points_loaded = False

Builder = Callable[[], "Problem | Iterable[Problem]"]


def problem(fn: Builder) -> Builder:
    """Register what `fn()` returns; its docstring becomes the card of problems without one."""
    built = fn()
    items = [built] if isinstance(built, Problem) else list(built)
    card = inspect.cleandoc(fn.__doc__ or "")
    for item in items:
        if not item.card and card:
            item = item.model_copy(update={"card": card})
        PROBLEMS.register(item.id, item, replace=True)
    return fn


def load_entry_points() -> None:
    """Import every module named in the `sregym.problems` entry-point group (once)."""
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        ep.load()


def load_problems_dir(directory: str | Path) -> list[str]:
    """Import every `*.py` in `directory` (sorted); returns the ids registered by them."""
    root = Path(directory).expanduser().resolve()
    if not root.is_dir():
        raise FileNotFoundError(f"problems directory {root} does not exist")
    before = set(all_problem_ids())
    for path in sorted(root.glob("*.py")):
        module_name = f"sregym_user_problems.{root.name}.{path.stem}"
        if module_name in sys.modules:
            continue
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            continue
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    return sorted(set(all_problem_ids()) - before)


def all_problem_ids() -> list[str]:
    load_entry_points()
    return sorted(PROBLEMS.names())


def get_problem(problem_id: str) -> Problem:
    load_entry_points()
    return PROBLEMS.get(problem_id)


def select(*, tag: str | None = None, suite: str | None = None) -> list[Problem]:
    """Problems with a layer/difficulty tag and/or in a suite, sorted by id."""
    out = []
    for pid in all_problem_ids():
        p = PROBLEMS.get(pid)
        if tag and tag not in p.tags.layers and tag != p.tags.difficulty:
            continue
        if suite and suite not in p.tags.suites:
            continue
        out.append(p)
    return out
