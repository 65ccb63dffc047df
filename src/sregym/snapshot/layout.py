"""The snapshot layout: format strings, file names, TSV columns, metric families and README text.

One module holds everything a reader of a snapshot relies on, so the writer (`export`), the
documentation (`README.md` inside every snapshot, `docs/snapshots.md`) and the readers (the
scorer, the offline agents) cannot drift apart. The names of a dataset's files and of a run's
outputs are here for the same reason: `dataset` and `run` write them, `index` and `score` read them.
"""

from __future__ import annotations

from dataclasses import dataclass

SNAPSHOT_FORMAT = "sregym-snapshot/1"
GROUND_TRUTH_FORMAT = "sregym-ground-truth/1"
DATASET_FORMAT = "sregym-dataset/1"
RUN_FORMAT = "sregym-snapshot-run/1"
SCORE_FORMAT = "sregym-score/1"

# Inside the snapshot directory.
README = "README.md"
SNAPSHOT_JSON = "snapshot.json"
APP_JSON = "app.json"
TOPOLOGY_JSON = "topology.json"
ALERTS_DIR = "alerts"
METRICS_DIR = "metrics"
EVENTS_TSV = "k8s_events.tsv"
OBJECTS_TSV = "k8s_objects.tsv"
LOGS_TSV = "logs.tsv"
TRACES_TSV = "traces.tsv"
# Next to it (single export) or under the dataset root.
SNAPSHOT_DIR = "snapshot"
GROUND_TRUTH_JSON = "ground_truth.json"
# A dataset: DIR/index.json, DIR/DATASET.md, DIR/tasks/<task>/ (a snapshot), DIR/ground_truth/<task>.json.
INDEX_JSON = "index.json"
DATASET_MD = "DATASET.md"
TASKS_DIR = "tasks"
GROUND_TRUTH_DIR = "ground_truth"
# A run on a dataset: OUT/run.json and OUT/<task>/repeat-<k>/{output.json, status.json, trajectory.jsonl}.
RUN_JSON = "run.json"
OUTPUT_JSON = "output.json"
STATUS_JSON = "status.json"
TRAJECTORY_JSONL = "trajectory.jsonl"
SCORE_JSON = "score.json"  # the scorer's report, next to the run by default

EVENT_COLUMNS = ("timestamp", "namespace", "object_kind", "object_name", "type", "reason", "message", "count",
                 "source", "body")
OBJECT_COLUMNS = ("phase", "object_kind", "namespace", "object_name", "body")
METRIC_COLUMNS = ("timestamp", "metric_name", "value", "labels")
LOG_COLUMNS = ("timestamp", "source", "namespace", "pod", "container", "node", "body")
TRACE_COLUMNS = ("timestamp", "trace_id", "span_id", "parent_span_id", "service", "operation", "kind",
                 "start_unix_nano", "duration_ns", "status_code", "status_message", "attributes")

METRIC_STEP_S = 15
# How far back metrics, logs and traces reach from snapshot time: this, or the whole window if it is
# longer, but never before the app was up (`snapshot.json` → `history`).
HISTORY_S = 900
ALERT_INTERVAL_S = 60
MAX_SPANS_PER_SERVICE = 20_000
CLUSTER_SCOPED = "_"  # the namespace part of ids and file names for cluster-scoped entities


def alerts_file(stamp: str) -> str:
    """`alerts/alerts_20260105T091500Z.json` for an RFC 3339 second-precision time."""
    compact = stamp.replace("-", "").replace(":", "")
    return f"{ALERTS_DIR}/alerts_{compact}.json"


def metrics_file(kind: str, namespace: str | None, name: str) -> str:
    return f"{METRICS_DIR}/{kind}_{namespace or CLUSTER_SCOPED}_{name}.tsv"


def entity_id(kind: str, namespace: str | None, name: str) -> str:
    return f"{namespace or CLUSTER_SCOPED}/{kind}/{name}"


def task_name(number: int) -> str:
    """`task-0001` for the first task of a dataset."""
    return f"task-{number:04d}"


def repeat_dir(repeat: int) -> str:
    """`repeat-1` for the first repeat of a task in a run's outputs."""
    return f"repeat-{repeat}"


@dataclass(frozen=True)
class MetricFamily:
    """One PromQL range query; each result series goes to the file of the entity its labels name.

    `sparse` families only keep series that are non-zero at some point of the history (error and
    drop counters, waiting reasons): an all-zero series says nothing but costs a file row per step."""

    entity: str  # pod | deployment | service | node
    query: str
    help: str
    sparse: bool = False


