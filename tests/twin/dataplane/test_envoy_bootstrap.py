"""Envoy's configuration as data: the demo image's template rendered with the chart's env is the
router the twin ran with its routes in code; what Envoy refuses stops its start with Envoy's
message; a Lua request filter costs what its rule costs on the request."""

from __future__ import annotations

import pytest

from sregym.apps.astronomy_shop.envoy_config import FRONTEND_PROXY
from sregym.apps.astronomy_shop.manifests import values
from sregym.problems.catalog.astronomy_shop.edge_filter import (
    BAD_RULE,
    FIXED_RULE,
    image_template,
    template_with_rule,
)
from sregym.twin.dataplane.envoy_bootstrap import envsubst, load_bootstrap
from sregym.twin.dataplane.envoy_filters import LUA_BASE_MS, RUNAWAY_MS, EnvoyConfigError, request_cpu_ms

CRAFTED = "/?waf=" + "a" * 5000 + "!"


def _chart_env() -> dict[str, str]:
    env = values()["components"]["frontend-proxy"]["env"]
    return {e["name"]: str(e.get("value", "")) for e in env}


def test_envsubst_fills_both_forms_and_empties_unset_variables() -> None:
    assert envsubst("${A}:$B:${C}", {"A": "x", "B": "y"}) == "x:y:"


def test_the_image_template_is_the_router_the_demo_runs() -> None:
    env = _chart_env()
    config = load_bootstrap(envsubst(image_template(), env))
    key = lambda r: (r.prefix, r.cluster, r.exact, r.timeout_ms, r.redirect, r.retries)  # noqa: E731
    assert [key(r) for r in config.routes] == [key(r) for r in FRONTEND_PROXY.routes]
    assert [(c.name, c.address({})) for c in config.clusters] == \
        [(c.name, c.address(env)) for c in FRONTEND_PROXY.clusters]
    assert (config.log_format, config.log_attributes, config.access_log) == \
        (FRONTEND_PROXY.log_format, FRONTEND_PROXY.log_attributes, FRONTEND_PROXY.access_log)
    assert [f.kind for f in config.http_filters] == ["envoy.filters.http.fault", "envoy.filters.http.router"]
    assert request_cpu_ms(config.http_filters, CRAFTED) == 0.0  # no request filter: the base cost only


@pytest.mark.parametrize(("edit", "message"), [
    (lambda t: t.replace("route: { cluster: frontend }", "route: { cluster: frontend-v2 }"),
     "route: unknown cluster 'frontend-v2'"),
    (lambda t: t.replace("envoy.extensions.filters.http.fault.v3.HTTPFault", "envoy.extensions.filters.http.waf.v3.Waf"),
     "Didn't find a registered implementation for 'envoy.filters.http.fault' with type URL: "
     "'envoy.extensions.filters.http.waf.v3.Waf'"),
    (lambda t: t.replace("                  - name: envoy.filters.http.router\n", "                  - name: x\n")
     .replace("http_filters:\n", "http_filters:\n                  - name: envoy.filters.http.router\n"
              "                    typed_config:\n                      \"@type\": type.googleapis.com/envoy.extensions."
              "filters.http.router.v3.Router\n", 1),
     "Error: terminal filter named envoy.filters.http.router of type envoy.filters.http.router must be the last"),
    (lambda t: t.replace("static_resources:", "static_resource:"),
     "INVALID_ARGUMENT:static_resource: Cannot find field.) has unknown fields"),
    (lambda t: t.replace("  clusters:", "  clusters: [", 1), "Unable to convert YAML as JSON: yaml-cpp: error at line"),
])
def test_a_configuration_envoy_refuses_raises_envoys_message(edit, message: str) -> None:
    with pytest.raises(EnvoyConfigError) as raised:
        load_bootstrap(envsubst(edit(image_template()), _chart_env()))
    assert message in str(raised.value)


def test_the_lua_rule_costs_what_its_matcher_does_on_each_request() -> None:
    env = _chart_env()
    bad = load_bootstrap(envsubst(template_with_rule(BAD_RULE), env)).http_filters
    fixed = load_bootstrap(envsubst(template_with_rule(FIXED_RULE), env)).http_filters
    (lua,) = [f for f in bad if f.inspection is not None]
    assert lua.inspection.argument == "waf" and lua.inspection.rules == (BAD_RULE,)
    assert request_cpu_ms(bad, "/api/products") < LUA_BASE_MS + 0.01  # no argument: the filter's overhead
    assert request_cpu_ms(bad, "/?waf=alice_1") < LUA_BASE_MS + 0.01
    assert request_cpu_ms(bad, CRAFTED) >= RUNAWAY_MS  # seconds of CPU per crafted request
    assert request_cpu_ms(fixed, CRAFTED) < 1.0  # the linear rule: well under a millisecond
