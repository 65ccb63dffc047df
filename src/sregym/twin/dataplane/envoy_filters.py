"""An Envoy HTTP connection manager's `http_filters`: which filters a request passes and what
they cost it in CPU.

Envoy checks the chain when it loads its configuration and refuses to start on a broken one,
with its own words: an unknown filter (`Didn't find a registered implementation for 'x' with
type URL: 'y'`), a terminal filter (the router) that is not last, a chain whose last filter is
not terminal. `parse_http_filters` raises `EnvoyConfigError` with those texts.

What a filter costs per request is the only behaviour modelled beyond the chain's shape: the
router and the fault filter are part of the proxy's base cost (the program's `cpu_ms`); a Lua
filter (`envoy.filters.http.lua`) runs its `envoy_on_request` on every request. The twin does
not execute Lua: it reads what a request-inspection script does from its source — the query
argument it extracts (a pattern literal containing `[?&]<name>=`) and the pattern literals it
tests that value against with `find`/`match`/`gmatch` (given inline or as a `local` string
constant) — and counts what Lua's matcher does on each request (`lua_patterns.py`). So the
cost follows the rule and the request: a rule that backtracks over a long crafted argument
costs seconds of CPU per request, the same rule on ordinary requests (no such argument) costs
the filter's fixed overhead. A count past the matcher's budget is costed `RUNAWAY_MS`: Envoy
gives a Lua call no deadline, so such a request holds its worker for at least that long.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from urllib.parse import parse_qsl

from sregym.twin.dataplane.lua_patterns import DEFAULT_BUDGET, MalformedPattern, find_steps

LUA_TYPE = "type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua"
ROUTER_TYPE = "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router"
# Filters the image's Envoy build registers, by their type URL (the name is only a label).
KNOWN_TYPES: dict[str, str] = {
    "type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault": "envoy.filters.http.fault",
    ROUTER_TYPE: "envoy.filters.http.router",
    LUA_TYPE: "envoy.filters.http.lua",
    "type.googleapis.com/envoy.extensions.filters.http.cors.v3.Cors": "envoy.filters.http.cors",
    "type.googleapis.com/envoy.extensions.filters.http.compressor.v3.Compressor": "envoy.filters.http.compressor",
    "type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit":
        "envoy.filters.http.local_ratelimit",
    "type.googleapis.com/envoy.extensions.filters.http.health_check.v3.HealthCheck": "envoy.filters.http.health_check",
}
TERMINAL = frozenset({"envoy.filters.http.router"})

LUA_BASE_MS = 0.03  # a Lua filter's per-request overhead: a coroutine, header map access
LUA_STEP_NS = 5.0  # one step of Lua's pattern matcher (a class test or a match attempt)
RUNAWAY_MS = 10_000.0  # what a request costs when the matcher is still running past its budget


class EnvoyConfigError(ValueError):
    """A configuration Envoy refuses at start; the message is Envoy's."""


@dataclass(frozen=True)
class LuaInspection:
    """What a Lua request filter inspects: the query argument `argument` (empty: the whole
    `:path`) and the patterns it tests it against."""

    argument: str
    extraction: str  # the pattern that pulls the argument out of the path ("" when none)
    rules: tuple[str, ...]


@dataclass(frozen=True)
class HttpFilter:
    name: str
    kind: str  # the registered implementation (KNOWN_TYPES value)
    inspection: LuaInspection | None = None  # Lua filters only


_STRING = r'"((?:[^"\\\n]|\\.)*)"|\'((?:[^\'\\\n]|\\.)*)\'|\[\[(.*?)\]\]'
_LOCAL = re.compile(r"\blocal\s+([A-Za-z_]\w*)\s*=\s*(?:" + _STRING + r")", re.S)
_METHOD_CALL = re.compile(r":\s*(?:find|match|gmatch)\s*\(\s*(?:(?:" + _STRING + r")|([A-Za-z_]\w*))", re.S)
_FUNCTION_CALL = re.compile(r"\bstring\.(?:find|match|gmatch)\s*\(\s*[^,()]+,\s*(?:(?:" + _STRING +
                            r")|([A-Za-z_]\w*))", re.S)
_ARGUMENT = re.compile(r"\[\?&\]([\w.\-]+)=")
_LUA_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "'": "'"}


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: _LUA_ESCAPES.get(m.group(1), m.group(1)), text)