_C = '{container!=""}'
METRIC_FAMILIES: tuple[MetricFamily, ...] = (
    # ------------------------------------------------------------------ pods (cAdvisor, kube-state-metrics)
    MetricFamily("pod", f"sum by (namespace, pod, container) (rate(container_cpu_usage_seconds_total{_C}[1m]))",
                 "CPU used, in cores, per container"),
    MetricFamily("pod", f"sum by (namespace, pod, container) (container_memory_working_set_bytes{_C})",
                 "memory working set (what the OOM killer compares with the limit), bytes"),
    MetricFamily("pod", f"sum by (namespace, pod, container) (rate(container_cpu_cfs_throttled_periods_total{_C}[1m]))"
                        f" / sum by (namespace, pod, container) (rate(container_cpu_cfs_periods_total{_C}[1m]))",
                 "share of CFS periods in which the container was CPU-throttled (containers with a CPU limit)"),
    MetricFamily("pod", "sum by (namespace, pod, container) (kube_pod_container_status_restarts_total)",
                 "container restarts since the pod started"),
    MetricFamily("pod", "sum by (namespace, pod, container) (kube_pod_container_status_ready)",
                 "1 when the container passes its readiness probe"),
    MetricFamily("pod", 'sum by (namespace, pod) (kube_pod_status_ready{condition="true"})',
                 "1 when the pod is Ready (counted in Service endpoints)"),
    MetricFamily("pod", "sum by (namespace, pod, phase) (kube_pod_status_phase) > 0",
                 "the pod phase (the series of the current phase is 1)"),
    MetricFamily("pod", "sum by (namespace, pod, container, reason) (kube_pod_container_status_waiting_reason) > 0",
                 "why a container is waiting (CrashLoopBackOff, ImagePullBackOff, CreateContainerConfigError ...)",
                 sparse=True),
    MetricFamily("pod",
                 "sum by (namespace, pod, container, reason) (kube_pod_container_status_last_terminated_reason) > 0",
                 "why the container last terminated (OOMKilled, Error, Completed ...)", sparse=True),
    MetricFamily("pod", "sum by (namespace, pod) (rate(container_network_receive_errors_total[1m]))",
                 "network receive errors per second", sparse=True),
    MetricFamily("pod", "sum by (namespace, pod) (rate(container_network_transmit_errors_total[1m]))",
                 "network transmit errors per second", sparse=True),
    MetricFamily("pod", "sum by (namespace, pod) (rate(container_network_receive_packets_dropped_total[1m]))",
                 "received packets dropped per second", sparse=True),
    MetricFamily("pod", "sum by (namespace, pod) (rate(container_network_transmit_packets_dropped_total[1m]))",
                 "transmitted packets dropped per second", sparse=True),
    # ------------------------------------------------------------------ pods (the app's own /metrics)
    MetricFamily("pod", "sum by (namespace, pod, container) (rate(app_requests_total[1m]))",
                 "requests served per second, as the application counts them"),
    MetricFamily("pod", "sum by (namespace, pod, container) (rate(app_request_errors_total[1m]))",
                 "failed requests per second, as the application counts them"),
    MetricFamily("pod", "sum by (namespace, pod, container) (rate(app_client_retries_total[1m]))",
                 "retries of outgoing calls per second", sparse=True),
    MetricFamily("pod", "sum by (namespace, pod, container) (app_inflight_requests)",
                 "requests being served right now"),
    MetricFamily("pod", "sum by (namespace, pod, container) (app_queue_depth)",
                 "requests queued for a worker"),
    MetricFamily("pod", "avg by (namespace, pod, container, cache, operation) (app_cache_hit_ratio)",
                 "cache hit ratio of cache-aside reads"),
    # ------------------------------------------------------------------ deployments (kube-state-metrics)
    MetricFamily("deployment", "sum by (namespace, deployment) (kube_deployment_spec_replicas)",
                 "desired replicas"),
    MetricFamily("deployment", "sum by (namespace, deployment) (kube_deployment_status_replicas_available)",
                 "available replicas (ready for minReadySeconds)"),
    MetricFamily("deployment", "sum by (namespace, deployment) (kube_deployment_status_replicas_unavailable)",
                 "unavailable replicas"),
    MetricFamily("deployment", "sum by (namespace, deployment) (kube_deployment_status_replicas_updated)",
                 "replicas running the current pod template"),
    # ------------------------------------------------------------------ services (span metrics, endpoints)
    MetricFamily("service",
                 'sum by (service_name) (rate(traces_span_metrics_calls_total{span_kind="SPAN_KIND_SERVER"}[1m]))',
                 "requests served per second (server spans)"),
    MetricFamily("service",
                 'sum by (service_name) (rate(traces_span_metrics_calls_total{span_kind="SPAN_KIND_SERVER",'
                 'status_code="STATUS_CODE_ERROR"}[1m]))',
                 "failed requests per second (server spans with an error status)"),
    MetricFamily("service",
                 "histogram_quantile(0.5, sum by (le, service_name) (rate(traces_span_metrics_duration_milliseconds_bucket"
                 '{span_kind="SPAN_KIND_SERVER"}[1m])))',
                 "median server latency, milliseconds"),
    MetricFamily("service",
                 "histogram_quantile(0.95, sum by (le, service_name) (rate(traces_span_metrics_duration_milliseconds_bucket"
                 '{span_kind="SPAN_KIND_SERVER"}[1m])))',
                 "95th percentile server latency, milliseconds"),
    MetricFamily("service", 'count by (namespace, endpoint) (kube_endpoint_address{ready="true"})',
                 "ready endpoint addresses behind the Service (no series: none)"),
    MetricFamily("service", 'count by (namespace, endpoint) (kube_endpoint_address{ready="false"})',
                 "not-ready endpoint addresses behind the Service", sparse=True),
    # ------------------------------------------------------------------ nodes (node-exporter, kube-state-metrics)
    MetricFamily("node", '1 - avg by (node) (rate(node_cpu_seconds_total{mode="idle"}[1m]))',
                 "CPU utilisation (0-1)"),
    MetricFamily("node", "1 - sum by (node) (node_memory_MemAvailable_bytes) / sum by (node) (node_memory_MemTotal_bytes)",
                 "memory utilisation (0-1)"),
    MetricFamily("node", "1 - sum by (node, device, mountpoint) (node_filesystem_avail_bytes)"
                         " / sum by (node, device, mountpoint) (node_filesystem_size_bytes)",
                 "filesystem usage (0-1) per mount"),
    MetricFamily("node", "sum by (node, device) (rate(node_disk_io_time_seconds_total[1m]))",
                 "disk busy time per second (0-1) per device"),
    MetricFamily("node", "sum by (node, device, mountpoint) (node_filesystem_device_error)",
                 "1 when the filesystem could not be read (statfs error)", sparse=True),
    MetricFamily("node", "sum by (node, device, mountpoint) (node_filesystem_readonly)",
                 "1 when the filesystem is mounted read-only", sparse=True),
    MetricFamily("node", 'sum by (node, condition) (kube_node_status_condition{status="true"})',
                 "node conditions (Ready, MemoryPressure, DiskPressure, PIDPressure, NetworkUnavailable): 1 = true"),
    MetricFamily("node", "sum by (node) (kube_node_spec_unschedulable)", "1 when the node is cordoned"),
    MetricFamily("node", "sum by (node) (rate(node_network_receive_errs_total[1m]))",
                 "network receive errors per second", sparse=True),
    MetricFamily("node", "sum by (node) (rate(node_network_transmit_errs_total[1m]))",
                 "network transmit errors per second", sparse=True),
)


