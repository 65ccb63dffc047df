"""frontend-proxy reads its Envoy configuration from a file at start, through real kubectl: a
ConfigMap mounted over the image's `envoy.tmpl.yaml` is what Envoy runs; editing it changes
nothing until the pod restarts; a broken one stops Envoy's start with Envoy's own error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from sregym.apps import deploy_app
from sregym.problems.catalog.astronomy_shop.edge_filter import image_template
from sregym.twin import Twin
from sregym.twin.dataplane.envoy import LOADED_CONFIG
from support.kube import KubeHarness, serve_twin

NS = "astronomy-shop"
MOUNT = {"spec": {"template": {"spec": {
    "containers": [{"name": "frontend-proxy", "volumeMounts": [
        {"name": "envoy-config", "mountPath": "/home/envoy/envoy.tmpl.yaml", "subPath": "envoy.tmpl.yaml"}]}],
    "volumes": [{"name": "envoy-config", "configMap": {"name": "frontend-proxy-config"}}]}}}}


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> KubeHarness:
    twin = Twin(seed=4)
    deploy_app(twin, NS)
    twin.advance(60)
    h = serve_twin(twin, Path(tmp_path_factory.mktemp("envoy-config")))
    yield h
    h.server.stop()


def _configmap(text: str) -> str:
    return yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap",
                           "metadata": {"name": "frontend-proxy-config", "namespace": NS},
                           "data": {"envoy.tmpl.yaml": text}})


def _proxy_pods(h: KubeHarness) -> list[dict]:
    out = h.ok("get", "pods", "-n", NS, "-l", "opentelemetry.io/name=frontend-proxy", "-o", "json", user="admin")
    return [p for p in json.loads(out)["items"] if not p["metadata"].get("deletionTimestamp")]


def _loaded_routes(h: KubeHarness) -> list[str]:
    def read(twin: Twin) -> list[str]:
        engine = twin.services.dataplane
        procs = [p for p in engine.procs.values() if p.inst.spec.name.endswith("frontend-proxy")]
        return [r.prefix for r in procs[0].inst.ctx.extras[LOADED_CONFIG].routes]
    return h.call(read, h.twin)


def test_a_mounted_template_is_loaded_at_start_and_only_then(harness: KubeHarness) -> None:
    h = harness
    assert "/grafana/" in _loaded_routes(h)  # the image's own template
    without_grafana = image_template().replace('                        - match: { prefix: "/grafana/" }\n'
                                               '                          route: { cluster: grafana }\n', "")
    h.ok("apply", "-f", "-", input=_configmap(without_grafana), user="admin")
    h.ok("patch", "deployment", "frontend-proxy", "-n", NS, "--type", "strategic", "-p", json.dumps(MOUNT),
         user="admin")
    h.advance(60)
    assert "/grafana/" not in _loaded_routes(h)
    # An edit of the ConfigMap alone does not reach the running Envoy: it read its file at start.
    broken = image_template().replace("route: { cluster: frontend }", "route: { cluster: frontend-v2 }")
    h.ok("apply", "-f", "-", input=_configmap(broken), user="admin")
    h.advance(60)
    pods = _proxy_pods(h)
    assert len(pods) == 1 and pods[0]["status"]["containerStatuses"][0]["ready"]
    assert "/grafana/" not in _loaded_routes(h)


def test_a_broken_template_stops_envoys_start_with_its_error(harness: KubeHarness) -> None:
    h = harness
    h.ok("rollout", "restart", "deployment/frontend-proxy", "-n", NS, user="admin")
    h.advance(90)
    failing = [p for p in _proxy_pods(h) if not p["status"]["containerStatuses"][0]["ready"]]
    assert failing, "the restarted proxy should not become ready"
    status = failing[0]["status"]["containerStatuses"][0]
    assert status["restartCount"] >= 1
    name = failing[0]["metadata"]["name"]
    logs = h.kubectl("logs", name, "-n", NS, "--previous").stdout
    assert "[critical][main] [source/server/server.cc:117] error initializing configuration 'envoy.yaml': " \
        "route: unknown cluster 'frontend-v2'" in logs
    assert "exiting" in logs
