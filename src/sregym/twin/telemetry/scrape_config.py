"""What the twin's Prometheus was configured with, derived from the targets it really scrapes.

The Prometheus Operator (kube-prometheus-stack) turns every ServiceMonitor endpoint into one
scrape pool named `serviceMonitor/<namespace>/<name>/<endpoint index>`, discovered with
`kubernetes_sd_configs` (role `endpoints`) and relabelled into the `job`, `namespace`, `pod`,
`service`, `endpoint` and `container` target labels. `/api/v1/targets`, `/api/v1/scrape_pools`
and `/api/v1/status/config` all answer from `ScrapeJob`s built here, so the configuration an SRE
reads matches the targets that produce `up`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from sregym.twin.telemetry.exposition import MONITORING_NAMESPACE, RELEASE, Target

SCRAPE_TIMEOUT = "10s"
EVALUATION_INTERVAL = "30s"
SCRAPE_PROTOCOLS = ("OpenMetricsText1.0.0", "OpenMetricsText0.0.1", "PrometheusText0.0.4")
PROMETHEUS_NAME = f"{RELEASE}-prometheus"
RULES_DIR = f"/etc/prometheus/rules/prometheus-{PROMETHEUS_NAME}-rulefiles-0"
SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
# The operator's ServiceMonitors of the stack itself: job → (ServiceMonitor name, endpoint index).
_STACK_MONITORS = {
    "kube-state-metrics": (f"{RELEASE}-kube-state-metrics", 0),
    "node-exporter": (f"{RELEASE}-prometheus-node-exporter", 0),
    "kubelet": (f"{RELEASE}-kubelet", 1),
    "opentelemetry-collector": ("opentelemetry-collector", 0),
}


@dataclass(frozen=True)
class ScrapeJob:
    """One scrape pool: its name, how it scrapes and what it discovers."""

    name: str
    job: str
    scheme: str
    metrics_path: str
    honor_labels: bool
    service: str
    service_namespace: str
    port_name: str

    def scrape_url(self, target: Target) -> str:
        return f"{self.scheme}://{target.instance}{self.metrics_path}"


def scrape_job(target: Target) -> ScrapeJob:
    """The scrape pool a target belongs to."""
    labels = target.labels
    monitor = _STACK_MONITORS.get(target.job)
    if monitor is not None:
        name = f"serviceMonitor/{MONITORING_NAMESPACE}/{monitor[0]}/{monitor[1]}"
    else:  # an application's own ServiceMonitor, next to its Service
        name = f"serviceMonitor/{labels.get('namespace', 'default')}/{labels.get('service', target.job)}/0"
    https = labels.get("endpoint", "").startswith("https")
    return ScrapeJob(name=name, job=target.job, scheme="https" if https else "http",
                     metrics_path=labels.get("metrics_path", "/metrics"), honor_labels=target.honor_labels,
                     service=labels.get("service", target.job),
                     service_namespace=labels.get("namespace", MONITORING_NAMESPACE),
                     port_name=labels.get("endpoint", "metrics"))


def discovered_labels(target: Target, job: ScrapeJob, interval: str) -> dict[str, str]:
    """The labels service discovery handed the target before relabelling (`discoveredLabels`)."""
    labels = target.labels
    out = {
        "__address__": target.instance,
        "__meta_kubernetes_endpoint_port_name": job.port_name,
        "__meta_kubernetes_endpoint_port_protocol": "TCP",
        "__meta_kubernetes_endpoint_ready": "true",
        "__meta_kubernetes_endpoints_name": job.service,
        "__meta_kubernetes_namespace": job.service_namespace,
        "__meta_kubernetes_service_name": job.service,
        "__metrics_path__": job.metrics_path,
        "__scheme__": job.scheme,
        "__scrape_interval__": interval,
        "__scrape_timeout__": SCRAPE_TIMEOUT,
        "job": job.name,
    }
    if labels.get("pod"):
        out["__meta_kubernetes_endpoint_address_target_kind"] = "Pod"
        out["__meta_kubernetes_endpoint_address_target_name"] = labels["pod"]
        out["__meta_kubernetes_pod_name"] = labels["pod"]
        out["__meta_kubernetes_pod_ip"] = target.instance.rsplit(":", 1)[0]
        if labels.get("container"):
            out["__meta_kubernetes_pod_container_name"] = labels["container"]
    if labels.get("node"):
        out["__meta_kubernetes_endpoint_node_name"] = labels["node"]
        if not labels.get("pod"):
            out["__meta_kubernetes_endpoint_address_target_kind"] = "Node"
            out["__meta_kubernetes_endpoint_address_target_name"] = labels["node"]
    return dict(sorted(out.items()))


def scrape_jobs(targets: list[Target]) -> dict[str, ScrapeJob]:
    """Every pool with at least one target, by name (sorted)."""
    jobs = {}
    for target in targets:
        job = scrape_job(target)
        jobs.setdefault(job.name, job)
    return dict(sorted(jobs.items()))


def _relabel(job: ScrapeJob) -> list[dict[str, Any]]:
    """The operator's relabelling of an endpoints-role ServiceMonitor (the essential rules)."""
    keep = {"source_labels": ["__meta_kubernetes_service_name"], "separator": ";", "regex": f"({job.service})",
            "replacement": "$1", "action": "keep"}
    port = {"source_labels": ["__meta_kubernetes_endpoint_port_name"], "separator": ";",
            "regex": f"({job.port_name})", "replacement": "$1", "action": "keep"}
    rules = [
        {"source_labels": ["job"], "separator": ";", "regex": "(.*)", "target_label": "__tmp_prometheus_job_name",
         "replacement": "$1", "action": "replace"},
        keep, port,
        {"source_labels": ["__meta_kubernetes_namespace"], "separator": ";", "regex": "(.*)",
         "target_label": "namespace", "replacement": "$1", "action": "replace"},
        {"source_labels": ["__meta_kubernetes_service_name"], "separator": ";", "regex": "(.*)",
         "target_label": "service", "replacement": "$1", "action": "replace"},
        {"source_labels": ["__meta_kubernetes_pod_name"], "separator": ";", "regex": "(.*)",
         "target_label": "pod", "replacement": "$1", "action": "replace"},
        {"source_labels": ["__meta_kubernetes_pod_container_name"], "separator": ";", "regex": "(.*)",
         "target_label": "container", "replacement": "$1", "action": "replace"},
        {"source_labels": ["__meta_kubernetes_endpoint_node_name"], "separator": ";", "regex": "(.*)",
         "target_label": "node", "replacement": "$1", "action": "replace"},
        {"separator": ";", "regex": "(.*)", "target_label": "job", "replacement": job.job, "action": "replace"},
        {"separator": ";", "regex": "(.*)", "target_label": "endpoint", "replacement": job.port_name,
         "action": "replace"},
        {"source_labels": ["__address__"], "separator": ";", "regex": "(.*)", "modulus": 1,
         "target_label": "__tmp_hash", "replacement": "$1", "action": "hashmod"},
        {"source_labels": ["__tmp_hash"], "separator": ";", "regex": "0",
         "replacement": "$1", "action": "keep"},
    ]
    if job.metrics_path != "/metrics":
        rules.insert(-2, {"separator": ";", "regex": "(.*)", "target_label": "metrics_path",
                          "replacement": job.metrics_path, "action": "replace"})
    return rules