def _family_table() -> str:
    rows = ["| entity | metric_name (the PromQL evaluated) | meaning |", "|---|---|---|"]
    for f in METRIC_FAMILIES:
        note = " (only non-zero series)" if f.sparse else ""
        rows.append(f"| {f.entity} | `{f.query}` | {f.help}{note} |")
    return "\n".join(rows)


README_TEXT = f"""# Incident snapshot ({SNAPSHOT_FORMAT})

A frozen copy of what an on-call engineer could observe in a Kubernetes cluster during an
incident: alerts, Kubernetes events and objects, metrics, logs, traces, topology and a
description of the application. Something is wrong in the application described in `app.json`.
Find the Kubernetes entities at the root of the incident.

All times are UTC in RFC 3339 with a `Z` suffix (`2026-01-05T09:15:00Z`; logs, traces and
events carry milliseconds: `2026-01-05T09:15:00.250Z`). The observation *window* (start and end)
is in `snapshot.json`; the snapshot was taken at its end (`snapshot_time`). `baseline_time` is
when the cluster was last seen healthy, before the window. Metrics, logs and traces cover the
*history* (also in `snapshot.json`): the last {HISTORY_S // 60} minutes before snapshot time, or the whole window
if it is longer, but never before the app was up. With a window shorter than that, the healthy
period before the incident is there to compare with.

## Files

| file | content |
|---|---|
| `snapshot.json` | format, app, namespaces, window start/end, history start/end, snapshot_time, baseline_time |
| `app.json` | the application as an on-call engineer is told about it: description, entry point, services, and `architecture` (service → service calls seen in traces while the app was healthy, before the window) |
| `topology.json` | entities (`namespace/Kind/name` ids, `_` for cluster-scoped), ownership (ownerReferences), services → the pods behind their endpoints (ready or not), calls between services seen in traces during the history (with counts), placement (pod → node) and claims (pod → PersistentVolumeClaim → PersistentVolume) |
| `alerts/alerts_<YYYYMMDDTHHMMSSZ>.json` | the Prometheus alerts (`/api/v1/alerts`: labels, annotations, state pending or firing, activeAt, value) at the window start, every minute of the window and at snapshot time |
| `k8s_events.tsv` | Kubernetes events |
| `k8s_objects.tsv` | every object readable in the cluster, as `kubectl get -o json` shows it, before the window (`baseline`) and at snapshot time (`snapshot`) |
| `metrics/<kind>_<namespace>_<name>.tsv` | metric time series per entity (`pod`, `deployment`, `service`, `node`; namespace `_` for nodes), one point every {METRIC_STEP_S} s over the history |
| `logs.tsv` | container logs of every pod, and node logs (kernel, kubelet ...) where there are any, over the history |
| `traces.tsv` | spans (OpenTelemetry-like) that started in the history |

## TSV files

Tab-separated, one header row, one record per line. Values are escaped as in ClickHouse's
TabSeparated format: a backslash is written `\\\\`, a tab `\\t`, a newline `\\n`, a carriage
return `\\r`. JSON values (`body`, `labels`, `attributes`) are compact JSON with sorted keys.

- `k8s_events.tsv`: {", ".join(EVENT_COLUMNS)}. `timestamp` is the event's lastTimestamp (or
  eventTime); `source` the reporting component; `body` the Event object. Sorted by timestamp.
- `k8s_objects.tsv`: {", ".join(OBJECT_COLUMNS)}. `namespace` is empty for cluster-scoped kinds;
  `body` the object. Sorted by phase (baseline first), kind, namespace, name. Events are in
  `k8s_events.tsv` only.
- `metrics/*.tsv`: {", ".join(METRIC_COLUMNS)}. `metric_name` is the PromQL expression that
  was evaluated over the whole cluster; the file holds the series whose labels name this entity,
  `labels` the series' labels. `value` is Prometheus' text form (`NaN` when a ratio has no
  data). Sorted by family (table order below), labels, timestamp.
- `logs.tsv`: {", ".join(LOG_COLUMNS)}. `source` is `pod` for container logs, `otlp` for records a
  service sent over OTLP (`container` holds its service name), else the node log (`kernel`,
  `kubelet`, ...); the columns that do not apply are empty. Sorted by timestamp.
- `traces.tsv`: {", ".join(TRACE_COLUMNS)}. `kind` is `SPAN_KIND_SERVER`, `SPAN_KIND_CLIENT` ...;
  `status_code` is `STATUS_CODE_ERROR` for a failed span, else `STATUS_CODE_UNSET`;
  `parent_span_id` is empty for a root span; `attributes` holds the span and resource attributes
  (`http.status_code`, `rpc.grpc.status_code`, `pod` ...). At most {MAX_SPANS_PER_SERVICE} spans per
  service: beyond that, the spans of the traces with the lowest trace ids (a uniform sample that
  keeps traces whole). Sorted by start time.

## Metric families

{_family_table()}

`service` files are named after the Service the spans' `service_name` matches; endpoint series
after the Endpoints (= Service) name.
"""

