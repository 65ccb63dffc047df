"""Envoy's admin interface (`admin.address`, port 10000 in the demo) over the counters the router
replay keeps (`envoy.py`): `/stats/prometheus`, `/stats`, `/clusters`, `/ready`.

Names follow Envoy's stats: `cluster.<name>.upstream_rq_total` in `/stats`, and in Prometheus form
the tag-extracted `envoy_cluster_upstream_rq_total{envoy_cluster_name="<name>"}`,
`envoy_cluster_upstream_rq_xx{envoy_response_code_class="5",envoy_cluster_name=...}`,
`envoy_cluster_upstream_rq{envoy_response_code="503",...}`. Every configured cluster reports
its counters, zero until used, and its membership from what its STRICT_DNS name resolves to.
Only reachable where Envoy listens: the chart exposes no admin port on the Service and no scrape
job reads it, so these series are not in Prometheus.
"""

from __future__ import annotations

import re
from typing import Any

from sregym.twin.dataplane.envoy import EnvoyConfig, EnvoyState, config_of
from sregym.twin.dataplane.pages import Page, PageRequest

CLUSTER_COUNTERS = ("upstream_cx_connect_fail", "upstream_cx_destroy_remote", "upstream_cx_none_healthy",
                    "upstream_cx_total", "upstream_rq_completed", "upstream_rq_pending_failure_eject",
                    "upstream_rq_timeout", "upstream_rq_total")
HTTP_COUNTERS = ("downstream_rq_1xx", "downstream_rq_2xx", "downstream_rq_3xx", "downstream_rq_4xx",
                 "downstream_rq_5xx", "downstream_rq_total")
_CODE = re.compile(r"^upstream_rq_(\d)(xx|\d\d)$")
_TEXT = {"content-type": "text/plain; charset=UTF-8", "cache-control": "no-cache, max-age=0",
         "x-content-type-options": "nosniff", "server": "envoy"}
HELP = ("admin commands are:\n  /: Admin home page\n  /clusters: upstream cluster status\n"
        "  /ready: print server state, return 200 if LIVE, otherwise return 503\n"
        "  /server_info: print server version/status information\n  /stats: print server stats\n"
        "  /stats/prometheus: print server stats in prometheus format\n")


def stats(config: EnvoyConfig, state: EnvoyState) -> dict[str, float]:
    """Every stat by its Envoy name (counters and the membership gauges)."""
    out: dict[str, float] = {}
    for cluster in config.clusters:
        base = f"cluster.{cluster.name}."
        for name in CLUSTER_COUNTERS:
            out[base + name] = 0.0
        hosts = state.healthy.get(cluster.name, [])
        out[base + "membership_healthy"] = float(len(hosts))
        out[base + "membership_total"] = float(len(hosts))
        out[base + "membership_degraded"] = 0.0
    for name in HTTP_COUNTERS:
        out[f"http.{config.stat_prefix}.{name}"] = 0.0
    for name, value in state.counters.items():
        out[name] = out.get(name, 0.0) + value
    out["server.live"] = 1.0
    return out


def prometheus(config: EnvoyConfig, state: EnvoyState) -> str:
    families: dict[str, tuple[str, list[tuple[str, float]]]] = {}
    for name, value in sorted(stats(config, state).items()):
        family, labels = _prom_name(name)
        if family is None:
            continue
        kind = "gauge" if "membership" in name or name == "server.live" else "counter"
        families.setdefault(family, (kind, []))[1].append((labels, value))
    lines: list[str] = []
    for family in sorted(families):
        kind, samples = families[family]
        lines.append(f"# TYPE {family} {kind}")
        lines.extend(f"{family}{{{labels}}} {int(value)}" if labels else f"{family} {int(value)}"
                     for labels, value in samples)
    return "\n".join(lines) + "\n"


