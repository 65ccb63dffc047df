"""Metric families whose VALUES are Unix timestamps, and how a query presents them.

The served twin shows simulated time on the machine's clock (`api/wall_time.py`). Sample times
are moved at the wire, but some exporters put an instant into the sample *value*
(kube-state-metrics' `*_created`, `kube_pod_start_time`; node-exporter's `node_boot_time_seconds`,
`node_time_seconds`; cAdvisor's `container_start_time_seconds`, `container_last_seen`). A real
Prometheus stores wall-clock values there, so `kube_pod_created > time() - 600` or
`node_time_seconds - time()` only agree with the client's clock if those values are presented too.
The engine adds its presentation offset to them when they are selected, so differences between
such values and `time()` are unchanged and in-process callers (offset 0) see stored values.
"""

from __future__ import annotations

import re

# Exact names the twin exports whose value is an instant (not a duration or a counter of seconds).
_NAMES = frozenset({
    "kube_cronjob_next_schedule_time",
    "kube_cronjob_status_last_schedule_time",
    "kube_cronjob_status_last_successful_time",
    "kube_job_status_completion_time",
    "kube_job_status_start_time",
    "kube_pod_deletion_timestamp",
    "kube_pod_start_time",
    "kube_pod_status_container_ready_time",
    "kube_pod_status_ready_time",
    "kube_pod_status_scheduled_time",
    "node_boot_time_seconds",
    "node_time_seconds",
    "process_start_time_seconds",
    "container_start_time_seconds",
    "container_last_seen",
})
# Families named by convention: kube-state-metrics' `kube_<kind>_created` and any
# `*_timestamp_seconds` gauge (Prometheus' own `*_last_*_timestamp_seconds`, exporters' heartbeats).
_PATTERN = re.compile(r"kube_[a-z_]+_created|[a-zA-Z_:][a-zA-Z0-9_:]*_timestamp_seconds")


def is_clock_valued(name: str | None) -> bool:
    """True when samples of the metric `name` hold a Unix timestamp."""
    return bool(name) and (name in _NAMES or _PATTERN.fullmatch(name) is not None)


__all__ = ["is_clock_valued"]