__all__ = [
    "ALERTS_DIR", "ALERT_INTERVAL_S", "APP_JSON", "CLUSTER_SCOPED", "DATASET_FORMAT", "DATASET_MD", "EVENTS_TSV",
    "EVENT_COLUMNS", "GROUND_TRUTH_DIR", "GROUND_TRUTH_FORMAT", "GROUND_TRUTH_JSON", "HISTORY_S", "INDEX_JSON",
    "LOGS_TSV", "LOG_COLUMNS", "MAX_SPANS_PER_SERVICE", "METRICS_DIR", "METRIC_COLUMNS", "METRIC_FAMILIES",
    "METRIC_STEP_S", "OBJECTS_TSV", "OBJECT_COLUMNS", "OUTPUT_JSON", "README", "README_TEXT", "RUN_FORMAT",
    "RUN_JSON", "SCORE_FORMAT", "SCORE_JSON", "SNAPSHOT_DIR", "SNAPSHOT_FORMAT", "SNAPSHOT_JSON", "STATUS_JSON",
    "TASKS_DIR", "TOPOLOGY_JSON", "TRACES_TSV", "TRACE_COLUMNS", "TRAJECTORY_JSONL",
    "MetricFamily", "alerts_file", "entity_id", "metrics_file", "repeat_dir", "task_name",
]
