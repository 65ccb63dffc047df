"""Problem families: one scenario, a declared parameter space, and a builder `params -> Problem`.

Many problems are the same fault on another target (another Service, port, flag value). Instead of a
copy per target, a family declares its parameters and their values; the builder's defaults are the
problem that was registered before (its id and spec unchanged), and every other point of the space
is a *variant* with an id of its own::

    hotel-reservation/scaled-to-zero-v1                  the default variant (the family's id)
    hotel-reservation/scaled-to-zero-v1@service=rate     one parameter away from the default
    hotel-reservation/service-target-port-geo-v1@service=rate,port=8080

A variant id is the family id, `@`, then the parameters that differ from the default as
`name=value`, in the family's declared order, joined by `,` (characters valid in file names and
unquoted on a shell command line). There is exactly one id per variant: any other spelling is
refused with the canonical one. Variants are built on demand (`get_problem` resolves them), validated
like any registered problem, and never listed among the registered ids, so suites and
`sregym check --all` keep their meaning; `sregym list problems --expand` and `sregym run
--variants N` reach them. The id and the parameters stay on our side: what reaches the cluster is
the builder's faults, exactly as for a hand-written problem.
"""

from __future__ import annotations

import inspect
import itertools
import random
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sregym.problems.model import Problem
from sregym.problems.registry import get_problem, problem, resolve_variants_with
from sregym.problems.validation import validate_problem
from sregym.problems.vocabulary import assign, scope_vocabulary
from sregym.registry import Registry

ParamValue = str | int | float
VARIANT_SEP = "@"
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_VALUE = re.compile(r"^[a-z0-9][a-z0-9.-]*$")

F = TypeVar("F", bound=Callable[..., Problem])


@dataclass(frozen=True)
class Param:
    """One axis of a family's space: a builder keyword and the values it may take (the default
    is the builder's own default, which must be one of them)."""

    name: str
    values: tuple[ParamValue, ...]

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise ValueError(f"parameter name {self.name!r} must be lower-case letters, digits and _")
        texts = [text_of(v) for v in self.values]
        bad = [t for t in texts if not _VALUE.match(t)]
        if bad or len(set(texts)) != len(texts) or not texts:
            raise ValueError(f"parameter {self.name!r}: values must be distinct and spelled with lower-case "
                             f"letters, digits, '.' and '-' (got {texts})")

    def parse(self, text: str) -> ParamValue:
        for value in self.values:
            if text_of(value) == text:
                return value
        raise KeyError(f"parameter {self.name}={text!r} is not in its space "
                       f"({', '.join(text_of(v) for v in self.values)})")


def text_of(value: ParamValue) -> str:
    """How a value is spelled in a variant id."""
    return str(value).lower() if isinstance(value, bool) else str(value)


@dataclass
class Family:
    """A registered family. `build(**params)` makes a variant; `build(**defaults)` is the
    problem registered under `id` (its card comes from there)."""

    id: str
    params: tuple[Param, ...]
    defaults: dict[str, ParamValue]
    build: Callable[..., Problem]
    module: str
    allowed: Callable[..., bool] | None = None
    _built: dict[str, Problem] = field(default_factory=dict, repr=False)

    # ------------------------------------------------------------------ the space
    def points(self) -> list[dict[str, ParamValue]]:
        """Every allowed point of the space, default first, then in declared order."""
        out = [dict(self.defaults)]
        for combo in itertools.product(*(p.values for p in self.params)):
            point = {p.name: v for p, v in zip(self.params, combo, strict=True)}
            if point != self.defaults and (self.allowed is None or self.allowed(**point)):
                out.append(point)
        return out

    def variant_id(self, point: Mapping[str, ParamValue]) -> str:
        """The canonical id of a point: the family id for the default."""
        changed = [f"{p.name}={text_of(point[p.name])}" for p in self.params if point[p.name] != self.defaults[p.name]]
        return f"{self.id}{VARIANT_SEP}{','.join(changed)}" if changed else self.id

    def variant_ids(self) -> list[str]:
        """The ids of every variant except the default, in `points()` order."""
        return [self.variant_id(p) for p in self.points()[1:]]

    def parse(self, variant_id: str) -> dict[str, ParamValue]:
        """The point a variant id names. Raises `KeyError` (saying why) for an unknown parameter,
        a value outside the space, a point the family excludes or a non-canonical spelling."""
        base, sep, tail = variant_id.partition(VARIANT_SEP)
        if base != self.id or not sep or not tail:
            raise KeyError(f"{variant_id!r} is not a variant of {self.id}")
        by_name = {p.name: p for p in self.params}
        point = dict(self.defaults)
        for pair in tail.split(","):
            name, eq, text = pair.partition("=")
            if not eq or name not in by_name:
                raise KeyError(f"{variant_id!r}: {pair!r} is not NAME=VALUE with NAME one of "
                               f"{', '.join(by_name)} (family {self.id})")
            point[name] = by_name[name].parse(text)
        if point == self.defaults:
            raise KeyError(f"{variant_id!r} is the default variant: use {self.id}")
        if self.allowed is not None and not self.allowed(**point):
            raise KeyError(f"{variant_id!r}: family {self.id} excludes this combination")
        canonical = self.variant_id(point)
        if canonical != variant_id:
            raise KeyError(f"{variant_id!r} is spelled {canonical!r} (parameters that differ from the default, "
                           "in declared order)")
        return point

    def variant(self, point: Mapping[str, ParamValue]) -> Problem:
        """The problem at `point` (built once, validated like a registered problem)."""
        variant_id = self.variant_id(point)
        if variant_id == self.id:
            return get_problem(self.id)
        if variant_id not in self._built:
            built = self.build(**point)
            default_card = get_problem(self.id).card
            card = (f"Variant of {self.id} with {variant_id.partition(VARIANT_SEP)[2]}; the card of the "
                    f"default variant follows.\n\n{default_card}")
            # A suite is a fixed set and a source names the published scenario: both belong to the
            # default; `run --variants` is how variants join a run.
            tags = built.tags.model_copy(update={"suites": (), "sources": ()})
            problem = built.model_copy(update={"id": variant_id, "card": card, "tags": tags})
            vocabulary = scope_vocabulary(self.module)
            validate_problem(Problem.model_validate(problem.model_dump()), vocabulary, self.build)
            assign(variant_id, vocabulary)
            self._built[variant_id] = problem
        return self._built[variant_id]

    def variants(self) -> list[Problem]:
        return [self.variant(p) for p in self.points()[1:]]

    def draw(self, count: int, seed: int) -> list[str]:
        """`count` distinct non-default variant ids (all of them when there are fewer), drawn
        from this family's own stream of the run seed: the same seed gives the same draw, and
        adding a family never changes another family's draw."""
        ids = self.variant_ids()
        rng = random.Random(f"sregym-variants:{self.id}:{seed}")
        return sorted(rng.sample(ids, min(count, len(ids))), key=ids.index)


