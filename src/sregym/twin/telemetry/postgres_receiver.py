"""The OpenTelemetry collector's `postgresql` receiver, started by `receiver_creator` for pods that
ask for it, as Prometheus' OTLP endpoint stores its metrics.

Why: an SRE watching a service that writes PostgreSQL (the Astronomy Shop's accounting inserts every
order) alerts on the database's own counters, which stop moving when the writes stop, whatever
the reason (consumer down, wrong credentials, a revoked grant). The demo's chart annotates the
postgresql pod with `io.opentelemetry.discovery.metrics/scraper: postgresql` and enables the
`postgresql.tup_*` metrics in `io.opentelemetry.discovery.metrics/config`; the collector then
scrapes the server's statistics views. Here the server's tables (`datastores/postgres.py`) give
those counters: rows inserted per database (the model never deletes or updates, so the rows a
database holds are the rows inserted since the data directory was created; the statistics
survive a clean restart as they do in PostgreSQL). A server that is down exports nothing, so the
series go stale. Only database-level counters of the application databases are exported (not
`postgres` or the templates, which nobody writes): Prometheus' OTLP translation keeps the
resource attribute `postgresql.database.name` in `target_info`, not on the series.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sregym.twin.telemetry.exposition import Batch, Family, Target

if TYPE_CHECKING:
    from sregym.twin.twin import Twin

SCRAPER_ANNOTATION = "io.opentelemetry.discovery.metrics/scraper"
ENABLED_ANNOTATION = "io.opentelemetry.discovery.metrics/enabled"
SYSTEM_DATABASES = ("postgres", "template0", "template1")
SERVICE_NAMESPACE_ANNOTATION = "resource.opentelemetry.io/service.namespace"


class PostgresReceiver:
    """One pushed batch per discovered, running PostgreSQL server."""

    families = (
        Family("postgresql_tup_inserted_total", "counter", "Number of rows inserted by queries in the database."),
        Family("postgresql_table_count", "gauge", "Number of user tables in a database."),
    )

    def __init__(self, twin: Twin) -> None:
        self.twin = twin

    def collect(self, now: float) -> list[Batch]:
        bank = getattr(self.twin.services, "datastores", None)
        if bank is None:
            return []
        out: list[Batch] = []
        for key in sorted(bank.instances):
            server = bank.instances[key]
            if getattr(server, "kind", "") != "postgres":
                continue
            pod = self.twin.store.peek("Pod", key[0], key[1])
            if pod is None or not _discovered(pod) or not _running(self.twin, key):
                continue
            batch = Batch(_target(pod, key[2]))
            for name, database in sorted(server.pg.databases.items()):
                if name in SYSTEM_DATABASES:
                    continue
                batch.add("postgresql_tup_inserted_total", None,
                          float(sum(table.rows for table in database.tables.values())))
                batch.add("postgresql_table_count", None, float(len(database.tables)))
            out.append(batch)
        return out


def _discovered(pod: dict[str, Any]) -> bool:
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    return annotations.get(SCRAPER_ANNOTATION) == "postgresql" and annotations.get(ENABLED_ANNOTATION) == "true"


def _running(twin: Twin, key: tuple[str, str, str]) -> bool:
    """The server's container is running now (the bank keeps the last instance after it stops)."""
    runtime = getattr(twin.services, "runtime", None)
    instance = runtime.instance(*key) if runtime is not None else None
    server = twin.services.datastores.instances.get(key) if twin.services.datastores is not None else None
    return instance is not None and server is not None and \
        server.config.get("_instance") == getattr(instance, "container_id", None)


def _target(pod: dict[str, Any], container: str) -> Target:
    """The identity Prometheus' OTLP receiver gives the receiver's metrics: the chart's promoted
    resource attributes (service.name from the pod's `app.kubernetes.io/name`, k8s.*)."""
    meta = pod.get("metadata") or {}
    labels_in = meta.get("labels") or {}
    service = str(labels_in.get("app.kubernetes.io/name") or labels_in.get("app.kubernetes.io/component") or "postgresql")
    namespace = str((meta.get("annotations") or {}).get(SERVICE_NAMESPACE_ANNOTATION, ""))
    uid = str(meta.get("uid", ""))
    job = f"{namespace}/{service}" if namespace else service
    pod_name = str(meta.get("name", ""))
    parts = pod_name.rsplit("-", 2)
    labels = {"job": job, "instance": uid, "service_name": service, "service_namespace": namespace,
              "service_instance_id": uid, "k8s_namespace_name": str(meta.get("namespace", "")),
              "k8s_pod_name": pod_name, "k8s_container_name": container,
              "k8s_node_name": str((pod.get("spec") or {}).get("nodeName", "")),
              "k8s_deployment_name": parts[0] if len(parts) == 3 else ""}
    return Target(job, uid, {k: v for k, v in labels.items() if v}, honor_labels=True, pushed=True)


__all__ = ["PostgresReceiver"]
