"""Validate a problem against the registries when it registers, not halfway through a run.

A misspelt fault or check, a parameter the injector or check does not take (or of the wrong
type) and a mechanism the diagnosis vocabulary does not know would otherwise register silently
and surface as a crash mid-run, a check that always errors, or a checklist question no diagnosis
can pass. `validate_problem` collects every such mistake of one problem and raises one
`ProblemValidationError` naming the file and line of the builder, each field and its fix.

Faults validate their parameters with their own pydantic model (`Fault.Params`); a check's model
is built from its keyword parameters (`check_params_model`), so neither is written twice.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from sregym.oracles.mechanisms import Vocabulary
from sregym.problems.model import CheckSpec, FaultSpec, Problem


@dataclass(frozen=True)
class Issue:
    field: str  # where in the problem, e.g. "faults[0].params.image"
    message: str  # what is wrong
    fix: str  # what to write instead


class ProblemValidationError(ValueError):
    """A problem names something its registries do not have. The message is one line: the problem,
    the file and line of its builder, then each field with what is wrong and the fix."""

    def __init__(self, problem_id: str, issues: list[Issue], path: str | None = None,
                 line: int | None = None) -> None:
        self.problem_id = problem_id
        self.issues = issues
        self.path = path
        self.line = line
        where = f" ({path}, line {line})" if path and line else f" ({path})" if path else ""
        details = "; ".join(f"{i.field}: {i.message} ({i.fix})" for i in issues)
        super().__init__(f"invalid problem {problem_id}{where}: {details}")


def _suggest(name: str, known: Iterable[str], what: str) -> str:
    """"did you mean X?" for a near miss, else the list of known names."""
    options = sorted(known)
    close = difflib.get_close_matches(name, options, n=1)
    if close:
        return f"did you mean {close[0]!r}?"
    return f"known {what}: {', '.join(options) or 'none'}"


@cache
def check_params_model(fn: Callable[..., Any]) -> type[BaseModel]:
    """A pydantic model of a check's keyword parameters (everything after the context)."""
    hints = getattr(fn, "__globals__", {})
    fields: dict[str, Any] = {}
    for index, param in enumerate(inspect.signature(fn).parameters.values()):
        if index == 0 or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        annotation: Any = param.annotation
        if isinstance(annotation, str):
            try:
                annotation = eval(annotation, dict(hints))  # the check module's own annotation text
            except Exception:  # a name only imported for type checking: accept any value
                annotation = Any
        if annotation is inspect.Parameter.empty:
            annotation = Any
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (annotation, default)
    config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)
    return create_model(f"{getattr(fn, '__name__', 'check')}_params", __config__=config, **fields)


def _param_issues(where: str, owner: str, model: type[BaseModel], params: dict[str, Any]) -> list[Issue]:
    try:
        model.model_validate(params)
    except ValidationError as exc:
        known = list(model.model_fields)
        errors = exc.errors()
        # A misspelt parameter is also a missing one: report it once, as the misspelling.
        misspelt = {str(e["loc"][0]): difflib.get_close_matches(str(e["loc"][0]), known, n=1)
                    for e in errors if e["type"] == "extra_forbidden"}
        meant = {m[0] for m in misspelt.values() if m}
        issues = []
        for error in errors:
            key = ".".join(str(p) for p in error["loc"])
            field = f"{where}.params.{key}" if key else f"{where}.params"
            if error["type"] == "extra_forbidden":
                close = misspelt[str(error["loc"][0])]
                fix = f"did you mean {close[0]!r}?" if close else f"parameters of {owner}: {', '.join(known) or 'none'}"
                issues.append(Issue(field, f"{owner} takes no parameter {key!r}", fix))
            elif error["type"] == "missing":
                if key not in meant:
                    issues.append(Issue(field, f"{owner} needs parameter {key!r}", f"add {key}=..."))
            else:
                top = str(error["loc"][0]) if error["loc"] else ""
                expected = model.model_fields[top].annotation if top in model.model_fields else None
                fix = f"give a value of type {_type_name(expected)}" if expected is not None else "fix the value"
                issues.append(Issue(field, f"{error['msg']} (got {error.get('input')!r})", fix))
        return issues
    return []


def _type_name(annotation: Any) -> str:
    return getattr(annotation, "__name__", None) or str(annotation).replace("typing.", "")


def _fault_issues(index: int, spec: FaultSpec) -> list[Issue]:
    from sregym.faults.base import FAULTS

    where = f"faults[{index}]"
    if spec.fault not in FAULTS:
        return [Issue(f"{where}.fault", f"unknown fault {spec.fault!r}", _suggest(spec.fault, FAULTS.names(), "faults"))]
    return _param_issues(where, f"fault {spec.fault}", FAULTS.get(spec.fault).Params, spec.params)


def _check_issues(where: str, spec: CheckSpec) -> list[Issue]:
    from sregym.oracles.checks import CHECKS

    if spec.check not in CHECKS:
        return [Issue(f"{where}.check", f"unknown check {spec.check!r}", _suggest(spec.check, CHECKS.names(), "checks"))]
    return _param_issues(where, f"check {spec.check}", check_params_model(CHECKS.get(spec.check)), spec.params)


def problem_issues(problem: Problem, vocabulary: Vocabulary) -> list[Issue]:
    """Every name and parameter of `problem` its registries (or `vocabulary`) do not accept."""
    issues: list[Issue] = []
    for index, fault in enumerate(problem.faults):
        issues += _fault_issues(index, fault)
    for index, change in enumerate(problem.changes):
        issues += [Issue(i.field.replace("faults[", "changes[", 1), i.message, i.fix)
                   for i in _fault_issues(index, change)]
    mitigation = problem.mitigation
    for role, specs in (("must_fix", mitigation.must_fix), ("must_keep", mitigation.must_keep),
                        ("durability", mitigation.durability)):
        for index, spec in enumerate(specs):
            issues += _check_issues(f"mitigation.{role}[{index}]", spec)
    mechanism = problem.ground_truth.mechanism
    if problem.is_control:  # nothing is broken, so there is no mechanism to name
        return issues
    if mechanism not in vocabulary:
        close = difflib.get_close_matches(mechanism, vocabulary.names(), n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        issues.append(Issue("ground_truth.mechanism", f"unknown mechanism {mechanism!r}",
                            f"{hint}known mechanisms: {', '.join(sorted(vocabulary.names()))}; a problem set "
                            "adds its own with sregym.problems.mechanisms(...)"))
    return issues


def source_of(fn: Callable[..., Any]) -> tuple[str | None, int | None]:
    """The file and first line of a builder function, for error messages."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return None, None
    return str(Path(code.co_filename)), code.co_firstlineno


def validate_problem(problem: Problem, vocabulary: Vocabulary, builder: Callable[..., Any] | None = None) -> None:
    """Raise `ProblemValidationError` if `problem` names anything unknown or mis-parameterised."""
    issues = problem_issues(problem, vocabulary)
    if issues:
        path, line = source_of(builder) if builder is not None else (None, None)
        raise ProblemValidationError(problem.id, issues, path, line)
