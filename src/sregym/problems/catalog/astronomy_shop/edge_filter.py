"""Astronomy Shop's edge proxy given a request-filter rule that backtracks (SREGym
`edge_request_filter_cpu_saturation`).

SREGym replaces frontend-proxy's command with a Perl request filter whose rule comes from
`WAF_RULE_REGEX` (`^([a-zA-Z]+)*$`), caps the container at 100m CPU and starts a loop inside
load-generator sending `/?waf=<5000 letters>!`. The twin's equivalent keeps Envoy and changes
only its configuration, as an edge team would ship a rule: a ConfigMap holding frontend-proxy's
`envoy.tmpl.yaml` with a Lua filter (`envoy.filters.http.lua`) ahead of the demo's filters,
mounted over the image's template (the rule replaces the demo's header-delay filter in that
chain), and the container's 100m CPU limit. Lua's matcher
backtracks: the rule's three overlapping repeated classes cost O(n³) steps on a long argument
ending in a character none accepts, so each crafted request holds Envoy's CPU for seconds
(`twin/dataplane/envoy_filters.py`), the 100m quota is throttled in every period and every page
behind the proxy slows down and times out. The crafted requests come from a wrk2 client at 2
requests/s, outside the app (the hidden `sregym-system` namespace): they reach the proxy as
users' requests do, and keep coming after any fix, as hostile traffic would.

Fix: correct the rule (`^%a[%w_]*$`, linear) or remove the filter, in the ConfigMap, and restart
frontend-proxy (Envoy reads its configuration only at start). Raising the CPU limit does not
help: a crafted request needs more CPU than the node has.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

from sregym.apps.astronomy_shop import NAMESPACE
from sregym.apps.loadgen.wrk2 import APP_ANNOTATION, IMAGE, LOADGEN_NAMESPACE
from sregym.problems.catalog.astronomy_shop.common import (
    APP,
    IMPACT,
    SETTLE_S,
    SUITE,
    WINDOW_S,
    deploy,
    restart,
)
from sregym.problems.model import Action, CheckSpec, FaultSpec, MitigationSpec, Problem, Tags
from sregym.problems.registry import problem
from sregym.problems.vocabulary import mechanisms
from sregym.types import EntityPattern, GroundTruth, RootCause

mechanisms({
    "request_filter_backtracking": (
        "backtrack", "catastrophic", "redos", "regex", "lua filter", "lua pattern", "request filter", "waf",
        "envoy.filters.http.lua", "http_filters", "filter rule", "token_rule"),
}, related={"request_filter_backtracking": ("cpu_throttling",)})

PROXY = "frontend-proxy"
CONFIGMAP = "frontend-proxy-config"
TEMPLATE_KEY = "envoy.tmpl.yaml"
TEMPLATE_PATH = "/home/envoy/envoy.tmpl.yaml"
BAD_RULE = "^%a[%w_]*%w*[%w_]*$"
FIXED_RULE = "^%a[%w_]*$"
CPU_LIMIT = "100m"
ARGUMENT = "waf"
CRAFTED_VALUE = "a" * 5000 + "!"
CRAFTED_RATE = 2
TRAFFIC = "sregym-loadgen-edge"
# The shop's browser users come back over up to three minutes once pages load again (a page load
# stuck behind the saturated proxy ends only at its timeout), and the entry SLO is judged on the
# last minute at every sample of the window's second half: that half starts after the return.
RECOVERY_WINDOW_S = WINDOW_S + 360.0


def lua_filter(rule: str) -> str:
    """The http_filters entry of the edge rule (YAML at the template's indentation)."""
    code = (f'-- edge request filter, managed rules v2: the {ARGUMENT} token must be a word\n'
            f'local TOKEN_RULE = "{rule}"\n'
            "\n"
            "function envoy_on_request(request_handle)\n"
            '  local path = request_handle:headers():get(":path") or ""\n'
            f'  local token = path:match("[?&]{ARGUMENT}=([^&]*)")\n'
            '  if token ~= nil and token ~= "" and token:find(TOKEN_RULE) == nil then\n'
            '    request_handle:logWarn("edge filter: token rejected, length " .. #token)\n'
            "  end\n"
            "end\n")
    indent = " " * 28
    body = "".join(indent + line + "\n" if line else "\n" for line in code.splitlines())
    return ("                  - name: envoy.filters.http.lua\n"
            "                    typed_config:\n"
            '                      "@type": type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua\n'
            "                      default_source_code:\n"
            "                        inline_string: |\n" + body)


@cache
def image_template() -> str:
    """The frontend-proxy image's own `envoy.tmpl.yaml`."""
    return resources.files("sregym.apps.astronomy_shop").joinpath(TEMPLATE_KEY).read_text()


def template_with_rule(rule: str) -> str:
    """The image's template with the edge rule in place of the demo's header-delay filter: the
    edge team's chain is their rule and the router (the demo's delay filter only serves its
    `imageSlowLoad` flag, which no problem here turns on)."""
    text = image_template()
    anchor = "                http_filters:\n"
    router = "                  - name: envoy.filters.http.router\n"
    if anchor not in text or router not in text:
        raise ValueError("frontend-proxy's template has no http_filters ending in the router")
    head, _, rest = text.partition(anchor)
    _, _, tail = rest.partition(router)
    return head + anchor + lua_filter(rule) + router + tail


def template_configmap(name: str, template: str) -> dict[str, Any]:
    """A ConfigMap holding a frontend-proxy `envoy.tmpl.yaml`, labelled as the proxy's own."""
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": NAMESPACE,
                         "labels": {"app.kubernetes.io/name": PROXY, "app.kubernetes.io/component": PROXY}},
            "data": {TEMPLATE_KEY: template}}


