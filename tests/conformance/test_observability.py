"""Observability APIs as an SRE sees them: Prometheus' targets, configuration and status pages,
metadata with help text, Loki's and Jaeger's status and error shapes, and every label value
naming something `kubectl get` shows (Prometheus 2.53, Loki 3.1, Jaeger 1.x wire shapes)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml

from support.kube import KubeHarness

RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")


def fetch(base: str, path: str, params: dict[str, str] | None = None) -> tuple[int, str]:
    url = base + path + ("?" + urllib.parse.urlencode(params) if params else "")
    try:
        with urllib.request.urlopen(url, timeout=60) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def prom(cluster: KubeHarness, path: str, params: dict[str, str] | None = None,
         status: int = 200) -> Any:
    code, body = fetch(cluster.observability["prometheus"], path, params)
    assert code == status, (path, code, body[:300])
    doc = json.loads(body)
    assert doc["status"] == ("success" if status == 200 else "error"), doc
    return doc["data"] if status == 200 else doc


# ------------------------------------------------------------------------ targets
def test_targets_are_exactly_the_up_series(cluster: KubeHarness) -> None:
    data = prom(cluster, "/api/v1/targets")
    assert set(data) == {"activeTargets", "droppedTargets", "droppedTargetCounts"}
    active = data["activeTargets"]
    up = prom(cluster, "/api/v1/query", {"query": "up"})["result"]
    assert {(t["labels"]["job"], t["labels"]["instance"]) for t in active} == \
        {(s["metric"]["job"], s["metric"]["instance"]) for s in up}
    for target in active:
        assert set(target) == {"discoveredLabels", "labels", "scrapePool", "scrapeUrl", "globalUrl", "lastError",
                               "lastScrape", "lastScrapeDuration", "health", "scrapeInterval", "scrapeTimeout"}
        assert target["health"] == "up" and target["lastError"] == ""
        assert RFC3339.match(target["lastScrape"]), target["lastScrape"]
        assert target["scrapeUrl"].startswith(("http://", "https://"))
        assert target["labels"]["instance"] in target["scrapeUrl"]
        assert target["discoveredLabels"]["__address__"] == target["labels"]["instance"]
        assert target["discoveredLabels"]["job"] == target["scrapePool"]
        assert not any(k.startswith("__") for k in target["labels"])
        assert target["scrapePool"].startswith("serviceMonitor/")


@pytest.mark.parametrize(("state", "active", "dropped_counts"), [
    ("active", True, False), ("dropped", False, True), ("any", True, True), ("ACTIVE", True, False),
])
def test_targets_state_filter(cluster: KubeHarness, state: str, active: bool, dropped_counts: bool) -> None:
    data = prom(cluster, "/api/v1/targets", {"state": state})
    assert bool(data["activeTargets"]) is active
    assert data["droppedTargets"] == []
    assert (data["droppedTargetCounts"] is not None) is dropped_counts


def test_targets_scrape_pool_filter_and_pools(cluster: KubeHarness) -> None:
    pools = prom(cluster, "/api/v1/scrape_pools")["scrapePools"]
    assert pools == sorted(pools)
    ksm = "serviceMonitor/monitoring/kube-prometheus-stack-kube-state-metrics/0"
    assert ksm in pools
    only = prom(cluster, "/api/v1/targets", {"scrapePool": ksm})["activeTargets"]
    assert [t["scrapePool"] for t in only] == [ksm]
    assert only[0]["labels"]["job"] == "kube-state-metrics"
    assert prom(cluster, "/api/v1/targets", {"scrapePool": "nope"})["activeTargets"] == []


def test_target_metadata(cluster: KubeHarness) -> None:
    rows = prom(cluster, "/api/v1/targets/metadata", {"match_target": '{job="kube-state-metrics"}',
                                                      "metric": "kube_pod_info"})
    assert rows and rows[0]["metric"] == "kube_pod_info"
    assert set(rows[0]) == {"target", "metric", "type", "help", "unit"}
    assert rows[0]["type"] == "gauge" and rows[0]["help"] == "[STABLE] Information about pod."
    assert rows[0]["target"]["job"] == "kube-state-metrics"
    limited = prom(cluster, "/api/v1/targets/metadata", {"match_target": '{job="node-exporter"}', "limit": "2"})
    assert len(limited) == 2
    missing = prom(cluster, "/api/v1/targets/metadata", {"metric": "no_such_metric"}, status=404)
    assert missing["errorType"] == "not_found" and missing["error"] == "specified metadata not found"
    bad = prom(cluster, "/api/v1/targets/metadata", {"match_target": "{job="}, status=400)
    assert bad["errorType"] == "bad_data"


# ------------------------------------------------------------------------- status
def test_status_config_matches_targets(cluster: KubeHarness, tmp_path: Path) -> None:
    text = prom(cluster, "/api/v1/status/config")["yaml"]
    config = yaml.safe_load(text)
    assert set(config) >= {"global", "scrape_configs"}
    assert config["global"]["scrape_interval"] == "15s"
    jobs = [c["job_name"] for c in config["scrape_configs"]]
    assert jobs == prom(cluster, "/api/v1/scrape_pools")["scrapePools"]
    for scrape in config["scrape_configs"]:
        assert scrape["kubernetes_sd_configs"][0]["role"] == "endpoints"
        assert scrape["scheme"] in ("http", "https")
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool is not installed")
    version = subprocess.run([promtool, "--version"], capture_output=True, text=True, check=False).stdout
    found = re.search(r"version (\d+)\.(\d+)", version)
    if not found or (int(found[1]), int(found[2])) < (2, 53):
        pytest.skip(f"promtool {found[0] if found else '?'} predates the 2.53 config fields "
                    "(scrape_protocols, kubernetes_sd_configs in Debian's build)")
    path = tmp_path / "prometheus.yml"
    path.write_text(text)
    result = subprocess.run([promtool, "check", "config", "--syntax-only", str(path)], capture_output=True,
                            text=True, check=False)
    assert result.returncode == 0, result.stderr


def test_status_tsdb(cluster: KubeHarness) -> None:
    data = prom(cluster, "/api/v1/status/tsdb")
    head = data["headStats"]
    assert set(head) == {"numSeries", "numLabelPairs", "chunkCount", "minTime", "maxTime"}
    assert head["numSeries"] > 100 and head["minTime"] < head["maxTime"]
    for table in ("seriesCountByMetricName", "labelValueCountByLabelName", "memoryInBytesByLabelName",
                  "seriesCountByLabelValuePair"):
        rows = data[table]
        assert len(rows) == 10 and all(set(r) == {"name", "value"} for r in rows)
        assert [r["value"] for r in rows] == sorted((r["value"] for r in rows), reverse=True)
    top = data["seriesCountByMetricName"][0]
    count = prom(cluster, "/api/v1/query", {"query": f"count({{__name__=\"{top['name']}\"}})"})["result"]
    assert count and int(count[0]["value"][1]) <= top["value"]
    assert len(prom(cluster, "/api/v1/status/tsdb", {"limit": "3"})["seriesCountByMetricName"]) == 3


@pytest.mark.parametrize(("path", "params", "error"), [
    ("/api/v1/status/tsdb", {"limit": "0"}, "limit must be a positive number"),
    ("/api/v1/status/tsdb", {"limit": "x"}, "limit must be a positive number"),
    ("/api/v1/metadata", {"limit": "x"}, "limit must be a number"),
    ("/api/v1/metadata", {"limit_per_metric": "x"}, "limit_per_metric must be a number"),
    ("/api/v1/targets/metadata", {"limit": "x"}, "limit must be a number"),
])
def test_status_parameter_errors(cluster: KubeHarness, path: str, params: dict[str, str], error: str) -> None:
    doc = prom(cluster, path, params, status=400)
    assert doc == {"status": "error", "errorType": "bad_data", "error": error}


@pytest.mark.parametrize(("path", "keys"), [
    ("/api/v1/status/buildinfo", {"version", "revision", "branch", "buildUser", "buildDate", "goVersion"}),
    ("/api/v1/status/runtimeinfo", {"startTime", "CWD", "reloadConfigSuccess", "lastConfigTime",
                                    "corruptionCount", "goroutineCount", "GOMAXPROCS", "GOGC", "GODEBUG",
                                    "storageRetention"}),
    ("/api/v1/status/walreplay", {"min", "max", "current"}),
    ("/api/v1/alertmanagers", {"activeAlertmanagers", "droppedAlertmanagers"}),
])
def test_status_pages_shape(cluster: KubeHarness, path: str, keys: set[str]) -> None:
    assert set(prom(cluster, path)) >= keys


def test_status_flags(cluster: KubeHarness) -> None:
    flags = prom(cluster, "/api/v1/status/flags")
    assert all(isinstance(v, str) for v in flags.values())
    assert flags["storage.tsdb.path"] == "/prometheus"
    assert flags["query.lookback-delta"] == "5m"
    assert flags["storage.tsdb.retention.time"] == prom(cluster, "/api/v1/status/runtimeinfo")["storageRetention"]


@pytest.mark.parametrize(("path", "body"), [
    ("/-/ready", "Prometheus Server is Ready.\n"), ("/-/healthy", "Prometheus Server is Healthy.\n"),
])
def test_prometheus_health(cluster: KubeHarness, path: str, body: str) -> None:
    assert fetch(cluster.observability["prometheus"], path) == (200, body)


# ----------------------------------------------------------------------- metadata
@pytest.mark.parametrize(("metric", "kind", "help_text"), [
    ("kube_pod_info", "gauge", "[STABLE] Information about pod."),
    ("node_cpu_seconds_total", "counter", "Seconds the CPUs spent in each mode."),
    ("container_cpu_usage_seconds_total", "counter", "Cumulative cpu time consumed in seconds."),
    ("app_requests_total", "counter", "Total number of requests handled, by method."),
])
def test_metadata_help(cluster: KubeHarness, metric: str, kind: str, help_text: str) -> None:
    data = prom(cluster, "/api/v1/metadata", {"metric": metric})
    assert data == {metric: [{"type": kind, "help": help_text, "unit": ""}]}


def test_metadata_covers_every_exported_family(cluster: KubeHarness) -> None:
    data = prom(cluster, "/api/v1/metadata")
    assert "up" not in data  # synthesised by Prometheus, not exported
    empty = sorted(name for name, rows in data.items()
                   if not rows[0]["help"] and not name.startswith("traces_span_metrics_"))
    assert empty == []
    assert len(prom(cluster, "/api/v1/metadata", {"limit": "5"})) == 5
    assert prom(cluster, "/api/v1/metadata", {"metric": "no_such_metric"}) == {}


# -------------------------------------------------------------------- consistency
def _kubectl_json(cluster: KubeHarness, *args: str) -> list[dict[str, Any]]:
    return json.loads(cluster.ok("get", *args, "-o", "json"))["items"]  # type: ignore[no-any-return]


def test_every_label_value_names_something_kubectl_shows(cluster: KubeHarness) -> None:
    namespaces = {n["metadata"]["name"] for n in _kubectl_json(cluster, "namespaces")}
    pods = _kubectl_json(cluster, "pods", "-A")
    nodes = _kubectl_json(cluster, "nodes")
    pod_names = {(p["metadata"]["namespace"], p["metadata"]["name"]) for p in pods}
    scrapers = {name for ns, name in pod_names if ns == "monitoring"}
    node_names = {n["metadata"]["name"] for n in nodes}
    ips = {p["status"].get("podIP") for p in pods} | {a["address"] for n in nodes
                                                      for a in n["status"]["addresses"]}
    series = prom(cluster, "/api/v1/query", {"query": '{__name__=~".+"}'})["result"]
    assert len(series) > 500
    checked = 0
    for row in series:
        labels = row["metric"]
        for key in ("namespace", "exported_namespace"):
            if key in labels:
                assert labels[key] in namespaces, labels
        if "pod" in labels:  # kube-state-metrics' own pod keeps its name next to an object's namespace
            assert (labels.get("namespace"), labels["pod"]) in pod_names or labels["pod"] in scrapers, labels
        if "node" in labels:
            assert labels["node"] in node_names, labels
        if "instance" in labels:
            assert labels["instance"].rsplit(":", 1)[0] in ips, labels
        checked += 1
    assert checked == len(series)


def test_monitoring_stack_runs_as_pods(cluster: KubeHarness) -> None:
    out = cluster.ok("get", "pods", "-n", "monitoring", "--no-headers")
    names = [line.split()[0] for line in out.splitlines()]
    assert all(line.split()[2] == "Running" for line in out.splitlines()), out
    assert "prometheus-kube-prometheus-stack-prometheus-0" in names and "loki-0" in names
    assert sum(n.startswith("kube-prometheus-stack-prometheus-node-exporter-") for n in names) == 4
    assert cluster.ok("get", "ds", "kube-prometheus-stack-prometheus-node-exporter", "-n", "monitoring",
                      "-o", "jsonpath={.status.numberReady}") == "4"
    svc = cluster.ok("get", "svc", "-n", "monitoring", "-o", "name").split()
    assert "service/kube-prometheus-stack-kube-state-metrics" in svc and "service/loki" in svc


# --------------------------------------------------------------------------- loki
def loki(cluster: KubeHarness, path: str, params: dict[str, str] | None = None) -> tuple[int, str]:
    return fetch(cluster.observability["loki"], path, params)


def test_loki_buildinfo_ready_config_metrics(cluster: KubeHarness) -> None:
    code, body = loki(cluster, "/loki/api/v1/status/buildinfo")
    assert code == 200 and json.loads(body)["version"].startswith("3.")
    assert loki(cluster, "/ready") == (200, "ready\n")
    code, body = loki(cluster, "/config")
    assert code == 200 and yaml.safe_load(body)["server"]["http_listen_port"] == 3100
    code, body = loki(cluster, "/metrics")
    assert code == 200 and "# TYPE loki_build_info gauge" in body


def test_loki_index_stats(cluster: KubeHarness) -> None:
    code, body = loki(cluster, "/loki/api/v1/index/stats", {"query": '{namespace="hotel-reservation"}'})
    assert code == 200, body
    stats = json.loads(body)
    assert set(stats) == {"streams", "chunks", "entries", "bytes"}
    assert stats["streams"] > 0 and stats["entries"] >= stats["streams"] and stats["bytes"] > 0
    code, body = loki(cluster, "/loki/api/v1/index/stats", {"query": '{namespace="nope"}'})
    assert code == 200 and json.loads(body) == {"streams": 0, "chunks": 0, "entries": 0, "bytes": 0}
    code, body = loki(cluster, "/loki/api/v1/index/stats", {"query": "{"})
    assert code == 400 and body.startswith("parse error")


def test_loki_detected_labels_and_format_query(cluster: KubeHarness) -> None:
    code, body = loki(cluster, "/loki/api/v1/detected_labels", {"query": '{namespace="hotel-reservation"}'})
    assert code == 200
    detected = {d["label"]: d["cardinality"] for d in json.loads(body)["detectedLabels"]}
    assert detected["namespace"] == 1 and detected["pod"] > 5
    code, body = loki(cluster, "/loki/api/v1/format_query", {"query": '{app="frontend"}   |= "error"'})
    assert code == 200 and json.loads(body) == {"status": "success", "data": '{app="frontend"} |= "error"'}
    code, body = loki(cluster, "/loki/api/v1/format_query", {"query": "{app="})
    assert code == 400


# ------------------------------------------------------------------------- jaeger
def jaeger(cluster: KubeHarness, path: str, params: dict[str, str] | None = None) -> tuple[int, Any]:
    code, body = fetch(cluster.observability["jaeger"], path, params)
    return code, json.loads(body)


def test_jaeger_operations(cluster: KubeHarness) -> None:
    code, doc = jaeger(cluster, "/api/services/frontend/operations")
    assert code == 200 and doc["errors"] is None and doc["total"] == len(doc["data"]) > 0
    assert all(isinstance(op, str) for op in doc["data"])
    code, doc = jaeger(cluster, "/api/operations", {"service": "frontend", "spanKind": "server"})
    assert code == 200 and doc["data"] and all(op["spanKind"] == "server" for op in doc["data"])
    assert set(doc["data"][0]) == {"name", "spanKind"}


@pytest.mark.parametrize(("path", "params", "code", "message"), [
    ("/api/operations", {}, 400, "parameter 'service' is required"),
    ("/api/traces/zz", {}, 400, 'strconv.ParseUint: parsing "zz": invalid syntax'),
    ("/api/traces/00000000000000000000000000abcdef", {}, 404, "trace not found"),
])
def test_jaeger_error_shape(cluster: KubeHarness, path: str, params: dict[str, str], code: int,
                            message: str) -> None:
    status, doc = jaeger(cluster, path, params)
    assert status == code
    assert doc == {"data": None, "total": 0, "limit": 0, "offset": 0,
                   "errors": [{"code": code, "msg": message}]}


def test_jaeger_trace_by_id(cluster: KubeHarness) -> None:
    code, doc = jaeger(cluster, "/api/traces", {"service": "frontend", "limit": "1"})
    assert code == 200 and doc["data"]
    trace_id = doc["data"][0]["traceID"]
    code, doc = jaeger(cluster, f"/api/traces/{trace_id}")
    assert code == 200 and doc["data"][0]["traceID"] == trace_id
    assert {"spans", "processes", "warnings"} <= set(doc["data"][0])
