"""The problem registry: `@problem`, lazy discovery, third-party problem files and entry points.

A problem file is a Python module with functions decorated by `@problem`; each returns one
`Problem` (or several variants). The function's docstring is the problem card. The registry
discovers `sregym.problems.catalog` lazily, loads every `*.py` of a `--problems-dir`, and the
entry-point group `sregym.problems` (each entry point names a module to import) for packages.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from importlib.metadata import entry_points
from pathlib import Path

from sregym.problems.model import Problem
from sregym.problems.validation import validate_problem
from sregym.problems.vocabulary import assign, scope_vocabulary
from sregym.registry import Registry, load_plugin_dir

ENTRY_POINT_GROUP = "sregym.problems"
PROBLEMS: Registry[Problem] = Registry("problem", ("sregym.problems.catalog",))
_entry_points_loaded = False

Builder = Callable[[], "Problem | Iterable[Problem]"]
_variant_resolvers: list[Callable[[str], Problem]] = []


def problem(fn: Builder) -> Builder:
    """Register what `fn()` returns; its docstring becomes the card of problems without one.

    Each problem is validated first (`validation.validate_problem`: fault and check names and
    parameters, the mechanism against its problem set's vocabulary), so a mistake fails here, with
    the builder's file and line, instead of registering silently."""
    built = fn()
    items = [built] if isinstance(built, Problem) else list(built)
    card = inspect.cleandoc(fn.__doc__ or "")
    vocabulary = scope_vocabulary(fn.__module__)
    for item in items:
        validate_problem(item, vocabulary, fn)
    for item in items:
        if not item.card and card:
            item = item.model_copy(update={"card": card})
        PROBLEMS.register(item.id, item, replace=True)
        assign(item.id, vocabulary)
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
    """Import the app folders of `directory` (subfolders with an `app.py`, see
    `sregym.apps.load_apps_dir`), then every `*.py` in it (sorted); returns the ids registered by
    them. Raises `FileNotFoundError`/`NotADirectoryError` for a bad directory and `PluginLoadError`
    (file, line, exception) for a file that does not import or registers an invalid problem.
    Mechanisms the directory's files declare (`sregym.problems.mechanisms`) apply to its problems only."""
    from sregym.apps import load_apps_dir

    before = set(all_problem_ids())
    load_plugin_dir(directory, "sregym_user_problems", "problems directory", before=load_apps_dir)
    return sorted(set(all_problem_ids()) - before)


def all_problem_ids() -> list[str]:
    load_entry_points()
    return sorted(PROBLEMS.names())


def get_problem(problem_id: str) -> Problem:
    """A registered problem, or a variant of a family (`family-id@name=value,...`, built on demand)."""
    load_entry_points()
    if "@" in problem_id:
        PROBLEMS.discover()  # the catalogue declares the families (and installs the resolver)
        if _variant_resolvers:
            return _variant_resolvers[0](problem_id)
    return PROBLEMS.get(problem_id)


def resolve_variants_with(resolver: Callable[[str], Problem]) -> None:
    """Install what turns `family-id@name=value,...` into a problem (`problems/family.py` does, at
    import), so the registry needs no import of its own families."""
    _variant_resolvers[:] = [resolver]


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
