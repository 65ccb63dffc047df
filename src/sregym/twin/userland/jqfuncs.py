"""jq's builtin functions (name/arity), registered into `jqlang.BUILTINS`.

The ones engineers reach for on JSON from an API or a config file: `keys`, `length`, `map`,
`select`, `has`, `to_entries`/`with_entries`, `sort_by`/`group_by`, `test`/`sub`/`gsub`,
`split`/`join`, `paths`/`del`/`setpath`, `range`, `limit`, type filters. Messages for wrong
input types are jq's own.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator
from typing import Any

from sregym.twin.userland.jqlang import (
    BUILTINS,
    SORT_KEY,
    Builtin,
    Evaluator,
    JqRuntimeError,
    Node,
    as_number,
    compare,
    delpaths,
    dump,
    getpath,
    jtype,
    setpath,
    trunc,
    truthy,
)


def builtin(name: str, arity: int = 0) -> Callable[[Builtin], Builtin]:
    def register(fn: Builtin) -> Builtin:
        BUILTINS[(name, arity)] = fn
        return fn
    return register


def simple(name: str, fn: Callable[[Any], Any]) -> None:
    """A 0-arity builtin that maps its input to one output."""
    def run(ev: Evaluator, inp: Any, args: list[Node], scope: dict[str, Any]) -> Iterator[Any]:
        yield fn(inp)
    BUILTINS[(name, 0)] = run


def _length(v: Any) -> Any:
    t = jtype(v)
    if t == "null":
        return 0
    if t == "boolean":
        raise JqRuntimeError(f"boolean ({trunc(v)}) has no length")
    if t == "number":
        return abs(v)
    return len(v)


def _keys(v: Any, sort: bool = True) -> list[Any]:
    if isinstance(v, dict):
        return sorted(v) if sort else list(v)
    if isinstance(v, list):
        return list(range(len(v)))
    raise JqRuntimeError(f"{jtype(v)} ({trunc(v)}) has no keys")


def _need(kind: str, v: Any, what: str) -> None:
    if jtype(v) != kind:
        raise JqRuntimeError(f"{jtype(v)} ({trunc(v)}) {what}")


def _tonumber(v: Any) -> Any:
    if jtype(v) == "number":
        return v
    if isinstance(v, str):
        try:
            return as_number(float(v)) if any(c in v for c in ".eE") else int(v)
        except ValueError:
            raise JqRuntimeError(f"Cannot parse '{v}' as JSON") from None
    raise JqRuntimeError(f"{jtype(v)} ({trunc(v)}) cannot be parsed as a number")


def _add(v: Any) -> Any:
    items = list(v.values()) if isinstance(v, dict) else v
    if not isinstance(items, list):
        raise JqRuntimeError(f"Cannot iterate over {jtype(v)}" + (f" ({trunc(v)})" if v is not None else ""))
    total: Any = None
    for item in items:
        total = Evaluator().binop("+", total, item)
    return total


def _flatten(v: Any, depth: float = 1e9) -> list[Any]:
    out: list[Any] = []
    for item in v:
        if isinstance(item, list) and depth > 0:
            out.extend(_flatten(item, depth - 1))
        else:
            out.append(item)
    return out


def _from_entries(v: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in v:
        key = next((item[k] for k in ("key", "k", "name", "Name", "Key", "K") if k in item and item[k] is not None),
                   None)
        value = next((item[k] for k in ("value", "v", "Value", "V") if k in item), None)
        out[key if isinstance(key, str) else dump(key, 0)] = value
    return out


def _tostring(v: Any) -> str:
    return v if isinstance(v, str) else dump(v, 0)


def _fromjson(v: Any) -> Any:
    try:
        return json.loads(v)
    except (ValueError, TypeError):
        raise JqRuntimeError(f"{v} (while parsing '{v}')") from None


for _name, _fn in {
    "length": _length, "utf8bytelength": lambda v: len(v.encode()),
    "keys": _keys, "keys_unsorted": lambda v: _keys(v, sort=False), "type": jtype,
    "not": lambda v: not truthy(v), "add": _add,
    "from_entries": _from_entries, "reverse": lambda v: v[::-1] if v is not None else [],
    "sort": lambda v: sorted(v, key=SORT_KEY), "tostring": _tostring, "tonumber": _tonumber,
    "tojson": lambda v: dump(v, 0), "fromjson": _fromjson,
    "ascii_downcase": lambda v: v.lower(), "ascii_upcase": lambda v: v.upper(),
    "floor": lambda v: math.floor(v), "ceil": lambda v: math.ceil(v), "sqrt": lambda v: as_number(math.sqrt(v)),
    "round": lambda v: round(v), "fabs": lambda v: abs(v),
    "min": lambda v: min(v, key=SORT_KEY) if v else None, "max": lambda v: max(v, key=SORT_KEY) if v else None,
    "unique": lambda v: [x for i, x in enumerate(sorted(v, key=SORT_KEY))
                         if i == 0 or compare(x, sorted(v, key=SORT_KEY)[i - 1])],
    "flatten": _flatten, "any": lambda v: any(truthy(x) for x in v), "all": lambda v: all(truthy(x) for x in v),
    "first": lambda v: v[0] if v else None, "last": lambda v: v[-1] if v else None,
    "explode": lambda v: [ord(c) for c in v], "implode": lambda v: "".join(chr(c) for c in v),
    "ascii": lambda v: chr(v), "tostream": lambda v: v, "transpose": lambda v: [list(r) for r in zip(*v, strict=False)],
}.items():
    simple(_name, _fn)


@builtin("empty")
def _empty(ev: Evaluator, inp: Any, args: list[Node], scope: dict[str, Any]) -> Iterator[Any]:
    return iter(())


@builtin("error")
def _error0(ev: Evaluator, inp: Any, args: list[Node], scope: dict[str, Any]) -> Iterator[Any]:
    raise JqRuntimeError(inp)


@builtin("error", 1)
def _error1(ev: Evaluator, inp: Any, args: list[Node], scope: dict[str, Any]) -> Iterator[Any]:
    for message in ev.run(args[0], inp, scope):
        raise JqRuntimeError(message)
    return iter(())


@builtin("env")
def _env(ev: Evaluator, inp: Any, args: list[Node], scope: dict[str, Any]) -> Iterator[Any]:
    yield dict(ev.env)


@builtin("recurse")
def _recurse(ev: Evaluator, inp: Any, args: list[Node], scope: dict[str, Any]) -> Iterator[Any]:
    ev.tick()
    yield inp
    if isinstance(inp, list | dict):
        for child in (inp if isinstance(inp, list) else inp.values()):
            yield from _recurse(ev, child, args, scope)


for _kind, _test in {"arrays": "array", "objects": "object", "strings": "string", "numbers": "number",
                     "booleans": "boolean", "nulls": "null"}.items():
    def _filter(ev: Evaluator, inp: Any, args: list[Node], scope: dict[str, Any],
                kind: str = _test) -> Iterator[Any]:
        if jtype(inp) == kind:
            yield inp
    BUILTINS[(_kind, 0)] = _filter


@builtin("values")
def _values(ev: Evaluator, inp: Any, args: list[Node], scope: dict[str, Any]) -> Iterator[Any]:
    if inp is not None:
        yield inp


@builtin("iterables")
def _iterables(ev: Evaluator, inp: Any, args: list[Node], scope: dict[str, Any]) -> Iterator[Any]:
    if isinstance(inp, list | dict):
        yield inp


@builtin("scalars")
def _scalars(ev: Evaluator, inp: Any, args: list[Node], scope: dict[str, Any]) -> Iterator[Any]:
    if not isinstance(inp, list | dict):
        yield inp


@builtin("map", 1)
def _map(ev: Evaluator, inp: Any, args: list[Node], scope: dict[str, Any]) -> Iterator[Any]:
    yield [out for item in ev.iterate(inp) for out in ev.run(args[0], item, scope)]


@builtin("map_values", 1)
def _map_values(ev: Evaluator, inp: Any, args: list[Node], scope: dict[str, Any]) -> Iterator[Any]:
    if isinstance(inp, dict):
        out = {}
        for k, v in inp.items():
            results = ev.values(args[0], v, scope)
            if results:
                out[k] = results[0]
        yield out
    else:
        yield [r[0] for r in (ev.values(args[0], v, scope) for v in ev.iterate(inp)) if r]


@builtin("select", 1)
def _select(ev: Evaluator, inp: Any, args: list[Node], scope: dict[str, Any]) -> Iterator[Any]:
    for cond in ev.run(args[0], inp, scope):
        if truthy(cond):
            yield inp


@builtin("has", 1)
def _has(ev: Evaluator, inp: Any, args: list[Node], scope: dict[str, Any]) -> Iterator[Any]:
    for key in ev.run(args[0], inp, scope):
        if isinstance(inp, dict) and isinstance(key, str):
            yield key in inp
        elif isinstance(inp, list) and jtype(key) == "number":
            yield 0 <= key < len(inp)
        else:
            raise JqRuntimeError(f"Cannot check whether {jtype(inp)} has a {jtype(key)} key")


def _contains(a: Any, b: Any) -> bool:
    if jtype(a) != jtype(b):
        raise JqRuntimeError(f"{jtype(a)} ({trunc(a)}) and {jtype(b)} ({trunc(b)}) cannot have their "
                             "containment checked")
    if isinstance(a, dict):
        return all(k in a and _contains(a[k], v) for k, v in b.items())
    if isinstance(a, list):
        return all(any(jtype(x) == jtype(y) and _contains(x, y) for x in a) for y in b)
    if isinstance(a, str):
        return b in a
    return a == b


def _two_strings(name: str, test: Callable[[str, str], Any], message: str) -> None:
    def run(ev: Evaluator, inp: Any, args: list[Node], scope: dict[str, Any]) -> Iterator[Any]:
        for arg in ev.run(args[0], inp, scope):
            if not (isinstance(inp, str) and isinstance(arg, str)):
                raise JqRuntimeError(message)
            yield test(inp, arg)
    BUILTINS[(name, 1)] = run


_two_strings("startswith", str.startswith, "startswith() requires string inputs")
_two_strings("endswith", str.endswith, "endswith() requires string inputs")
_two_strings("ltrimstr", lambda s, p: s[len(p):] if s.startswith(p) else s, "")
_two_strings("rtrimstr", lambda s, p: s[:-len(p)] if p and s.endswith(p) else s, "")


def _one_arg(name: str, fn: Callable[[Any, Any], Any]) -> None:
    def run(ev: Evaluator, inp: Any, args: list[Node], scope: dict[str, Any]) -> Iterator[Any]:
        for arg in ev.run(args[0], inp, scope):
            yield fn(inp, arg)
    BUILTINS[(name, 1)] = run


def _split(s: Any, sep: Any) -> list[str]:
    if not (isinstance(s, str) and isinstance(sep, str)):
        raise JqRuntimeError("split input and separator must be strings")
    if not sep:
        return list(s)
    return s.split(sep) if s else []


def _join(v: Any, sep: Any) -> str:
    out = []
    for item in v:
        if isinstance(item, list | dict):
            raise JqRuntimeError(f"Cannot join with {jtype(item)}")
        out.append("" if item is None else item if isinstance(item, str) else dump(item, 0))
    return sep.join(out)


def _regex(flags: Any) -> int:
    out = 0
    for ch in flags or "":
        out |= {"i": re.I, "x": re.X, "s": re.S}.get(ch, 0)
    return out


_one_arg("contains", _contains)
_one_arg("inside", lambda a, b: _contains(b, a))
_one_arg("split", _split)
_one_arg("join", _join)
_one_arg("test", lambda s, r: re.search(r, s) is not None)
_one_arg("index", lambda s, t: (s.find(t) if s.find(t) >= 0 else None) if isinstance(s, str) else None)
_one_arg("flatten", lambda v, d: _flatten(v, d))
_one_arg("getpath", getpath)


def _by(name: str, finish: Callable[[list[tuple[Any, Any]]], Any]) -> None:
    def run(ev: Evaluator, inp: Any, args: list[Node], scope: dict[str, Any]) -> Iterator[Any]:
        items = list(ev.iterate(inp))
        keyed = [(ev.values(args[0], item, scope), item) for item in items]
        keyed.sort(key=lambda pair: SORT_KEY(pair[0]))
        yield finish(keyed)
    BUILTINS[(name, 1)] = run


def _group(keyed: list[tuple[Any, Any]]) -> list[list[Any]]:
    groups: list[list[Any]] = []
    last: Any = object()
    for key, item in keyed:
        if groups and compare(key, last) == 0:
            groups[-1].append(item)
        else:
            groups.append([item])
        last = key
    return groups


_by("sort_by", lambda keyed: [item for _k, item in keyed])
_by("group_by", _group)
_by("unique_by", lambda keyed: [g[0] for g in _group(keyed)])
_by("min_by", lambda keyed: keyed[0][1] if keyed else None)
_by("max_by", lambda keyed: keyed[-1][1] if keyed else None)


@builtin("with_entries", 1)
def _with_entries(ev: Evaluator, inp: Any, args: list[Node], scope: dict[str, Any]) -> Iterator[Any]:
    entries = [{"key": k, "value": v} for k, v in inp.items()] if isinstance(inp, dict) else \
        [{"key": i, "value": v} for i, v in enumerate(inp)]
    yield _from_entries([out for e in entries for out in ev.run(args[0], e, scope)])


@builtin("range", 1)
def _range1(ev: Evaluator, inp: Any, args: list[Node], scope: dict[str, Any]) -> Iterator[Any]:
    for upper in ev.run(args[0], inp, scope):
        i = 0
        while i < upper:
            ev.tick()
            yield i
            i += 1


@builtin("range", 2)
def _range2(ev: Evaluator, inp: Any, args: list[Node], scope: dict[str, Any]) -> Iterator[Any]:
    for lower in ev.run(args[0], inp, scope):
        for upper in ev.run(args[1], inp, scope):
            i = lower
            while i < upper:
                ev.tick()
                yield i
                i += 1


@builtin("limit", 2)
def _limit(ev: Evaluator, inp: Any, args: list[Node], scope: dict[str, Any]) -> Iterator[Any]:
    for n in ev.run(args[0], inp, scope):
        if n <= 0:
            continue
        for count, value in enumerate(ev.run(args[1], inp, scope), 1):
            yield value
            if count >= n:
                break


@builtin("first", 1)
def _first(ev: Evaluator, inp: Any, args: list[Node], scope: dict[str, Any]) -> Iterator[Any]:
    for value in ev.run(args[0], inp, scope):
        yield value
        return


@builtin("last", 1)
def _last(ev: Evaluator, inp: Any, args: list[Node], scope: dict[str, Any]) -> Iterator[Any]:
    values = ev.values(args[0], inp, scope)
    if values:
        yield values[-1]


@builtin("any", 1)
def _any(ev: Evaluator, inp: Any, args: list[Node], scope: dict[str, Any]) -> Iterator[Any]:
    yield any(truthy(v) for item in ev.iterate(inp) for v in ev.run(args[0], item, scope))


@builtin("all", 1)
def _all(ev: Evaluator, inp: Any, args: list[Node], scope: dict[str, Any]) -> Iterator[Any]:
    yield all(truthy(v) for item in ev.iterate(inp) for v in ev.run(args[0], item, scope))


@builtin("isempty", 1)
def _isempty(ev: Evaluator, inp: Any, args: list[Node], scope: dict[str, Any]) -> Iterator[Any]:
    yield next(iter(ev.run(args[0], inp, scope)), _MISSING) is _MISSING


_MISSING = object()


@builtin("test", 2)
def _test2(ev: Evaluator, inp: Any, args: list[Node], scope: dict[str, Any]) -> Iterator[Any]:
    for regex in ev.run(args[0], inp, scope):
        for flags in ev.run(args[1], inp, scope):
            yield re.search(regex, inp, _regex(flags)) is not None


def _substitute(count: int) -> Builtin:
    def run(ev: Evaluator, inp: Any, args: list[Node], scope: dict[str, Any]) -> Iterator[Any]:
        if not isinstance(inp, str):
            raise JqRuntimeError(f"{jtype(inp)} ({trunc(inp)}) cannot be matched, as it is not a string")
        flags = ev.values(args[2], inp, scope)[0] if len(args) > 2 else ""
        for regex in ev.run(args[0], inp, scope):
            pattern = re.compile(regex, _regex(flags))
            limit = 0 if (count == 0 or "g" in (flags or "")) else 1
            for replacement in ev.run(args[1], inp, scope):
                yield pattern.sub(lambda _m, r=replacement: r, inp, count=limit)
    return run


BUILTINS[("sub", 2)] = _substitute(1)
BUILTINS[("sub", 3)] = _substitute(1)
BUILTINS[("gsub", 2)] = _substitute(0)
BUILTINS[("gsub", 3)] = _substitute(0)


@builtin("splits", 1)
def _splits(ev: Evaluator, inp: Any, args: list[Node], scope: dict[str, Any]) -> Iterator[Any]:
    for regex in ev.run(args[0], inp, scope):
        yield from re.split(regex, inp)


@builtin("del", 1)
def _del(ev: Evaluator, inp: Any, args: list[Node], scope: dict[str, Any]) -> Iterator[Any]:
    yield delpaths(inp, [path for path, _v in ev.paths(args[0], inp, scope)])


@builtin("path", 1)
def _path(ev: Evaluator, inp: Any, args: list[Node], scope: dict[str, Any]) -> Iterator[Any]:
    for path, _value in ev.paths(args[0], inp, scope):
        yield path


@builtin("paths")
def _paths(ev: Evaluator, inp: Any, args: list[Node], scope: dict[str, Any]) -> Iterator[Any]:
    for path, _value in ev.recurse_paths([], inp):
        if path:
            yield path


@builtin("paths", 1)
def _paths1(ev: Evaluator, inp: Any, args: list[Node], scope: dict[str, Any]) -> Iterator[Any]:
    for path, value in ev.recurse_paths([], inp):
        if path and any(truthy(v) for v in ev.run(args[0], value, scope)):
            yield path


@builtin("leaf_paths")
def _leaf_paths(ev: Evaluator, inp: Any, args: list[Node], scope: dict[str, Any]) -> Iterator[Any]:
    for path, value in ev.recurse_paths([], inp):
        if path and not isinstance(value, list | dict):
            yield path


@builtin("setpath", 2)
def _setpath(ev: Evaluator, inp: Any, args: list[Node], scope: dict[str, Any]) -> Iterator[Any]:
    for value in ev.run(args[1], inp, scope):
        for path in ev.run(args[0], inp, scope):
            yield setpath(inp, path, value)


@builtin("delpaths", 1)
def _delpaths(ev: Evaluator, inp: Any, args: list[Node], scope: dict[str, Any]) -> Iterator[Any]:
    for paths in ev.run(args[0], inp, scope):
        yield delpaths(inp, paths)


@builtin("to_entries")
def _to_entries(ev: Evaluator, inp: Any, args: list[Node], scope: dict[str, Any]) -> Iterator[Any]:
    yield [{"key": k, "value": v} for k, v in zip(_keys(inp, sort=False), ev.iterate(inp), strict=False)]