def _scrape_config(job: ScrapeJob, interval: str) -> dict[str, Any]:
    config: dict[str, Any] = {
        "job_name": job.name,
        "honor_labels": job.honor_labels,
        "honor_timestamps": True,
        "track_timestamps_staleness": False,
        "scrape_interval": interval,
        "scrape_timeout": SCRAPE_TIMEOUT,
        "scrape_protocols": list(SCRAPE_PROTOCOLS),
        "metrics_path": job.metrics_path,
        "scheme": job.scheme,
        "enable_compression": True,
    }
    if job.scheme == "https":
        config["authorization"] = {"type": "Bearer", "credentials": "<secret>"}
        config["tls_config"] = {"insecure_skip_verify": True}
    config.update({
        "follow_redirects": True,
        "enable_http2": True,
        "relabel_configs": _relabel(job),
        "kubernetes_sd_configs": [{
            "role": "endpoints",
            "kubeconfig_file": "",
            "follow_redirects": True,
            "enable_http2": True,
            "namespaces": {"own_namespace": False, "names": [job.service_namespace]},
        }],
    })
    return config


def config_yaml(targets: list[Target], interval_s: int) -> str:
    """The loaded prometheus.yml as `/api/v1/status/config` shows it (defaults filled in)."""
    interval = f"{interval_s}s"
    config = {
        "global": {
            "scrape_interval": interval,
            "scrape_timeout": SCRAPE_TIMEOUT,
            "scrape_protocols": list(SCRAPE_PROTOCOLS),
            "evaluation_interval": EVALUATION_INTERVAL,
            "external_labels": {"prometheus": f"{MONITORING_NAMESPACE}/{PROMETHEUS_NAME}",
                                "prometheus_replica": f"prometheus-{PROMETHEUS_NAME}-0"},
        },
        "rule_files": [f"{RULES_DIR}/*.yaml"],
        "scrape_configs": [_scrape_config(job, interval) for job in scrape_jobs(targets).values()],
    }
    return yaml.safe_dump(config, default_flow_style=False, sort_keys=False, width=1 << 16)


__all__ = ["SCRAPE_TIMEOUT", "ScrapeJob", "config_yaml", "discovered_labels", "scrape_job", "scrape_jobs"]