def _prom_name(name: str) -> tuple[str | None, str]:
    if name.startswith("cluster."):
        _, cluster, stat = name.split(".", 2)
        tag = f'envoy_cluster_name="{cluster}"'
        code = _CODE.match(stat)
        if code is not None and code.group(2) == "xx":
            return "envoy_cluster_upstream_rq_xx", f'envoy_response_code_class="{code.group(1)}",{tag}'
        if code is not None:
            return "envoy_cluster_upstream_rq", f'envoy_response_code="{code.group(1)}{code.group(2)}",{tag}'
        return f"envoy_cluster_{stat}", tag
    if name.startswith("http."):
        _, prefix, stat = name.split(".", 2)
        tag = f'envoy_http_conn_manager_prefix="{prefix}"'
        if stat.startswith("downstream_rq_") and stat[-2:] == "xx":
            return "envoy_http_downstream_rq_xx", f'envoy_response_code_class="{stat[-3]}",{tag}'
        return f"envoy_http_{stat}", tag
    if name.startswith("server."):
        return "envoy_server_" + name.split(".", 1)[1], ""
    return None, ""


def clusters(config: EnvoyConfig, state: EnvoyState) -> str:
    values = stats(config, state)
    lines: list[str] = []
    for cluster in config.clusters:
        c = cluster.name
        lines += [f"{c}::observability_name::{c}", f"{c}::default_priority::max_connections::1024",
                  f"{c}::default_priority::max_pending_requests::1024", f"{c}::default_priority::max_requests::1024",
                  f"{c}::default_priority::max_retries::3", f"{c}::high_priority::max_connections::1024",
                  f"{c}::high_priority::max_pending_requests::1024", f"{c}::high_priority::max_requests::1024",
                  f"{c}::high_priority::max_retries::3", f"{c}::added_via_api::false"]
        base = f"cluster.{c}."
        total = int(values.get(base + "upstream_rq_total", 0.0))
        errors = int(sum(v for k, v in values.items() if k.startswith(base + "upstream_rq_5")
                         and k != base + "upstream_rq_5xx"))
        for host in state.healthy.get(c, []):
            lines += [f"{c}::{host}::cx_active::0",
                      f"{c}::{host}::cx_connect_fail::{int(values.get(base + 'upstream_cx_connect_fail', 0.0))}",
                      f"{c}::{host}::cx_total::{int(values.get(base + 'upstream_cx_total', 0.0))}",
                      f"{c}::{host}::rq_active::0", f"{c}::{host}::rq_error::{errors}",
                      f"{c}::{host}::rq_success::{max(0, total - errors)}",
                      f"{c}::{host}::rq_timeout::{int(values.get(base + 'upstream_rq_timeout', 0.0))}",
                      f"{c}::{host}::rq_total::{total}", f"{c}::{host}::hostname::{_hostname(c, state)}",
                      f"{c}::{host}::health_flags::healthy", f"{c}::{host}::weight::1",
                      f"{c}::{host}::region::", f"{c}::{host}::zone::", f"{c}::{host}::sub_zone::",
                      f"{c}::{host}::canary::false", f"{c}::{host}::priority::0",
                      f"{c}::{host}::success_rate::-1", f"{c}::{host}::local_origin_success_rate::-1"]
    return "\n".join(lines) + "\n"


def _hostname(cluster: str, state: EnvoyState) -> str:
    return state.hostnames.get(cluster, "")


def admin_page(engine: Any, found: tuple[Any, Any, Any], req: PageRequest) -> Page | None:
    """The admin listener's answer; None when the process is not a registered Envoy."""
    proxies = engine.twin.services.envoy
    runtime, instance, _listen = found
    match = next(((key, proc) for key, proc in engine.procs.items()
                  if proc.pod_ip == runtime.ip and proc.inst.ctx is instance.ctx), None)
    if match is None or proxies is None:
        return None
    key, proc = match
    config = config_of(proc)
    if config is None:
        return None
    state = proxies.states.get(key) or EnvoyState()
    path = req.path.rstrip("/") or "/"
    if path == "/stats/prometheus":
        return Page(200, prometheus(config, state), {**_TEXT, "content-type": "text/plain; charset=UTF-8"})
    if path == "/stats":
        body = "".join(f"{name}: {int(value)}\n" for name, value in sorted(stats(config, state).items()))
        return Page(200, body, dict(_TEXT))
    if path == "/clusters":
        return Page(200, clusters(config, state), dict(_TEXT))
    if path == "/ready":
        return Page(200, "LIVE\n", dict(_TEXT))
    return Page(404, "invalid path. " + HELP, dict(_TEXT))

__all__ = ["admin_page", "clusters", "prometheus", "stats"]
