"""Loki 3.1's status and index endpoints over the twin's log streams.

`/loki/api/v1/index/stats`, `/loki/api/v1/detected_labels`, `/loki/api/v1/format_query`,
`/config` and `/metrics` answer from the same streams the query endpoints read (the agent sees
only its visible streams), with Loki's shapes: index stats are a bare object
(`{"streams","chunks","entries","bytes"}`), detected labels `{"detectedLabels":[{"label",
"cardinality"}]}`, format_query `{"status":"success","data":"..."}`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

LOKI_VERSION = "3.1.0"
CHUNK_BYTES = 1_572_864  # Loki's default chunk_target_size
# Labels Loki's detected_labels leaves out: static per stream, or the service name it derives.
_UNDETECTED = frozenset({"__stream_shard__", "service_name"})

CONFIG = """target: all
auth_enabled: false
server:
  http_listen_address: ""
  http_listen_port: 3100
  grpc_listen_port: 9095
  log_level: info
common:
  path_prefix: /var/loki
  storage:
    filesystem:
      chunks_directory: /var/loki/chunks
      rules_directory: /var/loki/rules
  replication_factor: 1
  ring:
    kvstore:
      store: inmemory
limits_config:
  ingestion_rate_mb: 4
  ingestion_burst_size_mb: 6
  max_query_length: 721h
  max_query_series: 500
  max_entries_limit_per_query: 5000
  query_timeout: 1m
  reject_old_samples: true
  reject_old_samples_max_age: 1w
  retention_period: 0s
  volume_enabled: true
  allow_structured_metadata: true
schema_config:
  configs:
  - from: "2024-04-01"
    store: tsdb
    object_store: filesystem
    schema: v13
    index:
      prefix: index_
      period: 24h
ingester:
  chunk_target_size: 1572864
  chunk_idle_period: 30m
  max_chunk_age: 2h
querier:
  max_concurrent: 4
query_range:
  align_queries_with_step: true
  cache_results: true
analytics:
  reporting_enabled: false
"""


def index_stats(streams: list[tuple[dict[str, str], list[Any]]], start_ns: int, end_ns: int) -> dict[str, int]:
    """What the index knows of the matching streams in [start, end]."""
    count = entries = size = chunks = 0
    for _labels, lines in streams:
        inside = [(ts, line) for ts, line in lines if start_ns <= ts <= end_ns]
        if not inside:
            continue
        count += 1
        entries += len(inside)
        stream_bytes = sum(len(str(line)) for _ts, line in inside)
        size += stream_bytes
        chunks += max(1, -(-stream_bytes // CHUNK_BYTES))
    return {"streams": count, "chunks": chunks, "entries": entries, "bytes": size}


def detected_labels(streams: list[dict[str, str]]) -> dict[str, Any]:
    """Every stream label with how many values it takes."""
    values: dict[str, set[str]] = {}
    for labels in streams:
        for name, value in labels.items():
            if name not in _UNDETECTED:
                values.setdefault(name, set()).add(value)
    return {"detectedLabels": [{"label": name, "cardinality": len(vs)} for name, vs in sorted(values.items())]}


def format_query(query: str, parse: Callable[[str], Any]) -> dict[str, Any]:
    """Loki re-prints a query that parses (here: with its whitespace normalised)."""
    parse(query)
    return {"status": "success", "data": " ".join(query.split())}


def metrics_text(streams: int, entries: int) -> str:
    """A few of Loki's own metrics, in the text exposition format."""
    return (
        "# HELP loki_build_info A metric with a constant '1' value labeled by version, revision, branch, "
        "goversion from which loki was built, and the goos and goarch for the build.\n"
        "# TYPE loki_build_info gauge\n"
        f'loki_build_info{{branch="HEAD",goarch="amd64",goos="linux",goversion="go1.22.4",revision="935aee77ed",'
        f'tags="netgo",version="{LOKI_VERSION}"}} 1\n'
        "# HELP loki_ingester_memory_streams The total number of streams in memory per tenant.\n"
        "# TYPE loki_ingester_memory_streams gauge\n"
        f'loki_ingester_memory_streams{{tenant="fake"}} {streams}\n'
        "# HELP loki_distributor_lines_received_total The total number of lines received per tenant\n"
        "# TYPE loki_distributor_lines_received_total counter\n"
        f'loki_distributor_lines_received_total{{tenant="fake"}} {entries}\n'
    )


__all__ = ["CONFIG", "LOKI_VERSION", "detected_labels", "format_query", "index_stats", "metrics_text"]