def template_mount_patch(configmap: str, volume: str, annotations: dict[str, str],
                         **container: Any) -> dict[str, Any]:
    """A patch of frontend-proxy mounting `configmap`'s template over the image's (the rollout
    restarts the proxy, which reads it at start), with the change's pod-template `annotations`
    and any further `container` fields."""
    return {"kind": "Deployment", "namespace": NAMESPACE, "name": PROXY, "patch": {"spec": {"template": {
        "metadata": {"annotations": annotations},
        "spec": {"containers": [{"name": PROXY, **container,
                                 "volumeMounts": [{"name": volume, "mountPath": TEMPLATE_PATH,
                                                   "subPath": TEMPLATE_KEY}]}],
                 "volumes": [{"name": volume, "configMap": {"name": configmap}}]}}}}}


def _configmap() -> dict[str, Any]:
    return template_configmap(CONFIGMAP, template_with_rule(BAD_RULE))


def _proxy_patch() -> dict[str, Any]:
    """Mount the ConfigMap over the image's template; cap the container at 100m CPU."""
    return template_mount_patch(CONFIGMAP, "envoy-config", {"edge.platform/change-ticket": "EDGE-1847",
                                                           "edge.platform/filter-profile": "managed-rules-v2"},
                                resources={"limits": {"cpu": CPU_LIMIT}})


def _crafted_traffic() -> dict[str, Any]:
    """A wrk2 client sending the crafted request at a steady rate from outside the app."""
    labels = {"app.kubernetes.io/name": TRAFFIC, "app.kubernetes.io/instance": TRAFFIC}
    url = f"http://{PROXY}.{NAMESPACE}.svc.cluster.local:8080/?{ARGUMENT}={CRAFTED_VALUE}"
    loop = f"while true; do wrk -t1 -c2 -d1h -T10s {url} -R{CRAFTED_RATE}; done"
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": TRAFFIC, "namespace": LOADGEN_NAMESPACE, "labels": labels,
                         "annotations": {APP_ANNOTATION: TRAFFIC}},
            "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels, "annotations": {APP_ANNOTATION: TRAFFIC}},
                                  "spec": {"containers": [{
                                      "name": TRAFFIC, "image": IMAGE, "command": ["/bin/sh", "-c"], "args": [loop],
                                      "resources": {"requests": {"cpu": "50m", "memory": "32Mi"}}}]}}}}