def _literal(groups: tuple[str | None, ...]) -> str | None:
    for index, value in enumerate(groups[:3]):
        if value is not None:
            return value if index == 2 else _unescape(value)
    return None


def lua_inspection(code: str) -> LuaInspection:
    """What a Lua script's request handler tests, read from its source (see the module doc)."""
    body = "\n".join(line.split("--", 1)[0] if "--[[" not in line else line for line in code.splitlines())
    constants = {m.group(1): _literal(m.groups()[1:]) or "" for m in _LOCAL.finditer(body)}
    patterns: list[str] = []
    for regex in (_METHOD_CALL, _FUNCTION_CALL):
        for m in regex.finditer(body):
            literal = _literal(m.groups()[:3])
            value = literal if literal is not None else constants.get(m.group(4) or "")
            if value:
                patterns.append(value)
    extraction = next((p for p in patterns if _ARGUMENT.search(p)), "")
    argument = _ARGUMENT.search(extraction).group(1) if extraction else ""  # type: ignore[union-attr]
    rules = tuple(p for p in patterns if p != extraction)
    return LuaInspection(argument=argument, extraction=extraction, rules=rules)


def _lua_code(name: str, config: dict) -> str:
    code = config.get("default_source_code") or {}
    text = code.get("inline_string") if isinstance(code, dict) else None
    if text is None:
        text = config.get("inline_code")
    if not isinstance(text, str):
        raise EnvoyConfigError(f"Proto constraint validation failed (LuaValidationError.DefaultSourceCode: "
                               f"filter {name} has no source code)")
    return text


def parse_http_filters(items: list | None) -> tuple[HttpFilter, ...]:
    """The chain as Envoy loads it, or `EnvoyConfigError` with the message Envoy prints."""
    filters: list[HttpFilter] = []
    for item in items or []:
        item = item or {}
        name = str(item.get("name") or "")
        config = item.get("typed_config") or {}
        type_url = str(config.get("@type") or "") if isinstance(config, dict) else ""
        kind = KNOWN_TYPES.get(type_url)
        if kind is None:
            raise EnvoyConfigError(f"Didn't find a registered implementation for '{name}' with type URL: "
                                   f"'{type_url.removeprefix('type.googleapis.com/')}'")
        inspection = lua_inspection(_lua_code(name, config)) if type_url == LUA_TYPE else None
        filters.append(HttpFilter(name=name, kind=kind, inspection=inspection))
    for index, f in enumerate(filters):
        last = index == len(filters) - 1
        if f.kind in TERMINAL and not last:
            raise EnvoyConfigError(f"Error: terminal filter named {f.name} of type {f.kind} must be the last "
                                   f"filter in a http filter chain.")
        if last and f.kind not in TERMINAL:
            raise EnvoyConfigError(f"Error: non-terminal filter named {f.name} of type {f.kind} is the last "
                                   f"filter in a http filter chain.")
    return tuple(filters)


def _argument_values(path: str, argument: str) -> list[str]:
    query = path.partition("?")[2]
    return [value for key, value in parse_qsl(query, keep_blank_values=True) if key == argument]


def _pattern_ms(subject: str, pattern: str) -> float:
    try:
        _, steps = find_steps(subject, pattern, DEFAULT_BUDGET)
    except MalformedPattern:
        return 0.0  # the script errors out at once (a 500 from the filter; not modelled)
    return RUNAWAY_MS if steps > DEFAULT_BUDGET else steps * LUA_STEP_NS / 1e6


@functools.lru_cache(maxsize=1024)
def request_cpu_ms(filters: tuple[HttpFilter, ...], path: str) -> float:
    """Extra CPU (ms) the chain's filters spend on one request for `path` (with its query)."""
    total = 0.0
    for f in filters:
        if f.inspection is None:
            continue
        total += LUA_BASE_MS
        inspection = f.inspection
        if inspection.extraction:
            total += _pattern_ms(path, inspection.extraction)
            subjects = _argument_values(path, inspection.argument)
        else:
            subjects = [path]
        for subject in subjects:
            for rule in inspection.rules:
                total += _pattern_ms(subject, rule)
    return total


__all__ = ["KNOWN_TYPES", "LUA_BASE_MS", "LUA_STEP_NS", "LUA_TYPE", "RUNAWAY_MS", "EnvoyConfigError", "HttpFilter",
           "LuaInspection", "lua_inspection", "parse_http_filters", "request_cpu_ms"]