FAMILIES: Registry[Family] = Registry("problem family", ("sregym.problems.catalog",))


def family(*params: Param, allowed: Callable[..., bool] | None = None) -> Callable[[F], F]:
    """Register `fn()` as a problem (exactly as `@problem` does, so its id and card are those of
    the default variant) and the family of `fn(**point)` for every point of `params`. Each
    parameter is a keyword of `fn` with a default; `allowed(**point)` may exclude points."""

    def wrap(fn: F) -> F:
        problem(fn)
        declare_family(fn().id, params, fn, allowed=allowed, module=fn.__module__, defaults=_defaults(fn, params))
        return fn

    return wrap


def declare_family(family_id: str, params: Iterable[Param], build: Callable[..., Problem], *,
                   defaults: Mapping[str, ParamValue], allowed: Callable[..., bool] | None = None,
                   module: str | None = None) -> Family:
    """Declare the family of a problem that is already registered (e.g. one of several a
    list-returning builder registers): `build(**defaults)` must be that problem."""
    params = tuple(params)
    names = [p.name for p in params]
    if sorted(names) != sorted(defaults) or len(set(names)) != len(names):
        raise ValueError(f"family {family_id}: defaults {sorted(defaults)} must name each parameter once ({names})")
    for p in params:
        if defaults[p.name] not in p.values:
            raise ValueError(f"family {family_id}: default {p.name}={defaults[p.name]!r} is not among its values")
    entry = Family(id=family_id, params=params, defaults=dict(defaults), build=build,
                   module=module or getattr(build, "__module__", ""), allowed=allowed)
    FAMILIES.register(family_id, entry, replace=True)
    return entry


def _defaults(fn: Callable[..., Any], params: Iterable[Param]) -> dict[str, ParamValue]:
    signature = inspect.signature(fn)
    out = {}
    for p in params:
        parameter = signature.parameters.get(p.name)
        if parameter is None or parameter.default is inspect.Parameter.empty:
            raise ValueError(f"{fn.__qualname__}: parameter {p.name!r} needs a keyword with a default")
        out[p.name] = parameter.default
    return out


# ---------------------------------------------------------------------- lookups
def family_of(problem_id: str) -> Family | None:
    """The family whose default is `problem_id` or which `problem_id` is a variant of."""
    try:
        return FAMILIES.get(problem_id.partition(VARIANT_SEP)[0])
    except KeyError:
        return None


def get_variant(variant_id: str) -> Problem:
    """Resolve `family-id@name=value,...` (what `get_problem` calls for an id with `@`)."""
    found = family_of(variant_id)
    if found is None:
        base = variant_id.partition(VARIANT_SEP)[0]
        raise KeyError(f"unknown problem {variant_id!r}: {base} declares no variants "
                       "(`sregym list problems --expand` lists them)")
    return found.variant(found.parse(variant_id))


def expand_with_variants(problem_ids: Iterable[str], count: int, seed: int) -> list[str]:
    """Each id followed by `count` seeded variants of its family (ids without a family, and
    variant ids, stay as they are); duplicates dropped, order kept."""
    out: list[str] = []
    for problem_id in problem_ids:
        out.append(problem_id)
        found = family_of(problem_id) if VARIANT_SEP not in problem_id else None
        if found is not None and count > 0:
            out.extend(found.draw(count, seed))
    return list(dict.fromkeys(out))


resolve_variants_with(get_variant)

__all__ = ["FAMILIES", "VARIANT_SEP", "Family", "Param", "declare_family", "expand_with_variants", "family",
           "family_of", "get_variant", "text_of"]
