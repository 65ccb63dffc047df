"""Envoy's start: a bootstrap file rendered from a template, loaded into the router's configuration.

The demo's frontend-proxy image runs `envsubst < envoy.tmpl.yaml > envoy.yaml && envoy -c
envoy.yaml` in `/home/envoy`: the template's `${VAR}` references take the container's env (unset
ones become empty, as envsubst does), and Envoy reads the result once, at start. So a changed
template (a ConfigMap mounted over it) takes effect when the container restarts, and a broken
one stops Envoy's start with its own critical line and exit code 1 (the kubelet then shows
CrashLoopBackOff).

`load_bootstrap` turns the rendered YAML into an `EnvoyConfig`: the first listener's HTTP
connection manager (stat prefix, the virtual host's routes in order, `http_filters` checked by
`envoy_filters.py`, the first access logger — OpenTelemetry or file — with its format and
attributes), the STRICT_DNS clusters with their one endpoint, the admin port. It raises
`EnvoyConfigError` with Envoy's message for what Envoy refuses: YAML it cannot read, unknown
top-level fields, a route to a cluster that is not defined, a broken filter chain.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from sregym.twin.dataplane.envoy import LOADED_CONFIG, Cluster, EnvoyConfig, Route
from sregym.twin.dataplane.envoy_filters import EnvoyConfigError, parse_http_filters
from sregym.twin.dataplane.logformat import format_log

HCM = "envoy.filters.network.http_connection_manager"
OTEL_LOGGER = "envoy.access_loggers.open_telemetry"
BOOTSTRAP_FIELDS = frozenset({
    "node", "static_resources", "dynamic_resources", "cluster_manager", "admin", "layered_runtime", "stats_sinks",
    "stats_config", "stats_flush_interval", "overload_manager", "tracing", "watchdogs", "node_context_params",
    "bootstrap_extensions", "default_regex_engine", "typed_dns_resolver_config", "application_log_config",
})
# server.cc's lines around a configuration it cannot load (the logger is `main`).
LOAD_ERROR_SOURCE = "[source/server/server.cc:117]"
EXIT_SOURCE = "[source/server/server.cc:925]"
_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def envsubst(text: str, env: dict[str, str]) -> str:
    """GNU envsubst without arguments: `$VAR` and `${VAR}` from `env`, unset ones empty."""
    return _VAR.sub(lambda m: env.get(m.group(1) or m.group(2), ""), text)


def _duration_ms(value: Any, default: float) -> float:
    if value is None:
        return default
    text = str(value).strip()
    if not text.endswith("s"):
        raise EnvoyConfigError(f"Unable to parse JSON as proto (INVALID_ARGUMENT:timeout: invalid duration "
                               f"{text!r})")
    return float(text[:-1]) * 1000.0


def _unknown_fields(field: str) -> EnvoyConfigError:
    return EnvoyConfigError(f"Protobuf message (type envoy.config.bootstrap.v3.Bootstrap reason INVALID_ARGUMENT:"
                            f"{field}: Cannot find field.) has unknown fields")


def _routes(routes: list[dict[str, Any]]) -> tuple[Route, ...]:
    out: list[Route] = []
    for entry in routes or []:
        match = entry.get("match") or {}
        exact = "path" in match
        key = str(match.get("path") if exact else match.get("prefix", ""))
        if "redirect" in entry:
            target = (entry.get("redirect") or {}).get("path_redirect", "")
            out.append(Route(key, exact=exact, redirect=str(target)))
            continue
        action = entry.get("route") or {}
        retry = action.get("retry_policy")
        retries = int((retry or {}).get("num_retries", 1)) if retry is not None else 0
        out.append(Route(key, str(action.get("cluster") or ""), exact=exact,
                         timeout_ms=_duration_ms(action.get("timeout"), 15_000.0), retries=retries))
    return tuple(out)


def _clusters(items: list[dict[str, Any]]) -> tuple[Cluster, ...]:
    out: list[Cluster] = []
    for item in items or []:
        endpoints = ((item.get("load_assignment") or {}).get("endpoints") or [{}])[0].get("lb_endpoints") or [{}]
        socket = (((endpoints[0].get("endpoint") or {}).get("address") or {}).get("socket_address") or {})
        host = "" if socket.get("address") is None else str(socket.get("address"))
        port = "" if socket.get("port_value") is None else str(socket.get("port_value"))
        out.append(Cluster(str(item.get("name") or ""), host=host, port=port))
    return tuple(out)


def _access_log(hcm: dict[str, Any]) -> tuple[str, str, tuple[tuple[str, str], ...]]:
    """(sink, format, attributes) of the first access logger."""
    loggers = hcm.get("access_log") or []
    if not loggers:
        return "stdout", "", ()
    logger = loggers[0] or {}
    config = logger.get("typed_config") or {}
    if logger.get("name") == OTEL_LOGGER:
        body = str(((config.get("body") or {}).get("string_value")) or "")
        values = ((config.get("attributes") or {}).get("values")) or []
        attributes = tuple((str(v.get("key")), str((v.get("value") or {}).get("string_value", ""))) for v in values)
        return "otlp", body, attributes
    text = ((config.get("log_format") or {}).get("text_format_source") or {}).get("inline_string") or \
        config.get("format") or ""
    return "stdout", str(text), ()


def load_bootstrap(text: str, version: str = "1.34.1") -> EnvoyConfig:
    """The configuration Envoy runs for a rendered bootstrap `text` (see the module doc)."""
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "line 1, column 1"
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise EnvoyConfigError(f"Unable to convert YAML as JSON: yaml-cpp: error at {where}: {problem}") from None
    if not isinstance(doc, dict):
        raise EnvoyConfigError("Unable to parse JSON as proto (INVALID_ARGUMENT:Root element must be a message.)")
    for field in sorted(doc):
        if field not in BOOTSTRAP_FIELDS:
            raise _unknown_fields(field)
    static = doc.get("static_resources") or {}
    clusters = _clusters(static.get("clusters") or [])
    names = {c.name for c in clusters}
    listeners = static.get("listeners") or []
    hcm: dict[str, Any] = {}
    for listener in listeners:
        for chain in (listener or {}).get("filter_chains") or []:
            for network_filter in (chain or {}).get("filters") or []:
                if (network_filter or {}).get("name") == HCM:
                    hcm = network_filter.get("typed_config") or {}
                    break
    hosts = ((hcm.get("route_config") or {}).get("virtual_hosts")) or [{}]
    routes = _routes(hosts[0].get("routes") or [])
    for route in routes:
        if route.cluster and route.cluster not in names:
            raise EnvoyConfigError(f"route: unknown cluster '{route.cluster}'")
    filters = parse_http_filters(hcm.get("http_filters")) if hcm else ()
    sink, log_format, attributes = _access_log(hcm)
    return EnvoyConfig(routes=routes, clusters=clusters, log_format=log_format,
                       stat_prefix=str(hcm.get("stat_prefix") or "ingress_http"), version=version,
                       access_log=sink, log_attributes=attributes, http_filters=filters)


def start_envoy(call: Any, template: str, config_name: str = "envoy.yaml") -> int | None:
    """The entrypoint's `envsubst` and Envoy's configuration load for one container start.

    On success the loaded configuration is kept with the container (`LOADED_CONFIG`) and None
    is returned; on a configuration Envoy refuses it prints what Envoy prints and returns 1."""
    rendered = envsubst(template, dict(call.ctx.env or {}))
    try:
        config = load_bootstrap(rendered)
    except EnvoyConfigError as exc:
        message = str(exc)
        call.write(format_log("envoy", call.now, "critical", "main",
                              f"{LOAD_ERROR_SOURCE} error initializing configuration '{config_name}': {message}")
                   + "\n")
        call.write(format_log("envoy", call.now, "info", "main", f"{EXIT_SOURCE} exiting") + "\n")
        call.write(message + "\n", "stderr")
        return 1
    call.ctx.extras[LOADED_CONFIG] = config
    return None


__all__ = ["EnvoyConfigError", "envsubst", "load_bootstrap", "start_envoy"]