@problem
def edge_request_filter_cpu_saturation() -> Problem:
    """frontend-proxy's Envoy gets an edge request-filter rule (a Lua filter in its mounted
    `envoy.tmpl.yaml`, ConfigMap `frontend-proxy-config`) whose pattern `^%a[%w_]*%w*[%w_]*$`
    backtracks, and a 100m CPU limit. Requests carrying a long near-matching `waf` argument
    arrive steadily; each pins the proxy's CPU.

    Symptoms: frontend-proxy is Running and Ready but throttled in every CFS period
    (ContainerCPUThrottling), its CPU at the limit; every page through it is slow and times out;
    the services behind it are idle and healthy. The access log shows the `/?waf=aaaa…!` requests.
    Fix: correct or remove the rule in the ConfigMap and restart frontend-proxy.
    """
    fixed = template_with_rule(FIXED_RULE)
    return Problem(
        id="astronomy-shop/edge-request-filter-cpu-saturation-v1",
        title="every page of the shop is slow; the edge proxy is at its CPU limit",
        app=APP, namespace=NAMESPACE,
        tags=Tags(layers=("app", "config"), difficulty="hard", suites=(SUITE,),
                  sources=("sregym:edge_request_filter_cpu_saturation",)),
        faults=(
            FaultSpec(fault="create_objects", params={"objects": [_configmap()]}),
            FaultSpec(fault="patch_objects", params={"patches": [_proxy_patch()]}),
            FaultSpec(fault="wait_pod_turnover", params={"namespace": NAMESPACE,
                                                         "label_selector": f"opentelemetry.io/name={PROXY}"}),
            FaultSpec(fault="create_objects", params={"objects": [
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": LOADGEN_NAMESPACE}},
                _crafted_traffic()]}),
        ),
        ground_truth=GroundTruth(
            root_causes=(RootCause(entity=deploy(PROXY).entity, aliases=(
                *deploy(PROXY).aliases, EntityPattern(kind="ConfigMap", namespace=NAMESPACE, name=CONFIGMAP))),),
            mechanism="request_filter_backtracking",
            detail=f"the Lua request filter added to frontend-proxy's Envoy configuration (ConfigMap {CONFIGMAP}) "
                   f"tests the `{ARGUMENT}` query argument against `{BAD_RULE}`, whose overlapping repeated "
                   f"classes backtrack catastrophically on long crafted values; under the {CPU_LIMIT} CPU limit "
                   "the proxy is throttled and every request queues",
            detail_keywords=("backtrack", "lua", "filter", BAD_RULE, ARGUMENT, CONFIGMAP, "regex", "pattern"),
            affected=(deploy("frontend"),), impact_keywords=IMPACT,
            description="A new edge filter rule on frontend-proxy spends seconds of CPU per crafted request; the "
                        "proxy saturates its CPU limit and every page through it slows down and times out."),
        # Not a CPU-throttling check: it would fail on the chart's proxy, which has no CPU limit.
        mitigation=MitigationSpec(must_fix=(CheckSpec(check="entry_slo"),), window_s=RECOVERY_WINDOW_S),
        gold=(Action(op="patch", kind="ConfigMap", namespace=NAMESPACE, name=CONFIGMAP, patch_type="merge",
                     patch={"data": {TEMPLATE_KEY: fixed}}),
              restart(PROXY)),
        settle_s=SETTLE_S,
    )


__all__ = ["BAD_RULE", "CONFIGMAP", "FIXED_RULE", "PROXY", "TEMPLATE_KEY", "edge_request_filter_cpu_saturation",
           "image_template", "lua_filter", "template_configmap", "template_mount_patch", "template_with_rule"]
