"""Mechanisms a problem set adds to the diagnosis vocabulary, scoped to that set's problems.

A `--problems-dir` (or an entry-point package) whose faults are not in the built-in vocabulary
declares them in its problem file, before the `@problem` builders that use them::

    from sregym.problems import mechanisms, problem
    mechanisms({"cert_expiry": ("certificate", "x509", "expired")}, related={"cert_expiry": ("dns",)})

The declaration belongs to the module's package (for a problems directory: the directory), so
every problem registered from it is judged with the extended vocabulary, while every other
problem in the process keeps the built-in one: a built-in problem naming `cert_expiry` is still
rejected, and agents on built-in problems are still read with the built-in cues.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping

from sregym.oracles.mechanisms import BUILTIN, Vocabulary

_BY_SCOPE: dict[str, Vocabulary] = {}
_BY_PROBLEM: dict[str, Vocabulary] = {}


def scope_of(module: str) -> str:
    """The problem set a module belongs to: its package (a problems directory's namespace), or
    itself when it is a package (an entry point's `__init__`)."""
    if hasattr(sys.modules.get(module), "__path__"):
        return module
    return module.rpartition(".")[0] or module


def mechanisms(cues: Mapping[str, Iterable[str]], related: Mapping[str, Iterable[str]] | None = None, *,
               module: str | None = None) -> Vocabulary:
    """Add mechanisms (name -> cue phrases) and related-mechanism links for the problems of the
    calling module's problem set; returns that set's vocabulary. Raises `ValueError` for a name
    the built-in vocabulary already has or a link to an unknown mechanism."""
    caller = module or sys._getframe(1).f_globals.get("__name__", "")
    scope = scope_of(caller)
    vocabulary = _BY_SCOPE.get(scope, BUILTIN).extend(cues, related)
    _BY_SCOPE[scope] = vocabulary
    return vocabulary


def scope_vocabulary(module: str) -> Vocabulary:
    """The vocabulary problems built in `module` are validated and judged with."""
    return _BY_SCOPE.get(scope_of(module), BUILTIN)


def assign(problem_id: str, vocabulary: Vocabulary) -> None:
    """Record the vocabulary of a registered problem (the built-in one is the default)."""
    if vocabulary is BUILTIN:
        _BY_PROBLEM.pop(problem_id, None)
    else:
        _BY_PROBLEM[problem_id] = vocabulary


def vocabulary_of(problem_id: str) -> Vocabulary:
    """The vocabulary the diagnosis of `problem_id` is judged with."""
    return _BY_PROBLEM.get(problem_id, BUILTIN)
