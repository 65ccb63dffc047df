"""Binary operators: arithmetic, comparison (with and without `bool`) and set operators, with
Prometheus' vector matching (`on`/`ignoring`, `group_left`/`group_right`) and its error messages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import promql_parser as pp

from sregym.twin.telemetry.promql import gomath
from sregym.twin.telemetry.promql.errors import PromQLError
from sregym.twin.telemetry.promql.values import (
    Ctx,
    Labels,
    Scal,
    Str,
    Vec,
    VSeries,
    check_duplicates,
    key_of,
    without_name,
)

if TYPE_CHECKING:
    from sregym.twin.telemetry.promql.engine import Engine

ARITH = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": gomath.div,
    "%": gomath.mod,
    "^": gomath.pow_,
    "atan2": gomath.atan2,
}
COMPARE = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    ">": lambda a, b: a > b,
    "<": lambda a, b: a < b,
    ">=": lambda a, b: a >= b,
    "<=": lambda a, b: a <= b,
}
SET_OPS = ("and", "or", "unless")


def elem(op: str, a: float, b: float) -> tuple[float, bool]:
    fn = ARITH.get(op)
    if fn is not None:
        try:
            return fn(a, b), True
        except OverflowError:
            return gomath.INF, True
    return a, COMPARE[op](a, b)


def evaluate(engine: Engine, node: pp.BinaryExpr, ctx: Ctx) -> Vec | Scal:
    op = str(node.op).lower()
    mod = node.modifier
    return_bool = bool(mod and mod.return_bool)
    lhs = engine.eval(node.lhs, ctx)
    rhs = engine.eval(node.rhs, ctx)
    if isinstance(lhs, Str) or isinstance(rhs, Str):
        raise PromQLError("execution", "binary expression must contain only scalar and instant vector types")
    if isinstance(lhs, Scal) and isinstance(rhs, Scal):
        out = []
        for a, b in zip(lhs.vals, rhs.vals, strict=True):
            v, keep = elem(op, a, b)
            if op in COMPARE:
                v = 1.0 if keep else 0.0
            out.append(v)
        return Scal(out)
    if isinstance(lhs, Vec) and isinstance(rhs, Scal):
        out = _vector_scalar(op, lhs, rhs, swap=False, return_bool=return_bool)
        check_duplicates(out, ctx)
        return out
    if isinstance(lhs, Scal) and isinstance(rhs, Vec):
        out = _vector_scalar(op, rhs, lhs, swap=True, return_bool=return_bool)
        check_duplicates(out, ctx)
        return out
    assert isinstance(lhs, Vec) and isinstance(rhs, Vec)
    on, names, card, include = _matching(mod)
    if op in SET_OPS:
        return _set_op(op, lhs, rhs, on, names, ctx)
    out = _vector_vector(op, lhs, rhs, on, names, card, include, return_bool, ctx)
    check_duplicates(out, ctx)
    return out


def _matching(mod: pp.BinModifier | None) -> tuple[bool, list[str], str, list[str]]:
    if mod is None:
        return False, [], "OneToOne", []
    card = str(mod.card).rsplit(".", 1)[-1]
    on = False
    names: list[str] = []
    if mod.matching is not None:
        on = mod.matching.type == pp.LabelModifierType.Include
        names = list(mod.matching.labels)
    return on, names, card, list(mod.group_labels or [])


def _drops_name(op: str) -> bool:
    return op in ARITH


def _vector_scalar(op: str, vec: Vec, sc: Scal, swap: bool, return_bool: bool) -> Vec:
    out: list[VSeries] = []
    drop = _drops_name(op) or return_bool
    for s in vec.series:
        vals: list[float | None] = []
        any_kept = False
        for v, c in zip(s.vals, sc.vals, strict=True):
            if v is None:
                vals.append(None)
                continue
            a, b = (c, v) if swap else (v, c)
            value, keep = elem(op, a, b)
            if op in COMPARE and swap:
                value = b
            if return_bool:
                value, keep = (1.0 if keep else 0.0), True
            if keep:
                vals.append(value)
                any_kept = True
            else:
                vals.append(None)
        if any_kept:
            out.append(VSeries(without_name(s.labels) if drop else s.labels, vals))
    return Vec(out)


def signature(labels: Labels, on: bool, names: list[str]) -> tuple[tuple[str, str], ...]:
    if on:
        return tuple(sorted((k, labels[k]) for k in names if k in labels))
    skip = set(names)
    skip.add("__name__")
    return tuple(sorted((k, v) for k, v in labels.items() if k not in skip))


def _set_op(op: str, lhs: Vec, rhs: Vec, on: bool, names: list[str], ctx: Ctx) -> Vec:
    lsig = [signature(s.labels, on, names) for s in lhs.series]
    rsig = [signature(s.labels, on, names) for s in rhs.series]
    n = ctx.n
    if op == "or":
        present_l = [{sig for sig, s in zip(lsig, lhs.series, strict=True) if s.vals[i] is not None}
                     for i in range(n)]
        out = [VSeries(s.labels, list(s.vals)) for s in lhs.series]
        for sig, s in zip(rsig, rhs.series, strict=True):
            vals = [v if v is not None and sig not in present_l[i] else None for i, v in enumerate(s.vals)]
            if any(v is not None for v in vals):
                out.append(VSeries(s.labels, vals))
        return Vec(out)
    present_r = [{sig for sig, s in zip(rsig, rhs.series, strict=True) if s.vals[i] is not None}
                 for i in range(n)]
    want = op == "and"
    result: list[VSeries] = []
    for sig, s in zip(lsig, lhs.series, strict=True):
        vals = [v if v is not None and ((sig in present_r[i]) == want) else None for i, v in enumerate(s.vals)]
        if any(v is not None for v in vals):
            result.append(VSeries(s.labels, vals))
    return Vec(result)


def _result_labels(many: Labels, one: Labels, op: str, on: bool, names: list[str], card: str,
                   include: list[str]) -> Labels:
    out = dict(many)
    if _drops_name(op):
        out.pop("__name__", None)
    if card == "OneToOne":
        if on:
            out = {k: v for k, v in out.items() if k in names}
        else:
            for k in names:
                out.pop(k, None)
    for k in include:
        v = one.get(k, "")
        if v:
            out[k] = v
        else:
            out.pop(k, None)
    return out


def _vector_vector(op: str, lhs: Vec, rhs: Vec, on: bool, names: list[str], card: str,
                   include: list[str], return_bool: bool, ctx: Ctx) -> Vec:
    if card == "ManyToMany":
        raise PromQLError("execution", "many-to-many only allowed for set operators")
    swapped = card == "OneToMany"
    many, one = (rhs, lhs) if swapped else (lhs, rhs)
    many_sig = [signature(s.labels, on, names) for s in many.series]
    one_sig = [signature(s.labels, on, names) for s in one.series]
    # Output series are keyed by (many index, one index); label sets computed once per pair.
    pair_labels: dict[tuple[int, int], Labels] = {}
    pair_vals: dict[tuple[int, int], list[float | None]] = {}
    order: list[tuple[int, int]] = []
    one_by_sig: dict[tuple[tuple[str, str], ...], list[int]] = {}
    for j, sig in enumerate(one_sig):
        one_by_sig.setdefault(sig, []).append(j)
    for i in range(ctx.n):
        right: dict[tuple[tuple[str, str], ...], int] = {}
        for sig, js in one_by_sig.items():
            present = [j for j in js if one.series[j].vals[i] is not None]
            if len(present) > 1:
                a, b = one.series[present[1]], one.series[present[0]]
                side = "left" if swapped else "right"
                group = "{" + ", ".join(f'{k}="{v}"' for k, v in _match_labels(a.labels, on, names)) + "}"
                raise PromQLError(
                    "execution",
                    f"found duplicate series for the match group {group} on the {side} hand-side of the "
                    f"operation: [{_fmt(a.labels)}, {_fmt(b.labels)}];many-to-many matching not allowed: "
                    "matching labels must be unique on one side")
            if present:
                right[sig] = present[0]
        matched: dict[tuple[tuple[str, str], ...], set[tuple[tuple[str, str], ...]] | None] = {}
        for mi, s in enumerate(many.series):
            lv = s.vals[i]
            if lv is None:
                continue
            sig = many_sig[mi]
            j = right.get(sig)
            if j is None:
                continue
            rv = one.series[j].vals[i]
            assert rv is not None
            a, b = (rv, lv) if swapped else (lv, rv)
            value, keep = elem(op, a, b)
            if return_bool:
                value = 1.0 if keep else 0.0
            elif not keep:
                continue
            pair = (mi, j)
            labels = pair_labels.get(pair)
            if labels is None:
                labels = _result_labels(s.labels, one.series[j].labels, op, on, names, card, include)
                if return_bool:
                    labels = without_name(labels)
                pair_labels[pair] = labels
            if card == "OneToOne":
                if sig in matched:
                    raise PromQLError("execution", "multiple matches for labels: many-to-one matching must be "
                                                   "explicit (group_left/group_right)")
                matched[sig] = None
            else:
                inserted = matched.get(sig)
                if inserted is None:
                    inserted = set()
                    matched[sig] = inserted
                lk = key_of(labels)
                if lk in inserted:
                    raise PromQLError("execution", "multiple matches for matching labels in many-to-one "
                                                   "matching: found duplicate series on the left hand-side")
                inserted.add(lk)
            vals = pair_vals.get(pair)
            if vals is None:
                vals = [None] * ctx.n
                pair_vals[pair] = vals
                order.append(pair)
            vals[i] = value
    return Vec([VSeries(pair_labels[p], pair_vals[p]) for p in order])


def _match_labels(labels: Labels, on: bool, names: list[str]) -> list[tuple[str, str]]:
    if on:
        return sorted((k, v) for k, v in labels.items() if k in names)
    skip = set(names) | {"__name__"}
    return sorted((k, v) for k, v in labels.items() if k not in skip)


def _fmt(labels: Labels) -> str:
    """labels.Labels.String() as Prometheus 2.x prints it (the name is an ordinary label)."""
    return "{" + ", ".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}"
